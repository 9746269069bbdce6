"""A repository whose ``.maia/.sessions`` is a symbolic link to another project's sessions folder
would carry on that project's sessions as its own.

The seal is an HMAC of the sessions folder's *real* path: through the link, the other project's files
carry seals valid here, so ``--continue`` in the planted repository picks them up (and every save
then writes into the other project). The store refuses such a folder: nothing in it is the user's
own, nothing is written through it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from maia.core.contracts import Message, TextBlock
from maia.sessions.codec import SavedSession
from maia.sessions.store import SessionError, SessionStore, ensure_project_folders


def test_a_linked_sessions_folder_is_not_this_folders_history(tmp_path: Path) -> None:
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


def test_a_linked_sessions_folder_is_never_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    other = tmp_path / "other-project"
    (other / ".maia" / ".sessions").mkdir(parents=True)
    planted = tmp_path / "planted-repo"
    planted.mkdir()
    os.symlink(other / ".maia", planted / ".maia")  # the whole .maia folder linked away
    store = SessionStore.for_launch(planted, home)
    assert store.linked_away
    session = SavedSession(name="work", messages=[Message("user", [TextBlock("hello")])])
    with pytest.raises(SessionError):
        store.write(session)
    assert list((other / ".maia" / ".sessions").iterdir()) == []
    warning = ensure_project_folders(planted)
    assert warning is not None and "symbolic link" in warning
    assert not (other / ".maia" / ".gitignore").exists()


def test_a_launch_folder_reached_through_a_link_keeps_its_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    real = tmp_path / "real-project"
    (real / ".maia" / ".sessions").mkdir(parents=True)
    os.symlink(real, tmp_path / "alias")  # the user's own link to the project (a mounted or moved home)
    store = SessionStore.for_launch(tmp_path / "alias", home)
    assert not store.linked_away
    store.write(SavedSession(name="work", messages=[Message("user", [TextBlock("hi")])]))
    assert SessionStore.for_launch(real, home).is_own(store.load("work"))


def test_a_planted_lock_link_is_refused_and_its_target_left_whole(tmp_path: Path) -> None:
    """A repository ships ``.maia/.sessions/.NAME.lock`` as a link to a file of the user's: opening the
    session never truncates or writes that file; it is refused with a clear message."""
    from maia.sessions.store import SessionLock

    project, victim = tmp_path / "project", tmp_path / "precious.txt"
    folder = project / ".maia" / ".sessions"
    folder.mkdir(parents=True)
    victim.write_text("keep me\n")
    lock = SessionLock(folder, "work", "chat")
    os.symlink(victim, lock.path)
    with pytest.raises(SessionError, match="symbolic link"):
        lock.acquire()
    assert victim.read_text() == "keep me\n"
