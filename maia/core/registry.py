"""The one catalogue of MAIA's own tools: the engine equips from it, and approvals, ``maia permissions
check``, rule parsing and the front ends look tools up in it by name.

What a tool *is* (read-only, the file it writes, how its summary shows, what rules match) is declared
by the tool itself (:class:`maia.core.contracts.ToolTraits`, ``subject``); this module only knows where each
built-in lives. It imports no tool at import time, so the permission engine may read it: a tool's
module is imported when that tool is first asked for.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from maia.core.contracts import Tool, ToolTraits

if TYPE_CHECKING:
    from maia.provider.models import ModelInfo

# The built-in tools, in the order the model sees them: name → (module, class).
BUILTIN: dict[str, tuple[str, str]] = {
    "Read": ("maia.tools.read", "ReadTool"),
    "Glob": ("maia.tools.glob", "GlobTool"),
    "Grep": ("maia.tools.grep", "GrepTool"),
    "Write": ("maia.tools.write", "WriteTool"),
    "Edit": ("maia.tools.edit", "EditTool"),
    "Bash": ("maia.tools.bash", "BashTool"),
    "TodoWrite": ("maia.tools.todowrite", "TodoWriteTool"),
    "WebFetch": ("maia.tools.webfetch", "WebFetchTool"),
    "CurrentModel": ("maia.tools.models", "CurrentModelTool"),
    "ListModels": ("maia.tools.models", "ListModelsTool"),  # only when the models can be listed
    # equipped by the application when there is something to offer, never by builtin_tools
    "Skill": ("maia.inputs.skills", "SkillTool"),
    "Agent": ("maia.subagents.tool", "AgentTool"),
    "RequestIntervention": ("maia.workflows.asking", "RequestIntervention"),
}
_EQUIPPED_ELSEWHERE = frozenset({"ListModels", "Skill", "Agent", "RequestIntervention"})

# MAIA's own tool names: a custom tool cannot take one, and permission rules recognise them.
OWN_TOOL_NAMES = frozenset(BUILTIN)


@functools.cache
def tool_class(name: str) -> type | None:
    """The class of the built-in tool called ``name`` (its module imported now), or None."""
    where = BUILTIN.get(name)
    if where is None:
        return None
    cls: type = getattr(importlib.import_module(where[0]), where[1])
    return cls


def traits_of(name: str, tool: Tool | None = None) -> ToolTraits:
    """A tool's traits: the object's when given, else the built-in's of that name, else none."""
    if tool is not None:
        return tool.traits
    cls = tool_class(name)
    traits = getattr(cls, "traits", None) if cls is not None else None
    return traits if isinstance(traits, ToolTraits) else ToolTraits()


@functools.cache
def builtin_tool(name: str) -> Tool | None:
    """A built-in tool by name, for callers without the equipped object (``maia permissions check``, rule
    suggestions): only those built without arguments, and Skill (its subject needs no skill)."""
    cls = tool_class(name)
    if name == "Skill" and cls is not None:
        skill: Tool = cls({})  # the Skill tool is built with the skills it offers: none here
        return skill
    cls = tool_class(name)
    if cls is None or name in _EQUIPPED_ELSEWHERE:
        return None
    tool: Tool = cls()
    return tool


def builtin_tools(list_models: Callable[[], Awaitable[list[ModelInfo]]] | None = None) -> list[Tool]:
    """Read, Glob, Grep, Write, Edit, Bash, TodoWrite, WebFetch, CurrentModel, then ListModels if possible."""
    tools: list[Tool] = [cls() for name in BUILTIN if name not in _EQUIPPED_ELSEWHERE if (cls := tool_class(name))]
    if list_models is not None:
        list_class = tool_class("ListModels")
        assert list_class is not None
        tools.append(list_class(list_models))
    return tools
