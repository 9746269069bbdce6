"""The README's two set-up commands (issue 28): the first leaves `maia` on PATH without shadowing the
user's Python; the second is the one CI runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.docs.markdown import REPO, fences

README = REPO / "README.md"


def _first_blocks() -> list[str]:
    blocks = [f for f in fences(README) if f.language == "sh"][:2]
    return ["\n".join(f.lines).strip() for f in blocks]


def test_the_test_command_is_the_one_ci_runs_and_says_how_long() -> None:
    command = _first_blocks()[1]
    line, _, comment = command.partition("#")
    assert line.strip() in (REPO / ".ci" / "run").read_text()
    assert re.search(r"\d+ minutes", comment)


def test_the_first_command_puts_maia_on_path_and_nothing_else(tmp_path: Path) -> None:
    command = _first_blocks()[0]
    install = "python3 -m venv .venv && .venv/bin/pip install . && "
    assert command.startswith(install)
    rest = command[len(install) :]
    assert rest.endswith("~/.local/bin/maia")
    assert ".venv/bin:" not in command and "PATH=" not in command
    # run what follows the installation, from a clone whose .venv is this suite's, in a fresh home
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / ".venv").symlink_to(sys.prefix)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": f"{home}/.local/bin{os.pathsep}/usr/bin{os.pathsep}/bin",
        "LANGUAGE": "en",
        "MAIA_HOME": str(tmp_path / "maia-home"),
    }
    done = subprocess.run(
        ["bash", "-c", rest + " --version"], cwd=clone, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("maia ")
    # a new shell finds `maia` by PATH, and its `python` is not MAIA's
    found = subprocess.run(
        ["bash", "-c", "maia --version && command -v python3"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    maia_version, python = found.stdout.splitlines()
    assert maia_version.startswith("maia ")
    assert not python.startswith(sys.prefix)
