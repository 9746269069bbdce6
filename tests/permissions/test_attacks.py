"""Issue 11's attack table: each row's exact verdict, and each row run under real bash in a scratch
folder to prove the class is real (harmless payloads: a marker file instead of ``rm``)."""

from __future__ import annotations

import grp
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from maia.permissions import explain

A, Q, D = "allow", "ask", "deny"
DENY_TOUCH = ["Bash(touch *)"]

QUOTES = "quotes inside ${…} (tree-sitter reads them otherwise)"
HEREDOC = "backquotes in a here-document"
SUBSCRIPTS = "arithmetic and array subscripts"
PROMPT = "prompt expansion ${x@P}"
INDIRECT = "indirect expansion ${!x}"
ASSIGNMENTS = "assignment statements and NAME=value prefixes"
OPTIONS = "options that turn a reader into a writer or an executor"
GLOBALS = "subcommands past global options"
RUNNERS = "programs that run commands (opaque)"
CLUSTERS = "combined short options"
LINKS = "redirections after links or a folder change"
PROTECTED = "protected paths"
FAMILY = "Write, Edit and redirections are one family"
GRAMMAR = "other text the plain grammar refuses (~+, globbed programs, functions, traps, aliases…)"
CLASSES = (
    GRAMMAR,
    QUOTES,
    HEREDOC,
    SUBSCRIPTS,
    PROMPT,
    INDIRECT,
    ASSIGNMENTS,
    OPTIONS,
    GLOBALS,
    RUNNERS,
    CLUSTERS,
    LINKS,
    PROTECTED,
    FAMILY,
)


def _marker(tmp: Path) -> bool:
    return (tmp / "pwned").exists()


@dataclass(frozen=True)
class Row:
    """One attack: the command, the rules, the exact verdict, and how bash proves the class."""

    cls: str
    command: str
    rules: dict[str, list[str]]
    verdict: str
    doubt: bool | None = None  # for an ask: whether it comes from doubt
    setup: frozenset[str] = frozenset()
    proof: Callable[[Path], bool] | None = _marker  # None: no bash run (another row proves the class)
    proof_command: str | None = None  # run instead of the command (e.g. inside a terminal)
    needs: tuple[str, ...] = ()  # programs the proof needs
    probe: str | None = None  # a command that must succeed for the proof to be possible here
    root: bool = False  # the proof needs root (su, runuser)
    launch: str = ""  # the launch folder, inside the scratch folder

    def text(self, tmp: Path) -> str:
        return self.command.replace("{tmp}", str(tmp)).replace("{group}", grp.getgrgid(os.getgid()).gr_name)


def _file_says(name: str, text: str) -> Callable[[Path], bool]:
    return lambda tmp: (tmp / name).exists() and text in (tmp / name).read_text()


def _gone(name: str) -> Callable[[Path], bool]:
    return lambda tmp: not (tmp / name).exists()


def _pushed(tmp: Path) -> bool:
    result = subprocess.run(
        ["git", "--git-dir", str(tmp / "remote.git"), "rev-parse", "--verify", "main"], capture_output=True
    )
    return result.returncode == 0


ROWS: list[Row] = [
    # --- the issue's rows (payloads made harmless) -------------------------------------------------
    Row(QUOTES, """echo "${x:-'$(touch pwned)'}\"""", {"allow": ["Bash(echo *)"], "deny": DENY_TOUCH}, Q, True),
    Row(HEREDOC, "cat <<EOF\n`touch pwned`\nEOF", {"allow": ["Bash(cat *)"]}, Q, False),
    Row(HEREDOC, "cat <<EOF\n`touch pwned`\nEOF", {"allow": ["Bash(cat *)"], "deny": DENY_TOUCH}, Q, True),
    Row(SUBSCRIPTS, "printf -v 'a[$(touch pwned)]' %s x", {"allow": ["Bash(printf *)"]}, Q, False),
    Row(PROMPT, "echo ${x:='$(touch pwned)'} ${x@P}", {"allow": ["Bash(echo *)"]}, Q, False),
    Row(ASSIGNMENTS, "BASH_CMDS[ls]={touch}; ls pwned", {"allow": ["Bash(ls *)"]}, Q, False),
    Row(ASSIGNMENTS, "PATH={tmp}/evil; ls", {"allow": ["Bash(ls *)"]}, Q, False, frozenset({"evil"})),
    Row(
        OPTIONS,
        "git log --output=.env -1",
        {"allow": ["Bash(git log *)"], "deny": ["Write(.env)"]},
        D,  # the file git log writes is judged (issue 26): the Write deny applies
        True,
        frozenset({"git"}),
        lambda tmp: (tmp / ".env").exists(),
    ),
    Row(
        GLOBALS,
        "git -c color.ui=never push origin main",
        {"ask": ["Bash(git push *)"]},
        Q,
        False,
        frozenset({"git"}),
        _pushed,
    ),
    Row(
        OPTIONS,
        "echo touch | xargs -I ls sh -c 'ls pwned'",
        {"allow": ["Bash(echo *)", "Bash(xargs *)", "Bash(sh *)", "Bash(ls *)"]},
        Q,
        False,
    ),
    # --- more of each class ----------------------------------------------------------------------------
    Row(GRAMMAR, "cp ~+/f.txt pwned", {"allow": ["Bash(cp *)"]}, Q, False),
    Row(
        GRAMMAR,
        "/usr/bin/tou?h pwned",
        {"allow": ["Bash(ls *)"], "deny": DENY_TOUCH},
        Q,
        True,
        needs=("/usr/bin/touch",),
    ),
    Row(GRAMMAR, "ls() { touch pwned; }; ls", {"allow": ["Bash(ls *)"]}, Q, False),
    Row(GRAMMAR, "trap 'touch pwned' EXIT", {"allow": ["Bash(trap *)"]}, Q, False),
    Row(GRAMMAR, "eval 'touch pwned'", {"allow": ["Bash(eval *)"]}, Q, False),
    Row(GRAMMAR, "eval 'touch pwned'", {"allow": ["Bash(eval *)"], "deny": DENY_TOUCH}, D),
    Row(GRAMMAR, "coproc touch pwned", {"allow": ["Bash(coproc *)"]}, Q, False),
    Row(
        GRAMMAR,
        "shopt -s expand_aliases\nalias ls='touch pwned'\nls",
        {"allow": ["Bash(shopt *)", "Bash(alias *)", "Bash(ls *)"]},
        Q,
        False,
    ),
    Row(GRAMMAR, "echo x > {tmp}/pwn{e,}d", {"allow": ["Bash(echo *)", "Redirect"]}, Q, False, proof=None),
    Row(GRAMMAR, "touch pwn{e,}d", {"allow": ["Bash(touch pwned)"]}, Q, False),
    Row(QUOTES, """echo "${x:-'$(touch pwned)'}\"""", {"allow": ["Bash(echo *)"]}, Q, False),
    Row(SUBSCRIPTS, "[[ 'a[$(touch pwned)]' -eq 1 ]]", {"allow": ["Bash([[ *)"]}, Q, False),
    Row(SUBSCRIPTS, "test -v 'a[$(touch pwned)]'", {"allow": ["Bash(test *)"]}, Q, False),
    Row(SUBSCRIPTS, "[ -v 'a[$(touch pwned)]' ]", {"allow": ["Bash([ *)"]}, Q, False),
    Row(SUBSCRIPTS, "read 'a[$(touch pwned)]' <<< x", {"allow": ["Bash(read *)"]}, Q, False),
    Row(SUBSCRIPTS, "x='a[$(touch pwned)]'; echo $((x))", {"allow": ["Bash(echo *)"], "deny": DENY_TOUCH}, Q, True),
    Row(PROMPT, "echo ${x:='$(touch pwned)'} ${x@P}", {"allow": ["Bash(echo *)"], "deny": DENY_TOUCH}, Q, True),
    Row(INDIRECT, "x='a[$(touch pwned)]'; echo ${!x}", {"allow": ["Bash(echo *)"], "deny": DENY_TOUCH}, Q, True),
    Row(
        ASSIGNMENTS,
        "BASH_ENV=./payload.sh bash -c true",
        {"allow": ["Bash(bash -c *)", "Bash(true)"], "deny": DENY_TOUCH},
        Q,
        True,
        frozenset({"scripts"}),
    ),
    Row(
        ASSIGNMENTS,
        "BASH_ENV=./payload.sh bash -c true",
        {"allow": ["Bash(bash -c *)", "Bash(true)"], "inertVariables": ["BASH_ENV"]},
        Q,
        False,
        frozenset({"scripts"}),
    ),
    Row(OPTIONS, "git -c alias.x='!touch pwned' x", {"allow": ["Bash(git *)"]}, Q, False, frozenset({"git"})),
    Row(
        OPTIONS,
        "git grep --open-files-in-pager='touch pwned' hello",
        {"allow": ["Bash(git grep *)"], "deny": DENY_TOUCH},
        Q,
        True,
        frozenset({"git"}),
    ),
    Row(OPTIONS, "find . -maxdepth 0 -exec touch pwned \\;", {"allow": ["Bash(find *)"]}, Q, False),
    Row(OPTIONS, "find . -maxdepth 0 -exec touch pwned \\;", {"allow": ["Bash(find *)"], "deny": DENY_TOUCH}, D),
    Row(OPTIONS, "find . -maxdepth 0 -fprint pwned", {"allow": ["Bash(find *)"]}, Q, False),
    Row(OPTIONS, "find victim -delete", {"allow": ["Bash(find *)"]}, Q, False, frozenset({"files"}), _gone("victim")),
    Row(
        OPTIONS,
        "sed -i s/hello/bye/ f.txt",
        {"allow": ["Bash(sed *)"]},
        Q,
        False,
        frozenset({"files"}),
        _file_says("f.txt", "bye"),
    ),
    Row(OPTIONS, "echo x | sed 's/.*/touch pwned/e'", {"allow": ["Bash(echo *)", "Bash(sed *)"]}, Q, False),
    Row(OPTIONS, "echo x | sed 'w pwned'", {"allow": ["Bash(echo *)", "Bash(sed *)"]}, Q, False),
    Row(OPTIONS, "sort -o pwned /dev/null", {"allow": ["Bash(sort *)"]}, Q, False),
    Row(
        OPTIONS,
        "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='touch pwned' f.txt",
        {"allow": ["Bash(tar *)"]},
        Q,
        False,
        frozenset({"files"}),
    ),
    Row(OPTIONS, "tar -I ./compress.sh -cf a.tar f.txt", {"allow": ["Bash(tar *)"]}, Q, False, frozenset({"scripts"})),
    Row(OPTIONS, "tar cIf ./compress.sh a.tar f.txt", {"allow": ["Bash(tar *)"]}, Q, False, frozenset({"scripts"})),
    Row(
        OPTIONS,
        "tar -xf archive.tar --to-command='touch pwned'",
        {"allow": ["Bash(tar *)"]},
        Q,
        False,
        frozenset({"archive"}),
    ),
    Row(OPTIONS, "rg --pre ./pre.sh hello .", {"allow": ["Bash(rg *)"]}, Q, False, frozenset({"scripts"})),
    Row(
        OPTIONS,
        "rsync -e 'sh -c \"touch pwned\" --' f.txt host:x",
        {"allow": ["Bash(rsync *)"]},
        Q,
        False,
        frozenset({"files"}),
        needs=("rsync",),
    ),
    Row(
        OPTIONS,
        "zip -q out.zip f.txt -T -TT 'sh -c \"touch pwned\" --'",
        {"allow": ["Bash(zip *)"]},
        Q,
        False,
        frozenset({"files"}),
    ),
    Row(
        OPTIONS,
        "less '+!touch pwned' f.txt",
        {"allow": ["Bash(less *)"]},
        Q,
        False,
        frozenset({"files"}),
        proof_command=(
            "(sleep 1; printf '\\n'; sleep 1; printf q) | script -qc \"less '+!touch pwned' f.txt\" /dev/null"
        ),
        needs=("less", "script"),
    ),
    Row(OPTIONS, "vim -es -c '!touch pwned' -c 'qa!'", {"allow": ["Bash(vim *)"]}, Q, False, needs=("vim",)),
    Row(OPTIONS, "make --eval='x:;touch pwned' x", {"allow": ["Bash(make *)"]}, Q, False, needs=("make",)),
    Row(OPTIONS, "make -f - x <<'EOF'\nx:\n\ttouch pwned\nEOF", {"allow": ["Bash(make *)"]}, Q, False, needs=("make",)),
    Row(OPTIONS, "make CC='touch pwned' -f cc.mk", {"allow": ["Bash(make *)"]}, Q, False, frozenset({"makefile"})),
    Row(OPTIONS, "awk 'BEGIN{system(\"touch pwned\")}'", {"allow": ["Bash(awk *)"]}, Q, False),
    Row(
        OPTIONS,
        "ls | xargs git log",
        {"allow": ["Bash(ls *)", "Bash(xargs *)", "Bash(git log *)"]},
        Q,
        False,
        proof=None,
    ),
    Row(OPTIONS, "git log *", {"allow": ["Bash(git log *)"]}, Q, False, proof=None),
    Row(
        GLOBALS,
        "git --no-pager -c x.y=z push origin main",
        {"ask": ["Bash(git push *)"]},
        Q,
        False,
        frozenset({"git"}),
        _pushed,
    ),
    Row(GLOBALS, "git -C . push origin main", {"ask": ["Bash(git push *)"]}, Q, False, frozenset({"git"}), _pushed),
    Row(GLOBALS, "git -C . push origin main", {"allow": ["Bash(git *)"], "deny": ["Bash(git push *)"]}, D, proof=None),
    Row(GLOBALS, "kubectl -n prod delete pod x", {"deny": ["Bash(kubectl delete *)"]}, D, proof=None),
    Row(GLOBALS, "terraform -chdir=infra apply", {"deny": ["Bash(terraform apply *)"]}, D, proof=None),
    Row(GLOBALS, "npm --registry http://127.0.0.1:9 publish", {"deny": ["Bash(npm publish *)"]}, D, proof=None),
    Row(GLOBALS, "docker --debug run alpine", {"deny": ["Bash(docker run *)"]}, D, proof=None),
    Row(GLOBALS, "git -C /tmp status", {"allow": ["Bash(git status)"]}, Q, False, proof=None),
    Row(GLOBALS, "git -C /tmp status", {"allow": ["Bash(git status)"], "deny": DENY_TOUCH}, Q, True, proof=None),
    # programs that run commands: never allowed on the outer rule alone
    Row(RUNNERS, "script -qc 'touch pwned' /dev/null", {"allow": ["Bash(script *)"], "deny": DENY_TOUCH}, D),
    Row(RUNNERS, "script -qc 'touch pwned' /dev/null", {"allow": ["Bash(script *)"]}, Q, False),
    Row(
        RUNNERS,
        "strace -f -o /dev/null touch pwned",
        {"allow": ["Bash(strace *)"]},
        Q,
        False,
        probe="strace -o /dev/null true",
    ),
    Row(RUNNERS, "ltrace -o /dev/null touch pwned", {"allow": ["Bash(ltrace *)"]}, Q, False, needs=("ltrace",)),
    Row(
        RUNNERS, "valgrind -q touch pwned", {"allow": ["Bash(valgrind *)"], "deny": DENY_TOUCH}, D, needs=("valgrind",)
    ),
    Row(
        RUNNERS, "parallel touch ::: pwned", {"allow": ["Bash(parallel *)"], "deny": DENY_TOUCH}, D, needs=("parallel",)
    ),
    Row(RUNNERS, "parallel 'touch {}' ::: pwned", {"allow": ["Bash(parallel *)"]}, Q, False, needs=("parallel",)),
    Row(RUNNERS, "setarch {arch} touch pwned", {"allow": ["Bash(setarch *)"]}, Q, False, needs=("setarch",)),
    Row(
        RUNNERS,
        "unshare -r touch pwned",
        {"allow": ["Bash(unshare *)"], "deny": DENY_TOUCH},
        D,
        probe="unshare -r true",
    ),
    Row(RUNNERS, "setpriv --nnp touch pwned", {"allow": ["Bash(setpriv *)"]}, Q, False, needs=("setpriv",)),
    Row(RUNNERS, "prlimit --nofile=100 touch pwned", {"allow": ["Bash(prlimit *)"]}, Q, False, needs=("prlimit",)),
    Row(RUNNERS, "fakeroot touch pwned", {"allow": ["Bash(fakeroot *)"], "deny": DENY_TOUCH}, D, needs=("fakeroot",)),
    Row(
        RUNNERS,
        "dbus-run-session -- touch pwned",
        {"allow": ["Bash(dbus-run-session *)"]},
        Q,
        False,
        probe="dbus-run-session -- true",
    ),
    Row(
        RUNNERS,
        "gdb -batch -ex 'shell touch pwned'",
        {"allow": ["Bash(gdb *)"], "deny": DENY_TOUCH},
        Q,
        True,
        needs=("gdb",),
    ),
    Row(
        RUNNERS,
        "ssh -o ProxyCommand='touch pwned' -o BatchMode=yes x",
        {"allow": ["Bash(ssh *)"], "deny": DENY_TOUCH},
        Q,
        True,
        needs=("ssh",),
    ),
    Row(
        RUNNERS,
        "tmux -L maia-permissions-test new-session -d 'touch pwned'",
        {"allow": ["Bash(tmux *)"]},
        Q,
        False,
        needs=("tmux",),
    ),
    Row(RUNNERS, "screen -dm touch pwned", {"allow": ["Bash(screen *)"]}, Q, False, needs=("screen",)),
    Row(RUNNERS, "rbash -c 'touch pwned'", {"allow": ["Bash(rbash *)"], "deny": DENY_TOUCH}, D, needs=("rbash",)),
    Row(RUNNERS, "su -c 'touch pwned'", {"allow": ["Bash(su *)"], "deny": DENY_TOUCH}, D, root=True),
    Row(RUNNERS, "runuser -u root -- touch pwned", {"allow": ["Bash(runuser *)"], "deny": DENY_TOUCH}, D, root=True),
    Row(
        RUNNERS,
        "sg {group} -c 'touch pwned'",
        {"allow": ["Bash(sg *)"], "deny": DENY_TOUCH},
        D,
        needs=("sg",),
        probe="sg {group} -c true",
    ),
    Row(RUNNERS, 'python3 -c \'open("pwned", "w")\'', {"allow": ["Bash(python3 *)"], "deny": DENY_TOUCH}, Q, True),
    Row(RUNNERS, 'python3 -Bc \'open("pwned", "w")\'', {"allow": ["Bash(python3 *)"]}, Q, False),
    Row(
        RUNNERS,
        "perl -e 'open(F, \">pwned\")'",
        {"allow": ["Bash(perl *)"], "deny": DENY_TOUCH},
        Q,
        True,
        needs=("perl",),
    ),
    Row(
        RUNNERS,
        'node -e \'require("fs").writeFileSync("pwned", "")\'',
        {"allow": ["Bash(node *)"]},
        Q,
        False,
        needs=("node",),
    ),
    Row(RUNNERS, "echo 'touch pwned' | bash -", {"allow": ["Bash(echo *)", "Bash(bash *)"], "deny": DENY_TOUCH}, D),
    Row(RUNNERS, "printf 'touch pwned' | bash -", {"allow": ["Bash(printf *)", "Bash(bash *)"]}, Q, False),
    Row(RUNNERS, "echo 'touch pwned' | sh /dev/stdin", {"allow": ["Bash(echo *)", "Bash(sh *)"]}, Q, False),
    Row(
        RUNNERS,
        "bash -s < payload.sh",
        {"allow": ["Bash(bash *)"], "deny": DENY_TOUCH},
        Q,
        True,
        frozenset({"scripts"}),
    ),
    Row(RUNNERS, "source ./payload.sh", {"allow": ["Bash(source *)"]}, Q, False, frozenset({"scripts"})),
    Row(RUNNERS, ". ./payload.sh", {"allow": ["Bash(. *)"], "deny": DENY_TOUCH}, Q, True, frozenset({"scripts"})),
    Row(
        RUNNERS,
        "sh <<'EOF'\ntouch pwned\nEOF",
        {"allow": ["Bash(sh *)"], "deny": DENY_TOUCH},
        D,
    ),
    Row(RUNNERS, "sh <<'EOF'\ntouch pwned\nEOF", {"allow": ["Bash(sh *)", "Bash(touch *)"]}, Q, False),
    # combined short options are read as the program reads them
    Row(CLUSTERS, "timeout -vs KILL 5 touch pwned", {"allow": ["Bash(timeout *)"], "deny": DENY_TOUCH}, D),
    Row(CLUSTERS, "timeout -vs KILL 5 touch pwned", {"allow": ["Bash(timeout *)"]}, Q, False),
    Row(CLUSTERS, "env -S'touch pwned'", {"allow": ["Bash(env *)"], "deny": DENY_TOUCH}, D),
    Row(CLUSTERS, "env -iS'touch pwned'", {"allow": ["Bash(env *)"], "deny": DENY_TOUCH}, D, probe="env -iS'true'"),
    Row(CLUSTERS, "nice -n5 touch pwned", {"allow": ["Bash(nice *)"], "deny": DENY_TOUCH}, D),
    Row(CLUSTERS, "stdbuf -oL touch pwned", {"allow": ["Bash(stdbuf *)"], "deny": DENY_TOUCH}, D),
    Row(CLUSTERS, "ionice -c3 touch pwned", {"allow": ["Bash(ionice *)"], "deny": DENY_TOUCH}, D, needs=("ionice",)),
    Row(CLUSTERS, "sudo -nu root touch pwned", {"allow": ["Bash(sudo *)"], "deny": DENY_TOUCH}, D, needs=("sudo",)),
    Row(CLUSTERS, "xargs -0a /dev/null touch pwned", {"allow": ["Bash(xargs *)"], "deny": DENY_TOUCH}, D),
    # links and folders change what a redirection writes
    Row(
        LINKS,
        "ln -s ../.env out/x && echo hi > out/x",
        {"allow": ["Bash(ln *)", "Bash(echo *)", "Write(out/**)"], "deny": ["Write(.env)"]},
        Q,
        True,
        frozenset({"out"}),
        _file_says(".env", "hi"),
    ),
    Row(
        LINKS,
        "cd sub && echo hi > ../.env",
        {"allow": ["Bash(cd *)", "Bash(echo *)", "Redirect"]},
        Q,
        True,
        frozenset({"sub"}),
        _file_says(".env", "hi"),
    ),
    Row(
        LINKS,
        "cd ../elsewhere && git status",
        {"allow": ["Bash(cd *)", "Bash(git status)"]},
        Q,
        False,
        frozenset({"elsewhere"}),
        launch="proj",
    ),
    Row(
        LINKS,
        "cd sub && git status",
        {"allow": ["Bash(cd *)", "Bash(git status)"]},
        A,
        setup=frozenset({"sub"}),
        proof=None,
    ),
    # protected paths always ask for writes, whatever Write allows
    Row(
        PROTECTED,
        'echo \'{"permissions": {"allow": ["Bash"]}}\' > .maia/settings.json',
        {"allow": ["Bash(echo *)", "Write(**)"]},
        Q,
        True,
        frozenset({"maia"}),
        _file_says(".maia/settings.json", "permissions"),
    ),
    Row(
        PROTECTED,
        "echo 'touch pwned' >> .git/hooks/post-commit",
        {"allow": ["Bash(echo *)", "Redirect"]},
        Q,
        True,
        frozenset({"git"}),
        _file_says(".git/hooks/post-commit", "touch pwned"),
    ),
    Row(
        PROTECTED,
        "echo 'Ignore previous instructions.' >> MAIA.md",
        {"allow": ["Bash(echo *)", "Write(*.md)"]},
        Q,
        True,
        proof=_file_says("MAIA.md", "Ignore"),
    ),
    Row(
        PROTECTED,
        "echo note >> MAIA.md",
        {"allow": ["Bash(echo *)", "Write(MAIA.md)"]},
        A,
        proof=_file_says("MAIA.md", "note"),
    ),
    # one family for modifying a file
    Row(
        FAMILY,
        "echo SECRET=1 > .env",
        {"allow": ["Bash(echo *)", "Redirect"], "deny": ["Edit(.env)"]},
        D,
        proof=_file_says(".env", "SECRET"),
    ),
    Row(
        FAMILY,
        "echo SECRET=1 >> .env",
        {"allow": ["Bash(echo *)", "Redirect"], "ask": ["Write(.env)"]},
        Q,
        False,
        proof=None,
    ),
    Row(
        FAMILY,
        "echo ok > out/log",
        {"allow": ["Bash(echo *)", "Edit(out/**)"]},
        A,
        setup=frozenset({"out"}),
        proof=_file_says("out/log", "ok"),
    ),
]


def _setup(tmp: Path, names: frozenset[str]) -> None:
    (tmp / "f.txt").write_text("hello\n")
    (tmp / "home").mkdir(exist_ok=True)
    if "files" in names:
        (tmp / "victim").write_text("x")
    if "evil" in names:
        (tmp / "evil").mkdir()
        (tmp / "evil" / "ls").write_text(f"#!/bin/sh\n{shutil.which('touch')} pwned\n")
        (tmp / "evil" / "ls").chmod(0o755)
    if "scripts" in names:
        for name, body in (
            ("payload.sh", "touch pwned\n"),
            ("compress.sh", "#!/bin/sh\ntouch pwned\ncat\n"),
            ("pre.sh", '#!/bin/sh\ntouch pwned\ncat "$1"\n'),
        ):
            (tmp / name).write_text(body)
            (tmp / name).chmod(0o755)
    if "archive" in names:
        subprocess.run(["tar", "-cf", "archive.tar", "f.txt"], cwd=tmp, check=True)
    if "makefile" in names:
        (tmp / "cc.mk").write_text("all:\n\t$(CC) x\n")
    if "out" in names:
        (tmp / "out").mkdir()
    if "sub" in names:
        (tmp / "sub").mkdir()
    if "elsewhere" in names:
        (tmp / "proj").mkdir()
        # a repository nobody checked: its configuration runs a command on `git status`
        (tmp / "elsewhere").mkdir()
        if "proof" in names:
            subprocess.run(["git", "init", "-q"], cwd=tmp / "elsewhere", env=_env(tmp), check=True)
            subprocess.run(
                ["git", "config", "core.fsmonitor", f"touch {tmp}/pwned; false"],
                cwd=tmp / "elsewhere",
                env=_env(tmp),
                check=True,
            )
    if "maia" in names:
        (tmp / ".maia").mkdir()
    if "git" in names:
        env = _env(tmp)
        for command in (
            ["git", "init", "-q", "-b", "main"],
            ["git", "add", "f.txt"],
            ["git", "commit", "-q", "-m", "first"],
            ["git", "init", "-q", "--bare", "remote.git"],
            ["git", "remote", "add", "origin", str(tmp / "remote.git")],
        ):
            subprocess.run(command, cwd=tmp, env=env, check=True, capture_output=True)


def _env(tmp: Path) -> dict[str, str]:
    venv_bin = str(Path(sys.executable).parent)
    return {
        "PATH": f"{venv_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(tmp / "home"),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "TERM": "xterm",
    }


def _command(row: Row, tmp: Path) -> str:
    text = row.text(tmp)
    return text.replace("{touch}", shutil.which("touch") or "/usr/bin/touch").replace("{arch}", os.uname().machine)


# programs a machine may lack (coreutils, findutils, sed, tar, bash and python3 are assumed)
_NOT_CORE = frozenset(
    {
        "git",
        "zip",
        "script",
        "strace",
        "setarch",
        "setpriv",
        "prlimit",
        "dbus-run-session",
        "fakeroot",
        "gdb",
        "ssh",
        "tmux",
        "rbash",
        "sg",
        "node",
        "perl",
        "vim",
        "make",
        "less",
        "awk",
        "unshare",
    }
)


def _rules(row: Row) -> dict[str, list[str]]:
    return row.rules


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.verdict}:{r.command[:60]}")
def test_verdict(row: Row, tmp_path: Path) -> None:
    _setup(tmp_path, row.setup - {"git", "archive"})  # the engine never looks inside them
    decision = explain("Bash", {"command": _command(row, tmp_path)}, _rules(row), tmp_path / row.launch)
    assert decision.verdict.value == row.verdict, decision.reason
    if row.verdict == Q and row.doubt is not None:
        assert decision.doubt is row.doubt, decision.reason
    assert decision.verdict.value != A or row.verdict == A


PROVED = [r for r in ROWS if r.proof is not None]


@pytest.mark.parametrize("row", PROVED, ids=lambda r: f"{r.cls[:20]}:{r.command[:60]}")
def test_real_bash_proves_the_class(row: Row, tmp_path: Path) -> None:
    first = row.command.split()[0]
    needs = {*row.needs, *(["git"] if "git" in row.setup else []), *([first] if first in _NOT_CORE else [])}
    missing = sorted(p for p in needs if shutil.which(p) is None)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: another row proves this class")
    if row.root and os.geteuid() != 0:
        pytest.skip("needs root: another row proves this class")
    _setup(tmp_path, row.setup | {"proof"})
    env = _env(tmp_path)
    if row.probe is not None:
        probe_text = row.probe.replace("{group}", grp.getgrgid(os.getgid()).gr_name)
        probe = subprocess.run(
            ["bash", "-c", probe_text], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )
        if probe.returncode != 0:
            pytest.skip(f"{row.probe!r} does not work here: another row proves this class")
    command = row.proof_command or _command(row, tmp_path)
    try:
        subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path / row.launch,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
        )
        assert row.proof is not None
        deadline = time.monotonic() + 15  # tmux and friends run the payload in the background
        while not row.proof(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert row.proof(tmp_path), f"bash did not do what the row says: {command!r}"
    finally:
        if "tmux" in command:
            subprocess.run(["tmux", "-L", "maia-permissions-test", "kill-server"], capture_output=True, env=env)


def test_every_class_has_rows_and_a_real_proof() -> None:
    for cls in CLASSES:
        assert any(r.cls == cls for r in ROWS), cls
        assert any(r.cls == cls and r.proof is not None and not r.needs and not r.root for r in ROWS), cls


def test_nothing_in_the_table_is_allowed_but_the_named_writes() -> None:
    allowed = [r.command for r in ROWS if r.verdict == A]
    assert allowed == ["cd sub && git status", "echo note >> MAIA.md", "echo ok > out/log"]
