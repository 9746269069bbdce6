"""A session planted by a repository, in the chat (real pseudo-terminal): ``--continue`` and ``/load``
never carry it on as the user's own history."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytest_httpserver import HTTPServer

from maia.sessions.store import SessionStore
from tests.e2e.conftest import ready
from tests.e2e.terminal import Terminal
from tests.sessions.test_planted import PLANTED_WORDS, plant
from tests.streams import text_stream

CHAT = "/v1/chat/completions"


def test_chat_continue_and_load_refuse_a_planted_session(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    planted = plant(project, "planted", origin="chat")
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Fresh."), content_type="text/event-stream")
    term = start(120, 30, "--continue")
    term.wait_for("A new session starts.")
    ready(term)
    assert "planted was not written by your MAIA" in term.everything()
    term.send("/load planted\r")
    term.wait_for("The session planted was not written by your MAIA in this folder")
    term.send("hello\r")
    term.wait_for("Fresh.")
    (request,) = [r.data.decode() for r, _ in server.log if r.path == CHAT]
    assert "hello" in request and PLANTED_WORDS not in request and "health: OK" not in request
    assert planted.exists()
    term.close()


def test_the_trust_question_shows_foreign_sessions_and_yes_accepts_them(
    server: HTTPServer, start: Callable[..., Terminal], project: Path, home: Path
) -> None:
    (project / ".maia").mkdir()
    (project / ".maia" / "settings.json").write_text('{"permissions": {"allow": ["Bash(mkdir *)"]}}')
    plant(project, "old-work", origin="chat")
    store = SessionStore.for_launch(project, home)
    assert [i.name for i in store.foreign()] == ["old-work"]
    term = start(120, 30)
    screen = term.wait_for("Trust this folder?")
    assert "Saved sessions your MAIA did not write here" in screen and "old-work (3 msg)" in screen
    term.answer("y")
    ready(term)
    term.send("/load old-work\r")
    term.wait_for("Session old-work loaded (3 messages).")
    assert store.foreign() == []
    term.close()
