"""Every shell example in docs/ is run, in a fresh home and project, and exits as the page says.

A block that needs a model, a terminal, the network or your own files is marked with a
``<!-- not run: why -->`` line just before it. Every other line is run with bash, from a project
folder holding a copy of ``examples/`` and ``settings.example.json`` (as from a clone of MAIA),
with ``HOME`` a fresh folder (so ``~/.maia`` is MAIA's home). A line exits 0 unless its comment says
``exits N``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.markdown import REPO, SHELLS, Fence, fences, pages

BLOCKS = [f for page in pages() for f in fences(page) if f.language in SHELLS]
RUN = [f for f in BLOCKS if not f.not_run]
_EXIT = re.compile(r"\s#[^#]*\bexits? (\d+)\b")
_CLEARED = ("MAIA_HOME", "MAIA_CWD", "INIT_CWD", "MAIA_MODEL", "LITELLM_API_KEY", "MAIA_DEBUG_LLM")


def commands(fence: Fence) -> list[tuple[str, int]]:
    """The block's command lines (continuations joined, comment-only lines left out), each with the
    exit status its comment announces (0 when it says nothing)."""
    found: list[tuple[str, int]] = []
    pending = ""
    for raw in fence.lines:
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if not line or line.startswith("#"):
            continue
        match = _EXIT.search(line)
        found.append((line, int(match.group(1)) if match else 0))
    return found


def test_the_pages_have_examples_that_run() -> None:
    assert len(RUN) >= 10 and sum(len(commands(f)) for f in RUN) >= 30


def test_every_block_is_shell_or_holds_no_command() -> None:
    """A block without a shell language would escape these tests: a `maia` line must be in one."""
    for page in pages():
        for fence in fences(page):
            if fence.language in SHELLS:
                continue
            starts = [line for line in fence.lines if re.match(r"^\s*(\$ )?maia( |$)", line)]
            assert not starts, f"{fence.where}: a `maia` command in a ```{fence.language} block: use ```sh"


def test_a_marked_block_says_why() -> None:
    for fence in BLOCKS:
        if fence.not_run:
            text = fence.path.read_text(encoding="utf-8").splitlines()[: fence.line - 1]
            mark = next(line for line in reversed(text) if line.strip())
            assert re.match(r"^<!--\s*not run:\s*\S", mark), f"{fence.where}: write <!-- not run: the reason -->"


@pytest.fixture
def shell_env(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A project folder like a clone's, a fresh HOME, and `maia` on PATH running this checkout."""
    home, project, bin_dir = tmp_path / "home", tmp_path / "project", tmp_path / "bin"
    home.mkdir()
    bin_dir.mkdir()
    shutil.copytree(REPO / "examples", project / "examples")
    shutil.copy(REPO / "settings.example.json", project / "settings.example.json")
    shim = bin_dir / "maia"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m maia "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env.update(HOME=str(home), PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", NO_COLOR="1")
    return project, env


@pytest.mark.parametrize("fence", RUN, ids=lambda f: f.where)
def test_the_example_runs(fence: Fence, shell_env: tuple[Path, dict[str, str]]) -> None:
    project, env = shell_env
    lines = commands(fence)
    assert lines, f"{fence.where}: an empty block"
    for line, expected in lines:
        done = subprocess.run(
            ["bash", "-c", line],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == expected, (
            f"{fence.where}: `{line}` exited {done.returncode}, the page says {expected}\n"
            f"stdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-2000:]}"
        )
        assert "Traceback" not in done.stderr, f"{fence.where}: `{line}`\n{done.stderr}"
