"""Dump the Bash verdict of every command the permission tests quote, under a few rule sets.

Run before and after a change to the permission engine, then compare the two dumps: a command
allowed after the change that was asked or denied before is a loosening (``--compare OLD NEW``).

    .venv/bin/python bench/permission_decisions.py --dump /tmp/before.tsv
    .venv/bin/python bench/permission_decisions.py --dump /tmp/after.tsv
    .venv/bin/python bench/permission_decisions.py --compare /tmp/before.tsv /tmp/after.tsv
"""

from __future__ import annotations

import argparse
import ast
import itertools
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
}

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


def dump(out: Path) -> int:
    """Decide every command under every rule set; write ``rules<TAB>verdict<TAB>command`` lines."""
    from maia.permissions import decide

    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        launch = scratch_folder(Path(tmp))
        for command in commands():
            for name, rules in rule_sets(command).items():
                verdict = decide("Bash", {"command": command}, rules, launch).value
                lines.append(f"{name}\t{verdict}\t{command!r}")
    out.write_text("\n".join(lines) + "\n")
    return len(lines)


RANK = {"deny": 0, "ask": 1, "allow": 2}


def compare(before: Path, after: Path) -> tuple[list[str], list[str], int]:
    """The loosenings (a verdict more permissive after) and the tightenings, and how many were compared."""

    def read(path: Path) -> dict[tuple[str, str], str]:
        table = {}
        for line in path.read_text().splitlines():
            rules, verdict, command = line.split("\t", 2)
            table[(rules, command)] = verdict
        return table

    old, new = read(before), read(after)
    looser: list[str] = []
    tighter: list[str] = []
    for key in itertools.chain(old):
        if key not in new:
            continue
        if RANK[new[key]] > RANK[old[key]]:
            looser.append(f"{key[0]}: {old[key]} -> {new[key]}: {key[1]}")
        elif RANK[new[key]] < RANK[old[key]]:
            tighter.append(f"{key[0]}: {old[key]} -> {new[key]}: {key[1]}")
    return looser, tighter, sum(1 for key in old if key in new)


def main() -> int:
    """Dump or compare."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--compare", type=Path, nargs=2)
    args = parser.parse_args()
    if args.dump:
        print(f"{dump(args.dump)} decisions written to {args.dump}")
    if args.compare:
        looser, tighter, count = compare(*args.compare)
        print(f"{count} decisions compared: {len(looser)} looser, {len(tighter)} tighter")
        for line in looser:
            print("LOOSER", line)
        for line in tighter:
            print("tighter", line)
        return 1 if looser else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
