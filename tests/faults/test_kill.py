"""Finding 6: no command outlives the agent that started it, even when that agent is killed by SIGKILL.

Each test starts real processes (``maia ask``, a sub-agent child, a detached workflow worker), lets the
model run a command that sleeps, kills the agent's process with SIGKILL, and then requires: the command
is gone (no orphan reparented to init), and what was saved before the kill is still there.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from maia.subagents.launcher import launch_subagent
from tests.app.helpers import CHAT, spawn, wait_until
from tests.conftest import trust_project
from tests.e2e.conftest import start
from tests.e2e.terminal import Terminal
from tests.streams import tool_stream
from tests.subagents.conftest import ScriptedLiteLLM
from tests.subagents.test_process import definition, spec_for

WAIT = 90.0
__all__ = ["start"]  # the chat's terminal fixture, shared with tests/e2e


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def sleeper_tool(project: Path, marker: Path) -> None:
    """A custom tool ``hang`` that starts a background sleeper in its group, writes both pids and its
    parent's, then sleeps: two commands to leave behind."""
    folder = project / ".maia" / "tools" / "hang"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hang.py").write_text(
        "import os, subprocess, sys, time\n"
        "extra = subprocess.Popen(['sleep', '600'])\n"
        "with open(sys.argv[1] + '.tmp', 'w') as f: f.write(f'{os.getpid()} {extra.pid} {os.getppid()}')\n"
        "os.replace(sys.argv[1] + '.tmp', sys.argv[1])\n"
        "time.sleep(600)\n"
    )
    tool = {
        "name": "hang",
        "description": "Hangs.",
        "command": {"run": f"{sys.executable} ./hang.py {marker}", "parameters": []},
    }
    (folder / "TOOL.json").write_text(json.dumps(tool))
    rules = project / ".maia" / "settings.json"
    rules.write_text(json.dumps({"permissions": {"allow": ["hang"]}}))
    trust_project(project)  # a project's tools and rules count once its folder is trusted


@pytest.fixture(autouse=True)
def host_pids(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read the commands' process ids as the host sees them: under bubblewrap a command has
    its own PID namespace (where it also dies with MAIA, --die-with-parent), so they run under Landlock
    alone, where only the guardian can take the commands with a killed MAIA."""
    monkeypatch.setenv("MAIA_SANDBOX_NAMESPACES", "off")


def read_marker(marker: Path) -> tuple[int, int, int]:
    wait_until(marker.exists, timeout=WAIT, what="the command to start")
    tool, extra, parent = map(int, marker.read_text().split())
    return tool, extra, parent


def assert_no_orphans(*pids: int) -> None:
    for pid in pids:
        wait_until(lambda pid=pid: not alive(pid), timeout=WAIT, what=f"process {pid} to be killed")  # type: ignore[misc]


def test_the_chat_killed_takes_its_commands(
    server: HTTPServer, start: Callable[..., Terminal], project: Path, tmp_path: Path
) -> None:
    """After ``kill -9`` of ``maia chat`` (in a real terminal) during a command: the command is gone."""
    marker = tmp_path / "pids"
    sleeper_tool(project, marker)
    server.expect_oneshot_request(CHAT, method="POST").respond_with_data(
        tool_stream("hang", {}), content_type="text/event-stream"
    )
    term = start(env={"MAIA_SANDBOX_NAMESPACES": "off"})  # the chat's environment is rebuilt: said again
    term.wait_for("/ 128k", timeout=WAIT)
    term.send("run the hang tool\r")
    tool, extra, _parent = read_marker(marker)
    assert alive(tool) and alive(extra)
    os.kill(term.child.pid, signal.SIGKILL)
    assert_no_orphans(tool, extra)


def test_maia_ask_killed_takes_its_commands(server: HTTPServer, project: Path, tmp_path: Path) -> None:
    """After ``kill -9`` of ``maia ask`` during a command: the command and what it started are gone."""
    marker = tmp_path / "pids"
    sleeper_tool(project, marker)
    server.expect_oneshot_request(CHAT, method="POST").respond_with_data(
        tool_stream("hang", {}), content_type="text/event-stream"
    )
    ask = spawn("ask", "-m", "m", "run the hang tool")
    try:
        tool, extra, _parent = read_marker(marker)
        assert alive(tool) and alive(extra)
        ask.kill()  # SIGKILL
        ask.wait(WAIT)
        assert_no_orphans(tool, extra)
    finally:
        if ask.poll() is None:
            ask.kill()


async def test_a_subagent_killed_takes_its_commands(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path, tmp_path: Path
) -> None:
    """After ``kill -9`` of a sub-agent child during a command: the run is an error, the command is gone."""
    marker = tmp_path / "pids"
    sleeper_tool(project, marker)
    make_agent("rev")
    script.add("rev", tool_stream("hang", {}))
    run = asyncio.ensure_future(launch_subagent(spec_for(definition(home, project, "rev"), "hang", project, home)))
    await asyncio.to_thread(wait_until, marker.exists, WAIT, "the command to start")
    tool, extra, child = map(int, marker.read_text().split())
    os.kill(child, signal.SIGKILL)
    result = await asyncio.wait_for(run, WAIT)
    assert not result.ok and "killed by signal 9" in (result.error or "")
    await asyncio.to_thread(assert_no_orphans, tool, extra)


def test_a_worker_killed_takes_its_subagents_and_their_commands(
    server: HTTPServer, project: Path, home: Path, tmp_path: Path
) -> None:
    """After ``kill -9`` of a detached workflow's worker while a sub-agent runs a command: the sub-agent,
    the command and what it started are gone; the workflow is in error, and resumable."""
    from tests.subagents.conftest import BODY, agent_md
    from tests.workflows.conftest import MODEL, PARENT_BODY, WorkflowLiteLLM, agent_calls, detach, wait_ended

    script = WorkflowLiteLLM(server)
    marker = tmp_path / "pids"
    flows = tmp_path / "flows"
    for name, text in (
        ("boss", agent_md("boss", "", PARENT_BODY.format(agents="rev"), "Runs reviews.")),
        ("rev", agent_md("rev", "", BODY)),
    ):
        (flows / name).mkdir(parents=True)
        (flows / name / "AGENT.md").write_text(text)
    sleeper_tool(project, marker)
    script.add("parent", agent_calls(("rev", "hang")))
    script.add("rev", tool_stream("hang", {}))
    workflow = detach(flows / "boss", "review", "--permission-mode", "allow")
    record = json.loads((home / "workflows" / workflow / "workflow.json").read_text())
    tool, extra, child = read_marker(marker)
    worker = int(json.loads((home / "workflows" / workflow / "workflow.json").read_text())["pid"])
    assert alive(worker) and alive(child) and record["id"] == workflow
    os.kill(worker, signal.SIGKILL)
    assert_no_orphans(child, tool, extra)
    ended = wait_ended(workflow)
    assert ended["state"] == "error"
    _ = MODEL


@pytest.fixture
def make_agent(project: Path) -> Callable[..., Path]:
    from tests.subagents.conftest import agent_md

    def make(name: str, header: str = "") -> Path:
        folder = project / ".maia" / "agents" / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "AGENT.md"
        path.write_text(agent_md(name, header))
        return path

    return make


@pytest.fixture
def script(server: HTTPServer) -> ScriptedLiteLLM:
    return ScriptedLiteLLM(server)
