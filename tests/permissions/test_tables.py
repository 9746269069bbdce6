"""The program tables are data checked by their own examples (issue 26, item 3): a table whose example
fails, or whose declared danger no example shows, does not load, and its programs then ask."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from maia.permissions import explain, programs, tables

# the programs whose knowledge was code in programs.py (danger functions), now table data
MOVED = ("git", "find", "sed", "gsed", "awk", "gawk", "make", "gmake", "go", "npm", "pnpm", "yarn", "cargo")
MOVED += ("terraform", "zip", "less", "more", "most", "vim", "vi", "nvim", "view", "vimdiff", "gvim")


def test_every_table_holds_its_examples() -> None:
    assert programs.check_examples() == []


@pytest.mark.parametrize("name", MOVED)
def test_the_programs_once_code_have_tables_with_dangers(name: str) -> None:
    table = tables.BY_NAME[name]
    assert table.option_dangers is not None or table.subcommands is not None
    assert table.match and programs.declared(table)


def _swap(monkeypatch: pytest.MonkeyPatch, table: tables.Table) -> None:
    for name in table.names:
        monkeypatch.setitem(tables.BY_NAME, name, table)


def test_a_table_whose_example_fails_does_not_load(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rules = {"allow": ["Bash(sed *)"], "deny": ["Bash(rm *)"]}
    assert explain("Bash", {"command": "sed -n p notes.txt"}, rules, tmp_path).verdict.value == "allow"
    sed = tables.BY_NAME["sed"]
    broken = dataclasses.replace(sed, match=(*sed.match, "sed -n p g"))  # finds nothing: a wrong example
    assert programs.table_failures(broken) == ["sed: 'sed -n p g' should be found"]
    _swap(monkeypatch, broken)
    decision = explain("Bash", {"command": "sed -n p notes.txt"}, rules, tmp_path)
    assert decision.verdict.value == "ask" and decision.doubt
    assert "fails its own examples" in decision.reason


def test_a_declared_danger_needs_an_example_that_shows_it() -> None:
    find = tables.BY_NAME["find"]
    assert find.option_dangers is not None
    more = dataclasses.replace(
        find.option_dangers, words=find.option_dangers.words | {"-newer-and-dangerous"}
    )  # declared, shown by no example
    failures = programs.table_failures(dataclasses.replace(find, option_dangers=more))
    assert failures == ["find: no match example shows word:-newer-and-dangerous"]
    # git's subcommands: each subcommand's own danger needs its example too
    git = tables.BY_NAME["git"]
    assert git.subcommands is not None
    fewer = tuple(c for c in git.match if not c.startswith("git ls-remote"))
    assert programs.table_failures(dataclasses.replace(git, match=fewer)) == [
        "git: no match example shows sub:ls-remote/short:u"
    ]


def test_a_hook_or_a_value_test_must_exist() -> None:
    sed = tables.BY_NAME["sed"]
    assert sed.option_dangers is not None
    wrong = dataclasses.replace(sed, option_dangers=dataclasses.replace(sed.option_dangers, hook="sed-scrpt"))
    assert programs.table_failures(wrong) == ["sed: no parser named 'sed-scrpt'"]
    check = tables.ValueCheck(frozenset({"-x"}), "elsewhere", "x")  # type: ignore[arg-type]
    go = tables.BY_NAME["go"]
    assert go.option_dangers is not None
    bad = dataclasses.replace(go, option_dangers=dataclasses.replace(go.option_dangers, values=(check,)))
    assert programs.table_failures(bad) == ["go: no value test named 'elsewhere'"]


@pytest.mark.parametrize(
    ("command", "rule", "verdict"),
    [
        # each kind of table data, decided: named by the rule → allowed; not named → asked
        ("find . -name '*.py'", "Bash(find *)", "allow"),
        ("find . -delete", "Bash(find *)", "ask"),
        ("less +!id notes.txt", "Bash(less *)", "ask"),
        ("zip -TTx a.zip f", "Bash(zip *)", "ask"),
        ("make CC=x", "Bash(make *)", "ask"),
        ("make -f -", "Bash(make *)", "ask"),
        ("make -C sub", "Bash(make *)", "allow"),
        ("make -C /tmp", "Bash(make *)", "ask"),
        ("go test --exec=x ./...", "Bash(go test *)", "ask"),
        ("go test -exec x ./...", "Bash(go test -exec *)", "allow"),
        ("git branch -d topic", "Bash(git branch *)", "ask"),
        ("git branch -a", "Bash(git branch *)", "allow"),
        ("git tag -l", "Bash(git tag *)", "allow"),
        ("git difftool HEAD", "Bash(git difftool *)", "allow"),
        ("git -c core.pager=x log", "Bash(git log *)", "ask"),
        ("sed 's/a/b/w out' f", "Bash(sed *)", "ask"),
        ("sed -i s/a/b/ f", "Bash(sed -i *)", "allow"),
        ("sed --in-place=.bak s/a/b/ f", "Bash(sed *)", "ask"),
        ("awk '{print $1}' f", "Bash(awk *)", "ask"),
        ("wget --execute=robots=off -O - https://example.org", "Bash(wget *)", "ask"),
    ],
)
def test_table_data_decides(command: str, rule: str, verdict: str, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert explain("Bash", {"command": command}, {"allow": [rule]}, tmp_path).verdict.value == verdict


def test_a_wrapper_table_says_what_it_runs() -> None:
    nohup = tables.BY_NAME["nohup"]
    assert nohup.wrapper is not None and nohup.runs_examples
    wrong = dataclasses.replace(nohup, runs_examples=(("nohup rm -rf build", "rm -rf"),))
    assert programs.table_failures(wrong) == ["nohup: 'nohup rm -rf build' runs 'rm -rf build', not 'rm -rf'"]
    bare = dataclasses.replace(nohup, runs_examples=())
    assert programs.table_failures(bare) == ["nohup: a wrapper needs an example of what it runs"]
    # setarch's personality names are one table: x86_64 CMD changes what CMD is
    assert tables.BY_NAME["x86_64"] is tables.BY_NAME["linux32"]


def test_flock_reads_its_command_after_the_lock_file(tmp_path: Path) -> None:
    rules = {"allow": ["Bash(flock *)", "Bash(ls *)"], "deny": ["Bash(rm *)"]}
    assert explain("Bash", {"command": "flock /tmp/l ls -l"}, rules, tmp_path).verdict.value == "allow"
    assert explain("Bash", {"command": "flock /tmp/l -c 'rm -rf build'"}, rules, tmp_path).verdict.value == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "git log --output=.env -1",  # allowed before: a write found only when the word was exactly --output
        "git log --out=.env -1",  # a prefix git may read as --output
        "git archive -o.env HEAD",
        "git checkout -- .env",
        "git -C . restore .env",
        # files other programs write, once allowed under a bare Bash allow
        "curl --cookie-jar .env https://example.org",
        "curl --stderr .env https://example.org",
        "less -o .env notes.txt",
        "less --log-file=.env notes.txt",
        "strace -o .env ls",
        "tcpdump -w .env",
        "gpg --output .env -d secret.gpg",
        "ssh-keygen -t ed25519 -f .env",
    ],
)
def test_written_files_are_judged(command: str, tmp_path: Path) -> None:
    rules = {"allow": ["Bash"], "deny": ["Write(.env)"]}
    assert explain("Bash", {"command": command}, rules, tmp_path).verdict.value == "deny"


def test_a_program_read_by_its_own_parser_names_it_and_shows_what_it_runs() -> None:
    env = tables.BY_NAME["env"]
    assert env.reader == "env" and ("env -S 'ls -l'", "opaque") in env.runs_examples
    assert tables.BY_NAME["fdfind"].reader == "fd"
    wrong = dataclasses.replace(env, reader="enviro")
    assert programs.table_failures(wrong) == ["env: no parser named 'enviro'"]
    xargs = tables.BY_NAME["xargs"]
    lie = dataclasses.replace(xargs, runs_examples=(("xargs ls -l", "ls -l"),))  # xargs adds its input's words
    assert programs.table_failures(lie) == ["xargs: 'xargs ls -l' runs 'ls -l …', not 'ls -l'"]
