"""Read streams the file: the same text as reading it whole, long lines cut, big files never loaded."""

from __future__ import annotations

import io
import random
import tracemalloc
from pathlib import Path

import pytest

from maia.core.contracts import ToolContext
from maia.tools.base import ToolError
from maia.tools.read import MAX_LINE_CHARS, LineReader, ReadTool


def whole_file_reference(data: bytes, offset: int, limit: int) -> str | None:
    """What Read answered when it loaded the file (lines end at \\n, \\r\\n), None past the end."""
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line.removesuffix("\r") for line in lines]
    if not lines or offset > len(lines):
        return None
    chosen = lines[offset - 1 : offset - 1 + limit]
    body = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(chosen, start=offset))
    last = offset - 1 + len(chosen)
    if last < len(lines):
        body += f"\n[lines {offset}-{last} of {len(lines)}: read on with offset={last + 1}]"
    return body


SAMPLES = [
    b"first\nsecond\n\nfourth",
    b"a\r\nb\r\n\r\nlast\r\n",
    b"\xef\xbb\xbfbom first line\nnext\n",
    b"\n",
    b"\n\n\n",
    b"no newline at all",
    "naïve café ünïcödé\n€uro\n".encode(),
    b"bad utf-8 \xff\xfe here\nok\n",
    b"cr\rinside a line\n",
]


@pytest.mark.parametrize("data", SAMPLES)
@pytest.mark.parametrize(("offset", "limit"), [(1, 2000), (1, 1), (2, 1), (2, 2), (3, 5), (4, 1)])
async def test_same_text_as_the_whole_file(tmp_path: Path, data: bytes, offset: int, limit: int) -> None:
    (tmp_path / "f.txt").write_bytes(data)
    expected = whole_file_reference(data, offset, limit)
    call = ReadTool().execute({"path": "f.txt", "offset": offset, "limit": limit}, ToolContext(launch=tmp_path))
    if expected is None:
        with pytest.raises(ToolError, match=r"past its end|is empty"):
            await call
    else:
        assert await call == expected


def test_slices_of_any_size_give_the_same_lines() -> None:
    """Line ends falling on slice edges (\\r\\n split, empty lines) change nothing."""
    rng = random.Random(7)
    pieces = [b"", b"a", b"bc", b"\r", b"\n", b"\r\n", "é".encode(), b"x" * 50]
    for _round in range(200):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        expected = data.split(b"\n")
        if expected and expected[-1] == b"":
            expected.pop()
        expected = [line.removesuffix(b"\r") for line in expected]
        for size in (1, 2, 3, 5, 64):
            reader = LineReader(io.BytesIO(data), slice_size=size)
            got = []
            while (line := reader.next_line()) is not None:
                got.append(line[0])
            assert got == expected, (data, size)
            for skip in range(len(expected) + 2):
                reader = LineReader(io.BytesIO(data), slice_size=size)
                assert reader.skip(skip) == min(skip, len(expected))
                rest = LineReader(io.BytesIO(data), slice_size=size)
                rest.skip(skip)
                assert rest.count_rest(1 << 20) == max(0, len(expected) - skip)


async def test_long_lines_are_cut_and_say_so(tmp_path: Path) -> None:
    line = "é" * 1500 + "x" * 3000
    (tmp_path / "min.js").write_text(f"short\n{line}\nafter\n")
    out = await ReadTool().execute({"path": "min.js"}, ToolContext(launch=tmp_path))
    rows = out.splitlines()
    assert rows[0] == "     1\tshort"
    assert rows[1] == f"     2\t{line[:MAX_LINE_CHARS]}… [line cut at 2,000 characters; it is 6,000 bytes long]"
    assert rows[2] == "     3\tafter"
    assert "cut -c 2001-4000" in rows[3]


async def test_a_huge_file_is_never_loaded(tmp_path: Path) -> None:
    """A 16 MB one-line file and a 46 MB log: what Read holds stays far below the file's size."""
    one_line = tmp_path / "bundle.js"
    with one_line.open("wb") as handle:
        for _ in range(16):
            handle.write(b"var a=1;" * (1024 * 128))
    log = tmp_path / "big.log"
    with log.open("wb") as handle:
        for _ in range(40):
            handle.write(b"".join(b"2024-01-01 INFO line %07d of the log\n" % n for n in range(30_000)))
    tool, ctx = ReadTool(), ToolContext(launch=tmp_path)
    tracemalloc.start()
    try:
        cut = await tool.execute({"path": "bundle.js"}, ctx)
        _size, peak_cut = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        head = await tool.execute({"path": "big.log"}, ctx)
        _size, peak_head = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        middle = await tool.execute({"path": "big.log", "offset": 600_000, "limit": 3}, ctx)
        end = await tool.execute({"path": "big.log", "offset": 1_199_990, "limit": 3}, ctx)
        _size, peak_middle = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "line cut at 2,000 characters; it is 16,777,216 bytes long" in cut and len(cut) < 3000
    assert head.splitlines()[-1] == "[lines 1-2000 of a file of 45.8 MB: read on with offset=2001]"
    assert middle.splitlines() == [
        "600000\t2024-01-01 INFO line 0029999 of the log",
        "600001\t2024-01-01 INFO line 0000000 of the log",
        "600002\t2024-01-01 INFO line 0000001 of the log",
        "[lines 600000-600002 of a file of 45.8 MB: read on with offset=600003]",
    ]
    assert end.splitlines()[-1] == "[lines 1199990-1199992 of 1200000: read on with offset=1199993]"
    assert max(peak_cut, peak_head, peak_middle) < 4 * 1024 * 1024


async def test_special_files_stop_at_the_binary_check(tmp_path: Path) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    with pytest.raises(ToolError, match="binary file"):
        await ReadTool().execute({"path": "/dev/zero"}, ToolContext(launch=tmp_path))
