"""The chat's :class:`~maia.core.contracts.AgentUI` adapter: what the agent loop tells the user, in the terminal.

The answer streams into the live rows (finished Markdown blocks go to the log); the model's reasoning is
shown dim while Ctrl+O has it on (kept for later otherwise); tool calls and their results go to the log,
a file path as a hyperlink where the terminal shows them, a sub-agent's calls nested under its Agent call.
Questions (``confirm``, ``ask``) are the input box's (:mod:`maia.frontends.chat.inputbox`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from maia.core.contracts import ToolsProgress
from maia.frontends.chat import render
from maia.frontends.chat.display import LogEntry
from maia.frontends.chat.live import LiveAnswer
from maia.frontends.chat.status import StatusLine
from maia.frontends.terminal import metrics, style
from maia.frontends.terminal.inert import inert, inert_line
from maia.i18n import _, ngettext

HIDDEN_REASONING = 3  # Ctrl+O shows the reasoning of this many earlier model calls, when it was hidden
HIDDEN_REASONING_CHARS = 4000  # of each, its end
APPLIED_DIFF_LINES = 30  # an edit made without a question shows this much of its diff
NESTED_LINES = 12  # a sub-agent's tool calls shown under the Agent call, per model call; the rest are counted


class AgentView(StatusLine):
    """The AgentUI callbacks: the answer as it streams, reasoning, tool calls and results, warnings."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._live_base = 0
        self._live_chars = 0
        self._tools_status = ""
        self._nested: dict[str, int] = {}  # lines shown so far per sub-agent in this turn (bounded)
        self.launch: Path | None = None
        self.show_reasoning = False  # Ctrl+O
        self._reasoning: list[str] = []
        self._reasoning_shown = 0
        self._hidden_reasoning: list[str] = []  # reasoning that streamed while hidden: Ctrl+O shows it later

    def set_busy(self, busy: bool, status: str = "") -> None:
        """Grey the input box while a turn runs (a new turn: no sub-agent line shown yet)."""
        if busy and self.store.mode != "busy":
            self._nested.clear()
        super().set_busy(busy, status)

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
            self._log.append(LogEntry(lines=lines))
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
            self._log.append(LogEntry(lines=[""]))
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
            self._log.append(LogEntry(lines=lines))
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
        self._log.append(LogEntry(lines=[render.fit(line, self._width - 1)]))
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
