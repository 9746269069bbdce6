"""The ``edits`` approval mode lets Write/Edit through without asking only inside the launch folder, as
the tool opens the path (normalised) and where its links really lead: a link inside the project that
points outside is no edit of the project."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from maia.agent.approval import inside_launch
from maia.app.application import Application, AppOptions
from maia.app.approvals import with_mode
from maia.core.contracts import AskAnswer, PermissionCheck
from maia.core.settings import load_settings
from maia.permissions.engine import Decision, explain
from maia.permissions.rules import Verdict
from maia.provider.fake import ScriptedProvider, text_turn, tool_turn
from tests.agent.helpers import RecordingUI


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A project and a folder outside it, with links both ways."""
    project, outside = tmp_path / "proj", tmp_path / "outside"
    (project / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "file.txt").write_text("outside\n")
    (project / "lnk").symlink_to(outside)  # inside → outside (a folder)
    (project / "file-link.txt").symlink_to(outside / "file.txt")  # inside → outside (a file)
    (project / "dangling").symlink_to(outside / "not-yet" / "x.txt")  # inside → outside, nothing there yet
    (project / "dangling-in").symlink_to(project / "src" / "new.txt")  # inside → inside, nothing there yet
    (project / "alias").symlink_to(project / "src")  # inside → inside
    (outside / "into").symlink_to(project / "src")  # outside → inside
    return project, outside


def _edits(launch: Path) -> PermissionCheck:
    def engine(name: str, tool_input: Mapping[str, Any]) -> Decision:
        return explain(name, tool_input, {}, launch)  # no rule: the engine asks

    return with_mode(engine, lambda: "edits", launch, dict)


@pytest.mark.parametrize(
    ("path", "verdict"),
    [
        ("src/a.py", Verdict.ALLOW),
        ("alias/a.py", Verdict.ALLOW),  # a link that stays inside
        ("dangling-in", Verdict.ALLOW),  # a dangling link whose target would be inside
        ("lnk/../src/b.py", Verdict.ALLOW),  # normalised as the tool opens it: src/b.py
        ("lnk/evil.txt", Verdict.ASK),  # a folder link pointing outside
        ("lnk", Verdict.ASK),
        ("file-link.txt", Verdict.ASK),  # a file link pointing outside
        ("dangling", Verdict.ASK),  # a dangling link pointing outside: writing it creates the target
        ("src/../../outside/x.txt", Verdict.ASK),  # `..` out of the project
        ("alias/../../outside/x.txt", Verdict.ASK),
        ("{outside}/into/a.py", Verdict.ASK),  # written outside, even if it leads inside
        ("{outside}/x.txt", Verdict.ASK),
        ("  ", Verdict.ASK),
    ],
)
def test_edits_mode_judges_the_real_path(path: str, verdict: Verdict, tree: tuple[Path, Path]) -> None:
    project, outside = tree
    decision = _edits(project)("Write", {"path": path.format(outside=outside), "content": "x"})
    assert decision.verdict == verdict
    if verdict == Verdict.ASK:
        assert decision.rule is None  # the engine's own question, not the mode's


def test_a_launch_folder_reached_through_a_link(tree: tuple[Path, Path], tmp_path: Path) -> None:
    project, _outside = tree
    (tmp_path / "via").symlink_to(project)
    launch = tmp_path / "via"
    assert _edits(launch)("Edit", {"path": "src/a.py"}).verdict == Verdict.ALLOW
    assert _edits(launch)("Edit", {"path": str(project / "src" / "a.py")}).verdict == Verdict.ASK  # as written
    assert _edits(launch)("Edit", {"path": "lnk/x.txt"}).verdict == Verdict.ASK


def test_inside_launch(tree: tuple[Path, Path]) -> None:
    project, outside = tree
    assert inside_launch("src/new/deeper/file.txt", project)  # nothing exists below src yet
    assert inside_launch(".", project)
    assert not inside_launch("lnk/new/deeper/file.txt", project)
    assert not inside_launch(str(outside), project)
    assert not inside_launch("../proj-sibling/x", project)


class _UI(RecordingUI):
    """Refuses every question and keeps what it was asked about."""

    def __init__(self) -> None:
        super().__init__(["no"] * 5)
        self.approvals: list[Any] = []

    async def ask(self, message: str, approval: Any = None) -> AskAnswer:
        self.approvals.append(approval)
        return await super().ask(message, approval)


async def test_a_link_out_of_the_project_is_asked_about_in_edits_mode(
    home: Path, project: Path, write_settings: Any, tmp_path: Path
) -> None:
    write_settings()
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "lnk").symlink_to(outside)
    (project / "src").mkdir()
    ui = _UI()
    calls = [
        tool_turn(("Write", {"path": "lnk/evil.txt", "content": "pwned\n"}), ids=["c0"]),
        tool_turn(("Write", {"path": "src/ok.txt", "content": "fine\n"}), ids=["c1"]),
        tool_turn(("Edit", {"path": "lnk/existing.txt", "old_string": "a", "new_string": "b"}), ids=["c2"]),
    ]
    (outside / "existing.txt").write_text("a\n")
    app = await Application.open(
        AppOptions(launch=project, home=home, settings=load_settings(home), model="m", save=False),
        ui,  # type: ignore[arg-type]
        provider=ScriptedProvider([*calls, text_turn("done")]),
    )
    try:
        app.set_mode("edits")

        async def never(_wait: object) -> bool:
            return False

        await app.send("write them", on_wait=never)
    finally:
        await app.aclose()
    assert len(ui.questions) == 2  # both calls through the link; the file inside the project was not asked
    assert [a.summary for a in ui.approvals] == ["lnk/evil.txt", "lnk/existing.txt"]
    assert all(a.rules == () for a in ui.approvals)  # no "always" rule reaches through a link either
    assert not (outside / "evil.txt").exists()
    assert (outside / "existing.txt").read_text() == "a\n"
    assert (project / "src" / "ok.txt").read_text() == "fine\n"
