"""Equipping an application from an AGENT.md: the one path a sub-agent's child and a workflow's parent
both take (their tool and skill filters, the file's own rules, its instructions file choice, and the
warnings for names it gives that do not exist)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from maia.i18n import _
from maia.permissions.rules import RuleSet, parse_rules

if TYPE_CHECKING:
    from maia.app.application import Application
    from maia.app.loadout import Loadout
    from maia.core.contracts import Tool
    from maia.inputs.skills import Skill
    from maia.subagents.definitions import AgentDefinition


@dataclass(slots=True)
class Equipment:
    """What an AGENT.md asks of the application it runs in."""

    definition: AgentDefinition
    always: frozenset[str] = frozenset()  # tools kept whatever the file says (the workflow's own)
    never: frozenset[str] = frozenset()  # tools never given (a sub-agent gets no Agent tool)
    rules: RuleSet = field(init=False)
    warnings: list[str] = field(init=False)

    def __post_init__(self) -> None:
        definition = self.definition
        own = parse_rules({k: list(v) for k, v in definition.permissions.items()}, where=str(definition.path))
        self.rules = own.ruleset
        self.warnings = list(own.warnings)

    def keep_tool(self, tool: Tool) -> bool:
        """The file's ``tools:`` list (case-insensitive; none: every tool), within ``always`` and ``never``."""
        name = tool.spec.name
        if name in self.never:
            return False
        wanted = self.definition.tools
        return name in self.always or wanted is None or name.lower() in {n.lower() for n in wanted}

    def keep_skill(self, skill: Skill) -> bool:
        """The file's ``skills:`` list (case-insensitive; none: every skill, empty: none)."""
        wanted = self.definition.skills
        return wanted is None or skill.name.lower() in {n.lower() for n in wanted}

    def prompt_skills(self, loadout: Loadout) -> list[tuple[str, str]]:
        """The skills the system prompt lists: those kept, when the Skill tool is."""
        return [(s.name, s.description) for s in loadout.skills.values()] if "Skill" in loadout.tools else []

    def missing(self, app: Application) -> list[str]:
        """One warning per tool or skill the file names that the started application does not offer."""
        definition = self.definition
        offered = {t.spec.name.lower() for source in app.sources for t in source.tools()}
        warnings = [
            _('the tool "{tool}" named in {path} does not exist here; ignored.').format(tool=name, path=definition.path)
            for name in _absent(definition.tools, offered)
        ]
        known = {name.lower() for name in app.skill_source.skills}
        warnings += [
            _('the skill "{skill}" named in {path} does not exist; ignored.').format(skill=name, path=definition.path)
            for name in _absent(definition.skills, known)
        ]
        return warnings


def _absent(names: Iterable[str] | None, present: set[str]) -> list[str]:
    return [name for name in names or () if name.lower() not in present]
