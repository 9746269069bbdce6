"""Resizing the window while an answer streams, or at the idle prompt, never leaves garbage: each line is in the
terminal exactly once, the paragraph before a block is kept (issue 28, item 12).

The screen here (pyte) does not reflow its lines on a resize, as xterm; tests/e2e/test_resize_tmux.py does the
same in tmux, which reflows them."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.e2e.conftest import ready
from tests.e2e.terminal import Terminal
from tests.e2e.test_chat_v2 import DONE, delta, slow

CHAT = "/v1/chat/completions"


def code_answer() -> tuple[list[str], list[str]]:
    """A paragraph, then a code block of 40 lines (the pieces), and the marks each expected once."""
    lines = [f"value_{n:02d} = {n} * 1234  # line {n:02d}" for n in range(40)]
    pieces = ["Here it is:\n\n```python\n", *(line + "\n" for line in lines), "```\n\nDone streaming."]
    return pieces, ["Here it is:", *(f"# line {n:02d}" for n in range(40)), "Done streaming."]


def table_answer() -> tuple[list[str], list[str]]:
    """A paragraph, then a table of 30 rows wider than the narrow window."""
    rows = [f"| {n:02d} | row{n:02d} | the description of row {n:02d}, long enough to wrap |\n" for n in range(30)]
    pieces = ["The table:\n\n| n | name | description |\n|---|---|---|\n", *rows, "\nDone streaming."]
    return pieces, ["The table:", *(f"row{n:02d} " for n in range(30)), "Done streaming."]


def paragraph_answer(complete_after: int = 6) -> tuple[list[str], list[str]]:
    """Paragraphs each wider than the window (wrapped on two or three rows).

    Each paragraph's beginning is expected once, and every word of those after ``complete_after`` (printed once
    the window is narrower); the other words at most once: this screen cuts the rows it shows when
    it gets narrower (as xterm does), so the end of a row printed before is not there any more."""
    pieces = ["Paragraphs follow.\n\n"]
    marks = ["Paragraphs follow."]
    for n in range(24):
        words = [f"Para {n:02d}:", *(f"p{n:02d}w{k:02d}" for k in range(16)), f"end{n:02d}."]
        pieces.append(" ".join(words) + "\n\n")
        marks += words if n > complete_after else words[:1]
    return [*pieces, "Done streaming."], [*marks, "Done streaming."]


ANSWERS: dict[str, tuple[Callable[[], tuple[list[str], list[str]]], str, str]] = {
    # the answer, and what is on screen when the window gets narrower, then wider again
    "code": (code_answer, "# line 10", "# line 25"),
    "table": (table_answer, "row08 ", "row20 "),
    "paragraphs": (paragraph_answer, "end05.", "end15."),
}


def serve(server: HTTPServer, pieces: list[str]) -> None:
    """The answer streamed slowly, a piece every 50 ms."""
    chunks = [delta(content=piece) for piece in pieces] + [DONE]
    server.expect_oneshot_request(CHAT).respond_with_handler(slow(chunks, [0.0] + [0.05] * (len(chunks) - 1)))


def serve_gated(server: HTTPServer, pieces: list[str], marks: list[str]) -> list[threading.Event]:
    """The answer streamed a piece every 50 ms, held after the piece holding each mark until its gate opens.

    The test resizes the window while the answer is held: whatever the machine's load, every row printed
    before a resize is on the screen when it happens, and every row after it comes once the window has its
    new size (a starved test would otherwise resize later than it meant to, over rows this screen then cuts)."""
    gates = [threading.Event() for _ in marks]
    held = {
        next(n for n, piece in enumerate(pieces) if mark in piece): gate
        for mark, gate in zip(marks, gates, strict=True)
    }

    def handler(_request: Request) -> Response:
        def body() -> Iterator[bytes]:
            for n, piece in enumerate(pieces):
                time.sleep(0.05 if n else 0.0)
                yield delta(content=piece)
                if n in held:
                    held[n].wait(timeout=30)
            yield DONE

        return Response(body(), content_type="text/event-stream")

    server.expect_oneshot_request(CHAT).respond_with_handler(handler)
    return gates


def check_once(text: str, marks: list[str]) -> None:
    """Each mark once in the terminal, and no row holding two lines of the answer (rows joined or shifted)."""
    print(text)  # whole in the report of a failure (an assertion's message is cut short)
    counts = {mark: text.count(mark) for mark in marks}
    assert all(count == 1 for count in counts.values()), ({m: c for m, c in counts.items() if c != 1}, text)
    words = re.findall(r"\bp\d\dw\d\d\b|\bend\d\d\.", text)
    assert len(words) == len(set(words)), ({word for word in words if words.count(word) > 1}, text)
    joined = [row for row in text.split("\n") if len(re.findall(r"value_\d\d|row\d\d |Para \d\d", row)) > 1]
    assert not joined, (joined, text)


@pytest.mark.parametrize("kind", sorted(ANSWERS))
def test_a_resize_while_an_answer_streams_leaves_each_line_once(
    kind: str, server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    answer, narrower_at, wider_at = ANSWERS[kind]
    pieces, marks = answer()
    narrower, wider = serve_gated(server, pieces, [narrower_at, wider_at])
    term = start(100, 30)
    ready(term)
    term.send("show me\r")
    term.wait_for(narrower_at)
    term.resize(30, 72)  # narrower while the answer streams
    narrower.set()
    term.wait_for(wider_at)
    term.resize(34, 110)  # then wider and taller
    wider.set()
    term.wait_for("Done streaming.")
    term.settle()
    check_once(term.everything(), marks)


def test_a_resize_at_the_idle_prompt_leaves_the_log_as_it_was(
    server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    pieces, marks = paragraph_answer(complete_after=99)  # all printed before the resize
    serve(server, pieces)
    term = start(100, 30)
    ready(term)
    term.send("show me\r")
    term.wait_for("Done streaming.")
    term.settle()
    before = term.history()
    term.resize(30, 72)
    term.settle()
    term.resize(34, 110)
    term.settle()
    text = term.everything()
    check_once(text, marks)
    # what had scrolled away is untouched, the answer's last line and the blank line after it are kept
    assert term.history()[: len(before)] == before
    shown = text.split("\n")
    end = max(n for n, row in enumerate(shown) if "Done streaming." in row)
    assert shown[end + 1] == "" and shown[end + 2] == "" and "┈" in shown[end + 3], text
