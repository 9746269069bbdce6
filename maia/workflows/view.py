"""What the commands show of a workflow: its derived state (§23), as JSON and as text lines.

The state is derived, never trusted blindly: ``done`` and ``error`` are final; a workflow whose
process is gone is ``error``; one with a pending request, a rate-limit wait or a waiting agent is
``waiting``; otherwise ``running`` (``pending`` until its worker starts).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from maia.i18n import _
from maia.workflows.duration import format_duration
from maia.workflows.registry import FINAL_STATES, Request, State, Workflow, WorkflowFileError, process_alive
from maia.workflows.text import inert, one_line

FULL_DISK_BYTES = 64 * 1024  # less room than this: a record could not be written
Style = Callable[[str, str], str]  # (state or role, text) → text with colours, or as is


def plain(_role: str, text: str) -> str:
    """No colours."""
    return text


@dataclass(slots=True)
class Snapshot:
    """A workflow as read now: record, agents, requests, derived state, and the problems met reading it."""

    workflow: Workflow
    record: dict[str, Any]
    state: State
    agents: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    lost: bool = False  # the process died without writing its end

    @property
    def resumable(self) -> bool:
        """An error with a saved conversation, nothing running it: ``maia resume`` carries it on."""
        from maia.workflows.runstate import PARENT_FILE

        return self.state == "error" and self.workflow.has_state(PARENT_FILE) and not self.workflow.running_elsewhere()

    @property
    def final(self) -> bool:
        """``done`` or ``error``: nothing will change any more."""
        return self.state in FINAL_STATES

    @property
    def pending(self) -> list[Request]:
        """The requests waiting for an answer (none once the workflow has ended)."""
        return [] if self.final else [r for r in self.requests if r.state == "pending"]

    @property
    def disk_full(self) -> bool:
        """The workflow's disk has (almost) no room left: a lost process there could not write its end."""
        try:
            stat = os.statvfs(self.workflow.folder)
        except (OSError, AttributeError):
            return False
        return stat.f_bavail * stat.f_frsize < FULL_DISK_BYTES

    @property
    def error(self) -> str | None:
        """Why it failed."""
        if self.lost and self.disk_full:
            return _(
                "The workflow's process ({pid}) ended while the disk was full: it could not save how it ended."
            ).format(pid=self.record.get("pid"))
        if self.lost and self.workflow.lost_kind == "worker":
            return _("The workflow's worker ({worker}) is gone: it was killed or its machine restarted.").format(
                worker=self.record.get("worker") or self.record.get("pid")
            )
        if self.lost:
            return _("The workflow's process ({pid}) is gone: it was killed or the machine restarted.").format(
                pid=self.record.get("pid")
            )
        error = self.record.get("error")
        return str(error) if error else None

    @property
    def waiting(self) -> dict[str, Any] | None:
        """The rate-limit (or overloaded server) wait going on, if any."""
        waiting = self.record.get("waiting")
        return waiting if isinstance(waiting, dict) and not self.final else None

    def label(self) -> str:
        """The state in words."""
        if self.state == "waiting":
            waiting = self.waiting
            if waiting is not None:
                until = _clock(waiting.get("until"))
                if waiting.get("reason") == "rate_limited":
                    return _("rate-limited until {time}").format(time=until)
                if waiting.get("reason") == "unreachable":
                    return _("LiteLLM unreachable, retrying at {time}").format(time=until)
                return _("server error, retrying at {time}").format(time=until)
            if self.pending:
                return _("waiting for an answer ({requests})").format(requests=", ".join(r.id for r in self.pending))
            for agent in self.agents:
                if agent.get("state") == "waiting" and isinstance(agent.get("waiting"), dict):
                    name, until = inert(str(agent.get("name"))), _clock(agent["waiting"].get("until"))
                    if agent["waiting"].get("reason") == "unreachable":
                        return _("sub-agent {name}: LiteLLM unreachable, retrying at {time}").format(
                            name=name, time=until
                        )
                    if agent["waiting"].get("reason") == "overloaded":
                        return _("sub-agent {name}: server error, retrying at {time}").format(name=name, time=until)
                    return _("sub-agent {name} rate-limited until {time}").format(name=name, time=until)
            return _("waiting")
        if self.state == "error":
            code = self.record.get("exitCode")
            if self.lost:
                if self.workflow.lost_kind == "worker":
                    return _("error (worker lost)")
                return _("error (disk full)") if self.disk_full else _("error (process lost)")
            if code == 130:
                return _("error (stopped)")
            return _("error")
        return {"pending": _("pending"), "running": _("running"), "done": _("done")}.get(self.state, self.state)

    def agent_state(self, agent: dict[str, Any]) -> str:
        """An agent's state: one still active in a workflow that has ended is in error."""
        state = str(agent.get("state") or "pending")
        if self.final and state in ("running", "waiting"):
            return "error"
        return state if state in ("pending", "running", "waiting", "done", "error") else "error"

    def to_json(self) -> dict[str, Any]:
        """The stable object of ``maia workflow --json`` (and each item of ``maia workflows --json``)."""
        record = self.record
        return {
            "id": self.workflow.id,
            "state": self.state,
            "label": self.label(),
            "agent": record.get("agent"),
            "agentFile": record.get("agentFile"),
            "task": record.get("task"),
            "model": record.get("model"),
            "cwd": record.get("cwd"),
            "permissionMode": record.get("permissionMode"),
            "timeout": record.get("timeout"),
            "started": record.get("started"),
            "ended": record.get("ended"),
            "pid": record.get("pid"),
            "exitCode": record.get("exitCode"),
            "error": self.error,
            "resumable": self.resumable,
            "resumes": _count(record.get("resumes")),
            "waiting": self.waiting,
            "agents": [
                {
                    "name": a.get("name"),
                    "state": self.agent_state(a),
                    "runs": _count(a.get("runs")),
                    "active": _count(a.get("active")),
                    **{k: a.get(k) for k in ("started", "ended", "error")},
                    "waiting": a.get("waiting") if isinstance(a.get("waiting"), dict) and not self.final else None,
                }
                for a in self.agents
            ],
            "requests": [r.to_json() for r in self.pending],
            "result": str(self.workflow.result_path) if self.workflow.has_result() else None,
        }


def _count(value: Any) -> int:
    """A counter from a file: a non-negative integer, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _clock(value: Any) -> str:
    """``2025-01-01T12:00:30+01:00`` → ``12:00:30`` (as written when it cannot be read)."""
    try:
        return datetime.fromisoformat(str(value)).strftime("%H:%M:%S")
    except ValueError:
        return inert(str(value))


def derive_state(
    record: dict[str, Any],
    agents: list[dict[str, Any]],
    pending: list[Request],
    alive: Callable[[dict[str, Any]], bool] | None = None,
) -> tuple[State, bool]:
    """The state and whether the process was lost (``alive``: whether the record's runner still runs)."""
    stored = record.get("state")
    if stored in FINAL_STATES:
        return ("done" if stored == "done" else "error"), False
    pid = record.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool):
        return "pending", False
    identity = record.get("processStart")
    runs = alive(record) if alive is not None else process_alive(pid, identity if isinstance(identity, str) else None)
    if not runs:
        return "error", True
    if stored == "pending":
        return "pending", False
    if record.get("waiting") or pending or any(a.get("state") == "waiting" for a in agents):
        return "waiting", False
    return "running", False


def snapshot(workflow: Workflow) -> Snapshot:
    """Read a workflow now; WorkflowFileError only when its record cannot be read."""
    record = workflow.read()
    warnings: list[str] = []
    try:
        agents = workflow.read_agents()
    except WorkflowFileError as error:
        agents = []
        warnings.append(error.message)
    requests, problems = workflow.requests()
    warnings.extend(problems)
    pending = [r for r in requests if r.state == "pending"]
    state, lost = derive_state(record, agents, pending, workflow.runner_alive)
    return Snapshot(workflow, record, state, agents, requests, warnings, lost)


def _started(snap: Snapshot) -> str:
    try:
        return datetime.fromisoformat(str(snap.record.get("started"))).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return "?"


def list_line(snap: Snapshot, style: Style = plain) -> str:
    """One line of ``maia workflows``: id, state, agent, start."""
    line = "{id}  {state}  {agent}  {started}".format(
        id=snap.workflow.id,
        state=style(snap.state, f"{snap.label():<26}"),
        agent=inert(str(snap.record.get("agent") or "?")),
        started=_started(snap),
    )
    return line + "  " + _("(resumable: maia resume {id})").format(id=snap.workflow.id) if snap.resumable else line


def detail_lines(snap: Snapshot, style: Style = plain) -> list[str]:
    """``maia workflow REF``: everything about one workflow."""
    record = snap.record
    wid = snap.workflow.id
    lines = [f"{style('title', wid)}  {style(snap.state, snap.label())}"]
    rows = [
        (_("Agent"), f"{record.get('agent')} ({record.get('agentFile')})"),
        (_("Task"), one_line(str(record.get("task") or ""), 300)),
        (_("Model"), str(record.get("model") or "—")),
        (_("Folder"), str(record.get("cwd") or "—")),
        (_("Permissions"), str(record.get("permissionMode") or "wait")),
        (
            _("Time limit"),
            format_duration(float(record["timeout"])) if isinstance(record.get("timeout"), int | float) else _("none"),
        ),
        (_("Started"), _started(snap)),
    ]
    if record.get("ended"):
        rows.append((_("Ended"), _clock(record.get("ended"))))
    if record.get("pid"):
        rows.append((_("Process"), str(record.get("pid"))))
    width = max(len(label) for label, _value in rows)
    lines.extend(f"  {label:<{width}}  {inert(value)}" for label, value in rows)
    if snap.agents:
        lines.append(_("Sub-agents"))
        for agent in snap.agents:
            state = snap.agent_state(agent)
            value = agent.get("runs")
            runs = value if isinstance(value, int) else 0
            extra = _(" ({count} runs)").format(count=runs) if runs > 1 else ""
            error = f" — {one_line(str(agent['error']))}" if agent.get("error") and state == "error" else ""
            waiting = agent.get("waiting")
            if state == "waiting" and isinstance(waiting, dict):
                reason, until = waiting.get("reason"), _clock(waiting.get("until"))
                if reason == "unreachable":
                    extra += " " + _("(LiteLLM unreachable, retrying at {time})").format(time=until)
                elif reason == "overloaded":
                    extra += " " + _("(server error, retrying at {time})").format(time=until)
                else:
                    extra += " " + _("(rate-limited until {time})").format(time=until)
            lines.append(f"  {inert(str(agent.get('name'))):<20} {style(state, state)}{extra}{error}")
    if snap.pending:
        lines.append(_("Waiting for you"))
        for request in snap.pending:
            lines.append(f"  {style('request', request.id)}  {one_line(request.message, 300)}")
            lines.extend(detail_rows(request, wid))
            if request.kind == "permission":
                lines.append(
                    "      " + _("maia approve {id} {request}   (or --deny)").format(id=wid, request=request.id)
                )
            else:
                lines.append("      " + _('maia reply {id} "your answer"').format(id=wid))
    if snap.error:
        lines.append(style("error", _("Error: {message}").format(message=inert(snap.error))))
    if snap.resumable:
        lines.append(_("Resume it: maia resume {id}").format(id=wid))
    if snap.state == "done":
        lines.append(_("Result: maia result {id}").format(id=wid))
    return lines


DETAIL_ROWS = 40  # of a request's command or diff in `maia workflow`; `maia approve ID --show` gives it all


def detail_rows(request: Request, workflow_id: str, limit: int | None = DETAIL_ROWS) -> list[str]:
    """A request's command or diff, inert, indented under it (cut to ``limit`` rows, said so)."""
    if not request.detail:
        return []
    rows = inert(request.detail).rstrip("\n").split("\n")
    shown = rows if limit is None else rows[:limit]
    lines = [f"      │ {row}" for row in shown]
    if len(rows) > len(shown):
        lines.append(
            "      "
            + _("… {count} more lines: maia approve {id} {request} --show").format(
                count=len(rows) - len(shown), id=workflow_id, request=request.id
            )
        )
    return lines
