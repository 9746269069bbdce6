"""The chat's terminal session: entering it (raw mode, the terminal's features asked and turned on, keys read
from the event loop, signals), leaving it as it was, Ctrl+Z and ``fg``, and a change of size.

blessed's ``Terminal`` is created here; the modes turned on (raw keys, bracketed paste, the kitty keyboard,
focus and resize reports, the window title) are undone in reverse order when the chat ends or is
suspended, even after an error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import termios
import tty
from typing import TYPE_CHECKING, Any

from maia.core.signals import forget_signal, on_signal
from maia.frontends.chat.inputbox import InputBox
from maia.frontends.terminal import metrics, style, typeahead
from maia.frontends.terminal.keys import KeyReader
from maia.frontends.terminal.screen import Caps, Screen
from maia.frontends.terminal.termcaps import QUERY_TIMEOUT, create_terminal, probe

if TYPE_CHECKING:
    from blessed import Terminal


class TerminalSession(InputBox):
    """The terminal taken and given back: start, stop, suspend, resume, resize."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._ticker: asyncio.Task[None] | None = None
        self._modes = contextlib.ExitStack()

    # --- life cycle -------------------------------------------------------------------------------

    def start(self) -> None:
        """blessed's Terminal, key-by-key mode (Ctrl+C, Ctrl+S arrive as keys), paste, focus, the first frame."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        # raw mode before anything else: keys typed since launch are kept (and no longer echoed)
        ahead = typeahead.take(self._fd)
        if ahead.attributes is not None:  # the terminal as the shell had it, restored last
            self._modes.callback(termios.tcsetattr, self._fd, termios.TCSADRAIN, ahead.attributes)
        try:
            term = create_terminal(self.stdout)
            self.term = term
            metrics.use_terminal(term)
            self._size()
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
        typed = ahead.keys + term.flushinp().encode()  # and keys typed while the terminal was being asked
        if self.caps.redraw:
            self._write(typeahead.erase_echo(ahead.echoed, self._width, self._height))
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

    # --- resize ------------------------------------------------------------------------------------

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
