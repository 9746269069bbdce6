"""``maia permissions`` and ``maia permissions check`` on real settings files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from maia.commands import cli


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")


def test_no_rules(home: Path, project: Path) -> None:
    result = CliRunner().invoke(cli, ["permissions"])
    assert result.exit_code == 0
    assert result.output == (
        "No permission rules defined: every tool use asks for confirmation.\n"
        f"User settings: {home / 'settings.json'} (no file)\n"
        f"Project settings: {project / '.maia' / 'settings.json'} (no file)\n"
    )


def test_rules_per_file_and_family_with_warnings(home: Path, project: Path) -> None:
    _write(
        home / "settings.json",
        {
            "LiteLLM_URL": "http://x",
            "permissions": {"allow": ["Read", "Bash(git status)"], "deny": ["Bash(rm *)", "Bad("]},
        },
    )
    _write(project / ".maia" / "settings.json", {"permissions": {"ask": ["Bash(git push *)"]}})
    _write(project.parent / ".maia" / "settings.json", {"permissions": {"allow": ["Bash"]}})  # parent: never read
    result = CliRunner().invoke(cli, ["permissions"], color=False)
    assert result.exit_code == 0
    assert result.stdout == (
        f"User settings: {home / 'settings.json'}\n"
        "  ALLOW  Read\n"
        "         Bash(git status)\n"
        "  DENY   Bash(rm *)\n"
        f"Project settings: {project / '.maia' / 'settings.json'}\n"
        "  ASK    Bash(git push *)\n"
    )
    assert 'permissions.deny[1]: "Bad(" is not a rule' in result.stderr


def test_json_listing(home: Path, project: Path) -> None:
    _write(project / ".maia" / "settings.json", {"permissions": {"deny": ["Read(./.env)"]}})
    result = CliRunner().invoke(cli, ["permissions", "--json"])
    assert json.loads(result.stdout) == {
        "sources": [
            {"scope": "user", "path": str(home / "settings.json"), "exists": False, "allow": [], "ask": [], "deny": []},
            {
                "scope": "project",
                "path": str(project / ".maia" / "settings.json"),
                "exists": True,
                "allow": [],
                "ask": [],
                "deny": ["Read(./.env)"],
            },
        ],
        "warnings": [],
    }


def test_broken_project_file_is_a_warning(home: Path, project: Path) -> None:
    _write(project / ".maia" / "settings.json", '{"permissions": {"allow": [}')
    result = CliRunner().invoke(cli, ["permissions"])
    assert result.exit_code == 0
    assert (
        "invalid JSON at line 1, column 28" in result.stderr and "(its permission rules are ignored)" in result.stderr
    )


def test_check_compound_command(home: Path, project: Path) -> None:
    _write(home / "settings.json", {"permissions": {"allow": ["Bash(git status)"], "deny": ["Bash(rm *)"]}})
    result = CliRunner().invoke(cli, ["permissions", "check", "Bash", "git status && rm -rf build"], color=False)
    assert result.exit_code == 0
    assert result.output == "DENY  deny rule Bash(rm *) matches `rm -rf build`\n"
    allowed = CliRunner().invoke(cli, ["permissions", "check", "Bash", "git status", "--json"])
    assert json.loads(allowed.output) == {
        "verdict": "allow",
        "rule": "Bash(git status)",
        "reason": "allowed: every part is covered by Bash(git status)",
    }


def test_check_path_and_json_input(home: Path, project: Path) -> None:
    _write(
        project / ".maia" / "settings.json", {"permissions": {"deny": ["Read(./.env)"], "allow": ["Write(docs/**)"]}}
    )
    denied = CliRunner().invoke(cli, ["permissions", "check", "Read", "src/../.env", "--json"])
    assert json.loads(denied.output)["verdict"] == "deny"
    allowed = CliRunner().invoke(
        cli, ["permissions", "check", "Write", '{"path": "docs/a.md", "content": "x"}', "--json"]
    )
    assert json.loads(allowed.output)["verdict"] == "allow"
    bad = CliRunner().invoke(cli, ["permissions", "check", "Write", "{not json"])
    assert bad.exit_code == 2 and "INPUT looks like JSON but is not valid" in bad.output


def test_check_needs_two_arguments() -> None:
    result = CliRunner().invoke(cli, ["permissions", "check", "Bash"])
    assert result.exit_code == 2 and "Missing argument 'INPUT'" in result.output
