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
from maia.subagents.tool import AGENT_TOOL
from maia.workflows.asking import INTERVENTION_TOOL, WorkflowToolSource, workflow_permissions
from maia.workflows.orchestrator import Orchestrator, PermissionMode, build_orchestrator_prompt, load_workflow_agents

if TYPE_CHECKING:
    from maia.app.catalog import ModelCatalog
    from maia.core.settings import Settings
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
    from maia.app.equipment import Equipment

    definition = orchestrator.definition
    equipment = Equipment(definition, always=ALWAYS_KEPT)

    def prompt(loadout: Loadout, start_context: str | None) -> str:
        return build_orchestrator_prompt(
            definition,
            orchestrator.layout.launch,
            max_steps=definition.max_iterations,
            context=loadout.context_file,
            skills=equipment.prompt_skills(loadout),
            sections=loadout.prompt_sections,
            start_context=start_context,  # after a compaction: the summary of the work so far
        )

    options = AppOptions(
        launch=orchestrator.layout.launch,
        home=home,
        settings=settings,
        model=model,
        origin="workflow",
        deny=registry_rules(home),
        save=False,  # the workflow keeps its own traces
        max_iterations=definition.max_iterations,
        wrap_permissions=lambda check: workflow_permissions(check, mode),
        tool_filter=equipment.keep_tool,
        skill_filter=equipment.keep_skill,
        extra_rules=equipment.rules,
        omit_context=definition.omit_md,
        system_prompt=prompt,
        extra_sources=(WorkflowToolSource(lambda question: ui.asker.intervention(orchestrator.name, question)),),
        agent_loader=lambda: load_workflow_agents(orchestrator.layout, home, definition.path.parent),
    )
    app = await Application.open(options, ui, catalog=catalog)
    app.report.warnings.extend([*equipment.warnings, *equipment.missing(app)])
    return app
