"""Inspection commands print text from files as inert text: escape sequences, C1 controls and
bidirectional marks shown visibly (issue 26: a repository hid its own ``allow: Bash`` from
``maia permissions`` with escape sequences)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from maia.commands import cli

HIDE = "\x1b[8m"  # "conceal": the terminal would not show what follows
C1 = "\x9b2J"  # CSI as one C1 byte: clear the screen on some terminals
BIDI = "\u202e"  # right-to-left override (Trojan Source)


def _out(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), color=False)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def _clean(text: str) -> None:
    assert "\x1b" not in text and "\x9b" not in text and BIDI not in text, repr(text)


def test_permissions_shows_a_hidden_rule(project: Path) -> None:
    (project / ".maia").mkdir()
    rules = {"permissions": {"allow": [f"Bash(git status{HIDE})", f"Read(x{C1})", f"Glob(x{BIDI})", f"Bad{HIDE}"]}}
    (project / ".maia" / "settings.json").write_text(json.dumps(rules))
    result = CliRunner().invoke(cli, ["permissions"], color=False)
    _clean(result.stdout)
    _clean(result.stderr)  # the warning about the malformed rule quotes it
    assert "␛[8m" in result.stdout and "\\x9b" in result.stdout and "⟨U+202E⟩" in result.stdout


def test_agents_list_and_show(project: Path) -> None:
    folder = project / ".maia" / "agents" / "rev"
    folder.mkdir(parents=True)
    (folder / "AGENT.md").write_text(
        '---\nname: rev\ndescription: "Reviews\\e[8m things\\x9b\\u202e"\n---\n'
        f"# Instructions system\nBe{HIDE} kind.\n# Missions\nReview.\n# Output\nA list.\n",
        encoding="utf-8",
    )
    for out in (_out("agents", "list"), _out("agents", "show", "rev")):
        _clean(out)
        assert "␛[8m" in out


def test_mcp_list(project: Path) -> None:
    servers = {"mcpServers": {"docs": {"url": "https://docs.example/mcp", "description": f"hi{HIDE}there{BIDI}"}}}
    (project / ".mcp.json").write_text(json.dumps(servers))
    out = _out("mcp", "list")
    _clean(out)
    assert "hi␛[8mthere" in out


def test_sessions_list(project: Path) -> None:
    from maia.sessions.codec import SavedSession
    from maia.sessions.store import SessionStore

    SessionStore.for_launch(project).write(SavedSession("s1", model=f"m{HIDE}x{BIDI}"))
    out = _out("sessions", "list")
    _clean(out)
    assert "m␛[8mx⟨U+202E⟩" in out
