"""``maia chat`` in a real pseudo-terminal against a LiteLLM-format HTTP server, read through pyte."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from maia.agent.loop import INTERRUPTED_ANSWER
from tests.conftest import fixture_bytes
from tests.e2e.conftest import idle, ready
from tests.e2e.terminal import Terminal
from tests.streams import text_stream, tool_stream

CHAT = "/v1/chat/completions"


def chat_bodies(server: HTTPServer) -> list[dict[str, Any]]:
    return [json.loads(r.data) for r, _ in server.log if r.path == CHAT]


def test_banner_prompt_streamed_answer_then_markdown(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    server.expect_oneshot_request(CHAT).respond_with_data(
        text_stream("# Result\n\nSome **bold** words and `code`."), content_type="text/event-stream"
    )
    term = start()
    screen = term.wait_for("Your request — /help")
    assert "One agent, many models" in screen and "▀" in screen  # the full banner with its image
    assert "128k" in term.wait_for("1.5k / 128k")  # the context bar, maximum from LiteLLM
    term.send("explain please\r")
    screen = term.wait_for("Some bold words and code.")
    assert "**bold**" not in screen  # rendered as Markdown once complete
    assert "❯ explain please" in screen
    assert chat_bodies(server)[0]["messages"][-1]["content"] == "explain please"


def test_write_confirmation_answered_yes_writes_the_file(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    call = {"path": "notes/hello.txt", "content": "hello from maia\n"}
    server.expect_oneshot_request(CHAT).respond_with_data(
        tool_stream("Write", call, "call_w"), content_type="text/event-stream"
    )
    server.expect_oneshot_request(CHAT).respond_with_data(
        text_stream("File written."), content_type="text/event-stream"
    )
    term = start()
    term.wait_for("Your request")
    term.send("write the file\r")
    term.wait_for("Allow Write: notes/hello.txt? (y/n/a/s=stop)")
    term.answer("\r")  # Enter alone is ignored
    term.pump(0.5)
    assert not (project / "notes" / "hello.txt").exists()
    term.answer("y")
    term.wait_for("File written.")
    assert (project / "notes" / "hello.txt").read_text() == "hello from maia\n"
    assert chat_bodies(server)[1]["messages"][-1]["content"] == "Created notes/hello.txt (1 line)."


def _slow(_request: Request) -> Response:
    def body() -> Iterator[bytes]:
        yield b'data: {"choices":[{"index":0,"delta":{"content":"partial answer"}}]}\n\n'
        time.sleep(4)
        yield b"data: [DONE]\n\n"

    return Response(body(), content_type="text/event-stream")


def test_ctrl_c_mid_stream_keeps_the_partial_answer(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    server.expect_oneshot_request(CHAT).respond_with_handler(_slow)
    server.expect_oneshot_request(CHAT).respond_with_data(
        text_stream("Second answer."), content_type="text/event-stream"
    )
    term = start()
    term.wait_for("Your request")
    term.send("first request\r")
    term.wait_for("partial answer")
    term.send("\x03")
    term.wait_for("Interrupted: what the model said")
    assert "partial answer" in term.everything()  # what the user saw is not erased
    term.send("second request\r")
    term.wait_for("Second answer.")
    second = chat_bodies(server)[1]["messages"]
    assert [m["content"] for m in second if m["role"] in ("user", "assistant")] == [
        "first request",
        "partial answer",
        f"{INTERRUPTED_ANSWER}\n\nsecond request",
    ]


def test_the_context_bar_grows(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("word " * 3000), content_type="text/event-stream")
    term = start()
    term.wait_for("1.5k / 128k · 1%")
    term.send("talk a lot\r")
    term.wait_for("4.5k / 128k · 4%")


def test_a_40_column_terminal_shows_the_compact_banner(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    term = start(40, 30)
    screen = ready(term)
    assert "▀" not in screen and "█" in screen  # the pixel title without the image
    assert "One agent, many models" in screen
    assert [len(b) for b in _borders(term)] == [39, 39]
    assert all(len(line.rstrip()) <= 39 for line in term.screen.display)


def test_a_20_column_terminal_shows_the_framed_title(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    term = start(20, 30)
    screen = term.wait_for("║       Maia       ║")
    assert "╔" in screen


def test_long_output_stays_in_the_scrollback(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    lines = "\n".join(f"line number {n}" for n in range(1, 201))
    server.expect_oneshot_request(CHAT).respond_with_data(
        text_stream(f"```\n{lines}\n```"), content_type="text/event-stream"
    )
    term = start(100, 30)
    term.wait_for("Your request")
    term.send("print 200 lines\r")
    term.wait_for("line number 200")
    term.settle()
    history = term.history()
    assert any(line.strip() == "line number 1" for line in history)  # the earliest lines are in the scrollback
    assert any("One agent, many models" in line for line in history)


def test_rate_limit_shows_a_countdown_then_the_answer(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    server.expect_oneshot_request(CHAT).respond_with_data(
        fixture_bytes("scripted-openai-rate-limit.sse"),
        status=429,
        headers={"retry-after": "2"},
        content_type="application/json",
    )
    server.expect_oneshot_request(CHAT).respond_with_data(
        text_stream("Worth the wait."), content_type="text/event-stream"
    )
    term = start()
    term.wait_for("Your request")
    term.send("hello\r")
    term.wait_for("resuming then")
    term.wait_for("Worth the wait.")
    assert len(chat_bodies(server)) == 2


def test_exit_saves_the_session(server: HTTPServer, start: Callable[..., Terminal], project: Path) -> None:
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Saved soon."), content_type="text/event-stream")
    term = start()
    term.wait_for("Your request")
    term.send("remember this\r")
    term.wait_for("Saved soon.")
    term.send("/exit\r")
    term.wait_for("Session saved:")
    term.child.expect(__import__("pexpect").EOF, timeout=10)
    sessions = list((project / ".maia" / ".sessions").glob("*.json"))
    assert len(sessions) == 1 and "remember this" in sessions[0].read_text()


@pytest.mark.parametrize("how", ["ctrl-d", "ctrl-c", "sigterm", "sighup"])
def test_every_exit_path_saves(server: HTTPServer, start: Callable[..., Terminal], project: Path, how: str) -> None:
    import signal

    import pexpect

    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Kept."), content_type="text/event-stream")
    term = start()
    term.wait_for("Your request")
    term.send("keep me\r")
    term.wait_for("Kept.")
    if how in ("ctrl-d", "ctrl-c"):  # keys meant for the prompt wait for it; a signal is sent at once
        idle(term)
    if how == "ctrl-d":
        term.send("\x04")
    elif how == "ctrl-c":
        term.send("\x03")
        term.wait_for("Press Ctrl+C again to quit")
        term.send("\x03")
    else:
        term.child.kill(signal.SIGTERM if how == "sigterm" else signal.SIGHUP)
    term.child.expect(pexpect.EOF, timeout=10)
    sessions = list((project / ".maia" / ".sessions").glob("*.json"))
    assert len(sessions) == 1 and "keep me" in sessions[0].read_text()


def _borders(term: Terminal) -> list[str]:
    return [line.rstrip() for line in term.screen.display if line.strip() and set(line.strip()) == {"┈"}]


def test_resize_redraws_at_the_new_width(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    term = start(100, 30)
    ready(term)
    term.resize(30, 60)
    term.wait_until(lambda: [len(b) for b in _borders(term)] == [59, 59], "the input box was not redrawn at 60 columns")
    assert "Your request" in term.text() and term.text().count("/ 128k") == 1  # one bar, no ghost copies
    term.resize(30, 100)
    term.wait_until(lambda: [len(b) for b in _borders(term)] == [99, 99], "not redrawn at 100 columns")
    assert term.text().count("/ 128k") == 1
