"""Approving without friction: the question's detail, the rule "always" adds (narrow and safe), where it is
kept, and the approval modes (a deny always wins)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from maia.agent.approval import approval_for, suggest_rules, write_detail
from maia.app.application import Application, AppOptions
from maia.app.approvals import remember_rules, with_mode
from maia.core.contracts import AskAnswer
from maia.core.errors import ConfigError
from maia.core.settings import load_settings
from maia.permissions.engine import Decision
from maia.permissions.rules import Verdict
from maia.provider.fake import ScriptedProvider, text_turn, tool_turn
from tests.agent.helpers import RecordingUI
from tests.conftest import trust_project


@pytest.mark.parametrize(
    ("command", "rules"),
    [
        ("npm test -- --watch", ["Bash(npm test *)"]),
        ("git -C . status --short", ["Bash(git status *)"]),
        ("pytest -q tests/app", ["Bash(pytest *)"]),
        ("ls -la", ["Bash(ls *)"]),
        ("git add . && git commit -m wip", ["Bash(git add *)", "Bash(git commit *)"]),
        ("rm -rf build", ["Bash(rm -rf build)"]),  # destructive: the exact command only
        ("python scripts/gen.py --all", ["Bash(python scripts/gen.py --all)"]),
        ("/usr/bin/ls", ["Bash(ls *)"]),
        ("./run.sh", []),  # a program the user owns: no rule
        ('echo "$HOME"', []),  # not plain: a rule could never allow it anyway
        ("cat a > out.txt", []),  # writes a file: asks each time
        ("ls 2>/dev/null", ["Bash(ls *)"]),
        ("rm -rf build/*", []),  # a * in the command would widen the rule
        ("sudo apt install x", []),  # a wrapper: the inner command is what runs
        ("cd sub && make", ["Bash(cd *)", "Bash(make)"]),  # make alone: its default target, not any target
    ],
)
def test_bash_rules_are_narrow(command: str, rules: list[str], tmp_path: Path) -> None:
    assert suggest_rules("Bash", {"command": command}, tmp_path) == rules


def test_file_web_agent_and_mcp_rules(tmp_path: Path) -> None:
    assert suggest_rules("Edit", {"path": "src/app/main.py"}, tmp_path) == ["Edit(src/app/**)"]
    assert suggest_rules("Write", {"path": "README.md"}, tmp_path) == ["Edit(README.md)"]
    assert suggest_rules("Write", {"path": "/etc/hosts"}, tmp_path) == []  # outside the launch folder
    assert suggest_rules("Edit", {"path": ".maia/settings.json"}, tmp_path) == []  # protected
    assert suggest_rules("Edit", {"path": ".git/hooks/pre-commit"}, tmp_path) == []
    assert suggest_rules("WebFetch", {"url": "https://Docs.Python.org/3/"}, tmp_path) == [
        "WebFetch(domain:docs.python.org)"
    ]
    assert suggest_rules("Agent", {"agent": "reviewer", "task": "x"}, tmp_path) == ["Agent(reviewer)"]
    assert suggest_rules("mcp__github__create_issue", {}, tmp_path) == ["Mcp(github,create_issue)"]
    assert suggest_rules("addition", {"a": 1}, tmp_path) == ["addition"]


def test_the_question_shows_the_diff_and_the_reason_of_a_doubt(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    diff = write_detail("Edit", {"path": "a.py", "old_string": "y = 2", "new_string": "y = 3"}, tmp_path)
    assert diff is not None and "--- a/a.py" in diff and "-y = 2\n+y = 3\n" in diff
    new = write_detail("Write", {"path": "n.txt", "content": "".join(f"{i}\n" for i in range(500))}, tmp_path)
    assert new is not None and "+0\n" in new and "+399\n" in new and "+400\n" not in new and "100 more lines" in new
    doubt = Decision(Verdict.ASK, None, "the command is not plain ($X)", doubt=True)
    approval = approval_for(None, "Bash", {"command": "eval $X"}, "eval $X", doubt, tmp_path)
    assert approval.reason == "the command is not plain ($X)" and approval.rules == ()  # no "always" on doubt
    assert approval.detail == "eval $X" and approval.detail_kind == "command"


def test_remembered_rules_go_to_the_local_settings_file(tmp_path: Path) -> None:
    home, launch = tmp_path / "home", tmp_path / "proj"
    launch.mkdir()
    path = remember_rules(home, launch, ["Bash(npm test *)"])
    assert path == launch / ".maia" / "settings.local.json"
    remember_rules(home, launch, ["Bash(npm test *)", "Edit(src/**)"])
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(npm test *)", "Edit(src/**)"]}}
    path.write_text('{"model_note": "kept", "permissions": {"deny": ["Bash(rm *)"]}}')
    remember_rules(home, launch, ["Read"])
    assert json.loads(path.read_text()) == {
        "model_note": "kept",
        "permissions": {"deny": ["Bash(rm *)"], "allow": ["Read"]},
    }
    path.write_text("{ broken")
    with pytest.raises(ConfigError):
        remember_rules(home, launch, ["Read"])
    assert path.read_text() == "{ broken"  # never rewritten


def test_the_local_settings_file_is_ignored_by_git(tmp_path: Path) -> None:
    from maia.sessions.store import ensure_project_folders

    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    ensure_project_folders(tmp_path)
    remember_rules(tmp_path / "home", tmp_path, ["Read"])
    done = subprocess.run(["git", "status", "--porcelain", "--", ".maia"], cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout == ""


def _decision(verdict: Verdict, rule: str | None = None, doubt: bool = False) -> Any:
    def check(name: str, tool_input: Mapping[str, Any]) -> Decision:
        return Decision(verdict, rule, "why", doubt=doubt)

    return check


def test_modes(tmp_path: Path) -> None:
    mode = ["plan"]
    tools: dict[str, Any] = {}

    def moded(verdict: Verdict, **kw: Any) -> Any:
        return with_mode(_decision(verdict, **kw), lambda: mode[0], tmp_path, lambda: tools)  # type: ignore[arg-type,return-value]

    assert moded(Verdict.ALLOW)("Bash", {"command": "ls"}).verdict == Verdict.DENY  # plan: nothing runs
    assert moded(Verdict.ALLOW)("Write", {"path": "a"}).verdict == Verdict.DENY
    assert moded(Verdict.ALLOW)("Read", {"path": "a"}).verdict == Verdict.ALLOW
    assert moded(Verdict.ASK)("Grep", {"pattern": "x"}).verdict == Verdict.ASK
    mode[0] = "edits"
    assert moded(Verdict.ASK)("Write", {"path": "src/a.py"}).verdict == Verdict.ALLOW
    assert moded(Verdict.ASK)("Edit", {"path": "/etc/passwd"}).verdict == Verdict.ASK  # outside
    assert moded(Verdict.ASK, doubt=True)("Edit", {"path": ".git/config"}).verdict == Verdict.ASK  # protected
    assert moded(Verdict.ASK, rule="Edit(secret.txt)")("Edit", {"path": "secret.txt"}).verdict == Verdict.ASK
    assert moded(Verdict.ASK)("Bash", {"command": "ls"}).verdict == Verdict.ASK  # commands still ask
    assert moded(Verdict.DENY, rule="Write(**)")("Write", {"path": "a"}).verdict == Verdict.DENY  # deny wins
    mode[0] = "ask"
    assert moded(Verdict.ASK)("Write", {"path": "src/a.py"}).verdict == Verdict.ASK


class AlwaysUI(RecordingUI):
    """Answers "always" once, then records any later question."""

    def __init__(self, first: AskAnswer) -> None:
        super().__init__([first])
        self.approvals: list[Any] = []

    async def ask(self, message: str, approval: Any = None) -> AskAnswer:
        self.approvals.append(approval)
        return await super().ask(message, approval)


@pytest.mark.parametrize("answer", ["always", "always-session"])
async def test_always_stops_the_questions(answer: AskAnswer, home: Path, project: Path, write_settings: Any) -> None:
    write_settings()
    ui = AlwaysUI(answer)
    calls = [tool_turn(("Bash", {"command": f"echo run{n}"}), ids=[f"c{n}"]) for n in range(3)]
    app = await Application.open(
        AppOptions(launch=project, home=home, settings=load_settings(home), model="m", save=False),
        ui,  # type: ignore[arg-type]
        provider=ScriptedProvider([*calls, text_turn("done")]),
    )
    try:

        async def never(_wait: object) -> bool:
            return False

        await app.send("run them", on_wait=never)
    finally:
        await app.aclose()
    assert len(ui.questions) == 1 and ui.approvals[0].rules == ("Bash(echo *)",)
    results = [b for m in app.agent.messages for b in m.content if getattr(b, "tool_use_id", None)]
    assert [r.content.splitlines()[0] for r in results] == ["run0", "run1", "run2"]
    local = project / ".maia" / "settings.local.json"
    assert local.exists() == (answer == "always")
    if answer == "always":
        assert json.loads(local.read_text())["permissions"]["allow"] == ["Bash(echo *)"]


async def test_a_remembered_rule_can_be_removed_and_asks_again(home: Path, project: Path, write_settings: Any) -> None:
    from maia.core.errors import UsageError

    write_settings(permissions={"allow": ["Bash(ls *)"]})
    local = project / ".maia" / "settings.local.json"
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(json.dumps({"permissions": {"allow": ["Bash(echo *)", "Read"]}, "other": 1}))
    trust_project(project)
    app = await Application.open(
        AppOptions(launch=project, home=home, settings=load_settings(home), model="m", save=False),
        RecordingUI(),  # type: ignore[arg-type]
        provider=ScriptedProvider([]),
    )
    try:
        check = app.conversation.agent.permissions
        assert check("Bash", {"command": "echo hi"}).verdict is Verdict.ALLOW
        assert "settings.local.json" in app.forget("Bash(echo *)")
        assert app.conversation.agent.permissions("Bash", {"command": "echo hi"}).verdict is Verdict.ASK
        assert json.loads(local.read_text()) == {"permissions": {"allow": ["Read"]}, "other": 1}
        app.remember(["Bash(pwd)"], persist=False)
        assert app.conversation.agent.permissions("Bash", {"command": "pwd"}).verdict is Verdict.ALLOW
        assert "this session" in app.forget("Bash(pwd)")
        assert app.conversation.agent.permissions("Bash", {"command": "pwd"}).verdict is Verdict.ASK
        with pytest.raises(UsageError, match="edit that file"):
            app.forget("Bash(ls *)")  # the user's own settings.json: MAIA does not rewrite it
        with pytest.raises(UsageError, match="No rule"):
            app.forget("Bash(nothing)")
    finally:
        await app.aclose()


def test_a_broken_local_file_is_never_rewritten_to_remove_a_rule(tmp_path: Path) -> None:
    from maia.app.approvals import forget_rule

    local = tmp_path / "p" / ".maia" / "settings.local.json"
    local.parent.mkdir(parents=True)
    local.write_text('["Bash(echo *)"]')
    with pytest.raises(ConfigError):
        forget_rule(tmp_path / "home", tmp_path / "p", "Bash(echo *)")
    assert local.read_text() == '["Bash(echo *)"]'
