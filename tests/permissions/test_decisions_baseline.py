"""No decision is looser than the baseline: every command the permission tests quote, plus probes of
every danger the program tables declare, decided under four rule sets (see decisions.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.permissions import decisions

BASELINE = Path(__file__).with_name("decisions_baseline.tsv")


@pytest.mark.skipif(
    shutil.which("git") is None and os.environ.get("CI") != "true", reason="the launch folder holds git repositories"
)
def test_no_decision_is_looser_than_the_baseline() -> None:
    baseline = decisions.read(BASELINE)
    looser, _tighter, count = decisions.compare(baseline, decisions.decisions())
    assert count > 4000  # the corpus is really decided again, not lost to a renamed file
    assert looser == []


def test_a_looser_decision_is_caught() -> None:
    before = {"sed -i s/a/b/ f": "QQAQ", "ls": "AAAA"}
    after = {"sed -i s/a/b/ f": "QAAQ", "ls": "AAAA"}
    looser, tighter, count = decisions.compare(before, after)
    assert looser == ["subcommand: Q -> A: 'sed -i s/a/b/ f'"] and tighter == [] and count == 8
