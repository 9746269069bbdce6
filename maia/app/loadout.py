"""What an agent is equipped with (§4.5): tools from the sources, skills, rules, project instructions.

Assembling a loadout reads the rules and MAIA.md / CLAUDE.md / AGENTS.md from disk; the system prompt is
then derived from it for any starting context (a compaction summary replaces the project file)
without touching the disk again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maia.context.memory import ContextFile, find_context_file
from maia.context.prompt import build_system_prompt
from maia.core.contracts import PermissionCheck, Tool
from maia.i18n import _
from maia.inputs.skills import Skill
from maia.permissions.rules import RuleSet, Verdict, merge, parse_rules
from maia.permissions.sources import LoadedRules, load_rules

if TYPE_CHECKING:
    from maia.permissions.engine import Decision


@dataclass(slots=True)
class Loadout:
    """Tools, skills, rules and instructions of one agent, and what to tell the user about them."""

    launch: Path
    tools: dict[str, Tool]
    skills: dict[str, Skill]
    rules: LoadedRules
    extra_rules: RuleSet = field(default_factory=RuleSet)
    context_file: ContextFile | None = None
    prompt_sections: tuple[str, ...] = ()
    infos: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # worth showing in the chat, not in a script's output

    @property
    def ruleset(self) -> RuleSet:
        """The rules of the settings files plus rules added for this run (``--allow``)."""
        return merge([self.rules.ruleset, self.extra_rules])

    def system(self, start_context: str | None = None) -> str:
        """The system prompt; a compaction summary replaces the project instructions (§14.1)."""
        return build_system_prompt(
            self.launch,
            context=None if start_context else self.context_file,
            start_context=start_context,
            skills=[(s.name, s.description) for s in self.skills.values()],
            extra_sections=self.prompt_sections,
        )

    def permission_check(self) -> PermissionCheck:
        """The runner's permission callback over these rules."""
        ruleset = self.ruleset
        launch = self.launch
        loadout = self

        broken = self.rules.broken

        def check(name: str, tool_input: Mapping[str, Any]) -> Decision:
            # the engine (program tables, bash reader) loads at the first tool call, not at start-up
            from maia.permissions.defaults import safe_default
            from maia.permissions.engine import Decision, explain

            # the tool declares what rules match against; read at call time (MCP tools come and go)
            tool = loadout.tools.get(name)
            decision = safe_default(
                name, tool_input, explain(name, tool_input, ruleset, launch, tool=tool), launch, tool
            )
            if broken and decision.verdict == Verdict.ALLOW:
                # rules that could not be read might deny this call: nothing is allowed without asking
                return Decision(
                    Verdict.ASK,
                    None,
                    _("the rules of {path} cannot be read: every call asks until the file is fixed").format(
                        path=broken[0]
                    ),
                    doubt=True,
                )
            return decision

        return check


def assemble(
    launch: Path,
    home: Path,
    tools: Sequence[Tool],
    skills: Mapping[str, Skill],
    *,
    extra_allow: Sequence[str] = (),
    prompt_sections: Sequence[str] = (),
    omit_context: bool = False,
) -> Loadout:
    """Read the rules and the project instructions, and equip an agent with ``tools`` and ``skills``.

    On a name clash the first tool wins (built-in tools come first, so a source cannot replace them).
    """
    infos: list[str] = []
    warnings: list[str] = []
    notices: list[str] = []
    context = None if omit_context else find_context_file(launch)
    if context is not None:
        infos.append(_("Instructions loaded from {path}.").format(path=context.path))
    elif not omit_context:
        notices.append(
            _("No MAIA.md, CLAUDE.md or AGENTS.md in {folder}: no project instructions.").format(folder=launch)
        )
    by_name: dict[str, Tool] = {}
    for tool in tools:
        by_name.setdefault(tool.spec.name, tool)
    rules = load_rules(home, launch)
    warnings.extend(rules.warnings)
    extra = parse_rules({"allow": list(extra_allow)}, where="--allow") if extra_allow else None
    if extra is not None:
        warnings.extend(extra.warnings)
    if rules.ruleset.empty and not extra_allow:
        infos.append(
            _(
                "No permission rules defined: reading and searching inside the launch folder is allowed "
                "(secret-looking files excepted); every other tool use asks for confirmation."
            )
        )
    else:
        counts = [
            f"{s.path} ({len(s.ruleset.allow) + len(s.ruleset.ask) + len(s.ruleset.deny)})"
            for s in rules.sources
            if s.exists and not s.ruleset.empty
        ]
        if counts:
            infos.append(_("Permission rules loaded: {files}.").format(files=", ".join(counts)))
    return Loadout(
        launch=launch,
        tools=by_name,
        skills=dict(skills),
        rules=rules,
        extra_rules=extra.ruleset if extra else RuleSet(),
        context_file=context,
        prompt_sections=tuple(prompt_sections),
        infos=infos,
        warnings=warnings,
        notices=notices,
    )
