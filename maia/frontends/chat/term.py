"""The only module that talks to the terminal: keys in, frames out, on the normal screen buffer, through blessed.

Everything printed to the log stays in the terminal's scrollback; the bottom area (live answer
rows, status line, input box, context bar) is redrawn in place, only the cells that changed, each
redraw one synchronized-output frame where the terminal supports it. All text given to this class
from outside (the model, tools, files, servers, session files, the user) is made inert first
(:func:`maia.frontends.terminal.inert.inert`); only :meth:`TerminalUI.print_lines` takes lines MAIA rendered itself.
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import concurrent.futures
import contextlib
import os
import signal
import sys
import termios
import time
import tty
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal, TextIO

from maia.core.contracts import Approval, AskAnswer, ToolsProgress
from maia.core.inert import paste_safe
from maia.core.signals import forget_signal, on_signal
from maia.frontends.chat import render
from maia.frontends.chat.live import Block, Lines, LiveAnswer
from maia.frontends.chat.markdown import code_blocks, render_markdown
from maia.frontends.chat.store import (
    Action,
    Answer,
    Chosen,
    EndOfInput,
    Event,
    History,
    Interrupt,
    Question,
    Selection,
    Submit,
    UIStore,
)
from maia.frontends.terminal import metrics, style
from maia.frontends.terminal.inert import inert, inert_line
from maia.frontends.terminal.keys import PASTE, Key, KeyReader
from maia.frontends.terminal.screen import Caps, Screen
from maia.frontends.terminal.termcaps import QUERY_TIMEOUT, Capabilities, create_terminal, notification, probe
from maia.i18n import _, ngettext

if TYPE_CHECKING:
    from blessed import Terminal

    from maia.frontends.terminal.clipboard import CopyReport

BUSY_TICK = 0.125  # the "Thinking" spinner
IDLE_TICK = 0.5  # the input box's spinner: at most twice a second while nothing happens
STREAM_FRAME = 0.03  # streamed text is drawn at most this often
ANSWER_GUARD = 0.4  # a key this soon after a question appears, or after the previous key, never answers it
DOUBLE_CTRL_C = 1.5  # a Ctrl+C this soon after one that interrupted a turn does not quit
HIDDEN_REASONING = 3  # Ctrl+O shows the reasoning of this many earlier model calls, when it was hidden
HIDDEN_REASONING_CHARS = 4000  # of each, its end
APPLIED_DIFF_LINES = 30  # an edit made without a question shows this much of its diff
QUIT_WINDOW = 2.0  # at an idle prompt, a first Ctrl+C only says how to quit; a second one this soon quits
NESTED_LINES = 12  # a sub-agent's tool calls shown under the Agent call, per model call; the rest are counted
WAIT_NOTICE = 5  # seconds without a word from the model before the status says it is waited for
PROGRESS_AFTER = 0.5  # a command shows its progress once it has run this long
PROGRESS_LINES = 4  # last lines of a running command's output shown
ANSWERED_DETAIL = 12  # rows of a question's detail kept in the log with its answer
ThemeSetting = Literal["auto", "dark", "light"]
State = Literal["idle", "thinking", "approval"]


@dataclass(slots=True)
class _Watch:
    """A command running: its text, when it started, the end of its output."""

    command: str
    started: float
    tail: str = ""
    decoder: codecs.IncrementalDecoder = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace"))

    def feed(self, data: bytes) -> None:
        """Keep the last few kilobytes of output."""
        self.tail = (self.tail + self.decoder.decode(data))[-4096:]

    def last_lines(self, count: int) -> list[str]:
        """The last ``count`` non-empty lines (a progress bar's carriage returns: its last state)."""
        lines = [line.rsplit("\r", 1)[-1] for line in self.tail.split("\n")]
        return [line for line in lines if line.strip()][-count:]


@dataclass(slots=True)
class _Entry:
    """Lines for the log, in order; a Markdown block may still be rendering (off the event loop)."""

    lines: list[str] | None = None
    future: concurrent.futures.Future[str] | None = None
    preview: list[str] = field(default_factory=list)
    source: str = ""
    width: int = 80


class TerminalUI:
    """The chat's screen and keyboard; implements the AgentUI contract."""

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
        self.reader: KeyReader | None = None
        self.screen = Screen()
        self._fd = self.stdin.fileno()
        self._width = 80
        self._height = 24
        self._tick = 0
        self._waiter: asyncio.Future[Event] | None = None
        self._question_lock = asyncio.Lock()
        self._ticker: asyncio.Task[None] | None = None
        self._esc_timer: asyncio.TimerHandle | None = None
        self._redraw_handle: asyncio.TimerHandle | None = None
        self._modes = contextlib.ExitStack()
        self._started = False
        self._gone = False
        self.on_interrupt: Callable[[], None] | None = None
        self._events: collections.deque[Event] = collections.deque()
        self._live: LiveAnswer | None = None
        self._live_base = 0
        self._live_chars = 0
        self._tools_status = ""
        self._nested: dict[str, int] = {}  # lines shown so far per sub-agent in this turn (bounded)
        self._after_nested = False  # the log ends with a nested line: the next block is set apart by a blank
        self._log: collections.deque[_Entry] = collections.deque()
        self._renderer: concurrent.futures.ThreadPoolExecutor | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._focused = True
        self._state: State = "idle"
        self._title = ""
        self.session_name: Callable[[], str | None] | None = None
        self.model_name: Callable[[], str | None] | None = None  # the model in use, for the bar
        self.last_answer = ""
        self.launch: Path | None = None
        self._plain_state: dict[str, object] = {}
        self._reading = False
        self.closed = False  # no more keys will come (the terminal closed, or MAIA is ending)
        self.on_cycle_mode: Callable[[], None] | None = None  # Shift+Tab
        self.show_reasoning = False  # Ctrl+O
        self._reasoning: list[str] = []
        self._reasoning_shown = 0
        self._hidden_reasoning: list[str] = []  # reasoning that streamed while hidden: Ctrl+O shows it later
        self._asked_at = 0.0
        self._typed_at = 0.0  # when text was last typed into the draft
        self._guard = False  # the open question appeared during a turn: keys typed ahead must not answer it
        self._engaged = False  # a key went to the open question
        self._interrupted_at = -DOUBLE_CTRL_C
        self.copy_report: CopyReport | None = None  # where the last /copy went
        self._quit_armed_at = -QUIT_WINDOW
        self._waiting_since: float | None = None
        self._showing_wait = False
        self._approval: Approval | None = None
        self._watches: list[_Watch] = []

    # --- life cycle -------------------------------------------------------------------------------

    def _size(self) -> None:
        try:
            size = os.get_terminal_size(self.stdout.fileno())
            self._width, self._height = max(10, size.columns), max(5, size.lines)
        except (OSError, ValueError):
            self._width, self._height = 80, 24

    def start(self) -> None:
        """blessed's Terminal, key-by-key mode (Ctrl+C, Ctrl+S arrive as keys), paste, focus, the first frame."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        term = create_terminal(self.stdout)
        self.term = term
        metrics.use_terminal(term)
        self._size()
        try:
            self._modes.enter_context(term.raw())
            self.caps = probe(term)
            theme = self.theme if self.theme != "auto" else (self.caps.scheme or style.theme_from_env() or "dark")
            style.configure(term, theme, style.color_depth(term), styled=self.caps.redraw)  # type: ignore[arg-type]
            self.screen = Screen(caps=Caps.of(term) if self.caps.redraw else Caps())
            self._enter_modes(term)
        except BaseException:
            self._modes.close()  # never leave the terminal in raw mode
            raise
        self.reader = KeyReader(term)
        typed = term.flushinp()  # keys typed while the terminal was being asked
        loop.add_reader(self._fd, self._on_readable)
        on_signal(signal.SIGWINCH, self._on_resize)
        if hasattr(signal, "SIGTSTP"):
            on_signal(signal.SIGTSTP, self.suspend)
            on_signal(signal.SIGCONT, self._on_continue)
        self._ticker = loop.create_task(self._tick_loop())
        self._renderer = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="maia-markdown")
        self._started = True
        self._set_title()
        if typed:  # the first frame is drawn with the first log lines (the banner): no frame above it
            self._events_from(self.reader.feed(typed))

    def _enter_modes(self, term: Terminal) -> None:
        from blessed.dec_modes import DecPrivateMode

        if not self.caps.redraw:
            return
        if self.caps.paste_reported:
            self._modes.enter_context(term.bracketed_paste(timeout=0))
        else:
            # terminals that do not answer mode reports (tmux, Konsole) still bracket pastes: without
            # it each line of a paste would be sent as a request
            term._dec_mode_set_enabled(DecPrivateMode.BRACKETED_PASTE)
            self._modes.callback(term._dec_mode_set_disabled, DecPrivateMode.BRACKETED_PASTE)
        if self.caps.kitty:
            # blessed asks the flags again to restore them on exit: this terminal answers, wait for it
            self._modes.enter_context(term.enable_kitty_keyboard(disambiguate=True, timeout=QUERY_TIMEOUT))
        if self.caps.focus:
            self._modes.enter_context(term.focus_events(timeout=0))
        if self.caps.resize:
            self._modes.enter_context(term.notify_on_resize(timeout=0))
        self._modes.enter_context(term.window_title("MAIA"))

    def stop(self) -> None:
        """Hide the input box, give the terminal back as it was."""
        if not self._started:
            return
        self._end_stream()
        self._drain_log(wait=True)
        self._started = False
        loop = asyncio.get_event_loop()
        loop.remove_reader(self._fd)
        forget_signal(signal.SIGWINCH)
        if hasattr(signal, "SIGTSTP"):
            forget_signal(signal.SIGTSTP)
            forget_signal(signal.SIGCONT)
        if self._ticker is not None:
            self._ticker.cancel()
        if self._redraw_handle is not None:
            self._redraw_handle.cancel()
        if self._esc_timer is not None:
            self._esc_timer.cancel()
        self._write(self.screen.erase())
        with contextlib.suppress(OSError):  # the terminal went away
            self._modes.close()
        if self._renderer is not None:
            self._renderer.shutdown(wait=False)

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
        self.store.progress_rows = self._progress_rows() if self._watches else []
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
        self._log.append(_Entry(lines=[*lines, ""]))
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

    def _rendered(self, entry: _Entry) -> list[str]:
        try:
            text = entry.future.result() if entry.future is not None else entry.source
        except Exception:  # a rendering failure shows the text as it is
            text = entry.source
        return [line.rstrip() for line in text.split("\n")] + [""]

    def _render_later(self, source: str, preview: list[str]) -> None:
        """A Markdown block for the log, rendered on a worker thread (the keys keep answering)."""
        width = self._width - 1
        entry = _Entry(preview=preview, source=source, width=width)
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

    def set_status(self, text: str) -> None:
        """The status line above the input box ("" = empty)."""
        self.store.status = inert_line(text)
        self.redraw()

    def set_context(self, tokens: int | None = None, maximum: int | None = -1, estimated: bool | None = None) -> None:
        """Update the context bar (``estimated``: a rough count until the tokenizer is ready)."""
        if tokens is not None:
            self.store.context_tokens = tokens
        if maximum != -1:
            self.store.context_max = maximum
        if estimated is not None:
            self.store.context_estimated = estimated
        self.redraw()

    def set_approval_mode(self, mode: str) -> None:
        """The approval mode shown on the bar (nothing for ``ask``)."""
        self.store.approval_mode = mode
        self.redraw()

    def set_marks(self, marks: str) -> None:
        """Short warnings at the left of the bar (an MCP server down); "" for none."""
        self.store.marks = inert_line(marks)
        self.redraw()

    def set_busy(self, busy: bool, status: str = "") -> None:
        """Grey the input box while a turn runs."""
        was_busy = self.store.mode == "busy"
        if busy and not was_busy:
            self._nested.clear()
        self.store.mode = "busy" if busy else "input"
        self.store.status = inert_line(status)
        self._set_state("thinking" if busy else "idle")
        if was_busy and not busy:
            self._waiting_since = None
            self._notify(_("Your turn"), _("MAIA has finished."))
        self.redraw()

    def requeue(self) -> None:
        """After an interruption: the queued messages go back into the box (not sent), before the draft."""
        store = self.store
        if store.queued:
            parts = [*store.queued, *([store.input.text] if store.input.text.strip() else [])]
            store.queued.clear()
            store.input.set("\n".join(parts))
            self.redraw()

    # --- input ------------------------------------------------------------------------------------

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # end of file or EIO: the terminal is gone
            if self._loop is not None:
                self._loop.remove_reader(self._fd)
            self.close_input()
            return
        assert self.reader is not None
        self._handle_keys(self.reader.feed(data))
        self._arm_escape()

    def close_input(self) -> None:
        """No more keys will come (the terminal closed, or a signal asks MAIA to end): whatever waits for the
        user is cancelled (a question is refused and stops the turn, a list is cancelled, the prompt ends)."""
        self.closed = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(EndOfInput())

    def _arm_escape(self) -> None:
        if self._esc_timer is not None:
            self._esc_timer.cancel()
            self._esc_timer = None
        delay = self.reader.delay if self.reader is not None else None
        if delay is not None and self._loop is not None:
            self._esc_timer = self._loop.call_later(delay, self._flush_escape)

    def _flush_escape(self) -> None:
        self._esc_timer = None
        if self.reader is not None:
            self._handle_keys(self.reader.flush())

    def _events_from(self, keys: list[Key]) -> None:
        for key in keys:
            event = self.store.handle(key)
            if event is not None:
                self._dispatch_event(event)

    def _guarded(self, key: Key, now: float) -> bool:
        """A question that pops up while a turn runs: a key that arrives less than ``ANSWER_GUARD`` after it
        appeared, or while the user is still typing (less than that after the previous typed key), never
        answers it: it was typed for the draft. Once a key went to the question (``a``, scrolling), the user
        is answering it: no guard. Ctrl+C always reaches it (it refuses and stops)."""
        if self.store.mode not in ("ask", "confirm") or not self._guard or key.name == "KEY_CTRL_C" or self._engaged:
            return False
        return now - self._asked_at < ANSWER_GUARD or now - self._typed_at < ANSWER_GUARD

    def _handle_keys(self, keys: list[Key]) -> None:
        now = time.monotonic()
        for key in keys:
            if key.name in ("FOCUS_IN", "FOCUS_OUT"):
                self._focused = key.name == "FOCUS_IN"
                continue
            if key.name == "RESIZE_EVENT":
                self._on_resize()
                continue
            guarded = self._guarded(key, now)
            if (key.is_text or key.name == PASTE) and (guarded or self.store.mode in ("input", "busy")):
                self._typed_at = now
            if guarded:
                self.store.type_ahead(key)
                continue
            asking = self.store.mode in ("ask", "confirm")
            before = self._question_state()
            event = self.store.handle(key)
            if asking and event is None and self._question_state() == before:
                # the key did nothing to the question ("p" of "please"): typed for the draft, and the
                # user is still typing, so the next keys are guarded too
                if self._guard and (key.is_text or key.name == PASTE):
                    self.store.type_ahead(key)
                    self._typed_at = now
            elif asking:
                self._engaged = True  # it answered, opened the rules (a) or scrolled: the user is answering
            if event is not None:
                self._dispatch_event(event)
        self.redraw()

    def _question_state(self) -> tuple[str, int] | None:
        """What a key can change in the open question: its stage (``a`` opens the rules) and its scroll."""
        question = self.store.question
        return None if question is None else (question.stage, question.offset)

    def _dispatch_event(self, event: Event) -> None:
        if isinstance(event, Action):
            self._act(event)
            return
        if isinstance(event, Interrupt) and self.store.mode == "busy":
            self._interrupted_at = time.monotonic()
            if self.on_interrupt is not None:
                self.on_interrupt()
            return
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(event)
        else:
            self._events.append(event)  # typed ahead (e.g. while the chat is still starting)

    def _act(self, action: Action) -> None:
        """Keys that act at once: Shift+Tab, Ctrl+O, Ctrl+L, Ctrl+Z."""
        if action.name == "mode":
            if self.on_cycle_mode is not None:
                self.on_cycle_mode()
        elif action.name == "reasoning":
            self.toggle_reasoning()
        elif action.name == "redraw":
            self.redraw(force=True)
        elif action.name == "suspend":
            self.suspend()

    async def _wait_event(self, kinds: tuple[type, ...]) -> Event:
        """The next event of one of ``kinds`` (others typed ahead stay queued); EndOfInput once input is closed."""
        for event in list(self._events):
            if isinstance(event, kinds):
                self._events.remove(event)
                return event
        if self.closed:
            return EndOfInput()
        while True:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                event = await self._waiter
            finally:
                self._waiter = None
            if isinstance(event, (*kinds, EndOfInput)):
                return event
            self._events.append(event)

    async def read_input(self) -> Submit | Interrupt | EndOfInput:
        """Wait for the user's next input (Enter), Ctrl+C or Ctrl+D; a message queued during the turn first."""
        self.store.mode = "input"
        self.store.status = ""
        self._set_state("idle")
        if self.store.queued:
            text = self.store.queued.pop(0)
            self.redraw()
            return Submit(text)
        self._reading = True
        self.redraw()
        try:
            while True:
                event = await self._wait_event((Submit, Interrupt, EndOfInput))
                if isinstance(event, Interrupt) and time.monotonic() - self._interrupted_at < DOUBLE_CTRL_C:
                    continue  # the second Ctrl+C of an interruption: not a request to quit
                if isinstance(event, Interrupt) and time.monotonic() - self._quit_armed_at >= QUIT_WINDOW:
                    # one stray Ctrl+C must not end the session: say how, and quit on a second one
                    self._quit_armed_at = time.monotonic()
                    hint = _("Press Ctrl+C again to quit (or Ctrl+D).")
                    self.store.status = hint
                    self.redraw()
                    asyncio.get_running_loop().call_later(QUIT_WINDOW, self._clear_status, hint)
                    continue
                assert isinstance(event, Submit | Interrupt | EndOfInput)
                return event
        finally:
            self._reading = False
            self.redraw()

    def _clear_status(self, text: str) -> None:
        """Take ``text`` off the status line if it is still what the line says."""
        if self.store.status == text:
            self.store.status = ""
            self.redraw()

    def _question_room(self) -> int:
        return max(1, self._height - 1 - 4)

    def _detail_rows(self, approval: Approval | None) -> list[str]:
        detail = getattr(approval, "detail", None)
        if not isinstance(detail, str) or not detail:
            return []
        kind = getattr(approval, "detail_kind", None)
        return render.approval_lines(inert(detail), kind if isinstance(kind, str) else None, self._width - 1)

    async def _question(self, message: str, stop_allowed: bool, approval: Approval | None = None) -> AskAnswer:
        message = inert(message)
        async with self._question_lock:  # one question at a time (parallel tools, sub-agents)
            self._end_stream()
            previous = self.store.mode
            reason = getattr(approval, "reason", None)
            rules = getattr(approval, "rules", ()) or ()
            question = Question(
                message,
                stop_allowed,
                detail=self._detail_rows(approval),
                reason=inert(reason) if isinstance(reason, str) and reason else "",
                rules=tuple(inert_line(str(r)) for r in rules) if stop_allowed else (),
            )
            if not question.detail:
                head = render.badge("ask", f"{message} {render.choices_text(question)}", self._width - 1)
                if len(head) > self._question_room() - 2:
                    self.print_lines(render.badge("ask", message, self._width - 1))  # all of it, in the scrollback
            for stale in [e for e in self._events if isinstance(e, Answer | Chosen)]:
                self._events.remove(stale)  # keys from before the question never answer it
            self._approval = approval
            self.store.mode = "ask" if stop_allowed else "confirm"
            self.store.question = question
            self._asked_at = time.monotonic()
            self._guard = previous == "busy"
            self._engaged = False
            previous_state = self._state
            self._set_state("approval")
            self._notify(_("Approval needed"), inert_line(message)[:200])
            self.redraw()
            try:
                event = await self._wait_event((Answer, Interrupt))
            finally:
                self.store.mode = previous
                self.store.question = None
                self._approval = None
                self._set_state(previous_state)
            # the terminal closed, or MAIA is asked to end: refused, and the turn stops
            value: AskAnswer = event.value if isinstance(event, Answer) else "stop" if stop_allowed else "no"
            self._answered(question, value)
            return value

    def _answered(self, question: Question, value: AskAnswer) -> None:
        """The question and its answer in the log (with the start of what it was about)."""
        p = style.palette()
        labels = {
            "yes": _("yes"),
            "no": _("no"),
            "stop": _("stop"),
            "always": _("yes, always in this project ({rules})"),
            "always-session": _("yes, always in this session ({rules})"),
        }
        label = labels[value].format(rules=", ".join(question.rules))
        lines = list(question.detail[:ANSWERED_DETAIL])
        if len(question.detail) > ANSWERED_DETAIL:
            more = len(question.detail) - ANSWERED_DETAIL
            lines.append(f"  {p.dim}{_('… [{count} more lines]').format(count=more)}{p.reset}")
        body = metrics.wrap(f"{question.text}: {label}", self._width - 3)
        colour = p.green if value in ("yes", "always", "always-session") else p.error
        self.print_lines([*lines, f"{colour}◆{p.reset} {body[0]}", *[f"  {line}" for line in body[1:]]])

    async def confirm(self, message: str) -> bool:
        """A yes/no question in the input box (y/o = yes; n/Esc = no; Enter alone is ignored)."""
        return await self._question(message, False) == "yes"

    async def ask(self, message: str, approval: Approval | None = None) -> AskAnswer:
        """A permission question: yes, no, stop, or always (this project or this session) when the approval
        offers rules; it shows the exact text it is given, inert.

        ``approval`` (the application layer's ``Approval``: ``detail``, ``detail_kind``, ``reason``,
        ``rules``) puts the whole command or diff in the question, scrollable, with the engine's doubt.
        """
        return await self._question(message, True, approval)

    async def select(
        self, title: str, choices: list[str], multi: bool = False, *, initial: int = 0, filterable: bool = False
    ) -> Chosen:
        """A list in the input box (10-line window): one choice, or several with Space and Enter; typing
        filters a ``filterable`` list; ``initial`` is highlighted first."""
        async with self._question_lock:
            self._end_stream()
            previous = self.store.mode
            self.store.mode = "multiselect" if multi else "select"
            self.store.selection = Selection(
                inert_line(title), [inert_line(c) for c in choices], index=initial, filterable=filterable
            )
            self.redraw()
            try:
                event = await self._wait_event((Chosen, Interrupt))
                return event if isinstance(event, Chosen) else Chosen()
            finally:
                self.store.mode = previous
                self.store.selection = None
                self.redraw()

    # --- AgentUI ----------------------------------------------------------------------------------

    def on_thinking(self, thinking: bool) -> None:
        """The model is working: spinner "Thinking" (after a few silent seconds, "Waiting for the model (N s)")."""
        self.store.status = _("Thinking") if thinking else self._tools_status
        if thinking:
            self._nested.clear()  # a new model call: the sub-agents of the last one are done
        self._waiting_since = time.monotonic() if thinking else None
        self._showing_wait = False
        self._keep_hidden_reasoning()
        self._reasoning.clear()
        self._reasoning_shown = 0
        if thinking:
            self._live_base, self._live_chars = self.store.context_tokens, 0
        self._set_title()
        self.redraw()

    def _heard_from_model(self) -> None:
        """Something arrived from the model: it is not silent any more."""
        self._waiting_since = None
        if self._showing_wait:
            self._showing_wait = False
            self.store.status = _("Thinking")
            self._set_title()

    def _waiting_label(self, seconds: int) -> str:
        return _("Waiting for the model ({seconds} s)").format(seconds=seconds)

    def _waiting_seconds(self) -> int | None:
        """Seconds without a word from the model, once there have been ``WAIT_NOTICE`` of them."""
        if self._waiting_since is None or self.store.mode != "busy":
            return None
        seconds = int(time.monotonic() - self._waiting_since)
        return seconds if seconds >= WAIT_NOTICE else None

    def _live_room(self) -> int:
        if not self.caps.redraw:
            return 1  # nothing is redrawn: each line goes to the log as soon as it is complete
        return max(3, self._height - 1 - 6)

    def on_text(self, text: str) -> None:
        """Stream the answer: finished blocks go to the log, the rest is live; the bar follows (§13.3)."""
        if not text:
            return
        self._heard_from_model()
        self._flush_reasoning()
        if self._live is None:
            self._live = LiveAnswer(self._width - 1, self._live_room())
        self.store.live_text = text  # non-empty while an answer streams
        self._live_chars += len(text)
        # a low estimate (about 5 characters a token): the exact count replaces it when the answer ends
        self.store.context_tokens = max(self.store.context_tokens, self._live_base + self._live_chars // 5)
        self._emit(self._live.feed(text))
        self.schedule_redraw()

    def _emit(self, outputs: list[Block | Lines]) -> None:
        for output in outputs:
            if isinstance(output, Block):
                self._render_later(output.source, output.shown)
            else:
                self._log.append(_Entry(lines=output.lines))
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

    def on_text_end(self) -> None:
        """The answer is complete: what is left is rendered as Markdown into the log."""
        self._flush_reasoning()
        self._end_stream()
        self.redraw()

    def on_reasoning(self, text: str) -> None:
        """The model's reasoning: the spinner says so; shown dim in the log while Ctrl+O has it on."""
        self._heard_from_model()
        self._reasoning.append(text)
        if self.show_reasoning:
            self._print_reasoning(final=False)
        label = _("Thinking (reasoning)") if self.show_reasoning else _("Thinking (reasoning · Ctrl+O: show)")
        if self.store.status != label:
            self.store.status = label
            self.schedule_redraw()

    def _print_reasoning(self, final: bool) -> None:
        """The complete lines of reasoning not printed yet (all of it when ``final``), dim, inert."""
        text = "".join(self._reasoning)
        end = len(text) if final else text.rfind("\n") + 1
        if end <= self._reasoning_shown:
            return
        chunk = text[self._reasoning_shown : end]
        self._reasoning_shown = end
        p = style.palette()
        lines: list[str] = []
        for raw in inert(chunk).rstrip("\n").split("\n"):
            lines.extend(f"{p.dim}  {row}{p.reset}" for row in (metrics.wrap(raw, self._width - 3) or [""]))
        if lines:
            self._end_stream()
            self._log.append(_Entry(lines=lines))
            self._drain_log()

    def _keep_hidden_reasoning(self) -> None:
        """Reasoning that ends unseen is kept (the last few, each cut to its end) for a later Ctrl+O."""
        if not self.show_reasoning and self._reasoning:
            text = "".join(self._reasoning).strip()
            if text:
                self._hidden_reasoning = [*self._hidden_reasoning, text[-HIDDEN_REASONING_CHARS:]][-HIDDEN_REASONING:]

    def _flush_reasoning(self) -> None:
        """The answer starts (or a tool is called): the reasoning's last, unfinished line is printed too."""
        if self.show_reasoning and self._reasoning:
            self._print_reasoning(final=True)
            self._log.append(_Entry(lines=[""]))
            self._drain_log()
        self._keep_hidden_reasoning()
        self._reasoning.clear()
        self._reasoning_shown = 0

    def toggle_reasoning(self) -> None:
        """Ctrl+O: show or hide the model's reasoning (what it reasoned so far in this answer included)."""
        self.show_reasoning = not self.show_reasoning
        self.info(
            _("Reasoning shown, dim (Ctrl+O hides it).") if self.show_reasoning else _("Reasoning hidden (Ctrl+O).")
        )
        if self.show_reasoning and self._hidden_reasoning:
            # what the model reasoned earlier, while it was hidden: shown now, oldest first
            p = style.palette()
            lines = [f"{p.dim}{_('Earlier reasoning:')}{p.reset}"]
            for text in self._hidden_reasoning:
                for raw in inert(text).split("\n"):
                    lines.extend(f"{p.dim}  {row}{p.reset}" for row in (metrics.wrap(raw, self._width - 3) or [""]))
                lines.append("")
            self._hidden_reasoning = []
            self._end_stream()
            self._log.append(_Entry(lines=lines))
            self._drain_log()
        if self.show_reasoning and self._reasoning:
            self._print_reasoning(final=False)

    def on_tool_call(self, name: str, summary: str) -> None:
        """A tool call in the log; a file path is a hyperlink where the terminal shows them."""
        self._heard_from_model()
        self._flush_reasoning()
        self._end_stream()
        summary = inert(summary)
        link = self._file_link(name, summary)
        self.print_lines(render.tool_call_lines(inert_line(name), summary, self._width - 1, link))

    def on_subagent_tool(self, agent: str, phase: str, name: str, summary: str, is_error: bool) -> None:
        """A sub-agent's tool call, one line nested under the Agent call (an error result too), inert; past
        ``NESTED_LINES`` for one sub-agent, only the status line counts the rest (its end says the total)."""
        if phase != "call" and not is_error:
            return
        agent, name, summary = inert_line(agent), inert_line(name), inert_line(summary)
        shown = self._nested.get(agent, 0) + 1
        self._nested[agent] = shown
        if shown > NESTED_LINES:
            if phase == "call":
                more = shown - NESTED_LINES
                self.store.status = ngettext(
                    "Sub-agent {name}: {count} more tool call (last: {tool})",
                    "Sub-agent {name}: {count} more tool calls (last: {tool})",
                    more,
                ).format(name=agent, count=more, tool=name)
                self.schedule_redraw()
            return
        if shown == NESTED_LINES:
            p = style.palette()
            line = f"  {p.dim}⎿ {agent} · {_('… the next calls are counted on the status line')}{p.reset}"
        else:
            line = render.nested_tool_line(agent, name, summary, self._width - 1, error=phase != "call")
        self._end_stream()
        self._log.append(_Entry(lines=[render.fit(line, self._width - 1)]))
        self._after_nested = True
        self._drain_log()

    def _file_link(self, name: str, summary: str) -> str | None:
        from maia.core.registry import traits_of

        if not self.caps.hyperlinks or not traits_of(name).shows_file:
            return None
        if not summary or "\n" in summary or len(summary) > 1000:
            return None
        base = self.launch or Path(os.environ.get("MAIA_CWD") or os.getcwd())
        path = (base / summary).resolve() if not os.path.isabs(summary) else Path(summary)
        return path.as_uri()

    def on_tool_result(self, name: str, output: str, is_error: bool) -> None:
        """A tool result preview (600 characters, whole lines)."""
        self.print_lines(render.result_lines(inert(output), is_error, self._width - 1))

    def on_applied_diff(self, name: str, diff: str) -> None:
        """An edit made without a question (edits mode, an allow rule): its diff, compact, in the log."""
        rows = inert(diff).rstrip("\n").split("\n")
        shown = rows[:APPLIED_DIFF_LINES]
        lines = render.approval_lines("\n".join(shown), "diff", self._width - 1)
        if len(rows) > len(shown):
            p = style.palette()
            more = _("… {count} more lines (/diff shows them all)").format(count=len(rows) - len(shown))
            lines.append(render.fit(f"  {p.dim}{more}{p.reset}", self._width - 1))
        self.print_lines(lines)

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
        self.store.status = inert_line(self._tools_status)
        self.redraw()

    # --- window title, notifications, clipboard -------------------------------------------------------

    def _set_state(self, state: State) -> None:
        self._state = state
        self._set_title()

    def _set_title(self) -> None:
        term = self.term
        if term is None or not self._started or not self.caps.redraw:
            return
        labels = {"idle": _("idle"), "thinking": _("thinking"), "approval": _("waiting for your approval")}
        label = labels[self._state]
        seconds = self._waiting_seconds() if self._showing_wait and self._state == "thinking" else None
        if seconds is not None:
            label = _("waiting for the model ({seconds} s)").format(seconds=seconds)
        session = self.session_name() if self.session_name is not None else None
        parts = ["MAIA", label] + ([session] if session else [])
        title = inert_line(" · ".join(parts))
        if title != self._title:
            self._title = title
            self._write(term.set_window_title(title))

    def _notify(self, title: str, body: str) -> None:
        """A desktop notification (or a bell) when the terminal is known to be out of focus."""
        if self._focused or not self.caps.focus or not self._started:
            return
        clean = {ord(c): " " for c in ";\x07\x1b"}
        title, body = inert_line(title).translate(clean), inert_line(body).translate(clean)
        self._write(notification(self.caps.notifier, title, body))

    def copy_to_clipboard(self, text: str) -> bool:
        """Put ``text`` on the clipboard through OSC 52 (True when written; the terminal may still refuse)."""
        term = self.term
        if term is None or not self._started or not self.caps.redraw or self._gone:
            return False
        try:
            term.clipboard_copy(text)
        except OSError:
            self._gone = True
            return False
        return True

    def copy_answer(self, block: int | None = None) -> tuple[str, int] | None:
        """``/copy [N]``: the last answer, or its Nth code block (from 1), to the clipboard; what was copied
        and how many control characters were left out (the screen showed them inert; a paste must not
        carry them either)."""
        text = self.last_answer
        if block is not None:
            blocks = code_blocks(text)
            if not 1 <= block <= len(blocks):
                return None
            text = blocks[block - 1]
        text, removed = paste_safe(text)
        if not text:
            return None
        from maia.frontends.terminal.clipboard import copy_elsewhere

        sent = self.copy_to_clipboard(text)
        self.copy_report = copy_elsewhere(text, sent)  # tmux drops OSC 52 unless told: say what reached where
        if not sent and not self.copy_report.reached:
            return None
        return text, removed

    def status_text(self, model: str | None, session: str | None, cost: float | None, mode: str | None = None) -> str:
        """The ``/status`` line: model, context used (from the bar), session, approval mode, cost so far."""
        return render.status_summary(model, self.store.context_tokens, self.store.context_max, session, cost, mode)

    # --- a command's output while it runs ---------------------------------------------------------------

    @contextlib.contextmanager
    def watch_command(self, command: str) -> Iterator[Callable[[bytes], None]]:
        """While a Bash or ``!`` command runs: a spinner, its elapsed time and its last lines above the status.

        Yields the function ``run_shell`` calls with each block of output.
        """
        watch = _Watch(command, time.monotonic())
        self._watches.append(watch)

        def feed(data: bytes) -> None:
            watch.feed(data)
            self.schedule_redraw()

        try:
            yield feed
        finally:
            self._watches.remove(watch)
            self.redraw()

    def _progress_rows(self) -> list[str]:
        p = style.palette()
        now = time.monotonic()
        rows: list[str] = []
        inner = self._width - 1
        for watch in self._watches:
            elapsed = now - watch.started
            if elapsed < PROGRESS_AFTER:
                continue
            command = inert_line(watch.command.strip().split("\n")[0])
            spinner = render.DOTS10[self._tick % len(render.DOTS10)]
            seconds = _("{seconds} s").format(seconds=int(elapsed))
            rows.append(
                render.fit(
                    f"{p.yellow}{spinner}{p.reset} {p.bold}{command}{p.reset} {p.dim}({seconds}){p.reset}", inner
                )
            )
            for line in watch.last_lines(PROGRESS_LINES):
                rows.append(render.fit(f"  {p.dim}│ {inert_line(line)}{p.reset}", inner))
        return rows

    # --- suspend (Ctrl+Z) and continue -------------------------------------------------------------------

    def suspend(self) -> None:
        """Ctrl+Z: give the terminal back as it was, stop (SIGTSTP) like any job; on return, raw mode again
        and the whole frame redrawn."""
        if not self._started or self.term is None or not hasattr(signal, "SIGTSTP") or self._loop is None:
            return
        self._write(self.screen.erase())
        self._loop.remove_reader(self._fd)
        with contextlib.suppress(OSError):
            self._modes.close()
        self._modes = contextlib.ExitStack()
        forget_signal(signal.SIGTSTP)  # the default action (stop) for the signal sent below
        try:
            os.kill(os.getpid(), signal.SIGTSTP)  # the shell takes the terminal back; `fg` continues here
        finally:
            on_signal(signal.SIGTSTP, self.suspend)
            self._resume()

    def _resume(self) -> None:
        term = self.term
        if term is None or self._loop is None:
            return
        try:
            self._modes.enter_context(term.raw())
            self._enter_modes(term)
        except OSError:
            self._gone = True
        self._loop.add_reader(self._fd, self._on_readable)
        self._title = ""
        self._set_title()
        self._size()
        self.redraw(force=True)

    def _on_continue(self) -> None:
        """SIGCONT (after any stop): the shell may have changed the terminal's modes; raw mode again, redraw."""
        if not self._started or self.term is None:
            return
        with contextlib.suppress(OSError, termios.error):
            tty.setraw(self._fd, termios.TCSANOW)
        self._size()
        self.redraw(force=True)

    # --- timers and resize -------------------------------------------------------------------------

    async def _tick_loop(self) -> None:
        while True:
            animated = bool(self.store.status or self._watches)
            await asyncio.sleep(BUSY_TICK if animated else IDLE_TICK)
            seconds = self._waiting_seconds()
            if seconds is not None and (self._showing_wait or self.store.status == _("Thinking")):
                self._showing_wait = True
                self.store.status = self._waiting_label(seconds)
                self._set_title()
            if self.store.status or self._watches:  # the idle prompt stays still: nothing to redraw
                self._tick += 1
                self.redraw()

    def _on_resize(self) -> None:
        old_width = self._width
        self._size()
        above = self.screen.cursor_row
        if self._width < old_width and self.screen.lines and self.caps.reflows:
            # rows drawn for the old width wrap onto more rows in terminals that reflow their lines (while
            # an answer streams the hidden cursor waits on the frame's first row: nothing is above it)
            above = sum(
                max(1, -(-metrics.length(line) // self._width)) for line in self.screen.lines[: self.screen.cursor_row]
            )
        self.screen.forget(above)
        if self._live is not None:
            self._live.resize(self._width - 1, self._live_room())
        question = self.store.question
        if question is not None and self._approval is not None and self._width != old_width:
            question.detail = self._detail_rows(self._approval)
            question.offset = 0
        self._flush()
