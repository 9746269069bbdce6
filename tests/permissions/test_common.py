"""Over-asking stays low: the commands developers run every day are allowed under the obvious rules,
and the engine stays fast and bounded on long or hostile input."""

from __future__ import annotations

from pathlib import Path

import pytest

from maia.permissions import Verdict, explain
from maia.permissions import bash as tree_reading

OBVIOUS = {
    "allow": [
        "Bash(git status)",
        "Bash(git log *)",
        "Bash(git diff *)",
        "Bash(git show *)",
        "Bash(ls *)",
        "Bash(cat *)",
        "Bash(grep *)",
        "Bash(rg *)",
        "Bash(head *)",
        "Bash(wc *)",
        "Bash(npm test)",
        "Bash(npm run lint)",
        "Bash(pytest *)",
        "Bash(python -m pytest *)",
        "Bash(make *)",
        "Bash(cargo build *)",
        "Bash(cargo test *)",
        "Bash(cd *)",
        "Redirect(build/**)",
    ],
    "deny": ["Bash(rm *)", "Bash(curl *)", "Write(.env)"],
    "ask": ["Bash(git push *)"],
    "inertVariables": ["FOO"],
}

EVERYDAY = [
    "git status",
    "git log --oneline -20",
    "git log -p -- src/app.py",
    "git diff",
    "git diff HEAD~1 -- src",
    "git diff --stat main...HEAD",
    "git show HEAD:README.md",
    "git show --stat HEAD~2",
    "git -C sub status",
    "git -C ./sub log --oneline",
    "git --no-pager log -5",
    "git --no-pager diff --cached",
    "ls",
    "ls -la",
    "ls -la src/",
    "ls *.py",
    "cat README.md",
    "cat src/*.py | grep TODO",
    "grep -r TODO src",
    "grep -rn 'foo|bar' .",
    'grep -n "def main" src/app.py',
    "rg -n 'fn main' src",
    "rg --files | head -20",
    "npm test",
    "FOO=1 npm test",
    "LANG=C ls -la",
    "NO_COLOR=1 pytest -q",
    "npm run lint",
    "pytest -q",
    "pytest -q tests/unit 2>&1 | head -50",
    "python -m pytest -x tests",
    "make",
    "make test",
    "make -j4 build",
    "cargo build",
    "cargo build --release",
    "cargo test -- --nocapture",
    "cd sub && make",
    "git status && git diff --stat",
    "ls -la > /dev/null 2>&1",
    "make > build/make.log 2>&1",
    "wc -l src/*.py",
    "cat <<'EOF' | grep x\nliteral $HOME `text`\nEOF",
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_commands_are_allowed(command: str, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    decision = explain("Bash", {"command": command}, OBVIOUS, tmp_path)
    assert decision.verdict == Verdict.ALLOW, decision.reason


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("git push origin main", "ask"),
        ("git -C sub push", "ask"),
        ("rm -rf build", "deny"),
        ("BAR=1 npm test", "ask"),  # BAR is not inert
        ("npm test --script-shell=./x.sh", "ask"),
        ("git log --output=x -1", "ask"),
        ("echo hi > .env", "deny"),
    ],
)
def test_and_their_dangerous_neighbours_are_not(command: str, verdict: str, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert explain("Bash", {"command": command}, OBVIOUS, tmp_path).verdict.value == verdict


# --- robustness ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "(" * 5000 + "ls" + ")" * 5000,
        "{ " * 5000 + "ls; " + "}; " * 5000,
        "if true; then " * 3000 + "ls; " + "fi; " * 3000,
        "echo " + '"$(' * 2000 + "ls" + ')"' * 2000,
        "$(" * 3000 + "ls" + ")" * 3000,
        "ls && " * 20000 + "ls",
        "sh -c " * 2000 + "ls",
        "x" * 200_000,
    ],
    ids=["parens", "groups", "ifs", "quoted-substitutions", "substitutions", "long-list", "sh-c", "long-word"],
)
def test_deep_or_long_input_never_raises(command: str, tmp_path: Path) -> None:
    decision = explain("Bash", {"command": command}, OBVIOUS, tmp_path)
    assert decision.verdict in (Verdict.ASK, Verdict.ALLOW)


def test_past_the_time_budget_the_engine_asks_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_reading, "BUDGET_SECONDS", 0.0)
    tree_reading.analyze.cache_clear()
    command = "for f in a b; do echo $f; done && " * 2000 + "echo end"
    decision = explain("Bash", {"command": command}, OBVIOUS, tmp_path)
    tree_reading.analyze.cache_clear()
    assert decision.verdict == Verdict.ASK and decision.doubt is True
    assert "time budget" in decision.reason


def test_a_denied_command_hidden_in_a_huge_one_is_still_denied(tmp_path: Path) -> None:
    command = "ls -la && " * 10000 + "rm -rf build && " + "git status && " * 10000 + "ls"
    decision = explain("Bash", {"command": command}, OBVIOUS, tmp_path)
    assert decision.verdict == Verdict.DENY and decision.rule == "Bash(rm *)"


def test_too_long_a_command_asks(tmp_path: Path) -> None:
    decision = explain("Bash", {"command": "ls " + "a" * 1_000_001}, OBVIOUS, tmp_path)
    assert decision.verdict == Verdict.ASK and "too long" in decision.reason


def test_many_stars_in_a_rule_match_in_linear_time(tmp_path: Path) -> None:
    """A backtracking regex would need about 50,000^20 steps here; the matcher finishes."""
    rules = {"allow": ["Bash(echo " + "*a" * 20 + "b)"], "deny": ["Read(" + "*a" * 20 + "b)"]}
    decision = explain("Bash", {"command": "echo " + "a" * 50_000}, rules, tmp_path)
    assert decision.verdict == Verdict.ASK
    assert explain("Read", {"path": "a" * 5000}, rules, tmp_path).verdict == Verdict.ASK
