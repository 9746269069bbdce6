"""REVIEW FINDING (adversarial pass on the sealed sessions): a repository whose ``.maia/.sessions`` is a
symbolic link to another project's sessions folder carries on that project's sessions as its own.

The seal is an HMAC of the sessions folder's *real* path: through the link, the other project's files
carry seals valid here, so ``--continue`` in the planted repository picks them up (and every save
then writes into the other project). This test FAILS until the seal (or the store) binds the launch
folder itself; the integrator fixes it or hands it on.
"""

from __future__ import annotations

import os
from pathlib import Path

from maia.core.contracts import Message, TextBlock
from maia.sessions.codec import SavedSession
from maia.sessions.store import SessionStore


def test_review_a_linked_sessions_folder_is_not_this_folders_history(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    other = tmp_path / "other-project"
    (other / ".maia" / ".sessions").mkdir(parents=True)
    mine = SessionStore.for_launch(other, home)
    session = SavedSession(name="work", messages=[Message("user", [TextBlock("delete the build folder")])])
    mine.write(session)
    assert mine.is_own(mine.load("work"))  # the other project's own session, sealed

    planted = tmp_path / "planted-repo"
    (planted / ".maia").mkdir(parents=True)
    os.symlink(other / ".maia" / ".sessions", planted / ".maia" / ".sessions")  # shipped by the repository
    store = SessionStore.for_launch(planted, home)
    assert not store.is_own(store.load("work")), "another folder's session is carried on here"
