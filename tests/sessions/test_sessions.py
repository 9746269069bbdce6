"""Session files (§12): names, atomic saves under a lock, tolerant loading, lifecycle."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from maia.core.contracts import Message, TextBlock, ToolResultBlock, ToolUseBlock
from maia.core.errors import NotFoundError, UsageError
from maia.sessions.codec import SavedSession
from maia.sessions.store import (
    SessionError,
    SessionManager,
    SessionStore,
    default_name,
    ensure_project_folders,
    is_compacted,
    next_compacted_name,
    normalize_name,
    validate_name,
)

CONVERSATION = [
    Message("user", [TextBlock("read a.py")]),
    Message("assistant", [TextBlock("Reading."), ToolUseBlock("c1", "Read", {"path": "a.py"})]),
    Message("user", [ToolResultBlock("c1", "print('hi')"), ToolResultBlock("c2", "boom", True)]),
    Message("assistant", [TextBlock("It prints hi.")]),
]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / ".maia" / ".sessions")


def test_default_name() -> None:
    assert default_name(datetime(2026, 10, 13, 1, 4, 5)) == "session_2026-10-13_01_04_05"


@pytest.mark.parametrize(
    ("raw", "name"), [("  my session ", "my session"), ('"quoted"', "quoted"), ("'x y'", "x y"), ("\"'both'\"", "both")]
)
def test_normalize(raw: str, name: str) -> None:
    assert normalize_name(raw) == name


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "cannot be empty"),
        ("   ", "cannot be empty"),
        ("x" * 101, "at most 100 characters"),
        ("a/b", "cannot contain '/'"),
        ("a\\b", "cannot contain '\\\\'"),
        ("a:b", "cannot contain ':'"),
        ("a*b", "cannot contain '*'"),
        ("a?b", "cannot contain '?'"),
        ('a"b', "cannot contain '\"'"),
        ("a<b", "cannot contain '<'"),
        ("a>b", "cannot contain '>'"),
        ("a|b", "cannot contain '|'"),
        ("a\tb", "cannot contain U+0009"),
        (".hidden", "start or end with a dot"),
        ("end.", "start or end with a dot"),
    ],
)
def test_invalid_names(raw: str, message: str) -> None:
    with pytest.raises(UsageError) as info:
        validate_name(raw)
    assert message in str(info.value)


def test_valid_name_of_100_characters() -> None:
    assert validate_name(" " + "x" * 100 + " ") == "x" * 100


@pytest.mark.parametrize(
    ("name", "following"),
    [
        ("xxx", "xxx__1"),
        ("xxx__1", "xxx__2"),
        ("xxx__999", "xxx__1000"),
        ("xxx__1000", "xxx__1"),
        ("xxx__0", "xxx__0__1"),
        ("xxx__1001", "xxx__1001__1"),
        ("a__b", "a__b__1"),
        ("__5", "__5__1"),
        ("x" * 100, "x" * 97 + "__1"),
        ("x" * 97 + "__7", "x" * 97 + "__8"),
        ("x" * 95 + "__999", "x" * 94 + "__1000"),
    ],
)
def test_next_compacted_name(name: str, following: str) -> None:
    assert next_compacted_name(name) == following
    assert len(following) <= 100


def test_is_compacted() -> None:
    assert is_compacted("a__3") and not is_compacted("a__0") and not is_compacted("a__1001") and not is_compacted("a")


def test_roundtrip_keeps_every_block(store: SessionStore) -> None:
    session = SavedSession(
        "talk", model="m", launch="/p", messages=CONVERSATION, pending_context=["$ ls"], start_context="summary"
    )
    assert store.write(session) == "talk"
    loaded = store.load("TALK")
    assert (loaded.name, loaded.model, loaded.messages, loaded.pending_context, loaded.start_context) == (
        "talk",
        "m",
        CONVERSATION,
        ["$ ls"],
        "summary",
    )
    data = json.loads(store.path("talk").read_text())
    assert data["version"] == 1 and data["messages"][2]["content"][1] == {
        "type": "tool_result",
        "toolUseId": "c2",
        "content": "boom",
        "isError": True,
    }
    assert data["createdAt"] and data["updatedAt"]


def test_missing_fields_get_defaults_and_the_file_name_wins(store: SessionStore) -> None:
    store.folder.mkdir(parents=True)
    store.path("old").write_text(
        json.dumps({"name": "something else", "messages": [{"role": "user", "content": "plain string content"}]})
    )
    loaded = store.load("old")
    assert loaded.name == "old" and loaded.model == "" and loaded.pending_context == []
    assert loaded.messages == [Message("user", [TextBlock("plain string content")])]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{broken", "invalid JSON at line 1, column 2"),
        ("[]", "the file must hold a JSON object"),
        ('{"messages": {}}', '"messages" must be a list'),
        ('{"messages": [{"role": "robot"}]}', "a message is malformed"),
        ('{"version": 99}', "written by a newer MAIA"),
    ],
)
def test_broken_files_give_clear_errors_and_listing_warnings(store: SessionStore, text: str, reason: str) -> None:
    store.folder.mkdir(parents=True)
    store.path("bad").write_text(text)
    with pytest.raises(SessionError) as info:
        store.load("bad")
    assert str(info.value).startswith(f"{store.path('bad')} is not a valid session: ") and reason in str(info.value)
    (listed,) = store.listing()
    assert listed.name == "bad" and listed.error is not None and reason in listed.error


def test_find_and_suggestions(store: SessionStore) -> None:
    for name in ("Refactor-parser", "refactor-lexer", "bugfix"):
        store.write(SavedSession(name, messages=CONVERSATION))
    assert store.find("refactor-PARSER") == "Refactor-parser"
    with pytest.raises(NotFoundError) as info:
        store.load("refactor")
    assert info.value.hint is not None and "Refactor-parser" in info.value.hint and "refactor-lexer" in info.value.hint


def test_another_session_with_the_same_name_gets_a_suffix(store: SessionStore) -> None:
    first, second, third = (SessionManager(store, "same") for _ in range(3))
    for manager in (first, second, third):
        manager.update(messages=CONVERSATION, pending=[], start_context=None, model="m", launch=Path("/p"))
    assert first.save() == "same"
    assert second.save() == "same_2"
    assert third.save() == "same_3"
    first.session.messages = [*CONVERSATION, Message("user", [TextBlock("more")])]
    assert first.save() == "same"  # its own file: overwritten, not suffixed
    assert sorted(store.names()) == ["same", "same_2", "same_3"]


def test_empty_sessions_are_never_saved_and_unchanged_ones_not_rewritten(store: SessionStore) -> None:
    manager = SessionManager(store, "s")
    assert manager.save() is None and store.names() == []
    manager.update(messages=[], pending=[], start_context="summary only", model="m", launch=Path("/p"))
    assert manager.save() == "s"
    stamp = store.path("s").stat().st_mtime_ns
    assert manager.save() is None
    assert store.path("s").stat().st_mtime_ns == stamp


def test_rename_takes_effect_at_save_and_removes_the_old_file(store: SessionStore) -> None:
    manager = SessionManager(store, "before")
    manager.update(messages=CONVERSATION, pending=[], start_context=None, model="m", launch=Path("/p"))
    manager.save()
    manager.rename("  after ")
    assert store.names() == ["before"]
    assert manager.save() == "after"
    assert store.names() == ["after"]
    manager.rename("AFTER")
    assert manager.save() == "AFTER"
    assert store.names() == ["AFTER"]


def test_store_rename_and_remove(store: SessionStore) -> None:
    store.write(SavedSession("a", messages=CONVERSATION))
    store.write(SavedSession("b", messages=CONVERSATION))
    with pytest.raises(UsageError, match="already exists"):
        store.rename("a", "B")
    assert store.rename("a", "c") == "c"
    assert store.load("c").name == "c" and store.names() == ["b", "c"]
    assert store.remove(["b", "ghost"]) == [("b", None), ("ghost", None)]
    assert store.names() == ["c"]


def test_listing_marks_traces_and_compactions(store: SessionStore) -> None:
    store.write(SavedSession("work", messages=CONVERSATION, model="m"))
    store.write(SavedSession("work__1", start_context="s"))
    store.write(SavedSession("work-reviewer", messages=CONVERSATION, agent="reviewer", parent_session="work"))
    infos = {i.name: i for i in store.listing()}
    assert infos["work__1"].compacted and infos["work-reviewer"].agent == "reviewer"
    assert infos["work"].messages == 4 and infos["work"].model == "m" and infos["work"].size > 0


def test_project_folders_never_touch_the_users_gitignore(tmp_path: Path) -> None:
    assert ensure_project_folders(tmp_path) is None
    assert (tmp_path / ".maia" / ".sessions").is_dir()
    assert not (tmp_path / ".gitignore").exists()
    assert ".sessions/" in (tmp_path / ".maia" / ".gitignore").read_text()
    (tmp_path / ".gitignore").write_text("node_modules")
    (tmp_path / ".maia" / ".gitignore").write_text("# mine\n")
    ensure_project_folders(tmp_path)
    assert (tmp_path / ".gitignore").read_text() == "node_modules"
    assert (tmp_path / ".maia" / ".gitignore").read_text() == "# mine\n"  # an existing one is the user's


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_saved_session_leaves_git_status_clean(tmp_path: Path) -> None:
    repo = tmp_path / "repo"  # beside MAIA's home (tmp_path/maia-home), which holds the sealing key
    repo.mkdir()

    def git(*args: str) -> str:
        env = {
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@e",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@e",
        }
        done = subprocess.run(
            ["git", *args], cwd=repo, capture_output=True, text=True, check=True, env={**os.environ, **env}
        )
        return done.stdout

    git("init", "-q")
    (repo / ".gitignore").write_text("node_modules/\n")
    (repo / "a.py").write_text("print(1)\n")
    git("add", "-A")
    git("commit", "-qm", "start")
    assert ensure_project_folders(repo) is None
    manager = SessionManager(SessionStore.for_launch(repo), "work")
    manager.update(messages=CONVERSATION, pending=[], start_context=None, model="m", launch=repo)
    assert manager.save() == "work"
    manager.close()
    assert git("status", "--porcelain") == ""
    assert (repo / ".gitignore").read_text() == "node_modules/\n"


def test_project_folders_failure_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / ".maia").write_text("a file where the folder should be")
    warning = ensure_project_folders(tmp_path)
    assert warning is not None and "sessions will not be saved" in warning
