"""Keys typed as soon as the user launches ``maia``, before the chat reads the terminal: none is lost, none is
doubled, they land in the input box in order, an Enter among them sends the request, and the terminal's echo
of them is erased; the terminal's modes are given back as the shell had them."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from tests.e2e.terminal import Terminal, chat_env
from tests.e2e.test_chat_v2 import bodies, box, draft, last_user_text, reply
from tests.streams import text_stream

ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def box_shown(term: Terminal) -> bool:
    return sum(1 for line in term.screen.display if line.strip() and set(line.rstrip()) == {"┈"}) == 2


@pytest.mark.parametrize("answers", [False, True], ids=["silent terminal", "answering terminal"])
def test_keys_typed_through_start_up_all_land_in_the_box_in_order(
    server: HTTPServer, start: Callable[..., Terminal], answers: bool
) -> None:
    # a silent terminal (a plain PTY, some CI runners) makes blessed wait for answers that never come: the keys
    # typed meanwhile were read and dropped
    term = start(200, 30, answers=answers)
    sent = ""
    extra = 5  # typed steadily from the launch until the box is on screen, and a few keys more
    while extra and len(sent) < 150:
        sent += ALPHABET[len(sent) % len(ALPHABET)]
        term.send(sent[-1])
        term.pump(0.03)
        if box_shown(term):
            extra -= 1
    term.wait_settled(lambda: "/ 128k" in term.text() and draft(term) == sent, f"the box should hold {sent!r}")
    assert len(box(term)) == 1


def test_an_enter_typed_before_the_chat_starts_sends_the_request_and_the_echo_is_erased(
    server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    reply(server, text_stream("Handled."))
    term = start(40, 30)
    term.screen.draw("$ maia")  # the shell's line; the user typed on at once (the terminal echoes it)
    term.screen.linefeed()
    term.screen.carriage_return()
    request = "explain this repository to me, briefly please"  # wider than the window: the echo wraps
    term.send(request + "\r")
    screen = term.wait_settled(
        lambda: "Handled." in term.everything() and draft(term).startswith("Your request"),  # the turn ended
        "the request typed ahead was not sent",
    )
    assert [last_user_text(body) for body in bodies(server)] == [request]
    assert "explain this" not in "\n".join(term.history()[:3]), screen  # the echo is gone…
    assert screen.count("explain this") == 1, screen  # …and the request shows once, in the transcript


def test_the_terminal_modes_are_given_back_as_the_shell_had_them(
    server: HTTPServer, home: Path, project: Path, tmp_path: Path
) -> None:
    before, after = tmp_path / "before", tmp_path / "after"
    chat = shlex.join([sys.executable, "-m", "maia", "chat", "-m", "scripted-openai"])
    script = f"stty -g > {before}; {chat}; stty -g > {after}; echo 'all done'"
    term = Terminal([], project, chat_env(home, project), 100, 30, program=["sh", "-c", script])
    try:
        term.send("early")
        term.wait_settled(lambda: "/ 128k" in term.text() and draft(term) == "early")
        term.send("\x15/exit\r")  # Ctrl+U empties the box
        term.wait_for("all done")
        assert before.read_text() == after.read_text()
    finally:
        term.close()


def test_a_paste_before_the_chat_starts_stays_whole_in_the_box(
    server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    # the terminal cannot bracket a paste before the chat asks it to: its lines must not become requests
    term = start(100, 30)
    term.send("first line\rsecond line\rthird line")
    term.wait_settled(lambda: "/ 128k" in term.text() and draft(term).endswith("third line"), "the paste is not whole")
    assert [row[6:].rstrip() for row in box(term)] == ["first line", "second line", "third line"]
    assert not bodies(server)
