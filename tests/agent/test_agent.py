"""The turn loop (§6.2) driven by the scripted provider, with real tools and real child processes."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from maia.agent.loop import (
    INTERRUPTED_ANSWER,
    INTERRUPTED_CALL,
    INTERRUPTED_MARK,
    AgentSession,
    resume_turn,
    run_turn,
)
from maia.agent.runner import NOT_RUN_FOR_MODEL, STOP_FOR_MODEL
from maia.core.contracts import (
    Done,
    Message,
    ReasoningDelta,
    TextBlock,
    TextDelta,
    ToolResultBlock,
    ToolUse,
    ToolUseBlock,
    Truncated,
    Usage,
)
from maia.core.errors import ContextTooLong, RateLimited
from maia.process.shell import run_shell
from maia.provider.fake import ScriptedProvider, ScriptedTurn, text_turn, tool_turn
from tests.agent.helpers import FuncTool, RecordingUI, echo_tool, process_alive


def _session(
    turns: list[ScriptedTurn],
    tmp_path: Path,
    tools: list[FuncTool] | None = None,
    ui: RecordingUI | None = None,
    **kw: Any,
) -> AgentSession:
    return AgentSession(
        provider=ScriptedProvider(turns),
        system="You are MAIA.",
        tools={t.spec.name: t for t in (tools or [echo_tool()])},
        ui=ui or RecordingUI(),
        launch=tmp_path,
        count_context=lambda s: sum(len(m.content) for m in s.messages) + len(s.pending_context),
        **kw,
    )


def _provider(session: AgentSession) -> ScriptedProvider:
    assert isinstance(session.provider, ScriptedProvider)
    return session.provider


async def test_text_answer(tmp_path: Path) -> None:
    ui = RecordingUI()
    session = _session([text_turn("Hello!")], tmp_path, ui=ui)
    assert await run_turn(session, "hi") == "done"
    assert session.messages == [Message("user", [TextBlock("hi")]), Message("assistant", [TextBlock("Hello!")])]
    assert ui.events == [
        ("context", 1),
        ("thinking", True),
        ("text", "Hello!"),
        ("thinking", False),
        ("text_end",),
        ("context", 2),
    ]
    request = _provider(session).requests[0]
    assert request.system == "You are MAIA." and [t.name for t in request.tools] == ["Echo"]


async def test_pending_context_joined_in_one_user_message(tmp_path: Path) -> None:
    session = _session([text_turn("ok")], tmp_path, pending_context=["$ ls\na.py", "file b"])
    await run_turn(session, "what now?")
    assert session.messages[0] == Message("user", [TextBlock("$ ls\na.py\n\nfile b\n\nwhat now?")])
    assert session.pending_context == []


async def test_tool_loop_and_context_reports(tmp_path: Path) -> None:
    ui = RecordingUI()
    session = _session([tool_turn(("Echo", {"text": "a"}), text="Let me see."), text_turn("Done.")], tmp_path, ui=ui)
    assert await run_turn(session, "go") == "done"
    assert session.messages == [
        Message("user", [TextBlock("go")]),
        Message("assistant", [TextBlock("Let me see."), ToolUseBlock("call_0", "Echo", {"text": "a"})]),
        Message("user", [ToolResultBlock("call_0", "echo:a")]),
        Message("assistant", [TextBlock("Done.")]),
    ]
    # after the request, after each answer, after the tool results
    assert [e[1] for e in ui.of("context")] == [1, 3, 4, 5]
    second = _provider(session).requests[1]
    assert second.messages[-1] == Message("user", [ToolResultBlock("call_0", "echo:a")])


async def test_reasoning_usage_and_truncation_reach_the_caller(tmp_path: Path) -> None:
    turn = ScriptedTurn(
        [ReasoningDelta("hmm"), TextDelta("x"), Usage(10, 4096), Truncated("length", 4096), Done("max_tokens")]
    )
    ui = RecordingUI()
    session = _session([turn], tmp_path, ui=ui)
    await run_turn(session, "q")
    assert ("reasoning", "hmm") in ui.events
    assert session.usage == [Usage(10, 4096)]
    assert session.truncations == [Truncated("length", 4096)]
    assert any("output token limit" in e[1] for e in ui.of("warning"))
    assert session.messages[-1] == Message("assistant", [TextBlock("x")])


async def test_iteration_limit_returns_and_next_input_merges(tmp_path: Path) -> None:
    turns = [tool_turn(("Echo", {"text": str(n)})) for n in range(3)] + [text_turn("finally")]
    session = _session(turns, tmp_path, max_iterations=2)
    assert await run_turn(session, "loop") == "max_iterations"
    assert len(_provider(session).requests) == 2
    assert session.messages[-1].role == "user" and session.can_resume
    assert await run_turn(session, "keep going", max_iterations=5) == "done"
    merged = session.messages[4]
    assert merged == Message("user", [ToolResultBlock("call_0", "echo:1"), TextBlock("keep going")])
    roles = [m.role for m in session.messages]
    assert all(a != b for a, b in itertools.pairwise(roles))  # alternation holds


async def test_on_limit_adds_a_series(tmp_path: Path) -> None:
    turns = [tool_turn(("Echo", {"text": str(n)})) for n in range(3)] + [text_turn("end")]
    asked: list[int] = []

    async def on_limit(limit: int) -> bool:
        asked.append(limit)
        return True

    session = _session(turns, tmp_path)
    assert await run_turn(session, "x", on_limit=on_limit, max_iterations=2) == "done"
    assert asked == [2] and len(_provider(session).requests) == 4


async def test_on_limit_refused(tmp_path: Path) -> None:
    async def no(_: int) -> bool:
        return False

    session = _session([tool_turn(("Echo", {})), text_turn("unused")], tmp_path)
    assert await run_turn(session, "x", on_limit=no, max_iterations=1) == "max_iterations"
    assert _provider(session).remaining == 1


async def test_stop_answer_ends_the_turn_without_a_new_model_call(tmp_path: Path) -> None:
    ui = RecordingUI(["yes", "stop"])
    tools = [echo_tool("A", permission="ask")]
    turns = [tool_turn(("A", {"text": "1"}), ("A", {"text": "2"}), ("A", {"text": "3"})), text_turn("next")]
    session = _session(turns, tmp_path, tools=tools, ui=ui)
    assert await run_turn(session, "do it") == "stopped"
    assert len(_provider(session).requests) == 1
    assert session.messages[-1] == Message(
        "user",
        [
            ToolResultBlock("call_0", "echo:1"),
            ToolResultBlock("call_1", STOP_FOR_MODEL, True),
            ToolResultBlock("call_2", NOT_RUN_FOR_MODEL, True),
        ],
    )
    assert await run_turn(session, "actually, stop there") == "done"
    assert session.messages[2].content[-1] == TextBlock("actually, stop there")
    assert len(session.messages) == 4


async def test_provider_errors_reach_the_caller_and_roll_back(tmp_path: Path) -> None:
    error = RateLimited(429, "slow down", 7.0)
    session = _session(
        [ScriptedTurn([TextDelta("partial"), error]), text_turn("ok")], tmp_path, pending_context=["ctx"]
    )
    before = list(session.messages)
    with pytest.raises(RateLimited) as info:
        await run_turn(session, "hello")
    assert info.value is error and info.value.retry_after == 7.0
    assert session.messages == before and session.pending_context == ["ctx"]
    assert await run_turn(session, "hello") == "done"  # the caller simply sends it again
    assert session.messages[0] == Message("user", [TextBlock("ctx\n\nhello")])


async def test_error_after_tool_results_keeps_them_and_resumes(tmp_path: Path) -> None:
    turns = [tool_turn(("Echo", {"text": "kept"})), ScriptedTurn([ContextTooLong("too long")]), text_turn("resumed")]
    session = _session(turns, tmp_path)
    with pytest.raises(ContextTooLong):
        await run_turn(session, "go")
    assert session.can_resume
    assert session.messages[-1] == Message("user", [ToolResultBlock("call_0", "echo:kept")])
    assert await resume_turn(session) == "done"
    assert session.messages[-1] == Message("assistant", [TextBlock("resumed")])


async def test_cancellation_kills_the_child_process_and_keeps_the_interrupted_call(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    started = asyncio.Event()

    async def run(_: Mapping[str, Any]) -> str:
        async def watch() -> None:
            while not pid_file.exists() or not pid_file.read_text().strip():
                await asyncio.sleep(0.01)
            started.set()

        watcher = asyncio.create_task(watch())
        try:
            result = await run_shell(f"sleep 30 & echo $! > {pid_file}; wait", tmp_path)
        finally:
            watcher.cancel()
        return result.output

    tools = [FuncTool("Sleep", run)]
    session = _session(
        [tool_turn(("Sleep", {})), text_turn("never")], tmp_path, tools=tools, pending_context=["pending"]
    )
    session.messages.extend([Message("user", [TextBlock("earlier")]), Message("assistant", [TextBlock("reply")])])
    before = list(session.messages)
    task = asyncio.create_task(run_turn(session, "sleep please"))
    await asyncio.wait_for(started.wait(), 10)
    grandchild = int(pid_file.read_text())
    assert process_alive(grandchild)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    # the model is not left blind: the call it made stays, answered as interrupted, with the user's mark
    assert session.interrupted == "kept"
    assert session.messages == [
        *before,
        Message("user", [TextBlock("pending\n\nsleep please")]),
        Message("assistant", [ToolUseBlock("call_0", "Sleep", {})]),
        Message("user", [ToolResultBlock("call_0", INTERRUPTED_CALL, True), TextBlock(INTERRUPTED_MARK)]),
    ]
    assert session.pending_context == [] and session.can_resume
    for _ in range(100):
        if not process_alive(grandchild):
            break
        await asyncio.sleep(0.02)
    else:
        pytest.fail("the grandchild process survived the cancellation")


async def test_cancel_during_streaming_keeps_the_partial_answer(tmp_path: Path) -> None:
    hold = asyncio.Event()
    streaming = asyncio.Event()

    async def block() -> None:
        streaming.set()
        await hold.wait()

    turns = [tool_turn(("Echo", {})), ScriptedTurn([TextDelta("x"), block])]
    session = _session(turns, tmp_path, max_iterations=1)
    await run_turn(session, "a")
    assert session.can_resume
    saved = list(session.messages)
    task = asyncio.create_task(run_turn(session, "b"))
    await asyncio.wait_for(streaming.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    merged = Message("user", [*saved[-1].content, TextBlock("b")])
    assert session.messages == [*saved[:-1], merged, Message("assistant", [TextBlock("x")])]
    assert session.pending_context == [INTERRUPTED_ANSWER] and not session.can_resume
    assert session.interrupted == "kept"


async def test_cancel_before_any_answer_rolls_back_exactly(tmp_path: Path) -> None:
    waiting = asyncio.Event()

    async def block() -> None:
        waiting.set()
        await asyncio.Event().wait()

    session = _session([tool_turn(("Echo", {})), ScriptedTurn([block])], tmp_path, max_iterations=1)
    await run_turn(session, "a")
    session.pending_context.append("@file data")
    saved, merge = list(session.messages), session.merge_next
    task = asyncio.create_task(run_turn(session, "b"))
    await asyncio.wait_for(waiting.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert session.interrupted == "rolled_back"
    assert session.messages == saved and session.merge_next == merge and session.can_resume
    assert session.pending_context == ["@file data"]


async def test_tool_uses_without_text_and_unknown_tool_result(tmp_path: Path) -> None:
    turns = [ScriptedTurn([ToolUse("x1", "Missing", {}), Done("tool_use")]), text_turn("sorry")]
    session = _session(turns, tmp_path)
    await run_turn(session, "go")
    assert session.messages[1] == Message("assistant", [ToolUseBlock("x1", "Missing", {})])
    assert session.messages[2] == Message("user", [ToolResultBlock("x1", "Unknown tool: Missing", True)])
