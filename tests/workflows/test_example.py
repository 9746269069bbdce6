"""The example workflow of examples/workflows (release notes) run end to end against a scripted server."""

from __future__ import annotations

from pathlib import Path

from tests.app.helpers import maia
from tests.conftest import trust_project
from tests.streams import text_stream, tool_stream
from tests.workflows.conftest import WorkflowLiteLLM, agent_calls, detach, wait_ended, wait_for

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "workflows" / "release_notes"


def test_the_release_notes_example(script: WorkflowLiteLLM, project: Path) -> None:
    script.add("parent", agent_calls(("changes_collector", "changes since v2.0"), ("docs_auditor", "docs gaps")))
    script.add("changes_collector", text_stream("feature: workflows (abc123)\nTag: v2.0"))
    script.add("docs_auditor", text_stream("No gap"))
    script.add("parent", tool_stream("Write", {"path": "RELEASE_NOTES.md", "content": "# 2.1\n## New features\n"}))
    script.add("parent", text_stream("RELEASE_NOTES.md: 1 new feature. No gap."))
    trust_project(EXAMPLE.parent)  # as the example's header says
    workflow_id = detach(EXAMPLE, "Release notes for version 2.1")
    waiting = wait_for(workflow_id, lambda s: bool(s["requests"]), "the approval of Write")
    assert [(a["name"], a["state"]) for a in waiting["agents"]] == [
        ("changes_collector", "done"),
        ("docs_auditor", "done"),
    ]
    assert waiting["requests"][0]["message"] == "Allow Write: RELEASE_NOTES.md?"
    assert (waiting["permissionMode"], waiting["timeout"], waiting["cwd"]) == ("wait", 1800.0, str(project))
    assert maia("approve", workflow_id).returncode == 0
    assert wait_ended(workflow_id)["state"] == "done"
    assert (project / "RELEASE_NOTES.md").read_text() == "# 2.1\n## New features\n"
    assert maia("result", workflow_id).stdout == "RELEASE_NOTES.md: 1 new feature. No gap.\n"

    first = script.requests["parent"][0]
    system = first["messages"][0]["content"]
    assert system.startswith('You are "release_notes", the orchestrator of an autonomous MAIA workflow.')
    assert "call the RequestIntervention tool" in system and "launch both sub-agents so they work in parallel" in system
    assert "- changes_collector: Lists the user-visible changes" in system  # the Agent tool's paragraph
    assert first["messages"][-1] == {"role": "user", "content": "Release notes for version 2.1"}
    tools = sorted(t["function"]["name"] for t in first["tools"])
    assert tools == ["Agent", "Glob", "Grep", "Read", "RequestIntervention", "Write"]  # its tools: list + the two kept
    child = script.requests["changes_collector"][0]
    assert child["messages"][-1] == {"role": "user", "content": "changes since v2.0"}
    assert sorted(t["function"]["name"] for t in child["tools"]) == ["Bash", "Glob", "Grep", "Read"]
