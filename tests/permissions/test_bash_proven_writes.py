"""Commands an adversarial review found allowed with ordinary narrow rules although they write what a
deny rule names (or change what a narrow rule does not cover). Each row is decided (never allowed),
then run under real bash in a scratch repository to prove it does what the comment says.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from maia.permissions import explain


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=repo, check=True, capture_output=True
    )


def _shipped_link(repo: Path) -> None:
    """A repository that ships a tracked symbolic link ``evil -> .env`` (the user's .env is untracked)."""
    _git(repo, "init", "-q", "-b", "main", ".")
    (repo / ".env").write_text("SECRET\n")
    (repo / ".gitignore").write_text(".env\n")
    os.symlink(".env", repo / "evil")
    _git(repo, "add", "evil", ".gitignore")
    _git(repo, "commit", "-qm", "base")


def _env_written(repo: Path) -> bool:
    return "PWNED" in (repo / ".env").read_text()


def _files(repo: Path) -> None:
    """A repository with a tracked file ``a``, an untracked ignored ``.env``, a patch that rewrites
    ``.env`` and ``.env.gz`` holding other text."""
    _git(repo, "init", "-q", "-b", "main", ".")
    (repo / ".env").write_text("SECRET\n")
    (repo / ".gitignore").write_text(".env\n")
    (repo / "a").write_text("PWNED\n")
    (repo / "p").write_text("--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-SECRET\n+PWNED\n")
    subprocess.run(["gzip", "-c"], input=b"PWNED\n", stdout=(repo / ".env.gz").open("wb"), check=True)
    _git(repo, "add", "a", ".gitignore")
    _git(repo, "commit", "-qm", "base")


def _env_changed(repo: Path) -> bool:
    return not (repo / ".env").exists() or (repo / ".env").read_text(errors="replace") != "SECRET\n"


def _deny_env(program: str) -> dict[str, list[str]]:
    return {"allow": [f"Bash({program} *)"], "deny": ["Write(.env)"]}


def _branches(repo: Path) -> None:
    """A repository with a branch ``victim``, a tag ``t1`` and a local setting ``x.y``."""
    _files(repo)
    _git(repo, "branch", "victim")
    _git(repo, "tag", "t1")
    _git(repo, "config", "x.y", "1")


def _git_out(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True).stdout


def _no_branch(repo: Path) -> bool:
    return "victim" not in _git_out(repo, "branch", "--list", "victim")


def _no_tag(repo: Path) -> bool:
    return "t1" not in _git_out(repo, "tag", "--list", "t1")


def _no_setting(repo: Path) -> bool:
    return _git_out(repo, "config", "x.y").strip() == ""


def _link_branch(repo: Path) -> None:
    """``main`` holds a plain file ``safe``; branch ``b`` makes ``safe`` a link to the untracked .env; the
    user's own git configuration (``user.gitconfig``, passed as GIT_CONFIG_GLOBAL) has ``co = checkout``."""
    _files(repo)
    (repo / "safe").write_text("plain\n")
    _git(repo, "add", "safe")
    _git(repo, "commit", "-qm", "safe")
    _git(repo, "checkout", "-qb", "b")
    (repo / "safe").unlink()
    os.symlink(".env", repo / "safe")
    _git(repo, "add", "safe")
    _git(repo, "commit", "-qm", "link")
    _git(repo, "checkout", "-q", "main")
    (repo / "user.gitconfig").write_text("[alias]\n\tco = checkout\n")


@dataclass(frozen=True)
class Row:
    """One command: its rules, how the scratch repository is made, how bash proves the harm."""

    command: str
    rules: dict[str, list[str]]
    setup: Callable[[Path], None]
    proof: Callable[[Path], bool]


ROWS = [
    # git mv moves a shipped link under a new name: the redirection after it writes through the link.
    # `mv evil safe` is denied (mv's table says it writes its source); git mv's table says nothing.
    Row(
        "git mv evil safe; echo PWNED > safe",
        {"allow": ["Bash(git mv *)", "Bash(echo *)", "Write(**)"], "deny": ["Write(.env)"]},
        _shipped_link,
        _env_written,
    ),
    Row(
        "git mv evil safe && echo PWNED >> safe",
        {"allow": ["Bash(git *)", "Bash(echo *)", "Write(**)"], "deny": ["Write(.env)"]},
        _shipped_link,
        _env_written,
    ),
    # --- spellings the tables misread (uniq -f 1 a .env, shuf -o .env -e a… are denied) -------------
    # GNU long options with a required value take the next word: `--skip-fields 1` is read as a flag,
    # so `1 a` are taken for the input and output and .env is never seen
    Row("uniq --skip-fields 1 a .env", _deny_env("uniq"), _files, _env_changed),
    Row("uniq --skip-chars 1 a .env", _deny_env("uniq"), _files, _env_changed),
    Row("uniq --check-chars 9 a .env", _deny_env("uniq"), _files, _env_changed),
    # shuf -e is a flag (operands are the lines): -o after it is missed
    Row("shuf -e -o .env a", _deny_env("shuf"), _files, _env_changed),
    Row("shuf -eo .env a", _deny_env("shuf"), _files, _env_changed),
    # patch FILE PATCHFILE after a long option taking a value
    Row("patch --strip 1 .env p", _deny_env("patch"), _files, _env_changed),
    Row("patch --fuzz 1 .env p", _deny_env("patch"), _files, _env_changed),
    # gzip -d writes the name without its suffix (-f: over an existing file)
    Row("gzip -df .env.gz", _deny_env("gzip"), _files, _env_changed),
    # git subcommands that write or remove files their words name
    Row("git bundle create .env HEAD", _deny_env("git"), _files, _env_changed),
    Row("git clean -fx .env", _deny_env("git"), _files, _env_changed),
    Row("git mv -f a .env", _deny_env("git"), _files, _env_changed),
    # --- git's parse-options takes any unambiguous prefix of a long option (issue 26, item 1): the
    # subcommands' dangers are matched by their exact names only (`git branch --delete x` asks)
    Row("git branch --del victim", {"allow": ["Bash(git branch *)"]}, _branches, _no_branch),
    Row("git branch --delet victim", {"allow": ["Bash(git branch *)"]}, _branches, _no_branch),
    Row("git branch --mov victim other", {"allow": ["Bash(git branch *)"]}, _branches, _no_branch),
    Row("git tag --dele t1", {"allow": ["Bash(git tag *)"]}, _branches, _no_tag),
    Row("git config --unset-a x.y", {"allow": ["Bash(git config *)"]}, _branches, _no_setting),
    # --- a git subcommand the tables do not know (a user's alias, git-subtree, git-lfs…) is taken for
    # one that makes no links: `git checkout b; echo … > safe` asks, the alias of it is allowed
    Row(
        "git co b; echo PWNED > safe",
        {"allow": ["Bash(git *)", "Bash(echo *)", "Write(**)"], "deny": ["Write(.env)"]},
        _link_branch,
        _env_written,
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.command[:60])
def test_not_allowed(row: Row, tmp_path: Path) -> None:
    row.setup(tmp_path)
    decision = explain("Bash", {"command": row.command}, row.rules, tmp_path)
    assert decision.verdict.value != "allow", decision.reason


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.command[:60])
def test_real_bash_does_what_the_row_says(row: Row, tmp_path: Path) -> None:
    row.setup(tmp_path)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(tmp_path / "user.gitconfig")}
    subprocess.run(["bash", "-c", row.command], cwd=tmp_path, capture_output=True, timeout=30, env=env)
    assert row.proof(tmp_path)
