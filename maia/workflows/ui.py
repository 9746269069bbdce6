"""The workflow worker's interface: nothing on a screen, everything in ``run.log``, questions to a person.

:class:`WorkflowUI` is the :class:`~maia.core.contracts.AgentUI` of the parent's conversation and the
:class:`~maia.subagents.tool.SubAgentObserver` of its sub-agents: their runs move the agents' states,
their questions reach :class:`~maia.workflows.asking.Asker` with the agent's name, and their
conversations are kept in ``traces/``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from maia.core.contracts import AskAnswer, ToolsProgress
from maia.i18n import _
from maia.workflows.asking import Asker, Log
from maia.workflows.book import AgentBook
from maia.workflows.registry import Workflow
from maia.workflows.text import inert, one_line

if TYPE_CHECKING:
    from maia.subagents.launcher import SubAgentResult


class WorkflowLog:
    """``HH:MM:SS text`` lines appended to ``run.log`` (inert: no escape sequence), and echoed when asked."""

    def __init__(self, path: Path, echo: Log | None, append: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.echo = echo
        self.append = append  # where the lines go instead of ``path`` (a queue's registry)

    def __call__(self, kind: str, text: str) -> None:
        """One entry; ``kind`` (info, warn, error, tool, agent, request, wait, text, done) is for colours."""
        clean = inert(text.rstrip())
        stamp = datetime.now().strftime("%H:%M:%S")
        line = stamp + " " + clean.replace("\n", "\n" + " " * (len(stamp) + 1))
        if self.append is not None:
            with contextlib.suppress(Exception):  # a log never stops the workflow
                self.append(line)
        else:
            with contextlib.suppress(OSError), open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        if self.echo is not None:
            self.echo(kind, line)


class WorkflowUI:
    """The parent's interface in a workflow (and its sub-agents' observer)."""

    subagent_transcripts = True  # every run's conversation goes to traces/
    subagent_time_limit: float | None = None  # the workflow's own limit bounds them

    def __init__(self, workflow: Workflow, book: AgentBook, asker: Asker, log: Log, parent: str) -> None:
        self.workflow = workflow
        self.book = book
        self.asker = asker
        self.write = log
        self.parent = parent
        self._text: list[str] = []

    # --- AgentUI --------------------------------------------------------------------------------

    def on_thinking(self, thinking: bool) -> None:
        """Nothing to show."""

    def on_text(self, text: str) -> None:
        """Collected until the answer is complete."""
        self._text.append(text)

    def on_text_end(self) -> None:
        """The parent's words, on one line (the whole result goes to result.md)."""
        text, self._text = "".join(self._text).strip(), []
        if text:
            self.write("text", _("{agent}: {text}").format(agent=self.parent, text=one_line(text, 300)))

    def on_reasoning(self, text: str) -> None:
        """Not logged."""

    def on_tool_call(self, name: str, summary: str) -> None:
        """``→ Tool summary`` (sub-agent launches are logged when they start)."""
        if name != "Agent":
            self.write("tool", f"→ {name} {one_line(summary)}".rstrip())
        self.workflow.append_event("tool_call", agent=self.parent, name=name, summary=summary)

    def on_tool_result(self, name: str, output: str, is_error: bool) -> None:
        """Failures only."""
        if is_error and name != "Agent":  # a sub-agent's failure is reported by its launcher
            self.write("warn", f"  ✗ {name}: {one_line(output)}")

    def on_subagent_tool(self, agent: str, phase: str, name: str, summary: str, is_error: bool) -> None:
        """A sub-agent's tool call, one line under its launch (``  ⎿ rev → Read main.py``), and its failure
        (``  ⎿ rev ✗ Read: …``), as the chat nests them under the Agent call."""
        if phase == "call":
            self.write("tool", f"  ⎿ {one_line(agent, 100)} → {one_line(name, 100)} {one_line(summary)}".rstrip())
            self.workflow.append_event("tool_call", agent=agent, name=name, summary=summary)
        elif is_error:
            self.write("warn", f"  ⎿ {one_line(agent, 100)} ✗ {one_line(name, 100)}: {one_line(summary)}")

    def on_warning(self, message: str) -> None:
        """A warning line."""
        self.write("warn", message)

    async def confirm(self, message: str) -> bool:
        """A question of the parent's: the permission mode, or a person through the registry."""
        return await self.asker.permission(self.parent, message)

    async def ask(self, message: str, approval: object | None = None) -> AskAnswer:
        """A tool call that needs a confirmation (yes or no: a workflow offers no "always"); the request
        carries what the call would do (the command, the diff), for `maia workflow` and `maia approve --show`."""
        detail = getattr(approval, "detail", None)
        kind = getattr(approval, "detail_kind", None)
        allowed = await self.asker.permission(
            self.parent,
            message,
            detail=detail if isinstance(detail, str) else None,
            detail_kind=kind if isinstance(kind, str) else None,
        )
        return "yes" if allowed else "no"

    def on_context_usage(self, tokens: int) -> None:
        """Not logged."""

    def on_tools_running(self, progress: ToolsProgress | None) -> None:
        """Not logged."""

    def info(self, text: str) -> None:
        """Information (a sub-agent finished…)."""
        self.write("info", text)

    def log(self, level: str, message: str) -> None:
        """A retry notice while the final result is asked for."""
        self.write("warn" if level == "warn" else "wait", message)

    def waiting(self, reason: str | None, until: str | None) -> None:
        """The parent waits for the server while its final result is asked for (or no longer)."""
        value = {"reason": reason, "until": until} if reason else None
        self.workflow.update(lambda data: data.update(waiting=value))

    # --- the sub-agents (SubAgentObserver) --------------------------------------------------------

    def subagent_started(self, name: str, task: str) -> None:
        """The agent is running."""
        self.book.start(name)
        self.workflow.append_event("agent_started", agent=name, task=task)
        self.write("agent", _("Sub-agent {name} started: {task}").format(name=name, task=one_line(task, 160)))

    def subagent_finished(self, name: str, result: SubAgentResult) -> None:
        """The agent's run ended: its state, its conversation in traces/ (its end is logged by the launcher)."""
        from maia.sessions.codec import SavedSession

        self.book.finish(name, result.ok, result.error)
        trace = None
        if result.messages:
            session = SavedSession(
                name=f"{self.workflow.id}-{name}",
                model=result.model,
                launch=str(self.workflow.record.get("cwd") or ""),
                messages=list(result.messages),
                agent=name,
                parent_session=self.workflow.id,
                origin="subagent",
            )
            with contextlib.suppress(OSError):
                trace = self.workflow.write_trace(name, session.to_json()).name
        self.workflow.append_event(
            "agent_finished", agent=name, ok=result.ok, error=result.error, toolCalls=result.tool_calls, trace=trace
        )

    def subagent_waiting(self, name: str, reason: str | None, until: str | None) -> None:
        """A sub-agent waits for the server (a rate limit) until ``until``, or carries on."""
        self.book.server_wait(name, reason, until)
        self.workflow.append_event("agent_waiting" if reason else "agent_resumed", agent=name, until=until)

    async def subagent_confirm(self, name: str, question: str, doubt: str | None = None) -> bool:
        """A sub-agent's question, with its name (and the engine's doubt, which allow mode refuses)."""
        return await self.asker.permission(name, question, doubt=doubt)
