"""Steering a running workflow from another process: ``maia approve``, ``maia reply``, ``maia stop``."""

from __future__ import annotations

import re
from typing import Any

from maia.core.errors import ExitStatus, NotFoundError, UsageError
from maia.i18n import _
from maia.workflows.registry import Request, RequestKind, Workflow, now_iso
from maia.workflows.view import Snapshot, snapshot

_REQUEST_REF = re.compile(r"^r?([1-9]\d{0,8})$", re.IGNORECASE)


def _ensure_open(workflow: Workflow) -> Snapshot:
    snap = snapshot(workflow)
    if snap.final:
        raise UsageError(
            _("The workflow {id} has ended ({label}): nothing waits for an answer any more.").format(
                id=workflow.id, label=snap.label()
            )
        )
    return snap


def _still_open(workflow: Workflow) -> None:
    _ensure_open(workflow)


def _other_kind_hint(snap: Snapshot, kind: RequestKind) -> str | None:
    others = [r for r in snap.pending if r.kind != kind]
    if not others:
        return None
    if kind == "permission":
        return _('{request} is a question: answer it with maia reply {id} "your answer".').format(
            request=others[0].id, id=snap.workflow.id
        )
    return _("{request} asks for a permission: answer it with maia approve {id} {request} (or --deny).").format(
        request=others[0].id, id=snap.workflow.id
    )


def pick_request(snap: Snapshot, kind: RequestKind, ref: str | None) -> Request:
    """The request ``ref`` names (``r2`` or ``2``), else the one pending request of this kind."""
    wid = snap.workflow.id
    if ref is not None:
        match = _REQUEST_REF.match(ref.strip())
        if match is None:
            raise UsageError(_("{ref!r} is not a request: requests are named r1, r2…").format(ref=ref))
        wanted = f"r{match.group(1)}"
        request = next((r for r in snap.requests if r.id == wanted), None)
        if request is None:
            listed = ", ".join(r.id for r in snap.pending) or _("none")
            raise NotFoundError(
                _("The workflow {id} has no request {request} (waiting: {pending}).").format(
                    id=wid, request=wanted, pending=listed
                )
            )
        if request.kind != kind:
            if kind == "permission":
                raise UsageError(
                    _(
                        '{request} is a question, not a permission: answer it with maia reply {id} "your answer".'
                    ).format(request=request.id, id=wid)
                )
            raise UsageError(
                _("{request} asks for a permission: answer it with maia approve {id} {request}.").format(
                    request=request.id, id=wid
                )
            )
        return request
    candidates = [r for r in snap.pending if r.kind == kind]
    if not candidates:
        message = (
            _("Nothing in the workflow {id} waits for an approval.")
            if kind == "permission"
            else _("Nothing in the workflow {id} waits for a reply.")
        ).format(id=wid)
        raise UsageError(message, hint=_other_kind_hint(snap, kind))
    if len(candidates) > 1 and kind == "permission":
        raise UsageError(
            _("Several requests wait in {id} ({requests}): name the one to answer.").format(
                id=wid, requests=", ".join(r.id for r in candidates)
            )
        )
    return candidates[0]


def approve(workflow: Workflow, ref: str | None, approved: bool) -> Request:
    """Answer a permission request (once)."""
    request = pick_request(_ensure_open(workflow), "permission", ref)
    workflow.answer(request.id, {"approved": approved}, still_open=lambda: _still_open(workflow))
    return request


def reply(workflow: Workflow, text: str) -> Request:
    """Answer the pending question (once)."""
    if not text.strip():
        raise UsageError(_("The answer is empty."))
    request = pick_request(_ensure_open(workflow), "intervention", None)
    workflow.answer(request.id, {"text": text}, still_open=lambda: _still_open(workflow))
    return request


def stop(workflow: Workflow) -> None:
    """Ask the workflow to stop (it sees it within a second); UsageError when it has already ended."""
    snap = snapshot(workflow)
    if snap.final:
        raise UsageError(_("The workflow {id} has already ended ({label}).").format(id=workflow.id, label=snap.label()))
    workflow.request_stop()
    if workflow.lost_kind == "worker" and snap.state == "pending" and workflow.record.get("pid") is None:
        # still on the queue: it ends now (a worker that takes it meanwhile sees the stop before it starts)
        def change(data: dict[str, Any]) -> None:
            if data.get("state") == "pending" and data.get("pid") is None:
                message = _("Stopped by maia stop before it started.")
                data.update(state="error", ended=now_iso(), exitCode=int(ExitStatus.INTERRUPTED), error=message)

        workflow.update(change)
