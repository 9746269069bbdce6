"""Creating agents from the template, and ``maia agents list/show/create``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from maia.commands import cli
from maia.core.errors import UsageError
from maia.subagents.create import apply_agent_name, create_agent, template_text, validate_agent_name
from maia.subagents.definitions import parse_agent


def test_create_writes_a_valid_agent_with_its_name(tmp_path: Path) -> None:
    path = create_agent(tmp_path / "agents", "reviewer")
    assert path == tmp_path / "agents" / "reviewer" / "AGENT.md"
    text = path.read_text()
    assert text.count("name: reviewer") == 1 and "name: my_agent" not in text
    assert text.replace("name: reviewer", "name: my_agent") == template_text()  # only that line changed
    parsed = parse_agent(path)
    assert parsed.warnings == [] and parsed.definition.name == "reviewer"
    assert [p.name for p in path.parent.iterdir()] == ["AGENT.md"]  # no temporary file left


@pytest.mark.parametrize("name", ["1.50", "yes", "null", "0x1F", "true"])
def test_names_yaml_would_read_otherwise_are_quoted(name: str, tmp_path: Path) -> None:
    path = create_agent(tmp_path, name)
    assert f'name: "{name}"' in path.read_text()
    assert parse_agent(path).definition.name == name


def test_create_never_overwrites(tmp_path: Path) -> None:
    path = create_agent(tmp_path, "rev")
    path.write_text("my own work")
    with pytest.raises(UsageError, match="already exists"):
        create_agent(tmp_path, "rev")
    assert path.read_text() == "my own work"
    (tmp_path / "lower").mkdir()
    (tmp_path / "lower" / "agent.md").write_text("mine too")
    with pytest.raises(UsageError, match="already exists"):
        create_agent(tmp_path, "lower")
    assert not (tmp_path / "lower" / "AGENT.md").exists()


def test_an_existing_empty_folder_is_used(tmp_path: Path) -> None:
    (tmp_path / "rev").mkdir()
    (tmp_path / "rev" / "notes.txt").write_text("kept")
    create_agent(tmp_path, "rev")
    assert sorted(p.name for p in (tmp_path / "rev").iterdir()) == ["AGENT.md", "notes.txt"]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "cannot be empty"),
        ("   ", "cannot be empty"),
        (".hidden", "cannot start with a dot"),
        ("a b", "letters, digits, _ . and - only"),
        ("a/b", "letters, digits, _ . and - only"),
        ("../up", "letters, digits, _ . and - only"),
        ("é", "letters, digits, _ . and - only"),
        ("x" * 65, "at most 64 characters (65 given)"),
    ],
)
def test_bad_names(name: str, problem: str, tmp_path: Path) -> None:
    folder = tmp_path / "agents"
    with pytest.raises(UsageError, match=re.escape(problem)):
        create_agent(folder, name)
    assert not folder.exists()


def test_good_names() -> None:
    assert validate_agent_name(" a.b-c_1 ") == "a.b-c_1"
    assert validate_agent_name("x" * 64) == "x" * 64


def test_apply_agent_name_touches_only_the_header() -> None:
    text = "---\n# name: in a comment\nName: old  # trailing\ndescription: d\n---\nname: in the body\n"
    assert (
        apply_agent_name(text, "new")
        == "---\n# name: in a comment\nname: new\ndescription: d\n---\nname: in the body\n"
    )


# --- the command -----------------------------------------------------------------------------


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["agents", *args])
    return result.exit_code, result.stdout, result.stderr


def test_cli_create_project_and_global(home: Path, project: Path) -> None:
    code, out, _err = run("create", "rev")
    assert code == 0 and f"Created {project / '.maia' / 'agents' / 'rev' / 'AGENT.md'}" in out
    code, out, _err = run("create", "mine", "--global")
    assert code == 0 and (home / "agents" / "mine" / "AGENT.md").is_file()
    code, _out, err = run("create", "rev")
    assert code == 2 and "Error: The agent 'rev' already exists" in err
    code, _out, err = run("create", ".x")
    assert code == 2 and "Error: Invalid agent name: an agent name cannot start with a dot." in err


def test_cli_list(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    assert run("list")[1] == "No sub-agent. Create one with `maia agents create NAME`.\n"
    make_agent("rev")
    make_agent("mine", description="Mine.", base=home / "agents")
    broken = make_agent("broken", text="nothing")
    code, out, err = run("list")
    assert code == 0
    assert out == "mine (user): Mine.\nrev (project): Reviews things.\n"
    assert err.startswith(f"Warning: {broken}: no YAML header")


def test_cli_list_json(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    make_agent("rev", "tools: Read\ntrace: true")
    make_agent("broken", text="nothing")
    code, out, err = run("list", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert [a["name"] for a in data["agents"]] == ["rev"]
    rev = data["agents"][0]
    assert rev["tools"] == ["Read"] and rev["trace"] is True and rev["scope"] == "project"
    assert rev["effort"] == "medium" and rev["output"] == "One short paragraph."
    assert len(data["warnings"]) == 1 and "no YAML header" in data["warnings"][0]


def test_cli_show(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    path = make_agent("rev", "effort: low\npermissions:\n  deny: [Bash]", body="# Constraints\nNone.\n" + "\n# x\n")
    make_agent("good")
    code, _out, err = run("show", "rev")
    assert code == 2 and f"does not load: {path}: missing section(s): Instructions system, Missions, Output" in err
    path.write_text(path.read_text().replace("# x\n", "") + "\n# Instructions system\ni\n# Missions\nm\n# Output\no\n")
    code, out, _err = run("show", "REV")
    assert code == 0
    assert out.startswith("rev\n  File ") and str(path) in out
    assert "low (at most 10 steps)" in out and "Rules (deny)" in out and "Bash" in out
    assert "# Constraints\nNone." in out and out.endswith("# Output\no\n")
    code, _out, err = run("show", "nobody")
    assert code == 2 and "No sub-agent named 'nobody'. Sub-agents: good, rev." in err


def test_agents_is_listed_and_help_stays_light() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert "agents  " in result.output and "List, show and create sub-agents" in result.output
    assert "--subagent" not in result.output
