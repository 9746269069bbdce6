"""The Bash verdict of every command the permission tests quote, under four rule sets, against a baseline.

``decisions_baseline.tsv`` holds the verdicts before the program tables became data (issue 26): one
line per command, a letter per rule set (``A`` allow, ``Q`` ask, ``D`` deny) then the command's
``repr``. ``test_decisions_baseline.py`` decides them all again: a command allowed now that was asked
or denied in the baseline is a loosening, and fails. Tightenings are fine (print them with
``--compare``). After a deliberate, reviewed loosening, write the baseline again with ``--dump``.

    .venv/bin/python -m tests.permissions.decisions --compare tests/permissions/decisions_baseline.tsv
    .venv/bin/python -m tests.permissions.decisions --dump tests/permissions/decisions_baseline.tsv
"""

from __future__ import annotations

import argparse
import ast
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SOURCES = [
    *sorted((ROOT / "tests" / "permissions").glob("test_*.py")),
    *sorted((ROOT / "tests" / "commands").glob("test_permissions*.py")),
    *sorted((ROOT / "tests" / "agent").glob("test_approval*.py")),
]

# the programs whose knowledge the tables hold, with the options and words their dangers name: every
# spelling is tried under a rule naming the program, so a danger lost in a rewrite shows as an allow
PROBES: dict[str, list[str]] = {
    "git": [
        "-c core.pager=x log",
        "-c alias.x=!sh x",
        "--git-dir=x status",
        "--work-tree=x status",
        "--exec-path=x status",
        "-C /tmp status",
        "-C vendor/lib status",
        "-C sub status",
        "--bogus status",
        "log --output=x",
        "log --ext-diff",
        "diff --textconv",
        "fetch --upload-pack=x .",
        "push --receive-pack=x",
        "grep -O x",
        "grep --open-files-in-pager=x y",
        "difftool -x x",
        "difftool --extcmd=x",
        "mergetool -t x",
        "rebase -x x",
        "rebase --exec x",
        "clone -u x y",
        "clone -c core.x=y z",
        "clone --template=x y",
        "clone --separate-git-dir=x y",
        "ls-remote -u x y",
        "commit -F x",
        "commit --file=x",
        "tag -F x t",
        "tag -d t",
        "tag -a t",
        "tag --delete t",
        "branch -d x",
        "branch -D x",
        "branch -m x",
        "branch --delete x",
        "branch -u x",
        "branch --set-upstream-to=x",
        "branch --track x",
        "branch -f x",
        "remote --delete x",
        "diff --no-index a b",
        "add --pathspec-from-file=x",
        "config --file x a.b c",
        "filter-branch --tree-filter x",
        "submodule foreach x",
        "bisect run x",
        "status",
        "log -3",
        "branch",
        "branch -a",
        "tag",
        "tag -l",
        "diff --text",
    ],
    "find": ["-exec x {} ;", "-execdir x {} +", "-ok x ;", "-okdir x ;", "-delete", "-fprint x", "-fls x", ". -name x"],
    "sed": [
        "-i s/a/b/ f",
        "-ibak s/a/b/ f",
        "--in-place s/a/b/ f",
        "--in-place=.bak s/a/b/ f",
        "-f x f",
        "--file=x f",
        "e f",
        "'s/a/b/e' f",
        "'w x' f",
        "'s/a/b/w x' f",
        "-n p f",
        "'1d;$d' f",
        "-e p -e 's/x/y/w z' f",
        "'y/ab/cd/' f",
        "-E 's/(a)/\\1/g' f",
    ],
    "gsed": ["-i s/a/b/ f", "'w x' f"],
    "awk": [
        "'{print}' f",
        "'BEGIN{system(\"x\")}'",
        "-f x f",
        "--file=x f",
        "-e '{print}' f",
        "'{print > \"x\"}' f",
        "'{print | \"x\"}' f",
        "'{getline}' f",
        "-i x '{print}'",
        "-l x '{print}'",
    ],
    "gawk": ["'{print}' f", "-E x"],
    "make": [
        "--eval=x",
        "--ev=x",
        "-E x",
        "-sE x",
        "-f -",
        "-f /tmp/x",
        "-f Makefile",
        "-C /tmp",
        "-C sub",
        "-I /tmp",
        "CC=x",
        "X:=y all",
        "-j4 test",
        "-k test",
    ],
    "gmake": ["--eval=x", "CC=x"],
    "go": [
        "test -exec x",
        "test --exec=x",
        "build -toolexec=x",
        "build -overlay x",
        "-C /tmp build",
        "build -modfile=/tmp/x",
        "-C sub build",
        "test ./...",
        "vet",
    ],
    "npm": [
        "--script-shell=x run t",
        "--node-options=x test",
        "--userconfig x test",
        "--globalconfig=x test",
        "exec --call x",
        "--prefix /tmp test",
        "-C /tmp test",
        "--prefix sub test",
        "test",
        "run build",
    ],
    "pnpm": ["--script-shell=x run t", "-C /tmp test"],
    "yarn": ["--script-shell=x run t", "--prefix /tmp test"],
    "cargo": ["--config x build", "build --config=x", "--manifest-path /tmp/x build", "-C /tmp build", "build"],
    "terraform": ["-chdir=/tmp plan", "-chdir=sub plan", "plan", "plan -chdir=/tmp"],
    "zip": ["-TT x a.zip f", "-TTx a.zip f", "--unzip-command=x -T a.zip f", "-r a.zip src"],
    "less": ["+!x f", "+/x f", "-o x f", "-O x f", "-k x f", "--log-file=x f", "--lesskey-src=x f", "-R f", "-Ro x f"],
    "more": ["+!x f", "f"],
    "most": ["+x f", "f"],
    "vim": ["+!x f", "-c x f", "--cmd x f", "-S x f", "-s x f", "-u x f", "-U x f", "-w x f", "-W x f", "-e f", "-E f"],
    "vi": ["-c x f", "f"],
    "nvim": ["+x f", "--startuptime x f", "f"],
    "view": ["-c x f", "f"],
    "vimdiff": ["-c x a b", "a b"],
    "gvim": ["-c x f", "f"],
    # what programs run besides themselves (tables' Runs and opaque markers)
    "tar": [
        "-I x -xf a.tar",
        "xIf x a.tar",
        "-F x -cf a.tar src",
        "--to-command=x -xf a.tar",
        "--to-com=x -xf a.tar",
        "--checkpoint-action=exec=x -cf a.tar src",
        "--use-compress-program=x -xf a.tar",
        "--use=x -xf a.tar",
        "--info-script=x -tf a.tar",
        "--new-volume-script=x -tf a.tar",
        "--rsh-command=x -tf h:a.tar",
        "--rmt-command=x -tf h:a.tar",
        "-tf a.tar",
        "-xOf a.tar f",
    ],
    "gcc": ["-wrapper gdb,--args a.c", "-fplugin=x.so a.c", "-B/tmp a.c", "--plugin x a.c", "-specs=x a.c", "-c a.c"],
    "cc": ["-wrapper x a.c", "-c a.c"],
    "clang": ["-fplugin=x a.c", "-O2 a.c"],
    "npx": ["-c 'rm -rf build'", "--call=x", "--call x", "eslint ."],
    "cmake": ["-E env X=1 rm -rf build", "-E time make", "-E chdir build make", "-E echo x", "-S . -B build"],
    "gdb": ["x", "-batch -ex run x"],
    "tmux": ["new -d 'rm -rf build'", "ls"],
    "parallel": ["rm ::: build"],
    "source": ["./env.sh"],
    ".": ["./env.sh"],
    "sqlite3": ["db .tables"],
    "perf": ["stat rm -rf build"],
    "ssh-agent": ["rm -rf build"],
    "valgrind": ["rm -rf build"],
    "hyperfine": ["'rm -rf build'"],
    "ed": ["f"],
    "emacs": ["--eval x"],
    "expect": ["-c x"],
    "nsenter": ["-t 1 rm x"],
    "crontab": ["-l"],
    "at": ["now"],
    "timeout": ["5 rm -rf build", "5 ls"],
    # interpreters (tables' interpreter)
    "python": ["-c 'import os'", "-", "-m pytest", "script.py", "-W x -c y"],
    "python3": ["-c x", "-Ic x", "-m http.server"],
    "pypy3": ["-c x"],
    "python3.12": ["-c x"],
    "perl": ["-e x", "-E x", "-Mx x.pl", "-d x.pl", "-ne 'print' f", "x.pl"],
    "ruby": ["-e x", "x.rb"],
    "node": ["-e x", "--eval=x", "-p x", "--print x", "--require x app.js", "app.js"],
    "nodejs": ["-e x"],
    "bun": ["-e x", "run build", "test"],
    "php": ["-r x", "-B x", "-d x=1 a.php", "a.php"],
    "lua": ["-e x", "a.lua"],
    "luajit": ["-e x"],
    "Rscript": ["-e x", "a.R"],
    "julia": ["-e x", "-L x a.jl", "a.jl"],
    "elixir": ["-e x"],
    "guile": ["-c x", "-e x a.scm"],
    "psql": ["db", "-c x"],
    "mysql": ["-e x", "--execute=x", "db"],
    "osascript": ["-e x"],
    # files written and programs run, tables added with the data (issue 26)
    "man": ["-P 'rm -rf build' ls", "--pager=x ls", "-Hx ls", "ls", "5 crontab"],
    "scp": ["-S x a h:b", "-F cfg a h:b", "-o ProxyCommand=x a h:b", "h:x .env", "a h:b"],
    "sftp": ["-D x h", "h"],
    "pandoc": ["--filter=x a.md", "-L x.lua a.md", "-o .env a.md", "a.md"],
    "curl": ["-K cfg https://x", "--cookie-jar .env https://x", "--stderr .env https://x", "-s https://x"],
    "strace": ["-o .env ls", "-f ls"],
    "tcpdump": ["-w .env", "-r a.pcap"],
    "gpg": ["-o .env -d x", "--list-keys"],
    "ssh-keygen": ["-f .env", "-l -f k.pub"],
    "openssl": ["enc -engine x -in a", "dgst -provider x a", "version", "enc -in a -out .env"],
    "yq": ["-i '.a = 1' .env", "e -i '.a' f.yaml", "'.a' f.yaml"],
    # global options before a subcommand (tables' globals)
    "kubectl": ["-n prod get pods", "-n prod delete pod x", "--context x get pods", "--kubeconfig x get pods"],
    "helm": ["-n x list", "--kube-context x list", "--kubeconfig x list", "--debug list"],
    "docker": ["--debug ps", "-H x ps", "--config x ps", "-D run x", "ps -a"],
    "podman": ["--debug ps", "--config x ps"],
    "aws": ["--profile x s3 ls", "--endpoint-url x s3 ls", "--debug s3 rm s3://x", "s3 ls"],
}
GIT_RUNS = [
    "-c core.editor=x commit",
    "-c core.sshCommand=x fetch",
    "-c alias.st=!x st",
    "-c user.name=x commit",
    "-c diff.x.textconv=x diff",
    "--config-env=core.pager=X log",
    "rebase -x 'rm -rf build' HEAD~1",
    "rebase --exec='x' HEAD~1",
    "rebase -ix HEAD~1",
    "filter-branch --tree-filter x",
    "filter-branch --msg-filter x",
    "difftool -x x",
    "difftool --extcmd=x",
    "difftool --ext=x",
    "mergetool -t x",
    "bisect run rm -rf build",
    "bisect start",
    "submodule foreach rm -rf build",
    "submodule status",
    "-C sub log",
    "--no-pager log",
    "-p log",
    "--namespace x log",
    "send-email --smtp-server=/tmp/x a.patch",
    "send-email --sendmail-cmd=x a.patch",
    "instaweb",
]
PROBES["git"] = [*PROBES["git"], *GIT_RUNS]
PROBES["pnpm"] = [*PROBES["pnpm"], "exec rm -rf build", "x cowsay", "explore x", "test"]
PROBES["yarn"] = [*PROBES["yarn"], "exec x", "test"]
PROBES["less"] = [*PROBES["less"], "-o .env f", "--log-file=.env f"]


ISSUE_ROWS = [
    "sort --o=.env data.txt",
    "make --ev='pwn:; rm -rf build' pwn",
    "git fetch --upload='touch PWNED;:' .",
    'echo \'{"permissions":{"allow":["Bash"]}}\' | tee .maia/settings.local.json',
    "git -C vendor/lib status",
    "uniq data.txt .env",
    "x86_64 rm -rf build",
    "cd build && echo X > /proc/self/cwd/../.env",
    "awk 'BEGIN{system(\"rm -rf build\")}'",
    "rg -z x",
    "git branch -d x",
    "'git status'",
]


def _strings(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if 0 < len(text) < 400 and text[:1].isascii() and not text.startswith(("Bash(", "Write(", "Read(")):
                yield text


def commands() -> list[str]:
    """Every command to decide: the probes, the issue's rows and the strings of the permission tests."""
    found: dict[str, None] = {}
    for program, tails in PROBES.items():
        for tail in tails:
            found[f"{program} {tail}"] = None
    for row in ISSUE_ROWS:
        found[row] = None
    for path in SOURCES:
        for text in _strings(path):
            found[text] = None
    return list(found)


def _first_words(command: str, count: int) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return " ".join(words[:count])


def rule_sets(command: str) -> dict[str, dict[str, list[str]]]:
    """The rule sets each command is decided under (some are built from the command's own words)."""
    deny = ["Bash(rm *)", "Write(.env)", "Bash(curl *)"]
    one = _first_words(command, 1)
    two = _first_words(command, 2)
    return {
        "program": {"allow": [f"Bash({one} *)", "Bash(echo *)", "Bash(cat *)"], "deny": deny},
        "subcommand": {"allow": [f"Bash({two} *)", "Bash(echo *)", "Redirect(out/**)"], "deny": deny},
        "everything": {"allow": ["Bash", "Redirect", "Write(**)"], "deny": deny},
        "table": {
            "allow": [
                "Bash(git status)",
                "Bash(git diff *)",
                "Bash(git log *)",
                "Bash(ls *)",
                "Bash(echo *)",
                "Bash(cat *)",
                "Bash(grep *)",
                "Bash(sort *)",
                "Bash(find *)",
                "Bash(xargs *)",
                "Bash(sh -c *)",
                "Bash(make *)",
                "Bash(sed *)",
                "Bash(npm *)",
                "Redirect(out/**)",
            ],
            "ask": ["Bash(git push *)"],
            "deny": ["Bash(rm *)", "Bash(curl *)", "Redirect(.env)"],
        },
    }


def scratch_folder(root: Path) -> Path:
    """A launch folder like the attack tests': a repository, a nested one, a secret, a sub-folder."""
    folder = root / "launch"
    (folder / "sub").mkdir(parents=True)
    (folder / "build").mkdir()
    (folder / "out").mkdir()
    (folder / ".env").write_text("SECRET=1\n")
    (folder / "data.txt").write_text("apple\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["git", "init", "-q"], ["git", "init", "-q", "vendor/lib"]):
        subprocess.run(argv, cwd=folder, env=env, check=False, capture_output=True)
    return folder


LETTER = {"allow": "A", "ask": "Q", "deny": "D"}
RANK = {"D": 0, "Q": 1, "A": 2}


def decisions() -> dict[str, str]:
    """Every command with its verdicts, a letter per rule set (in :func:`rule_sets` order)."""
    from maia.permissions import decide

    found: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        launch = scratch_folder(Path(tmp))
        for command in commands():
            found[command] = "".join(
                LETTER[decide("Bash", {"command": command}, rules, launch).value]
                for rules in rule_sets(command).values()
            )
    return found


def read(path: Path) -> dict[str, str]:
    """A dump: command → verdict letters."""
    table: dict[str, str] = {}
    for line in path.read_text().splitlines():
        letters, command = line.split("\t", 1)
        table[ast.literal_eval(command)] = letters
    return table


def write(path: Path, table: dict[str, str]) -> None:
    """Write a dump (one line per command)."""
    path.write_text("".join(f"{letters}\t{command!r}\n" for command, letters in table.items()))


def compare(old: dict[str, str], new: dict[str, str]) -> tuple[list[str], list[str], int]:
    """The loosenings (a verdict more permissive in ``new``), the tightenings, and how many decisions
    were compared (commands in both)."""
    names = list(rule_sets("x"))
    looser: list[str] = []
    tighter: list[str] = []
    count = 0
    for command, before in old.items():
        after = new.get(command)
        if after is None or len(after) != len(before):
            continue
        for name, was, now in zip(names, before, after, strict=True):
            count += 1
            if RANK[now] > RANK[was]:
                looser.append(f"{name}: {was} -> {now}: {command!r}")
            elif RANK[now] < RANK[was]:
                tighter.append(f"{name}: {was} -> {now}: {command!r}")
    return looser, tighter, count


def main() -> int:
    """Dump the verdicts, or compare them with a dump."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--compare", type=Path)
    args = parser.parse_args()
    now = decisions()
    if args.dump:
        write(args.dump, now)
        print(f"{len(now)} commands written to {args.dump}")
    if args.compare:
        looser, tighter, count = compare(read(args.compare), now)
        print(f"{count} decisions compared: {len(looser)} looser, {len(tighter)} tighter")
        for line in looser:
            print("LOOSER", line)
        for line in tighter:
            print("tighter", line)
        return 1 if looser else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
