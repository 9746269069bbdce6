"""The code base stays lint-clean, formatted and type-clean (mypy --strict): CI enforces it through the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_ruff_is_clean() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "maia", "commands", "tests", "bench"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_is_kept() -> None:
    """Formatting drift is caught here, not in the next change's diff (``# fmt: skip`` keeps a hand layout)."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "maia", "commands", "tests", "bench"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_click_or_blessed_in_the_library() -> None:
    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "maia").rglob("*.py")
        if "frontends" not in path.relative_to(REPO / "maia").parts[:1]
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.lstrip().startswith(("import click", "from click", "import blessed", "from blessed"))
    ]
    assert offenders == []
