"""Shared timing helpers for the benchmarks: medians of repeated runs, printed side by side."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Sequence


def time_command(argv: Sequence[str], runs: int, env: dict[str, str] | None = None) -> float:
    """Median wall time in seconds of running ``argv`` ``runs`` times (after one warm-up run)."""
    subprocess.run(argv, capture_output=True, check=True, env=env)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, env=env)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def time_call(fn: Callable[[], object], runs: int) -> float:
    """Median wall time in seconds of calling ``fn`` ``runs`` times (after one warm-up call)."""
    fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def report(title: str, rows: Sequence[tuple[str, float, float, float]]) -> None:
    """Print rows of (label, measured s, reference s, target ratio) with their ratio and verdict."""
    print(title)
    print(f"  {'case':<44} {'median':>10} {'reference':>10} {'ratio':>7} {'target':>7}")
    for label, value, reference, target in rows:
        ratio = value / reference if reference else float("inf")
        verdict = "ok" if ratio <= target else "OVER"
        print(
            f"  {label:<44} {value * 1000:>8.2f}ms {reference * 1000:>8.2f}ms {ratio:>6.2f}x {target:>6.2f}x {verdict}"
        )
