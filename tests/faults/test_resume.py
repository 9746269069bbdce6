"""Finding 9: a workflow whose worker dies is not lost: ``maia resume`` carries it on.

After ``kill -9`` of the worker while a sub-agent runs: the workflow is in error, marked resumable
(``maia workflows``, ``maia workflow --json``), no process is left; ``maia resume`` finishes it from
the saved conversation (the parent sees its earlier call marked interrupted and the resume note), the
result is saved and printed. A workflow still running is never resumed (one run at a time), and a
finished one has nothing to resume.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from pytest_httpserver import HTTPServer

from maia.workflows.registry import Workflow, try_run_lock
from tests.app.helpers import maia, wait_until
from tests.streams import text_stream, tool_stream
from tests.subagents.conftest import BODY, agent_md
from tests.workflows.conftest import (
    PARENT_BODY,
    Gate,
    WorkflowLiteLLM,
    agent_calls,
    detach,
    show,
    wait_ended,
    wait_for,
)

WAIT = 90.0


def flows(tmp_path: Path) -> Path:
    folder = tmp_path / "flows"
    for name, text in (
        ("boss", agent_md("boss", "", PARENT_BODY.format(agents="rev"), "Runs reviews.")),
        ("rev", agent_md("rev", "", BODY)),
    ):
        (folder / name).mkdir(parents=True)
        (folder / name / "AGENT.md").write_text(text)
    return folder / "boss"


def saved_messages(folder: Path) -> int:
    try:
        return len(json.loads((folder / "parent.json").read_text())["messages"])
    except (OSError, ValueError, KeyError):
        return 0


def test_a_killed_worker_is_resumed_and_finishes(server: HTTPServer, home: Path, tmp_path: Path) -> None:
    script = WorkflowLiteLLM(server)
    gate = Gate()
    script.add("parent", agent_calls(("rev", "look at the code")))
    script.add("rev", gate.hold(text_stream("never sent")))
    workflow = detach(flows(tmp_path), "review", "--permission-mode", "allow")
    folder = home / "workflows" / workflow
    try:
        assert gate.reached.wait(WAIT), "the sub-agent never asked the model"
        wait_until(lambda: saved_messages(folder) >= 2, timeout=WAIT, what="the parent's conversation to be saved")
        worker = int(json.loads((folder / "workflow.json").read_text())["pid"])
        os.kill(worker, signal.SIGKILL)
        lost = wait_ended(workflow)
    finally:
        gate.open()
    assert lost["state"] == "error" and lost["resumable"] is True
    listing = maia("workflows")
    assert f"maia resume {workflow}" in listing.stdout, listing.stdout

    script.add("parent", text_stream("Final report: the review was cut short, nothing found."))
    resumed = maia("resume", workflow, "--quiet", timeout=WAIT)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "Final report: the review was cut short, nothing found."
    after = show(workflow)
    assert after["state"] == "done" and after["resumes"] == 1 and after["resumable"] is False
    assert maia("result", workflow).stdout.strip() == "Final report: the review was cut short, nothing found."
    # the parent went on from its saved conversation: its call marked interrupted, then the resume note
    body = script.requests["parent"][-1]
    tool_results = [m for m in body["messages"] if m["role"] == "tool"]
    assert tool_results and "Interrupted" in tool_results[-1]["content"]
    assert "has just been resumed" in json.dumps(body["messages"][-1])
    rev = next(a for a in after["agents"] if a["name"] == "rev")
    assert rev["state"] == "error"  # the run the kill cut is recorded as such


def test_a_running_workflow_is_never_resumed(server: HTTPServer, home: Path, tmp_path: Path) -> None:
    script = WorkflowLiteLLM(server)
    gate = Gate()
    script.add("parent", gate.hold(text_stream("Done.")))
    workflow = detach(flows(tmp_path), "review", "--permission-mode", "allow")
    try:
        assert gate.reached.wait(WAIT)
        refused = maia("resume", workflow)
        assert refused.returncode == 2
        assert "still running" in refused.stderr
        # the worker holds the run lock: a second runner (a queue delivering twice) cannot take it
        assert try_run_lock(Workflow(home / "workflows" / workflow)) is None
    finally:
        gate.open()
    ended = wait_ended(workflow)
    assert ended["state"] == "done"
    assert maia("resume", workflow).returncode == 2  # done: nothing to resume


def test_a_worker_killed_while_the_model_answers_is_resumed_in_the_background(
    server: HTTPServer, home: Path, tmp_path: Path
) -> None:
    """Killed before the parent's first answer: the record says the process is gone, the workflow is
    resumable, and ``maia resume --detach`` finishes it from the saved task."""
    script = WorkflowLiteLLM(server)
    gate = Gate()
    script.add("parent", gate.hold(text_stream("never sent")))
    workflow = detach(flows(tmp_path), "review", "--permission-mode", "allow")
    folder = home / "workflows" / workflow
    try:
        assert gate.reached.wait(WAIT)
        wait_until(lambda: saved_messages(folder) >= 1, timeout=WAIT, what="the task to be saved")
        os.kill(int(json.loads((folder / "workflow.json").read_text())["pid"]), signal.SIGKILL)
        lost = wait_ended(workflow)
    finally:
        gate.open()
    assert lost["label"] == "error (process lost)" and lost["resumable"] is True
    script.add("parent", text_stream("Report after the restart."))
    started = maia("resume", workflow, "--detach")
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == workflow
    ended = wait_ended(workflow)
    assert ended["state"] == "done", ended
    assert maia("result", workflow).stdout.strip() == "Report after the restart."
    body = script.requests["parent"][-1]
    users = [m for m in body["messages"] if m["role"] == "user"]
    assert len(users) == 1 and "review" in json.dumps(users[0]) and "has just been resumed" in json.dumps(users[0])


def test_a_question_left_by_the_lost_run_is_withdrawn_on_resume(server: HTTPServer, home: Path, tmp_path: Path) -> None:
    """The worker died while a sub-agent's question waited for ``maia approve``: after the resume that
    question is withdrawn (nobody waits for it), and the workflow does not show it as waiting."""
    script = WorkflowLiteLLM(server)
    script.add("parent", agent_calls(("rev", "write the file")))
    script.add("rev", tool_stream("Write", {"path": "out.txt", "content": "hi"}))
    workflow = detach(flows(tmp_path), "write it")  # permission mode wait: the Write is asked
    folder = home / "workflows" / workflow
    waiting = wait_for(workflow, lambda s: bool(s["requests"]), "the question")
    assert [r["id"] for r in waiting["requests"]] == ["r1"]
    wait_until(lambda: saved_messages(folder) >= 2, timeout=WAIT, what="the parent's conversation to be saved")
    os.kill(int(waiting["pid"]), signal.SIGKILL)
    assert wait_ended(workflow)["resumable"] is True
    script.add("parent", text_stream("Could not write it: the run was cut."))
    resumed = maia("resume", workflow, "--quiet", timeout=WAIT)
    assert resumed.returncode == 0, resumed.stderr
    after = show(workflow)
    assert after["state"] == "done" and after["requests"] == []
    assert json.loads((folder / "requests" / "r1.json").read_text())["state"] == "withdrawn"
    assert maia("approve", workflow, "r1").returncode != 0  # an answer to it is refused
