"""The JSON schemas shipped in maia/data/schemas: valid, used for TOOL.json's checks with the "field and fix"
wording of settings.json, agreeing with the examples and the loaders, and accepted through "$schema"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from maia.core.frontmatter import read_front_matter
from maia.core.schemas import SCHEMAS, load_schema, schema_path, schema_problems
from maia.mcp.config import load_config
from maia.tools.custom import parse_definition

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", SCHEMAS)
def test_each_schema_is_a_valid_draft_2020_12_schema_at_its_installed_path(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(load_schema(name))
    assert json.loads(schema_path(name).read_text(encoding="utf-8")) == load_schema(name)


def test_the_examples_and_the_documented_declarations_follow_the_schemas() -> None:
    tool = json.loads((REPO / "examples" / "tools" / "addition" / "TOOL.json").read_text(encoding="utf-8"))
    assert schema_problems(tool, "tool", {}) == []
    agent = read_front_matter((REPO / "examples" / "agents" / "code_reviewer" / "AGENT.md").read_text(), "").header
    assert schema_problems(agent, "agent-header", {}) == []
    page = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", page, re.S) if '"mcpServers"' in b]
    assert blocks and all(schema_problems(b, "mcp", {}) == [] for b in blocks)


def test_a_tool_json_error_names_the_field_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "t" / "TOOL.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps({"description": "d", "command": {"run": "t", "parameters": [{"name": "x", "default": []}]}})
    )
    with pytest.raises(ValueError) as caught:
        parse_definition(path)
    assert (
        str(caught.value)
        == '"command.parameters[0].default" must be a string or a number, not a list; fix: a string or a number'
    )


def test_schema_keys_are_accepted_by_the_loaders(tmp_path: Path) -> None:
    path = tmp_path / "t" / "TOOL.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"$schema": str(schema_path("tool")), "description": "d", "command": {"run": "true"}}))
    assert parse_definition(path).name == "t"
    home, launch = tmp_path / "home", tmp_path / "launch"
    home.mkdir()
    launch.mkdir()
    (home / "mcp.json").write_text(
        json.dumps(
            {"$schema": str(schema_path("mcp")), "mcpServers": {"docs": {"url": "https://docs.example.com/mcp"}}}
        )
    )
    loaded = load_config(home, launch, env={})
    assert [s.name for s in loaded.servers] == ["docs"] and loaded.warnings == []


@pytest.mark.parametrize(
    "server",
    [{"type": "ftp", "url": "https://x"}, {"url": "https://x", "timeout": -1}, {"command": "npx", "args": "-y"}],
)
def test_what_the_mcp_loader_refuses_the_schema_refuses_too(tmp_path: Path, server: dict[str, object]) -> None:
    assert schema_problems({"mcpServers": {"s": server}}, "mcp", {}) != []
    home, launch = tmp_path / "home", tmp_path / "launch"
    home.mkdir()
    launch.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"s": server}}))
    assert load_config(home, launch, env={}).warnings != []
