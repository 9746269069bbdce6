"""The sub-agents' states in a workflow (``agents.json``): one record per agent, its runs and its waits.

An agent the parent's sections mention starts ``pending``. It is ``running`` while a run is active
(``waiting`` while one of its questions waits for a person), then ``done`` or ``error`` as its last
run ended. When the workflow ends, an agent still active becomes ``error``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from maia.i18n import _
from maia.workflows.registry import State, now_iso


@dataclass(slots=True)
class AgentRecord:
    """One sub-agent in a workflow."""

    name: str
    state: State = "pending"
    runs: int = 0
    active: int = 0  # runs going on now (the parent may launch the same agent in parallel)
    waits: int = 0  # its questions waiting for a person
    started: str | None = None
    ended: str | None = None
    error: str | None = None
    waiting: dict[str, str] | None = None  # waiting for the server: {reason, until}

    def to_json(self) -> dict[str, Any]:
        """The record in ``agents.json`` and ``--json``."""
        return {
            "name": self.name,
            "state": self.state,
            "runs": self.runs,
            "active": self.active,
            "started": self.started,
            "ended": self.ended,
            "error": self.error,
            "waiting": self.waiting,
        }


class AgentBook:
    """Every sub-agent's record; each change is saved at once through ``save``."""

    def __init__(self, mentioned: Iterable[str], save: Callable[[list[dict[str, Any]]], None]) -> None:
        self.records: dict[str, AgentRecord] = {name: AgentRecord(name) for name in mentioned}
        self._save = save

    def save(self) -> None:
        """Write the records (in the order agents appeared)."""
        self._save([r.to_json() for r in self.records.values()])

    def _get(self, name: str) -> AgentRecord:
        record = self.records.get(name)
        if record is None:
            record = self.records[name] = AgentRecord(name)
        return record

    def _settle(self, record: AgentRecord) -> None:
        if record.active > 0:
            record.state = "waiting" if record.waits > 0 or record.waiting else "running"

    def start(self, name: str) -> None:
        """A run of ``name`` begins."""
        record = self._get(name)
        record.runs += 1
        record.active += 1
        record.started = record.started or now_iso()
        record.ended = None
        record.error = None
        self._settle(record)
        self.save()

    def finish(self, name: str, ok: bool, error: str | None = None) -> None:
        """A run of ``name`` ended; the last one to end decides ``done`` or ``error``."""
        record = self._get(name)
        record.active = max(0, record.active - 1)
        if record.active == 0:
            record.state = "done" if ok else "error"
            record.ended = now_iso()
            record.error = None if ok else (error or _("failed"))
            record.waits = 0
            record.waiting = None
        self._settle(record)
        self.save()

    def server_wait(self, name: str, reason: str | None, until: str | None) -> None:
        """``name`` waits for the server (a rate limit) until ``until``; ``reason`` None: no longer."""
        record = self._get(name)
        record.waiting = {"reason": reason, "until": until or ""} if reason else None
        self._settle(record)
        self.save()

    def wait(self, name: str, delta: int) -> None:
        """One of ``name``'s questions starts (+1) or stops (-1) waiting for a person."""
        record = self.records.get(name)
        if record is None:
            return  # the parent's own questions: the workflow's state says it
        record.waits = max(0, record.waits + delta)
        self._settle(record)
        self.save()

    def carry_over(self, previous: list[dict[str, Any]]) -> None:
        """A resumed workflow: the agents' records of the last run, those that were active in error."""
        for saved in previous:
            name = saved.get("name")
            if not isinstance(name, str):
                continue
            record = self._get(name)
            runs = saved.get("runs")
            record.runs = runs if isinstance(runs, int) and not isinstance(runs, bool) and runs > 0 else 0
            record.started = saved.get("started") if isinstance(saved.get("started"), str) else None
            record.ended = saved.get("ended") if isinstance(saved.get("ended"), str) else None
            state = saved.get("state")
            if state in ("running", "waiting"):
                record.state, record.ended = "error", record.ended or now_iso()
                record.error = _("the workflow ended while it was running")
            elif state in ("pending", "done", "error"):
                record.state = state
                record.error = saved.get("error") if isinstance(saved.get("error"), str) else None
        self.save()

    def close(self) -> None:
        """The workflow ended: an agent still active ends in error."""
        changed = False
        for record in self.records.values():
            if record.active > 0:
                record.active = 0
                record.waits = 0
                record.waiting = None
                record.state = "error"
                record.ended = now_iso()
                record.error = _("the workflow ended while it was running")
                changed = True
        if changed:
            self.save()
