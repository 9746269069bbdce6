"""MAIA's client against servers built on mcp 1.30, replayed from the captured exchanges (*-v1.txt).

The 2.x SDK client would first try the 2026-07-28 ``server/discover`` probe; MAIA uses the
initialize handshake, which both generations speak. These tests prove it on the wire: the replay
server keeps the 1.30 server's rules and answers only requests the capture shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from maia.core.contracts import ToolContext
from maia.mcp.results import tool_outcome
from maia.mcp.source import McpSource
from maia.tools.base import ToolError
from tests.mcp.conftest import write_rules, write_servers
from tests.mcp.transcripts import SseReplay, StreamableReplay, parse

V1_FAIL = "Error executing tool fail: intentional failure from fail()"


@pytest.fixture
def replay_server() -> Iterator[HTTPServer]:
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)  # GET streams stay open beside the POSTs
    server.start()
    yield server
    server.clear()
    if server.is_running():
        server.stop()


def expected_warnings(warnings: tuple[str, ...]) -> list[str]:
    # the capture has no prompts/list nor resources/list exchange: the replay refuses them, which MAIA
    # reports as a warning and otherwise ignores (the server stays usable)
    return [w for w in warnings if "listing its prompts failed" not in w and "listing its resources failed" not in w]


async def call(source: McpSource, name: str, **arguments: object) -> str:
    tools = {t.spec.name: t for t in source.tools()}
    return await tools[name].execute(arguments, ToolContext(launch=Path.cwd()))


async def test_streamable_http_with_a_v1_server(replay_server: HTTPServer, home: Path, project: Path) -> None:
    replay = StreamableReplay()
    replay_server.expect_request("/mcp").respond_with_handler(replay)
    write_servers(home / "mcp.json", {"v1": {"url": replay_server.url_for("/mcp")}})
    write_rules(home, allow=["Mcp(v1)"])
    source = McpSource(home, project)
    try:
        report = await source.start()
        assert expected_warnings(report.warnings) == []
        status = source.servers()[0]
        assert (status.state, status.protocol_version, status.server_name) == ("ok", "2025-11-25", "maia-eval")
        assert {t.spec.name for t in source.tools()} == {f"mcp__v1__{n}" for n in ("echo", "add", "slow", "fail")}
        assert await call(source, "mcp__v1__echo", text="héllo") == "héllo"
        assert await call(source, "mcp__v1__slow", seconds=1.0) == "slept 1.0 s"  # progress events come first
        with pytest.raises(ToolError) as failure:
            await call(source, "mcp__v1__fail")
        assert str(failure.value) == V1_FAIL
        with pytest.raises(ToolError, match="2 validation errors for addArguments"):
            await call(source, "mcp__v1__add", a="x")

        replay.forget_sessions()  # the server restarted: 404 "Session not found" with id "server-error"
        assert await call(source, "mcp__v1__echo", text="héllo") == "héllo"
        assert source.servers()[0].reconnects == 1
    finally:
        await source.aclose()

    methods = [(entry["method"], entry["rpc"].get("method")) for entry in replay.log]
    assert methods[0] == ("POST", "initialize")  # no server/discover probe
    assert all(m != "server/discover" for _verb, m in methods)
    initialize = replay.log[0]["rpc"]["params"]
    assert initialize["protocolVersion"] == "2025-11-25" and initialize["clientInfo"]["name"] == "maia"
    later = [e for e in replay.log if e["rpc"].get("method") not in (None, "initialize")]
    assert later and all(e["headers"].get("Mcp-Protocol-Version") == "2025-11-25" for e in later)
    assert all(e["headers"].get("Mcp-Session-Id") for e in later)
    assert methods[-1] == ("DELETE", None)  # the session is ended on close
    assert replay.sessions == set()


async def test_legacy_sse_with_a_v1_server(replay_server: HTTPServer, home: Path, project: Path) -> None:
    replay = SseReplay()
    replay_server.expect_request("/sse", method="GET").respond_with_handler(replay.get)
    replay_server.expect_request("/messages/", method="POST").respond_with_handler(replay.post)
    write_servers(home / "mcp.json", {"old": {"type": "sse", "url": replay_server.url_for("/sse")}})
    write_rules(home, allow=["Mcp(old)"])
    source = McpSource(home, project)
    try:
        report = await source.start()
        assert expected_warnings(report.warnings) == []
        assert source.servers()[0].state == "ok"
        assert await call(source, "mcp__old__echo", text="héllo") == "héllo"
        assert await call(source, "mcp__old__slow", seconds=1.0) == "slept 1.0 s"
        with pytest.raises(ToolError) as failure:
            await call(source, "mcp__old__fail")
        assert str(failure.value) == V1_FAIL
    finally:
        replay.stop.set()
        await source.aclose()
    posts = [e for e in replay.log if e["method"] == "POST"]
    assert posts[0]["rpc"]["method"] == "initialize"
    # the SDK client sends no session or protocol header on this transport, as the capture shows
    assert all("Mcp-Session-Id" not in e["headers"] for e in posts)


def test_v1_results_as_the_model_reads_them() -> None:
    replies = {e.section.split(":")[0]: e for e in parse("http-legacy-v1.txt")}
    image = json.loads(replies["tools/call image"].responses[0].events()[0][1])["result"]
    assert tool_outcome(image).text == "[image/png, 92 B]"
    fail = json.loads(replies["tools/call fail"].responses[0].events()[0][1])["result"]
    assert tool_outcome(fail) == tool_outcome({"content": [{"type": "text", "text": V1_FAIL}], "isError": True})
