"""The chat's status line and what surrounds it: the context bar, the busy state, the window title, desktop
notifications when the terminal is out of focus, the clipboard (``/copy``) and the ``/status`` line.

The status line says what MAIA is doing ("Thinking", "Waiting for the model (N s)", parallel tools); a
timer turns its spinner while something happens and leaves the idle prompt still.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Literal

from maia.core.inert import paste_safe
from maia.frontends.chat import render
from maia.frontends.chat.display import Display
from maia.frontends.chat.markdown import code_blocks
from maia.frontends.terminal.inert import inert_line
from maia.frontends.terminal.termcaps import notification
from maia.i18n import _

if TYPE_CHECKING:
    from maia.frontends.terminal.clipboard import CopyReport

BUSY_TICK = 0.125  # the "Thinking" spinner
IDLE_TICK = 0.5  # the input box's spinner: at most twice a second while nothing happens
WAIT_NOTICE = 5  # seconds without a word from the model before the status says it is waited for
State = Literal["idle", "thinking", "approval"]


class StatusLine(Display):
    """The status line, the bar, the window title, notifications and the clipboard."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._focused = True
        self._state: State = "idle"
        self._title = ""
        self.copy_report: CopyReport | None = None  # where the last /copy went
        self._waiting_since: float | None = None
        self._showing_wait = False

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
        self.store.mode = "busy" if busy else "input"
        self.store.status = inert_line(status)
        self._set_state("thinking" if busy else "idle")
        if was_busy and not busy:
            self._waiting_since = None
            self._notify(_("Your turn"), _("MAIA has finished."))
        self.redraw()

    # --- waiting for the model --------------------------------------------------------------------

    def _waiting_label(self, seconds: int) -> str:
        return _("Waiting for the model ({seconds} s)").format(seconds=seconds)

    def _waiting_seconds(self) -> int | None:
        """Seconds without a word from the model, once there have been ``WAIT_NOTICE`` of them."""
        if self._waiting_since is None or self.store.mode != "busy":
            return None
        seconds = int(time.monotonic() - self._waiting_since)
        return seconds if seconds >= WAIT_NOTICE else None

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

    # --- the spinner ------------------------------------------------------------------------------

    async def _tick_loop(self) -> None:
        """Turn the spinner while something happens (the status line says so, or a command runs)."""
        while True:
            animated = bool(self.store.status or self.commands.running)
            await asyncio.sleep(BUSY_TICK if animated else IDLE_TICK)
            seconds = self._waiting_seconds()
            if seconds is not None and (self._showing_wait or self.store.status == _("Thinking")):
                self._showing_wait = True
                self.store.status = self._waiting_label(seconds)
                self._set_title()
            if self.store.status or self.commands.running:  # the idle prompt stays still: nothing to redraw
                self._tick += 1
                self.redraw()
