"""The tool sources every conversation starts with: built-in tools, custom tools, skills.

Each implements :class:`maia.core.contracts.ToolSource`: the application starts it once, reads its tools
when it assembles an agent, and closes it at the end. MCP servers are one more source (maia/mcp).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from maia.core.contracts import SourceReport, Tool
from maia.i18n import _
from maia.inputs.skills import Skill, SkillTool, load_skills
from maia.provider.models import ModelInfo
from maia.tools import builtin_tools
from maia.tools.custom import load_custom_tools


class BuiltinSource:
    """Read, Glob, Grep, Write, Edit, Bash, TodoWrite, WebFetch, CurrentModel, ListModels."""

    name = "builtin"

    def __init__(self, list_models: Callable[[], Awaitable[list[ModelInfo]]] | None = None) -> None:
        self._tools = builtin_tools(list_models)

    async def start(self) -> SourceReport:
        """Nothing to load."""
        return SourceReport()

    def tools(self) -> list[Tool]:
        """The built-in tools, in their declaration order."""
        return list(self._tools)

    async def aclose(self) -> None:
        """Nothing to release."""


class CustomToolSource:
    """``./.maia/tools`` and ``~/.maia/tools`` (§10): read from disk at each start."""

    name = "custom"

    def __init__(self, launch: Path, home: Path) -> None:
        self.launch = launch
        self.home = home
        self._tools: list[Tool] = []

    async def start(self) -> SourceReport:
        """Load every TOOL.json; a broken one is a warning, the others load."""
        loaded = load_custom_tools(self.launch, self.home)
        self._tools = list(loaded.tools)
        infos = (
            (_("Custom tools loaded:") + "".join(f"\n- {t.spec.name}" for t in loaded.tools),) if loaded.tools else ()
        )
        return SourceReport(infos, tuple(loaded.warnings))

    def tools(self) -> list[Tool]:
        """The custom tools that loaded."""
        return list(self._tools)

    async def aclose(self) -> None:
        """Nothing to release."""


class SkillSource:
    """Skills (§11.3) in their four folders: the Skill tool, and the skills ``§name`` runs."""

    name = "skills"

    def __init__(self, launch: Path, home: Path) -> None:
        self.launch = launch
        self.home = home
        self.skills: dict[str, Skill] = {}

    async def start(self) -> SourceReport:
        """Load every SKILL.md; a broken one is a warning, the others load."""
        loaded = load_skills(self.launch, self.home)
        self.skills = dict(loaded.skills)
        infos = (_("Skills loaded: {names}.").format(names=", ".join(sorted(self.skills))),) if self.skills else ()
        return SourceReport(infos, tuple(loaded.warnings))

    def tools(self) -> list[Tool]:
        """The Skill tool, when there is at least one skill."""
        return [SkillTool(self.skills)] if self.skills else []

    async def aclose(self) -> None:
        """Nothing to release."""
