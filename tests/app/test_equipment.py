"""One AGENT.md equipment path: a sub-agent's child and a workflow's parent filter tools and skills,
add the file's rules and warn about unknown names the same way (maia/app/equipment.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maia.app.application import Application, AppOptions
from maia.app.equipment import Equipment
from maia.core.settings import load_settings
from maia.provider.fake import ScriptedProvider
from maia.subagents.definitions import parse_agent
from tests.agent.helpers import RecordingUI

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agents" / "code_reviewer" / "AGENT.md"


def _definition(tmp_path: Path, header: str) -> Path:
    folder = tmp_path / "agents" / "checker"
    folder.mkdir(parents=True)
    text = EXAMPLE.read_text(encoding="utf-8")
    body = text[text.index("\n---\n", 4) + 5 :]
    (folder / "AGENT.md").write_text(f"---\nname: checker\ndescription: Checks.\n{header}---\n{body}")
    return folder / "AGENT.md"


async def test_filters_rules_and_unknown_names(tmp_path: Path, home: Path, project: Path, write_settings: Any) -> None:
    write_settings()
    path = _definition(tmp_path, "tools: read, Bash, Teleport\nskills: [ghost]\npermissions:\n  deny: [Bash(rm *)]\n")
    definition = parse_agent(path).definition
    equipment = Equipment(definition, always=frozenset({"RequestIntervention"}), never=frozenset({"Bash"}))
    assert [r.text for r in equipment.rules.deny] == ["Bash(rm *)"]
    options = AppOptions(
        launch=project,
        home=home,
        settings=load_settings(home),
        model="m",
        save=False,
        tool_filter=equipment.keep_tool,
        skill_filter=equipment.keep_skill,
        extra_rules=equipment.rules,
    )
    app = await Application.open(options, RecordingUI([]), provider=ScriptedProvider([]))  # type: ignore[arg-type]
    try:
        assert sorted(app.conversation.loadout.tools) == ["Read"]  # "read" kept, Bash never
        assert equipment.missing(app) == [
            f'the tool "Teleport" named in {path} does not exist here; ignored.',
            f'the skill "ghost" named in {path} does not exist; ignored.',
        ]
    finally:
        await app.aclose()


def test_the_child_and_the_workflow_parent_take_this_path() -> None:
    root = Path(__file__).resolve().parents[2] / "maia"
    for module in ("frontends/subagent.py", "workflows/equip.py"):
        text = (root / module).read_text(encoding="utf-8")
        assert "Equipment(" in text and "parse_rules(" not in text and "tools_wanted" not in text
