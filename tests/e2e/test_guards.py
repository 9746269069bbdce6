"""Every front end guards each request: a glob that cannot be read and an unexpected error (a bug) are one
line, never a traceback; the chat goes on and the traceback is in MAIA's home (errors.log, owner-only)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from pytest_httpserver import HTTPServer

from tests.e2e.conftest import ready
from tests.e2e.terminal import Terminal, chat_env
from tests.streams import text_stream

CHAT = "/v1/chat/completions"
WARNING = "@[z-a]*: the range z-a in [z-a] is reversed and matches nothing (write a-z)."

# A real maia process whose request preparation has a bug when the input says "boom": the injected error
# is not one of MAIA's own (a MaiaError), so only the front end's guard stands between it and a traceback.
BUGGY = """
import sys
from maia.app.application import Application
original = Application.prepare
def prepare(self, text, *args, **kwargs):
    if "boom" in text:
        raise RuntimeError("injected boom")
    return original(self, text, *args, **kwargs)
Application.prepare = prepare
from maia.commands import main
main(sys.argv[1:])
"""


def _answer(server: HTTPServer, text: str) -> None:
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream(text), content_type="text/event-stream")


def _bodies(server: HTTPServer) -> list[dict[str, object]]:
    return [json.loads(r.data) for r, _ in server.log if r.path == CHAT]


def test_a_reversed_range_in_the_chat_is_one_line_and_the_request_goes_on(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    (project / "a.py").write_text("x")
    _answer(server, "Nothing attached, I see.")
    term = start()
    ready(term)
    term.send("read @[z-a]* please\r")
    screen = term.wait_for("Nothing attached, I see.")
    assert WARNING in screen
    assert "Traceback" not in term.raw.decode("utf-8", "replace")
    assert _bodies(server)[0]["messages"][-1]["content"] == "read @[z-a]* please"  # type: ignore[index]
    assert term.child.isalive()


def test_an_unexpected_error_in_the_chat_is_one_line_logged_and_the_chat_goes_on(
    server: HTTPServer, home: Path, project: Path
) -> None:
    _answer(server, "Still here.")
    program = [sys.executable, "-c", BUGGY, "chat", "-m", "scripted-openai"]
    term = Terminal([], project, chat_env(home, project), program=program)
    try:
        ready(term)
        term.send("boom please\r")
        screen = term.wait_for("injected boom")
        log = home / "errors.log"
        assert "MAIA hit an unexpected error (a bug): RuntimeError: injected boom." in screen
        assert "Traceback" not in term.raw.decode("utf-8", "replace")
        term.send("and now?\r")
        term.wait_for("Still here.")  # the same chat answers the next request
        assert term.child.isalive()
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
        text = log.read_text()
        assert "Traceback (most recent call last)" in text and "RuntimeError: injected boom" in text
    finally:
        term.close()


def _ask(*args: str, program: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = program or [sys.executable, "-m", "maia"]
    return subprocess.run(
        [*argv, "ask", "-m", "scripted-openai", *args],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def test_a_reversed_range_in_maia_ask_is_one_warning_line(server: HTTPServer, project: Path) -> None:
    (project / "a.py").write_text("x")
    _answer(server, "Nothing attached.")
    done = _ask("read @[z-a]* please")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Nothing attached.\n"
    assert done.stderr.splitlines() == ["Warning: " + WARNING]


def test_an_unexpected_error_in_maia_ask_is_one_line_and_exit_1(server: HTTPServer, home: Path) -> None:
    done = _ask("boom please", program=[sys.executable, "-c", BUGGY])
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("Error: MAIA hit an unexpected error (a bug): RuntimeError: injected boom.")
    assert str(home / "errors.log") in lines[0]
    assert "RuntimeError: injected boom" in (home / "errors.log").read_text()
