"""The parent's conversation, opened by the application layer with the parent's narrowing (§23).

Tools: built-in, custom and skills filtered by the parent's ``tools`` (``Agent`` and the workflow's own
tools are never removed), ``Agent`` over the parent's agents, ``RequestIntervention``. Rules: the
settings' plus the parent's own (a deny or ask is never lifted); ``RequestIntervention`` always allowed;
questions answered by the permission mode. Prompt: the orchestrator's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from maia.app.application import Application, AppOptions
from maia.app.loadout import Loadout
from maia.contracts import Tool
from maia.i18n import _
from maia.skills import Skill
from maia.subagents.tool import AGENT_TOOL
from maia.workflows.asking import INTERVENTION_TOOL, WorkflowToolSource, workflow_permissions
from maia.workflows.orchestrator import Orchestrator, PermissionMode, build_orchestrator_prompt, load_workflow_agents

if TYPE_CHECKING:
    from maia.app.catalog import ModelCatalog
    from maia.config import Settings
    from maia.workflows.ui import WorkflowUI

ALWAYS_KEPT = frozenset({AGENT_TOOL, INTERVENTION_TOOL})
PROTECTED_TOOLS = ("Read", "Write", "Edit")


def registry_rules(home: Path) -> tuple[str, ...]:
    """Deny rules keeping the workflows' registry out of the agents' file tools: an agent must not read a
    request's nonce nor write an answer (``maia approve`` / ``reply`` alone do)."""
    folder = (home / "workflows").resolve()
    return tuple(f"{tool}({folder}/**)" for tool in PROTECTED_TOOLS)


async def open_parent(
    orchestrator: Orchestrator,
    home: Path,
    settings: Settings,
    model: str,
    mode: PermissionMode,
    catalog: ModelCatalog,
    ui: WorkflowUI,
) -> Application:
    """Open the parent's application (started: sources loaded, agent equipped); close it with ``aclose``."""
    from maia.permissions.rules import parse_rules

    definition = orchestrator.definition
    tools_wanted = None if definition.tools is None else {name.lower() for name in definition.tools}
    skills_wanted = None if definition.skills is None else {name.lower() for name in definition.skills}
    own = parse_rules({k: list(v) for k, v in definition.permissions.items()}, where=str(definition.path))

    def keep_tool(tool: Tool) -> bool:
        name = tool.spec.name
        return name in ALWAYS_KEPT or tools_wanted is None or name.lower() in tools_wanted

    def keep_skill(skill: Skill) -> bool:
        return skills_wanted is None or skill.name.lower() in skills_wanted

    def prompt(loadout: Loadout, _start_context: str | None) -> str:
        skills = [(s.name, s.description) for s in loadout.skills.values()] if "Skill" in loadout.tools else []
        return build_orchestrator_prompt(
            definition,
            orchestrator.layout.cwd,
            max_steps=definition.max_iterations,
            context=loadout.context_file,
            skills=skills,
            sections=loadout.prompt_sections,
        )

    options = AppOptions(
        launch=orchestrator.layout.cwd,
        home=home,
        settings=settings,
        model=model,
        origin="workflow",
        deny=registry_rules(home),
        save=False,  # the workflow keeps its own traces
        max_iterations=definition.max_iterations,
        wrap_permissions=lambda check: workflow_permissions(check, mode),
        tool_filter=keep_tool,
        skill_filter=keep_skill,
        extra_rules=own.ruleset,
        omit_context=definition.omit_md,
        system_prompt=prompt,
        extra_sources=(WorkflowToolSource(lambda question: ui.asker.intervention(orchestrator.name, question)),),
        agent_loader=lambda: load_workflow_agents(orchestrator.layout, home, definition.path.parent),
    )
    app = await Application.open(options, ui, catalog=catalog)
    app.report.warnings.extend(own.warnings)
    offered = {t.spec.name.lower() for source in app.sources for t in source.tools()}
    for name in definition.tools or ():
        if name.lower() not in offered:
            app.report.warnings.append(
                _('the tool "{tool}" named in {path} does not exist here; ignored.').format(
                    tool=name, path=definition.path
                )
            )
    return app
