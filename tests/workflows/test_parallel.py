"""A detached workflow whose parent runs two sub-agents in parallel, watched from other processes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.app.helpers import maia, wait_until
from tests.streams import text_stream, tool_stream
from tests.workflows.conftest import WAIT, Gate, WorkflowLiteLLM, agent_calls, detach, show, wait_ended


def test_two_subagents_run_in_parallel_and_the_workflow_ends_done(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], make_sub: Callable[..., Path], home: Path
) -> None:
    make_sub("rev")
    make_sub("doc")
    parent = make_parent(header="permissions:\n  allow: [Agent]", agents="rev and doc")
    both = Gate()
    script.add("parent", agent_calls(("rev", "review a.py"), ("doc", "check the docs")))
    script.add("rev", both.hold(text_stream("a.py is fine.")))
    script.add("doc", both.hold(text_stream("The docs are fine.")))
    script.add("parent", text_stream("Both are fine."))
    workflow_id = detach(parent)

    # each answer is held until the test opens the gate: both requests arriving proves they run side by side
    wait_until(lambda: script.seen("rev") == 1 and script.seen("doc") == 1, WAIT, "both sub-agents asking the model")
    running = show(workflow_id)
    assert running["state"] == "running"
    assert [(a["name"], a["state"], a["active"]) for a in running["agents"]] == [
        ("doc", "running", 1),
        ("rev", "running", 1),
    ]
    both.open()
    ended = wait_ended(workflow_id)
    assert ended["state"] == "done", ended
    assert [(a["name"], a["state"], a["runs"]) for a in ended["agents"]] == [("doc", "done", 1), ("rev", "done", 1)]
    result = maia("result", workflow_id)
    assert result.returncode == 0 and result.stdout == "Both are fine.\n"
    folder = home / "workflows" / workflow_id
    traces = sorted(p.name for p in (folder / "traces").iterdir())
    assert traces == ["boss.json", "doc.json", "rev.json"]
    events = [json.loads(line)["event"] for line in (folder / "events.jsonl").read_text().splitlines()]
    assert events[0] == "started" and events[-1] == "ended"
    assert events.count("agent_started") == 2 and events.count("agent_finished") == 2
    assert show("last")["id"] == workflow_id


def test_watch_follows_the_workflow_to_its_end(script: WorkflowLiteLLM, make_parent: Callable[..., Path]) -> None:
    import subprocess
    import sys

    parent = make_parent()
    held = Gate()
    script.add("parent", held.hold(text_stream("Watched.")))
    workflow_id = detach(parent)
    wait_until(lambda: script.seen("parent") == 1, WAIT, "the parent asking the model")
    watch = subprocess.Popen(
        [sys.executable, "-m", "maia", "workflow", workflow_id, "--watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watch.stdout is not None
    first = json.loads(watch.stdout.readline())  # printed at once, before anything changes
    assert first["state"] == "running"
    held.open()
    rest, err = watch.communicate(timeout=WAIT)
    assert watch.returncode == 0, err
    states = [first["state"]] + [json.loads(line)["state"] for line in rest.splitlines()]
    assert states[-1] == "done" and set(states) == {"running", "done"}
    text = maia("workflow", workflow_id, "--watch")  # an ended workflow: shown once, then the command ends
    assert text.returncode == 0 and text.stdout.startswith(f"{workflow_id}  done\n")


def test_the_logs_show_a_sub_agents_tool_calls_under_its_launch(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], make_sub: Callable[..., Path], project: Path
) -> None:
    make_sub("rev")
    parent = make_parent(header="permissions:\n  allow: [Agent]")
    (project / "main.py").write_text("print('hi')\n")
    script.add("parent", agent_calls(("rev", "review main.py")), text_stream("Reviewed."))
    script.add(
        "rev",
        tool_stream("Read", {"path": "main.py"}, "c1"),
        tool_stream("Read", {"path": "\x1b[31mgone.md"}, "c2"),  # untrusted text: logged inert
        text_stream("main.py is fine."),
    )
    workflow_id = detach(parent)
    assert wait_ended(workflow_id)["state"] == "done"
    logs = maia("logs", workflow_id)
    assert logs.returncode == 0, logs.stderr
    lines = logs.stdout.splitlines()
    started = next(i for i, line in enumerate(lines) if "Sub-agent rev started: review main.py" in line)
    calls = [line.split(" ", 1)[1] for line in lines[started + 1 :] if "⎿ rev" in line]
    assert calls[:2] == ["  ⎿ rev → Read main.py", "  ⎿ rev → Read ␛[31mgone.md"], logs.stdout
    assert calls[2].startswith("  ⎿ rev ✗ Read: File not found") and len(calls) == 3, logs.stdout
