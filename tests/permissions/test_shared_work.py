"""Work shared between the parts of one long command (issue 26, item 11: speed) never lets a part
be judged in a state it is not in: the same words after a folder change, the same shell fed another
here-document, a link among many targets of one folder, a long command judged without the cycle
collector."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from maia.permissions import explain

A, Q, D = "allow", "ask", "deny"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / ".env").write_text("SECRET=1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "out").mkdir()
    os.symlink("../.env", tmp_path / "out" / "x")  # a link among the files of out/
    return tmp_path


def _verdict(command: str, rules: dict[str, list[str]], launch: Path) -> str:
    return explain("Bash", {"command": command}, rules, launch).verdict.value


def test_the_same_write_after_a_folder_change_is_judged_again(tree: Path) -> None:
    rules = {"allow": ["Bash(sort -o *)", "Bash(echo *)", "Bash(cd *)", "Redirect(out/**)"], "deny": ["Bash(rm *)"]}
    assert _verdict("sort -o out/a x; sort -o out/a x", rules, tree) == A
    assert _verdict("sort -o out/a x; cd sub; sort -o out/a x", rules, tree) == Q
    assert _verdict("echo a > out/b; echo a > out/b", rules, tree) == A
    assert _verdict("echo a > out/b; cd sub; echo a > out/b", rules, tree) == Q


def test_each_here_document_fed_to_the_same_shell_is_read(tree: Path) -> None:
    rules = {"allow": ["Bash(bash *)", "Bash(ls *)"], "deny": ["Bash(rm *)"]}
    assert _verdict("bash <<'EOF'\nls\nEOF\nbash <<'EOF'\nrm -rf x\nEOF", rules, tree) == D
    assert _verdict("bash <<'EOF'\nrm -rf x\nEOF\nbash <<'EOF'\nls\nEOF", rules, tree) == D


@pytest.mark.parametrize("before", [0, 3, 10])
def test_a_link_among_many_targets_of_one_folder_is_seen(tree: Path, before: int) -> None:
    # past a few targets the folder is listed once rather than asked about name by name; the link
    # is seen only by resolving it (no hard-link check: a Redirect rule, and an allow without deny)
    writes = "; ".join(f"echo {i} > out/f{i}" for i in range(before))
    last = f"{writes}; echo s > out/x" if writes else "echo s > out/x"
    first = f"echo s > out/x; {writes}" if writes else "echo s > out/x"
    denying = {"allow": ["Bash(echo *)", "Redirect(out/**)"], "deny": ["Redirect(.env)"]}
    allowing = {"allow": ["Bash(echo *)", "Redirect(out/**)"]}
    for command in (last, first):
        assert _verdict(command, denying, tree) == D
        assert _verdict(command, allowing, tree) == Q  # out/x leads out of out/
    if writes:
        assert _verdict(writes, denying, tree) == A
        assert _verdict(writes, allowing, tree) == A


def test_a_link_in_a_folder_that_does_not_exist_yet_is_no_link(tree: Path) -> None:
    rules = {"allow": ["Bash(echo *)", "Redirect(new/**)"], "deny": ["Write(.env)"]}
    assert _verdict("; ".join(f"echo {i} > new/f{i}" for i in range(8)), rules, tree) == A


def test_a_long_command_is_judged_in_full_and_leaves_the_collector_as_it_was(tree: Path) -> None:
    rules = {"allow": ["Bash(echo *)", "Redirect(out/**)"], "deny": ["Write(.env)", "Bash(rm *)"]}
    long = "\n".join(f"echo {i} > out/f{i}" for i in range(1000))
    assert len(long) > 8192
    assert gc.isenabled()
    assert _verdict(long, rules, tree) == A
    assert _verdict(long + "\necho s > out/x", rules, tree) == D
    assert _verdict(long + "\nrm -rf sub", rules, tree) == D
    assert gc.isenabled()
    gc.disable()
    try:
        assert _verdict(long, rules, tree) == A
        assert not gc.isenabled()  # a collector the caller turned off stays off
    finally:
        gc.enable()
