"""What the engine knows of programs besides their options is table data too (issue 26, item 3): the
shells, the dynamic loader, what changes the folder, runs a project's code, puts links in place, the
builtins that evaluate their arguments, the files a program writes (a reader named by the table), each a
field of the program's table with examples checked on load; the code keeps no program's name."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from maia.permissions import explain, programs, tables

ROOT = Path(__file__).resolve().parent.parent.parent


def _stated(field: str) -> set[str]:
    return {name for table in tables.TABLES if getattr(table, field) for name in table.names}


def test_the_facts_the_engine_reads_are_the_tables_fields() -> None:
    assert _stated("folder_sensitive") == programs.FOLDER_SENSITIVE
    assert programs.FOLDER_CHANGERS == _stated("changes_folder") == {"cd", "pushd", "popd"}
    assert set(programs._LINKS) == _stated("links")
    assert _stated("shell") == tables.SHELLS | tables.OTHER_SHELLS
    assert {"git", "make", "npm", "pytest", "bun"} <= programs.FOLDER_SENSITIVE
    assert "node" not in programs.FOLDER_SENSITIVE  # bun runs a project's scripts, node a file it is given


def test_the_engine_code_names_no_program_of_the_tables() -> None:
    names = programs.FOLDER_SENSITIVE | programs.FOLDER_CHANGERS | set(programs._LINKS)
    names |= tables.SHELLS | tables.OTHER_SHELLS | {"psql", "python", "pypy", "perl", "ruby", "node", "php", "lua"}
    # (eval: its reader is named so; engine.py says "read" of an access, no builtin)
    builtins = set(programs._BUILTINS) - set(programs.READERS)
    for module, more in (("programs.py", builtins), ("engine.py", set())):
        text = (ROOT / "maia" / "permissions" / module).read_text(encoding="utf-8")
        quoted = sorted(name for name in names | more if re.search(rf"[\"']{re.escape(name)}[\"']", text))
        assert quoted == [], module


def test_a_fact_example_that_does_not_hold_fails_its_table() -> None:
    cp = tables.BY_NAME["cp"]
    wrong = dataclasses.replace(cp, fact_examples=(("cp -s a b", "may-link makes-links"), ("cp a b", "makes-links")))
    assert programs.table_failures(wrong) == ["cp: 'cp a b' shows may-link, not makes-links"]
    # a fact that depends on the words needs an example where it does not hold
    only = dataclasses.replace(cp, fact_examples=(("cp -s a b", "may-link makes-links"),))
    assert programs.table_failures(only) == ["cp: no fact example shows a use that makes no link"]
    git = tables.BY_NAME["git"]
    writers = tuple(e for e in git.fact_examples if "may-link" in e[1])
    assert programs.table_failures(dataclasses.replace(git, fact_examples=writers)) == [
        "git: no fact example shows a subcommand that makes no link"
    ]


def test_a_stated_fact_needs_an_example() -> None:
    pytest_table = tables.BY_NAME["pytest"]
    assert programs.table_failures(dataclasses.replace(pytest_table, fact_examples=())) == [
        "pytest: no fact example shows folder-sensitive"
    ]
    sh = tables.BY_NAME["sh"]
    assert programs.table_failures(dataclasses.replace(sh, runs_examples=())) == [
        "sh: a wrapper needs an example of what it runs"
    ]


def test_the_loader_is_a_table_named_by_a_pattern(tmp_path: Path) -> None:
    loader = tables.BY_NAME["ld.so"]
    assert loader.pattern and loader.reader == "loader"
    rules = {"allow": ["Bash"], "deny": ["Bash(rm *)"]}
    for command in ("/lib64/ld-linux-x86-64.so.2 /bin/rm -rf build", "ld-musl-x86_64.so.1 /bin/ls"):
        assert explain("Bash", {"command": command}, rules, tmp_path).verdict.value != "allow"


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("pnpm dlx create-vite", "Bash(pnpm *)"),
        ("pnpm dlx create-vite", "Bash(pnpm dlx *)"),
        ("yarn dlx cowsay", "Bash(yarn dlx *)"),
    ],
)
def test_dlx_runs_a_package_it_is_opaque(command: str, rule: str, tmp_path: Path) -> None:
    decision = explain("Bash", {"command": command}, {"allow": [rule]}, tmp_path)
    assert decision.verdict.value == "ask"


def test_versioned_interpreters_are_read_from_the_tables(tmp_path: Path) -> None:
    rules = {"allow": ["Bash(python3.12 *)"], "deny": ["Bash(rm *)"]}
    assert explain("Bash", {"command": "python3.12 -c 'import os'"}, rules, tmp_path).verdict.value == "ask"
    assert explain("Bash", {"command": "python3.12 -m pytest"}, rules, tmp_path).verdict.value == "allow"


def test_a_builtin_that_evaluates_is_a_table_fact(tmp_path: Path) -> None:
    assert programs.not_plain_builtin(["read", "x"]) == "read evaluates its arguments or changes how later commands run"
    assert programs.not_plain_builtin(["set", "-euo", "pipefail"]) is None
    assert programs.not_plain_builtin(["printf", "-v", "x", "y"]) is not None
    wait = tables.BY_NAME["wait"]
    always = dataclasses.replace(wait, fact_examples=(("wait -p id", "not-plain"),))
    assert programs.table_failures(always) == ["wait: no fact example shows a use that is plain"]
    rules = {"allow": ["Bash(read *)", "Bash(echo *)"]}
    decision = explain("Bash", {"command": "read -r 'a[$(id)]' && echo x"}, rules, tmp_path)
    assert decision.verdict.value == "ask"


def test_written_files_are_read_by_a_reader_the_table_names() -> None:
    assert tables.BY_NAME["tar"].writes == tables.Written("tar")
    sort = tables.BY_NAME["sort"].writes
    assert sort is not None and sort.reader == "option-values" and "-o" in sort.options
    git = tables.BY_NAME["git"].writes
    assert git is not None and git.reader == "by-subcommand" and git.each["checkout"] == tables.Written("git-checkout")
    wrong = dataclasses.replace(tables.BY_NAME["tar"], writes=tables.Written("tarball"))
    assert programs.table_failures(wrong) == ["tar: no parser named 'tarball'"]
    # every reader a table names exists (the check above, on every table)
    named = {t.writes.reader for t in tables.TABLES if t.writes is not None}
    assert named <= set(tables.WRITERS) and {"operands", "option-values", "nth-operand", "copy"} <= named
