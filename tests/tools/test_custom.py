"""Custom tools (§10): every validation rule, and execution without a shell on real scripts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from maia.core.contracts import ToolContext
from maia.core.trust import trust_folder
from maia.tools.base import ToolError
from maia.tools.custom import CustomTool, LoadedCustomTools, strip_trailing_commas
from maia.tools.custom import load_custom_tools as load_tools

REPO = Path(__file__).resolve().parents[2]
ECHO_ARGS = (
    "import json, os, sys; print(json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd(), "
    "'maia_cwd': os.environ.get('MAIA_CWD'), 'tool_dir': os.environ.get('MAIA_TOOL_DIR')}))"
)


def load_custom_tools(launch: Path, home: Path) -> LoadedCustomTools:
    """The tools of a project the user trusted (a project's tools load only then: issue 25)."""
    trust_folder(launch, home)
    return load_tools(launch, home)


def make_tool(base: Path, folder: str, definition: object, file_name: str = "TOOL.json") -> Path:
    path = base / folder / file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(definition if isinstance(definition, str) else json.dumps(definition), encoding="utf-8")
    return path


def echo_definition(
    name: str = "Echo", params: list[dict[str, object]] | None = None, run: str | None = None
) -> dict[str, object]:
    return {
        "name": name,
        "description": "Echo its arguments as JSON.",
        "command": {
            "parameters": params if params is not None else [{"name": "text", "type": "string"}],
            "run": run or "python3 ./echo.py {{text}}",
        },
    }


def with_script(path: Path) -> Path:
    (path.parent / "echo.py").write_text(ECHO_ARGS)
    return path


INVALID: list[tuple[str, object, str]] = [
    ("no-description", {"command": {"run": "true"}}, '"description" is required'),
    (
        "bad-name",
        {"name": "has space", "description": "d", "command": {"run": "true"}},
        '"name" is invalid; fix: 1 to 64',
    ),
    ("builtin", {"name": "Bash", "description": "d", "command": {"run": "true"}}, "name of a built-in tool"),
    ("skill-name", {"name": "Skill", "description": "d", "command": {"run": "true"}}, "name of a built-in tool"),
    ("no-command", {"description": "d"}, '"command" is required; add it: an object with "run"'),
    (
        "no-run",
        {"description": "d", "command": {"parameters": []}},
        '"command.run" is required; add it: the command line',
    ),
    (
        "bad-type",
        {"description": "d", "command": {"parameters": [{"name": "x", "type": "bool"}], "run": "t {{x}}"}},
        '"command.parameters[0].type" must be one of "string", "number", not "bool"',
    ),
    (
        "bad-param",
        {"description": "d", "command": {"parameters": [{"name": "1x"}], "run": "t"}},
        '"command.parameters[0].name" is invalid; fix: an identifier',
    ),
    (
        "dup-param",
        {"description": "d", "command": {"parameters": [{"name": "x"}, {"name": "x"}], "run": "t {{x}}"}},
        'parameter "x" is declared twice',
    ),
    (
        "undeclared",
        {"description": "d", "command": {"parameters": [], "run": "t {{x}}"}},
        "uses {{x}}, which is not a declared parameter",
    ),
    (
        "program-param",
        {"description": "d", "command": {"parameters": [{"name": "p"}], "run": "{{p}} arg"}},
        "cannot be a {{parameter}}",
    ),
    ("unbalanced", {"description": "d", "command": {"run": "python3 'oops"}}, "cannot be split into words"),
    (
        "params-not-list",
        {"description": "d", "command": {"parameters": {"x": 1}, "run": "t"}},
        '"command.parameters" must be a list',
    ),
    ("broken-json", '{"description": "d",\n  "command": {"run" "x"}}', "invalid JSON at line 2, column 21"),
    ("not-object", "[1, 2]", "must hold a JSON object"),
]


def test_each_invalid_definition_warns_and_the_others_load(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    tools = project / ".maia" / "tools"
    for folder, definition, _message in INVALID:
        make_tool(tools, folder, definition)
    with_script(make_tool(tools, "zz-good", echo_definition()))
    loaded = load_custom_tools(project, home)
    assert [t.spec.name for t in loaded.tools] == ["Echo"]
    assert len(loaded.warnings) == len(INVALID)
    for (folder, _definition, message), warning in zip(sorted(INVALID), loaded.warnings, strict=True):
        assert warning.startswith(str(tools / folder / "TOOL.json") + ": ")
        assert message in warning and warning.endswith("; tool ignored.")


def test_trailing_commas_lowercase_file_and_default_name(tmp_path: Path) -> None:
    text = (
        '{"description": "d", "command": {"parameters": [{"name": "a", "type": "number", "default": 1,},],\n'
        '"run": "python3 ./echo.py {{a}}",},}'
    )
    with_script(make_tool(tmp_path / ".maia" / "tools", "my_tool", text, "tool.json"))
    loaded = load_custom_tools(tmp_path, tmp_path / "home")
    assert loaded.warnings == []
    (tool,) = loaded.tools
    assert tool.spec.name == "my_tool"
    assert tool.spec.input_schema == {
        "type": "object",
        "properties": {"a": {"type": "number", "description": "(default 1)"}},
        "additionalProperties": False,  # an undeclared parameter is refused
    }


def test_strip_trailing_commas_keeps_commas_in_strings() -> None:
    assert json.loads(strip_trailing_commas('{"a": "x,]", "b": [1, 2, ], }')) == {"a": "x,]", "b": [1, 2]}


def test_project_wins_over_user_and_duplicates_warn(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    with_script(make_tool(project / ".maia" / "tools", "a", echo_definition("Same")))
    make_tool(project / ".maia" / "tools", "b", echo_definition("Same"))
    make_tool(home / "tools", "c", {**echo_definition("Same"), "description": "user version"})
    with_script(make_tool(home / "tools", "d", echo_definition("UserOnly")))
    loaded = load_custom_tools(project, home)
    assert [(t.spec.name, t.definition.folder.is_relative_to(project)) for t in loaded.tools] == [
        ("Same", True),
        ("UserOnly", False),
    ]
    assert loaded.warnings == [
        f'{project / ".maia/tools/b/TOOL.json"}: a tool named "Same" is already defined; ignored.'
    ]


async def test_values_are_single_arguments_never_shell_code(tmp_path: Path) -> None:
    path = with_script(
        make_tool(
            tmp_path / ".maia" / "tools",
            "echo",
            echo_definition(
                params=[{"name": "text", "type": "string"}, {"name": "n", "type": "number", "default": "3"}],
                run="python3 ./echo.py --label 'a b' {{text}} --n={{n}}",
            ),
        )
    )
    (tool,) = load_custom_tools(tmp_path, tmp_path / "h").tools
    assert tool.permission == "ask"
    out = await tool.execute({"text": "; rm -rf / $(id) `id` | cat > x"}, ToolContext(launch=tmp_path))
    data = json.loads(out)
    assert data["argv"] == ["--label", "a b", "; rm -rf / $(id) `id` | cat > x", "--n=3"]
    assert data["cwd"] == str(path.parent)
    assert data["maia_cwd"] == str(tmp_path) and data["tool_dir"] == str(path.parent)
    assert not (path.parent / "x").exists()
    numbers = json.loads(await tool.execute({"text": "t", "n": 2.0}, ToolContext(launch=tmp_path)))
    assert numbers["argv"][-1] == "--n=2"


async def test_required_parameter_missing(tmp_path: Path) -> None:
    with_script(make_tool(tmp_path / ".maia" / "tools", "echo", echo_definition()))
    (tool,) = load_custom_tools(tmp_path, tmp_path / "h").tools
    with pytest.raises(ToolError, match='Parameter "text" is required'):
        await tool.execute({}, ToolContext(launch=tmp_path))
    assert tool.spec.input_schema["required"] == ["text"]


async def test_non_zero_exit_is_an_error_with_stderr(tmp_path: Path) -> None:
    path = make_tool(
        tmp_path / ".maia" / "tools", "fail", {"description": "fails", "command": {"run": "python3 ./fail.py"}}
    )
    (path.parent / "fail.py").write_text(
        "import sys\nprint('partial out')\nprint('it broke', file=sys.stderr)\nsys.exit(3)\n"
    )
    (tool,) = load_custom_tools(tmp_path, tmp_path / "h").tools
    with pytest.raises(ToolError) as info:
        await tool.execute({}, ToolContext(launch=tmp_path))
    assert str(info.value) == "[exit code: 3]\nit broke"


async def test_program_not_found(tmp_path: Path) -> None:
    make_tool(tmp_path / ".maia" / "tools", "ghost", {"description": "d", "command": {"run": "./missing-program"}})
    (tool,) = load_custom_tools(tmp_path, tmp_path / "h").tools
    with pytest.raises(ToolError, match="the program could not be started"):
        await tool.execute({}, ToolContext(launch=tmp_path))


async def test_output_is_cut_at_30000_characters(tmp_path: Path) -> None:
    path = make_tool(tmp_path / ".maia" / "tools", "big", {"description": "d", "command": {"run": "python3 ./big.py"}})
    (path.parent / "big.py").write_text("print('h' * 20000 + 'm' * 20000 + 't' * 20000)\n")
    (tool,) = load_custom_tools(tmp_path, tmp_path / "h").tools
    out = await tool.execute({}, ToolContext(launch=tmp_path))
    assert len(out) <= 30_000 and out.startswith("hhh") and out.rstrip().endswith("ttt")


async def test_the_addition_example(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples" / "tools" / "addition", tmp_path / ".maia" / "tools" / "addition")
    loaded = load_custom_tools(tmp_path, tmp_path / "h")
    assert loaded.warnings == []
    (tool,) = loaded.tools
    assert isinstance(tool, CustomTool) and tool.spec.name == "Addition"
    assert await tool.execute({"param1": 2, "param2": 3.5}, ToolContext(launch=tmp_path)) == "5.5\n"
    assert await tool.execute({}, ToolContext(launch=tmp_path)) == "0\n"


def _addition(tmp_path: Path) -> CustomTool:
    params = [
        {"name": "param1", "type": "number", "default": "0"},
        {"name": "param2", "type": "number", "default": 7},
    ]
    with_script(
        make_tool(tmp_path / ".maia" / "tools", "addition", echo_definition("Addition", params, "t {{param1}}"))
    )
    (tool,) = load_custom_tools(tmp_path, tmp_path / "home").tools
    return tool


def test_rules_match_declared_parameters_with_defaults_applied(tmp_path: Path) -> None:
    from maia.permissions import explain

    tool = _addition(tmp_path)
    rules = {"allow": ["Addition(7)"]}
    # param2 is not sent: its default (7) is what runs, and what the rule sees
    assert explain("Addition", {"param1": 5}, rules, tmp_path, tool=tool).verdict == "allow"
    assert explain("Addition", {"param1": 5, "param2": 3}, rules, tmp_path, tool=tool).verdict == "ask"
    assert explain("Addition", {"param1": 5}, {"deny": ["Addition(0)"]}, tmp_path, tool=tool).verdict == "ask"
    assert explain("Addition", {}, {"deny": ["Addition(0)"]}, tmp_path, tool=tool).verdict == "deny"


def test_undeclared_parameters_are_refused(tmp_path: Path) -> None:
    from maia.agent.runner import validate_input
    from maia.permissions import explain

    tool = _addition(tmp_path)
    sneaky = {"param1": 5, "extra": "7"}  # an extra value must not satisfy Addition(7)
    decision = explain("Addition", sneaky, {"allow": ["Addition(7)"]}, tmp_path, tool=tool)
    assert decision.verdict == "deny"
    assert decision.reason == "Addition has no parameter extra: the call is refused"
    error = validate_input(tool, sneaky)
    assert error is not None and "extra" in error


def test_an_untrusted_projects_tools_do_not_load(tmp_path: Path) -> None:
    make_tool(tmp_path / ".maia" / "tools", "echo", echo_definition())
    assert load_tools(tmp_path, tmp_path / "home").tools == []
    assert [t.spec.name for t in load_custom_tools(tmp_path, tmp_path / "home").tools] == ["Echo"]
