"""Resizing the window while an answer streams never leaves garbage: each line of a code block that was
streamed across the resize is in the terminal exactly once (issue 28, item 12)."""

from __future__ import annotations

from collections.abc import Callable

from pytest_httpserver import HTTPServer

from tests.e2e.conftest import ready
from tests.e2e.terminal import Terminal
from tests.e2e.test_chat_v2 import DONE, delta, slow

CHAT = "/v1/chat/completions"


def test_a_resize_while_a_code_block_streams_leaves_each_line_once(
    server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    lines = [f"value_{n:02d} = {n} * 1234  # line {n:02d}" for n in range(40)]
    pieces = [delta(content="Here it is:\n\n```python\n")]
    pieces += [delta(content=line + "\n") for line in lines]
    pieces += [delta(content="```\n\nDone streaming."), DONE]
    delays = [0.0] + [0.05] * len(lines) + [0.0, 0.0]
    server.expect_oneshot_request(CHAT).respond_with_handler(slow(pieces, delays))
    term = start(100, 30)
    ready(term)
    term.send("show me\r")
    term.wait_for("line 10")
    term.resize(30, 72)  # narrower while the block streams
    term.wait_for("line 25")
    term.resize(34, 110)  # then wider
    term.wait_for("Done streaming.")
    term.settle()
    text = term.everything()
    for n in range(40):
        assert text.count(f"# line {n:02d}") == 1, (n, text)
    assert text.count("Here it is:") == 1 and text.count("Done streaming.") == 1, text
