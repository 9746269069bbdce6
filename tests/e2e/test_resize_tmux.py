"""Resizing a tmux window while an answer streams, or at the idle prompt, leaves each line in its history exactly
once (issue 28, item 12, as it was seen: tmux at 120x40, made 80x24 and back).

tmux wraps the rows on screen again when the window's width changes (reflow) and marks the rows it wrapped;
the screen of tests/e2e/terminal.py does neither, so this runs the chat in a real tmux server (its own socket
under the test's folder) and reads tmux's history with ``capture-pane``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from tests.e2e.terminal import chat_env
from tests.e2e.test_resize import check_once, serve


class Tmux:
    """A tmux server of its own running ``maia chat`` in one window."""

    def __init__(self, tmux: str, socket: Path) -> None:
        self.tmux = tmux
        self.socket = socket

    def run(self, *args: str) -> str:
        """A tmux command; its output."""
        done = subprocess.run(
            [self.tmux, "-S", str(self.socket), *args], capture_output=True, text=True, check=True, timeout=20
        )
        return done.stdout

    def history(self) -> str:
        """The window's history and screen, each line as tmux joins its wrapped rows (``-J``)."""
        return self.run("capture-pane", "-p", "-J", "-S", "-", "-t", "chat")

    def wait_for(self, needle: str, timeout: float = 30.0) -> str:
        """Until ``needle`` is in the history or on the screen."""
        end = time.monotonic() + timeout
        while True:
            text = self.history()
            if needle in text:
                return text
            if time.monotonic() > end:
                raise AssertionError(f"{needle!r} never appeared:\n{text}")
            time.sleep(0.05)

    def settle(self, quiet: float = 0.5, timeout: float = 20.0) -> str:
        """Until what tmux holds has not changed for ``quiet`` seconds (the idle prompt is still)."""
        end = time.monotonic() + timeout
        seen, since = self.history(), time.monotonic()
        while time.monotonic() - since < quiet:
            if time.monotonic() > end:
                raise AssertionError(f"the window never settled:\n{seen}")
            time.sleep(0.05)
            text = self.history()
            if text != seen:
                seen, since = text, time.monotonic()
        return seen

    def resize(self, columns: int, rows: int) -> None:
        """The window's new size (tmux reflows its rows, the chat gets SIGWINCH)."""
        self.run("resize-window", "-t", "chat", "-x", str(columns), "-y", str(rows))


SIZE = ("-d", "-s", "chat", "-x", "120", "-y", "40")  # detached, its name, 120x40


@pytest.fixture
def tmux(home: Path, project: Path, tmp_path: Path) -> Iterator[Callable[[], Tmux]]:
    """Start the chat in a tmux window of 120x40 (tmux is required in CI: the test fails there without it)."""
    program = shutil.which("tmux")
    if program is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is not installed (.ci/run installs it)")
        pytest.skip("tmux is not installed")
    servers: list[Tmux] = []

    def launch() -> Tmux:
        server = Tmux(program, tmp_path / "tmux.sock")
        env = {key: value for key, value in chat_env(home, project).items() if key != "TERM"}
        command = "exec " + shlex.join([sys.executable, "-m", "maia", "chat", "-m", "scripted-openai"])
        subprocess.run(
            [program, "-S", str(server.socket), "-f", os.devnull, "new-session", *SIZE, "-c", str(project), command],
            env=env,
            check=True,
            timeout=20,
        )
        servers.append(server)
        server.run("set-option", "-t", "chat", "remain-on-exit", "on")
        server.wait_for("/ 128k")
        return server

    yield launch
    for server in servers:
        subprocess.run([program, "-S", str(server.socket), "kill-server"], capture_output=True, timeout=20)


def code_answer() -> tuple[list[str], list[str]]:
    """A paragraph and a code block whose lines fit in 120 columns, not in 80."""
    tail = "long enough to wrap"
    lines = [f"value_{n:02d} = compute({n}, scale=1234, offset=5678)  # line {n:02d}, {tail}" for n in range(50)]
    pieces = ["Here it is:\n\n```python\n", *(line + "\n" for line in lines), "```\n\nDone streaming."]
    return pieces, ["Here it is:", *(f"# line {n:02d}" for n in range(50)), *(f"{n:02d}, long" for n in range(50))]


def short_code_answer() -> tuple[list[str], list[str]]:
    """A paragraph and a code block whose lines fit in 80 columns."""
    lines = [f"value_{n:02d} = compute({n}, scale=1234)  # line {n:02d}" for n in range(50)]
    pieces = ["Here it is:\n\n```python\n", *(line + "\n" for line in lines), "```\n\nDone streaming."]
    return pieces, ["Here it is:", *(f"# line {n:02d}" for n in range(50)), "Done streaming."]


def table_answer() -> tuple[list[str], list[str]]:
    """A table wider than 80 columns."""
    tail = "long so that the table is wide"
    rows = [f"| {n:02d} | row{n:02d} | the description of row {n:02d}, {tail} |\n" for n in range(36)]
    pieces = ["The table:\n\n| n | name | description |\n|---|---|---|\n", *rows, "\nDone streaming."]
    return pieces, ["The table:", *(f"row{n:02d} " for n in range(36)), *(f"of row {n:02d}," for n in range(36))]


def paragraph_answer() -> tuple[list[str], list[str]]:
    """Paragraphs of two or three rows at 120 columns: every word once."""
    pieces, marks = ["Paragraphs follow.\n\n"], ["Paragraphs follow."]
    for n in range(24):
        words = [f"Para {n:02d}:", *(f"p{n:02d}w{k:02d}" for k in range(25)), f"end{n:02d}."]
        pieces.append(" ".join(words) + "\n\n")
        marks += words
    return [*pieces, "Done streaming."], [*marks, "Done streaming."]


STREAMS = {
    # the answer, and what is on screen when the window gets smaller, then back to its size
    "code": (code_answer, "# line 08", "# line 30"),
    "short code": (short_code_answer, "# line 08", "# line 30"),
    "table": (table_answer, "row08 ", "row24 "),
    "paragraphs": (paragraph_answer, "end05.", "end15."),
}


@pytest.mark.parametrize("kind", sorted(STREAMS))
def test_a_resize_while_an_answer_streams_in_tmux_leaves_each_line_once(
    kind: str, server: HTTPServer, tmux: Callable[[], Tmux]
) -> None:
    answer, smaller_at, back_at = STREAMS[kind]
    pieces, marks = answer()
    serve(server, pieces)
    window = tmux()
    window.run("send-keys", "-t", "chat", "show me", "Enter")
    window.wait_for(smaller_at)
    window.resize(80, 24)
    window.wait_for(back_at)
    window.resize(120, 40)
    window.wait_for("Done streaming.")
    check_once(window.settle(), marks)


def test_a_resize_at_the_idle_prompt_in_tmux_leaves_each_line_once(
    server: HTTPServer, tmux: Callable[[], Tmux]
) -> None:
    pieces, marks = paragraph_answer()
    serve(server, pieces)
    window = tmux()
    window.run("send-keys", "-t", "chat", "show me", "Enter")
    window.wait_for("Done streaming.")
    window.settle()
    window.resize(80, 24)
    window.settle()
    window.resize(120, 40)
    text = window.settle()
    check_once(text, marks)
    borders = [row for row in text.split("\n") if row.startswith("┈")]
    assert len(borders) == 2 and text.count("Your request") == 1, text  # one input box
