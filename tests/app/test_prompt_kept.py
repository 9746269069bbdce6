"""A front end's own system prompt (a sub-agent's, a workflow orchestrator's) survives a compaction."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from maia.app.application import Application, AppOptions
from maia.app.loadout import Loadout
from maia.core.settings import load_settings
from maia.provider.fake import ScriptedProvider, text_turn
from tests.agent.helpers import RecordingUI


async def test_a_compaction_keeps_the_front_end_s_own_prompt_with_the_summary(
    home: Path, project: Path, write_settings: Callable[..., Path]
) -> None:
    write_settings()

    def prompt(_loadout: Loadout, start_context: str | None) -> str:
        return "You are rev, a sub-agent." + (f"\n\nEarlier: {start_context}" if start_context else "")

    options = AppOptions(
        launch=project, home=home, settings=load_settings(home), model="m", save=False, system_prompt=prompt
    )
    app = await Application.open(
        options,
        RecordingUI(),  # type: ignore[arg-type]
        provider=ScriptedProvider([text_turn("first answer"), text_turn("THE SUMMARY")]),
    )
    try:
        assert app.agent.system == "You are rev, a sub-agent."

        async def never(_wait: object) -> bool:
            return False

        await app.send("do the first part", on_wait=never)
        assert await app.conversation.compact() is not None
        assert app.agent.system == "You are rev, a sub-agent.\n\nEarlier: THE SUMMARY"
    finally:
        await app.aclose()


def test_the_sub_agent_and_orchestrator_prompts_carry_the_summary_in_place_of_the_project_file(
    tmp_path: Path,
) -> None:
    """After a compaction the summary replaces the project instructions, as in MAIA's own prompt (§14.1); the
    definition's sections stay."""
    from maia.context.memory import ContextFile
    from maia.subagents.definitions import AgentDefinition
    from maia.subagents.prompt import build_subagent_prompt
    from maia.workflows.orchestrator import build_orchestrator_prompt

    definition = AgentDefinition(
        "rev", "Reviews.", tmp_path / "AGENT.md", "project", "Look closely.", "Review.", "One paragraph."
    )
    context = ContextFile(tmp_path / "MAIA.md", "PROJECT RULES")
    builds = {
        "sub-agent": lambda start: build_subagent_prompt(definition, tmp_path, context=context, start_context=start),
        "orchestrator": lambda start: build_orchestrator_prompt(
            definition, tmp_path, max_steps=50, context=context, start_context=start
        ),
    }
    for kind, build in builds.items():
        before, after = build(None), build("THE SUMMARY")
        assert "PROJECT RULES" in before and "THE SUMMARY" not in before, kind
        assert "PROJECT RULES" not in after, kind
        assert "# Starting context: compacted summary of the previous conversation\n\nTHE SUMMARY" in after, kind
        assert "# Output\n\nOne paragraph." in after and '"rev"' in after, kind
