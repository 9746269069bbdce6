"""``maia permissions`` and ``maia permissions check`` on real settings files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from maia.commands import cli
from tests.conftest import trust_project


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")


def test_no_rules(home: Path, project: Path) -> None:
    result = CliRunner().invoke(cli, ["permissions"])
    assert result.exit_code == 0
    assert result.output == (
        "No permission rules defined: reading and searching inside the launch folder is allowed "
        "(secret-looking files excepted); every other tool use asks for confirmation.\n"
        f"User settings: {home / 'settings.json'} (no file)\n"
        f"Project settings: {project / '.maia' / 'settings.json'} (no file)\n"
        f"Local settings: {project / '.maia' / 'settings.local.json'} (no file)\n"
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
        f"Local settings: {project / '.maia' / 'settings.local.json'} (no file)\n"
    )
    assert 'permissions.deny[1]: "Bad(" is not a rule' in result.stderr


def test_json_listing(home: Path, project: Path) -> None:
    _write(project / ".maia" / "settings.json", {"permissions": {"deny": ["Read(./.env)"]}})
    result = CliRunner().invoke(cli, ["permissions", "--json"])
    assert json.loads(result.stdout) == {
        "sources": [
            {
                "scope": "user",
                "path": str(home / "settings.json"),
                "exists": False,
                "allow": [],
                "ask": [],
                "deny": [],
                "inertVariables": [],
            },
            {
                "scope": "project",
                "path": str(project / ".maia" / "settings.json"),
                "exists": True,
                "allow": [],
                "ask": [],
                "deny": ["Read(./.env)"],
                "inertVariables": [],
            },
            {
                "scope": "local",
                "path": str(project / ".maia" / "settings.local.json"),
                "exists": False,
                "allow": [],
                "ask": [],
                "deny": [],
                "inertVariables": [],
            },
        ],
        "trusted": True,
        "warnings": [],
    }


def test_broken_project_file_is_a_warning(home: Path, project: Path) -> None:
    _write(project / ".maia" / "settings.json", '{"permissions": {"allow": [}')
    result = CliRunner().invoke(cli, ["permissions"])
    assert result.exit_code == 0
    assert (
        "invalid JSON at line 1, column 28" in result.stderr
        and "(its permission rules cannot be read)" in result.stderr
    )


def test_check_compound_command(home: Path, project: Path) -> None:
    _write(home / "settings.json", {"permissions": {"allow": ["Bash(git status)"], "deny": ["Bash(rm *)"]}})
    result = CliRunner().invoke(cli, ["permissions", "check", "Bash", "git status && rm -rf build"], color=False)
    assert result.exit_code == 2  # deny
    assert result.output == "DENY  deny rule Bash(rm *) matches `rm -rf build`\n"
    allowed = CliRunner().invoke(cli, ["permissions", "check", "Bash", "git status", "--json"])
    assert allowed.exit_code == 0
    assert json.loads(allowed.output) == {
        "verdict": "allow",
        "rule": "Bash(git status)",
        "reason": "allowed: every part is covered by Bash(git status)",
        "doubt": False,
    }
    asked = CliRunner().invoke(cli, ["permissions", "check", "Bash", "git push", "--json"])
    assert asked.exit_code == 1
    assert json.loads(asked.output) == {
        "verdict": "ask",
        "rule": None,
        "reason": "no allow rule covers `git push`: ask",
        "doubt": False,
    }
    doubtful = CliRunner().invoke(cli, ["permissions", "check", "Bash", "echo $HOME", "--json"])
    assert doubtful.exit_code == 1 and json.loads(doubtful.output)["doubt"] is True


def test_check_exit_status_is_documented() -> None:
    result = CliRunner().invoke(cli, ["permissions", "check", "--help"])
    assert "Exit status: 0 allow, 1 ask, 2 deny." in result.output


def test_check_judges_a_custom_tool_with_its_declared_parameters(home: Path, project: Path) -> None:
    tool = project / ".maia" / "tools" / "add"
    _write(
        tool / "TOOL.json",
        {
            "name": "Addition",
            "description": "d",
            "command": {"parameters": [{"name": "a", "type": "number", "default": "7"}], "run": "true {{a}}"},
        },
    )
    _write(project / ".maia" / "settings.json", {"permissions": {"allow": ["Addition(7)"]}})
    trust_project(project)  # the project's tool and rules count in a folder the user trusted
    assert CliRunner().invoke(cli, ["permissions", "check", "Addition", "{}"]).exit_code == 0
    assert CliRunner().invoke(cli, ["permissions", "check", "Addition", '{"a": 8}']).exit_code == 1
    refused = CliRunner().invoke(cli, ["permissions", "check", "Addition", '{"b": 7}'])
    assert refused.exit_code == 2 and "Addition has no parameter b" in refused.output


def test_inert_variables_are_listed(home: Path, project: Path) -> None:
    _write(
        home / "settings.json",
        {"permissions": {"allow": ["Bash(npm test)"], "inertVariables": ["FOO", "PATH", "1X", "TAR_OPTIONS"]}},
    )
    trust_project(project)
    # a project cannot declare the variable that makes its own scripts run (issue 26)
    _write(project / ".maia" / "settings.json", {"permissions": {"inertVariables": ["BAR"]}})
    result = CliRunner().invoke(cli, ["permissions"], color=False)
    assert "  INERT  FOO\n" in result.stdout
    assert "inertVariables[1]: PATH can change what a command runs" in result.stderr
    assert "inertVariables[2]: '1X' is not a variable name" in result.stderr
    assert "inertVariables[3]: TAR_OPTIONS can change what a command runs" in result.stderr
    assert "inertVariables is only read from your own settings (BAR ignored)" in result.stderr
    listing = CliRunner().invoke(cli, ["permissions", "--json"])
    assert json.loads(listing.stdout)["sources"][0]["inertVariables"] == ["FOO"]
    assert json.loads(listing.stdout)["sources"][1]["inertVariables"] == []
    assert CliRunner().invoke(cli, ["permissions", "check", "Bash", "FOO=1 npm test"]).exit_code == 0
    assert CliRunner().invoke(cli, ["permissions", "check", "Bash", "BAR=1 npm test"]).exit_code == 1


def test_check_path_and_json_input(home: Path, project: Path) -> None:
    _write(
        project / ".maia" / "settings.json", {"permissions": {"deny": ["Read(./.env)"], "allow": ["Write(docs/**)"]}}
    )
    trust_project(project)
    denied = CliRunner().invoke(cli, ["permissions", "check", "Read", "src/../.env", "--json"])
    assert json.loads(denied.output)["verdict"] == "deny" and denied.exit_code == 2
    allowed = CliRunner().invoke(
        cli, ["permissions", "check", "Write", '{"path": "docs/a.md", "content": "x"}', "--json"]
    )
    assert json.loads(allowed.output)["verdict"] == "allow"
    bad = CliRunner().invoke(cli, ["permissions", "check", "Write", "{not json"])
    assert bad.exit_code == 2 and "INPUT looks like JSON but is not valid" in bad.output


def test_check_needs_two_arguments() -> None:
    result = CliRunner().invoke(cli, ["permissions", "check", "Bash"])
    assert result.exit_code == 2 and "Missing argument 'INPUT'" in result.output
