"""The only module that talks to the terminal: keys in, frames out, on the normal screen buffer.

Everything printed to the log stays in the terminal's scrollback; the bottom area (status, input
box, context bar) is redrawn in place, each redraw one synchronized-output frame, only when it changed.
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import os
import signal
import sys
import termios
from collections.abc import Callable
from typing import Any, TextIO

from maia.contracts import Approval, AskAnswer, ToolsProgress
from maia.i18n import _
from maia.signals import forget_signal, on_signal
from maia.ui import render
from maia.ui.keys import KeyDecoder
from maia.ui.markdown import render_markdown
from maia.ui.store import Answer, Chosen, EndOfInput, Event, History, Interrupt, Selection, Submit, UIStore

SYNC_START = "\x1b[?2026h"
SYNC_END = "\x1b[?2026l"
PASTE_ON = "\x1b[?2004h"
PASTE_OFF = "\x1b[?2004l"
KITTY_QUERY = "\x1b[?u"
KITTY_PUSH = "\x1b[>1u"
KITTY_POP = "\x1b[<u"
TICK = 0.1
ESC_DELAY = 0.05


class TerminalUI:
    """The chat's screen and keyboard; implements the AgentUI contract."""

    def __init__(
        self, *, stdin: TextIO | None = None, stdout: TextIO | None = None, history: History | None = None
    ) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.store = UIStore(history=history or History())
        self.decoder = KeyDecoder()
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._fd = self.stdin.fileno()
        self._saved_mode: list[Any] | None = None
        self._frame_height = 0
        self._cursor_row = 0
        self._last_frame: tuple[list[str], tuple[int, int] | None] | None = None
        self._width = 80
        self._height = 24
        self._tick = 0
        self._waiter: asyncio.Future[Event] | None = None
        self._question_lock = asyncio.Lock()
        self._ticker: asyncio.Task[None] | None = None
        self._esc_timer: asyncio.TimerHandle | None = None
        self._redraw_pending = False
        self._kitty = False
        self._started = False
        self.on_interrupt: Callable[[], None] | None = None
        self._events: collections.deque[Event] = collections.deque()
        self._gone = False
        self._live_base = 0
        self._live_chars = 0
        self._tools_status = ""

    # --- life cycle -------------------------------------------------------------------------------

    def _size(self) -> None:
        try:
            size = os.get_terminal_size(self.stdout.fileno())
            self._width, self._height = max(10, size.columns), max(5, size.lines)
        except (OSError, ValueError):
            self._width, self._height = 80, 24

    def start(self) -> None:
        """Enter key-by-key mode (Ctrl+C and Ctrl+S arrive as keys), bracketed paste, start reading."""
        loop = asyncio.get_running_loop()
        self._size()
        self._saved_mode = termios.tcgetattr(self._fd)
        mode = termios.tcgetattr(self._fd)
        mode[0] &= ~(termios.ICRNL | termios.IXON | termios.INLCR | termios.IGNCR)  # iflag: Enter stays \r
        mode[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG | termios.IEXTEN)  # lflag
        mode[6][termios.VMIN] = 1
        mode[6][termios.VTIME] = 0
        termios.tcsetattr(self._fd, termios.TCSADRAIN, mode)
        self._write(PASTE_ON + KITTY_QUERY)
        loop.add_reader(self._fd, self._on_readable)
        on_signal(signal.SIGWINCH, self._on_resize)
        self._ticker = loop.create_task(self._tick_loop())
        self._started = True
        self.redraw()

    def stop(self) -> None:
        """Hide the input box, give the terminal back as it was."""
        if not self._started:
            return
        self._started = False
        loop = asyncio.get_event_loop()
        loop.remove_reader(self._fd)
        forget_signal(signal.SIGWINCH)
        if self._ticker is not None:
            self._ticker.cancel()
        self._erase_frame()
        self._write((KITTY_POP if self._kitty else "") + PASTE_OFF + "\x1b[?25h")
        if self._saved_mode is not None:
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved_mode)

    # --- output -----------------------------------------------------------------------------------

    @property
    def width(self) -> int:
        """Columns of the terminal."""
        return self._width

    def _write(self, text: str) -> None:
        if self._gone:
            return
        try:
            self.stdout.write(text)
            self.stdout.flush()
        except OSError:  # the terminal went away (SIGHUP): the session is still saved
            self._gone = True

    def _erase_sequence(self) -> str:
        up = self._cursor_row
        return "\r" + (f"\x1b[{up}A" if up else "") + "\x1b[J"

    def _erase_frame(self) -> None:
        if self._frame_height:
            self._write(self._erase_sequence())
            self._frame_height = 0
            self._cursor_row = 0
            self._last_frame = None

    def _frame_text(self) -> tuple[str, list[str], tuple[int, int] | None]:
        frame = render.frame(self.store, self._width, self._height, self._tick)
        lines = frame.lines
        out = "\r\n".join(lines)
        if frame.cursor is None:
            out += "\x1b[?25l"
            row = len(lines) - 1
        else:
            row, column = frame.cursor
            up = len(lines) - 1 - row
            out += (f"\x1b[{up}A" if up else "") + "\r" + (f"\x1b[{column}C" if column else "")
            out += "\x1b[?25h"
        self._pending_cursor_row = row
        return out, lines, frame.cursor

    def redraw(self, force: bool = False) -> None:
        """Redraw the bottom area if it changed (one synchronized frame)."""
        if not self._started:
            return
        self._redraw_pending = False
        text, lines, cursor = self._frame_text()
        if not force and self._last_frame == (lines, cursor):
            return
        self._write(SYNC_START + self._erase_sequence() + text + SYNC_END)
        self._last_frame = (lines, cursor)
        self._frame_height = len(lines)
        self._cursor_row = self._pending_cursor_row

    def schedule_redraw(self) -> None:
        """Redraw soon (coalesces bursts of streamed text)."""
        if not self._redraw_pending and self._started:
            self._redraw_pending = True
            asyncio.get_running_loop().call_later(0.03, self.redraw)

    def print_lines(self, lines: list[str]) -> None:
        """Lines into the log (the scrollback), above the bottom area; an empty line after each message."""
        body = "\r\n".join([*lines, ""]) + "\r\n"
        if not self._started:
            self._write(body)
            return
        text, frame_lines, cursor = self._frame_text()
        self._write(SYNC_START + self._erase_sequence() + body + text + SYNC_END)
        self._last_frame = (frame_lines, cursor)
        self._frame_height = len(frame_lines)
        self._cursor_row = self._pending_cursor_row

    def message(self, kind: str, text: str) -> None:
        """A badge message: info, warn, fail, ask, ok."""
        self.print_lines(render.badge(kind, text, self._width - 1))

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
        """Echo the user's request in the log."""
        self.print_lines(render.user_lines(text, self._width - 1))

    def show_markdown(self, text: str) -> None:
        """A complete answer, rendered as Markdown."""
        rendered = render_markdown(text, self._width - 1)
        self.print_lines([line.rstrip() for line in rendered.split("\n")])

    def show_output(self, text: str, is_error: bool = False, limit: int = render.SHELL_PREVIEW) -> None:
        """A command's output preview."""
        self.print_lines(render.result_lines(text, is_error, self._width - 1, limit))

    def set_status(self, text: str) -> None:
        """The status line above the input box ("" = empty)."""
        self.store.status = text
        self.redraw()

    def set_context(self, tokens: int | None = None, maximum: int | None = -1) -> None:
        """Update the context bar."""
        if tokens is not None:
            self.store.context_tokens = tokens
        if maximum != -1:
            self.store.context_max = maximum
        self.redraw()

    def set_busy(self, busy: bool, status: str = "") -> None:
        """Grey the input box while a turn runs."""
        self.store.mode = "busy" if busy else "input"
        self.store.status = status
        self.redraw()

    # --- input ------------------------------------------------------------------------------------

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, 65536)
        except OSError:
            return
        if not data:
            self._dispatch_event(EndOfInput())
            return
        keys = self.decoder.feed(self._utf8.decode(data))
        self._handle_keys(keys)
        if self.decoder.pending:
            if self._esc_timer is not None:
                self._esc_timer.cancel()
            self._esc_timer = asyncio.get_running_loop().call_later(ESC_DELAY, self._flush_escape)

    def _flush_escape(self) -> None:
        self._handle_keys(self.decoder.flush())

    def _handle_keys(self, keys: list[Any]) -> None:
        for key in keys:
            if key.name == "kitty_flags":
                if not self._kitty:
                    self._kitty = True
                    self._write(KITTY_PUSH)
                continue
            event = self.store.handle(key)
            if event is not None:
                self._dispatch_event(event)
        self.redraw()

    def _dispatch_event(self, event: Event) -> None:
        if isinstance(event, Interrupt) and self.store.mode == "busy":
            if self.on_interrupt is not None:
                self.on_interrupt()
            return
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(event)
        else:
            self._events.append(event)  # typed ahead (e.g. while the context is being counted)

    async def _wait_event(self) -> Event:
        if self._events:
            return self._events.popleft()
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            return await self._waiter
        finally:
            self._waiter = None

    async def read_input(self) -> Submit | Interrupt | EndOfInput:
        """Wait for the user's next input (Enter), Ctrl+C or Ctrl+D."""
        self.store.mode = "input"
        self.store.status = ""
        self.redraw()
        while True:
            event = await self._wait_event()
            if isinstance(event, Submit | Interrupt | EndOfInput):
                return event

    async def _question(self, message: str, stop_allowed: bool) -> AskAnswer:
        async with self._question_lock:  # one question at a time (parallel tools, sub-agents)
            previous = self.store.mode
            self.store.mode = "ask" if stop_allowed else "confirm"
            self.store.question = message
            self.store.stop_allowed = stop_allowed
            self.redraw()
            try:
                while True:
                    event = await self._wait_event()
                    if isinstance(event, Answer):
                        break
                    if isinstance(event, Interrupt):
                        event = Answer("no")
                        break
            finally:
                self.store.mode = previous
                self.store.question = ""
            label = {"yes": _("yes"), "no": _("no"), "stop": _("stop")}[event.value]
            self.print_lines([f"{render.GREEN_BRIGHT}◆{render.RESET} {message}: {label}"])
            return event.value

    async def confirm(self, message: str) -> bool:
        """A yes/no question in the input box (y/o = yes; n/Esc = no; Enter alone is ignored)."""
        return await self._question(message, False) == "yes"

    async def ask(self, message: str, approval: Approval | None = None) -> AskAnswer:
        """A permission question: yes, no or stop."""
        return await self._question(message, True)

    async def select(self, title: str, choices: list[str], multi: bool = False) -> Chosen:
        """A list in the input box (10-line window): one choice, or several with Space and Delete."""
        async with self._question_lock:
            previous = self.store.mode
            self.store.mode = "multiselect" if multi else "select"
            self.store.selection = Selection(title, choices)
            self.redraw()
            try:
                while True:
                    event = await self._wait_event()
                    if isinstance(event, Chosen):
                        return event
                    if isinstance(event, Interrupt):
                        return Chosen()
            finally:
                self.store.mode = previous
                self.store.selection = None
                self.redraw()

    # --- AgentUI ----------------------------------------------------------------------------------

    def on_thinking(self, thinking: bool) -> None:
        """The model is working: spinner "Thinking"."""
        self.store.status = _("Thinking") if thinking else self._tools_status
        if thinking:
            self._live_base, self._live_chars = self.store.context_tokens, 0
        self.redraw()

    def on_text(self, text: str) -> None:
        """Stream the answer as plain text in the live area; the bar follows with an estimate (§13.3)."""
        self.store.live_text += text
        self._live_chars += len(text)
        # a low estimate (about 5 characters a token): the exact count replaces it when the answer ends
        self.store.context_tokens = max(self.store.context_tokens, self._live_base + self._live_chars // 5)
        self.schedule_redraw()

    def on_text_end(self) -> None:
        """The answer is complete: show it as Markdown in the log."""
        text, self.store.live_text = self.store.live_text, ""
        if text.strip():
            self.show_markdown(text)
        else:
            self.redraw()

    def on_reasoning(self, text: str) -> None:
        """Reasoning is not shown; the spinner says the model is thinking."""
        if self.store.status != _("Thinking (reasoning)"):
            self.store.status = _("Thinking (reasoning)")
            self.schedule_redraw()

    def on_tool_call(self, name: str, summary: str) -> None:
        """A tool call in the log."""
        if self.store.live_text:
            self.on_text_end()
        self.print_lines(render.tool_call_lines(name, summary, self._width - 1))

    def on_tool_result(self, name: str, output: str, is_error: bool) -> None:
        """A tool result preview (600 characters)."""
        self.print_lines(render.result_lines(output, is_error, self._width - 1))

    def on_warning(self, message: str) -> None:
        """A warning from the agent loop."""
        self.warn(message)

    def on_context_usage(self, tokens: int) -> None:
        """The context bar follows the conversation."""
        self.set_context(tokens)

    def on_tools_running(self, progress: ToolsProgress | None) -> None:
        """Parallel tools: "n/total done"."""
        if progress is None:
            self._tools_status = ""
        else:
            self._tools_status = _("Parallel tools: {done}/{total} done ({names})").format(
                done=progress.done, total=len(progress.names), names=", ".join(dict.fromkeys(progress.names))
            )
        self.store.status = self._tools_status
        self.redraw()

    # --- timers and resize -------------------------------------------------------------------------

    async def _tick_loop(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            self._tick += 1
            if self.store.status or self.store.mode == "input":
                self.redraw()

    def _on_resize(self) -> None:
        old_width = self._width
        self._size()
        if self._last_frame is not None and self._width < old_width:
            # lines drawn for the old width may now wrap: count the rows they really take
            rows = sum(
                max(1, -(-render.visible_width(line) // self._width))
                for line in self._last_frame[0][: self._cursor_row + 1]
            )
            self._cursor_row = max(self._cursor_row, rows - 1)
        self.redraw(force=True)
