"""The examples of examples/ load without a warning through the code that uses them, and the tool runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from maia.core.contracts import ToolContext
from tests.conftest import trust_project
from tests.docs.markdown import REPO

EXAMPLES = REPO / "examples"


async def test_the_addition_tool_loads_and_runs(project: Path, home: Path) -> None:
    from maia.tools.base import ToolError
    from maia.tools.custom import load_custom_tools

    shutil.copytree(EXAMPLES / "tools" / "addition", project / ".maia" / "tools" / "addition")
    trust_project(project)  # a project's tools load in a folder the user trusted
    loaded = load_custom_tools(project, home)
    assert loaded.warnings == []
    (tool,) = loaded.tools
    spec = tool.spec
    assert spec.name == "Addition" and spec.input_schema["additionalProperties"] is False
    assert {name: p["type"] for name, p in spec.input_schema["properties"].items()} == {
        "param1": "number",
        "param2": "number",
        "param3": "number",
    }
    assert "required" not in spec.input_schema  # every parameter has a default
    ctx = ToolContext(launch=project)
    assert await tool.execute({"param1": 2, "param2": 3.5}, ctx) == "5.5\n"
    assert await tool.execute({"param1": 40, "param3": 2}, ctx) == "42\n"
    with pytest.raises(ToolError) as failure:  # the script's own error reaches the model
        await tool.execute({"param1": "two"}, ctx)
    assert "[exit code: 2]" in str(failure.value) and "not a number" in str(failure.value)


async def test_the_addition_tool_runs_in_the_sandbox(project: Path, home: Path) -> None:
    from maia.process.sandbox.policy import landlock_abi, policy_from_settings
    from maia.tools.custom import load_custom_tools

    if landlock_abi()[0] < 1:
        pytest.skip("this kernel has no Landlock")
    shutil.copytree(EXAMPLES / "tools" / "addition", project / ".maia" / "tools" / "addition")
    trust_project(project)
    (tool,) = load_custom_tools(project, home).tools
    policy = policy_from_settings(None, project)
    assert policy is not None
    assert await tool.execute({"param1": 1, "param2": 1}, ToolContext(launch=project, sandbox=policy)) == "2\n"


def test_the_code_reviewer_agent_parses_without_warnings(project: Path, home: Path) -> None:
    from maia.subagents.definitions import load_agents, parse_agent

    parsed = parse_agent(EXAMPLES / "agents" / "code_reviewer" / "AGENT.md")
    assert parsed.warnings == []
    agent = parsed.definition
    assert agent.name == "code_reviewer" and agent.tools == ("Read", "Grep", "Glob")
    assert agent.permissions["deny"] == ("Write", "Edit", "Bash") and agent.effort == "medium"
    assert agent.instructions and agent.missions and agent.constraints and "severity" in agent.output
    shutil.copytree(EXAMPLES / "agents" / "code_reviewer", project / ".maia" / "agents" / "code_reviewer")
    loaded = load_agents(home, project)
    assert loaded.warnings == [] and list(loaded.agents) == ["code_reviewer"]


def test_the_commit_message_skill_loads_and_runs(project: Path, home: Path) -> None:
    from maia.inputs.prepare import Prompt, prepare_request
    from maia.inputs.skills import load_skills

    shutil.copytree(EXAMPLES / "skills" / "commit-message", project / ".maia" / "skills" / "commit-message")
    loaded = load_skills(project, home)
    assert loaded.warnings == []
    skill = loaded.skills["commit-message"]
    assert skill.description.startswith("Writes a commit message for the changes staged in git")
    assert "git diff --cached" in skill.body and "ARGUMENTS:" in skill.body
    prepared = prepare_request("§commit-message the ticket is PROJ-42", project, loaded.skills)
    assert isinstance(prepared, Prompt) and prepared.skill == "commit-message"
    assert prepared.text.startswith("Write a commit message for the changes staged in git.")
    assert prepared.text.endswith("ARGUMENTS: the ticket is PROJ-42")
    alone = prepare_request("§Commit-Message", project, loaded.skills)
    assert isinstance(alone, Prompt) and "ARGUMENTS: " not in alone.text.splitlines()[-1]


async def test_the_skill_tool_gives_the_example(project: Path, home: Path) -> None:
    from maia.inputs.skills import SkillTool, load_skills

    shutil.copytree(EXAMPLES / "skills" / "commit-message", project / ".maia" / "skills" / "commit-message")
    tool = SkillTool(load_skills(project, home).skills)
    assert "commit-message: Writes a commit message" in tool.description
    text = await tool.execute({"skill": "commit-message", "args": "in French"}, ToolContext(launch=project))
    assert text.endswith("ARGUMENTS: in French")


def test_the_release_notes_workflow_loads(project: Path, home: Path) -> None:
    from maia.workflows.orchestrator import load_orchestrator

    trust_project(EXAMPLES / "workflows")  # as the example's header says
    orchestrator = load_orchestrator(EXAMPLES / "workflows" / "release_notes", home, project)
    assert orchestrator.warnings == [] and orchestrator.agent_warnings == []
    assert orchestrator.name == "release_notes"
    assert sorted(orchestrator.agents) == ["changes_collector", "docs_auditor"]
    assert orchestrator.mentioned == ["changes_collector", "docs_auditor"]
    assert (orchestrator.timeout, orchestrator.permission_mode) == (1800.0, "wait")
    assert orchestrator.layout.launch == project  # outside .maia/agents: the workflow works in the launch folder
    assert orchestrator.definition.permissions["ask"] == ("Write",)
