"""Declarations in ~/.maia/mcp.json and ./.mcp.json: every problem is a warning naming file, key and fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from maia.mcp.config import DEFAULT_TIMEOUT, display_url, expand, key_problem, load_config
from tests.mcp.conftest import write_servers


def load(home: Path, project: Path, servers: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    write_servers(home / "mcp.json", servers)
    return load_config(home, project, env or {})


def only_warning(loaded: Any) -> str:
    assert len(loaded.warnings) == 1, loaded.warnings
    return str(loaded.warnings[0])


def test_the_specs_example_loads(home: Path, project: Path) -> None:
    loaded = load(
        home,
        project,
        {
            "github": {
                "type": "http",
                "url": "https://api.githubcopilot.com/mcp/",
                "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
                "excludeTools": ["delete_repository"],
            },
            "docs": {"url": "https://docs.example.com/mcp", "timeout": 60, "description": "our docs"},
        },
        {"GITHUB_TOKEN": "ghp_x"},
    )
    assert loaded.warnings == []
    github, docs = loaded.servers
    assert (github.name, github.transport, github.origin) == ("github", "http", "user")
    assert github.headers == {"Authorization": "Bearer ghp_x"} and github.exclude_tools == ("delete_repository",)
    assert github.timeout == DEFAULT_TIMEOUT and github.include_tools is None and github.enabled
    assert (docs.transport, docs.timeout, docs.description) == ("http", 60.0, "our docs")
    assert loaded.get("docs") is docs and loaded.get("nope") is None


def test_local_servers(home: Path, project: Path) -> None:
    loaded = load(
        home,
        project,
        {
            "files": {"command": "npx", "args": ["-y", "@scope/server", "${HOME}/x"], "env": {"KEY": "${K}"}},
            "tool": {"type": "stdio", "command": "./bin/server", "cwd": "sub"},
            "abs": {"command": "srv", "cwd": "/opt/srv"},
        },
        {"HOME": "/home/me", "K": "v"},
    )
    assert loaded.warnings == []
    files, tool, absolute = loaded.servers
    assert (files.transport, files.command, files.args, dict(files.env)) == (
        "stdio",
        "npx",
        ("-y", "@scope/server", "/home/me/x"),
        {"KEY": "v"},
    )
    assert files.cwd == project and tool.cwd == project / "sub" and absolute.cwd == Path("/opt/srv")
    assert files.target == "npx -y @scope/server /home/me/x"


def test_the_other_agents_shapes(home: Path, project: Path) -> None:
    (project / ".mcp.json").write_text(
        json.dumps({"servers": {"vs": {"type": "stdio", "command": "srv"}}}), encoding="utf-8"
    )
    write_servers(home / "mcp.json", {"cc": {"type": "streamable-http", "url": "http://localhost:1/mcp"}})
    loaded = load_config(home, project, {})
    assert [(s.name, s.transport, s.origin) for s in loaded.servers] == [
        ("cc", "http", "user"),
        ("vs", "stdio", "project"),
    ]


def test_the_users_declaration_wins_over_the_projects(home: Path, project: Path) -> None:
    write_servers(home / "mcp.json", {"db": {"url": "https://db.example/mcp"}})
    write_servers(project / ".mcp.json", {"db": {"command": "evil"}, "other": {"command": "x"}})
    loaded = load_config(home, project, {})
    assert [(s.name, s.origin, s.transport) for s in loaded.servers] == [
        ("db", "user", "http"),
        ("other", "project", "stdio"),
    ]
    warning = only_warning(loaded)
    assert str(project / ".mcp.json") in warning and "mcpServers.db" in warning and "user's declaration" in warning


@pytest.mark.parametrize(
    ("key", "needle"),
    [
        ("a b", "letters, digits, _ and -"),
        ("git__hub", "cannot contain __"),
        ("hub_", "cannot end with _"),
        ("x" * 41, "at most 40 characters"),
    ],
)
def test_bad_keys(home: Path, project: Path, key: str, needle: str) -> None:
    loaded = load(home, project, {key: {"url": "https://x.example/mcp"}, "fine": {"url": "https://y.example/mcp"}})
    warning = only_warning(loaded)
    assert needle in warning and f"mcpServers.{key}" in warning and "rename the key" in warning
    assert warning.endswith("server ignored.") and str(home / "mcp.json") in warning
    assert [s.name for s in loaded.servers] == ["fine"]


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ("just a string", '"mcpServers.bad" must be an object, not a string ("just a string"); fix: an object such as'),
        ({}, '"url" is required'),
        ({"url": "ftp://x.example/mcp"}, "must start with http:// or https://"),
        ({"url": "https://"}, "must start with http:// or https://"),
        ({"type": "websocket", "url": "https://x.example"}, 'not "websocket"; fix: "http", "sse" or "stdio"'),
        ({"type": "http", "command": "srv"}, 'write "type": "stdio"'),
        ({"type": "stdio"}, '"command" is required'),
        (
            {"command": "srv", "args": "--flag"},
            '"mcpServers.bad.args" must be a list, not a string ("--flag"); fix: a list',
        ),
        ({"command": "srv", "cwd": ""}, '"cwd" must be a folder path'),
    ],
)
def test_bad_entries_are_ignored_and_the_others_load(home: Path, project: Path, entry: Any, needle: str) -> None:
    loaded = load(home, project, {"bad": entry, "good": {"url": "https://ok.example/mcp"}})
    warning = only_warning(loaded)
    assert needle in warning and "mcpServers.bad" in warning and warning.endswith("server ignored.")
    assert [s.name for s in loaded.servers] == ["good"]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"timeout": 0}, '"mcpServers.s.timeout" must be above 0, not 0; fix: a number of seconds'),
        ({"timeout": "30"}, '"mcpServers.s.timeout" must be a number, not a string ("30"); fix: a number of seconds'),
        ({"timeout": True}, '"mcpServers.s.timeout" must be a number, not true/false; fix: a number of seconds'),
        ({"includeTools": "read_*"}, '"mcpServers.s.includeTools" must be a list, not a string ("read_*"); fix:'),
        ({"excludeTools": [1]}, '"mcpServers.s.excludeTools[0]" must be a string, not a whole number (1); fix:'),
        ({"enabled": "no"}, '"mcpServers.s.enabled" must be true or false, not a string ("no"); fix: true or false'),
        ({"description": 5}, '"mcpServers.s.description" must be a string, not a whole number'),
        ({"headers": ["Authorization: x"]}, '"mcpServers.s.headers" must be an object, not a list; fix: an object'),
        ({"headers": {"Bad Name": "x"}}, 'header "Bad Name" ignored'),
        ({"headers": {"X-A": "a\r\nX-Injected: 1"}}, "holds a line break"),
        ({"command": "srv"}, '"command" is only used by local servers'),
        ({"autoApprove": ["x"]}, '"mcpServers.s.autoApprove" is not a known field; fix: remove it, or use one of'),
    ],
)
def test_bad_fields_warn_and_the_server_still_loads(
    home: Path, project: Path, extra: dict[str, Any], needle: str
) -> None:
    loaded = load(home, project, {"s": {"url": "https://ok.example/mcp", **extra}})
    warning = only_warning(loaded)
    assert needle in warning and "mcpServers.s" in warning
    assert [s.name for s in loaded.servers] == ["s"]
    server = loaded.servers[0]
    assert server.timeout == DEFAULT_TIMEOUT and "X-A" not in server.headers and "Bad Name" not in server.headers


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"env": ["A=1"]}, '"mcpServers.s.env" must be an object, not a list; fix: an object of NAME'),
        ({"env": {"1BAD": "x"}}, 'env "1BAD" ignored'),
        ({"type": "stdio", "url": "https://x"}, '"url" and "headers" are only used by remote servers'),
    ],
)
def test_bad_local_fields_warn(home: Path, project: Path, extra: dict[str, Any], needle: str) -> None:
    loaded = load(home, project, {"s": {"command": "srv", **extra}})
    assert needle in only_warning(loaded) and loaded.servers[0].transport == "stdio"


def test_a_missing_variable_warns_and_becomes_empty(home: Path, project: Path) -> None:
    loaded = load(
        home,
        project,
        {"s": {"url": "https://x.example/${PATH_PART}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}},
        {"PATH_PART": "v1"},
    )
    warning = only_warning(loaded)
    assert "TOKEN is not set" in warning and "mcpServers.s" in warning and "${TOKEN:-default}" in warning
    server = loaded.servers[0]
    assert server.url == "https://x.example/v1/mcp" and server.headers == {"Authorization": "Bearer "}


def test_expansion() -> None:
    missing: set[str] = set()
    assert expand("${A}-${B:-dflt}-${C}-$D-${}", {"A": "a"}, missing) == "a-dflt--$D-${}"
    assert missing == {"C"}


def test_enabled_false_and_disabled_true_are_kept_but_off(home: Path, project: Path) -> None:
    loaded = load(
        home,
        project,
        {"a": {"url": "https://a.example", "enabled": False}, "b": {"url": "https://b.example", "disabled": True}},
    )
    assert loaded.warnings == [] and [s.enabled for s in loaded.servers] == [False, False]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{not json", "invalid JSON at line 1, column 2"),
        ("[1, 2]", '"(top level)" must be an object, not a list; fix: {"mcpServers": {"name"'),
        ('{"github": {"url": "https://x"}}', 'no "mcpServers" object'),
        ('{"mcpServers": []}', '"mcpServers" must be an object'),
    ],
)
def test_broken_files(home: Path, project: Path, text: str, needle: str) -> None:
    (home / "mcp.json").write_text(text, encoding="utf-8")
    write_servers(project / ".mcp.json", {"p": {"command": "srv"}})
    loaded = load_config(home, project, {})
    warning = only_warning(loaded)
    assert needle in warning and str(home / "mcp.json") in warning
    assert [s.name for s in loaded.servers] == ["p"]  # the other file still loads


def test_empty_or_absent_files_are_fine(home: Path, project: Path) -> None:
    (home / "mcp.json").write_text("", encoding="utf-8")
    (project / ".mcp.json").write_text("{}", encoding="utf-8")
    assert load_config(home, project, {}).warnings == []
    (home / "mcp.json").unlink()
    loaded = load_config(home, project, {})
    assert loaded.servers == [] and loaded.warnings == []


def test_key_rules_and_display() -> None:
    assert key_problem("github-2_x") is None and key_problem("") is not None
    assert display_url("https://user:pw@host.example:8443/mcp?token=abc#frag") == "https://host.example:8443/mcp"
    assert display_url("http://[::1]:9/sse") == "http://[::1]:9/sse"
