"""McpSource against real servers built with the official SDK (2.x), on loopback and over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from maia.core.contracts import Tool, ToolContext, ToolSource
from maia.mcp.source import McpSource, ToolFailure, parse_prompt_arguments
from maia.permissions import explain
from maia.permissions.rules import parse_rules
from maia.tools.base import ToolError
from tests.mcp.conftest import (
    RunningServer,
    eventually,
    kill_process,
    process_gone,
    restart,
    stdio_entry,
    write_rules,
    write_servers,
)

ServerFactory = Callable[..., RunningServer]
EXPECTED = {"echo", "add", "slow", "fail", "big", "image", "pid", "die", "tool_with_spaces_and-more"}


def by_name(source: McpSource) -> dict[str, Tool]:
    return {t.spec.name: t for t in source.tools()}


async def run(tools: dict[str, Tool], name: str, **arguments: object) -> str:
    return await tools[name].execute(arguments, ToolContext(launch=Path.cwd()))


# Servers on SDK 1.x too, when a Python with mcp 1.x is at hand (one venv cannot hold both generations;
# tests/mcp/test_v1_replay.py proves 1.x on the wire from the captures in every run).
PYTHONS = [pytest.param(sys.executable, id="sdk2")]
if os.environ.get("MAIA_MCP_V1_PYTHON"):
    PYTHONS.append(pytest.param(os.environ["MAIA_MCP_V1_PYTHON"], id="sdk1"))


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("transport", ["http", "http-json", "http-stateless", "sse", "stdio"])
async def test_every_transport_lists_and_calls_tools(
    transport: str, python: str, mcp_server: ServerFactory, home: Path, project: Path
) -> None:
    if transport == "stdio":
        entry: dict[str, object] = stdio_entry(python=python)
    else:
        server = mcp_server(transport, python=python)
        entry = {"type": "sse" if transport == "sse" else "http", "url": server.url}
    write_servers(home / "mcp.json", {"t": entry})
    write_rules(home, allow=["Mcp(t)"])
    source = McpSource(home, project)
    assert isinstance(source, ToolSource)
    try:
        report = await source.start()
        assert report.infos and "MCP server t: OK" in report.infos[0], report
        tools = by_name(source)
        assert {name.removeprefix("mcp__t__") for name in tools} == EXPECTED
        # the twin "tool with.spaces/and-more" has the same safe name: warned and left out
        assert any("same name" in w and "tool with.spaces/and-more" in w for w in report.warnings), report.warnings
        assert all(t.permission == "ask" for t in tools.values())
        echo = tools["mcp__t__echo"].spec
        assert echo.input_schema["required"] == ["text"] and echo.description == "Return the text unchanged."
        assert await run(tools, "mcp__t__echo", text="héllo") == "héllo"
        assert await run(tools, "mcp__t__add", a=2, b=3.5) == "5.5"
        assert await run(tools, "mcp__t__image") == "[image/png, 92 B]"
        big = await run(tools, "mcp__t__big")
        assert big.startswith("line 000000: the quick brown fox") and len(big) > 100_000
        assert big[:100_000] == big.split("\n[…")[0] and "200000 characters in total" in big
        with pytest.raises(ToolError, match="Error executing tool fail"):
            await run(tools, "mcp__t__fail")
        status = source.servers()[0]
        assert (status.state, status.transport, status.tools, status.prompts, status.resources) == (
            "ok",
            "stdio" if transport == "stdio" else entry["type"],
            9,
            1,
            2,
        )
        assert status.connect_seconds is not None and status.list_seconds is not None
        assert source.failing() == []
    finally:
        await source.aclose()


async def test_bearer_token_from_the_environment(mcp_server: ServerFactory, home: Path, project: Path) -> None:
    server = mcp_server("http", token="s3cret")
    sse = mcp_server("sse", token="s3cret")
    auth = {"Authorization": "Bearer ${MCP_TOKEN}"}
    write_servers(
        home / "mcp.json",
        {
            "anonymous": {"url": server.url},
            "good": {"url": server.url, "headers": auth},
            "sse-good": {"type": "sse", "url": sse.url, "headers": auth},
            "sse-anonymous": {"type": "sse", "url": sse.url},
        },
    )
    write_rules(home, allow=["Mcp(*)"])
    source = McpSource(home, project, env={"MCP_TOKEN": "s3cret"})
    try:
        report = await source.start()
        states = {s.name: s for s in source.servers()}
        assert states["good"].state == "ok" and states["sse-good"].state == "ok"
        for name in ("anonymous", "sse-anonymous"):
            assert states[name].state == "fail"
            assert "401" in (states[name].cause or "") and "token" in (states[name].cause or "")
        assert any(w.startswith("MCP server anonymous: FAIL") for w in report.warnings)
        assert await run(by_name(source), "mcp__good__echo", text="ok") == "ok"
        assert sorted(source.failing()) == ["anonymous", "sse-anonymous"]
        assert not any(name.startswith("mcp__anonymous__") for name in by_name(source))
    finally:
        await source.aclose()


async def test_a_slow_call_times_out_and_the_server_stays_usable(
    mcp_server: ServerFactory, home: Path, project: Path
) -> None:
    server = mcp_server("http")
    write_servers(home / "mcp.json", {"t": {"url": server.url, "timeout": 4}})
    write_rules(home, allow=["Mcp(t)"])
    source = McpSource(home, project)
    try:
        await source.start()
        tools = by_name(source)
        with pytest.raises(ToolError, match="no answer within 4 s"):
            await run(tools, "mcp__t__slow", seconds=60)
        assert await run(tools, "mcp__t__echo", text="still here") == "still here"
        assert source.failing() == []
    finally:
        await source.aclose()


async def test_a_server_that_never_answers_fails_after_its_timeout(home: Path, project: Path) -> None:
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(8)  # connections complete in the backlog; nothing is ever read or answered
    port = mute.getsockname()[1]
    write_servers(
        home / "mcp.json",
        {
            "mute": {"url": f"http://127.0.0.1:{port}/mcp", "timeout": 1},
            "sse-mute": {"type": "sse", "url": f"http://127.0.0.1:{port}/sse", "timeout": 1},
        },
    )
    write_rules(home, allow=["Mcp(*)"])
    source = McpSource(home, project)
    try:
        report = await source.start()
        for status in source.servers():
            assert status.state == "fail" and "no answer within 1 s" in (status.cause or ""), status
        assert len([w for w in report.warnings if "FAIL" in w]) == 2
        assert source.tools() == []
    finally:
        await source.aclose()
        mute.close()


async def test_a_local_server_that_never_answers_is_stopped_after_its_timeout(home: Path, project: Path) -> None:
    pid_file = project / "pid.txt"
    script = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)"
    write_servers(
        home / "mcp.json", {"mute": {"command": sys.executable, "args": ["-c", script, str(pid_file)], "timeout": 1}}
    )
    write_rules(home, allow=["Mcp(mute)"])
    source = McpSource(home, project)
    try:
        await source.start()
        assert source.servers()[0].state == "fail" and "no answer within 1 s" in (source.servers()[0].cause or "")
    finally:
        await source.aclose()
    # stdin closed, then SIGTERM to its group: no process left (on a very slow start it may die before
    # writing its pid, leaving nothing to check)
    text = pid_file.read_text(encoding="utf-8") if pid_file.exists() else ""
    if text:
        await eventually(lambda: process_gone(int(text)))


async def test_unreachable_and_missing_command_fail_while_the_others_work(
    mcp_server: ServerFactory, home: Path, project: Path
) -> None:
    server = mcp_server("http")
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    dead_port = free.getsockname()[1]
    free.close()
    write_servers(
        home / "mcp.json",
        {
            "up": {"url": server.url},
            "down": {"url": f"http://127.0.0.1:{dead_port}/mcp?key=s3cret"},
            "nocmd": {"command": "/nonexistent/mcp-server"},
            "crash": {"command": sys.executable, "args": ["-c", "import sys; sys.stderr.write('boom: no config\\n')"]},
        },
    )
    write_rules(home, allow=["Mcp(*)"])
    source = McpSource(home, project)
    try:
        await source.start()
        states = {s.name: s for s in source.servers()}
        assert states["up"].state == "ok"
        assert "cannot connect to http://127.0.0.1:" in (states["down"].cause or "")
        assert "s3cret" not in (states["down"].cause or "") + states["down"].target
        assert "command not found: /nonexistent/mcp-server" in (states["nocmd"].cause or "")
        assert states["crash"].state == "fail" and "boom: no config" in (states["crash"].cause or "")
        assert sorted(source.failing()) == ["crash", "down", "nocmd"]
        assert {n.split("__")[1] for n in by_name(source)} == {"up"}
    finally:
        await source.aclose()


async def test_rules_decide_before_any_connection(httpserver: HTTPServer, home: Path, project: Path) -> None:
    marker = project / "started.txt"
    write_servers(
        home / "mcp.json",
        {
            "web": {"url": httpserver.url_for("/mcp")},
            "local": stdio_entry(marker),
            "quiet": {"url": httpserver.url_for("/other"), "enabled": False},
            "nobody": stdio_entry(marker),
        },
    )
    write_rules(home, allow=["Mcp(web)", "Mcp(local)", "Mcp(quiet)"], deny=["Mcp(web,*)", "Mcp(local)"])
    source = McpSource(home, project)
    try:
        report = await source.start()
        states = {s.name: s for s in source.servers()}
        assert {n: s.state for n, s in states.items()} == {
            "web": "disabled",
            "local": "disabled",
            "quiet": "disabled",
            "nobody": "disabled",
        }
        assert "Mcp(web,*)" in states["web"].reason and "Mcp(local)" in states["local"].reason
        assert '"enabled": false' in states["quiet"].reason and "Mcp(nobody)" in states["nobody"].reason
        assert source.tools() == [] and source.failing() == [] and report.infos == ()
    finally:
        await source.aclose()
    assert httpserver.log == []  # no request ever reached the address
    assert not marker.exists()  # no process was ever started


async def test_deny_all_wins_over_allow_all(httpserver: HTTPServer, home: Path, project: Path) -> None:
    marker = project / "started.txt"
    write_servers(home / "mcp.json", {"web": {"url": httpserver.url_for("/mcp")}, "local": stdio_entry(marker)})
    write_rules(home, allow=["Mcp(*)"], deny=["Mcp(*)"])
    source = McpSource(home, project)
    await source.start()
    await source.aclose()
    assert [s.state for s in source.servers()] == ["disabled", "disabled"]
    assert httpserver.log == [] and not marker.exists()


async def test_a_project_server_needs_the_users_own_rule(home: Path, project: Path) -> None:
    marker = project / "started.txt"
    write_servers(project / ".mcp.json", {"proj": stdio_entry(marker)})
    # everything a cloned repository can write: its .mcp.json and its own settings allowing it
    write_rules(project / ".maia", allow=["Mcp(*)", "Mcp(proj)"])
    write_rules(home, allow=["Mcp(*)"])  # the user's wildcard is not a yes to what a repository declares
    source = McpSource(home, project)
    await source.start()
    await source.aclose()
    status = source.servers()[0]
    assert status.state == "disabled" and status.origin == "project"
    assert str(home / "settings.json") in status.reason and "Mcp(proj)" in status.reason  # MAIA_HOME's, named
    assert not marker.exists()

    write_rules(home, allow=["Mcp(proj)"])
    source = McpSource(home, project)
    try:
        await source.start()
        assert source.servers()[0].state == "ok"
        assert marker.exists()
    finally:
        await source.aclose()


async def test_a_rule_from_the_caller_applies_as_given(mcp_server: ServerFactory, home: Path, project: Path) -> None:
    # a sub-agent builds its source from disk with its own rules: only (home, launch, rules)
    server = mcp_server("http")
    write_servers(home / "mcp.json", {"t": {"url": server.url, "excludeTools": ["big", "im*"]}})
    rules = parse_rules({"allow": ["Mcp(t,echo)"], "deny": ["Mcp(t,fail)", "mcp__t__pid"]}).ruleset
    source = McpSource(home, project, rules)
    try:
        await source.start()
        names = set(by_name(source))
        assert names == {f"mcp__t__{n}" for n in EXPECTED - {"big", "image", "fail", "pid"}}
        assert source.servers()[0].hidden_tools == 4  # big, image (excludeTools), fail, pid (deny rules)
    finally:
        await source.aclose()
    assert explain("mcp__t__echo", {"text": "x"}, rules, project).verdict == "allow"
    assert explain("mcp__t__add", {"a": 1}, rules, project).verdict == "ask"


async def test_include_tools_keeps_only_those(mcp_server: ServerFactory, home: Path, project: Path) -> None:
    server = mcp_server("http")
    write_servers(home / "mcp.json", {"t": {"url": server.url, "includeTools": ["echo", "a*"]}})
    write_rules(home, allow=["Mcp(t)"])
    source = McpSource(home, project)
    try:
        await source.start()
        assert set(by_name(source)) == {"mcp__t__echo", "mcp__t__add"}
    finally:
        await source.aclose()


async def test_http_server_restarted_between_calls_is_reconnected_and_the_call_resent(
    mcp_server: ServerFactory, home: Path, project: Path
) -> None:
    server = mcp_server("http")
    write_servers(home / "mcp.json", {"t": {"url": server.url}})
    write_rules(home, allow=["Mcp(t)"])
    source = McpSource(home, project)
    try:
        await source.start()
        tools = by_name(source)
        first_pid = await run(tools, "mcp__t__pid")
        restart(server)  # the new process does not know the old session: the request cannot have run
        second_pid = await run(tools, "mcp__t__pid")
        assert second_pid != first_pid
        status = source.servers()[0]
        assert status.state == "ok" and status.reconnects == 1
    finally:
        await source.aclose()


async def test_a_server_down_mid_session_fails_then_comes_back_when_needed(
    mcp_server: ServerFactory, home: Path, project: Path
) -> None:
    server = mcp_server("http")
    write_servers(home / "mcp.json", {"t": {"url": server.url}})
    write_rules(home, allow=["Mcp(t)"])
    source = McpSource(home, project)
    changes: list[str] = []
    source.subscribe(lambda: changes.append(source.servers()[0].state))
    try:
        await source.start()
        tools = by_name(source)
        assert await run(tools, "mcp__t__echo", text="a") == "a"
        server.kill()
        with pytest.raises(ToolError, match="reconnecting failed: cannot connect"):
            await run(tools, "mcp__t__echo", text="b")
        assert source.failing() == ["t"] and "cannot connect" in (source.servers()[0].cause or "")
        assert set(by_name(source)) == set(tools)  # still offered: the next call tries again
        restart(server)
        assert await run(by_name(source), "mcp__t__echo", text="c") == "c"
        assert source.failing() == []
        assert "fail" in changes and changes[-1] == "ok"
    finally:
        await source.aclose()


async def test_local_server_dying_during_a_call_is_reconnected_but_not_resent(home: Path, project: Path) -> None:
    write_servers(home / "mcp.json", {"io": stdio_entry()})
    write_rules(home, allow=["Mcp(io)"])
    source = McpSource(home, project)
    try:
        await source.start()
        tools = by_name(source)
        before = int(await run(tools, "mcp__io__pid"))
        with pytest.raises(ToolError, match="may or may not have run"):
            await run(tools, "mcp__io__die")
        after = int(await run(tools, "mcp__io__pid"))
        assert after != before and source.servers()[0].reconnects == 1
    finally:
        await source.aclose()


async def test_local_server_killed_between_calls_shows_fail_then_the_call_is_resent(home: Path, project: Path) -> None:
    write_servers(home / "mcp.json", {"io": stdio_entry()})
    write_rules(home, allow=["Mcp(io)"])
    source = McpSource(home, project)
    try:
        await source.start()
        tools = by_name(source)
        pid = int(await run(tools, "mcp__io__pid"))
        kill_process(pid)
        await eventually(lambda: source.failing() == ["io"])  # noticed without any call: the status line shows it
        assert "process ended" in (source.servers()[0].cause or "")
        assert await run(tools, "mcp__io__echo", text="again") == "again"
        assert source.failing() == []
    finally:
        await source.aclose()


async def test_a_server_down_at_start_comes_up_on_reconnect(
    mcp_server: ServerFactory, home: Path, project: Path
) -> None:
    spare = socket.socket()
    spare.bind(("127.0.0.1", 0))
    port = spare.getsockname()[1]
    spare.close()
    write_servers(home / "mcp.json", {"late": {"url": f"http://127.0.0.1:{port}/mcp"}})
    write_rules(home, allow=["Mcp(late)"])
    source = McpSource(home, project)
    try:
        await source.start()
        assert source.failing() == ["late"] and source.tools() == []
        mcp_server("http", port=port)
        report = await source.reconnect()
        assert report.infos and "OK" in report.infos[0]
        assert "mcp__late__echo" in by_name(source)
        report = await source.reconnect("late")  # a named server is reconnected afresh even when OK
        assert source.servers()[0].reconnects == 1
        assert [w for w in report.warnings if "same name" not in w] == []
        assert (await source.reconnect("nope")).warnings == ("No MCP server is declared as nope.",)
    finally:
        await source.aclose()


async def test_prompts_and_resources(mcp_server: ServerFactory, home: Path, project: Path) -> None:
    server = mcp_server("sse")
    write_servers(home / "mcp.json", {"docs": {"type": "sse", "url": server.url}})
    write_rules(home, allow=["Mcp(docs)"])
    source = McpSource(home, project)
    try:
        await source.start()
        prompt = source.find_prompt("/mcp__docs__review")
        assert prompt is not None and prompt.description == "Ask for a code review."
        assert [(a.name, a.required) for a in prompt.arguments] == [("code", True), ("language", False)]
        arguments = parse_prompt_arguments(prompt, "'x = 1' language=rust")
        assert arguments == {"code": "x = 1", "language": "rust"}
        messages = await source.get_prompt("docs", "review", arguments)
        assert messages == [("user", "Please review this rust code:\nx = 1")]
        with pytest.raises(ToolFailure, match="docs: the prompt nope failed"):
            await source.get_prompt("docs", "nope", {})

        assert [(r.uri, r.mime_type) for r in source.resources()] == [
            ("memo://notes", "text/plain"),
            ("memo://logo", "image/png"),
        ]
        assert await source.read_resource("docs", "memo://notes") == "remember the milk"
        assert await source.read_resource("docs", "memo://logo") == "[resource memo://logo: image/png, 92 B]"
        assert source.resource_refs("see @docs:memo://notes. and @other:x://y and mail@docs:z") == [
            ("docs", "memo://notes")
        ]
        assert [r.uri for r in await source.list_resources("docs")] == ["memo://notes", "memo://logo"]
        with pytest.raises(ToolFailure, match="No MCP server is declared as web"):
            await source.read_resource("web", "x://y")
    finally:
        await source.aclose()


async def test_close_ends_local_processes_and_start_can_run_again(home: Path, project: Path) -> None:
    write_servers(home / "mcp.json", {"io": stdio_entry()})
    write_rules(home, allow=["Mcp(io)"])
    source = McpSource(home, project)
    await source.start()
    pid = int(await run(by_name(source), "mcp__io__pid"))
    await source.aclose()
    await eventually(lambda: process_gone(pid))
    assert source.servers()[0].state == "idle"

    await source.start()  # a new session: connections made again
    try:
        second = int(await run(by_name(source), "mcp__io__pid"))
        assert second != pid
    finally:
        await source.aclose()
    await eventually(lambda: process_gone(second))


async def test_close_is_bounded_even_when_a_local_server_ignores_it(home: Path, project: Path) -> None:
    write_servers(home / "mcp.json", {"io": stdio_entry(), "stubborn": stdio_entry(flags=["--stubborn"])})
    write_rules(home, allow=["Mcp(*)"])
    source = McpSource(home, project)
    await source.start()
    tools = by_name(source)
    pids = [int(await run(tools, f"mcp__{name}__pid")) for name in ("io", "stubborn")]
    # a signal arrived: MAIA gives the connections at most 1 s here (3 s in the product) and moves on
    await asyncio.wait_for(source.aclose(timeout=1.0), 30)
    # the well-behaved server is gone; the stubborn one (deaf to stdin closing and SIGTERM) is killed
    # by the SDK's escalation, which goes on as long as the event loop runs: nothing is left behind
    await eventually(lambda: all(process_gone(pid) for pid in pids))


async def test_a_cancelled_call_leaves_the_server_usable(mcp_server: ServerFactory, home: Path, project: Path) -> None:
    server = mcp_server("http")
    write_servers(home / "mcp.json", {"t": {"url": server.url}})
    write_rules(home, allow=["Mcp(t)"])
    source = McpSource(home, project)
    try:
        await source.start()
        tools = by_name(source)
        call = asyncio.ensure_future(run(tools, "mcp__t__slow", seconds=60))  # Ctrl+C during a tool call
        await asyncio.sleep(0.5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await run(tools, "mcp__t__echo", text="next") == "next"
        assert source.failing() == []
    finally:
        await source.aclose()


async def test_server_stderr_stays_off_the_terminal(
    home: Path, project: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_servers(home / "mcp.json", {"io": stdio_entry()})
    write_rules(home, allow=["Mcp(io)"])
    source = McpSource(home, project)
    try:
        await source.start()
        with pytest.raises(ToolError):
            await run(by_name(source), "mcp__io__fail")  # the server logs a traceback on its stderr
    finally:
        await source.aclose()
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err and "Tool 'fail' raised" not in captured.err
    log = home / "logs" / "mcp" / "io.stderr.log"
    assert "Tool 'fail' raised" in log.read_text(encoding="utf-8")


def test_constructing_a_source_imports_no_sdk(home: Path, project: Path) -> None:
    code = (
        "import sys, pathlib\n"
        "from maia.mcp.source import McpSource\n"
        "McpSource(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'httpx2'))))\n"
    )
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", code, str(home), str(project)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    )
    assert json.loads(done.stdout.replace("'", '"')) == []
