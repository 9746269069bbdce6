"""Test doubles for the agent loop: a recording UI and small real tools."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from maia.core.contracts import (
    Approval,
    AskAnswer,
    Permission,
    ToolContext,
    ToolSpec,
    ToolsProgress,
    ToolTraits,
)
from maia.permissions.subject import Subject, default_subject


class RecordingUI:
    """Records every callback; answers questions from a script (default: yes)."""

    def __init__(self, answers: list[AskAnswer] | None = None) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.answers = list(answers or [])
        self.questions: list[str] = []
        self.asking = 0
        self.max_asking = 0

    def on_thinking(self, thinking: bool) -> None:
        self.events.append(("thinking", thinking))

    def on_text(self, text: str) -> None:
        self.events.append(("text", text))

    def on_text_end(self) -> None:
        self.events.append(("text_end",))

    def on_reasoning(self, text: str) -> None:
        self.events.append(("reasoning", text))

    def on_tool_call(self, name: str, summary: str) -> None:
        self.events.append(("tool_call", name, summary))

    def on_tool_result(self, name: str, output: str, is_error: bool) -> None:
        self.events.append(("tool_result", name, output, is_error))

    def on_subagent_tool(self, agent: str, phase: str, name: str, summary: str, is_error: bool) -> None:
        self.events.append(("subagent_tool", agent, phase, name, summary, is_error))

    def on_warning(self, message: str) -> None:
        self.events.append(("warning", message))

    async def confirm(self, message: str) -> bool:
        return await self.ask(message) == "yes"

    async def ask(self, message: str, approval: Approval | None = None) -> AskAnswer:
        self.asking += 1
        self.max_asking = max(self.max_asking, self.asking)
        self.questions.append(message)
        await asyncio.sleep(0)  # let running tools progress while the question is open
        self.asking -= 1
        return self.answers.pop(0) if self.answers else "yes"

    def on_context_usage(self, tokens: int) -> None:
        self.events.append(("context", tokens))

    def on_tools_running(self, progress: ToolsProgress | None) -> None:
        self.events.append(("running", progress))

    def of(self, kind: str) -> list[tuple[Any, ...]]:
        """The recorded events of one kind."""
        return [e for e in self.events if e[0] == kind]


class FuncTool:
    """A tool whose behaviour is an async function of its input."""

    def __init__(
        self,
        name: str,
        run: Callable[[Mapping[str, Any]], Awaitable[str]],
        *,
        permission: Permission = "auto",
        schema: Mapping[str, Any] | None = None,
        key: Callable[[Mapping[str, Any]], str | None] | None = None,
    ) -> None:
        self._spec = ToolSpec(name, f"The {name} test tool.", schema or {"type": "object"})
        self._permission = permission
        self._run = run
        self._key = key
        self.calls: list[Mapping[str, Any]] = []

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def permission(self) -> Permission:
        return self._permission

    @property
    def traits(self) -> ToolTraits:
        return ToolTraits()

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        return default_subject(self._spec.name, tool_input)

    def describe(self, tool_input: Mapping[str, Any]) -> str:
        return ", ".join(f"{k}={v}" for k, v in tool_input.items())

    def lock_key(self, tool_input: Mapping[str, Any], launch: Path) -> str | None:
        return self._key(tool_input) if self._key else None

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        self.calls.append(tool_input)
        return await self._run(tool_input)


def echo_tool(name: str = "Echo", permission: Permission = "auto") -> FuncTool:
    """A tool returning its ``text`` input."""

    async def run(tool_input: Mapping[str, Any]) -> str:
        return f"echo:{tool_input.get('text', '')}"

    return FuncTool(name, run, permission=permission)


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    """Whether ``pid`` ends within ``seconds``."""
    for _ in range(int(seconds / 0.02)):
        if not process_alive(pid):
            return True
        await asyncio.sleep(0.02)
    return False
