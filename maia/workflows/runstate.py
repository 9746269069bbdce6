"""A workflow's run state on disk: the lock a running worker holds, and the parent's saved conversation a
resumed run carries on from (what the worker and the views read; resuming itself is maia.workflows.resume)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from maia.i18n import _
from maia.storage import write_atomic
from maia.workflows.registry import Workflow, WorkflowFileError, now_iso

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
    write_atomic(parent_path(workflow), json.dumps(data, ensure_ascii=False) + "\n")


def load_parent(workflow: Workflow) -> list[Any]:
    """The saved conversation; WorkflowFileError when the file is broken, [] when there is none."""
    from maia.codec import message_from_dict

    path = parent_path(workflow)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [message_from_dict(m) for m in data["messages"]]
    except FileNotFoundError:
        return []
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
