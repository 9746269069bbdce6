"""Spare sub-agent children: started when a run ends, loaded, taken by the next matching call, discarded otherwise."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from maia.subagents import launcher
from maia.subagents.launcher import discard_spares, launch_subagent, spare_ready, start_spare
from maia.subagents.source import AgentSource
from maia.subagents.tool import AgentTool
from tests.agent.helpers import process_alive
from tests.streams import text_stream
from tests.subagents.conftest import ScriptedLiteLLM
from tests.subagents.test_process import definition, spec_for, wait_for

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups and /proc")


def spare_process() -> asyncio.subprocess.Process | None:
    """This event loop's spare child, if there is one."""
    spare = launcher._spares.get(asyncio.get_running_loop())
    return spare.process if spare is not None else None


def spare_pid() -> int | None:
    """The pid of this event loop's spare child, if there is one."""
    process = spare_process()
    return process.pid if process is not None else None


def command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


async def test_a_run_that_asks_for_one_leaves_a_loaded_spare_and_the_next_call_takes_it(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", text_stream("first answer"), text_stream("second answer"))
    agent = definition(home, project, "rev")
    first = await launch_subagent(spec_for(agent, "one", project, home), keep_spare=True)
    assert first.ok, first.error
    assert await spare_ready()  # it said "ready": its modules are loaded, it waits for a task
    spare = spare_process()
    assert spare is not None
    pid = spare.pid
    assert process_alive(pid)
    assert command_line(pid)[-1] == "--subagent"
    assert os.getpgid(pid) == pid  # a session of its own, as every child (the terminal's Ctrl+C is the parent's)

    second = await launch_subagent(spec_for(agent, "two", project, home))
    assert second.ok, second.error
    assert second.summary == "second answer"
    assert [r["messages"][-1]["content"] for r in script.requests["rev"]] == ["one", "two"]
    assert spare_pid() is None  # taken, and this call asked for no other
    assert await spare.wait() == 0  # the spare ran the task and ended with it (a discarded one is killed)
    assert not await spare_ready()


async def test_a_spare_for_another_folder_or_environment_is_discarded_not_used(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", text_stream("done"), text_stream("done again"))
    agent = definition(home, project, "rev")
    spec = spec_for(agent, "task", project, home)
    await start_spare(spec, env={**os.environ, "MAIA_SPARE_TEST": "a"})
    assert await spare_ready()
    stale = spare_process()
    assert stale is not None
    result = await launch_subagent(spec, env={**os.environ, "MAIA_SPARE_TEST": "b"})
    assert result.ok, result.error
    assert await stale.wait() == -signal.SIGKILL  # killed, never given the task
    assert len(script.requests["rev"]) == 1

    other = project / "sub"
    other.mkdir()
    await start_spare(spec)  # the project folder…
    assert await spare_ready()
    stale = spare_process()
    assert stale is not None
    result = await launch_subagent(spec_for(agent, "task", other, home))  # …is not this call's folder
    assert result.ok, result.error
    assert await stale.wait() == -signal.SIGKILL


async def test_a_spare_that_died_is_not_used(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", text_stream("done"))
    spec = spec_for(definition(home, project, "rev"), "task", project, home)
    await start_spare(spec)
    assert await spare_ready()
    pid = spare_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    await wait_for(lambda: not process_alive(pid))
    result = await launch_subagent(spec)  # a child of its own, started for the call
    assert result.ok, result.error
    assert result.summary == "done"


async def test_the_agent_source_discards_its_spare_when_it_closes(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    source = AgentSource(project, home)
    await source.start()
    (tool,) = source.tools()
    assert isinstance(tool, AgentTool) and tool.spares  # the application's tool keeps spares: the source ends them
    await start_spare(spec_for(definition(home, project, "rev"), "task", project, home))
    assert await spare_ready()
    pid = spare_pid()
    assert pid is not None
    await source.aclose()
    assert spare_pid() is None
    assert not process_alive(pid)  # killed and reaped before aclose returned


async def test_discard_while_the_spare_is_still_starting(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    await start_spare(spec_for(definition(home, project, "rev"), "task", project, home))
    await discard_spares()  # at once: its start is cancelled, or it is killed once started
    assert spare_pid() is None
    assert not await spare_ready()


async def test_a_cancelled_run_leaves_no_spare(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    asked, release = threading.Event(), threading.Event()

    def held(_body: dict[str, object]) -> bytes:
        asked.set()
        release.wait(60)
        return text_stream("late")

    script.add("rev", held)
    run = asyncio.ensure_future(
        launch_subagent(spec_for(definition(home, project, "rev"), "task", project, home), keep_spare=True)
    )
    try:
        assert await asyncio.to_thread(asked.wait, 60)  # the child's request is at the server
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    finally:
        release.set()
    assert spare_pid() is None
    assert not await spare_ready()


def test_a_spare_dies_with_its_parent(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    """Even a parent killed by SIGKILL leaves no spare behind (the guardian watches it as every child)."""
    make_agent("rev")
    parent = textwrap.dedent(
        f"""
        import asyncio, sys, time
        from pathlib import Path
        from maia.subagents import launcher
        from maia.subagents.definitions import load_agents
        from maia.subagents.protocol import ChildSpec

        async def main():
            home, project = Path({str(home)!r}), Path({str(project)!r})
            agent = load_agents(home, project).agents["rev"]
            await launcher.start_spare(ChildSpec(definition=agent, task="t", launch=project, home=home, model="m"))
            assert await launcher.spare_ready()
            print(launcher._spares[asyncio.get_running_loop()].process.pid, flush=True)
            await asyncio.sleep(600)

        asyncio.run(main())
        """
    )
    process = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        pid = int(process.stdout.readline())
        assert process_alive(pid)
        process.kill()
        process.wait()
        asyncio.run(wait_for(lambda: not process_alive(pid)))
    finally:
        process.kill()
        process.wait()
