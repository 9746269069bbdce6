"""Session files carry a summary at their head: listings read it instead of the whole file, saves
serialise a session once, and older files (no summary) are still listed from their content."""

from __future__ import annotations

import json
from pathlib import Path

from maia.core.contracts import Message, TextBlock, ToolResultBlock
from maia.sessions.codec import SUMMARY_HEAD, SavedSession, encode_session, parse_session
from maia.sessions.store import SessionManager, SessionStore


def session(name: str, prompt: str, turns: int = 3, **extra: object) -> SavedSession:
    messages = []
    for n in range(turns):
        messages.append(Message("user", [TextBlock(prompt if n == 0 else f"and then {n}")]))
        messages.append(Message("assistant", [TextBlock("x" * 5000)]))
    return SavedSession(name=name, model="gpt-test", messages=messages, **extra)  # type: ignore[arg-type]


def test_the_listing_from_the_head_equals_the_listing_from_the_whole_file(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s")
    for n in range(12):
        store.write(session(f"s{n}", f"question   number {n}\nwith two lines", turns=n % 4 + 1, cleared=n == 3))
    store.write(session("child", "review this", agent="reviewer", origin="subagent"))
    quick = {i.name: i for i in store.listing()}
    for name, info in quick.items():
        whole = parse_session(store.path(name).read_text(), name)
        assert info.messages == len(whole.messages)
        assert info.updated_at == whole.updated_at and info.model == whole.model
        assert info.origin == whole.origin and info.agent == whole.agent and info.cleared == whole.cleared
        assert info.error is None
    assert quick["s1"].first_prompt == "question number 1 with two lines"
    assert quick["child"].agent == "reviewer"


def test_a_listing_reads_only_the_head_of_each_file(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s")
    store.write(session("big", "first words", turns=50))
    path = store.path("big")
    text = path.read_text()
    assert len(text) > 10 * SUMMARY_HEAD
    # the tail replaced by bytes that are not JSON: only a reader of the whole file would notice
    path.write_text(text[:SUMMARY_HEAD] + "\x00" * (len(text) - SUMMARY_HEAD))
    (info,) = store.listing()
    assert info.first_prompt == "first words" and info.messages == 100 and info.error is None


def test_a_file_without_a_summary_is_listed_from_its_content(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s")
    store.folder.mkdir(parents=True)
    older = session("older", "written by MAIA 0.1")
    data = older.to_json()
    data["updatedAt"] = "2026-01-01T10:00:00+00:00"
    store.path("older").write_text(json.dumps(data))  # the format an older MAIA wrote: no summary
    store.path("broken").write_text('{"summary": {"messages": "many"}, "version": 1')
    infos = {i.name: i for i in store.listing()}
    assert infos["older"].first_prompt == "written by MAIA 0.1" and infos["older"].messages == 6
    assert infos["broken"].error is not None


def test_a_saved_file_is_read_back_whole_and_its_keys_are_those_older_readers_know(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s")
    original = session("keep", "hello")
    store.write(original)
    data = json.loads(store.path("keep").read_text())
    assert set(data) - {"summary"} == set(original.to_json())
    again = parse_session(store.path("keep").read_text(), "keep")
    assert again.messages == original.messages and again.id == original.id


def test_an_unchanged_session_is_not_written_again_and_a_change_is(tmp_path: Path) -> None:
    manager = SessionManager(SessionStore(tmp_path / "s"), origin="chat")
    manager.session.messages.append(Message("user", [TextBlock("one")]))
    assert manager.save() is not None
    path = manager.store.path(manager.current_file)  # type: ignore[union-attr,arg-type]
    stamp = path.stat().st_mtime_ns
    assert manager.save() is None  # nothing changed: no write
    assert path.stat().st_mtime_ns == stamp
    manager.session.messages.append(Message("assistant", [TextBlock("two")]))
    assert manager.save() is not None
    assert len(parse_session(path.read_text(), path.stem).messages) == 2
    assert manager._saved_digest == encode_session(manager.session).digest


def test_a_lone_surrogate_anywhere_is_saved_and_read_back(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s")
    odd = "Hello \ud800 there"
    saved = SavedSession(
        name="odd",
        model="m",
        messages=[Message("user", [TextBlock(odd)]), Message("user", [ToolResultBlock("c1", odd)])],
    )
    store.write(saved)
    again = store.load("odd")
    assert again.messages == saved.messages
    (info,) = store.listing()
    assert info.error is None and info.first_prompt.startswith("Hello")
