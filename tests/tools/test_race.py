"""A path judged by the rules and then turned into a link by a command before the tool uses it (a race, from
the security review): Read, Write and Edit judge the file they actually opened, so a swapped-in link to
another folder is refused unless a person approved the call, and a denied file is refused always."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from maia.core.contracts import CALL_ASKED, ToolContext
from maia.permissions.engine import explain
from maia.tools.base import ToolError
from maia.tools.edit import EditTool
from maia.tools.read import ReadTool
from maia.tools.write import WriteTool

RULES: dict[str, list[str]] = {"allow": ["Read(**)", "Write(**)", "Edit(**)"], "deny": []}


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, ToolContext]:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir(exist_ok=True)  # the shared fixtures made it
    outside.mkdir()
    (outside / "notes.txt").write_text("outside words\n")
    (outside / "settings.json").write_text('{"key": "sk-secret"}\n')
    RULES["deny"] = [f"Read({outside}/settings.json)"]  # as MAIA denies its own settings file

    def check(tool: str, tool_input: object) -> object:
        return explain(tool, tool_input, RULES, project)  # type: ignore[arg-type]

    ctx = ToolContext(cwd=project, permissions=check)  # type: ignore[arg-type]
    return project, outside, ctx


def swap_in_link(project: Path, outside: Path) -> None:
    """What a sandboxed command can do between the check and the use: ``d`` becomes a link."""
    (project / "d").mkdir(exist_ok=True)
    assert explain("Read", {"path": "d/notes.txt"}, RULES, project).verdict.value == "allow"  # judged: inside
    os.rmdir(project / "d")
    os.symlink(outside, project / "d")


async def test_a_read_through_a_link_swapped_in_after_the_check_is_refused(
    layout: tuple[Path, Path, ToolContext],
) -> None:
    project, outside, ctx = layout
    swap_in_link(project, outside)
    with pytest.raises(ToolError, match="changed after it was checked"):
        await ReadTool().execute({"path": "d/notes.txt"}, ctx)
    with pytest.raises(ToolError, match="which the rules deny"):
        await ReadTool().execute({"path": "d/settings.json"}, ctx)


async def test_a_person_who_approved_the_call_may_reach_the_other_folder_but_never_a_denied_file(
    layout: tuple[Path, Path, ToolContext],
) -> None:
    project, outside, ctx = layout
    swap_in_link(project, outside)
    token = CALL_ASKED.set(True)
    try:
        assert "outside words" in await ReadTool().execute({"path": "d/notes.txt"}, ctx)
        with pytest.raises(ToolError, match="which the rules deny"):
            await ReadTool().execute({"path": "d/settings.json"}, ctx)
    finally:
        CALL_ASKED.reset(token)


async def test_write_and_edit_through_a_swapped_in_link_write_nothing_outside(
    layout: tuple[Path, Path, ToolContext],
) -> None:
    project, outside, ctx = layout
    swap_in_link(project, outside)
    with pytest.raises(ToolError, match="changed after it was checked"):
        await WriteTool().execute({"path": "d/pwned.txt", "content": "x"}, ctx)
    assert not (outside / "pwned.txt").exists()
    with pytest.raises(ToolError, match="changed after it was checked"):
        await EditTool().execute({"path": "d/notes.txt", "old_string": "outside", "new_string": "inside"}, ctx)
    assert (outside / "notes.txt").read_text() == "outside words\n"


async def test_inside_the_project_nothing_changes(layout: tuple[Path, Path, ToolContext]) -> None:
    project, _outside, ctx = layout
    await WriteTool().execute({"path": "sub/a.txt", "content": "one\n"}, ctx)
    await EditTool().execute({"path": "sub/a.txt", "old_string": "one", "new_string": "two"}, ctx)
    assert "two" in await ReadTool().execute({"path": "sub/a.txt"}, ctx)
    assert (project / "sub" / "a.txt").read_text() == "two\n"
