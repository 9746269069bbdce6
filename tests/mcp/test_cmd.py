"""``maia mcp list / test / add / remove``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from maia.commands import cli
from tests.mcp.conftest import RunningServer, stdio_entry, write_rules, write_servers


def maia(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["mcp", *args])
    return result.exit_code, result.stdout, result.stderr


def test_list_without_servers() -> None:
    code, out, _err = maia("list")
    assert code == 0 and "No MCP server declared" in out


def test_list_says_what_is_enabled_and_why(home: Path, project: Path) -> None:
    write_servers(
        home / "mcp.json",
        {
            "docs": {"url": "https://docs.example/mcp?token=abc", "headers": {"Authorization": "Bearer s3cret"}},
            "old": {"type": "sse", "url": "https://old.example/sse", "description": "legacy"},
            "bad": {"url": "ftp://x"},
        },
    )
    write_servers(project / ".mcp.json", {"proj": {"command": "./serve"}})
    write_rules(home, allow=["Mcp(docs)"])
    write_rules(project / ".maia", allow=["Mcp(proj)", "Mcp(old)"], deny=["Mcp(old,*)"])
    code, out, err = maia("list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["docs", "enabled", "http", "https://docs.example/mcp"]  # no query, no secret
    assert lines[1].strip() == "enabled by the allow rule Mcp(docs)"
    assert lines[2].split() == ["old", "off", "sse", "https://old.example/sse"]
    assert lines[3].strip() == "disabled by the deny rule Mcp(old,*)" and lines[4].strip() == "legacy"
    assert lines[5].split() == ["proj", "off", "stdio", "./serve", "(project)"]
    assert f"your own {home / 'settings.json'}" in lines[6]
    assert "mcpServers.bad" in err and "s3cret" not in out + err

    code, out, _err = maia("list", "--json")
    payload = json.loads(out)
    assert [(s["name"], s["enabled"], s["origin"], s["rule"]) for s in payload["servers"]] == [
        ("docs", True, "user", "Mcp(docs)"),
        ("old", False, "user", "Mcp(old,*)"),
        ("proj", False, "project", None),
    ]
    assert payload["servers"][0]["headers"] == ["Authorization"] and "s3cret" not in out
    assert any("mcpServers.bad" in w for w in payload["warnings"])


def test_test_connects_and_lists(mcp_server: Callable[..., RunningServer], home: Path) -> None:
    server = mcp_server("http")
    write_servers(home / "mcp.json", {"t": {"url": server.url, "excludeTools": ["big"]}, "off": {"url": server.url}})
    write_rules(home, allow=["Mcp(t)"])
    code, out, _err = maia("test")
    assert code == 0, out
    assert out.startswith(f"t (http, {server.url})")
    assert "  OK  connected in " in out and "(protocol 2025-11-25, maia-test)" in out
    assert "8 tools listed in" in out and "1 hidden" in out and "1 prompt, 2 resources" in out
    assert "mcp__t__echo" in out and "mcp__t__big" not in out
    assert "off (" not in out  # only what the rules enable, without a name

    code, out, _err = maia("test", "off")  # a named server is tested even when no rule enables it yet
    assert code == 0 and "not enabled here" in out and "OK" in out


def test_test_reports_failures_with_exit_1(home: Path) -> None:
    write_servers(home / "mcp.json", {"gone": {"command": "/nonexistent/server"}})
    write_rules(home, allow=["Mcp(gone)"])
    code, out, _err = maia("test")
    assert code == 1 and "FAIL  command not found: /nonexistent/server (is it installed and on PATH?) (after " in out


def test_test_unknown_and_untrusted_servers(home: Path, project: Path) -> None:
    code, _out, err = maia("test", "nope")
    assert code == 2 and "No MCP server is declared as nope." in err
    marker = project / "started.txt"
    write_servers(project / ".mcp.json", {"proj": stdio_entry(marker)})
    write_rules(project / ".maia", allow=["Mcp(proj)"])
    code, _out, err = maia("test", "proj")
    assert code == 1 and '"allow": ["Mcp(proj)"]' in err
    assert not marker.exists()
    code, out, _err = maia("test")
    assert code == 0 and "No MCP server is enabled" in out and not marker.exists()


def test_add_and_remove_keep_everything_else_in_place(home: Path, project: Path) -> None:
    path = home / "mcp.json"
    original = {
        "$comment": "mine",
        "mcpServers": {"zeta": {"url": "https://z.example/mcp"}, "alpha": {"command": "a", "args": ["1"]}},
        "other": [1, 2],
    }
    path.write_text(json.dumps(original), encoding="utf-8")
    code, out, _err = maia("add", "docs", "https://docs.example/mcp", "-H", "Authorization: Bearer ${TOKEN}")
    assert code == 0 and f"Added docs to {path}." in out and '"Mcp(docs)"' in out
    code, _out, _err = maia("add", "old", "https://old.example/sse", "--type", "sse", "--timeout", "60")
    assert code == 0
    code, _out, _err = maia("add", "files", "-e", "ROOT=${HOME}/data", "--cwd", "sub", "--", "npx", "-y", "srv", "-x")
    assert code == 0
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["$comment", "mcpServers", "other"] and data["other"] == [1, 2]
    assert list(data["mcpServers"]) == ["zeta", "alpha", "docs", "old", "files"]
    assert data["mcpServers"]["zeta"] == original["mcpServers"]["zeta"]  # type: ignore[index]
    assert data["mcpServers"]["docs"] == {
        "type": "http",
        "url": "https://docs.example/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}"},  # kept as written, expanded when connecting
    }
    assert data["mcpServers"]["old"] == {"type": "sse", "url": "https://old.example/sse", "timeout": 60}
    assert data["mcpServers"]["files"] == {
        "type": "stdio",
        "command": "npx",
        "args": ["-y", "srv", "-x"],
        "env": {"ROOT": "${HOME}/data"},
        "cwd": "sub",
    }

    code, out, _err = maia("remove", "alpha")
    assert code == 0 and f"Removed alpha from {path}." in out
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["$comment", "mcpServers", "other"]
    assert list(data["mcpServers"]) == ["zeta", "docs", "old", "files"]
    assert not list(project.iterdir())  # no lock or temporary file left in the project


def test_a_url_without_its_scheme_is_kept_as_a_command_with_a_warning(home: Path) -> None:
    code, _out, err = maia("add", "docs", "docs.example.com/mcp")
    assert code == 0 and "is not a program on PATH nor a file" in err and "https://" in err
    code, _out, err = maia("add", "files", "--", sys.executable, "-m", "srv")  # a real program: no warning
    assert code == 0 and "not a program" not in err


def test_project_file(home: Path, project: Path) -> None:
    code, out, _err = maia("add", "--project", "proj", "--", "./serve", "--port", "0")
    path = project / ".mcp.json"
    assert code == 0 and f"Added proj to {path}." in out and f"starts only when {home / 'settings.json'}" in out
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "mcpServers": {"proj": {"type": "stdio", "command": "./serve", "args": ["--port", "0"]}}
    }
    assert sorted(p.name for p in project.iterdir()) == [".mcp.json"]
    code, _out, err = maia("remove", "proj")
    assert code == 2 and "No server named proj in" in err and "maia mcp remove proj --project" in err
    code, _out, _err = maia("remove", "--project", "proj")
    assert code == 0 and json.loads(path.read_text(encoding="utf-8")) == {"mcpServers": {}}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["bad name", "https://x.example"], "Invalid server name 'bad name'"),
        (["a__b", "https://x.example"], "cannot contain __"),
        (["x", "ftp://x.example"], "must start with http:// or https://"),
        (["x", "notaurl", "--type", "http"], "must start with http:// or https://"),
        (["x", "https://a", "https://b"], "A remote server takes one URL"),
        (["x", "https://x.example", "-H", "NoColon"], '--header must be "Name: value"'),
        (["x", "https://x.example", "-e", "A=1"], "--env and --cwd are for local servers"),
        (["x", "-H", "A: b", "--", "srv"], "--header is for remote servers"),
        (["x", "-e", "1A=x", "--", "srv"], "--env must be NAME=value"),
        (["x", "--timeout", "0", "https://x.example"], "--timeout must be between 0 and 3600"),
    ],
)
def test_add_rejects_bad_input_and_writes_nothing(home: Path, args: list[str], needle: str) -> None:
    code, _out, err = maia("add", *args)
    assert code == 2 and needle in err, err
    assert not (home / "mcp.json").exists()


def test_add_refuses_a_duplicate_and_a_broken_file(home: Path) -> None:
    path = home / "mcp.json"
    write_servers(path, {"docs": {"url": "https://docs.example/mcp"}})
    before = path.read_text(encoding="utf-8")
    code, _out, err = maia("add", "docs", "https://other.example/mcp")
    assert code == 2 and "already declared" in err and path.read_text(encoding="utf-8") == before
    path.write_text('{"mcpServers": {"docs": ', encoding="utf-8")
    for args in (["add", "x", "https://x.example"], ["remove", "docs"]):
        code, _out, err = maia(*args)
        assert code == 1 and "invalid JSON at line 1" in err and "it was not changed" in err
        assert path.read_text(encoding="utf-8") == '{"mcpServers": {"docs": '


def test_a_crash_while_writing_leaves_the_old_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = home / "mcp.json"
    write_servers(path, {"docs": {"url": "https://docs.example/mcp"}})
    before = path.read_bytes()

    def crash(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    result = CliRunner().invoke(cli, ["mcp", "add", "x", "https://x.example/mcp"])
    assert result.exit_code != 0
    assert path.read_bytes() == before
    assert sorted(p.name for p in home.iterdir() if p.name.startswith(".mcp.json")) == []  # no temporary file left


def test_concurrent_adds_lose_nothing(home: Path, project: Path) -> None:
    script = "import sys; from maia.commands import main; main(['mcp', 'add', sys.argv[1], 'https://x.example/mcp'])"
    env = {**os.environ, "MAIA_HOME": str(home), "MAIA_CWD": str(project)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, f"s{i}"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for i in range(6)
    ]
    for process in processes:
        _out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    servers = json.loads((home / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert sorted(servers) == [f"s{i}" for i in range(6)]


def test_add_enables_the_server_and_remove_takes_its_rules_away(home: Path) -> None:
    """Issue 28: `maia mcp add` writes the Mcp(NAME) rule in the user's own settings (MAIA_HOME's, named as
    such), `maia mcp remove` takes back every rule naming the server; the other rules and keys stay."""
    import subprocess

    settings = home / "settings.json"
    settings.write_text(json.dumps({"LiteLLM_URL": "http://x", "permissions": {"allow": ["Read"], "deny": []}}))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "maia", "mcp", *args], capture_output=True, text=True, check=False, timeout=60
        )

    added = run("add", "docs", "https://docs.example/mcp")
    assert added.returncode == 0, added.stderr
    assert f"Enabled: Mcp(docs) is in the allow list of {settings}" in added.stdout
    assert "~/.maia" not in added.stdout
    data = json.loads(settings.read_text())
    assert data["permissions"]["allow"] == ["Read", "Mcp(docs)"] and data["LiteLLM_URL"] == "http://x"
    listed = run("list")
    assert "docs" in listed.stdout and "Mcp(docs)" in listed.stdout
    data["permissions"]["deny"] = ["Mcp(docs,delete_*)"]
    settings.write_text(json.dumps(data))
    removed = run("remove", "docs")
    assert removed.returncode == 0, removed.stderr
    assert "Removed its rules from" in removed.stdout
    assert json.loads(settings.read_text())["permissions"] == {"allow": ["Read"], "deny": []}
    assert "Mcp(docs)" not in run("list").stderr  # no warning about a rule for a server that is gone
