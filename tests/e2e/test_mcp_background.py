"""The chat does not wait for MCP servers: they connect while the user types, and their tools join the
first request sent after they answered (issue 29)."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer

from tests.e2e.conftest import ready
from tests.e2e.terminal import Terminal
from tests.mcp.conftest import SERVER_APP
from tests.streams import text_stream

CHAT = "/v1/chat/completions"


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def test_a_slow_mcp_server_does_not_hold_the_first_request(
    server: HTTPServer,
    start: Callable[..., Terminal],
    home: Path,
    tmp_path: Path,
    write_settings: Callable[..., Path],
) -> None:
    gate = home.parent / "project" / "gate"  # in the launch folder: the sandboxed server sees it
    serve = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVER_APP))} --transport stdio"
    # the server starts only once the test opens the gate: whatever the machine's load, it is not
    # there for the first request, and is for the second
    line = f"while [ ! -e {shlex.quote(str(gate))} ]; do sleep 0.05; done; exec {serve}"
    (home / "mcp.json").write_text(
        json.dumps({"mcpServers": {"late": {"type": "stdio", "command": "sh", "args": ["-c", line]}}})
    )
    write_settings(server.url_for(""), permissions={"allow": ["Mcp(late)"]})
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("First."), content_type="text/event-stream")
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Second."), content_type="text/event-stream")
    term = start()
    ready(term)
    term.send("hi\r")
    term.wait_for("First.")
    gate.touch()
    term.wait_for("MCP server late: OK", timeout=60)
    term.send("again\r")
    term.wait_for("Second.")
    first, second = (json.loads(r.data) for r, _ in server.log if r.path == CHAT)
    assert not any(name.startswith("mcp__late__") for name in tool_names(first))
    assert "mcp__late__echo" in tool_names(second)
