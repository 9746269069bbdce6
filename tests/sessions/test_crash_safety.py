"""Real processes: a kill -9 in the middle of saving never corrupts a session; concurrent savers never clash."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

WRITER = r"""
import sys
from pathlib import Path
from maia.core.contracts import Message, TextBlock
from maia.sessions.store import SessionManager, SessionStore

store = SessionStore(Path(sys.argv[1]))
manager = SessionManager(store, sys.argv[2])
if sys.argv[6] == "resume" and store.find(sys.argv[2]):
    manager.adopt(store.load(sys.argv[2]))  # carry on the same session, as --resume does
rounds = int(sys.argv[3])
big = "x" * int(sys.argv[4])
tag = sys.argv[5]
for n in range(1, rounds + 1):
    messages = [Message("user", [TextBlock(f"{tag}:{n}:{i}:{big}")]) for i in range(n % 5 + 1)]
    manager.update(messages=messages, pending=[f"{tag}:{n}"], start_context=None, model=tag, launch=Path("."))
    manager.save()
    print(n, flush=True)
"""


def _writer(folder: Path, name: str, rounds: int, size: int, tag: str, mode: str = "new") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), name, str(rounds), str(size), tag, mode],
        stdout=subprocess.PIPE,
        text=True,
    )


def _check_consistent(path: Path, tag: str) -> int:
    data = json.loads(path.read_text())
    n = int(data["pendingContext"][0].split(":")[1])
    assert data["model"] == tag
    assert len(data["messages"]) == n % 5 + 1
    for message in data["messages"]:
        assert message["content"][0]["text"].startswith(f"{tag}:{n}:")
    return n


def test_kill_9_while_saving_never_leaves_a_broken_or_missing_file(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    rng = random.Random(1234)
    last = 0
    for attempt in range(12):
        process = _writer(folder, "victim", 10_000, 400_000, "w", "resume")
        assert process.stdout is not None
        process.stdout.readline()  # at least one complete save exists
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert (folder / "victim.json").exists(), f"attempt {attempt}: the session vanished"
        last = _check_consistent(folder / "victim.json", "w")
    assert last >= 1
    assert [p.name for p in folder.glob("*.json")] == ["victim.json"]


def test_two_processes_saving_the_same_name_never_overwrite_each_other(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    writers = [_writer(folder, "shared", 40, 2_000, tag) for tag in ("a", "b")]
    for process in writers:
        assert process.wait(timeout=60) == 0
    files = sorted(p.name for p in folder.glob("*.json"))
    assert files == ["shared.json", "shared_2.json"]
    tags = {json.loads((folder / f).read_text())["model"] for f in files}
    assert tags == {"a", "b"}
    for name in files:
        tag = json.loads((folder / name).read_text())["model"]
        assert _check_consistent(folder / name, tag) == 40
