"""The bottom of the chat's terminal layers: the log (the scrollback) and the bottom area, drawn in frames.

Everything printed to the log stays in the terminal's scrollback; the bottom area (live answer rows,
command progress, status line, input box, context bar) is redrawn in place, only the cells that
changed, each redraw one synchronized-output frame where the terminal supports it. A terminal that
cannot move the cursor (``TERM=dumb``) gets lines only. Markdown blocks are rendered on a worker
thread; the log keeps them in order. All text given here from outside is made inert first
(:func:`maia.frontends.terminal.inert.inert`); only :meth:`Display.print_lines` takes lines MAIA rendered
itself. The layers above (status line, AgentUI adapter, input box, terminal session) build on this one;
:class:`~maia.frontends.chat.term.TerminalUI` is their sum.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Literal, TextIO

from maia.frontends.chat import render
from maia.frontends.chat.commandout import CommandOutput
from maia.frontends.chat.live import Block, Lines, LiveAnswer
from maia.frontends.chat.markdown import render_markdown
from maia.frontends.chat.store import History, UIStore
from maia.frontends.terminal.inert import inert
from maia.frontends.terminal.screen import Screen
from maia.frontends.terminal.termcaps import Capabilities
from maia.i18n import _

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from blessed import Terminal

STREAM_FRAME = 0.03  # streamed text is drawn at most this often
ThemeSetting = Literal["auto", "dark", "light"]


@dataclass(slots=True)
class LogEntry:
    """Lines for the log, in order; a Markdown block may still be rendering (off the event loop)."""

    lines: list[str] | None = None
    future: concurrent.futures.Future[str] | None = None
    preview: list[str] = field(default_factory=list)
    source: str = ""
    width: int = 80


class Display:
    """The log and the bottom area of the chat's terminal: frames, messages, Markdown off the event loop."""

    def __init__(
        self,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        history: History | None = None,
        theme: str = "auto",
    ) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout: IO[str] = stdout or sys.stdout
        self.store = UIStore(history=history or History())
        self.theme: ThemeSetting = theme if theme in ("dark", "light") else "auto"  # type: ignore[assignment]
        self.term: Terminal | None = None
        self.caps = Capabilities()
        self.screen = Screen()
        self._fd = self.stdin.fileno()
        self._width = 80
        self._height = 24
        self._tick = 0
        self._redraw_handle: asyncio.TimerHandle | None = None
        self._started = False
        self._gone = False
        self._live: LiveAnswer | None = None
        self._after_nested = False  # the log ends with a nested line: the next block is set apart by a blank
        self._log: collections.deque[LogEntry] = collections.deque()
        self._renderer: concurrent.futures.ThreadPoolExecutor | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.session_name: Callable[[], str | None] | None = None
        self.model_name: Callable[[], str | None] | None = None  # the model in use, for the bar
        self.last_answer = ""
        self._plain_state: dict[str, object] = {}
        self._reading = False  # read_input waits for a request (a plain terminal echoes the draft)
        self.commands = CommandOutput(on_output=self.schedule_redraw, on_end=self.redraw)  # Bash and ! running

    def _size(self) -> None:
        try:
            size = os.get_terminal_size(self.stdout.fileno())
            self._width, self._height = max(10, size.columns), max(5, size.lines)
        except (OSError, ValueError):
            self._width, self._height = 80, 24

    # --- output -----------------------------------------------------------------------------------

    @property
    def width(self) -> int:
        """Columns of the terminal."""
        return self._width

    @property
    def height(self) -> int:
        """Rows of the terminal."""
        return self._height

    def _write(self, text: str) -> None:
        if self._gone or not text:
            return
        try:
            self.stdout.write(text)
            self.stdout.flush()
        except OSError:  # the terminal went away (SIGHUP): the session is still saved
            self._gone = True

    def _frame(self) -> render.Frame:
        self.store.live_rows = self._live_rows()
        self.store.progress_rows = self.commands.rows(self._width - 1, self._tick) if self.commands.running else []
        if self.model_name is not None:
            self.store.model_name = self.model_name() or ""
        if self.session_name is not None:
            self.store.session_label = self.session_name() or ""
        frame = render.frame(self.store, self._width, self._height, self._tick)
        if self.store.question is not None:
            self.store.question.room = max(1, frame.detail_room)
        return frame

    def _live_rows(self) -> list[str]:
        rows: list[str] = []
        for entry in self._log:
            rows.extend(entry.preview if entry.lines is None else entry.lines)
        if self._live is not None:
            rows.extend(self._live.rows())
        return rows

    def _flush(self, log: list[str] | None = None) -> None:
        """One frame: ``log`` lines (if any) above, the bottom area brought up to date."""
        if not self._started:
            if log:
                self._write("\r\n".join(log) + "\r\n")
            return
        if not self.caps.redraw:
            self._plain(log or [])
            return
        frame = self._frame()
        out = self.screen.draw(frame.lines, frame.cursor, log)
        if not out:
            return
        term = self.term
        if self.caps.sync and term is not None and not self._gone:
            try:
                with term.synchronized_output(timeout=0):
                    self._write(out)
            except OSError:
                self._gone = True
        else:
            self._write(out)

    def _plain(self, log: list[str]) -> None:
        """A terminal that cannot move the cursor (``TERM=dumb``): lines only, never rewritten.

        The log is printed as it comes; the bottom area becomes lines written once when they change:
        the status, a question, a list (the current choice again after each move), and the input,
        echoed as it is typed (an edit other than typing at the end writes the line again).
        """
        out: list[str] = []
        plain = self._plain_state
        if log:
            if plain.get("input_open"):
                out.append("\r\n")
                plain["input_open"] = False
            out.append("\r\n".join(log) + "\r\n")
        store = self.store
        status = store.status if store.mode == "busy" else ""
        if status and status != plain.get("status"):
            out.append(f"… {status}\r\n")
        plain["status"] = status
        question = store.question if store.mode in ("ask", "confirm") else None
        asked = (question.text, question.stage) if question is not None else None
        if question is not None and plain.get("question") != asked:
            lines = list(question.detail) if question.stage == "answer" else []
            if question.reason and question.stage == "answer":
                lines.append(question.reason)
            if question.stage == "rules":
                lines.append(
                    _("Always allow {rules}: p this project · s this session · Esc back").format(
                        rules=", ".join(question.rules)
                    )
                )
            lines.append(f"ASK {question.text} {render.choices_text(question)} ")
            out.append("\r\n".join(lines).replace("\n", "\r\n"))
        plain["question"] = asked
        selection = store.selection
        if selection is not None:
            key = (selection.title, selection.index, tuple(sorted(selection.checked)), selection.query)
            if plain.get("selection") is None:
                out.append(selection.title + "\r\n")
                out.extend(f"  {choice}\r\n" for choice in selection.choices)
            if plain.get("selection") != key:
                current = selection.current
                box = "[x] " if current in selection.checked else ""
                out.append(f"❯ {box}{selection.choices[current] if current is not None else ''}\r\n")
            plain["selection"] = key
        else:
            plain["selection"] = None
        if store.mode == "input" and self._reading:
            text = store.input.text.replace("\n", "\r\n  ")
            shown = plain.get("input")
            if not plain.get("input_open"):
                out.append("❯ " + text)
            elif isinstance(shown, str) and text.startswith(shown):
                out.append(text[len(shown) :])
            elif shown != text:
                out.append("\r\n❯ " + text)
            plain["input"], plain["input_open"] = text, True
        elif plain.get("input_open"):
            out.append("\r\n")
            plain["input_open"] = False
        self._write("".join(out))

    def redraw(self, force: bool = False) -> None:
        """Bring the bottom area up to date (only what changed is written)."""
        if self._redraw_handle is not None:
            self._redraw_handle.cancel()
            self._redraw_handle = None
        if force:
            self.screen.forget(self.screen.cursor_row)
        self._flush()

    def schedule_redraw(self) -> None:
        """Redraw soon (coalesces bursts of streamed text)."""
        if self._redraw_handle is None and self._started and self._loop is not None:
            self._redraw_handle = self._loop.call_later(STREAM_FRAME, self.redraw)

    def print_lines(self, lines: list[str]) -> None:
        """Lines MAIA rendered itself into the log (the scrollback), above the bottom area; an empty line after."""
        self._end_stream()
        if self._after_nested:
            self._after_nested = False
            lines = ["", *lines]
        self._log.append(LogEntry(lines=[*lines, ""]))
        self._drain_log()

    def _drain_log(self, wait: bool = False) -> None:
        """Print the log entries that are ready, in order (a Markdown block still rendering holds the rest)."""
        ready: list[str] = []
        while self._log:
            entry = self._log[0]
            if entry.lines is None and entry.future is not None:
                if not entry.future.done() and not wait:
                    break
                entry.lines = self._rendered(entry)
            self._log.popleft()
            ready.extend(entry.lines or [])
        if ready:
            self._flush(ready)
        else:
            self.schedule_redraw()

    def _rendered(self, entry: LogEntry) -> list[str]:
        try:
            text = entry.future.result() if entry.future is not None else entry.source
        except Exception:  # a rendering failure shows the text as it is
            text = entry.source
        return [line.rstrip() for line in text.split("\n")] + [""]

    def _render_later(self, source: str, preview: list[str]) -> None:
        """A Markdown block for the log, rendered on a worker thread (the keys keep answering)."""
        width = self._width - 1
        entry = LogEntry(preview=preview, source=source, width=width)
        if self._renderer is None or self._loop is None:
            entry.lines = [*render_markdown(source, width).split("\n"), ""]
        else:
            entry.future = self._renderer.submit(render_markdown, source, width)
            entry.future.add_done_callback(self._rendered_elsewhere)
        self._log.append(entry)
        self._drain_log()

    def _rendered_elsewhere(self, _future: concurrent.futures.Future[str]) -> None:
        """On the worker thread: a block is ready; print what can be printed, on the event loop."""
        loop = self._loop
        if loop is not None and self._started:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._drain_log)

    def _emit(self, outputs: list[Block | Lines]) -> None:
        for output in outputs:
            if isinstance(output, Block):
                self._render_later(output.source, output.shown)
            else:
                self._log.append(LogEntry(lines=output.lines))
        self._drain_log()

    def _end_stream(self) -> None:
        """The answer ended (or something else must be printed): what is left of it goes to the log, in order."""
        live = self._live
        if live is None:
            return
        self._live = None
        self.store.live_text = ""
        self.last_answer = live.answer
        self._emit(live.finish())

    def message(self, kind: str, text: str) -> None:
        """A badge message: info, warn, fail, ask, ok."""
        self.print_lines(render.badge(kind, inert(text), self._width - 1))

    def info(self, text: str) -> None:
        """An INFO message."""
        self.message("info", text)

    def warn(self, text: str) -> None:
        """A WARN message."""
        self.message("warn", text)

    def fail(self, text: str) -> None:
        """A FAIL message."""
        self.message("fail", text)

    def show_user(self, text: str) -> None:
        """Echo the user's request in the log (a long paste as its token: it was sent whole)."""
        self.print_lines(render.user_lines(inert(self.store.collapse_pastes(text)), self._width - 1))

    def show_markdown(self, text: str) -> None:
        """A complete text rendered as Markdown (a summary, a session being replayed), off the event loop."""
        self._end_stream()
        self._render_later(inert(text), [])

    def show_output(
        self, text: str, is_error: bool = False, limit: int = render.SHELL_PREVIEW, max_lines: int = 0
    ) -> None:
        """A command's output preview (whole lines, indentation kept)."""
        shell = limit >= render.SHELL_PREVIEW
        lines = max_lines or (render.SHELL_PREVIEW_LINES if shell else render.TOOL_PREVIEW_LINES)
        self.print_lines(render.result_lines(inert(text), is_error, self._width - 1, limit, lines))

    def show_diff(self, text: str) -> None:
        """A unified diff, whole and coloured (``/diff``); inert like everything a file holds."""
        self.print_lines(render.approval_lines(inert(text), "diff", self._width - 1))

    def watch_command(self, command: str) -> AbstractContextManager[Callable[[bytes], None]]:
        """While a Bash or ``!`` command runs: a spinner, its elapsed time and its last lines above the status.

        Yields the function ``run_shell`` calls with each block of output.
        """
        return self.commands.watch(command)
