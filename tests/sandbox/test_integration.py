"""The sandbox through the Bash tool, custom tools and ``!``; the line the model reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maia.core.contracts import ToolContext
from maia.core.trust import trust_folder
from maia.inputs.shell import context_for, preview, run_bang
from maia.tools.base import ToolError
from maia.tools.bash import BashTool
from maia.tools.custom import load_custom_tools
from tests.sandbox.helpers import Areas, make_areas, needs_landlock

pytestmark = needs_landlock


@pytest.fixture
def areas(tmp_path: Path) -> Areas:
    return make_areas(tmp_path)


async def test_bash_tool_writes_inside_and_is_refused_outside_with_one_sandbox_line(areas: Areas) -> None:
    ctx = ToolContext(launch=areas.launch, sandbox=areas.policy())
    inside = await BashTool().execute({"command": "echo ok > made.txt && cat made.txt"}, ctx)
    assert inside == "ok\n[exit code: 0]"
    target = areas.outside / "nope.txt"
    out = await BashTool().execute({"command": f"echo x > {target}"}, ctx)
    lines = out.splitlines()
    assert "Permission denied" in lines[0]
    assert lines[1].startswith("MAIA sandbox: this command ran in a sandbox: writes are allowed only under ")
    assert str(areas.launch) in lines[1] and str(areas.temp) in lines[1] and "ask the user" in lines[1]
    assert lines[2] == "[exit code: 1]" and len(lines) == 3
    assert not target.exists()


async def test_no_sandbox_line_for_other_failures_or_without_sandbox(areas: Areas) -> None:
    ctx = ToolContext(launch=areas.launch, sandbox=areas.policy())
    assert await BashTool().execute({"command": "echo plain failure; exit 3"}, ctx) == "plain failure\n[exit code: 3]"
    free = ToolContext(launch=areas.launch)
    out = await BashTool().execute({"command": "echo x > /proc/version"}, free)  # denied without any sandbox
    assert "MAIA sandbox" not in out and out.endswith("[exit code: 1]")


async def test_bash_tool_reports_a_sandbox_that_cannot_be_applied(areas: Areas) -> None:
    ctx = ToolContext(launch=areas.launch, sandbox=areas.policy(extra_roots=(areas.outside / "missing",)))
    out = await BashTool().execute({"command": "touch marker"}, ctx)
    assert out.startswith("[the command could not be started: the sandbox could not be applied: ")
    assert 'set "Sandbox": "off" in ~/.maia/settings.json' in out
    assert not (areas.launch / "marker").exists()


async def test_custom_tool_runs_sandboxed_and_its_error_carries_the_line(areas: Areas) -> None:
    folder = areas.launch / ".maia" / "tools" / "writer"
    folder.mkdir(parents=True)
    (folder / "TOOL.json").write_text(
        json.dumps(
            {
                "description": "Write a file.",
                "command": {"parameters": [{"name": "path", "type": "string"}], "run": "python3 ./w.py {{path}}"},
            }
        )
    )
    (folder / "w.py").write_text("import sys\nopen(sys.argv[1], 'w').write('x')\nprint('wrote')\n")
    trust_folder(areas.launch, areas.launch / "home")  # a project's tools load in a folder the user trusted
    (tool,) = load_custom_tools(areas.launch, areas.launch / "home").tools
    ctx = ToolContext(launch=areas.launch, sandbox=areas.policy())
    assert (await tool.execute({"path": str(areas.launch / "ok.txt")}, ctx)).strip() == "wrote"
    with pytest.raises(ToolError) as info:
        await tool.execute({"path": str(areas.outside / "no.txt")}, ctx)
    message = str(info.value)
    assert message.startswith("[exit code: 1]") and "PermissionError" in message
    assert message.splitlines()[-1].startswith("MAIA sandbox: ")
    assert not (areas.outside / "no.txt").exists()


async def test_bang_runs_sandboxed_and_the_context_names_the_sandbox(areas: Areas) -> None:
    target = areas.outside / "bang.txt"
    result = await run_bang(f"echo x > {target}", areas.launch, sandbox=areas.policy())
    assert result.exit_code == 1 and not target.exists()
    entry = context_for(f"echo x > {target}", result)
    assert "Permission denied" in entry and "MAIA sandbox: " in entry and entry.endswith("[exit code: 1]")
    assert "MAIA sandbox: " in preview(result)
    free = await run_bang(f"echo x > {target}", areas.launch)
    assert free.exit_code == 0 and target.exists()
