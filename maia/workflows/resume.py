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
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from maia.errors import MaiaError, UsageError
from maia.i18n import _
from maia.workflows.registry import FINAL_STATES, Workflow, WorkflowFileError, now_iso

RUN_LOCK = ".run.lock"
PARENT_FILE = "parent.json"
# what the parent's model reads when its workflow is resumed (model-facing, like the agent's own marks)
RESUME_REQUEST = (
    "[The workflow was interrupted here ({cause}) and has just been resumed. Carry on with the task from "
    "where you were. A call marked as interrupted may have partly run: check its effect before relying on it "
    "or running it again.]"
)
INTERRUPTED_CALL = (
    "Interrupted: the workflow's process ended before this call finished; it may have partly run. Check the "
    "state before relying on it."
)


class NotResumable(UsageError):
    """The workflow cannot be resumed now; the message says why."""


# --- the run lock ------------------------------------------------------------------------------


def try_run_lock(workflow: Workflow) -> int | None:
    """Take the workflow's run lock (an open descriptor to keep), or None when another process holds it."""
    fd = os.open(workflow.folder / RUN_LOCK, os.O_RDWR | os.O_CREAT, 0o666)  # close-on-exec: children never hold it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def run_lock(workflow: Workflow) -> Iterator[bool]:
    """Hold the run lock for the block; yields False (and holds nothing) when another process runs it."""
    fd = try_run_lock(workflow)
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)  # the lock goes with the descriptor


def running_elsewhere(workflow: Workflow) -> bool:
    """Whether a process holds the workflow's run lock now."""
    try:
        with run_lock(workflow) as free:
            return not free
    except OSError:
        return False  # a folder that cannot hold the lock file: nothing runs there either


# --- the parent's conversation -----------------------------------------------------------------


def parent_path(workflow: Workflow) -> Path:
    """``parent.json``: the parent's conversation as last saved."""
    return workflow.folder / PARENT_FILE


def save_parent(workflow: Workflow, messages: list[Any]) -> None:
    """Save the parent's conversation (atomic); raises OSError like any write."""
    from maia.codec import message_to_dict

    data = {"saved": now_iso(), "messages": [message_to_dict(m) for m in messages]}
    workflow.save_state(PARENT_FILE, json.dumps(data, ensure_ascii=False) + "\n")


def load_parent(workflow: Workflow) -> list[Any]:
    """The saved conversation; WorkflowFileError when the file is broken, [] when there is none."""
    from maia.codec import message_from_dict

    path = parent_path(workflow)
    try:
        text = workflow.load_state(PARENT_FILE)
        if text is None:
            return []
        data = json.loads(text)
        return [message_from_dict(m) for m in data["messages"]]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise WorkflowFileError(
            _("{path}: the saved conversation cannot be read ({error}).").format(path=path, error=error)
        ) from None


def continue_from(messages: list[Any]) -> list[Any]:
    """The saved conversation ready to go on: a call left without its result gets one saying it was
    interrupted (the provider refuses a call without a result)."""
    from maia.contracts import Message, ToolResultBlock

    if messages and messages[-1].role == "assistant" and messages[-1].tool_uses:
        results = [ToolResultBlock(call.id, INTERRUPTED_CALL, True) for call in messages[-1].tool_uses]
        return [*messages, Message("user", list(results))]
    return list(messages)


# --- resumable? --------------------------------------------------------------------------------


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
