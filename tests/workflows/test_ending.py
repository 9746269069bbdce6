"""How workflows end: maia stop, the time limit, a killed worker, signals, rate limits (real processes)."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest
from werkzeug import Response

from maia.workflows.registry import Workflow
from maia.workflows.view import detail_lines, snapshot
from tests.app.helpers import maia, wait_until
from tests.streams import text_stream
from tests.workflows.conftest import (
    MODEL,
    WAIT,
    Gate,
    WorkflowLiteLLM,
    agent_calls,
    alive,
    detach,
    only_workflow,
    record,
    run_foreground,
    show,
    wait_ended,
    wait_for,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="process groups, /proc and signals")


def rate_limited(seconds: int) -> Response:
    return Response(
        json.dumps({"error": {"message": "slow down"}}),
        status=429,
        headers={"retry-after": str(seconds)},
        content_type="application/json",
    )


def descendants(pid: int) -> list[int]:
    from maia.process.tree import descendants as _descendants

    return _descendants(pid)


def test_maia_stop_cancels_the_turn_and_the_subagents(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], make_sub: Callable[..., Path], home: Path
) -> None:
    make_sub("rev")
    parent = make_parent(header="permissions:\n  allow: [Agent]")
    held = Gate()
    script.add("parent", agent_calls(("rev", "review a.py")))
    script.add("rev", held.hold(text_stream("never seen")))
    process = run_foreground(parent, "review", "--model", MODEL)
    wait_until(lambda: script.seen("rev") == 1, WAIT, "the sub-agent asking the model")
    workflow_id = only_workflow(home)
    children = descendants(process.pid)
    assert children, "the sub-agent's process"
    stopped = maia("stop", workflow_id)
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout == f"Stopped {workflow_id} (error (stopped)).\n"
    _out, err = process.communicate(timeout=WAIT)
    assert process.returncode == 130, err
    assert f"Workflow {workflow_id} ended in error: Stopped by maia stop.\n" in err
    assert not any(alive(pid) for pid in children)  # the sub-agent was stopped with the turn
    ended = show(workflow_id)
    assert (ended["state"], ended["label"], ended["exitCode"], ended["error"]) == (
        "error",
        "error (stopped)",
        130,
        "Stopped by maia stop.",
    )
    assert [(a["name"], a["state"], a["active"]) for a in ended["agents"]] == [("rev", "error", 0)]
    again = maia("stop", workflow_id)
    assert again.returncode == 2 and f"The workflow {workflow_id} has already ended (error (stopped))." in again.stderr


def test_the_time_limit_ends_the_workflow_in_error(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], home: Path
) -> None:
    parent = make_parent()
    held = Gate()
    script.add("parent", held.hold(text_stream("too late")))
    process = run_foreground(parent, "review", "--model", MODEL, "--timeout", "2s", "--quiet")
    out, err = process.communicate(timeout=WAIT)
    assert process.returncode == 1, err
    assert out == ""
    assert err == "Error: Stopped: the workflow ran longer than its time limit (2 s).\n"  # --quiet: no progress
    ended = show(only_workflow(home))
    assert (ended["state"], ended["exitCode"], ended["timeout"]) == ("error", 1, 2.0)
    log = (home / "workflows" / ended["id"] / "run.log").read_text()
    assert "Time limit reached: stopping the turn and the sub-agents." in log


def test_a_timeout_in_the_agent_file_counts_too(script: WorkflowLiteLLM, make_parent: Callable[..., Path]) -> None:
    parent = make_parent(header="timeout: 1500ms")
    held = Gate()
    script.add("parent", held.hold(text_stream("too late")))
    workflow_id = detach(parent)
    ended = wait_ended(workflow_id)
    assert (ended["state"], ended["exitCode"], ended["timeout"]) == ("error", 1, 1.5)
    assert ended["error"] == "Stopped: the workflow ran longer than its time limit (1.5 s)."


def test_a_killed_worker_is_detected(script: WorkflowLiteLLM, make_parent: Callable[..., Path], home: Path) -> None:
    parent = make_parent()
    held = Gate()
    script.add("parent", held.hold(text_stream("never seen")))
    workflow_id = detach(parent)
    wait_until(lambda: script.seen("parent") == 1, WAIT, "the parent asking the model")
    running = show(workflow_id)
    assert running["state"] == "running"
    pid = running["pid"]
    os.kill(pid, signal.SIGKILL)
    lost = wait_for(workflow_id, lambda s: s["state"] == "error", "the dead process to be noticed")
    assert lost["label"] == "error (process lost)"
    assert lost["error"] == f"The workflow's process ({pid}) is gone: it was killed or the machine restarted."
    assert (lost["ended"], lost["exitCode"]) == (None, None)  # nobody could write the end: it is derived
    listed = json.loads(maia("workflows", "--json").stdout)
    assert [(w["id"], w["state"]) for w in listed] == [(workflow_id, "error")]
    approve = maia("approve", workflow_id)
    assert approve.returncode == 2 and "has ended (error (process lost))" in approve.stderr
    assert record(home, workflow_id)["state"] == "running"  # the record is left as the worker wrote it


def test_a_rate_limit_waits_until_the_time_given_then_resumes(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], home: Path
) -> None:
    parent = make_parent()
    script.add("parent", rate_limited(4), text_stream("Reviewed."))
    workflow_id = detach(parent)
    workflow = Workflow(home / "workflows" / workflow_id)
    seen: list[str] = []

    def waiting() -> bool:  # read in this process: the window lasts only the 4 seconds of the wait
        snap = snapshot(workflow)
        seen.append(snap.state)
        if snap.state != "waiting":
            return False
        assert snap.waiting is not None and snap.waiting["reason"] == "rate_limited"
        clock = snap.waiting["until"][11:19]
        assert snap.label() == f"rate-limited until {clock}"
        assert f"{workflow_id}  rate-limited until {clock}" in detail_lines(snap)
        return True

    wait_until(waiting, WAIT, "the rate-limited state")
    ended = wait_ended(workflow_id)
    assert (ended["state"], ended["waiting"]) == ("done", None), ended
    assert script.seen("parent") == 2  # one refused request, one retry at the time given: no busy loop
    events = [json.loads(line) for line in workflow.events_path.read_text().splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds.index("waiting") < kinds.index("resumed") < kinds.index("ended")
    assert maia("result", workflow_id).stdout == "Reviewed.\n"


def test_maia_stop_works_while_rate_limited(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], home: Path, tmp_path: Path
) -> None:
    parent = make_parent()
    script.add("parent", rate_limited(600))
    workflow_id = detach(parent)
    waiting = wait_for(workflow_id, lambda s: s["state"] == "waiting", "the rate-limited state")
    until = waiting["waiting"]["until"]
    text = maia("workflow", workflow_id).stdout
    assert f"{workflow_id}  rate-limited until {until[11:19]}\n" in text
    stopped = maia("stop", workflow_id)
    assert stopped.returncode == 0 and "(error (stopped))" in stopped.stdout
    ended = show(workflow_id)
    assert (ended["state"], ended["exitCode"], ended["waiting"]) == ("error", 130, None)
    assert script.seen("parent") == 1


def test_a_detached_workflow_ignores_sighup(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], home: Path
) -> None:
    parent = make_parent()
    held = Gate()
    script.add("parent", held.hold(text_stream("Still here.")))
    workflow_id = detach(parent)
    wait_until(lambda: script.seen("parent") == 1, WAIT, "the parent asking the model")
    pid = show(workflow_id)["pid"]
    assert os.getsid(pid) == pid  # a session of its own: no terminal to hang up on it
    os.kill(pid, signal.SIGHUP)
    held.open()
    ended = wait_ended(workflow_id)
    assert ended["state"] == "done", ended
    assert maia("result", workflow_id).stdout == "Still here.\n"


def test_a_detached_workflow_survives_its_terminal_closing(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], home: Path
) -> None:
    parent = make_parent()
    held = Gate()
    script.add("parent", held.hold(text_stream("Survived.")))
    shell = pexpect.spawn("bash", ["--norc", "--noprofile"], env=dict(os.environ), encoding="utf-8", timeout=WAIT)
    try:
        shell.sendline(f"{sys.executable} -m maia run {parent} review --model {MODEL} --detach -q; echo END$?")
        shell.expect(r"(wf_\d{8}_\d{6}_[0-9a-f]{4})\r\n")
        workflow_id = shell.match.group(1)
        shell.expect("END0")
        wait_until(lambda: script.seen("parent") == 1, WAIT, "the parent asking the model")
    finally:
        shell.close(force=True)  # the terminal goes away: SIGHUP for its session
    assert shell.signalstatus is not None or shell.exitstatus is not None
    held.open()
    ended = wait_ended(workflow_id)
    assert ended["state"] == "done", ended
    assert maia("result", workflow_id).stdout == "Survived.\n"


def test_a_foreground_run_ends_on_sighup_as_interrupted(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], home: Path
) -> None:
    parent = make_parent()
    held = Gate()
    script.add("parent", held.hold(text_stream("never seen")))
    process = run_foreground(parent, "review", "--model", MODEL)
    wait_until(lambda: script.seen("parent") == 1, WAIT, "the parent asking the model")
    process.send_signal(signal.SIGHUP)
    _out, err = process.communicate(timeout=WAIT)
    assert process.returncode == 130, err
    ended = show(only_workflow(home))
    assert (ended["state"], ended["exitCode"], ended["error"]) == ("error", 130, "Interrupted by a signal.")


def test_a_rate_limited_subagent_makes_the_workflow_wait_and_stop_still_works(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], make_sub: Callable[..., Path], home: Path
) -> None:
    make_sub("rev")
    parent = make_parent(header="permissions:\n  allow: [Agent]")
    script.add("parent", agent_calls(("rev", "review a.py")))
    script.add("rev", rate_limited(200))
    workflow_id = detach(parent)
    waiting = wait_for(workflow_id, lambda s: s["state"] == "waiting", "the sub-agent's rate limit")
    (agent,) = waiting["agents"]
    until = agent["waiting"]["until"]
    assert (agent["name"], agent["state"], agent["waiting"]["reason"]) == ("rev", "waiting", "rate_limited")
    assert waiting["label"] == f"sub-agent rev rate-limited until {until[11:19]}"
    assert (
        f"  rev                  waiting (rate-limited until {until[11:19]})\n" in maia("workflow", workflow_id).stdout
    )
    children = descendants(waiting["pid"])
    assert maia("stop", workflow_id).returncode == 0
    ended = show(workflow_id)
    assert (ended["state"], ended["exitCode"]) == ("error", 130)
    assert [(a["state"], a["waiting"]) for a in ended["agents"]] == [("error", None)]
    assert not any(alive(pid) for pid in children)
    assert script.seen("rev") == 1
