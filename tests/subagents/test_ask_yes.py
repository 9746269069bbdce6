"""``maia ask --yes`` answers a sub-agent's plain questions as it answers the parent's, never a doubt,
and a question nobody could answer is never reported as the user's refusal (issue 26)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from maia.agent.runner import USER_REFUSED
from maia.commands import cli
from tests.streams import text_stream, tool_stream
from tests.subagents.conftest import ScriptedLiteLLM


def _tool_messages(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


def _run(script: ScriptedLiteLLM, project: Path, command: str, *flags: str) -> str:
    script.add("main", tool_stream("Agent", {"agent": "rev", "task": "do it"}), text_stream("parent done"))
    script.add("rev", tool_stream("Bash", {"command": command}), text_stream("child done"))
    result = CliRunner().invoke(cli, ["ask", "-m", "m", "--no-save", *flags, "go"])
    assert result.exit_code == 0, result.output
    return _tool_messages(script.requests["rev"][1])[0]


def test_yes_answers_a_sub_agents_plain_ask(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], project: Path
) -> None:
    make_agent("rev")
    answer = _run(script, project, "touch made.txt", "--yes")
    assert (project / "made.txt").exists(), answer


def test_yes_never_answers_a_sub_agents_doubt(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], project_rules: Callable[..., Path], project: Path
) -> None:
    make_agent("rev")
    project_rules(deny=["Bash(rm *)"])
    (project / "keep").mkdir()
    answer = _run(script, project, "x86_64 rm -rf keep || perl -e 'system(\"rm\")'", "--yes")
    assert (project / "keep").exists()
    assert answer != USER_REFUSED


def test_without_yes_a_sub_agent_is_told_nobody_could_answer(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], project: Path
) -> None:
    make_agent("rev")
    answer = _run(script, project, "touch made.txt", "--allow", "Agent")
    assert not (project / "made.txt").exists()
    assert answer != USER_REFUSED and "non-interactive run" in answer


def test_stream_json_shows_the_sub_agents_tool_calls_with_its_name(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], project: Path
) -> None:
    """issue 28 item 6: a script following ``maia ask`` sees what the sub-agent does, as it does it."""
    import json

    from tests.app.helpers import maia

    make_agent("rev")
    (project / "main.py").write_text("print('hi')\n")
    script.add("main", tool_stream("Agent", {"agent": "rev", "task": "read it"}), text_stream("parent done"))
    script.add("rev", tool_stream("Read", {"path": "main.py"}), text_stream("child done"))
    result = maia("ask", "-m", "m", "--no-save", "--allow", "Agent", "-o", "stream-json", "go")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    nested = [e for e in events if e["type"].startswith("subagent_tool")]
    assert nested == [
        {"type": "subagent_tool_call", "agent": "rev", "name": "Read", "summary": "main.py"},
        {
            "type": "subagent_tool_result",
            "agent": "rev",
            "name": "Read",
            "summary": "1\tprint('hi')",
            "is_error": False,
        },
    ]
    kinds = [e["type"] for e in events]
    assert kinds.index("subagent_tool_call") > kinds.index("tool_call")  # under the Agent call
