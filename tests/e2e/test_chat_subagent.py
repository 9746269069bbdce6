"""A sub-agent's work in the chat (issue 28 item 6): its tool calls nested under the Agent call while it works,
and its questions in the same approval box as the parent's own (the command, ``a`` always)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer

from tests.conftest import trust_project
from tests.e2e.conftest import ready
from tests.e2e.terminal import Terminal
from tests.streams import text_stream, tool_stream
from tests.subagents.conftest import ScriptedLiteLLM, agent_md


def _agent(project: Path, name: str = "rev") -> None:
    folder = project / ".maia" / "agents" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "AGENT.md").write_text(agent_md(name), encoding="utf-8")
    trust_project(project)


def test_the_sub_agents_tool_calls_show_nested_under_the_agent_call_while_it_works(
    server: HTTPServer, start: Callable[..., Terminal], project: Path, write_settings: Callable[..., Path]
) -> None:
    write_settings(server.url_for(""), permissions={"allow": ["Agent(rev)"]})
    _agent(project)
    (project / "main.py").write_text("print('hi')\n")
    (project / "notes.md").write_text("# notes\n")
    script = ScriptedLiteLLM(server)
    release = threading.Event()

    def held(_body: dict[str, Any]) -> bytes:  # the child's last model call waits until the test has looked
        release.wait(60)
        return text_stream("Verdict: fine.")

    script.add("main", tool_stream("Agent", {"agent": "rev", "task": "review main.py"}), text_stream("All reviewed."))
    script.add(
        "rev",
        tool_stream("Read", {"path": "main.py"}, "c1"),
        tool_stream("Read", {"path": "\x1b[31mnotes.md"}, "c2"),  # untrusted text: shown inert
        held,
    )
    term = start()
    ready(term)
    term.send("review\r")
    try:
        screen = term.wait_for("⎿ rev · ✗ File not found")  # the missing file's error, one line under its call
        assert "⎿ rev · Read(main.py)" in screen and "⎿ rev · Read(␛[31mnotes.md)" in screen
        assert screen.index("Agent(rev: review main.py)") < screen.index("⎿ rev · Read(main.py)")
        assert "All reviewed." not in term.everything()  # live: the child is still at work
    finally:
        release.set()
    screen = term.wait_for("All reviewed.")
    assert screen.count("⎿ rev · Read(main.py)") == 1


def test_a_sub_agents_question_shows_the_command_and_always_is_kept_as_the_parents_answer(
    server: HTTPServer, start: Callable[..., Terminal], project: Path, write_settings: Callable[..., Path]
) -> None:
    write_settings(server.url_for(""), permissions={"allow": ["Agent(rev)"]})
    _agent(project)
    script = ScriptedLiteLLM(server)
    script.add(
        "main",
        tool_stream("Agent", {"agent": "rev", "task": "echo things"}),
        tool_stream("Bash", {"command": "echo parent three"}, "p2"),
        text_stream("Parent done."),
    )
    script.add(
        "rev",
        tool_stream("Bash", {"command": "echo relayed one"}, "c1"),
        tool_stream("Bash", {"command": "echo relayed two"}, "c2"),
        text_stream("Child done."),
    )
    term = start()
    ready(term)
    term.send("go\r")
    screen = term.wait_for("[sub-agent rev] Allow Bash: echo relayed one? (y/n/a/s=stop)")
    assert "│ echo relayed one" in screen  # the exact command, in the box, as for the parent's own calls
    term.answer("a")
    term.wait_for("Always allow Bash(echo *)")
    term.send("p")
    screen = term.wait_for("Parent done.")
    everything = term.everything()
    assert "Allow Bash: echo relayed two" not in everything  # the rule holds for the child at once
    assert "Allow Bash: echo parent three" not in everything  # and for the parent, as its own answer would
    assert "Rule added to" in everything and "settings.local.json: Bash(echo *)" in everything
    local = json.loads((project / ".maia" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == ["Bash(echo *)"]
    assert "⎿ rev · Bash(echo relayed two)" in term.everything()
