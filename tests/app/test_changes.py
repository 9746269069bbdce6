"""``/undo`` and ``/diff``: snapshots taken by Write and Edit, reverted turn by turn, never over a newer change."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from maia.app.application import Application, AppOptions
from maia.app.changes import ChangeRecorder, git_diff
from maia.core.contracts import PermissionCheck
from maia.core.diffs import text_diff
from maia.core.settings import load_settings
from maia.permissions.engine import Decision
from maia.permissions.rules import Verdict
from maia.provider.fake import ScriptedProvider, text_turn, tool_turn
from tests.agent.helpers import RecordingUI


def _allow_all(check: PermissionCheck) -> PermissionCheck:
    def decide(name: str, tool_input: Mapping[str, Any]) -> Decision:
        return Decision(Verdict.ALLOW, "test", "allowed")

    return decide


async def _never(wait: object) -> bool:
    return False


@pytest.fixture
async def app_with(home: Path, project: Path, write_settings: Any) -> Any:
    write_settings()
    opened: list[Application] = []

    async def make(*turns: Any) -> Application:
        app = await Application.open(
            AppOptions(
                launch=project,
                home=home,
                settings=load_settings(home),
                model="m",
                save=False,
                wrap_permissions=_allow_all,
            ),
            RecordingUI(),  # type: ignore[arg-type]
            provider=ScriptedProvider(list(turns)),
        )
        opened.append(app)
        return app

    yield make
    for app in opened:
        await app.aclose()


async def test_undo_reverts_the_last_turn_and_rewinds_the_conversation(app_with: Any, project: Path) -> None:
    (project / "keep.txt").write_text("original\n")
    (project / "keep.txt").chmod(0o640)
    app = await app_with(
        tool_turn(("Edit", {"path": "keep.txt", "old_string": "original", "new_string": "changed"})),
        text_turn("edited"),
        tool_turn(("Write", {"path": "new/made.txt", "content": "fresh\n"})),
        text_turn("written"),
    )
    await app.send("edit it", on_wait=_never)
    after_first = list(app.agent.messages)
    await app.send("make one", on_wait=_never)
    assert (project / "new" / "made.txt").read_text() == "fresh\n"
    outcome = app.undo()
    assert outcome is not None
    result, rewound = outcome
    assert rewound and app.agent.messages == after_first
    assert result.removed == [(project / "new" / "made.txt").resolve()] and not result.skipped
    assert not (project / "new" / "made.txt").exists() and (project / "keep.txt").read_text() == "changed\n"
    outcome = app.undo()
    assert outcome is not None and outcome[0].restored == [(project / "keep.txt").resolve()]
    assert (project / "keep.txt").read_text() == "original\n"
    assert (project / "keep.txt").stat().st_mode & 0o777 == 0o640
    assert app.agent.messages == [] and app.undo() is None


async def test_undo_never_overwrites_a_later_change(app_with: Any, project: Path) -> None:
    app = await app_with(tool_turn(("Write", {"path": "a.txt", "content": "agent\n"})), text_turn("ok"))
    await app.send("write a", on_wait=_never)
    (project / "a.txt").write_text("the user's own edit\n")
    outcome = app.undo()
    assert outcome is not None
    result, _rewound = outcome
    assert result.skipped and "changed since the agent wrote it" in result.skipped[0][1]
    assert (project / "a.txt").read_text() == "the user's own edit\n"


async def test_diff_shows_each_file_from_before_its_first_change(app_with: Any, project: Path) -> None:
    (project / "f.py").write_text("x = 1\n")
    app = await app_with(
        tool_turn(("Edit", {"path": "f.py", "old_string": "x = 1", "new_string": "x = 2"})),
        tool_turn(("Edit", {"path": "f.py", "old_string": "x = 2", "new_string": "x = 3"})),
        text_turn("done"),
    )
    await app.send("bump twice", on_wait=_never)
    ((path, text),) = app.changes.diff(project)
    assert path == (project / "f.py").resolve()
    assert "--- a/f.py" in text and "-x = 1\n" in text and "+x = 3\n" in text and "x = 2" not in text


def test_the_approval_diff_of_a_new_and_an_existing_file() -> None:
    new = text_diff(None, "a\nb\n", "n.txt")
    assert new.startswith("--- /dev/null\n+++ b/n.txt") and "+a\n+b\n" in new
    changed = text_diff("a\n", "a\nb", "x")
    assert "+b\n\\ No newline at end of file" in changed


def test_big_files_are_recorded_but_not_kept(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"0" * (5 * 1024 * 1024 + 1))
    recorder = ChangeRecorder()
    recorder.start_turn()
    recorder.before_write(big)
    big.write_bytes(b"small")
    recorder.after_write(big)
    result, _point = recorder.undo()
    assert result.skipped and "larger than 5 MB" in result.skipped[0][1]


async def test_a_link_is_written_through_and_undo_respects_a_later_edit(
    app_with: Any, project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "rc.txt").write_text("original\n")
    (project / "rc").symlink_to(outside / "rc.txt")
    app = await app_with(tool_turn(("Write", {"path": "rc", "content": "agent\n"})), text_turn("ok"))
    await app.send("write rc", on_wait=_never)
    assert (project / "rc").is_symlink() and (outside / "rc.txt").read_text() == "agent\n"
    (outside / "rc.txt").write_text("the user's edit\n")
    outcome = app.undo()
    assert outcome is not None and outcome[0].skipped and not outcome[0].restored
    assert (outside / "rc.txt").read_text() == "the user's edit\n"


def test_an_unfinished_write_is_reverted_only_when_nothing_changed(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("before\n")
    recorder = ChangeRecorder()
    recorder.start_turn()
    recorder.before_write(target)  # the write then failed: no after_write
    result, _point = recorder.undo()
    assert not result.skipped and target.read_text() == "before\n"
    recorder.start_turn()
    recorder.before_write(target)
    target.write_text("written by a write that was cut\n")  # finished after an interruption
    result, _point = recorder.undo()
    assert result.skipped and "did not finish" in result.skipped[0][1]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True
    )


async def test_in_a_git_repository_diff_adds_git_diff_of_the_touched_files(app_with: Any, project: Path) -> None:
    (project / "f.py").write_text("x = 1\n")
    (project / "other.py").write_text("y = 1\n")
    _git(project, "init", "-q")
    _git(project, "add", "f.py", "other.py")
    _git(project, "commit", "-qm", "start")
    (project / ".gitattributes").write_text("*.py diff=evil\n")  # a diff driver must never run
    _git(project, "config", "diff.evil.textconv", "touch TEXTCONV_RAN;cat")
    app = await app_with(
        tool_turn(("Edit", {"path": "f.py", "old_string": "x = 1", "new_string": "x = 2"})),
        text_turn("done"),
    )
    await app.send("bump", on_wait=_never)
    with (project / "f.py").open("a") as handle:
        handle.write("z = 3\n")  # as a command would: not a Write or Edit
    (project / "other.py").write_text("y = 2\n")  # not touched by the agent: not shown
    text = git_diff(project, app.changes.changed_files)
    assert text is not None and "diff --git a/f.py b/f.py" in text
    assert "-x = 1\n" in text and "+x = 2\n" in text and "+z = 3\n" in text and "other.py" not in text
    assert not (project / "TEXTCONV_RAN").exists()


def test_git_diff_outside_a_repository_is_none(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x\n")
    assert git_diff(tmp_path, [(tmp_path / "f.py").resolve()]) is None
    assert git_diff(tmp_path, []) is None
