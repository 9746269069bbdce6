"""The child's tool events and approval boxes over the protocol (issue 28 item 6): encoded, decoded, relayed
by the launcher from a scripted child, ignored by an older peer, never offering "always" out of doubt."""

from __future__ import annotations

import sys
from pathlib import Path

from maia.core.contracts import Approval
from maia.subagents import protocol
from maia.subagents.definitions import AgentDefinition
from maia.subagents.launcher import launch_subagent
from maia.subagents.protocol import ChildSpec

MODEL = "scripted-openai"


def test_an_approval_travels_whole_and_a_doubt_never_carries_rules() -> None:
    approval = Approval("Bash", "echo hi", "echo hi", "command", None, ("Bash(echo *)",))
    message = protocol.decode(protocol.encode(protocol.confirm(3, "Allow Bash: echo hi?", None, approval)))
    assert protocol.approval_from_json(message["approval"]) == approval
    doubted = {**protocol.approval_to_json(approval), "reason": "a deny rule might be dodged"}
    back = protocol.approval_from_json(doubted)
    assert back is not None and back.rules == () and back.reason == "a deny rule might be dodged"
    assert protocol.approval_from_json({"tool": 1}) is None and protocol.approval_from_json(None) is None
    # an "always" answer travels only with a yes
    assert protocol.confirm_result(3, True, answer="always")["answer"] == "always"
    assert "answer" not in protocol.confirm_result(3, False, answer="always")
    assert "answer" not in protocol.confirm_result(3, True, answer="everything")
    # stop travels only with a no: the child's loop stops its iteration as the parent's would
    assert protocol.confirm_result(3, False, answer="stop")["answer"] == "stop"
    assert "answer" not in protocol.confirm_result(3, True, answer="stop")


def test_a_tool_event_is_one_bounded_line() -> None:
    event = protocol.tool_event("result", "Bash", "first line\nsecond line", True)
    assert event == {"type": "tool", "phase": "result", "name": "Bash", "summary": "first line", "error": True}
    long = protocol.tool_event("call", "Read", "x" * 5000)
    assert len(long["summary"]) == protocol.TOOL_TEXT and long["summary"].endswith("…")


CHILD = r"""
import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
sys.stdin.readline()  # start
send({"type": "tool", "phase": "call", "name": "Bash", "summary": "ls \u001b[2J"})
send({"type": "tool", "phase": "result", "name": "Bash", "summary": "no such file", "error": True})
send({"type": "tool", "phase": "bogus", "name": "Bash", "summary": "x"})
send({"type": "future-kind", "anything": 1})
send({"type": "confirm", "id": 1, "message": "Allow Bash: rm x?", "approval": {"tool": "Bash", "summary": "rm x",
      "detail": "rm x", "detailKind": "command", "reason": None, "rules": ["Bash(rm x)"]}})
answer = json.loads(sys.stdin.readline())
send({"type": "confirm", "id": 2, "message": "plain?"})
plain = json.loads(sys.stdin.readline())
send({"type": "done", "ok": True, "summary": json.dumps([answer, plain]), "messages": [], "toolCalls": 1})
"""


async def test_the_launcher_relays_tool_events_and_asks_with_the_box(project: Path, tmp_path: Path) -> None:
    agent = AgentDefinition("rev", "d", project / "AGENT.md", "project", "i", "m", "o")
    tools: list[tuple[str, str, str, bool]] = []
    boxes: list[tuple[str, Approval]] = []
    plain: list[str] = []

    async def ask(question: str, approval: Approval) -> str:
        boxes.append((question, approval))
        return "always"

    async def confirm(question: str, doubt: str | None = None) -> bool:
        plain.append(question)
        return True

    result = await launch_subagent(
        ChildSpec(agent, "t", project, tmp_path, MODEL),
        command=[sys.executable, "-c", CHILD],
        confirm=confirm,
        ask=ask,  # type: ignore[arg-type]
        on_tool=lambda *event: tools.append(event),
    )
    assert result.ok, result.error
    assert tools == [("call", "Bash", "ls \x1b[2J", False), ("result", "Bash", "no such file", True)]
    assert boxes == [
        ("[sub-agent rev] Allow Bash: rm x?", Approval("Bash", "rm x", "rm x", "command", None, ("Bash(rm x)",)))
    ]
    assert plain == ["[sub-agent rev] plain?"]  # no approval: the plain yes/no, as before
    assert result.summary == (
        '[{"type": "confirm-result", "id": 1, "ok": true, "answer": "always"}, '
        '{"type": "confirm-result", "id": 2, "ok": true}]'
    )


async def test_an_older_parent_without_the_new_callbacks_ignores_the_events(project: Path, tmp_path: Path) -> None:
    agent = AgentDefinition("rev", "d", project / "AGENT.md", "project", "i", "m", "o")

    async def confirm(question: str, doubt: str | None = None) -> bool:
        return True

    result = await launch_subagent(
        ChildSpec(agent, "t", project, tmp_path, MODEL), command=[sys.executable, "-c", CHILD], confirm=confirm
    )
    assert result.ok and '"answer"' not in result.summary  # a plain yes: nothing to remember
