"""Outages of the proxy and failing servers (issue 27 item 2, finding 2; issue 28 item 11).

Real ``maia ask`` processes and ``maia chat`` in a pseudo-terminal, against loopback servers that are
down, come back, stay silent or answer HTTP 500.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.app.helpers import CHAT, chat_bodies, maia, session_files, spawn
from tests.conftest import fixture_bytes
from tests.e2e.terminal import Terminal, chat_env
from tests.streams import text_stream, tool_stream


def free_port() -> int:
    """A loopback port nothing listens on (for now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Lines:
    """The stderr of a running process, read line by line in a thread."""

    def __init__(self, stream: Any) -> None:
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line)

    def wait_for(self, needle: str, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(needle in line for line in self.lines):
                return
            time.sleep(0.05)
        raise AssertionError(f"{needle!r} never came; stderr: {''.join(self.lines)}")

    @property
    def text(self) -> str:
        return "".join(self.lines)


@pytest.fixture
def later_server() -> Iterator[Callable[[int], HTTPServer]]:
    """A LiteLLM-format server started on demand on a given port (the proxy coming back)."""
    started: list[HTTPServer] = []

    def start(port: int) -> HTTPServer:
        server = HTTPServer(host="127.0.0.1", port=port, threaded=True)
        server.expect_request("/v1/models").respond_with_data(
            fixture_bytes("proxy-models.json"), content_type="application/json"
        )
        server.expect_request(CHAT, method="POST").respond_with_data(
            text_stream("The proxy is back."), content_type="text/event-stream"
        )
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.clear()
        if server.is_running():
            server.stop()


def test_ask_rides_out_a_proxy_outage(
    write_settings: Callable[..., Path], later_server: Callable[[int], HTTPServer]
) -> None:
    port = free_port()
    write_settings(f"http://127.0.0.1:{port}", OutageRetrySeconds=90)
    process = spawn("ask", "-m", "scripted-openai", "--no-save", "hi")
    stderr = Lines(process.stderr)
    try:
        stderr.wait_for("LiteLLM unreachable: retrying at")  # the countdown, while the proxy is down
        server = later_server(port)
        stdout, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stderr.thread.join(10)
    assert process.returncode == 0, stderr.text
    assert stdout == "The proxy is back.\n"
    assert len(chat_bodies(server)) == 1
    assert "Traceback" not in stderr.text


def test_an_outage_longer_than_the_window_fails_keeping_what_was_done(
    server: HTTPServer, write_settings: Callable[..., Path], project: Path
) -> None:
    write_settings(server.url_for(""), ReadTimeout=1, OutageRetrySeconds=3)
    calls: list[float] = []

    def then_silent(_request: Request) -> Response:
        calls.append(time.monotonic())
        if len(calls) == 1:
            return Response(tool_stream("TodoWrite", {"todos": []}), content_type="text/event-stream")

        def silence() -> Iterator[bytes]:
            time.sleep(2)
            yield b"data: [DONE]\n\n"

        return Response(silence(), content_type="text/event-stream")

    server.expect_request(CHAT, method="POST").respond_with_handler(then_silent)
    result = maia("ask", "-m", "scripted-openai", "--allow", "TodoWrite", "plan the work", timeout=90)
    assert result.returncode == 1
    assert "No answer from LiteLLM: retrying at" in result.stderr  # retried, with the countdown
    assert "LiteLLM sent nothing for 1 s" in result.stderr  # then the turn fails, saying why
    assert len(calls) >= 3  # the first answer, then at least one retry
    (saved,) = session_files(project).values()
    blocks = [b["type"] for m in saved["messages"] for b in m["content"]]
    assert "tool_use" in blocks and "tool_result" in blocks  # what was done is kept
    assert "Traceback" not in result.stderr


def test_no_retry_when_the_window_is_zero(write_settings: Callable[..., Path]) -> None:
    write_settings(f"http://127.0.0.1:{free_port()}", OutageRetrySeconds=0)
    result = maia("ask", "-m", "scripted-openai", "--no-save", "hi")
    assert result.returncode == 1
    assert "LiteLLM is unreachable" in result.stderr and "retrying" not in result.stderr


# --- the chat: one countdown line, the right words per status (issue 28 item 11) -------------------


@pytest.fixture
def chat(home: Path, project: Path) -> Iterator[Callable[..., Terminal]]:
    terminals: list[Terminal] = []

    def launch() -> Terminal:
        terminal = Terminal(["chat", "-m", "scripted-openai"], project, chat_env(home, project), 100, 30)
        terminals.append(terminal)
        return terminal

    yield launch
    for terminal in terminals:
        terminal.close()


def test_a_500_in_the_chat_is_one_countdown_line_with_the_right_words(
    server: HTTPServer, chat: Callable[..., Terminal]
) -> None:
    error = json.dumps({"error": {"message": "upstream\nexploded\nwith\ndetails"}})
    for _ in range(2):
        server.expect_oneshot_request(CHAT, method="POST").respond_with_data(
            error, status=500, content_type="application/json"
        )
    release, arrived = threading.Event(), threading.Event()

    def held(_request: Request) -> Response:
        arrived.set()
        release.wait(30)
        return Response(text_stream("Worth the wait."), content_type="text/event-stream")

    server.expect_oneshot_request(CHAT, method="POST").respond_with_handler(held)
    term = chat()
    term.wait_for("Your request")
    term.send("hello\r")
    term.wait_for("Server error (HTTP 500): retrying at")
    assert "Server overloaded" not in term.everything()
    term.wait_until(arrived.is_set, "the third attempt")
    release.set()
    term.wait_for("Worth the wait.")
    everything = term.everything()
    assert "exploded" not in everything  # no warning block per attempt, only the countdown
    assert "LiteLLM answered HTTP 500" not in everything


def test_the_chat_counts_down_while_the_proxy_is_unreachable(
    write_settings: Callable[..., Path], chat: Callable[..., Terminal]
) -> None:
    write_settings(f"http://127.0.0.1:{free_port()}", OutageRetrySeconds=4, DefaultModel="scripted-openai")
    term = chat()
    term.wait_for("Your request")
    term.send("hello\r")
    term.wait_for("LiteLLM unreachable: retrying at")
    term.wait_for("Esc to cancel")
    term.wait_for("LiteLLM is unreachable", timeout=60)  # the window is over: the turn fails, saying why


def test_an_answer_cut_by_a_dropped_connection_is_retried_and_not_glued_to_the_next(
    server: HTTPServer, chat: Callable[..., Terminal]
) -> None:
    cut = b'data: {"choices": [{"index": 0, "delta": {"content": "Partial ans"}}]}\n\n'  # no [DONE]: cut
    server.expect_oneshot_request(CHAT, method="POST").respond_with_data(cut, content_type="text/event-stream")
    server.expect_oneshot_request(CHAT, method="POST").respond_with_data(
        text_stream("The whole answer."), content_type="text/event-stream"
    )
    term = chat()
    term.wait_for("Your request")
    term.send("hello\r")
    term.wait_for("The whole answer.")
    assert "Partial ansThe whole" not in term.everything()
    assert len(chat_bodies(server)) == 2
