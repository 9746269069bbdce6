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
from maia.tools.glob import GlobTool
from maia.tools.grep import GrepTool
from maia.tools.read import ReadTool
from maia.tools.write import WriteTool

RULES: dict[str, list[str]] = {"allow": ["Read(**)", "Write(**)", "Edit(**)", "Grep(**)", "Glob(**)"], "deny": []}
ENGINES = ["rg", "python"]  # Grep and Glob answer the same whichever engine runs: both are checked


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

    ctx = ToolContext(launch=project, permissions=check)  # type: ignore[arg-type]
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


# --- Grep and Glob: the folder or file a search starts from, judged as opened ----------------------


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setenv("MAIA_SEARCH_ENGINE", "python")
    else:
        from maia.search import find_ripgrep

        assert find_ripgrep() is not None, "ripgrep is installed on this machine and in CI"
    return str(request.param)


async def test_grep_and_glob_through_a_folder_swapped_for_a_link_find_nothing_outside(
    layout: tuple[Path, Path, ToolContext], engine: str
) -> None:
    project, outside, ctx = layout
    swap_in_link(project, outside)
    with pytest.raises(ToolError, match="changed after it was checked"):
        await GrepTool().execute({"pattern": "outside", "path": "d", "output_mode": "content"}, ctx)
    with pytest.raises(ToolError, match="changed after it was checked"):
        await GlobTool().execute({"pattern": "*.txt", "path": "d"}, ctx)
    with pytest.raises(ToolError, match="changed after it was checked"):
        await GlobTool().execute({"pattern": "d/*.json"}, ctx)


async def test_grep_of_a_file_swapped_for_a_link_to_a_denied_file_is_refused(
    layout: tuple[Path, Path, ToolContext], engine: str
) -> None:
    project, outside, ctx = layout
    (project / "notes.txt").write_text("my notes\n")
    assert explain("Grep", {"pattern": "k", "path": "notes.txt"}, RULES, project).verdict.value == "allow"
    (project / "notes.txt").unlink()
    os.symlink(outside / "settings.json", project / "notes.txt")
    with pytest.raises(ToolError, match="which the rules deny"):
        await GrepTool().execute({"pattern": "sk-", "path": "notes.txt", "output_mode": "content"}, ctx)


async def test_a_search_root_swapped_while_the_search_runs_returns_nothing(
    layout: tuple[Path, Path, ToolContext], engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook point stands for a command that swaps the folder while ripgrep walks it."""
    import maia.search.engine as engine_module  # the tools import the engine at their first search

    project, outside, ctx = layout
    (project / "d").mkdir()
    (project / "d" / "mine.txt").write_text("outside? no, mine\n")
    real_grep, real_glob = engine_module.grep_hits, engine_module.glob_paths

    def swap() -> None:
        os.rename(project / "d", project / "d.old")
        os.symlink(outside, project / "d")

    async def grep_during(*args: object, **kwargs: object) -> object:
        swap()
        return await real_grep(*args, **kwargs)  # type: ignore[arg-type]

    async def glob_during(*args: object, **kwargs: object) -> object:
        swap()
        return await real_glob(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_module, "grep_hits", grep_during)
    with pytest.raises(ToolError, match="changed while it was searched"):
        await GrepTool().execute({"pattern": "outside", "path": "d", "output_mode": "content"}, ctx)
    os.unlink(project / "d")
    os.rename(project / "d.old", project / "d")
    monkeypatch.setattr(engine_module, "glob_paths", glob_during)
    with pytest.raises(ToolError, match="changed while it was searched"):
        await GlobTool().execute({"pattern": "*", "path": "d"}, ctx)


async def test_a_hard_link_to_a_read_denied_file_is_left_out_of_grep_and_glob(tmp_path: Path, engine: str) -> None:
    """``ln .env notes.txt``: the same device and inode as the denied file, so the same verdict."""
    project = tmp_path / "project"
    (project / ".env").write_text("API_KEY=sk-hardlinked\n")
    os.link(project / ".env", project / "notes.txt")
    (project / "readme.txt").write_text("nothing secret\n")
    for deny in (["Read(.env)"], ["Read(**/.env)"]):  # named, and by a pattern (any other name asks)
        rules: dict[str, list[str]] = {"allow": ["Read(**)", "Grep(**)", "Glob(**)"], "deny": deny}

        def check(tool: str, tool_input: object, rules: dict[str, list[str]] = rules) -> object:
            return explain(tool, tool_input, rules, project)  # type: ignore[arg-type]

        ctx = ToolContext(launch=project, permissions=check)  # type: ignore[arg-type]
        found = await GrepTool().execute({"pattern": "sk-", "output_mode": "content"}, ctx)
        assert "sk-hardlinked" not in found and "left out" in found
        listed = await GlobTool().execute({"pattern": "*.txt"}, ctx)
        assert "readme.txt" in listed and "notes.txt" not in listed and "left out" in listed
        with pytest.raises(ToolError):
            await ReadTool().execute({"path": "notes.txt"}, ctx)
