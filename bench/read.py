"""The Read tool on big files vs the shell tools that print the same lines, timed in the same rounds.

- a 300 MB log, default call (2,000 lines) vs ``head -n 2000``;
- the same log from the middle (``offset`` 1,500,000) vs ``tail -n +1500000 | head -n 2000``;
- a 16 MB file on one line (minified) vs ``head -c 2000``.
The peak RSS of one call in a fresh process and the size of the answer are printed beside each case.
Run: ``.venv/bin/python bench/read.py [--runs N] [--mb 300]``.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import shutil
import tempfile
from pathlib import Path

from common import Row, interleaved, peak_rss, report, run_command

from maia.core.contracts import ToolContext
from maia.tools.read import ReadTool

LOOP = asyncio.new_event_loop()


def write_log(path: Path, megabytes: int) -> int:
    """A log of about ``megabytes`` MB of ~100-byte lines; returns its line count."""
    block = "".join(
        f"2024-05-01T12:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z INFO worker-{n % 8} "
        f"request id={n:08x} GET /api/items/{n % 977} status=200 time={n % 97}ms\n"
        for n in range(10_000)
    ).encode()
    lines = 0
    with path.open("wb") as handle:
        while handle.tell() < megabytes * 1024 * 1024:
            handle.write(block)
            lines += 10_000
    return lines


def write_minified(path: Path, megabytes: int) -> None:
    """One line of ``megabytes`` MB, as a minified bundle is."""
    unit = b'{"id":12345,"name":"item","tags":["a","b"],"value":3.25},'
    path.write_bytes(b"[" + unit * (megabytes * 1024 * 1024 // len(unit)) + b"{}]\n")


def main() -> None:
    """Measure and print medians, ratios and peak memory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--mb", type=int, default=300)
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="maia-bench-read-"))
    try:
        log, minified = folder / "big.log", folder / "bundle.min.js"
        lines = write_log(log, options.mb)
        write_minified(minified, 16)
        middle = min(1_500_000, lines // 2)
        size, one_line = log.stat().st_size / 1e6, minified.stat().st_size / 1e6
        print(f"log: {size:.0f} MB, {lines:,} lines; one-line file: {one_line:.0f} MB")
        cases = [
            ("Read log, first 2,000 lines vs head -n 2000", {"path": str(log)}, f"head -n 2000 {log}"),
            (
                f"Read log, offset {middle:,} vs tail -n +{middle} | head",
                {"path": str(log), "offset": middle},
                f"tail -n +{middle} {shlex.quote(str(log))} | head -n 2000",
            ),
            ("Read 16 MB one-line file vs head -c 2000", {"path": str(minified)}, f"head -c 2000 {minified}"),
        ]
        rows: list[Row] = []
        tool = ReadTool()
        ctx = ToolContext(launch=folder)
        for label, tool_input, command in cases:
            times = interleaved(
                {
                    "tool": lambda i=tool_input: LOOP.run_until_complete(tool.execute(i, ctx)),
                    "reference": run_command([command], shell=True),
                },
                options.runs,
            )
            tool_time = times["tool"]
            assert tool_time is not None
            rows.append((label, tool_time, times["reference"], 3.0))
            answer = LOOP.run_until_complete(tool.execute(tool_input, ctx))
            code = (
                "import asyncio, pathlib\nfrom maia.core.contracts import ToolContext\n"
                "from maia.tools.read import ReadTool\n_ready()\n"
                f"asyncio.run(ReadTool().execute({tool_input!r}, ToolContext(launch=pathlib.Path({str(folder)!r}))))\n"
            )
            peak, ready, _children = peak_rss(code)
            print(
                f"  {label}: answer {len(answer):,} characters; peak RSS {peak / 1024:.0f} MB "
                f"({(peak - ready) / 1024:+.0f} MB over the idle process)"
            )
        report(f"Read tool, median of {options.runs} runs (target: a few times the shell tool, flat memory)", rows)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
