"""The parent ↔ child protocol (§20.2): one JSON object per line over the child's stdin and stdout.

parent → child: ``start {spec[, relay]}``, ``confirm-result {id, ok}``, ``abort``.
child → parent: ``ready`` (its modules are loaded: a spare child may now wait long for its ``start``),
``started`` (its ``start`` was read: from then on, a failure is reported and the task never made again),
``confirm {id, message[, doubt, approval]}``, ``log {level, message}``, ``wait {reason, until}``
(a rate limit: ``reason`` None when it carries on), ``tool {phase, name, summary[, error]}`` (each tool call the
child makes, ``phase`` ``call`` or ``result``: a parent that does not know it ignores it, as it ignores every
unknown kind), ``done {ok, summary, error, messages, toolCalls, model}``.

With ``relay: true`` in its ``start``, the child sends its model requests to the parent, which makes them
(``http``, ``http-cancel``; answered by ``http-head``, ``http-data``, ``http-end``, ``http-error``: see
``maia.subagents.relay``).

A ``confirm`` may carry ``approval`` (what the child's own question box would show: the exact command or diff,
the engine's doubt, the rules "always" would add); the parent then shows the same box as for its own calls and
its ``confirm-result`` may say ``answer: "always" | "always-session"`` (with a yes), which the child's runner
remembers as it would the parent's answer, or ``answer: "stop"`` (with a no): the child stops its iteration as the
parent's loop would. An older peer ignores both fields: the question stays a plain yes or no.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maia.core.contracts import Approval, Message
from maia.sessions.codec import message_to_dict
from maia.subagents.definitions import AgentDefinition

SUBAGENT_FLAG = "--subagent"  # ``python -m maia --subagent``: the hidden child mode
PROTOCOL_VERSION = 1
MAX_LINE = 256 * 1024 * 1024  # a done message carries the whole conversation when traced
TOOL_TEXT = 300  # a tool event's summary: one line, cut (the parent shows one line per call)
APPROVAL_DETAIL = 200_000  # a relayed command or diff beyond this is cut (the box scrolls, but within reason)
ALWAYS_ANSWERS = ("always", "always-session")


class ProtocolError(ValueError):
    """A line that is not a protocol message."""


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """What the child needs to run: the definition, the task, where, with which model."""

    definition: AgentDefinition
    task: str
    launch: Path  # the JSON's "cwd"
    home: Path
    model: str
    parent_session: str | None = None
    extra_allow: tuple[str, ...] = ()  # rules the parent run added (``maia ask --allow``)
    extra_deny: tuple[str, ...] = ()  # rules the parent run added (a workflow's registry stays out of reach)
    transcript: bool = False  # send the conversation back in ``done`` even without ``trace`` (workflows)

    def to_json(self) -> dict[str, Any]:
        """The ``spec`` of a start message."""
        return {
            "version": PROTOCOL_VERSION,
            "definition": self.definition.to_json(),
            "task": self.task,
            "cwd": str(self.launch),
            "home": str(self.home),
            "model": self.model,
            "parentSession": self.parent_session,
            "extraAllow": list(self.extra_allow),
            "extraDeny": list(self.extra_deny),
            "transcript": self.transcript,
        }

    @classmethod
    def from_json(cls, data: Any) -> ChildSpec:
        """The spec back from a start message; ProtocolError when malformed."""
        try:
            if not isinstance(data, dict):
                raise TypeError("not an object")
            extra = data.get("extraAllow") or []
            return cls(
                definition=AgentDefinition.from_json(data["definition"]),
                task=str(data["task"]),
                launch=Path(str(data["cwd"])),
                home=Path(str(data["home"])),
                model=str(data["model"]),
                parent_session=str(data["parentSession"]) if data.get("parentSession") else None,
                extra_allow=tuple(str(r) for r in extra),
                extra_deny=tuple(str(r) for r in data.get("extraDeny") or []),
                transcript=data.get("transcript") is True,
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ProtocolError(f"malformed start message: {error}") from None


def encode(message: Mapping[str, Any]) -> bytes:
    """One message as a line of UTF-8 JSON."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def decode(line: bytes) -> dict[str, Any]:
    """One line back to a message; ProtocolError for anything else."""
    try:
        data = json.loads(line)
    except (ValueError, UnicodeDecodeError) as error:
        raise ProtocolError(f"not JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ProtocolError("not a protocol message (an object with a type)")
    return data


def start(spec: ChildSpec, *, relay: bool = False) -> dict[str, Any]:
    """parent → child: run this; ``relay``: the parent makes the child's model requests (``maia.subagents.relay``)."""
    message: dict[str, Any] = {"type": "start", "spec": spec.to_json()}
    if relay:
        message["relay"] = True
    return message


def confirm_result(request_id: int, ok: bool, reason: str | None = None, answer: str | None = None) -> dict[str, Any]:
    """parent → child: the user's answer to a confirmation; ``reason``: why it is no when no person
    answered (a non-interactive run), so the child never says the user refused; ``answer``: ``always`` or
    ``always-session`` (a yes) or ``stop`` (a no) when the user chose so in a relayed approval box."""
    message: dict[str, Any] = {"type": "confirm-result", "id": request_id, "ok": ok}
    if reason:
        message["reason"] = reason
    if (ok and answer in ALWAYS_ANSWERS) or (not ok and answer == "stop"):
        message["answer"] = answer
    return message


def ready() -> dict[str, Any]:
    """child → parent: loaded, waiting for its ``start`` (a parent that does not know it ignores it)."""
    return {"type": "ready"}


def started() -> dict[str, Any]:
    """child → parent: the ``start`` line was read, before anything is done with it."""
    return {"type": "started"}


def abort() -> dict[str, Any]:
    """parent → child: stop now (Ctrl+C, time limit)."""
    return {"type": "abort"}


def confirm(
    request_id: int, message: str, doubt: str | None = None, approval: Approval | None = None
) -> dict[str, Any]:
    """child → parent: ask the user this yes/no question; ``doubt``: why the permission engine asked
    when it asked out of doubt (a workflow in allow mode refuses such a question); ``approval``: what the
    question box shows (the command or diff, the rules "always" would add)."""
    message_dict: dict[str, Any] = {"type": "confirm", "id": request_id, "message": message}
    if doubt:
        message_dict["doubt"] = doubt
    if approval is not None:
        message_dict["approval"] = approval_to_json(approval)
    return message_dict


def approval_to_json(approval: Approval) -> dict[str, Any]:
    """An Approval as a confirm message carries it (the detail cut at ``APPROVAL_DETAIL``)."""
    detail = approval.detail
    if detail is not None and len(detail) > APPROVAL_DETAIL:
        detail = detail[:APPROVAL_DETAIL] + "\n…"
    return {
        "tool": approval.tool,
        "summary": approval.summary,
        "detail": detail,
        "detailKind": approval.detail_kind,
        "reason": approval.reason,
        "rules": list(approval.rules),
    }


def approval_from_json(data: Any) -> Approval | None:
    """The Approval of a confirm message; None when absent or malformed (the question stays plain)."""
    if not isinstance(data, dict):
        return None
    tool, summary = data.get("tool"), data.get("summary")
    detail, kind, reason = data.get("detail"), data.get("detailKind"), data.get("reason")
    rules = data.get("rules")
    if not isinstance(tool, str) or not isinstance(summary, str):
        return None
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        rules = []
    return Approval(
        tool,
        summary,
        detail if isinstance(detail, str) else None,
        kind if kind in ("command", "diff", "text") and isinstance(detail, str) else None,
        reason if isinstance(reason, str) and reason else None,
        # a question asked out of doubt never offers "always" (as the parent's own box)
        () if isinstance(reason, str) and reason else tuple(rules),
    )


def tool_event(phase: str, name: str, summary: str, error: bool = False) -> dict[str, Any]:
    """child → parent: the child calls a tool (``call``) or one ended (``result``: its first line)."""
    first = summary.strip().splitlines()[0] if summary.strip() else ""
    if len(first) > TOOL_TEXT:
        first = first[: TOOL_TEXT - 1] + "…"
    message: dict[str, Any] = {"type": "tool", "phase": phase, "name": name[:100], "summary": first}
    if error:
        message["error"] = True
    return message


def log(level: str, message: str) -> dict[str, Any]:
    """child → parent: something to show (``info`` or ``warn``)."""
    return {"type": "log", "level": level, "message": message}


def waiting(reason: str | None, until: str | None) -> dict[str, Any]:
    """child → parent: waiting for the server (``rate_limited``, ``overloaded``) until ``until`` (ISO time);
    ``reason`` None: the wait is over."""
    return {"type": "wait", "reason": reason, "until": until}


def done(
    *,
    ok: bool,
    summary: str = "",
    error: str | None = None,
    messages: Sequence[Message] = (),
    tool_calls: int = 0,
    model: str = "",
) -> dict[str, Any]:
    """child → parent: the end (the messages travel only when the parent must write a trace)."""
    data: dict[str, Any] = {
        "type": "done",
        "ok": ok,
        "summary": summary,
        "messages": [message_to_dict(m) for m in messages],
        "toolCalls": tool_calls,
        "model": model,
    }
    if error is not None:
        data["error"] = error
    return data
