"""Building the agent from disk (§4.5 ``initializeAgent``): prompt, tools, custom tools, skills, rules."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maia.context.memory import ContextFile, find_context_file
from maia.context.prompt import build_system_prompt
from maia.contracts import Tool
from maia.i18n import _
from maia.permissions.engine import Decision, explain
from maia.permissions.rules import RuleSet, merge, parse_rules
from maia.permissions.sources import LoadedRules, load_rules
from maia.provider.models import ModelInfo
from maia.skills import Skill, SkillTool, load_skills
from maia.tools import builtin_tools
from maia.tools.custom import load_custom_tools


@dataclass(slots=True)
class AgentSetup:
    """Everything a session needs from disk, and what to tell the user about it."""

    system: str
    tools: dict[str, Tool]
    skills: dict[str, Skill]
    rules: LoadedRules
    extra_rules: RuleSet = field(default_factory=RuleSet)
    context_file: ContextFile | None = None
    infos: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @property
    def ruleset(self) -> RuleSet:
        """The rules of the settings files plus rules added for this run (``--allow``)."""
        return merge([self.rules.ruleset, self.extra_rules])

    def permission_check(self, cwd: Path) -> Callable[[str, Mapping[str, Any]], Decision]:
        """The runner's permission callback over these rules."""
        ruleset = self.ruleset
        tools = self.tools

        def check(name: str, tool_input: Mapping[str, Any]) -> Decision:
            # the tool says what rules match against (custom tools: declared parameters, defaults in)
            return explain(name, tool_input, ruleset, cwd, tool=tools.get(name))

        return check


def build_agent(
    launch: Path,
    home: Path,
    *,
    start_context: str | None = None,
    list_models: Callable[[], Awaitable[list[ModelInfo]]] | None = None,
    extra_allow: Sequence[str] = (),
) -> AgentSetup:
    """Load MAIA.md, skills, built-in and custom tools and rules; the summary replaces MAIA.md (§14.1)."""
    infos: list[str] = []
    warnings: list[str] = []
    notices: list[str] = []  # warnings worth showing in the chat, not in a script's output
    context = None if start_context else find_context_file(launch)
    if start_context:
        infos.append(_("Starting context: the compacted summary of the previous conversation."))
    elif context is not None:
        infos.append(_("Instructions loaded from {path}.").format(path=context.path))
    else:
        notices.append(
            _("No MAIA.md, CLAUDE.md or AGENTS.md in {folder}: no project instructions.").format(folder=launch)
        )
    skills = load_skills(launch, home)
    warnings.extend(skills.warnings)
    tools: dict[str, Tool] = {t.spec.name: t for t in builtin_tools(list_models)}
    custom = load_custom_tools(launch, home)
    warnings.extend(custom.warnings)
    for tool in custom.tools:
        if tool.spec.name not in tools:
            tools[tool.spec.name] = tool
    if custom.tools:
        infos.append(_("Custom tools loaded:") + "".join(f"\n- {t.spec.name}" for t in custom.tools))
    if skills.skills:
        tools["Skill"] = SkillTool(skills.skills)
        infos.append(_("Skills loaded: {names}.").format(names=", ".join(sorted(skills.skills))))
    rules = load_rules(home, launch)
    warnings.extend(rules.warnings)
    extra = parse_rules({"allow": list(extra_allow)}, where="--allow") if extra_allow else None
    if extra is not None:
        warnings.extend(extra.warnings)
    if rules.ruleset.empty and not extra_allow:
        infos.append(_("No permission rules defined: every tool use asks for confirmation."))
    else:
        counts = [
            f"{s.path} ({len(s.ruleset.allow) + len(s.ruleset.ask) + len(s.ruleset.deny)})"
            for s in rules.sources
            if s.exists and not s.ruleset.empty
        ]
        if counts:
            infos.append(_("Permission rules loaded: {files}.").format(files=", ".join(counts)))
    system = build_system_prompt(
        launch,
        context=context,
        start_context=start_context,
        skills=[(s.name, s.description) for s in skills.skills.values()],
    )
    return AgentSetup(
        system, tools, skills.skills, rules, extra.ruleset if extra else RuleSet(), context, infos, warnings, notices
    )
