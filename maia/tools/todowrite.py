"""TodoWrite: the session's task list, replaced at each call, shown as ☐ ▶ ☑."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maia.core.contracts import ToolContext, ToolTraits
from maia.i18n import _
from maia.tools.base import BuiltinTool, ToolError

MARKS = {"pending": "☐", "in_progress": "▶", "completed": "☑"}


class TodoWriteTool(BuiltinTool):
    """Keep a task list."""

    traits = ToolTraits(read_only=True)

    name = "TodoWrite"
    description = (
        "Write the task list for the current work (it replaces the previous list). Use it for work of 3 "
        "steps or more; keep exactly one task in_progress, with activeForm saying what is being done."
    )
    schema = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "The task, imperative (e.g. Run the tests)."},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        "activeForm": {"type": "string", "description": "The task while running (Running tests)."},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["todos"],
    }

    def __init__(self) -> None:
        self.todos: list[dict[str, str]] = []

    def describe(self, tool_input: Mapping[str, Any]) -> str:
        """How many tasks, how many done."""
        todos = tool_input.get("todos")
        if not isinstance(todos, list):
            return ""
        done = sum(1 for t in todos if isinstance(t, dict) and t.get("status") == "completed")
        return _("{done}/{total} done").format(done=done, total=len(todos))

    def lock_key(self, tool_input: Mapping[str, Any], launch: Path) -> str | None:
        """Two lists written in one answer apply in order."""
        return "todowrite"

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Replace the list and render it."""
        todos = tool_input.get("todos")
        if not isinstance(todos, list):
            raise ToolError(_('Parameter "todos" must be a list of tasks.'))
        self.todos = [
            {
                "content": str(t.get("content", "")),
                "status": str(t.get("status", "pending")),
                "activeForm": str(t.get("activeForm", "")),
            }
            for t in todos
            if isinstance(t, dict)
        ]
        return render_todos(self.todos)


def render_todos(todos: list[dict[str, str]]) -> str:
    """☐ pending, ▶ in progress (its activeForm), ☑ completed; a warning when several are in progress."""
    if not todos:
        return _("(the task list is empty)")
    lines = []
    for todo in todos:
        status = todo["status"]
        text = todo["activeForm"] if status == "in_progress" and todo["activeForm"] else todo["content"]
        lines.append(f"{MARKS.get(status, '☐')} {text}")
    running = sum(1 for t in todos if t["status"] == "in_progress")
    if running > 1:
        lines.append(
            _("Warning: {count} tasks are in progress; keep only one in_progress at a time.").format(count=running)
        )
    return "\n".join(lines)
