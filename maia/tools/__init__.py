"""The built-in tools (§8), in their declaration order."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from maia.contracts import Tool
from maia.provider.models import ModelInfo
from maia.tools.bash import BashTool
from maia.tools.edit import EditTool
from maia.tools.glob import GlobTool
from maia.tools.grep import GrepTool
from maia.tools.models import CurrentModelTool, ListModelsTool
from maia.tools.read import ReadTool
from maia.tools.todowrite import TodoWriteTool
from maia.tools.webfetch import WebFetchTool
from maia.tools.write import WriteTool


def builtin_tools(list_models: Callable[[], Awaitable[list[ModelInfo]]] | None = None) -> list[Tool]:
    """Read, Glob, Grep, Write, Edit, Bash, TodoWrite, WebFetch, CurrentModel, then ListModels if possible."""
    tools: list[Tool] = [
        ReadTool(),
        GlobTool(),
        GrepTool(),
        WriteTool(),
        EditTool(),
        BashTool(),
        TodoWriteTool(),
        WebFetchTool(),
        CurrentModelTool(),
    ]
    if list_models is not None:
        tools.append(ListModelsTool(list_models))
    return tools
