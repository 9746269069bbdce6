"""Trusting records what the user was shown: grants that changed while the question was open are not
trusted (from the security review: a file rewritten during the question was trusted as rewritten)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maia.core.trust import TrustChanged, check, trust_folder


def test_grants_changed_during_the_question_are_not_trusted(tmp_path: Path) -> None:
    home, launch = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    (launch / ".maia").mkdir(parents=True)
    settings = launch / ".maia" / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(npm test)"]}}))
    shown = check(launch, home)  # what the question lists
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))  # rewritten meanwhile
    with pytest.raises(TrustChanged):
        trust_folder(launch, home, shown=shown.grants)
    assert not check(launch, home).trusted
    trust_folder(launch, home, shown=check(launch, home).grants)  # what is shown now can be trusted
    assert check(launch, home).trusted
