"""Start-up cost of the sandbox launcher: a trivial command bare vs under ``maia.sandbox`` (Landlock).

Runs are interleaved (bare, sandboxed, bare, …) so both sides see the same machine load; the
medians are printed side by side with the difference. Target: the launcher adds at most 30 ms.
Run with the virtual environment's Python: ``.venv/bin/python bench/sandbox.py [runs]``.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from maia.sandbox.policy import SandboxPolicy, landlock_abi
from maia.shell import run_shell

TARGET_MS = 30.0


def _run(argv: Sequence[str]) -> Callable[[], object]:
    return lambda: subprocess.run(argv, capture_output=True, check=True)


def _interleaved(first: Callable[[], object], second: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median seconds of ``first`` and ``second``, called alternately ``runs`` times each (after a warm-up)."""
    first()
    second()
    a: list[float] = []
    b: list[float] = []
    for _ in range(runs):
        for fn, samples in ((first, a), (second, b)):
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
    return statistics.median(a), statistics.median(b)


def main() -> None:
    """Measure and print the medians and the added cost."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    abi, reason = landlock_abi()
    if abi < 1:
        print(f"no Landlock on this kernel ({reason}): nothing to measure")
        return
    with tempfile.TemporaryDirectory() as tmp:
        launch = Path(tmp)
        policy = SandboxPolicy("workspace-write", launch, temp_dirs=(Path(tempfile.gettempdir()),))
        module = [sys.executable, "-m", "maia.sandbox", "--write", str(launch), "--"]

        def shell(sandboxed: bool) -> Callable[[], object]:
            sandbox = policy if sandboxed else None
            return lambda: asyncio.run(run_shell("true", launch, sandbox=sandbox))

        rows = [
            ("true", True, _interleaved(_run(["true"]), _run(policy.launcher_argv(["true"])), runs)),
            (
                "bash -c true",
                True,
                _interleaved(_run(["bash", "-c", "true"]), _run(policy.launcher_argv(["bash", "-c", "true"])), runs),
            ),
            ("run_shell('true') (bash, asyncio)", True, _interleaved(shell(False), shell(True), runs)),
            (
                "python -m maia.sandbox -- true (manual form)",
                False,
                _interleaved(_run(["true"]), _run([*module, "true"]), runs),
            ),
        ]
    print(f"sandbox launcher start-up, Landlock ABI {abi}, median of {runs} interleaved runs")
    print(f"  {'command':<44} {'bare':>10} {'sandboxed':>10} {'added':>9} {'target':>8}")
    for label, targeted, (bare, boxed) in rows:
        added = (boxed - bare) * 1000
        target = f"{TARGET_MS:>6.0f}ms" if targeted else f"{'-':>8}"
        verdict = ("ok" if added <= TARGET_MS else "OVER") if targeted else "info"
        print(f"  {label:<44} {bare * 1000:>8.2f}ms {boxed * 1000:>8.2f}ms {added:>7.2f}ms {target} {verdict}")
    print(
        "  MAIA starts the launcher as `python -I -S -c <launcher source>` (no site, no maia import); the\n"
        "  manual `python -m maia.sandbox` form loads site and the package, and is not what run_shell uses."
    )


if __name__ == "__main__":
    main()
