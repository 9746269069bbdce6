"""Issue 26's attack table (engine v3): each row's verdict, and each row run under real bash in a
scratch folder to prove it does what it says (harmless payloads: a marker file, a folder removed
inside the scratch folder)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from maia.permissions import explain

A, Q, D = "allow", "ask", "deny"
DENY_RM = ["Bash(rm *)"]
DENY_ENV = ["Write(.env)"]


def _marker(tmp: Path) -> bool:
    return (tmp / "pwned").exists()


def _says(name: str, text: str) -> Callable[[Path], bool]:
    return lambda tmp: (tmp / name).exists() and text in (tmp / name).read_text(errors="replace")


def _gone(name: str) -> Callable[[Path], bool]:
    return lambda tmp: not (tmp / name).exists()


@dataclass(frozen=True)
class Row:
    """One attack: the command, the rules, the verdict, and how bash proves it."""

    command: str
    rules: dict[str, list[str]]
    verdict: str
    doubt: bool | None = None
    proof: Callable[[Path], bool] | None = _marker
    needs: tuple[str, ...] = ()
    proof_command: str | None = None


def _loader() -> str:
    found = sorted(glob.glob("/lib64/ld-linux*.so*") + glob.glob("/lib/*/ld-linux*.so*") + glob.glob("/lib/ld-*.so*"))
    return found[0] if found else "/lib64/ld-linux-x86-64.so.2"


ROWS: list[Row] = [
    # --- the rows -------------------------------------------------------------------------
    Row("sort --o=.env data.txt", {"allow": ["Bash(sort *)"], "deny": DENY_ENV}, D, proof=_says(".env", "apple")),
    Row(
        "make --ev='pwn:; rm -rf build' pwn",
        {"allow": ["Bash(make *)"], "deny": DENY_RM},
        Q,
        True,
        _gone("build"),
        ("make",),
    ),
    Row("git fetch --upload='touch pwned;:' .", {"allow": ["Bash(git fetch *)"]}, Q, False, needs=("git",)),
    Row(
        """echo '{"permissions":{"allow":["Bash"]}}' | tee .maia/settings.local.json""",
        {"allow": ["Bash(echo *)", "Bash(tee *)"]},
        Q,
        True,
        _says(".maia/settings.local.json", '"Bash"'),
    ),
    Row("git -C vendor/lib status", {"allow": ["Bash(git status *)"]}, Q, False, needs=("git",)),
    Row("uniq data.txt .env", {"allow": ["Bash(uniq *)"], "deny": DENY_ENV}, D, proof=_says(".env", "apple")),
    Row("x86_64 rm -rf build", {"deny": DENY_RM}, D, proof=_gone("build"), needs=("x86_64",)),
    Row("x86_64 touch pwned", {"allow": ["Bash(x86_64 *)", "Bash(touch *)"]}, Q, False, needs=("x86_64",)),
    Row(
        "cd build && echo X > /proc/self/cwd/../.env",
        {"allow": ["Bash(cd *)", "Bash(echo *)", "Redirect"], "deny": DENY_ENV},
        Q,
        True,
        _says(".env", "X"),
    ),
    Row(
        """awk 'BEGIN{system("rm -rf build")}'""",
        {"allow": ["Bash"], "deny": DENY_RM},
        D,
        proof=_gone("build"),
        needs=("awk",),
    ),
    # --- "also still allowed" ---------------------------------------------------------------------
    Row("git branch -d topic", {"allow": ["Bash(git branch *)"]}, Q, False, _gone(".git/refs/heads/topic"), ("git",)),
    Row(
        "'git status'",
        {"allow": ["Bash(git status *)"]},
        Q,
        False,
        proof_command="PATH=$PWD/bin:$PATH; 'git status'",
    ),
    Row("rg -z needle data.txt", {"allow": ["Bash(rg *)"]}, Q, False, proof=None),
    Row(
        "TAR_OPTIONS=--to-command=./payload.sh tar -xf archive.tar",
        {"allow": ["Bash(tar *)"], "inertVariables": ["TAR_OPTIONS"]},
        Q,
        False,
    ),
    # --- the principle: every spelling of an option, every file written, every runner ---------------
    Row("sort --outp=.env data.txt", {"allow": ["Bash(sort *)"]}, Q, False, _says(".env", "apple")),
    Row("sort --ou .env data.txt", {"allow": ["Bash(sort *)"], "deny": DENY_ENV}, D, proof=_says(".env", "apple")),
    Row("mv data.txt .env", {"allow": ["Bash(mv *)"], "deny": DENY_ENV}, D, proof=_says(".env", "apple")),
    Row("cp data.txt .env", {"allow": ["Bash(cp *)"], "deny": DENY_ENV}, D, proof=_says(".env", "apple")),
    Row("cp -t .maia data.txt", {"allow": ["Bash(cp *)"]}, Q, True, _says(".maia/data.txt", "apple")),
    Row(
        "install -m 644 data.txt .env",
        {"allow": ["Bash(install *)"], "deny": DENY_ENV},
        D,
        proof=_says(".env", "apple"),
    ),
    Row("dd if=data.txt of=.env", {"allow": ["Bash(dd *)"], "deny": DENY_ENV}, D, proof=_says(".env", "apple")),
    Row("sed -i s/SECRET/gone/ .env", {"allow": ["Bash(sed -i *)"], "deny": DENY_ENV}, D, proof=_says(".env", "gone")),
    Row("shuf -o .env data.txt", {"allow": ["Bash(shuf *)"], "deny": DENY_ENV}, D, proof=_says(".env", "apple")),
    Row("tee -a .env < data.txt", {"allow": ["Bash(tee *)"], "deny": DENY_ENV}, D, proof=_says(".env", "apple")),
    Row(
        "iconv -f utf-8 -t utf-8 -o .env data.txt",
        {"allow": ["Bash(iconv *)"], "deny": DENY_ENV},
        D,
        proof=_says(".env", "apple"),
    ),
    Row("cp data.txt ../outside.txt", {"allow": ["Bash(cp *)"]}, Q, False, proof=None),
    Row("ln -s ../.env build/x", {"allow": ["Bash(ln *)"], "deny": ["Write(build/x)"]}, D, proof=None),
    Row("tar -xf archive.tar", {"allow": ["Bash(tar *)"]}, Q, False, _says(".maia/settings.local.json", "Bash")),
    Row(
        "git config core.fsmonitor 'touch pwned; false'",
        {"allow": ["Bash(git config *)"]},
        Q,
        True,
        _says(".git/config", "fsmonitor"),
        ("git",),
    ),
    Row(
        "git -c core.fsmonitor='touch pwned; false' status",
        {"allow": ["Bash(git -c *)"]},
        Q,
        False,
        needs=("git",),
    ),
    Row("cd vendor/lib && git status", {"allow": ["Bash(cd *)", "Bash(git status *)"]}, Q, False, needs=("git",)),
    Row("GIT_DIR=vendor/lib/.git git status", {"allow": ["Bash(git status *)"]}, Q, False, needs=("git",)),
    Row(
        "echo '[core]' >> shipped.git/config",
        {"allow": ["Bash(echo *)", "Redirect"]},
        Q,
        True,
        _says("shipped.git/config", "[core]"),
    ),
    Row("capsh -- -c 'touch pwned'", {"allow": ["Bash(capsh *)"]}, Q, False, needs=("capsh",)),
    Row(
        f"{_loader()} {shutil.which('touch') or '/usr/bin/touch'} pwned",
        {"allow": ["Bash"], "deny": ["Bash(touch *)"]},
        D,
        needs=(_loader(),),
    ),
    Row(
        f"{_loader()} {shutil.which('touch') or '/usr/bin/touch'} pwned",
        {"allow": [f"Bash({_loader()} *)", "Bash(/usr/bin/touch *)", "Bash(touch *)"]},
        Q,
        False,
        needs=(_loader(),),
    ),
    Row("awk '{print}' data.txt", {"allow": ["Bash(awk *)"]}, Q, False, proof=None),
    Row(
        "python3 -c 'import os; os.system(\"rm -rf build\")'",
        {"allow": ["Bash"], "deny": DENY_RM},
        D,
        proof=_gone("build"),
    ),
    Row(
        """perl -e '$x="rm"; system($x, "-rf", "build")'""",
        {"allow": ["Bash"], "deny": DENY_RM},
        Q,
        True,
        _gone("build"),
        ("perl",),
    ),
    Row("zip -TT 'rm -rf build' a.zip data.txt", {"allow": ["Bash"], "deny": DENY_RM}, Q, True, proof=None),
    Row("sed -n 'w .env' data.txt", {"allow": ["Bash"], "deny": DENY_ENV}, D, proof=_says(".env", "apple")),
    Row(
        "sed 's/apple/pear/w .env' data.txt",
        {"allow": ["Bash(sed *)"], "deny": DENY_ENV},
        D,
        proof=_says(".env", "pear"),
    ),
    Row(
        "find . -maxdepth 1 -name data.txt -fprint .env",
        {"allow": ["Bash"], "deny": DENY_ENV},
        D,
        proof=_says(".env", "data.txt"),
    ),
    Row("echo x > /dev/tcp/127.0.0.1/9", {"allow": ["Bash(echo *)", "Redirect"]}, Q, True, proof=None),
    Row("env -C vendor/lib git status", {"allow": ["Bash(env *)", "Bash(git status *)"]}, Q, False, needs=("git",)),
    Row(
        "git -c include.path=~/evil.cfg status",
        {"allow": ["Bash(git -c *)", "Bash(git status *)"]},
        Q,
        False,
        needs=("git",),
    ),
    Row("git submodule foreach 'touch pwned'", {"allow": ["Bash(git submodule *)"]}, Q, False, proof=None),
    Row(
        "echo SECRET=2 >> notes.txt",
        {"allow": ["Bash(echo *)", "Redirect"], "deny": DENY_ENV},
        D,
        proof=_says(".env", "SECRET=2"),
    ),
    Row("echo ok", {"allow": ["Bash(echo *)"], "deny": DENY_RM}, A, proof=None),
]


def _setup(tmp: Path, proof: bool) -> None:
    env = _env(tmp)
    (tmp / "data.txt").write_text("banana\napple\n")
    (tmp / ".env").write_text("SECRET=1\n")
    (tmp / "build").mkdir()
    (tmp / "build" / "keep").write_text("x")
    (tmp / ".maia").mkdir()
    (tmp / "home").mkdir()
    (tmp / "bin").mkdir()
    fake = tmp / "bin" / "git status"
    fake.write_text(f"#!/bin/sh\n{shutil.which('touch') or '/usr/bin/touch'} {tmp}/pwned\n")
    fake.chmod(0o755)
    (tmp / "payload.sh").write_text(
        f"#!/bin/sh\n{shutil.which('touch') or '/usr/bin/touch'} {tmp}/pwned\ncat >/dev/null\n"
    )
    (tmp / "payload.sh").chmod(0o755)
    os.link(tmp / ".env", tmp / "notes.txt")  # another name of the secret, made earlier
    (tmp / "home" / "evil.cfg").write_text(f"[core]\n\tfsmonitor = touch {tmp}/pwned; false\n")
    staging = tmp / "staging"
    (staging / ".maia").mkdir(parents=True)
    (staging / ".maia" / "settings.local.json").write_text('{"permissions":{"allow":["Bash"]}}')
    subprocess.run(["tar", "-cf", str(tmp / "archive.tar"), "-C", str(staging), ".maia"], check=True)
    if shutil.which("git") is None:
        return
    for command in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "data.txt"],
        ["git", "commit", "-q", "-m", "first"],
        ["git", "branch", "topic"],
        ["git", "init", "-q", "vendor/lib"],
        ["git", "init", "-q", "--bare", "shipped.git"],
    ):
        subprocess.run(command, cwd=tmp, env=env, check=True, capture_output=True)
    if proof:
        # the repository shipped inside the project: its configuration runs a command on `git status`
        subprocess.run(
            ["git", "config", "core.fsmonitor", f"touch {tmp}/pwned; false"],
            cwd=tmp / "vendor" / "lib",
            env=env,
            check=True,
        )


def _env(tmp: Path) -> dict[str, str]:
    return {
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(tmp / "home"),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    folder = tmp_path / "scratch"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.verdict}:{r.command[:60]}")
def test_verdict(row: Row, scratch: Path) -> None:
    _setup(scratch, proof=False)
    decision = explain("Bash", {"command": row.command}, row.rules, scratch)
    assert decision.verdict.value == row.verdict, decision.reason
    if row.verdict == Q and row.doubt is not None:
        assert decision.doubt is row.doubt, decision.reason


@pytest.mark.parametrize("row", [r for r in ROWS if r.proof is not None], ids=lambda r: r.command[:60])
def test_real_bash_does_what_the_row_says(row: Row, scratch: Path) -> None:
    missing = [n for n in row.needs if shutil.which(n) is None and not os.path.exists(n)]
    if missing and os.environ.get("CI") != "true":
        pytest.skip(f"{', '.join(missing)} not installed here")
    _setup(scratch, proof=True)
    subprocess.run(
        ["bash", "-c", row.proof_command or row.command],
        cwd=scratch,
        env=_env(scratch),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert row.proof is not None and row.proof(scratch), row.command


def test_a_deny_word_names_the_word_and_the_rule(scratch: Path) -> None:
    decision = explain(
        "Bash",
        {"command": 'perl -e \'$x="rm"; system($x, "-rf", "build")\''},
        {"allow": ["Bash"], "deny": DENY_RM},
        scratch,
    )
    assert decision.verdict.value == Q and decision.doubt
    assert "`rm`" in decision.reason and "Bash(rm *)" in decision.reason


def test_a_hard_link_is_the_file_a_read_deny_names(scratch: Path) -> None:
    _setup(scratch, proof=False)
    rules = {"allow": ["Read", "Grep", "Bash(ln *)"], "deny": ["Read(.env)"]}
    assert explain("Bash", {"command": "ln .env copy.txt"}, rules, scratch).verdict.value == A
    subprocess.run(["bash", "-c", "ln .env copy.txt"], cwd=scratch, check=True)
    assert "SECRET" in (scratch / "copy.txt").read_text()  # bash made another name of the secret
    assert explain("Read", {"path": "copy.txt"}, rules, scratch).verdict.value == D
    assert explain("Read", {"path": "data.txt"}, rules, scratch).verdict.value == A
    globbed = {"allow": ["Read"], "deny": ["Read(**/.env)"]}
    assert explain("Read", {"path": "copy.txt"}, globbed, scratch).doubt


def test_write_of_a_folder_or_a_nul_path_is_not_allowed(scratch: Path) -> None:
    rules = {"allow": ["Write(**)"]}
    assert explain("Write", {"path": "."}, rules, scratch).verdict.value == Q
    assert explain("Write", {"path": "a\x00b"}, rules, scratch).verdict.value == D
    assert explain("Write", {"path": "docs/a.md"}, rules, scratch).verdict.value == A


def test_new_protected_paths(scratch: Path) -> None:
    _setup(scratch, proof=False)
    rules = {"allow": ["Write(**)", "Read"]}
    for path in (".mcp.json", ".agents/x.md", "shipped.git/config", "vendor/lib/.git/config"):
        decision = explain("Write", {"path": path}, rules, scratch)
        assert decision.verdict.value == Q and decision.doubt, path
    assert explain("Read", {"path": "/proc/self/cwd/.env"}, rules, scratch).verdict.value == Q


def test_the_program_tables_hold_their_examples() -> None:
    from maia.permissions import programs, tables

    assert programs.check_examples() == []
    # a wrong example is caught
    broken = tables.Table(("sort",), writes=tables.TABLES[0].writes, match=("sort -n x",))
    saved = tables.TABLES
    try:
        tables.TABLES = (broken,)
        assert programs.check_examples() == ["sort: 'sort -n x' should be found"]
        # so is a wrong example of what "always" offers (git log is a prefix rule, not the exact command)
        git = tables.Table(("git",), always=tables.BY_NAME["git"].always, always_examples=(("git log -3", None),))
        tables.TABLES = (git,)
        assert programs.check_examples() == ["git: always offers 'git log *' for 'git log -3', not None"]
    finally:
        tables.TABLES = saved


async def test_grep_leaves_out_another_name_of_a_denied_file(scratch: Path) -> None:
    from maia.core.contracts import ToolContext
    from maia.tools.grep import GrepTool

    _setup(scratch, proof=False)  # notes.txt is a hard link to .env
    for rules in ({"allow": ["Grep"], "deny": ["Read(.env)"]}, {"allow": ["Grep"], "deny": ["Read(**/.env)"]}):
        ctx = ToolContext(launch=scratch, permissions=lambda name, value, r=rules: explain(name, value, r, scratch))
        out = await GrepTool().execute({"pattern": "SECRET", "path": "."}, ctx)
        assert "notes.txt" not in out and "left out" in out, out
