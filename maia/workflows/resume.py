"""Resuming a workflow that ended in error (worker lost, proxy outage, machine restart, stopped).

The worker keeps the parent's conversation in ``parent.json`` as it goes (atomic, about once a
second and at the end) and the sub-agents' states in ``agents.json``. Resuming puts the record back
to ``pending`` (``resuming``: true, ``resumes`` counted) under the folder's lock, and a worker then
reopens the parent with the saved conversation and tells the model it was interrupted. A worker holds
``.run.lock`` (an ``flock``, released by the kernel however the process ends) for its whole run: a
workflow never runs twice at once.

The library API, for the ``maia resume`` command and for other runners (a queue's worker):

- :func:`resumable` / :func:`why_not_resumable`: whether a workflow can be resumed, and why not;
- :func:`prepare_resume`: check and reset the record (raises :class:`NotResumable`); then run it with
  :func:`maia.workflows.worker.run_workflow` and the options of :func:`resume_options`, in this
  process or in any worker that sees the same registry;
- :func:`resume_here` and :func:`resume_detached`: both steps, in this process or in a new one.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from maia.core.errors import MaiaError, UsageError
from maia.i18n import _
from maia.workflows.registry import FINAL_STATES, Workflow, WorkflowFileError
from maia.workflows.runstate import (
    PARENT_FILE,
)

# --- resumable? --------------------------------------------------------------------------------


class NotResumable(UsageError):
    """The workflow cannot be resumed now; the message says why."""


def why_not_resumable(workflow: Workflow) -> str | None:
    """Why the workflow cannot be resumed now (None: it can)."""
    from maia.workflows.view import snapshot

    snap = snapshot(workflow)
    if snap.state == "done":
        return _("The workflow {id} is done: there is nothing to resume.").format(id=workflow.id)
    if snap.state not in FINAL_STATES or workflow.running_elsewhere():
        return _("The workflow {id} is still running: stop it first (maia stop {id}).").format(id=workflow.id)
    if not workflow.has_state(PARENT_FILE):
        return _("The workflow {id} saved no conversation before it ended: start it again with maia run.").format(
            id=workflow.id
        )
    return None


def resumable(workflow: Workflow) -> bool:
    """Whether ``maia resume`` can carry the workflow on now."""
    with contextlib.suppress(WorkflowFileError, OSError):
        return why_not_resumable(workflow) is None
    return False


def prepare_resume(workflow: Workflow) -> dict[str, Any]:
    """Check, under the folder's lock, that the workflow can be resumed, and put it back to ``pending``
    for a worker (``resuming``: true); the new record. :class:`NotResumable` says why not."""

    def change(data: dict[str, Any]) -> None:
        reason = why_not_resumable(workflow)
        if reason is not None:
            raise NotResumable(reason)
        resumes = data.get("resumes")
        previous = data.get("error")
        data.update(
            state="pending",
            pid=None,
            processStart=None,
            ended=None,
            exitCode=None,
            error=None,
            waiting=None,
            resuming=True,
            resumes=(resumes if isinstance(resumes, int) and not isinstance(resumes, bool) else 0) + 1,
            interruption=previous or _("its process ended"),
        )

    record = workflow.update(change)
    workflow.clear_stop()  # a maia stop of the last run is not a stop of this one
    requests, _warnings = workflow.requests()
    for request in requests:  # nobody waits for the last run's questions: the new run asks again
        if request.state == "pending":
            with contextlib.suppress(OSError, WorkflowFileError):
                workflow.close_request(request.id, "withdrawn")
    workflow.append_event("resume_requested", resumes=record.get("resumes"))
    return record


def resume_options(workflow: Workflow, home: Path, launch: Path | None = None) -> Any:
    """The :class:`~maia.workflows.worker.RunOptions` a worker runs a prepared workflow with."""
    from maia.workflows.worker import options_from_record

    record = workflow.read()
    saved_launch = record.get("launch")
    where = Path(saved_launch) if isinstance(saved_launch, str) and saved_launch else launch
    if where is None:
        where = Path(str(record.get("cwd") or Path.cwd()))
    return options_from_record(record, home, where)


async def resume_here(workflow: Workflow, home: Path, launch: Path | None = None, log: Any = None) -> Any:
    """Prepare and run the workflow in this process to its end; its :class:`Outcome`."""
    from maia.workflows.worker import run_workflow

    prepare_resume(workflow)
    options = resume_options(workflow, home, launch)
    options.detached = False
    return await run_workflow(workflow, options, log)


def resume_detached(workflow: Workflow, home: Path, launch: Path | None = None) -> int:
    """Prepare the workflow and run it in a new background process (as ``maia run --detach``); its pid."""
    from maia.workflows.detach import spawn_worker
    from maia.workflows.worker import end_record

    prepare_resume(workflow)
    options = resume_options(workflow, home, launch)
    try:
        return spawn_worker(workflow, options)
    except OSError as error:  # no worker: the workflow stays resumable, and says why
        message = _("The workflow's process could not be started: {error}").format(error=error.strerror or error)
        end_record(workflow, "error", 1, message)
        raise MaiaError(message) from None
