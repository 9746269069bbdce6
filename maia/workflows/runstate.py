"""A workflow's run state on disk: the lock a running worker holds, and the parent's saved conversation a
resumed run carries on from (what the worker and the views read; resuming itself is maia.workflows.resume)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from maia.i18n import _
from maia.workflows.registry import (
    RUN_LOCK,
    Workflow,
    WorkflowFileError,
    now_iso,
    run_lock,
    running_elsewhere,
    try_run_lock,
)

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

__all__ = [
    "INTERRUPTED_CALL",
    "PARENT_FILE",
    "RESUME_REQUEST",
    "RUN_LOCK",
    "continue_from",
    "load_parent",
    "parent_path",
    "run_lock",
    "running_elsewhere",
    "save_parent",
    "try_run_lock",
]


def parent_path(workflow: Workflow) -> Path:
    """``parent.json``: the parent's conversation as last saved."""
    return workflow.folder / PARENT_FILE


def save_parent(workflow: Workflow, messages: list[Any]) -> None:
    """Save the parent's conversation (atomic); raises OSError like any write."""
    from maia.sessions.codec import message_to_dict

    data = {"saved": now_iso(), "messages": [message_to_dict(m) for m in messages]}
    workflow.save_state(PARENT_FILE, json.dumps(data, ensure_ascii=False) + "\n")


def load_parent(workflow: Workflow) -> list[Any]:
    """The saved conversation; WorkflowFileError when the file is broken, [] when there is none."""
    from maia.sessions.codec import message_from_dict

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
    from maia.core.contracts import Message, ToolResultBlock

    if messages and messages[-1].role == "assistant" and messages[-1].tool_uses:
        results = [ToolResultBlock(call.id, INTERRUPTED_CALL, True) for call in messages[-1].tool_uses]
        return [*messages, Message("user", list(results))]
    return list(messages)
