"""Session costs side by side: a per-turn save (1.2 MB and 5.7 MB sessions) against ``json.dumps`` + an
atomic write + fsync of the same data, and ``maia sessions list`` over 500 sessions (116 MB) against
``maia --help``.

Run: ``.venv/bin/python bench/sessions.py [runs]`` (medians; each case and its reference in the same rounds).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from common import compile_caches, interleaved, report, rounds
from context import WORDS  # the same vocabulary as the context benchmark

from maia.core.contracts import Message, TextBlock, ToolResultBlock, ToolUseBlock
from maia.core.storage import write_atomic
from maia.sessions.codec import SavedSession
from maia.sessions.store import SessionManager, SessionStore


def conversation(target_bytes: int, seed: int = 1) -> list[Message]:
    """A realistic mix (prompts, answers, tool calls and results) of about ``target_bytes`` of JSON."""
    rng = random.Random(seed)
    messages: list[Message] = []
    size = 0
    n = 0
    while size < target_bytes:
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 400)))
        messages.append(Message("user", [TextBlock(f"request {n}: {text[:200]}")]))
        messages.append(
            Message(
                "assistant",
                [TextBlock(text), ToolUseBlock(f"call_{n}", "Read", {"path": f"src/module_{n}.py"})],
            )
        )
        messages.append(Message("user", [ToolResultBlock(f"call_{n}", text * 3)]))
        size += len(text) * 4 + 300
        n += 1
    return messages


def save_case(folder: Path, messages: list[Message]) -> tuple[object, object]:
    """(MAIA's per-turn save, the reference) on the same conversation; each call adds one message first."""
    manager = SessionManager(SessionStore(folder / "maia"), origin="chat")
    manager.session.messages.extend(messages)
    manager.save()
    reference_path = folder / "reference.json"
    reference_messages = [m for m in manager.session.messages]
    counter = iter(range(10**9))

    def maia() -> None:
        manager.session.messages.append(Message("user", [TextBlock(f"one more {next(counter)}")]))
        manager.save()

    def reference() -> None:
        reference_messages.append(Message("user", [TextBlock(f"one more {next(counter)}")]))
        data = SavedSession(name="reference", messages=reference_messages).to_json()
        write_atomic(reference_path, json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")

    return maia, reference


def many_sessions(project: Path, count: int, each_bytes: int, home: Path) -> None:
    """``count`` sessions of this user (sealed with ``home``'s key, as MAIA writes them) in ``project``."""
    store = SessionStore.for_launch(project, home)
    messages = conversation(each_bytes, seed=7)
    for n in range(count):
        store.write(SavedSession(name=f"session_{n:04d}", model="m", messages=messages))


def main() -> None:
    runs = rounds(sys.argv[1:], 9, __doc__)
    compile_caches(Path(__file__).resolve().parents[1])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for label, size in (("1.2 MB", 1_200_000), ("5.7 MB", 5_700_000)):
            folder = root / label.replace(" ", "")
            folder.mkdir()
            maia, reference = save_case(folder, conversation(size))
            timed = interleaved({"maia": maia, "reference": reference}, runs)  # type: ignore[dict-item]
            assert timed["maia"] is not None
            rows.append((f"per-turn save, {label} session", timed["maia"], timed["reference"], 1.3))
        report("Session save (SessionManager.save vs json.dumps + atomic write + fsync)", rows)

        project = root / "project"
        project.mkdir()
        (root / "home").mkdir()
        many_sessions(project, 500, 232_000, root / "home")
        total = sum(p.stat().st_size for p in (project / ".maia" / ".sessions").glob("*.json"))
        env = {**os.environ, "MAIA_CWD": str(project), "MAIA_HOME": str(root / "home")}
        maia_cmd = [sys.executable, "-m", "maia"]

        def listing() -> None:
            subprocess.run([*maia_cmd, "sessions", "list"], env=env, stdout=subprocess.DEVNULL, check=True)

        def help_() -> None:
            subprocess.run([*maia_cmd, "--help"], env=env, stdout=subprocess.DEVNULL, check=True)

        timed = interleaved({"list": listing, "help": help_}, runs)
        assert timed["list"] is not None
        report(
            f"maia sessions list, 500 sessions ({total / 1e6:.0f} MB) vs maia --help",
            [("maia sessions list", timed["list"], timed["help"], 1.5)],
        )


if __name__ == "__main__":
    main()
