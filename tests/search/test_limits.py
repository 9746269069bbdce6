"""Limited searches stop early yet answer exactly the first results of the full search, on both engines."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from maia.search import GrepQuery, find_ripgrep, rg
from maia.search.engine import format_hits, grep_hits
from maia.search.rg import _stream
from tests.agent.helpers import process_alive

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


@pytest.mark.parametrize("wait", [0.0, 600.0], ids=["ordered-run-stopped", "both-runs-go-on"])
@pytest.mark.parametrize("budget", [None, 1], ids=["default-budget", "parallel-run-past-its-budget"])
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
    many: Path,
    limit: int,
    mode: str,
    options: dict[str, object],
    budget: int | None,
    wait: float,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # wait 0: the ordered run is stopped at once unless the parallel one already holds a quarter of the
    # limit (as for a rare pattern); 600: both runs go on (as for a common one)
    monkeypatch.setattr(rg, "_RARE_AFTER", wait)
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


def trace_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Record when each ripgrep run starts and ends ("ordered" or "parallel")."""
    events: list[tuple[str, str]] = []
    real = rg._stream

    async def traced(
        binary: str, args: list[str], cwd: Path, feed: Callable[[bytes], bool], on_start: object = None
    ) -> tuple[int, bytes, bool]:
        kind = "ordered" if "--sort=path" in args else "parallel"
        events.append(("start", kind))
        try:
            return await real(binary, args, cwd, feed, on_start)  # type: ignore[arg-type]
        finally:
            events.append(("end", kind))

    monkeypatch.setattr(rg, "_stream", traced)
    return events


async def test_both_runs_start_at_once_and_a_common_word_goes_on_in_both(
    many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """80 files match and the limit is 8: the ordered and the parallel runs start together, neither is
    stopped (the pattern is common), and the answer is the head of the full one."""
    monkeypatch.setattr(rg, "_RARE_AFTER", 600.0)
    paused: list[int] = []
    monkeypatch.setattr(rg, "_pause", lambda process: paused.append(process.pid))
    events = trace_runs(monkeypatch)
    query = GrepQuery("word", many, "files_with_matches")
    fast = format_hits(query, await grep_hits(query, head_limit=8), many, 8).text
    assert {events[0], events[1]} == {("start", "ordered"), ("start", "parallel")}  # both before either ends
    assert paused == []
    full = rows(format_hits(query, await grep_hits(query, engine="python"), many, 0).text)
    assert rows(fast)[:8] == full[:8]


def group_stopped(group: int) -> bool:
    """Whether process group ``group`` is stopped: a member stopped ("T") and none running or sleeping. The
    shell that holds a run back waits in "D" while its ``sleep``, stopped before its exec, is "T"."""
    states: list[str] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == group:
                    states.append(fields[0])
    return "T" in states and not {"R", "S"} & set(states)


def hold_until_stopped(monkeypatch: pytest.MonkeyPatch, flag: Path) -> list[int]:
    """Both runs wait (in a shell, then exec ripgrep) until the ordered one has been stopped: the stop comes
    first whatever the machine's load. Returns the pids of the runs stopped."""
    real_start, real_pause = rg._start, rg._pause
    stopped: list[int] = []

    async def held(binary: str, args: list[str], cwd: Path) -> asyncio.subprocess.Process:
        wait = f'while [ ! -e "{flag}" ]; do sleep 0.01; done; exec "$0" "$@"'
        return await real_start("/bin/sh", ["-c", wait, binary, *args], cwd)

    def pause(process: asyncio.subprocess.Process) -> bool:
        done = real_pause(process)
        stopped.append(process.pid)
        flag.touch()
        return done

    monkeypatch.setattr(rg, "_start", held)
    monkeypatch.setattr(rg, "_pause", pause)
    return stopped


async def test_a_rare_word_stops_the_ordered_run_and_the_parallel_one_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two lines match: the parallel run has not found a quarter of the limit when the wait is over (nil
    here), so the ordered run is stopped; the parallel run's whole answer is the answer, and the guardian
    stops watching the run it watched, killed."""
    monkeypatch.setattr(rg, "_RARE_AFTER", 0.0)
    paused = hold_until_stopped(monkeypatch, tmp_path / "flag")
    watches: list[str] = []
    monkeypatch.setattr(rg.guardian, "watch", lambda group: watches.append(f"+{group}"))
    monkeypatch.setattr(rg.guardian, "unwatch", lambda group: watches.append(f"-{group}"))
    events = trace_runs(monkeypatch)
    tree = tmp_path / "tree"
    for n in range(40):
        (tree / f"d{n % 4}").mkdir(parents=True, exist_ok=True)
        (tree / f"d{n % 4}" / f"f{n}.txt").write_text("nothing here\n" * 50)
    (tree / "d3" / "rare.txt").write_text("a zqxj line\nzqxj again\n")
    query = GrepQuery("zqxj", tree, "content")
    fast = rows(format_hits(query, await asyncio.wait_for(grep_hits(query, head_limit=250), 60), tree, 250).text)
    assert ("start", "parallel") in events and ("start", "ordered") in events
    assert fast == ["d3/rare.txt:1:a zqxj line", "d3/rare.txt:2:zqxj again"]
    assert len(paused) == 1  # the ordered run (stopped: it was killed all the same)
    assert watches == [f"+{paused[0]}", f"-{paused[0]}"]
    with pytest.raises(ProcessLookupError):
        os.kill(paused[0], 0)


async def test_a_stopped_ordered_run_goes_on_when_the_parallel_one_passes_its_budget(
    many: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ordered run is stopped (the wait is nil) and the parallel run's budget is one line: it passes it,
    and the stopped ordered run is let go on (SIGCONT) and answers the head of the full answer."""
    monkeypatch.setattr(rg, "_RARE_AFTER", 0.0)
    monkeypatch.setattr(rg, "_BUDGET_MIN", 1)
    monkeypatch.setattr(rg, "_BUDGET_FACTOR", 1)
    paused = hold_until_stopped(monkeypatch, tmp_path / "flag")
    states: list[str] = []
    real_resume = rg._resume

    def resume(process: asyncio.subprocess.Process) -> None:
        deadline = time.monotonic() + 5  # a stop is delivered to each member a moment after it is sent
        while not group_stopped(process.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        states.append("T" if group_stopped(process.pid) else "running")
        real_resume(process)

    monkeypatch.setattr(rg, "_resume", resume)
    query = GrepQuery("word", many, "content")
    fast = rows(format_hits(query, await asyncio.wait_for(grep_hits(query, head_limit=40), 60), many, 40).text)
    full = rows(format_hits(query, await grep_hits(query, engine="python"), many, 0).text)
    assert fast[:40] == full[:40]
    assert len(paused) == 1 and states == ["T"]  # stopped until then


async def test_an_ordered_run_started_late_is_never_left_stopped(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ordered run starts after the judgement and after the parallel run has passed its budget (its
    start delayed here): it must not be stopped then, or nothing would ever let it go on."""
    monkeypatch.setattr(rg, "_RARE_AFTER", 0.0)
    monkeypatch.setattr(rg, "_BUDGET_MIN", 1)
    monkeypatch.setattr(rg, "_BUDGET_FACTOR", 1)
    real_start = rg._start

    async def late(binary: str, args: list[str], cwd: Path) -> asyncio.subprocess.Process:
        if "--sort=path" in args:
            await asyncio.sleep(0.3)
        return await real_start(binary, args, cwd)

    monkeypatch.setattr(rg, "_start", late)
    query = GrepQuery("word", many, "content")
    fast = rows(format_hits(query, await asyncio.wait_for(grep_hits(query, head_limit=40), 60), many, 40).text)
    full = rows(format_hits(query, await grep_hits(query, engine="python"), many, 0).text)
    assert fast[:40] == full[:40]


async def test_when_the_ordered_run_cannot_start_the_parallel_one_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_start = rg._start

    async def no_sorted(binary: str, args: list[str], cwd: Path) -> asyncio.subprocess.Process:
        if "--sort=path" in args:
            raise OSError(24, "Too many open files")
        return await real_start(binary, args, cwd)

    monkeypatch.setattr(rg, "_start", no_sorted)
    (tmp_path / "a.txt").write_text("zqxj\n")
    (tmp_path / "b.txt").write_text("nothing\n")
    query = GrepQuery("zqxj", tmp_path, "files_with_matches")
    assert rows(format_hits(query, await grep_hits(query, head_limit=250), tmp_path, 250).text) == ["a.txt"]


def test_a_stopped_run_dies_with_maia(tmp_path: Path) -> None:
    """MAIA killed (SIGKILL) while the ordered run is stopped: the guardian kills it (stopped, it would
    never end by itself, nothing it writes can fail). Both runs are held until the stop, whatever the load."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for n in range(40):
        (tree / f"f{n}.txt").write_text("nothing\n")
    flag = tmp_path / "flag"
    script = textwrap.dedent(
        f"""
        import asyncio, os, signal
        from pathlib import Path
        from maia.search import GrepQuery, find_ripgrep, rg

        rg._RARE_AFTER = 0.0
        real_start, real_pause = rg._start, rg._pause

        async def held(binary, args, cwd):
            wait = 'while [ ! -e {flag} ]; do sleep 0.01; done; exec "$0" "$@"'
            return await real_start("/bin/sh", ["-c", wait, binary, *args], cwd)

        def pause(process):
            real_pause(process)
            print(process.pid, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)  # MAIA dies while the run is stopped

        rg._start, rg._pause = held, pause
        root = Path({str(tree)!r})
        asyncio.run(rg.grep(find_ripgrep(), GrepQuery("zqxj", root, "content"), root, max_lines=250))
        """
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as parent:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        parent.wait()
    group = int(line)
    flag.touch()  # nothing held back any more: only the stop keeps the ordered run from ending by itself
    deadline = time.monotonic() + 60
    while process_alive(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(group)


@pytest.mark.parametrize("mode", ["count", "files_with_matches"])
async def test_a_cancelled_whole_search_kills_its_process(tmp_path: Path, mode: str) -> None:
    """Count and files modes without a limit read ripgrep's output once it has ended (a file in memory):
    Ctrl+C while it runs kills and reaps it all the same."""
    pid_file = tmp_path / "pid"
    fake = tmp_path / "rg"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import os, time\n"
        f"open({str(pid_file)!r} + '.tmp', 'w').write(str(os.getpid()))\n"
        f"os.replace({str(pid_file)!r} + '.tmp', {str(pid_file)!r})\n"
        "time.sleep(600)\n"
    )
    fake.chmod(0o755)
    task = asyncio.ensure_future(rg.grep(str(fake), GrepQuery("x", tmp_path, mode), tmp_path))  # type: ignore[arg-type]
    deadline = time.monotonic() + 60
    while not pid_file.exists():
        assert time.monotonic() < deadline and not task.done()
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not process_alive(int(pid_file.read_text()))
