"""git's abbreviated subcommand options and its link-making subcommands: what still passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from maia.permissions import explain, tables

ALLOWED = [
    ("git branch --list", ["Bash(git branch *)"]),
    ("git diff --text", ["Bash(git diff *)"]),
    ("git log --oneline -5", ["Bash(git log *)"]),
    ("git status; echo x > safe", ["Bash(git *)", "Bash(echo *)", "Write(**)"]),
    ("git commit -m x && echo x > safe", ["Bash(git *)", "Bash(echo *)", "Write(**)"]),
    ("git clean -n", ["Bash(git *)"]),
    ("git config --get x.y", ["Bash(git config *)"]),
]


@pytest.mark.parametrize(("command", "allow"), ALLOWED, ids=[c for c, _a in ALLOWED])
def test_still_allowed(command: str, allow: list[str], tmp_path: Path) -> None:
    decision = explain("Bash", {"command": command}, {"allow": allow, "deny": ["Write(.env)"]}, tmp_path)
    assert decision.verdict.value == "allow", decision.reason


ASKED = [
    ("git subtree add --prefix=x y; echo x > safe", ["Bash(git *)", "Bash(echo *)", "Write(**)"]),
    ("git -C . co b; echo x > safe", ["Bash(git *)", "Bash(echo *)", "Write(**)"]),
    ("git commit --fil=msg", ["Bash(git commit *)"]),
    ("git clean -fdx", ["Bash(git *)"]),
]


@pytest.mark.parametrize(("command", "allow"), ASKED, ids=[c for c, _a in ASKED])
def test_asked(command: str, allow: list[str], tmp_path: Path) -> None:
    decision = explain("Bash", {"command": command}, {"allow": allow, "deny": ["Write(.env)"]}, tmp_path)
    assert decision.verdict.value != "allow", decision.reason


def test_only_git_reads_subcommand_options_as_prefixes() -> None:
    # Go's flag/pflag and clap take no prefixes: kubectl, helm, docker, cargo are read by full names
    abbreviated = {t.names[0] for t in tables.TABLES if t.subcommands is not None and t.subcommands.abbreviated}
    assert abbreviated == {"git"}
