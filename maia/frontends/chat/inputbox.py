"""The chat's input box: keys in, the draft and its history, pastes, the completion menu, questions and lists.

Keys read from the terminal go to the pure input state (:class:`~maia.frontends.chat.store.UIStore`, which
edits the draft, keeps the history, collapses long pastes and drives ``/`` and ``@`` completion); the
events it makes (a request, Ctrl+C, an answer, a choice) reach whoever waits for them: ``read_input``, a
question (``confirm``, ``ask``) or a list (``select``). Keys that arrive early are kept in order; a question
that pops up while the user types is guarded so that typed-ahead keys never answer it.
"""

from __future__ import annotations

import asyncio
import collections
import os
import time
from collections.abc import Callable
from typing import Any

from maia.core.contracts import Approval, AskAnswer
from maia.frontends.chat import render
from maia.frontends.chat.agentview import AgentView
from maia.frontends.chat.store import (
    Action,
    Answer,
    Chosen,
    EndOfInput,
    Event,
    Interrupt,
    Question,
    Selection,
    Submit,
)
from maia.frontends.terminal import metrics, style
from maia.frontends.terminal.inert import inert, inert_line
from maia.frontends.terminal.keys import PASTE, Key, KeyReader
from maia.i18n import _

ANSWER_GUARD = 0.4  # a key this soon after a question appears, or after the previous key, never answers it
DOUBLE_CTRL_C = 1.5  # a Ctrl+C this soon after one that interrupted a turn does not quit
QUIT_WINDOW = 2.0  # at an idle prompt, a first Ctrl+C only says how to quit; a second one this soon quits
ANSWERED_DETAIL = 12  # rows of a question's detail kept in the log with its answer


class InputBox(AgentView):
    """Keys, the events they make, and the questions and lists that wait for them."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.reader: KeyReader | None = None
        self._waiter: asyncio.Future[Event] | None = None
        self._question_lock = asyncio.Lock()
        self._esc_timer: asyncio.TimerHandle | None = None
        self.on_interrupt: Callable[[], None] | None = None
        self._events: collections.deque[Event] = collections.deque()
        self.closed = False  # no more keys will come (the terminal closed, or MAIA is ending)
        self.on_cycle_mode: Callable[[], None] | None = None  # Shift+Tab
        self._asked_at = 0.0
        self._typed_at = 0.0  # when text was last typed into the draft
        self._guard = False  # the open question appeared during a turn: keys typed ahead must not answer it
        self._engaged = False  # a key went to the open question
        self._interrupted_at = -DOUBLE_CTRL_C
        self._quit_armed_at = -QUIT_WINDOW
        self._approval: Approval | None = None

    # --- what keys ask of the terminal session (the layer above: termsession.py) ---------------------

    def _on_resize(self) -> None:
        """The terminal's size changed (a resize report arrives as a key)."""
        raise NotImplementedError

    def suspend(self) -> None:
        """Ctrl+Z: give the terminal back and stop."""
        raise NotImplementedError

    # --- the draft, keys and events ----------------------------------------------------------------

    def requeue(self) -> None:
        """After an interruption: the queued messages go back into the box (not sent), before the draft."""
        store = self.store
        if store.queued:
            parts = [*store.queued, *([store.input.text] if store.input.text.strip() else [])]
            store.queued.clear()
            store.input.set("\n".join(parts))
            self.redraw()

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

    # --- questions and lists -----------------------------------------------------------------------

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
