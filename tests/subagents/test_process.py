"""Real sub-agent processes (``python -m maia --subagent``) talking to a scripted LiteLLM server."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from werkzeug import Response

from maia.agent.runner import USER_REFUSED, ToolRunner
from maia.core.contracts import ToolContext, ToolUseBlock
from maia.sessions.store import SessionStore
from maia.subagents import protocol
from maia.subagents.definitions import AgentDefinition, load_agents
from maia.subagents.launcher import launch_subagent, questions_waiting
from maia.subagents.prompt import FINAL_SUMMARY_REQUEST
from maia.subagents.protocol import ChildSpec
from maia.subagents.spares import child_command
from maia.subagents.tool import AgentTool, parse_agent_invocation, run_direct
from tests.agent.helpers import process_alive
from tests.streams import sse, text_stream, tool_stream
from tests.subagents.conftest import ScriptedLiteLLM

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups and /proc")
MODEL = "scripted-openai"


def definition(home: Path, project: Path, name: str) -> AgentDefinition:
    loaded = load_agents(home, project)
    assert loaded.warnings == []
    return loaded.agents[name]


def spec_for(agent: AgentDefinition, task: str, project: Path, home: Path, parent: str = "session_parent") -> ChildSpec:
    return ChildSpec(definition=agent, task=task, launch=project, home=home, model=MODEL, parent_session=parent)


async def wait_for(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    """Poll until ``condition`` holds (generous: the machine may be loaded)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


class Asker:
    """The parent's interface for questions: records them, answers with ``reply``."""

    def __init__(self, reply: bool | Callable[[str], Awaitable[bool]] = True) -> None:
        self.questions: list[str] = []
        self.reply = reply
        self.open = 0
        self.most_open = 0
        self.warnings: list[str] = []
        self.infos: list[str] = []

    async def confirm(self, message: str) -> bool:
        self.questions.append(message)
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            if isinstance(self.reply, bool):
                await asyncio.sleep(0.01)
                return self.reply
            return await self.reply(message)
        finally:
            self.open -= 1

    async def ask(self, message: str, approval: Any = None) -> str:
        return "yes" if await self.confirm(message) else "no"

    def info(self, text: str) -> None:
        self.infos.append(text)

    def on_warning(self, message: str) -> None:
        self.warnings.append(message)

    def on_thinking(self, thinking: bool) -> None: ...
    def on_text(self, text: str) -> None: ...
    def on_text_end(self) -> None: ...
    def on_reasoning(self, text: str) -> None: ...
    def on_tool_call(self, name: str, summary: str) -> None: ...
    def on_tool_result(self, name: str, output: str, is_error: bool) -> None: ...
    def on_subagent_tool(self, agent: str, phase: str, name: str, summary: str, is_error: bool) -> None: ...
    def on_context_usage(self, tokens: int) -> None: ...
    def on_tools_running(self, progress: Any) -> None: ...


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_a_run_returns_its_summary(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev", "omitMd: true")
    (project / "MAIA.md").write_text("PROJECT RULES")
    script.add("rev", text_stream("All good."))
    result = await launch_subagent(spec_for(definition(home, project, "rev"), "check a.py", project, home))
    assert result.ok, result.error
    assert result.summary == "All good." and result.tool_calls == 0 and result.error is None
    request = script.requests["rev"][0]
    assert request["model"] == MODEL
    assert request["messages"][-1] == {"role": "user", "content": "check a.py"}
    system = request["messages"][0]["content"]
    assert "Look at what the task names." in system and "# Output\n\nOne short paragraph." in system
    assert "PROJECT RULES" not in system  # omitMd
    names = {t["function"]["name"] for t in request["tools"]}
    assert {"Read", "Write", "Bash"} <= names and "Agent" not in names
    assert result.messages == [] and result.trace is None  # no trace asked: nothing travels, nothing written
    assert not (project / ".maia" / ".sessions").exists()


async def test_definition_filters_tools_and_adds_rules(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    project_rules: Callable[..., Path],
    home: Path,
    project: Path,
) -> None:
    (project / "MAIA.md").write_text("PROJECT RULES")
    (project / "a.txt").write_text("secret")
    project_rules(allow=["Glob"], deny=["Read(a.txt)"])
    make_agent("rev", "tools: read, GLOB, Nope\npermissions:\n  allow: [Read]")
    script.add("rev", tool_stream("Read", {"path": "a.txt"}), tool_stream("Glob", {"pattern": "*.txt"}, "c2"))
    script.add("rev", text_stream("done"))
    asker = Asker()
    logs: list[tuple[str, str]] = []
    result = await launch_subagent(
        spec_for(definition(home, project, "rev"), "t", project, home),
        confirm=asker.confirm,
        on_log=lambda level, text: logs.append((level, text)),
    )
    assert result.ok, result.error
    first, second, third = script.requests["rev"]
    assert sorted(t["function"]["name"] for t in first["tools"]) == ["Glob", "Read"]
    assert "PROJECT RULES" in first["messages"][0]["content"]
    assert "denied" in tool_messages(second)[0]  # the inherited deny is not lifted by the agent's allow
    # Glob: allowed by the inherited rule, no question; the file the inherited Read deny covers is left out
    assert "[1 matching files left out: a Read deny rule covers them]" in tool_messages(third)[1]
    assert asker.questions == []
    assert any(level == "warn" and '"Nope"' in text for level, text in logs)


@pytest.mark.parametrize("answer", [True, False])
async def test_a_question_is_relayed_and_answered(
    answer: bool, script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", tool_stream("Write", {"path": "out.txt", "content": "hi"}), text_stream("finished"))
    asker = Asker(answer)
    result = await launch_subagent(
        spec_for(definition(home, project, "rev"), "write it", project, home), confirm=asker.confirm
    )
    assert result.ok, result.error
    assert len(asker.questions) == 1
    assert asker.questions[0].startswith("[sub-agent rev] Allow Write: out.txt")
    written = tool_messages(script.requests["rev"][1])[0]
    if answer:
        assert (project / "out.txt").read_text() == "hi" and written != USER_REFUSED
    else:
        assert not (project / "out.txt").exists() and written == USER_REFUSED
    assert result.tool_calls == 1


async def test_without_an_interface_questions_are_refused(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", tool_stream("Write", {"path": "out.txt", "content": "hi"}), text_stream("finished"))
    result = await launch_subagent(spec_for(definition(home, project, "rev"), "write it", project, home))
    assert result.ok and not (project / "out.txt").exists()
    assert tool_messages(script.requests["rev"][1]) == [USER_REFUSED]


def hang_tool(project: Path, marker: Path) -> None:
    """A custom tool that writes its pid and its parent's, then sleeps."""
    folder = project / ".maia" / "tools" / "hang"
    folder.mkdir(parents=True)
    (folder / "hang.py").write_text(
        "import os, sys, time\n"
        "with open(sys.argv[1] + '.tmp', 'w') as f: f.write(f'{os.getpid()} {os.getppid()}')\n"
        "os.replace(sys.argv[1] + '.tmp', sys.argv[1])\n"
        "time.sleep(600)\n"
    )
    tool = {
        "name": "hang",
        "description": "Hangs.",
        "command": {"run": f"{sys.executable} ./hang.py {marker}", "parameters": []},
    }
    (folder / "TOOL.json").write_text(json.dumps(tool))


async def test_cancelling_aborts_the_child_and_its_tools_and_keeps_the_trace(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    project_rules: Callable[..., Path],
    home: Path,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the tool's pids must be the machine's, not a PID namespace's; the marker is outside the project
    monkeypatch.setenv("MAIA_SANDBOX_NAMESPACES", "off")
    marker = tmp_path / "pids"
    hang_tool(project, marker)
    project_rules(allow=["hang"])
    make_agent("rev", "trace: true")
    script.add("rev", tool_stream("hang", {}))
    run = asyncio.create_task(launch_subagent(spec_for(definition(home, project, "rev"), "hang", project, home)))
    await wait_for(marker.exists)
    tool_pid, child_pid = map(int, marker.read_text().split())
    assert process_alive(tool_pid) and process_alive(child_pid)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert not process_alive(child_pid)  # the launcher waited for it
    await wait_for(lambda: not process_alive(tool_pid))
    saved = SessionStore.for_launch(project).load("session_parent-rev")
    assert saved.agent == "rev" and saved.parent_session == "session_parent"
    assert [b.name for m in saved.messages for b in m.tool_uses] == ["hang"]


async def test_cancelling_withdraws_an_open_question_and_the_child_refuses_it(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", tool_stream("Write", {"path": "out.txt", "content": "hi"}))
    withdrawn = asyncio.Event()

    async def never(_question: str) -> bool:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            withdrawn.set()
            raise
        return True

    asker = Asker(never)
    run = asyncio.create_task(
        launch_subagent(spec_for(definition(home, project, "rev"), "w", project, home), confirm=asker.confirm)
    )
    await wait_for(lambda: asker.open == 1)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert withdrawn.is_set() and asker.open == 0
    assert not (project / "out.txt").exists()
    assert script.seen("rev") == 1  # stopped: no further model call


async def test_the_time_limit_stops_the_child(project: Path, tmp_path: Path) -> None:
    deaf = "import sys\nfor line in sys.stdin: pass\n"  # never answers, ignores abort: killed after the grace
    agent = AgentDefinition("slow", "d", project / "AGENT.md", "project", "i", "m", "o")
    spec = ChildSpec(agent, "t", project, tmp_path, MODEL)
    result = await launch_subagent(spec, command=[sys.executable, "-c", deaf], timeout=2, kill_grace=0.5)
    assert result.timed_out and not result.ok and not result.aborted
    assert result.error == "The sub-agent was stopped: it ran longer than its time limit (2 s)."


async def test_a_rate_limit_is_waited_out(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    limited = Response('{"error": {"message": "slow down"}}', status=429, headers={"retry-after": "0"})
    script.add("rev", limited, text_stream("after the wait"))
    logs: list[tuple[str, str]] = []
    result = await launch_subagent(
        spec_for(definition(home, project, "rev"), "t", project, home), on_log=lambda *log: logs.append(log)
    )
    assert result.ok and result.summary == "after the wait"
    assert len(logs) == 1 and logs[0][0] == "info" and "resuming then (0 s)" in logs[0][1]
    assert script.requests["rev"][1]["messages"][-1] == {"role": "user", "content": "t"}  # sent again, once
    assert len(script.requests["rev"][1]["messages"]) == 2


async def test_a_child_that_ignores_abort_is_killed_with_what_it_started(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    stubborn = (
        "import os, signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "sys.stdin.readline()\n"
        "p = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
        f"open({str(marker)!r} + '.tmp', 'w').write(f'{{os.getpid()}} {{p.pid}}')\n"
        f"os.replace({str(marker)!r} + '.tmp', {str(marker)!r})\n"
        "for line in sys.stdin: pass\n"  # reads abort, does nothing
        "time.sleep(600)\n"
    )
    agent = AgentDefinition("stub", "d", project / "AGENT.md", "project", "i", "m", "o")
    spec = ChildSpec(agent, "t", project, tmp_path, MODEL)
    run = asyncio.create_task(launch_subagent(spec, command=[sys.executable, "-c", stubborn], kill_grace=0.5))
    await wait_for(marker.exists)
    child_pid, sleep_pid = map(int, marker.read_text().split())
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert not process_alive(child_pid)
    await wait_for(lambda: not process_alive(sleep_pid))


async def test_a_crash_gives_an_error_with_the_end_of_stderr(project: Path, tmp_path: Path) -> None:
    crash = (
        "import sys\n"
        "sys.stdin.readline()\n"
        "print('line 1 of noise', file=sys.stderr)\n"
        "print('Traceback (most recent call last):\\nRuntimeError: boom', file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    agent = AgentDefinition("stub", "d", project / "AGENT.md", "project", "i", "m", "o")
    result = await launch_subagent(
        ChildSpec(agent, "t", project, tmp_path, MODEL), command=[sys.executable, "-c", crash]
    )
    assert not result.ok and result.error is not None
    assert "ended without a result (exit code 3)" in result.error
    assert result.error.endswith("Traceback (most recent call last):\nRuntimeError: boom")


async def test_a_real_child_killed_mid_run_is_an_error(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", tool_stream("Write", {"path": "out.txt", "content": "hi"}))

    async def kill_the_child(_question: str) -> bool:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                if protocol.SUBAGENT_FLAG.encode() in cmdline and int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                    os.kill(int(entry), signal.SIGKILL)
        await asyncio.sleep(0.01)
        return True

    result = await launch_subagent(
        spec_for(definition(home, project, "rev"), "write", project, home), confirm=kill_the_child
    )
    assert not result.ok and result.error is not None
    assert result.error.startswith("The sub-agent process ended without a result (killed by signal 9).")
    assert not (project / "out.txt").exists()


async def test_the_child_stops_when_the_parent_goes_away(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", tool_stream("Write", {"path": "out.txt", "content": "hi"}))
    spec = spec_for(definition(home, project, "rev"), "write", project, home)
    with subprocess.Popen(child_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=project) as child:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(protocol.encode(protocol.start(spec)))
        child.stdin.flush()
        question = await asyncio.to_thread(child.stdout.readline)
        # "ready" and "started" come first (loaded, then the task read); the call is announced before it is asked about
        while protocol.decode(question)["type"] in ("ready", "started", "tool"):
            question = await asyncio.to_thread(child.stdout.readline)
        assert protocol.decode(question)["type"] == "confirm"
        child.stdin.close()  # the parent is gone
        assert await asyncio.to_thread(child.wait, 60) == 130
        assert child.stdout.read() == b""  # nobody to tell: no done
    assert not (project / "out.txt").exists()


async def test_traces_are_saved_with_the_2_rule(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev", "trace: true")
    script.add("rev", text_stream("first"), text_stream("second"))
    agent = definition(home, project, "rev")
    first = await launch_subagent(spec_for(agent, "one", project, home))
    second = await launch_subagent(spec_for(agent, "two", project, home))
    assert (first.trace, second.trace) == ("session_parent-rev", "session_parent-rev_2")
    store = SessionStore.for_launch(project)
    saved = store.load("session_parent-rev_2")
    assert saved.agent == "rev" and saved.parent_session == "session_parent" and saved.model == MODEL
    assert [m.text for m in saved.messages] == ["two", "second"]
    assert store.load("session_parent-rev").messages[1].text == "first"


async def test_an_exhausted_budget_asks_for_the_summary(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    project_rules: Callable[..., Path],
    home: Path,
    project: Path,
) -> None:
    project_rules(allow=["Glob"])
    make_agent("rev", "effort: low")
    script.add("rev", *[tool_stream("Glob", {"pattern": "*"}, f"c{i}") for i in range(10)])
    script.add("rev", sse({"choices": [{"index": 0, "delta": {"content": "Budget summary."}}]}))
    result = await launch_subagent(spec_for(definition(home, project, "rev"), "loop", project, home))
    assert result.ok and result.summary == "Budget summary." and result.tool_calls == 10
    requests = script.requests["rev"]
    assert len(requests) == 11
    last = requests[-1]
    assert last["max_tokens"] == 4000 and last["tools"] == requests[0]["tools"]  # declared, unusable
    assert last["messages"][-2]["role"] == "tool"  # the last results and the request share one user turn
    assert last["messages"][-1] == {"role": "user", "content": FINAL_SUMMARY_REQUEST}


async def test_an_empty_last_answer_asks_for_the_summary(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", text_stream(""), text_stream("Now the summary."))
    result = await launch_subagent(spec_for(definition(home, project, "rev"), "t", project, home))
    assert result.ok and result.summary == "Now the summary."
    assert script.requests["rev"][1]["messages"][-1]["content"] == FINAL_SUMMARY_REQUEST


async def test_a_provider_failure_is_an_error_result(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path, quick_retries: float
) -> None:
    make_agent("rev")  # nothing scripted: the server answers 500, retried as the shared policy says
    logs: list[tuple[str, str]] = []
    result = await launch_subagent(
        spec_for(definition(home, project, "rev"), "t", project, home), on_log=lambda *log: logs.append(log)
    )
    assert not result.ok and result.error is not None and "no scripted answer left for rev" in result.error
    # the child waited as MAIA_RETRY_SCALE, inherited from this process, says: 2, 4, 8, 16 s a thousandth each
    # ("Server error (HTTP 500): retrying at 16:18:40 (0 s)": whole seconds left, rounded up)
    waits = [int(m.rsplit("(", 1)[1].removesuffix(" s)")) for _, m in logs if "retrying at" in m]
    assert len(waits) == 4 and max(waits) <= 1 + 16 * 1.25 * quick_retries, logs
    assert script.seen("rev") == 5


async def test_two_agents_in_one_answer_run_in_parallel(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("alpha")
    make_agent("beta", description="Betas things.")
    script.add("alpha", tool_stream("Write", {"path": "a.txt", "content": "a"}), text_stream("alpha done"))
    script.add("beta", text_stream("beta done"))

    async def reply(question: str) -> bool:
        if question.startswith("[sub-agent alpha]"):
            # alpha waits for an answer that only comes once beta has started: run one after the
            # other, the two would never finish
            await wait_for(lambda: script.seen("beta") > 0)
        return True

    ui = Asker(reply)
    loaded = load_agents(home, project)
    tool = AgentTool(loaded.agents, home=home)
    ctx = ToolContext(launch=project, model=MODEL, ui=ui, session="session_p")
    runner = ToolRunner({"Agent": tool}, ui, ctx)
    calls = [
        ToolUseBlock("1", "Agent", {"agent": "alpha", "task": "write a"}),
        ToolUseBlock("2", "Agent", {"agent": "beta", "task": "nothing"}),
    ]
    outcome = await runner.run(calls)
    assert [r.is_error for r in outcome.results] == [False, False]
    assert outcome.results[0].content == 'Summary of sub-agent "alpha":\n\nalpha done'
    assert outcome.results[1].content == 'Summary of sub-agent "beta":\n\nbeta done'
    assert ui.questions[:2] == ["Allow Agent: alpha: write a?", "Allow Agent: beta: nothing?"]
    assert ui.questions[2].startswith("[sub-agent alpha] Allow Write: a.txt")
    assert ui.most_open == 1
    assert len(ui.infos) == 2 and all("finished in" in i for i in ui.infos)


async def test_questions_of_parallel_agents_come_one_at_a_time(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    for name in ("alpha", "beta"):
        make_agent(name)
        script.add(name, tool_stream("Write", {"path": f"{name}.txt", "content": name}), text_stream("ok"))

    async def reply(_question: str) -> bool:
        if len(asker.questions) == 1:  # the first question stays open until the other one waits its turn
            await wait_for(lambda: questions_waiting() == 1)
        return True

    asker = Asker(reply)
    loaded = load_agents(home, project)
    results = await asyncio.gather(
        *(
            launch_subagent(spec_for(loaded.agents[name], "w", project, home), confirm=asker.confirm)
            for name in ("alpha", "beta")
        )
    )
    assert all(r.ok for r in results)
    assert len(asker.questions) == 2 and asker.most_open == 1
    assert (project / "alpha.txt").exists() and (project / "beta.txt").exists()
    assert questions_waiting() == 0


async def test_the_agent_tool_reports_a_failure_as_an_error_result(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path, quick_retries: float
) -> None:
    make_agent("rev")
    ui = Asker()
    tool = AgentTool(load_agents(home, project).agents, home=home)
    runner = ToolRunner({"Agent": tool}, ui, ToolContext(launch=project, model=MODEL, ui=ui))
    outcome = await runner.run([ToolUseBlock("1", "Agent", {"agent": "rev", "task": "t"})])
    result = outcome.results[0]
    assert result.is_error and result.content.startswith('Sub-agent "rev" failed: LiteLLM answered HTTP 500')
    assert ui.warnings and ui.warnings[-1].startswith('Sub-agent "rev" failed:')


async def test_a_fragment_picks_the_model_and_an_unknown_one_falls_back(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    from maia.core.settings import load_settings
    from maia.provider.models import list_models

    make_agent("frag", "model: ANTHROP")
    make_agent("lost", "model: no-such-model")
    script.add("frag", text_stream("f"))
    script.add("lost", text_stream("l"))
    settings = load_settings(home)
    loads = 0

    async def models() -> Any:
        nonlocal loads
        loads += 1
        return await list_models(settings)

    ui = Asker()
    tool = AgentTool(load_agents(home, project).agents, home=home, list_models=models)
    ctx = ToolContext(launch=project, model="mock-litellm", ui=ui)
    await tool.execute({"agent": "frag", "task": "t"}, ctx)
    await tool.execute({"agent": "lost", "task": "t"}, ctx)
    assert script.requests["frag"][0]["model"] == "scripted-anthropic"
    assert script.requests["lost"][0]["model"] == "mock-litellm"
    assert loads == 1  # loaded once, on demand
    assert any('no LiteLLM model matches "no-such-model"' in w for w in ui.warnings)


async def test_ampersand_runs_the_agent_directly(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("Rev")
    script.add("Rev", text_stream("direct summary"))
    invocation = parse_agent_invocation("&rev")
    assert invocation is not None
    ui = Asker()
    result = await run_direct(
        invocation,
        load_agents(home, project).agents,
        launch=project,
        home=home,
        parent_model=MODEL,
        parent_session="s",
        ui=ui,
    )
    assert result.ok and result.summary == "direct summary"
    assert ui.questions == []  # no Agent tool, no question about launching it
    assert "Carry out your missions" in script.requests["Rev"][0]["messages"][-1]["content"]
    assert len(ui.infos) == 1
    assert ui.infos[0].startswith('Sub-agent "Rev" finished in ') and ui.infos[0].endswith(" s (0 tool calls).")


async def test_the_main_agent_loop_calls_a_sub_agent(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    from maia.agent.loop import AgentSession, run_turn
    from maia.core.settings import load_settings
    from maia.permissions.engine import explain
    from maia.provider.litellm import LiteLLMProvider

    make_agent("rev")
    script.add("main", tool_stream("Agent", {"agent": "rev", "task": "review a.py"}), text_stream("Main done."))
    script.add("rev", text_stream("Sub summary."))
    agents = load_agents(home, project).agents
    provider = LiteLLMProvider(load_settings(home), MODEL)
    session = AgentSession(
        provider=provider,
        system="You are MAIA.",
        tools={"Agent": AgentTool(agents, home=home)},
        ui=Asker(),  # type: ignore[arg-type]
        launch=project,
        permissions=lambda name, tool_input: explain(name, tool_input, {"allow": ["Agent(rev)"]}, project),
    )
    try:
        assert await run_turn(session, "review it") == "done"
    finally:
        await provider.aclose()
    main_second = script.requests["main"][1]
    assert tool_messages(main_second) == ['Summary of sub-agent "rev":\n\nSub summary.']
    assert script.requests["rev"][0]["messages"][-1] == {"role": "user", "content": "review a.py"}


async def test_a_question_out_of_doubt_carries_the_engines_reason(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    (home / "settings.json").write_text(
        (home / "settings.json")
        .read_text()
        .replace('"LiteLLM_URL"', '"permissions": {"deny": ["Bash(rm *)"]}, "LiteLLM_URL"')
    )
    make_agent("rev")
    script.add("rev", tool_stream("Bash", {"command": 'X="rm -rf x"; eval "$X"'}), text_stream("finished"))
    seen: list[tuple[str, str | None]] = []

    async def confirm(question: str, doubt: str | None = None) -> bool:
        seen.append((question, doubt))
        return False

    result = await launch_subagent(spec_for(definition(home, project, "rev"), "go", project, home), confirm=confirm)
    assert result.ok, result.error
    ((question, doubt),) = seen
    assert question.startswith("[sub-agent rev] Allow Bash") and doubt  # the reason travels with the question
