"""Sub-agent fixtures: AGENT.md writers and a LiteLLM server scripted per agent."""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.conftest import trust_project

Answer = bytes | Response | Callable[[dict[str, Any]], bytes]
_AGENT = re.compile(r'^You are "([^"]+)", a sub-agent of MAIA')

BODY = """
# Instructions system
You review things.

# Missions
- Look at what the task names.

# Output
One short paragraph.
"""


def agent_md(name: str, header: str = "", body: str = BODY, description: str = "Reviews things.") -> str:
    """An AGENT.md text: name and description, then ``header`` lines, then ``body``."""
    lines = [f"name: {name}", f"description: {description}"] if name else [f"description: {description}"]
    return "---\n" + "\n".join(lines) + ("\n" + header.strip("\n") if header.strip() else "") + "\n---\n" + body


@pytest.fixture
def make_agent(project: Path) -> Callable[..., Path]:
    """Write ``<base>/<name>/AGENT.md`` (base: the project's agents folder by default)."""

    def make(
        name: str,
        header: str = "",
        body: str = BODY,
        *,
        base: Path | None = None,
        text: str | None = None,
        description: str = "Reviews things.",
    ) -> Path:
        folder = (base or project / ".maia" / "agents") / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "AGENT.md"
        path.write_text(text if text is not None else agent_md(name, header, body, description), encoding="utf-8")
        trust_project(project)  # an agent's allow rules count in a folder the user trusted
        return path

    return make


class ScriptedLiteLLM:
    """``/v1/chat/completions`` answering each agent from its own queue (the agent is read in the prompt)."""

    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.queues: dict[str, list[Answer]] = defaultdict(list)
        self.requests: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.lock = threading.Lock()
        server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(self.handle)

    def add(self, agent: str, *answers: Answer) -> None:
        """Queue answers for ``agent`` (``main`` for a prompt that is not a sub-agent's)."""
        with self.lock:
            self.queues[agent].extend(answers)

    def seen(self, agent: str) -> int:
        """How many requests ``agent`` made."""
        with self.lock:
            return len(self.requests[agent])

    def handle(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
        match = _AGENT.match(system)
        agent = match.group(1) if match else "main"
        with self.lock:
            self.requests[agent].append(body)
            answer = self.queues[agent].pop(0) if self.queues[agent] else None
        if answer is None:
            error = {"error": {"message": f"no scripted answer left for {agent}"}}
            return Response(json.dumps(error), status=500, content_type="application/json")
        if isinstance(answer, Response):
            return answer
        data = answer(body) if callable(answer) else answer
        return Response(data, content_type="text/event-stream")


@pytest.fixture
def script(server: HTTPServer) -> ScriptedLiteLLM:
    """The LiteLLM server, scripted per agent."""
    return ScriptedLiteLLM(server)


@pytest.fixture
def project_rules(project: Path) -> Callable[..., Path]:
    """Write ``./.maia/settings.json`` with permission rules."""

    def write(allow: Sequence[str] = (), ask: Sequence[str] = (), deny: Sequence[str] = ()) -> Path:
        path = project / ".maia" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"permissions": {"allow": list(allow), "ask": list(ask), "deny": list(deny)}}))
        trust_project(project)  # the project's allow rules count in a folder the user trusted
        return path

    return write
