"""The tool runner (§6.3): order, permissions, confirmations one at a time, ≤ 8 at once, lock keys."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from maia.agent.runner import NOT_RUN_FOR_MODEL, STOP_FOR_MODEL, USER_REFUSED, ToolRunner
from maia.core.contracts import ToolContext, ToolResultBlock, ToolsProgress, ToolUseBlock
from maia.permissions import explain
from tests.agent.helpers import FuncTool, RecordingUI, echo_tool


def _calls(*specs: tuple[str, dict[str, Any]]) -> list[ToolUseBlock]:
    return [ToolUseBlock(f"c{n}", name, dict(inp)) for n, (name, inp) in enumerate(specs)]


def _runner(
    tools: list[FuncTool],
    ui: RecordingUI,
    tmp_path: Path,
    rules: dict[str, list[str]] | None = None,
    max_parallel: int = 8,
) -> ToolRunner:
    check = None
    if rules is not None:

        def check(name: str, tool_input: Mapping[str, Any]) -> Any:
            return explain(name, tool_input, rules, tmp_path)

    return ToolRunner({t.spec.name: t for t in tools}, ui, ToolContext(launch=tmp_path), check, max_parallel)


async def test_single_call_sequence(tmp_path: Path) -> None:
    ui = RecordingUI()
    outcome = await _runner([echo_tool()], ui, tmp_path).run(_calls(("Echo", {"text": "hi"})))
    assert outcome.results == [ToolResultBlock("c0", "echo:hi")]
    assert ui.events == [("tool_call", "Echo", "text=hi"), ("tool_result", "Echo", "echo:hi", False)]
    assert ui.questions == []


async def test_ask_tool_confirmed_and_refused(tmp_path: Path) -> None:
    tool = echo_tool("Ask", permission="ask")
    ui = RecordingUI(["yes", "no"])
    runner = _runner([tool], ui, tmp_path)
    assert (await runner.run(_calls(("Ask", {"text": "1"})))).results[0].content == "echo:1"
    refused = await runner.run(_calls(("Ask", {"text": "2"})))
    assert refused.results == [ToolResultBlock("c0", USER_REFUSED, True)]
    assert ui.questions == ["Allow Ask: text=1?", "Allow Ask: text=2?"]
    assert len(tool.calls) == 1


async def test_unknown_tool_and_deny_rule(tmp_path: Path) -> None:
    ui = RecordingUI()
    runner = _runner([echo_tool()], ui, tmp_path, rules={"deny": ["Echo(secret)"], "allow": ["Echo"]})
    outcome = await runner.run(_calls(("Nope", {}), ("Echo", {"text": "secret"}), ("Echo", {"text": "ok"})))
    assert outcome.results == [
        ToolResultBlock("c0", "Unknown tool: Nope", True),
        ToolResultBlock("c1", "Action denied by the permission rules (Echo(secret)). Do not retry it as is.", True),
        ToolResultBlock("c2", "echo:ok"),
    ]
    assert ui.questions == []


async def test_rules_replace_the_tool_default(tmp_path: Path) -> None:
    ui = RecordingUI(["no"])
    auto_tool = echo_tool("Auto", permission="auto")
    outcome = await _runner([auto_tool], ui, tmp_path, rules={}).run(_calls(("Auto", {"text": "x"})))
    assert ui.questions == ["Allow Auto: text=x?"]  # no applicable rule: ask, even for an auto tool
    assert outcome.results[0].content == USER_REFUSED


async def test_input_validated_against_schema_before_running(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"content": {"type": "string", "description": "the file content"}, "path": {"type": "string"}},
        "required": ["path", "content"],
    }

    async def run(_: Mapping[str, Any]) -> str:
        return "ran"

    tool = FuncTool("Write", run, schema=schema)
    ui = RecordingUI()
    outcome = await _runner([tool], ui, tmp_path).run(_calls(("Write", {"path": "a.py"})))
    assert outcome.results[0] == ToolResultBlock(
        "c0", 'Parameter "content" missing or invalid (the file content). Parameters received: path (string).', True
    )
    wrong = await _runner([tool], ui, tmp_path).run(_calls(("Write", {"path": 3, "content": "x"})))
    assert wrong.results[0].content.startswith('Parameter "path" missing or invalid (3 is not of type')
    assert wrong.results[0].content.endswith("Parameters received: path (integer), content (string).")
    assert tool.calls == []


async def test_parallel_results_in_call_order_and_really_concurrent(tmp_path: Path) -> None:
    barrier = asyncio.Barrier(3)

    async def run(tool_input: Mapping[str, Any]) -> str:
        await asyncio.wait_for(barrier.wait(), 5)  # only passes if all three run at once
        await asyncio.sleep(0.01 * (3 - int(tool_input["n"])))  # finish in reverse order
        return f"r{tool_input['n']}"

    tool = FuncTool("T", run)
    ui = RecordingUI()
    outcome = await _runner([tool], ui, tmp_path).run(_calls(("T", {"n": 0}), ("T", {"n": 1}), ("T", {"n": 2})))
    assert [r.content for r in outcome.results] == ["r0", "r1", "r2"]
    running = [e[1] for e in ui.of("running")]
    assert running[-1] is None
    assert [p.done for p in running[:-1] if p is not None][-1] == 3
    assert all(isinstance(p, ToolsProgress) and p.names == ("T", "T", "T") for p in running[:-1])
    # phase 3: announcements and results shown in call order after everything finished
    assert [e[2] for e in ui.of("tool_result")] == ["r0", "r1", "r2"]
    assert ui.events.index(("running", None)) < ui.events.index(("tool_call", "T", "n=0"))


async def test_at_most_eight_at_once(tmp_path: Path) -> None:
    active = 0
    peak = 0
    eight_running = asyncio.Event()
    release = asyncio.Event()

    async def run(_: Mapping[str, Any]) -> str:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        if active == 8:
            eight_running.set()
        await release.wait()
        active -= 1
        return "ok"

    tool = FuncTool("T", run)
    task = asyncio.create_task(
        _runner([tool], RecordingUI(), tmp_path).run(_calls(*[("T", {"n": n}) for n in range(12)]))
    )
    await asyncio.wait_for(eight_running.wait(), 5)
    for _ in range(20):
        await asyncio.sleep(0)
    assert active == 8 and len(tool.calls) == 8
    release.set()
    outcome = await asyncio.wait_for(task, 5)
    assert peak == 8 and len(outcome.results) == 12


async def test_same_lock_key_runs_in_call_order_one_after_another(tmp_path: Path) -> None:
    log: list[str] = []
    first_started = asyncio.Event()
    release_first = asyncio.Event()

    async def run(tool_input: Mapping[str, Any]) -> str:
        name = str(tool_input["n"])
        log.append(f"start {name}")
        if name == "a":
            first_started.set()
            await release_first.wait()
        else:
            await asyncio.sleep(0)
        log.append(f"end {name}")
        return name

    tool = FuncTool("F", run, key=lambda inp: "file:/x" if inp["n"] in ("a", "c") else None)
    task = asyncio.create_task(
        _runner([tool], RecordingUI(), tmp_path).run(_calls(("F", {"n": "a"}), ("F", {"n": "b"}), ("F", {"n": "c"})))
    )
    await asyncio.wait_for(first_started.wait(), 5)
    for _ in range(20):
        await asyncio.sleep(0)
    assert "start c" not in log  # c waits for a (same key) …
    assert "end b" in log  # … while b (no key) ran
    release_first.set()
    await asyncio.wait_for(task, 5)
    assert log.index("end a") < log.index("start c")


async def test_failing_lock_key_is_ignored(tmp_path: Path) -> None:
    def bad_key(_: Mapping[str, Any]) -> str:
        raise RuntimeError("no key")

    async def run(_: Mapping[str, Any]) -> str:
        return "ok"

    tool = FuncTool("T", run, key=bad_key)
    outcome = await _runner([tool], RecordingUI(), tmp_path).run(_calls(("T", {}), ("T", {})))
    assert [r.content for r in outcome.results] == ["ok", "ok"]


async def test_an_exception_a_refusal_or_an_unknown_tool_never_cancels_the_others(tmp_path: Path) -> None:
    async def boom(_: Mapping[str, Any]) -> str:
        raise ValueError("disk on fire")

    async def slow(_: Mapping[str, Any]) -> str:
        await asyncio.sleep(0.05)
        return "slow done"

    ui = RecordingUI(["no"])
    tools = [FuncTool("Boom", boom), FuncTool("Slow", slow), echo_tool("Ask", permission="ask")]
    outcome = await _runner(tools, ui, tmp_path).run(
        _calls(("Boom", {}), ("Ghost", {}), ("Ask", {"text": "x"}), ("Slow", {}))
    )
    assert outcome.results == [
        ToolResultBlock("c0", "disk on fire", True),
        ToolResultBlock("c1", "Unknown tool: Ghost", True),
        ToolResultBlock("c2", USER_REFUSED, True),
        ToolResultBlock("c3", "slow done"),
    ]


async def test_confirmations_never_overlap_and_authorised_tools_start_at_once(tmp_path: Path) -> None:
    started: list[str] = []

    async def run(tool_input: Mapping[str, Any]) -> str:
        started.append(str(tool_input["n"]))
        return "ok"

    seen_while_asking: list[list[str]] = []

    class OrderedUI(RecordingUI):
        async def ask(self, message: str, approval: Any = None) -> Any:
            answer = await super().ask(message, approval)  # the question stays open for a loop turn
            seen_while_asking.append(list(started))
            return answer

    ui = OrderedUI()
    tool = FuncTool("A", run, permission="ask")
    await _runner([tool], ui, tmp_path).run(_calls(("A", {"n": 1}), ("A", {"n": 2}), ("A", {"n": 3})))
    assert ui.max_asking == 1
    # the first tool was already running while the second question was asked
    assert ui.questions == ["Allow A: n=1?", "Allow A: n=2?", "Allow A: n=3?"]
    assert seen_while_asking == [[], ["1"], ["1", "2"]]


async def test_stop_gives_one_result_per_call(tmp_path: Path) -> None:
    ui = RecordingUI(["yes", "stop"])
    tool = echo_tool("A", permission="ask")
    outcome = await _runner([tool], ui, tmp_path).run(
        _calls(("A", {"text": "1"}), ("A", {"text": "2"}), ("A", {"text": "3"}))
    )
    assert outcome.stopped
    assert outcome.results == [
        ToolResultBlock("c0", "echo:1"),
        ToolResultBlock("c1", STOP_FOR_MODEL, True),
        ToolResultBlock("c2", NOT_RUN_FOR_MODEL, True),
    ]
    assert len(ui.questions) == 2
    # the user sees each call with its summary, and words meant for them (not the model's text)
    shown = [e[1:] for e in ui.events if e[0] in ("tool_call", "tool_result")]
    summary = tool.describe({"text": "3"})
    assert shown[-2:] == [("A", summary), ("A", "Not run: you stopped the iteration.", True)]
    assert ("A", "Not run: you stopped the iteration.", True) in shown[:-2]
    assert not any(STOP_FOR_MODEL in str(e) or NOT_RUN_FOR_MODEL in str(e) for e in shown)


async def test_a_refusal_is_shown_as_such(tmp_path: Path) -> None:
    ui = RecordingUI(["no"])
    outcome = await _runner([echo_tool("A", "ask")], ui, tmp_path).run(_calls(("A", {})))
    assert outcome.results == [ToolResultBlock("c0", USER_REFUSED, True)]
    assert ("tool_result", "A", "Refused.", True) in ui.events


async def test_single_call_stop(tmp_path: Path) -> None:
    outcome = await _runner([echo_tool("A", "ask")], RecordingUI(["stop"]), tmp_path).run(_calls(("A", {})))
    assert outcome.stopped and outcome.results == [ToolResultBlock("c0", STOP_FOR_MODEL, True)]


@pytest.mark.parametrize("count", [0])
async def test_no_calls(count: int, tmp_path: Path) -> None:
    assert (await _runner([], RecordingUI(), tmp_path).run([])).results == []
