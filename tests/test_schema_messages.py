"""Malformed mcp.json and AGENT.md headers, field by field and type by type: each problem is found by the
shipped schema and its message names the file, the field and the fix; the other servers and agents load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from maia.core.schemas import load_schema, schema_path
from maia.mcp import config as mcp_config
from maia.mcp.config import load_config
from maia.subagents import definitions
from maia.subagents.definitions import load_agents
from tests.subagents.conftest import BODY, agent_md

# One value of each JSON type (YAML writes them the same way in a header).
VALUES: dict[str, Any] = {
    "string": "text",
    "whole number": 5,
    "number": 2.5,
    "true/false": True,
    "null": None,
    "list": [],
    "object": {},
}
SERVER = load_schema("mcp")["$defs"]["server"]["properties"]
HEADER = {k: v for k, v in load_schema("agent-header")["properties"].items() if k != "$schema"}


def _accepts(schema: dict[str, Any], value: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def _wrong(properties: dict[str, Any], skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(field, type name) for every type a field refuses."""
    return [
        (field, kind)
        for field, schema in properties.items()
        for kind, value in VALUES.items()
        if kind not in skip and not _accepts(schema, value)
    ]


def _items(properties: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, type name) for every type an item of a list or object field refuses."""
    cases = []
    for field, schema in properties.items():
        inner = schema.get("items") or schema.get("additionalProperties")
        if isinstance(inner, dict):
            cases += [(field, kind) for kind, value in VALUES.items() if not _accepts(inner, value)]
    return cases


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, launch = tmp_path / "home", tmp_path / "launch"
    home.mkdir()
    launch.mkdir()
    return home, launch


def _base(field: str) -> dict[str, Any]:
    local = field in ("command", "args", "env", "cwd", "sandbox")
    return {"command": "srv"} if local else {"url": "https://x.example/mcp"}


def _mcp_warning(dirs: tuple[Path, Path], entry: dict[str, Any]) -> tuple[str, list[str]]:
    home, launch = dirs
    path = home / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"s": entry, "fine": {"url": "https://ok.example/mcp"}}}))
    loaded = load_config(home, launch, env={})
    assert "fine" in [s.name for s in loaded.servers]  # a bad entry never stops the others
    assert len(loaded.warnings) == 1, loaded.warnings
    return loaded.warnings[0], [s.name for s in loaded.servers]


@pytest.mark.parametrize(("field", "kind"), _wrong(SERVER))
def test_each_mcp_field_of_a_wrong_type_names_the_file_the_field_and_the_fix(
    dirs: tuple[Path, Path], field: str, kind: str
) -> None:
    warning, names = _mcp_warning(dirs, {**_base(field), field: VALUES[kind]})
    fix = mcp_config._fixes()[field]
    assert warning.startswith(f'{dirs[0] / "mcp.json"}: "mcpServers.s.{field}" must be ')
    assert f"; fix: {fix};" in warning
    if field in ("type", "url", "command", "args", "cwd"):
        assert warning.endswith("; server ignored.") and "s" not in names
    else:
        assert warning.endswith(("; ignored.", "; the default 30 s is used.")) and "s" in names


@pytest.mark.parametrize(("field", "kind"), _items(SERVER))
def test_each_mcp_item_of_a_wrong_type_names_the_file_the_item_and_the_fix(
    dirs: tuple[Path, Path], field: str, kind: str
) -> None:
    value: Any = [VALUES[kind]] if SERVER[field]["type"] == "array" else {"K": VALUES[kind]}
    warning, _names = _mcp_warning(dirs, {**_base(field), field: value})
    item = "[0]" if isinstance(value, list) else ".K"
    assert f'{dirs[0] / "mcp.json"}: "mcpServers.s.{field}{item}" must be ' in warning
    assert f"; fix: {mcp_config._fixes()[field]};" in warning


def test_an_mcp_unknown_field_and_a_bad_type_value_name_the_fix(dirs: tuple[Path, Path]) -> None:
    warning, names = _mcp_warning(dirs, {"url": "https://x.example/mcp", "urls": "x"})
    assert warning == (
        f'{dirs[0] / "mcp.json"}: "mcpServers.s.urls" is not a known field; fix: rename it "url", or remove it; '
        "ignored."
    )
    assert "s" in names
    warning, names = _mcp_warning(dirs, {"url": "https://x.example/mcp", "type": "websocket"})
    assert warning == (
        f'{dirs[0] / "mcp.json"}: "mcpServers.s.type" must be one of "http", "streamable-http", "streamablehttp", '
        '"sse", "stdio", not "websocket"; fix: "http", "sse" or "stdio"; server ignored.'
    )
    warning, names = _mcp_warning(dirs, {"url": "https://x.example/mcp", "timeout": 7200})
    assert warning == (
        f'{dirs[0] / "mcp.json"}: "mcpServers.s.timeout" must be at most 3600, not 7200; fix: a number of seconds '
        "above 0, at most 3600; the default 30 s is used."
    )


def test_mcp_spellings_accepted_before_the_schema_still_are(dirs: tuple[Path, Path]) -> None:
    home, launch = dirs
    (home / "mcp.json").write_text(
        json.dumps(
            {
                "$schema": str(schema_path("mcp")),
                "mcpServers": {
                    "a": {"type": " HTTP ", "url": "https://a.example/mcp", "headers": {"X-Port": 8080}},
                    "b": {"command": "srv", "args": ["--port", 8080], "env": {"N": 1}, "sandbox": True},
                },
            }
        )
    )
    loaded = load_config(home, launch, env={})
    assert loaded.warnings == []
    a, b = loaded.servers
    assert a.transport == "http" and a.headers == {"X-Port": "8080"}
    assert b.args == ("--port", "8080") and b.env == {"N": "1"}


# --- the AGENT.md header -----------------------------------------------------------------------

YAML = {"string": "text", "whole number": "5", "number": "2.5", "true/false": "true", "list": "[]", "object": "{}"}


def _agent(project: Path, header: str) -> tuple[Path, Any]:
    folder = project / ".maia" / "agents" / "rev"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "AGENT.md"
    path.write_text(agent_md("rev", header))
    good = project / ".maia" / "agents" / "good"
    good.mkdir(exist_ok=True)
    (good / "AGENT.md").write_text(agent_md("good"))
    return path, load_agents(project.parent / "home", project)


# "null" is an empty value (key: with nothing after it): as if the key were absent, as always.
@pytest.mark.parametrize(("field", "kind"), _wrong(HEADER, skip=("null",)))
def test_each_header_key_of_a_wrong_type_names_the_file_the_key_and_the_fix(
    dirs: tuple[Path, Path], field: str, kind: str
) -> None:
    _home, project = dirs
    if field in ("omitMd", "trace") and kind in ("whole number", "true/false"):
        pytest.skip("0/1 and yes/no have always been read as flags")
    if kind == "string" and field in ("name", "description", "effort"):
        pytest.skip("a string of the wrong form: the tests below")
    value = YAML[kind]
    if field == "description":
        text = f"---\nname: rev\ndescription: {value}\n---\n" + BODY
        (project / ".maia" / "agents" / "rev").mkdir(parents=True)
        path = project / ".maia" / "agents" / "rev" / "AGENT.md"
        path.write_text(text)
        loaded = load_agents(project.parent / "home", project)
    elif field == "name":
        (project / ".maia" / "agents" / "rev").mkdir(parents=True)
        path = project / ".maia" / "agents" / "rev" / "AGENT.md"
        path.write_text(f"---\nname: {value}\ndescription: d\n---\n" + BODY)
        loaded = load_agents(project.parent / "home", project)
    else:
        path, loaded = _agent(project, f"{field}: {value}")
    fix = definitions._header_fixes("rev")[field]
    [warning] = loaded.warnings
    assert warning.startswith(f'{path}: "{field}" must be ') and f"; fix: {fix}" in warning
    if field in ("effort", "omitMd", "trace"):
        assert warning.endswith((" medium is used.", " false is used.")) and "rev" in loaded.agents
    else:
        assert warning.endswith("; agent ignored.") and "rev" not in loaded.agents


@pytest.mark.parametrize("field", ["tools", "skills"])
@pytest.mark.parametrize("kind", ["true/false", "list", "object"])
def test_each_list_item_of_a_wrong_type_names_the_item(dirs: tuple[Path, Path], field: str, kind: str) -> None:
    path, loaded = _agent(dirs[1], f"{field}: [Read, {YAML[kind] if kind != 'object' else '{a: b}'}]")
    [warning] = loaded.warnings
    assert warning.startswith(f'{path}: "{field}[1]" must be a string or a number, not ')
    assert f"; fix: {definitions._header_fixes('rev')[field]}; agent ignored." in warning


@pytest.mark.parametrize("family", ["allow", "ask", "deny"])
def test_a_permission_list_of_a_wrong_type_names_the_family(dirs: tuple[Path, Path], family: str) -> None:
    path, loaded = _agent(dirs[1], f"permissions:\n  {family}: {{a: b}}")
    assert loaded.warnings == [
        f'{path}: "permissions.{family}" must be a string or a list, not an object; fix: a list of rules, e.g. '
        "[Read, Grep]; agent ignored."
    ]


def test_header_strings_of_the_wrong_form(dirs: tuple[Path, Path]) -> None:
    path, loaded = _agent(dirs[1], "effort: huge")
    assert loaded.warnings == [
        f'{path}: "effort" must be one of "low", "medium", "high", not "huge"; fix: low, medium or high; '
        "medium is used."
    ]
    folder = dirs[1] / ".maia" / "agents" / "rev"
    (folder / "AGENT.md").write_text("---\nname: rev\ndescription: ' '\n---\n" + BODY)
    loaded = load_agents(dirs[0], dirs[1])
    assert loaded.warnings == [
        f'{folder / "AGENT.md"}: "description" is empty; fix: say what the agent does and when to use it, e.g. '
        "description: Reviews code for security problems; agent ignored."
    ]


def test_header_spellings_accepted_before_the_schema_still_are(dirs: tuple[Path, Path]) -> None:
    _path, loaded = _agent(
        dirs[1],
        f"$schema: {schema_path('agent-header')}\nmodel: 4\nEffort: High\nomitMd: yes\ntrace: 0\n"
        "permissions:\n  Deny: [Read]\n  deny: Grep",
    )
    assert loaded.warnings == []
    agent = loaded.agents["rev"]
    assert agent.model == "4" and agent.effort == "high" and agent.omit_md and not agent.trace
    assert agent.permissions == {"deny": ("Read", "Grep")}


def test_an_empty_value_is_an_absent_key(dirs: tuple[Path, Path]) -> None:
    _path, loaded = _agent(dirs[1], "model:\ntools:\neffort:\ntrace:\npermissions:")
    assert loaded.warnings == [] and loaded.agents["rev"].model is None and loaded.agents["rev"].tools is None
