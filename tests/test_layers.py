"""The layering is a checked contract: import-linter's contracts in pyproject.toml (layers, no click or blessed
below the front ends, no import cycle) hold for the whole library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_import_contracts_hold() -> None:
    linter = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(linter), "pyproject.toml", "--no-cache"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_maia_has_only_its_entry_points_at_the_top() -> None:
    loose = sorted(p.name for p in (REPO / "maia").glob("*.py"))
    assert loose == ["__init__.py", "__main__.py"]
