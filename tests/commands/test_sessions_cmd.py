"""``maia sessions`` on real session files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from maia.commands import cli
from maia.commands.sessions import complete_names
from maia.core.contracts import Message, TextBlock, ToolResultBlock, ToolUseBlock
from maia.sessions.codec import SavedSession
from maia.sessions.store import SessionStore


@pytest.fixture
def store(project: Path) -> SessionStore:
    store = SessionStore.for_launch(project)
    store.write(
        SavedSession(
            "alpha",
            model="gpt-x",
            messages=[
                Message("user", [TextBlock("read it")]),
                Message("assistant", [TextBlock("Sure."), ToolUseBlock("c1", "Read", {"path": "a.py"})]),
                Message("user", [ToolResultBlock("c1", "r" * 700)]),
                Message("assistant", [TextBlock("Done.")]),
            ],
        )
    )
    store.write(SavedSession("alpha__1", model="gpt-x", start_context="the summary"))
    store.write(SavedSession("alpha-reviewer", messages=[Message("user", [TextBlock("t")])], agent="reviewer"))
    store.folder.joinpath("broken.json").write_text("{oops")
    return store


def test_list_text(store: SessionStore) -> None:
    result = CliRunner().invoke(cli, ["sessions", "list"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert any(line.startswith("alpha ") and "4 msg" in line and "gpt-x" in line for line in lines)
    assert any(line.startswith("alpha__1") and "(compacted)" in line for line in lines)
    assert any(line.startswith("alpha-reviewer") and "(sub-agent reviewer)" in line for line in lines)
    assert any(line.startswith("broken") and "unreadable: invalid JSON at line 1, column 2" in line for line in lines)


def test_list_json(store: SessionStore) -> None:
    data = {s["name"]: s for s in json.loads(CliRunner().invoke(cli, ["sessions", "list", "--json"]).output)}
    assert set(data) == {"alpha", "alpha__1", "alpha-reviewer", "broken"}
    assert data["alpha"]["messages"] == 4 and data["alpha"]["model"] == "gpt-x" and data["alpha"]["size"] > 0
    assert data["alpha__1"]["compacted"] and data["alpha-reviewer"]["agent"] == "reviewer"
    assert data["broken"]["error"].startswith("invalid JSON")


def test_empty_folder() -> None:
    assert CliRunner().invoke(cli, ["sessions", "list"]).output == "No saved session in this folder.\n"


def test_show_cuts_tool_results_at_600(store: SessionStore) -> None:
    result = CliRunner().invoke(cli, ["sessions", "show", "ALPHA"])
    assert result.exit_code == 0
    assert "You:\nread it" in result.output and "MAIA:\nSure." in result.output
    assert '  → Read {"path": "a.py"}' in result.output
    assert "  ← result: " + "r" * 600 + "… [100 more characters]" in result.output
    as_json = json.loads(CliRunner().invoke(cli, ["sessions", "show", "alpha", "--json"]).output)
    assert as_json["name"] == "alpha" and len(as_json["messages"]) == 4


def test_show_unknown_suggests(store: SessionStore) -> None:
    result = CliRunner().invoke(cli, ["sessions", "show", "alpa"])
    assert result.exit_code == 2
    assert "No session named 'alpa'." in result.output and "Did you mean: alpha" in result.output


def test_show_broken_file_is_a_clear_error(store: SessionStore) -> None:
    result = CliRunner().invoke(cli, ["sessions", "show", "broken"])
    assert result.exit_code == 1 and "is not a valid session: invalid JSON" in result.output
    assert "Traceback" not in result.output


def test_rename(store: SessionStore) -> None:
    assert CliRunner().invoke(cli, ["sessions", "rename", "alpha", "beta"]).output == "Renamed alpha to beta.\n"
    assert store.find("alpha") is None and store.load("beta").model == "gpt-x"
    bad = CliRunner().invoke(cli, ["sessions", "rename", "beta", "a/b"])
    assert bad.exit_code == 2 and "cannot contain '/'" in bad.output


def test_delete_needs_yes_without_a_terminal(store: SessionStore) -> None:
    refused = CliRunner().invoke(cli, ["sessions", "delete", "alpha"])
    assert refused.exit_code == 2 and "pass --yes" in refused.output
    assert store.find("alpha") == "alpha"
    done = CliRunner().invoke(cli, ["sessions", "delete", "alpha", "broken", "--yes"])
    assert done.output == "Deleted alpha.\nDeleted broken.\n"
    assert store.find("alpha__1") == "alpha__1"  # no cascade
    missing = CliRunner().invoke(cli, ["sessions", "delete", "ghost", "--yes"])
    assert missing.exit_code == 2


def test_names_complete(store: SessionStore) -> None:
    import click

    items = complete_names(click.Context(cli), click.Argument(["x"]), "alp")
    assert [i.value for i in items] == ["alpha", "alpha-reviewer", "alpha__1"]


def test_a_session_open_in_a_maia_cannot_be_renamed_or_deleted(project: Path) -> None:
    import subprocess
    import sys

    store = SessionStore.for_launch(project)
    store.write(SavedSession("open", messages=[]))
    script = "import sys,time;from pathlib import Path;from maia.sessions.store import SessionLock as L;"
    script += "l=L(Path(sys.argv[1]),'open','chat');l.acquire();print('held',flush=True);time.sleep(60)"
    holder = subprocess.Popen([sys.executable, "-c", script, str(store.folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        renamed = CliRunner().invoke(cli, ["sessions", "rename", "open", "other"])
        assert renamed.exit_code == 1 and f"open in another MAIA (chat, process {holder.pid})" in renamed.output
        deleted = CliRunner().invoke(cli, ["sessions", "delete", "open", "--yes"])
        assert deleted.exit_code != 0 and store.find("open") == "open"
    finally:
        holder.kill()
        holder.wait()
    assert CliRunner().invoke(cli, ["sessions", "delete", "open", "--yes"]).exit_code == 0
    assert store.find("open") is None


def test_listing_reads_heads_without_building_messages(project: Path) -> None:
    """Issue 29: the listing reads each file's summary; the codec, the content blocks and tempfile stay
    unloaded (a listing of 500 sessions costs little more than ``maia --help``)."""
    import os
    import subprocess
    import sys

    store = SessionStore.for_launch(project)
    for name in ("one", "two"):
        store.write(SavedSession(name, model="m", messages=[Message("user", [TextBlock(f"hello {name}")])]))
    code = (
        "import json, sys\n"
        "from maia.commands import main\n"
        "try:\n    main(['sessions', 'list'])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps([m for m in ('maia.core.contracts', 'maia.sessions.codec', 'tempfile') if m in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    lines = done.stdout.strip().splitlines()
    assert {line.split()[0] for line in lines[:-1]} == {"one", "two"}
    assert json.loads(lines[-1]) == []
