"""Read, Write, Edit, TodoWrite, CurrentModel on real files."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from maia.core.contracts import ToolContext
from maia.tools.base import ToolError
from maia.tools.edit import EditTool
from maia.tools.models import CurrentModelTool
from maia.tools.read import ReadTool
from maia.tools.todowrite import TodoWriteTool
from maia.tools.write import WriteTool


def ctx(path: Path, model: str | None = None) -> ToolContext:
    return ToolContext(launch=path, model=model)


async def test_read_numbers_lines_six_columns_and_tab(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("first\nsecond\n\nfourth")
    out = await ReadTool().execute({"path": "a.py"}, ctx(tmp_path))
    assert out == "     1\tfirst\n     2\tsecond\n     3\t\n     4\tfourth"


async def test_read_offset_limit_and_continuation_hint(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    default = await ReadTool().execute({"path": "n.txt"}, ctx(tmp_path))
    assert default.splitlines()[-2] == "  2000\tline 2000"
    assert default.splitlines()[-1] == "[lines 1-2000 of 3000: read on with offset=2001]"
    part = await ReadTool().execute({"path": "n.txt", "offset": 2999, "limit": 5}, ctx(tmp_path))
    assert part == "  2999\tline 2999\n  3000\tline 3000"
    with pytest.raises(ToolError, match="has only 3000 lines: offset 4000 is past its end"):
        await ReadTool().execute({"path": "n.txt", "offset": 4000}, ctx(tmp_path))


async def test_read_paths_absolute_home_and_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.md").write_text("hi")
    monkeypatch.setenv("HOME", str(home))
    assert (await ReadTool().execute({"path": "~/notes.md"}, ctx(tmp_path))) == "     1\thi"
    assert (await ReadTool().execute({"path": str(home / "notes.md")}, ctx(tmp_path))) == "     1\thi"
    assert (await ReadTool().execute({"path": "home/../home/notes.md"}, ctx(tmp_path))) == "     1\thi"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "File not found: x.bin"),
        ("binary", "x.bin is a binary file (6 bytes): Read only shows text."),
        ("folder", "x.bin is a folder, not a file: use Glob to list it."),
    ],
)
async def test_read_errors(setup: str, message: str, tmp_path: Path) -> None:
    if setup == "binary":
        (tmp_path / "x.bin").write_bytes(b"PK\x03\x04\x00\x01")
    elif setup == "folder":
        (tmp_path / "x.bin").mkdir()
    with pytest.raises(ToolError) as info:
        await ReadTool().execute({"path": "x.bin"}, ctx(tmp_path))
    assert str(info.value) == message


async def test_read_empty_file(tmp_path: Path) -> None:
    (tmp_path / "e").write_text("")
    assert await ReadTool().execute({"path": "e"}, ctx(tmp_path)) == "(the file e is empty)"


async def test_write_creates_parents_and_replaces(tmp_path: Path) -> None:
    out = await WriteTool().execute({"path": "deep/er/new.txt", "content": "a\nb\n"}, ctx(tmp_path))
    assert out == "Created deep/er/new.txt (2 lines)."
    assert (tmp_path / "deep/er/new.txt").read_text() == "a\nb\n"
    again = await WriteTool().execute({"path": "deep/er/new.txt", "content": "c"}, ctx(tmp_path))
    assert again == "Replaced deep/er/new.txt (1 line)."
    assert (tmp_path / "deep/er/new.txt").read_text() == "c"
    assert sorted(os.listdir(tmp_path / "deep/er")) == ["new.txt"]  # no temporary file left


async def test_write_keeps_the_file_mode(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    await WriteTool().execute({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}, ctx(tmp_path))
    assert script.stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize("alias", ["contents", "text", "file_text", "file_content", "data", "body"])
async def test_write_content_aliases(alias: str, tmp_path: Path) -> None:
    await WriteTool().execute({"path": "f.txt", alias: "via alias"}, ctx(tmp_path))
    assert (tmp_path / "f.txt").read_text() == "via alias"


async def test_write_array_of_lines(tmp_path: Path) -> None:
    await WriteTool().execute({"path": "f.txt", "content": ["one", "two"]}, ctx(tmp_path))
    assert (tmp_path / "f.txt").read_text() == "one\ntwo"


async def test_write_without_content_names_what_was_received(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        await WriteTool().execute({"path": "a.py"}, ctx(tmp_path))
    text = str(info.value)
    assert text.startswith(
        'Parameter "content" missing or invalid (the full text of the file, as a string). '
        "Parameters received: path (string)."
    )
    assert "several smaller parts" in text
    assert not (tmp_path / "a.py").exists()


async def test_edit_unique_absent_ambiguous(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("x = 1\ny = 2\nx = 1\n")
    with pytest.raises(ToolError, match=re.escape("appears 2 times in m.py")):
        await EditTool().execute({"path": "m.py", "old_string": "x = 1", "new_string": "x = 3"}, ctx(tmp_path))
    with pytest.raises(ToolError, match=re.escape("old_string was not found in m.py")):
        await EditTool().execute({"path": "m.py", "old_string": "z = 9", "new_string": "z = 0"}, ctx(tmp_path))
    with pytest.raises(ToolError, match="the same"):
        await EditTool().execute({"path": "m.py", "old_string": "y", "new_string": "y"}, ctx(tmp_path))
    out = await EditTool().execute({"path": "m.py", "old_string": "y = 2", "new_string": "y = 20"}, ctx(tmp_path))
    assert out == "Edited m.py at line 2."
    assert target.read_text() == "x = 1\ny = 20\nx = 1\n"
    with pytest.raises(ToolError, match=re.escape("File not found: nope.py")):
        await EditTool().execute({"path": "nope.py", "old_string": "a", "new_string": "b"}, ctx(tmp_path))


def test_file_lock_keys_share_the_real_path(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    os.symlink(tmp_path / "a.py", tmp_path / "alias.py")
    keys = {
        tool.lock_key({"path": p}, tmp_path)
        for tool in (ReadTool(), WriteTool(), EditTool())
        for p in ("a.py", "./a.py", str(tmp_path / "a.py"), "alias.py")
    }
    assert keys == {f"file:{os.path.realpath(tmp_path / 'a.py')}"}
    assert TodoWriteTool().lock_key({}, tmp_path) == "todowrite"


async def test_todowrite_renders_and_warns(tmp_path: Path) -> None:
    tool = TodoWriteTool()
    todos: list[dict[str, Any]] = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
    assert await tool.execute({"todos": todos}, ctx(tmp_path)) == "☑ Read the code\n▶ Fixing the bug\n☐ Run the tests"
    assert tool.describe({"todos": todos}) == "1/3 done"
    todos[2]["status"] = "in_progress"
    out = await tool.execute({"todos": todos}, ctx(tmp_path))
    assert out.endswith("Warning: 2 tasks are in progress; keep only one in_progress at a time.")
    assert len(tool.todos) == 3


async def test_current_model_reads_the_model_at_call_time(tmp_path: Path) -> None:
    assert await CurrentModelTool().execute({}, ctx(tmp_path, "gpt-x")) == (
        "This session uses the model gpt-x (through LiteLLM)."
    )


async def test_list_models_asks_litellm_each_call(tmp_path: Path, httpserver: object, write_settings: object) -> None:
    from pytest_httpserver import HTTPServer

    from maia.core.settings import load_settings
    from maia.provider.models import list_models
    from maia.tools.models import ListModelsTool
    from tests.conftest import fixture_bytes

    assert isinstance(httpserver, HTTPServer)
    httpserver.expect_request("/v1/models").respond_with_data(
        fixture_bytes("proxy-models.json"), content_type="application/json"
    )
    path = write_settings(httpserver.url_for(""))  # type: ignore[operator]
    settings = load_settings(path.parent, env={})
    tool = ListModelsTool(lambda: list_models(settings))
    out = await tool.execute({}, ctx(tmp_path, "scripted-openai"))
    assert out == (
        "- mock-litellm, 32000 tokens of context\n- scripted-anthropic, 200000 tokens of context\n"
        "- scripted-openai, 128000 tokens of context (this session)"
    )
    await tool.execute({}, ctx(tmp_path, "scripted-openai"))
    assert len(httpserver.log) == 2
    httpserver.clear()
    with pytest.raises(ToolError, match="LiteLLM answered HTTP 500"):
        await tool.execute({}, ctx(tmp_path))
