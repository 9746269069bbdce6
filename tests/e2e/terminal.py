"""Driving ``maia chat`` in a real pseudo-terminal and reading the screen as a person sees it (pyte).

The screen answers the terminal's queries as a real terminal does (cursor position, device
attributes, DEC mode reports, the colour scheme, optionally the kitty keyboard protocol), or
answers nothing at all (``answers=False``: a plain PTY, like a script or a CI runner).
pyte does not know a few sequences a modern terminal understands; :class:`QueryFilter` takes
them out of the byte stream before pyte sees them, answers the queries among them and records the
operating-system commands (title, clipboard, notifications, hyperlinks) for the tests to inspect.

Reading the screen at the right moment: the terminal reports synchronized output (mode 2026), so,
like a terminal that does, the screen only ever shows whole frames (a read never falls between the
chat erasing a row and drawing it again). A test that asserts more than what it waited for waits
for all of it (:meth:`Terminal.wait_until`), and :meth:`Terminal.wait_settled` /
:meth:`Terminal.settle` wait until what the screen shows stops changing (the spinners aside): the
chat renders Markdown on a worker thread and shows what follows a block still being rendered in its
live area, so the same text can be in a transient place for a moment.
"""

from __future__ import annotations

import copy
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pyte
from wcwidth import wcwidth

# sequences pyte would mis-print: DCS/APC/PM/SOS strings, OSC strings (recorded), and the CSI forms
# below (DECRQM, XTVERSION, kitty keyboard, colour-scheme query, title stack, XTWINOPS)
_STRING = re.compile(rb"\x1b([P_^X\]])(.*?)(?:\x1b\\|\x07)", re.DOTALL)
_CSI = re.compile(rb"\x1b\[([\x30-\x3f]*)([\x20-\x2f]*)([\x40-\x7e])")
_INCOMPLETE = re.compile(rb"\x1b(?:[P_^X\]](?:(?!\x1b\\|\x07).)*|\[[\x30-\x3f]*[\x20-\x2f]*)?\Z", re.DOTALL)


class AnsweringScreen(pyte.HistoryScreen):
    """A pyte screen with scrollback whose private device-status reports are understood.

    Like tmux (``scroll-on-clear``, on by default), erasing the whole screen, or everything from
    the top-left corner, pushes what the screen showed into the scrollback instead of losing it.
    """

    scroll_on_clear = True

    def draw(self, data: str) -> None:
        """Draw as a terminal does: a zero-width character (ZWJ, VS16, a combining mark) joins the cell before.

        pyte 0.8 stops drawing the rest of ``data`` at a zero-width character that is not a combining
        mark (a ZWJ emoji sequence, ``❤️``), which no terminal does; this draws each character in
        turn, like xterm (one cell per character, zero-width ones attached to their predecessor).
        """
        for char in data:
            if wcwidth(char) != 0:
                super().draw(char)
                continue
            line = self.buffer[self.cursor.y]
            x = self.cursor.x - 1
            if x >= 1 and line[x].data == "" and wcwidth(line[x - 1].data[:1] or " ") == 2:
                x -= 1  # the stub after a wide character: join the character itself
            if x >= 0:
                line[x] = line[x]._replace(data=line[x].data + char)
                self.dirty.add(self.cursor.y)

    def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
        """Erase; a whole-screen erase keeps the screen's lines in the scrollback (tmux)."""
        whole = how in (2, 3) or (how == 0 and self.cursor.x == 0 and self.cursor.y == 0)
        if self.scroll_on_clear and whole:
            used = [y for y in range(self.lines) if any(char.data.strip() for char in self.buffer[y].values())]
            for y in range(max(used) + 1 if used else 0):
                self.history.top.append(copy.copy(self.buffer[y]))
        super().erase_in_display(how, *args, **kwargs)

    def report_device_status(self, mode: int, **kwargs: Any) -> None:
        """``CSI 6 n`` answers the cursor position; private reports are handled by the filter."""
        if kwargs.get("private"):
            return
        super().report_device_status(mode)

    def bell(self, *args: Any) -> None:
        """Count bells."""
        self.bells = getattr(self, "bells", 0) + 1


class QueryFilter:
    """Takes out (and answers) what pyte does not understand; passes everything else through."""

    def __init__(
        self,
        answer: Callable[[bytes], None] | None,
        *,
        kitty: bool = False,
        scheme: str | None = "dark",
        dec_modes: dict[int, int] | None = None,
        name: str = "XTerm(390)",
        background: str | None = None,
    ) -> None:
        self.answer = answer
        self.name = name
        self.background = background  # "rgb:ffff/ffff/ffff": the answer to OSC 11 (None: no answer)
        self.kitty = kitty
        self.kitty_flags = 0
        self.scheme = scheme
        # DECRQM values: 1 set, 2 reset (supported), 0 unknown; modes the terminal implements
        self.modes = dec_modes if dec_modes is not None else {2004: 2, 2026: 2, 1004: 2, 2048: 2, 25: 1}
        self.osc: list[str] = []
        self.titles: list[str] = []
        self._tail = b""
        self._frame = bytearray()  # a synchronized update not finished yet: shown once it is
        self._syncing = False

    def _reply(self, data: bytes) -> None:
        if self.answer is not None:
            self.answer(data)

    def feed(self, data: bytes) -> bytes:
        """What pyte should see of ``data`` (an unfinished sequence waits for the next read)."""
        data = self._tail + data
        self._tail = b""
        incomplete = _INCOMPLETE.search(data[-4096:])
        if incomplete is not None:
            cut = len(data) - (len(data[-4096:]) - incomplete.start())
            data, self._tail = data[:cut], data[cut:]
        out = bytearray()
        pos = 0
        while True:
            # inside a synchronized update, what is drawn waits for its end (a terminal shows whole frames)
            shown = self._frame if self._syncing else out
            esc = data.find(b"\x1b", pos)
            if esc < 0:
                shown += data[pos:]
                break
            shown += data[pos:esc]
            string = _STRING.match(data, esc)
            if string is not None:
                kind, body = string.group(1), string.group(2)
                if kind == b"]":
                    text = body.decode("utf-8", "replace")
                    self.osc.append(text)
                    if text == "11;?" and self.background is not None:
                        self._reply(f"\x1b]11;{self.background}\x1b\\".encode())
                    if text[:2] in ("0;", "2;"):
                        self.titles.append(text[2:])
                        shown += string.group()  # pyte keeps the title too
                pos = string.end()
                continue
            csi = _CSI.match(data, esc)
            if csi is not None and self._synchronize(csi.group(1), csi.group(3)):
                if not self._syncing:  # the frame is complete: shown whole
                    out += self._frame
                    self._frame.clear()
                pos = csi.end()
                continue
            if csi is not None and self._csi(csi.group(1), csi.group(2), csi.group(3)):
                pos = csi.end()
                continue
            shown += data[esc : esc + 1]
            pos = esc + 1
        return bytes(out)

    def _synchronize(self, params: bytes, final: bytes) -> bool:
        """``CSI ? 2026 h`` / ``l``, begin and end of a synchronized update, where the terminal reports the mode."""
        if params != b"?2026" or final not in b"hl" or self.modes.get(2026, 0) == 0:
            return False
        self._syncing = final == b"h"
        self.modes[2026] = 1 if self._syncing else 2
        return True

    def release(self) -> bytes:
        """What an unfinished synchronized update drew (the program ended in the middle of it)."""
        frame, self._syncing = bytes(self._frame), False
        self._frame.clear()
        return frame

    def _csi(self, params: bytes, inter: bytes, final: bytes) -> bool:
        """Handle one CSI sequence; True when it must not reach pyte."""
        if final == b"p" and inter == b"$" and params.startswith(b"?"):  # DECRQM
            mode = int(params[1:] or 0)
            self._reply(b"\x1b[?%d;%d$y" % (mode, self.modes.get(mode, 0)))
            return True
        if final in b"hl" and params.startswith(b"?"):
            for number in params[1:].split(b";"):
                if number.isdigit() and int(number) in self.modes:
                    self.modes[int(number)] = 1 if final == b"h" else 2
            return False
        if final == b"q" and params.startswith(b">"):  # XTVERSION: pyte draws characters as xterm does
            if self.name:
                self._reply(b"\x1bP>|" + self.name.encode() + b"\x1b\\")
            return True
        if final == b"u" and params[:1] in (b"?", b">", b"<", b"="):  # kitty keyboard protocol
            if params == b"?" and self.kitty:
                self._reply(b"\x1b[?%du" % self.kitty_flags)
            elif params.startswith(b"=") and self.kitty:
                self.kitty_flags = int(params[1:].split(b";")[0] or 0)
            return True
        if final == b"n" and params == b"?996":
            if self.scheme is not None:
                self._reply(b"\x1b[?997;%dn" % (1 if self.scheme == "dark" else 2))
            return True
        return final == b"t"  # title stack and window operations


def _spinner_table() -> dict[int, str]:
    from maia.frontends.chat.render import ARROW3, DOTS10

    return {ord(char): "·" for frame in (*ARROW3, *DOTS10) for char in frame}


_SPINNERS = _spinner_table()


class Terminal:
    """A child process in a PTY, its output fed to a pyte screen with scrollback history."""

    def __init__(
        self,
        args: list[str],
        cwd: Path,
        env: dict[str, str],
        columns: int = 100,
        rows: int = 30,
        *,
        answers: bool = True,
        kitty: bool = False,
        scheme: str | None = "dark",
        program: list[str] | None = None,
        background: str | None = None,
    ) -> None:
        self.screen = AnsweringScreen(columns, rows, history=5000, ratio=0.5)
        self.stream = pyte.ByteStream(self.screen)
        argv = program if program is not None else [sys.executable, "-m", "maia", *args]
        self.started = time.monotonic()
        self.child = pexpect.spawn(
            argv[0], argv[1:], cwd=str(cwd), env=env, dimensions=(rows, columns), encoding=None, timeout=10
        )
        self.child.delaybeforesend = None
        self.answers = answers
        answer = self._answer if answers else None
        self.filter = QueryFilter(answer, kitty=kitty, scheme=scheme, background=background)
        self.screen.write_process_input = self._screen_answer  # type: ignore[method-assign]
        self.raw = b""

    def _answer(self, data: bytes) -> None:
        if self.child.isalive():
            self.child.send(data)

    def _screen_answer(self, data: str) -> None:
        if self.answers:
            self._answer(data.encode())

    def pump(self, duration: float = 0.05) -> bool:
        """Read what the child printed for a moment; False once it has exited and everything was read."""
        end = time.monotonic() + duration
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.02)
            except pexpect.TIMEOUT:
                data = b""
            except pexpect.EOF:
                self.stream.feed(self.filter.release())
                return False
            if data:
                self.raw += data
                self.stream.feed(self.filter.feed(data))
            if time.monotonic() >= end:
                return True

    def wait_exit(self, timeout: float = 20.0) -> None:
        """Read everything until the child exits (what it prints on its way out included)."""
        end = time.monotonic() + timeout
        while self.pump(0.1):
            if time.monotonic() > end:
                raise AssertionError(f"the chat did not exit; screen:\n{self.text()}")

    def text(self) -> str:
        """The visible screen."""
        return "\n".join(line.rstrip() for line in self.screen.display)

    def history(self) -> list[str]:
        """Lines scrolled off the top, oldest first."""
        return ["".join(char.data for _col, char in sorted(line.items())).rstrip() for line in self.screen.history.top]

    def everything(self) -> str:
        """Scrollback and screen."""
        return "\n".join([*self.history(), self.text()])

    def wait_for(self, needle: str, timeout: float = 20.0) -> str:
        """Pump until ``needle`` is on the screen (or in the scrollback)."""
        return self.wait_until(lambda: needle in self.everything(), f"{needle!r} never appeared", timeout)

    def wait_until(self, condition: Callable[[], bool], message: str = "", timeout: float = 20.0) -> str:
        """Pump until ``condition()`` holds; the screen and scrollback then."""
        end = time.monotonic() + timeout
        while True:
            self.pump(0.05)
            if condition():
                return self.everything()
            if time.monotonic() > end:
                raise AssertionError(f"{message or 'condition never held'}; screen:\n{self.text()}")

    def wait_settled(self, condition: Callable[[], bool], message: str = "", timeout: float = 20.0) -> str:
        """Pump until ``condition()`` holds on a screen that has settled (see :meth:`settle`); the screen then."""
        end = time.monotonic() + timeout
        while True:
            self.wait_until(condition, message, max(0.1, end - time.monotonic()))
            self.settle(timeout=max(0.1, end - time.monotonic()))
            if condition():
                return self.everything()
            if time.monotonic() > end:
                raise AssertionError(f"{message or 'condition never held'} once settled; screen:\n{self.text()}")

    def settle(self, quiet: float = 0.3, timeout: float = 10.0) -> None:
        """Pump until what the screen and scrollback show has not changed for ``quiet`` seconds, the spinners
        aside (the input box's arrow turns twice a second while the chat waits: the bytes never stop)."""
        end = time.monotonic() + timeout
        seen = self._still()
        since = time.monotonic()
        while True:
            self.pump(0.05)
            now = time.monotonic()
            shown = self._still()
            if shown != seen:
                seen, since = shown, now
            elif now - since >= quiet:
                return
            if now > end:
                raise AssertionError(f"the screen never settled for {quiet} s; screen:\n{self.text()}")

    def _still(self) -> str:
        """The screen and scrollback with the spinners' frames made one."""
        return self.everything().translate(_SPINNERS)

    def send(self, data: str) -> None:
        """Type."""
        self.child.send(data.encode())

    def answer(self, keys: str) -> None:
        """Answer a question that is on screen: a key typed within the chat's guard after a question appears
        (or right after another key) is taken as typed ahead, so a person's answer comes after it."""
        from maia.frontends.chat.term import ANSWER_GUARD

        self.pump(ANSWER_GUARD + 0.15)
        self.send(keys)

    def resize(self, rows: int, columns: int) -> None:
        """Resize the window (the screen first, as a terminal does, then the PTY's SIGWINCH)."""
        self.screen.resize(rows, columns)
        self.child.setwinsize(rows, columns)

    def hang_up(self) -> None:
        """Close the terminal's side of the PTY, as a terminal window closing does. Through the pty object, so
        that it knows: a raw ``os.close`` would leave it to close the same descriptor number again when it is
        collected, by then another test's PTY."""
        self.child.ptyproc.fileobj.close()

    def close(self) -> None:
        """End the child."""
        if self.child.isalive():
            self.child.terminate(force=True)


def chat_env(home: Path, project: Path) -> dict[str, str]:
    """The environment of a chat under test."""
    drop = ("MAIA_", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "COLORTERM", "TERM_PROGRAM", "COLORFGBG", "TMUX")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update({"MAIA_HOME": str(home), "MAIA_CWD": str(project), "TERM": "xterm-256color"})
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    return env
