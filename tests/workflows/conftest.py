"""Workflow fixtures: parent and sub-agent AGENT.md writers, a LiteLLM server scripted per agent, and the
commands run as real processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.app.helpers import maia, wait_until
from tests.conftest import trust_project
from tests.streams import sse
from tests.subagents.conftest import BODY, ScriptedLiteLLM, agent_md

MODEL = "scripted-openai"
_PARENT = re.compile(r'^You are "([^"]+)", the orchestrator of an autonomous MAIA workflow')
WAIT = 90.0  # generous: the suite runs on a loaded 2-core machine

PARENT_BODY = """
# Instructions system
You coordinate reviews.

# Missions
- Ask {agents} to look at the code.

# Output
A short report.
"""


class WorkflowLiteLLM(ScriptedLiteLLM):
    """The sub-agents' scripted server, which also knows a workflow's parent (queue ``parent``)."""

    def handle(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
        if _PARENT.match(system):
            with self.lock:
                self.requests["parent"].append(body)
                answer = self.queues["parent"].pop(0) if self.queues["parent"] else None
            return _respond("parent", answer, body)
        return super().handle(request)


def _respond(agent: str, answer: Any, body: dict[str, Any]) -> Response:
    if answer is None:
        error = {"error": {"message": f"no scripted answer left for {agent}"}}
        return Response(json.dumps(error), status=500, content_type="application/json")
    if isinstance(answer, Response):
        return answer
    data = answer(body) if callable(answer) else answer
    if isinstance(data, Response):
        return data
    return Response(data, content_type="text/event-stream")


@pytest.fixture
def script(server: HTTPServer) -> Iterator[WorkflowLiteLLM]:
    """The LiteLLM server, scripted per agent (``parent`` for the workflow's parent)."""
    scripted = WorkflowLiteLLM(server)
    yield scripted
    for gate in Gate.opened:  # never leave a server thread blocked after a test
        gate.open()
    Gate.opened.clear()


class Gate:
    """Holds a scripted answer until the test opens it (at most ``WAIT`` seconds)."""

    opened: list[Gate] = []

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reached = threading.Event()
        Gate.opened.append(self)

    def open(self) -> None:
        """Let the answer go."""
        self.event.set()

    def hold(self, answer: bytes | Response) -> Callable[[dict[str, Any]], bytes | Response]:
        """An answer that waits for the gate."""

        def held(_body: dict[str, Any]) -> bytes | Response:
            self.reached.set()
            self.event.wait(WAIT)
            return answer

        return held


def agent_calls(*calls: tuple[str, str], ids: tuple[str, ...] = ()) -> bytes:
    """One answer with several Agent calls (run in parallel by the runner)."""
    deltas = [
        {
            "index": i,
            "id": ids[i] if i < len(ids) else f"call_{i + 1}",
            "type": "function",
            "function": {"name": "Agent", "arguments": json.dumps({"agent": name, "task": task})},
        }
        for i, (name, task) in enumerate(calls)
    ]
    return sse(
        {"choices": [{"index": 0, "delta": {"tool_calls": deltas}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )


@pytest.fixture
def agents_dir(tmp_path: Path) -> Path:
    """A folder of agents outside any project: the parent and its sub-agents side by side."""
    folder = tmp_path / "flows"
    folder.mkdir()
    return folder


@pytest.fixture
def make_parent(agents_dir: Path) -> Callable[..., Path]:
    """Write ``<agents_dir>/<name>/AGENT.md`` for a workflow's parent."""

    def make(name: str = "boss", header: str = "", agents: str = "rev", text: str | None = None) -> Path:
        folder = agents_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "AGENT.md"
        path.write_text(
            text if text is not None else agent_md(name, header, PARENT_BODY.format(agents=agents), "Runs reviews."),
            encoding="utf-8",
        )
        trust_project(agents_dir)  # the user trusts the workflow's folder: its agents' grants count
        return path

    return make


@pytest.fixture
def make_sub(agents_dir: Path) -> Callable[..., Path]:
    """Write a sub-agent beside the parent."""

    def make(name: str, header: str = "") -> Path:
        folder = agents_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "AGENT.md"
        path.write_text(agent_md(name, header, BODY), encoding="utf-8")
        trust_project(agents_dir)
        return path

    return make


# --- the commands ----------------------------------------------------------------------------


def detach(agent: Path, task: str = "review the code", *args: str) -> str:
    """``maia run AGENT TASK --detach``: the workflow's id."""
    done = maia("run", str(agent), task, "--model", MODEL, "--detach", *args)
    assert done.returncode == 0, done.stderr
    workflow_id = done.stdout.strip()
    assert re.fullmatch(r"wf_\d{8}_\d{6}_[0-9a-f]{4}", workflow_id), done.stdout
    return workflow_id


def show(ref: str) -> dict[str, Any]:
    """``maia workflow REF --json``."""
    done = maia("workflow", ref, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def wait_for(ref: str, condition: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
    """Poll ``maia workflow REF --json`` until ``condition`` holds; the object that satisfied it."""
    seen: dict[str, Any] = {}

    def check() -> bool:
        seen.update(show(ref))
        return condition(seen)

    try:
        wait_until(check, timeout=WAIT, what=what)
    except AssertionError:
        raise AssertionError(f"{what}; last seen: {json.dumps(seen, indent=1)}") from None
    return dict(seen)


def wait_ended(ref: str) -> dict[str, Any]:
    """Until the workflow is done or in error."""
    return wait_for(ref, lambda s: s["state"] in ("done", "error"), "the workflow to end")


def record(home: Path, workflow_id: str) -> dict[str, Any]:
    """The raw workflow.json."""
    data: dict[str, Any] = json.loads((home / "workflows" / workflow_id / "workflow.json").read_text())
    return data


def alive(pid: int) -> bool:
    """A live, non-zombie process."""
    from maia.workflows.registry import process_alive

    return process_alive(pid)


def run_foreground(agent: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``maia run AGENT ARGS`` in the background of the test (a foreground run, for its exit code)."""
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "maia", "run", str(agent), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def only_workflow(home: Path) -> str:
    """The id of the one workflow of this MAIA home."""
    (folder,) = [p for p in (home / "workflows").iterdir() if p.name.startswith("wf_")]
    return folder.name
