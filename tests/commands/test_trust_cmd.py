"""Folder trust (issue 25) with real processes and files: ``maia trust``, ``maia ask`` in an untrusted
folder, the safe defaults, and what an untrusted folder's files may no longer grant."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from maia.commands import cli
from maia.core import trust
from tests.streams import text_stream, tool_stream

CHAT = "/v1/chat/completions"


def reply(server: HTTPServer, body: bytes) -> None:
    server.expect_oneshot_request(CHAT, method="POST").respond_with_data(body, content_type="text/event-stream")


def requests(server: HTTPServer) -> list[dict[str, Any]]:
    return [json.loads(r.data) for r, _ in server.log if r.path == CHAT]


def maia(*args: str) -> subprocess.CompletedProcess[str]:
    """``maia ARGS`` as its own process, stdin closed (as in CI)."""
    return subprocess.run(
        [sys.executable, "-m", "maia", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=os.environ.copy(),
        timeout=60,
    )


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")


def test_ask_in_an_untrusted_folder_ignores_the_projects_allow_and_says_how_to_trust(
    server: HTTPServer, project: Path
) -> None:
    write(project / ".maia" / "settings.json", {"permissions": {"allow": ["Bash"]}})
    reply(server, tool_stream("Bash", {"command": "mkdir ran"}, "call_1"))
    reply(server, text_stream("Could not run it."))
    result = maia("ask", "-m", "scripted-openai", "health check please")
    assert result.returncode == 0, result.stderr
    assert not (project / "ran").exists()  # the project's `allow: Bash` did not apply
    assert result.stderr.count("is not trusted") == 1 and "`maia trust`" in result.stderr
    assert "allows Bash" in result.stderr
    assert "Not run" in json.dumps(requests(server)[1]["messages"][-1])  # the model is told
    # trusted: the same request runs the command, and nothing is said about trust
    trusted = maia("trust")
    assert trusted.returncode == 0 and "allows Bash  (.maia/settings.json)" in trusted.stdout
    reply(server, tool_stream("Bash", {"command": "mkdir ran"}, "call_2"))
    reply(server, text_stream("Done."))
    again = maia("ask", "-m", "scripted-openai", "health check please")
    assert again.returncode == 0, again.stderr
    assert (project / "ran").is_dir() and "not trusted" not in again.stderr


def test_deny_and_ask_rules_of_an_untrusted_folder_still_apply(home: Path, project: Path) -> None:
    write(project / ".maia" / "settings.json", {"permissions": {"allow": ["Bash"], "deny": ["Read(./notes.txt)"]}})
    (project / "notes.txt").write_text("x")
    denied = CliRunner().invoke(cli, ["permissions", "check", "--json", "Read", "notes.txt"])
    assert json.loads(denied.stdout)["verdict"] == "deny"
    bash = CliRunner().invoke(cli, ["permissions", "check", "--json", "Bash", "ls"])
    assert json.loads(bash.stdout)["verdict"] == "ask"  # the allow is a grant: ignored
    listing = CliRunner().invoke(cli, ["permissions"], color=False)
    assert "  ALLOW  Bash  ignored (untrusted)" in listing.stdout and "maia trust" in listing.stdout
    data = json.loads(CliRunner().invoke(cli, ["permissions", "--json"]).stdout)
    assert data["trusted"] is False and data["sources"][1]["ignored"] == {"allow": ["Bash"], "inertVariables": []}


def test_ask_reads_a_project_file_with_no_rules(server: HTTPServer, project: Path) -> None:
    write(project / "src" / "app.py", "def main():\n    return 'the app'\n")
    reply(server, tool_stream("Read", {"path": "src/app.py"}, "call_1"))
    reply(server, text_stream("It returns 'the app'."))
    result = maia("ask", "-m", "scripted-openai", "summarise src/app.py")
    assert result.returncode == 0, result.stderr
    assert "the app" in json.dumps(requests(server)[1]["messages"][-1])  # the file's content reached the model
    assert result.stdout == "It returns 'the app'.\n"


@pytest.mark.parametrize(
    ("tool", "value"),
    [
        ("Read", ".env"),
        ("Read", "config/.env.local"),
        ("Read", "certs/server.pem"),
        ("Read", "id_ed25519"),
        ("Read", ".npmrc"),
        ("Read", "/etc/hostname"),
        ("Read", ".maia/settings.json"),
        ("Grep", ".."),
    ],
)
def test_safe_defaults_still_ask_for_secrets_protected_paths_and_outside(tool: str, value: str) -> None:
    result = CliRunner().invoke(cli, ["permissions", "check", "--json", tool, value])
    assert json.loads(result.stdout)["verdict"] == "ask", result.stdout


def test_safe_defaults_allow_reading_inside_and_a_deny_wins(project: Path) -> None:
    check = ["permissions", "check", "--json"]
    for tool, value in (("Read", "src/app.py"), ("Grep", "."), ("Glob", "**/*.py"), ("TodoWrite", "{}")):
        assert json.loads(CliRunner().invoke(cli, [*check, tool, value]).stdout)["verdict"] == "allow"
    write(project / ".maia" / "settings.json", {"permissions": {"deny": ["Read(./src/**)"]}})
    assert json.loads(CliRunner().invoke(cli, [*check, "Read", "src/app.py"]).stdout)["verdict"] == "deny"


def test_a_wide_grep_leaves_secret_looking_files_out(server: HTTPServer, project: Path) -> None:
    write(project / "app.py", "TOKEN_NAME = 'x'\n")
    write(project / "prod.key", "TOKEN_NAME=hunter2\n")
    reply(server, tool_stream("Grep", {"pattern": "TOKEN_NAME", "output_mode": "content"}, "call_1"))
    reply(server, text_stream("Found it."))
    result = maia("ask", "-m", "scripted-openai", "find TOKEN_NAME")
    assert result.returncode == 0, result.stderr
    seen = json.dumps(requests(server)[1]["messages"][-1])
    assert "app.py" in seen and "hunter2" not in seen


def test_trust_list_revoke_and_json(home: Path, project: Path) -> None:
    write(project / ".mcp.json", {"mcpServers": {"tracker": {"command": "track-server", "args": ["--all"]}}})
    write(
        project / ".maia" / "tools" / "deploy" / "TOOL.json",
        {"description": "Deploy", "command": {"run": "./deploy.sh"}},
    )
    shown = CliRunner().invoke(cli, ["trust", "--json"])
    data = json.loads(shown.stdout)
    assert data["trusted"] is True and data["path"] == str(project.resolve())
    assert data["grants"] == [
        "MCP server tracker: track-server --all  (.mcp.json)",
        "custom tool deploy: ./deploy.sh  (.maia/tools/deploy/TOOL.json)",
    ]
    listed = json.loads(CliRunner().invoke(cli, ["trust", "--list", "--json"]).stdout)
    assert [f["path"] for f in listed["folders"]] == [str(project.resolve())]
    record = json.loads((home / "trust.json").read_text())["folders"][str(project.resolve())]
    assert len(record["digest"]) == 64
    revoked = CliRunner().invoke(cli, ["trust", "--revoke", str(project)])
    assert revoked.exit_code == 0 and "no longer trusted" in revoked.stdout
    assert CliRunner().invoke(cli, ["trust", "--revoke", str(project)]).exit_code == 1
    assert CliRunner().invoke(cli, ["trust", "--list", str(project)]).exit_code == 2


def test_untrusted_folder_loads_no_project_tool_server_or_agent_grant(home: Path, project: Path) -> None:
    from maia.mcp.config import load_config
    from maia.mcp.rules import select_servers
    from maia.permissions.rules import parse_rules
    from maia.subagents.definitions import load_agents
    from maia.tools.custom import load_custom_tools

    write(project / ".mcp.json", {"mcpServers": {"tracker": {"command": "track-server"}}})
    write(project / ".maia" / "tools" / "deploy" / "TOOL.json", {"description": "Deploy", "command": {"run": "x"}})
    write(
        project / ".maia" / "agents" / "fixer" / "AGENT.md",
        "---\ndescription: Fixes\npermissions:\n  allow: [Bash]\n  deny: [Bash(rm *)]\n---\n"
        "# Instructions system\nFix.\n# Missions\nFix.\n# Output\nA fix.\n",
    )
    mine = parse_rules({"allow": ["Mcp(tracker)"]}).ruleset  # the user's own rule naming the server
    servers = load_config(home, project, {}).servers
    (selection,), _warnings = select_servers(servers, mine, mine, trusted=trust.folder_trusted(project, home))
    assert not selection.enabled and "ignored (untrusted)" in selection.reason
    assert load_custom_tools(project, home).tools == []
    assert load_agents(home, project).agents["fixer"].permissions == {"deny": ("Bash(rm *)",)}
    trust.trust_folder(project, home)
    (selection,), _warnings = select_servers(servers, mine, mine, trusted=trust.folder_trusted(project, home))
    assert selection.enabled
    assert [t.spec.name for t in load_custom_tools(project, home).tools] == ["deploy"]
    assert load_agents(home, project).agents["fixer"].permissions["allow"] == ("Bash",)


def test_home_folder_and_root_are_never_trusted_implicitly(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_home = tmp_path / "user"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    assert not trust.folder_trusted(user_home, home)  # no grant there, still not trusted without asking
    assert not trust.folder_trusted(Path("/"), home)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert trust.folder_trusted(plain, home)  # a folder that grants nothing needs no question
    trust.trust_folder(user_home, home)
    assert trust.folder_trusted(user_home, home)


def test_rules_maia_writes_keep_trust_and_hold_in_an_untrusted_folder(home: Path, project: Path) -> None:
    from maia.app.approvals import remember_rules
    from maia.permissions.sources import load_rules

    write(project / ".maia" / "settings.json", {"permissions": {"allow": ["Read"]}})
    remember_rules(home, project, ["Bash(npm test)"])  # the user's "always" answer
    assert not trust.folder_trusted(project, home)
    assert [r.text for r in load_rules(home, project).ruleset.allow] == ["Bash(npm test)"]
    trust.trust_folder(project, home)
    remember_rules(home, project, ["Bash(npm run lint)"])
    assert trust.folder_trusted(project, home)
    # a rule the repository put in settings.local.json is a grant: trust is asked again
    data = json.loads((project / ".maia" / "settings.local.json").read_text())
    data["permissions"]["allow"].append("Bash(curl *)")
    write(project / ".maia" / "settings.local.json", data)
    state = trust.check(project, home)
    assert not state.trusted and state.added == ["allows Bash(curl *)  (.maia/settings.local.json)"]


def test_a_changed_server_environment_is_a_change_though_its_line_looks_the_same(home: Path, project: Path) -> None:
    write(project / ".mcp.json", {"mcpServers": {"tracker": {"command": "track-server"}}})
    trust.trust_folder(project, home)
    assert trust.folder_trusted(project, home)
    write(project / ".mcp.json", {"mcpServers": {"tracker": {"command": "track-server", "env": {"LD_PRELOAD": "x"}}}})
    state = trust.check(project, home)
    assert not state.trusted and state.added == ["MCP server tracker: track-server  (.mcp.json)"]
    write(project / ".mcp.json", {"mcpServers": {}})  # fewer grants than trusted: still trusted
    assert trust.folder_trusted(project, home)
