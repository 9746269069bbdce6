"""Big Grep and Read calls leave the event loop free: a ticking task keeps running while they work.

No absolute timing: the ticker's longest pause is compared with the call's own duration, so a slow
machine slows both alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from maia.core.contracts import ToolContext
from maia.search import find_ripgrep
from maia.tools.grep import GrepTool
from maia.tools.read import ReadTool


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """120 files of 3,000 matching lines: a few hundred thousand lines of search output."""
    root = tmp_path_factory.mktemp("big")
    line = "the needle sits in a line of ordinary source text, long enough to cost something\n"
    for n in range(120):
        folder = root / f"pkg{n % 6}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{n:03d}.py").write_text(line * 3000)
    return root


async def watch(work: Awaitable[Any]) -> tuple[Any, list[float], float]:
    """Run ``work`` beside a task that ticks every millisecond; (result, pauses between ticks, duration)."""
    loop = asyncio.get_running_loop()
    pauses: list[float] = []
    last = [loop.time()]

    async def ticker() -> None:
        while True:
            await asyncio.sleep(0.001)
            now = loop.time()
            pauses.append(now - last[0])
            last[0] = now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    start = loop.time()
    try:
        result = await work
    finally:
        end = loop.time()
        duration = end - start
        task.cancel()
    pauses.append(end - last[0])  # a block at the very end: the ticker had no chance to wake after it
    return result, pauses, duration


def assert_responsive(pauses: list[float], duration: float) -> None:
    assert len(pauses) >= 3, f"the loop ticked only {len(pauses)} times in {duration:.3f} s"
    # the loop was never held for a large part of the call (the old whole-output parse held most of it)
    assert max(pauses) < duration / 3, f"longest pause {max(pauses):.3f} s of {duration:.3f} s"


@pytest.mark.parametrize("engine", ["rg", "python"])
async def test_a_full_grep_keeps_the_loop_free(big_tree: Path, engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if engine == "rg" and find_ripgrep() is None:
        pytest.skip("no ripgrep binary")
    if engine == "python":
        monkeypatch.setenv("MAIA_SEARCH_ENGINE", "python")
    call = GrepTool().execute(
        {"pattern": "needle", "output_mode": "content", "head_limit": 0}, ToolContext(launch=big_tree)
    )
    text, pauses, duration = await watch(call)
    assert text.count("\n") + 1 == 120 * 3000
    assert_responsive(pauses, duration)


async def test_a_read_deep_in_a_big_file_keeps_the_loop_free(tmp_path: Path) -> None:
    with (tmp_path / "big.log").open("wb") as handle:
        for _ in range(120):
            handle.write(b"2024-01-01 INFO a line of an ordinary log file\n" * 20_000)
    call = ReadTool().execute({"path": "big.log", "offset": 2_399_000, "limit": 5}, ToolContext(launch=tmp_path))
    text, pauses, duration = await watch(call)
    assert text.startswith("2399000\t2024-01-01 INFO")
    assert_responsive(pauses, duration)
