"""Spare sub-agent children: started when a run ends, loaded, taken by the next matching call, discarded otherwise."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug import Response

from maia.app.application import Application
from maia.core.contracts import ToolContext
from maia.subagents import spares
from maia.subagents.launcher import SubAgentResult, launch_subagent
from maia.subagents.source import AgentSource
from maia.subagents.spares import discard_spares, pool, spare_ready, start_spare
from maia.subagents.tool import AgentTool
from tests.agent.helpers import process_alive
from tests.streams import sse, text_stream
from tests.subagents.conftest import ScriptedLiteLLM
from tests.subagents.test_process import definition, spec_for

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups and /proc")


@pytest.fixture(autouse=True)
async def no_spare_left() -> AsyncIterator[None]:
    """Whatever a test leaves (a failed one too), its loop's spare is killed and reaped before the loop closes."""
    yield
    await discard_spares()


@pytest.fixture
def name_path_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The head start a request gets is out of reach: only the model's naming of the tool starts a child."""
    import maia.app.application as application

    monkeypatch.setattr(application, "HEAD_START_AFTER", 30.0)


def spare_process() -> asyncio.subprocess.Process | None:
    """This event loop's spare child, if there is one."""
    spare = pool().spare
    return spare.process if spare is not None else None


def command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[asyncio.subprocess.Process]:
    """Every child started (spare or not), to check that none is left."""
    started: list[asyncio.subprocess.Process] = []
    spawn = spares.Launch.spawn

    async def recording(self: spares.Launch) -> asyncio.subprocess.Process:
        process = await spawn(self)
        started.append(process)
        return process

    monkeypatch.setattr(spares.Launch, "spawn", recording)
    return started


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
    assert spare is not None and process_alive(spare.pid)
    assert command_line(spare.pid)[-1] == "--subagent"
    assert os.getpgid(spare.pid) == spare.pid  # a session of its own, as every child

    second = await launch_subagent(spec_for(agent, "two", project, home))
    assert second.ok, second.error
    assert second.summary == "second answer"
    assert [r["messages"][-1]["content"] for r in script.requests["rev"]] == ["one", "two"]
    assert spare_process() is None  # taken, and this call asked for no other
    assert await spare.wait() == 0  # the spare ran the task and ended with it (a discarded one is killed)
    assert not await spare_ready()


async def test_a_spare_taken_before_it_said_ready_runs_the_task(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    """A call right after the previous one ended finds the spare still loading: it waits for it."""
    make_agent("rev")
    script.add("rev", text_stream("done"))
    await start_spare(project)
    (starting,) = pool().starting
    await starting  # started, not loaded yet
    spare = spare_process()
    assert spare is not None and not pool().spare.ready.is_set()  # type: ignore[union-attr]
    result = await launch_subagent(spec_for(definition(home, project, "rev"), "task", project, home))
    assert result.ok, result.error
    assert await spare.wait() == 0  # it was the spare that answered


async def test_a_spare_for_another_folder_or_environment_is_discarded_not_used(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", text_stream("done"), text_stream("done again"), text_stream("and again"))
    agent = definition(home, project, "rev")
    spec = spec_for(agent, "task", project, home)
    await start_spare(project, env={**os.environ, "MAIA_SPARE_TEST": "a"})
    assert await spare_ready()
    stale = spare_process()
    assert stale is not None
    result = await launch_subagent(spec, env={**os.environ, "MAIA_SPARE_TEST": "b"})
    assert result.ok, result.error
    assert await stale.wait() == -signal.SIGKILL  # killed, never given the task
    assert not pool().failed  # MAIA's own kill
    assert len(script.requests["rev"]) == 1

    other = project / "sub"
    other.mkdir()
    await start_spare(project)  # the project folder…
    assert await spare_ready()
    stale = spare_process()
    assert stale is not None
    result = await launch_subagent(spec_for(agent, "task", other, home))  # …is not this call's folder
    assert result.ok, result.error
    assert await stale.wait() == -signal.SIGKILL

    await start_spare(other)  # a folder removed and made again is another folder: the spare's is gone
    assert await spare_ready()
    stale = spare_process()
    assert stale is not None
    other.rmdir()
    other.mkdir()
    result = await launch_subagent(spec_for(agent, "task", other, home))
    assert result.ok, result.error
    assert await stale.wait() == -signal.SIGKILL


async def test_the_environment_the_spare_was_started_with_is_its_key(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment is read once: the spare runs with the one it is matched on."""
    make_agent("rev")
    script.add("rev", text_stream("done"))
    monkeypatch.setenv("MAIA_SPARE_TEST", "before")
    await start_spare(project)
    monkeypatch.setenv("MAIA_SPARE_TEST", "after")  # changed while the spare starts
    assert await spare_ready()
    spare = spare_process()
    assert spare is not None
    environ = Path(f"/proc/{spare.pid}/environ").read_bytes().split(b"\0")
    assert b"MAIA_SPARE_TEST=before" in environ
    result = await launch_subagent(spec_for(definition(home, project, "rev"), "task", project, home))
    assert result.ok, result.error
    assert await spare.wait() == -signal.SIGKILL  # started with "before", the call is made with "after"


async def test_a_spare_that_died_is_not_used_and_the_call_still_runs(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    home: Path,
    project: Path,
    spawned: list[asyncio.subprocess.Process],
) -> None:
    make_agent("rev")
    script.add("rev", text_stream("done"), text_stream("done again"))
    spec = spec_for(definition(home, project, "rev"), "task", project, home)
    for settle in (True, False):
        await start_spare(project)
        assert await spare_ready()
        spare = spare_process()
        assert spare is not None
        os.kill(spare.pid, signal.SIGKILL)
        if settle:  # reaped before the call: seen dead, left
            await spare.wait()
        # else: taken at once, before this process knows it is dead: the run finds it silent, made again
        result = await launch_subagent(spec)
        assert result.ok, result.error
        assert result.summary in ("done", "done again")
        assert await spare.wait() == -signal.SIGKILL
    assert len(script.requests["rev"]) == 2  # each task reached the server once
    assert all(p.returncode is not None for p in spawned)


async def test_a_matching_spare_is_kept_and_another_replaces_it(
    make_agent: Callable[..., Path], project: Path, spawned: list[asyncio.subprocess.Process]
) -> None:
    await start_spare(project)
    assert await spare_ready()
    first = spare_process()
    await start_spare(project)  # the same launch: the spare is kept
    assert await spare_ready()
    assert spare_process() is first and len(spawned) == 1
    await start_spare(project, env={**os.environ, "MAIA_SPARE_TEST": "x"})  # another: it replaces it
    assert await spare_ready()
    assert first is not None and await first.wait() == -signal.SIGKILL
    assert spare_process() is spawned[-1] and len(spawned) == 2
    await discard_spares()
    assert all(p.returncode is not None for p in spawned)


async def test_the_agent_tool_keeps_a_spare_and_its_source_discards_it(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    make_agent("rev")
    script.add("rev", text_stream("reviewed"))
    source = AgentSource(project, home)
    await source.start()
    (tool,) = source.tools()
    assert isinstance(tool, AgentTool) and tool.spares
    answer = await tool.execute({"agent": "rev", "task": "look"}, ToolContext(launch=project, model="scripted-openai"))
    assert "reviewed" in answer
    assert await spare_ready()  # the call left one for the next
    spare = spare_process()
    assert spare is not None
    await source.aclose()
    assert spare_process() is None
    assert spare.returncode == -signal.SIGKILL  # killed and reaped before aclose returned
    assert not process_alive(spare.pid)


async def test_discard_while_the_spare_is_still_starting(
    make_agent: Callable[..., Path], project: Path, spawned: list[asyncio.subprocess.Process]
) -> None:
    for _ in range(3):
        await start_spare(project)
        await discard_spares()  # at once: its start is cancelled, or it is killed once started
        assert spare_process() is None
        assert not await spare_ready()
    assert all(p.returncode is not None for p in spawned)  # none left running, each reaped


def held_run(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> tuple[threading.Event, threading.Event, asyncio.Future[SubAgentResult]]:
    """A run that asks for a spare, whose answer waits: ``asked`` is set when its request arrives,
    ``release`` lets the answer go."""
    make_agent("rev")
    asked, release = threading.Event(), threading.Event()

    def held(_body: dict[str, object]) -> bytes:
        asked.set()
        release.wait(60)
        return text_stream("late")

    script.add("rev", held)
    spec = spec_for(definition(home, project, "rev"), "task", project, home)
    return asked, release, asyncio.ensure_future(launch_subagent(spec, keep_spare=True))


async def test_a_run_ending_after_the_close_starts_no_spare(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    asked, release, run = held_run(script, make_agent, home, project)
    assert await asyncio.to_thread(asked.wait, 60)
    await discard_spares()  # the conversation ends while its sub-agent still runs
    release.set()
    result = await run
    assert result.ok, result.error
    assert not await spare_ready()


async def test_a_cancelled_run_leaves_no_spare(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    asked, release, run = held_run(script, make_agent, home, project)
    try:
        assert await asyncio.to_thread(asked.wait, 60)  # the child's request is at the server
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    finally:
        release.set()
    assert spare_process() is None
    assert not await spare_ready()


def test_a_spare_dies_with_its_parent(make_agent: Callable[..., Path], project: Path) -> None:
    """Even a parent killed by SIGKILL leaves no spare behind (the guardian watches it as every child)."""
    parent = textwrap.dedent(
        f"""
        import asyncio
        from pathlib import Path
        from maia.subagents import spares

        async def main():
            await spares.start_spare(Path({str(project)!r}))
            assert await spares.spare_ready()
            print(spares.pool().spare.process.pid, flush=True)
            await asyncio.sleep(600)

        asyncio.run(main())
        """
    )
    with subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            pid = int(process.stdout.readline())
            assert process_alive(pid)
            process.kill()
            process.wait()
            deadline = 60.0
            while process_alive(pid) and deadline > 0:
                threading.Event().wait(0.05)
                deadline -= 0.05
            assert not process_alive(pid)
        finally:
            process.kill()


@contextlib.asynccontextmanager
async def asked(
    home: Path, project: Path, prompt: str, *, allow: tuple[str, ...] = ("Agent",), ui: Any = None, **options: Any
) -> AsyncIterator[Application]:
    """A ``maia ask``-like application (the Agent tool allowed unless ``allow`` says otherwise) that sends
    ``prompt``; closed on the way out."""
    from maia.app.application import Application, AppOptions
    from maia.core.settings import load_settings
    from tests.agent.helpers import RecordingUI

    options = AppOptions(
        launch=project, home=home, settings=load_settings(home), model="scripted-openai", save=False,
        origin="ask", allow=allow, **options,
    )  # fmt: skip
    app = await Application.open(options, ui if ui is not None else RecordingUI())

    async def never(_wait: object) -> bool:
        return False

    try:
        await app.send(prompt, on_wait=never)
        yield app
    finally:
        await app.aclose()


@pytest.mark.usefixtures("name_path_only")
async def test_a_child_starts_loading_while_the_model_still_streams_its_agent_call(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    home: Path,
    project: Path,
    spawned: list[asyncio.subprocess.Process],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first Agent call of a conversation: its name arrives, then its arguments a second later. A child
    is started at the name, and the call, once whole, takes it (loaded meanwhile)."""
    make_agent("rev")
    whole: list[float] = []  # when the call's last bytes were sent

    def slow_call() -> Iterator[bytes]:
        call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "Agent", "arguments": ""}}
        yield b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}).encode() + b"\n\n"
        time.sleep(1.0)  # the task is still streaming
        whole.append(time.monotonic())
        arguments = json.dumps({"agent": "rev", "task": "look at a.py"})
        yield sse(
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        )

    started: list[float] = []
    record = spares.Launch.spawn  # the fixture's recorder

    async def timed(self: spares.Launch) -> asyncio.subprocess.Process:
        started.append(time.monotonic())
        return await record(self)

    monkeypatch.setattr(spares.Launch, "spawn", timed)
    script.add("main", Response(slow_call(), content_type="text/event-stream"), text_stream("all done"))
    script.add("rev", text_stream("a.py is fine"))
    async with asked(home, project, "review a.py with rev"):
        assert [r["messages"][-1]["content"] for r in script.requests["rev"]] == ["look at a.py"]
        assert started and whole and started[0] < whole[0]  # started while the task was still coming
        assert await asyncio.wait_for(spawned[0].wait(), 60) == 0  # and it is the child that ran the task
    assert all(p.returncode is not None for p in spawned)  # the spare left for a next call: killed at the close


async def test_a_spare_that_dies_after_reading_its_task_is_not_run_again(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    """Killed while its model request is at the server (work may have been done: a request billed, a
    command run): the failure is reported, and the task is never given to another child."""
    make_agent("rev")
    await start_spare(project)
    assert await spare_ready()
    spare = spare_process()
    assert spare is not None

    def kill_it(_body: dict[str, object]) -> bytes:
        os.kill(spare.pid, signal.SIGKILL)
        return text_stream("too late")

    script.add("rev", kill_it, text_stream("a second run"))
    result = await launch_subagent(spec_for(definition(home, project, "rev"), "task", project, home))
    assert not result.ok
    assert "killed by signal 9" in (result.error or "")
    assert len(script.requests["rev"]) == 1  # one request: the task was not made again


async def test_a_close_while_a_spare_replaces_another_leaves_neither(
    make_agent: Callable[..., Path], project: Path, spawned: list[asyncio.subprocess.Process]
) -> None:
    await start_spare(project, env={**os.environ, "MAIA_SPARE_TEST": "a"})
    (first,) = pool().starting
    await first  # started, still loading
    await start_spare(project, env={**os.environ, "MAIA_SPARE_TEST": "b"})  # another launch: it replaces it
    (second,) = pool().starting
    while len(spawned) < 2 and not second.done():
        await asyncio.sleep(0)  # until the second child exists, or its start is over
    await discard_spares()
    assert spare_process() is None
    assert spawned and all(p.returncode is not None for p in spawned)  # each child started: killed and reaped
    assert not pool().failed  # MAIA's own kills, before "ready"


@pytest.mark.usefixtures("name_path_only")
async def test_a_call_that_arrives_in_one_piece_takes_the_child_its_name_started(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    home: Path,
    project: Path,
    spawned: list[asyncio.subprocess.Process],
) -> None:
    """Name and task in one chunk: the child its name started is still being spawned when the call is
    made; the call waits for it (milliseconds) rather than start a second one."""
    from tests.streams import tool_stream

    make_agent("rev")
    script.add("main", tool_stream("Agent", {"agent": "rev", "task": "look"}), text_stream("all done"))
    script.add("rev", text_stream("fine"))
    async with asked(home, project, "review with rev"):
        assert len(script.requests["rev"]) == 1
        assert await asyncio.wait_for(spawned[0].wait(), 60) == 0  # the announced child ran the task
        assert len(spawned) <= 2  # it, and at most the spare this run left for a next call


def subagent_children() -> list[int]:
    """This process's sub-agent children (spares included), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == os.getpid() and "--subagent" in command_line(int(entry.name)):
                found.append(int(entry.name))
    return found


def thinking_then(body: bytes, until: Callable[[], bool], seen: list[bool] | None = None) -> Response:
    """A model that "thinks" (sends nothing, not even its headers, as a LiteLLM proxy holds them until its
    first chunk) until ``until()`` holds (10 s at most), notes whether it did in ``seen``, then answers."""

    def stream() -> Iterator[bytes]:
        deadline = time.monotonic() + 10
        while not until() and time.monotonic() < deadline:
            time.sleep(0.01)
        if seen is not None:
            seen.append(until())
        yield body

    return Response(stream(), content_type="text/event-stream")


def whole_agent_call(task: str) -> bytes:
    """An Agent call in one piece: name and task in the same chunk."""
    arguments = json.dumps({"agent": "rev", "task": task})
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "Agent", "arguments": arguments}}
    return sse(
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )


async def test_a_child_starts_loading_while_the_model_works_on_a_request_that_offers_the_agent_tool(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    home: Path,
    project: Path,
    spawned: list[asyncio.subprocess.Process],
) -> None:
    """The model thinks, then sends its Agent call in one piece (as some providers do): a child was started
    while it thought, before anything of the call came, and the call takes it."""
    make_agent("rev")
    seen: list[bool] = []
    script.add("main", thinking_then(whole_agent_call("look at b.py"), lambda: bool(subagent_children()), seen))
    script.add("main", text_stream("all done"))
    script.add("rev", text_stream("b.py is fine"))
    async with asked(home, project, "review b.py with rev"):
        assert [r["messages"][-1]["content"] for r in script.requests["rev"]] == ["look at b.py"]
        assert seen == [True]  # a child existed before the call's first byte
        assert await asyncio.wait_for(spawned[0].wait(), 60) == 0  # and it is the child that ran the task
    assert all(p.returncode is not None for p in spawned)


async def test_no_child_starts_where_the_agent_tool_is_not_offered(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    home: Path,
    project: Path,
    spawned: list[asyncio.subprocess.Process],
) -> None:
    """No agent defined (no Agent tool), the Agent tool filtered out, or denied by a rule: the model takes
    its time, and no child loads for nothing."""
    pauses: list[bool] = []
    began = time.monotonic()
    script.add("main", thinking_then(text_stream("hello"), lambda: time.monotonic() - began > 0.5, pauses))
    async with asked(home, project, "hi"):
        assert pauses == [True]
        assert pool().spare is None and not pool().starting
    make_agent("rev")
    began = time.monotonic()
    script.add("main", thinking_then(text_stream("hello"), lambda: time.monotonic() - began > 0.5, pauses))
    async with asked(home, project, "hi", tool_filter=lambda tool: tool.spec.name != "Agent"):
        assert pauses == [True, True]
        assert pool().spare is None and not pool().starting
    began = time.monotonic()
    script.add("main", thinking_then(text_stream("hello"), lambda: time.monotonic() - began > 0.5, pauses))
    async with asked(home, project, "hi", deny=("Agent",)):  # offered, but a deny rule stops every call
        assert pauses == [True, True, True]
        assert pool().spare is None and not pool().starting
    assert spawned == []


async def test_spares_stop_once_one_cannot_start(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    """A spare that ends by itself or writes anything but ``ready`` is not started again at each request;
    calls start their own child, as without spares. One killed from elsewhere stops nothing."""
    make_agent("rev")
    await start_spare(project, command=[sys.executable, "-c", "import time; time.sleep(60)"])
    (starting,) = pool().starting
    await starting
    killed = spare_process()
    assert killed is not None
    os.kill(killed.pid, signal.SIGKILL)  # from elsewhere (the OOM killer, a user): it says nothing of the next
    assert not await asyncio.wait_for(spare_ready(), 10)  # it ended before "ready": no 30 s wait
    assert not pool().failed
    await start_spare(
        project, command=[sys.executable, "-c", "print('hello', flush=True); import time; time.sleep(60)"]
    )
    assert not await asyncio.wait_for(spare_ready(), 10)  # it wrote something else: it cannot start
    assert pool().failed
    await discard_spares()
    pool().failed = False
    await start_spare(project, command=[sys.executable, "-c", "raise SystemExit(3)"])
    assert not await asyncio.wait_for(spare_ready(), 10)  # it ended by itself before "ready"
    assert pool().failed
    await start_spare(project)
    assert not [task for task in pool().starting if not task.done()]  # nothing more started
    assert spare_process() is None
    script.add("rev", text_stream("fine"))
    result = await launch_subagent(spec_for(definition(home, project, "rev"), "task", project, home))
    assert result.ok, result.error


async def test_the_first_tool_call_s_loads_start_while_the_model_thinks_and_never_after_the_close(
    script: ScriptedLiteLLM, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a first tool call loads starts loading a moment after the request was sent, while the model is
    still at work; an application closed before that moment (a quick one-shot answer) loads nothing."""
    import maia.app.application as application

    warmed: list[float] = []
    monkeypatch.setattr(application, "warm_tools", lambda: warmed.append(time.monotonic()))
    monkeypatch.setattr(application, "HEAD_START_AFTER", 30.0)
    script.add("main", text_stream("hello"))
    async with asked(home, project, "hi") as app:
        assert len(script.requests["main"]) == 1
        timer = app._head_start_timer
        assert timer is not None and not timer.cancelled()  # set when the request was sent
    assert timer.cancelled() and warmed == []  # the close cancelled it

    monkeypatch.setattr(application, "HEAD_START_AFTER", 0.05)
    seen: list[bool] = []
    script.add("main", thinking_then(text_stream("hello"), lambda: bool(warmed), seen))
    async with asked(home, project, "hi again"):
        assert len(script.requests["main"]) == 2
    assert seen == [True] and len(warmed) == 1  # loaded while the model was at work


def fanned_out(tasks: list[str], named: list[int]) -> Iterator[bytes]:
    """An answer that fans a job out: each Agent call names the tool, then its task streams once the model's
    naming has had its effect (``named``: how many sub-agent children there were then; 10 s at most)."""

    def event(delta: dict[str, object]) -> bytes:
        return b"data: " + json.dumps({"choices": [{"index": 0, "delta": delta}]}).encode() + b"\n\n"

    for index, task in enumerate(tasks):
        call = {"index": index, "id": f"call_{index}", "type": "function", "function": {"name": "Agent"}}
        yield event({"tool_calls": [call]})
        deadline = time.monotonic() + 10
        while len(subagent_children()) <= index and time.monotonic() < deadline:
            time.sleep(0.01)  # the task is still streaming
        named.append(len(subagent_children()))
        arguments = json.dumps({"agent": "rev", "task": task})
        yield event({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]})
    yield sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})


@pytest.mark.usefixtures("name_path_only")
async def test_an_answer_fanning_out_to_several_agents_gets_a_child_per_call(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    home: Path,
    project: Path,
    spawned: list[asyncio.subprocess.Process],
) -> None:
    """Three Agent calls in one answer: each name starts a child of its own while the tasks stream, and each
    call runs in one of them. The next answer's single call starts none: its calls are counted afresh."""
    make_agent("rev")
    named: list[int] = []
    tasks = ["look at a.py", "look at b.py", "look at c.py"]
    script.add("main", Response(fanned_out(tasks, named), content_type="text/event-stream"))
    script.add("main", Response(fanned_out(["look at d.py"], named), content_type="text/event-stream"))
    script.add("main", text_stream("all done"))
    script.add("rev", *(text_stream("fine") for _task in range(4)))
    async with asked(home, project, "review the three files with rev"):
        assert sorted(r["messages"][-1]["content"] for r in script.requests["rev"]) == [*tasks, "look at d.py"]
        assert named[:3] == [1, 2, 3]  # a child per call, each started while its task was still coming
        ran = [await asyncio.wait_for(child.wait(), 60) for child in spawned[:3]]
        assert ran == [0, 0, 0]  # each ran a task (a child discarded is killed)
        # the fourth task ran in the spare the first three left: no child more than that one
        assert len(spawned) <= 5 and await asyncio.wait_for(spawned[3].wait(), 60) == 0
    assert all(p.returncode is not None for p in spawned)


async def test_spares_are_capped_and_concurrent_calls_each_take_their_own(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    home: Path,
    project: Path,
    spawned: list[asyncio.subprocess.Process],
) -> None:
    make_agent("rev")
    spares.expect_child(project, count=9)
    assert await spare_ready()
    assert len(pool().spares) == spares.MAX_SPARES == len(spawned)  # no more than the cap
    spares.expect_child(project, count=2)
    assert not pool().starting  # enough are there
    script.add("rev", *(text_stream(f"answer {n}") for n in range(3)))
    agent = definition(home, project, "rev")
    results = await asyncio.gather(*(launch_subagent(spec_for(agent, f"task {n}", project, home)) for n in range(3)))
    assert all(result.ok for result in results), [result.error for result in results]
    assert len(spawned) == spares.MAX_SPARES  # no child of their own: each took a spare, the oldest first
    assert [await asyncio.wait_for(child.wait(), 60) for child in spawned[:3]] == [0, 0, 0]
    assert pool().spares and pool().spares[0].process is spawned[3]  # the fourth waits for a later call


@pytest.mark.usefixtures("name_path_only")
async def test_agent_calls_a_rule_denies_outright_start_no_child(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    home: Path,
    project: Path,
    spawned: list[asyncio.subprocess.Process],
) -> None:
    """The model names the Agent tool three times in one answer, but a rule denies it: nothing loads for calls
    that can never run."""
    make_agent("rev")
    tasks = ["look at a.py", "look at b.py", "look at c.py"]

    def named_then_whole() -> Iterator[bytes]:
        for index, task in enumerate(tasks):
            call = {"index": index, "id": f"call_{index}", "type": "function", "function": {"name": "Agent"}}
            yield b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}).encode()
            yield b"\n\n"
            time.sleep(0.3)  # the task streams: long enough for a child to be started
            arguments = json.dumps({"agent": "rev", "task": task})
            more = {"index": index, "function": {"arguments": arguments}}
            yield b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [more]}}]}).encode()
            yield b"\n\n"
        yield sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})

    script.add("main", Response(named_then_whole(), content_type="text/event-stream"), text_stream("all done"))
    async with asked(home, project, "review with rev", deny=("Agent",)):
        assert len(script.requests["main"]) == 2  # the calls were refused, and the model answered
    assert spawned == []


async def test_spare_ready_returns_once_each_spare_is_loaded_or_dead(project: Path, tmp_path: Path) -> None:
    """Two spares: one loads in a second, the other dies at once. The wait ends with the first's ``ready``, not
    at the timeout (the dead one's watcher has ended: nothing of it is waited for)."""
    marker = tmp_path / "first"
    script = textwrap.dedent(
        f"""
        import os, signal, sys, time
        try:
            os.close(os.open({str(marker)!r}, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            os.kill(os.getpid(), signal.SIGKILL)  # the second: dies at once (a signal: the pool is not failed)
        time.sleep(1)
        sys.stdout.write('{{"type":"ready"}}\\n')
        sys.stdout.flush()
        time.sleep(60)
        """
    )
    spares.expect_child(project, [sys.executable, "-c", script], count=2)
    assert await asyncio.wait_for(spare_ready(timeout=30), 10)
    assert len(pool().spares) == 1 and pool().spare is not None and pool().spare.ready.is_set()
    assert not pool().failed


async def test_the_spares_last_asked_for_win_over_a_launch_still_starting(
    project: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[asyncio.subprocess.Process]
) -> None:
    """Spares asked for with another environment while the first ones are being spawned replace them: the first
    ones are discarded as they come, even when they come last."""
    spawn = spares.Launch.spawn  # the fixture's recorder

    async def first_ones_late(self: spares.Launch) -> asyncio.subprocess.Process:
        if dict(self.environment).get("MAIA_SPARE_TEST") == "a":
            await asyncio.sleep(0.5)
        return await spawn(self)

    monkeypatch.setattr(spares.Launch, "spawn", first_ones_late)
    spares.expect_child(project, env={**os.environ, "MAIA_SPARE_TEST": "a"}, count=2)
    spares.expect_child(project, env={**os.environ, "MAIA_SPARE_TEST": "b"}, count=1)
    assert await spare_ready()
    kept = pool().spares
    assert len(kept) == 1 and dict(kept[0].launch.environment)["MAIA_SPARE_TEST"] == "b"
    assert len(spawned) == 3 and pool().spare is not None and pool().spare.process is spawned[0]  # b came first
    assert [await asyncio.wait_for(child.wait(), 30) for child in spawned[1:]] == [-signal.SIGKILL] * 2


async def test_where_nobody_can_answer_no_child_starts_for_agent_calls_that_would_be_refused(
    script: ScriptedLiteLLM,
    make_agent: Callable[..., Path],
    home: Path,
    project: Path,
    spawned: list[asyncio.subprocess.Process],
) -> None:
    """``maia ask`` without a rule allowing the Agent tool refuses every Agent call (it asks by default, and
    nobody answers): the model takes its time, and no child loads for nothing. A rule allowing one agent is
    enough for the child to start."""
    from maia.frontends.ask import headless_permissions
    from tests.agent.helpers import RecordingUI

    class NobodyAnswers(RecordingUI):
        interactive = False

    make_agent("rev")
    make_agent("doc")
    for allow, children in (((), 0), (("Agent(doc)",), 1)):
        began = time.monotonic()
        seen: list[bool] = []
        script.add(
            "main", thinking_then(text_stream("hello"), lambda began=began: time.monotonic() - began > 0.6, seen)
        )
        headless = {"ui": NobodyAnswers(), "wrap_permissions": lambda check: headless_permissions(check, False)}
        async with asked(home, project, "hi", allow=allow, **headless):  # as maia ask opens it
            assert seen == [True]
        assert len(spawned) == children, allow
