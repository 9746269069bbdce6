"""Start-up cost of the sandbox: a trivial command bare, under Landlock alone, under bubblewrap + Landlock.

Runs are interleaved (bare, Landlock, namespaces, bare, …) so every column sees the same machine
load; the medians are printed side by side with what each sandbox adds. Targets: Landlock alone adds
at most 12 ms, namespaces (bubblewrap) with Landlock inside at most 25 ms. The launcher is started as
``python -I -S -c <bootstrap> <bytecode>``: its bytecode was compiled once by MAIA, so nothing is
compiled per call and no .pyc is needed (PYTHONDONTWRITEBYTECODE=1 changes nothing). As root with
cgroup v1 cpuacct, the CPU time of each process tree is printed too: on a loaded machine the
wall-clock medians mostly measure waiting for a core, the CPU time does not.
Run with the virtual environment's Python: ``.venv/bin/python bench/sandbox.py [runs]``.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from common import rounds

from maia.process.sandbox.policy import SandboxPolicy, landlock_abi, namespace_support

LANDLOCK_TARGET_MS = 12.0
NAMESPACES_TARGET_MS = 25.0


def _run(argv: Sequence[str]) -> Callable[[], object]:
    return lambda: subprocess.run(argv, capture_output=True, check=True)


def _interleaved(runners: Sequence[Callable[[], object] | None], runs: int) -> list[float | None]:
    """Median seconds of each runner (None: not measured), called in turn ``runs`` times (after a warm-up)."""
    for runner in runners:
        if runner is not None:
            runner()
    samples: list[list[float]] = [[] for _ in runners]
    for _ in range(runs):
        for runner, bucket in zip(runners, samples, strict=True):
            if runner is None:
                continue
            start = time.perf_counter()
            runner()
            bucket.append(time.perf_counter() - start)
    return [statistics.median(b) if b else None for b in samples]


def _cell(value: float | None, bare: float, target: float) -> str:
    if value is None:
        return f"{'n/a':>10} {'':>9} {'':>5}"
    added = (value - bare) * 1000
    return f"{value * 1000:>8.2f}ms {added:>+7.2f}ms {'ok' if added <= target else 'OVER':>5}"


CGROUP = Path("/sys/fs/cgroup/cpuacct/maia-bench-sandbox")


def _cpu_costs(argvs: Sequence[Sequence[str] | None], runs: int) -> list[float | None] | None:
    """Mean CPU seconds of each argv's whole process tree (a cgroup's cpuacct counts descendants, those
    reaped inside bubblewrap's PID namespace included): a figure machine load does not inflate. None
    where no cgroup can be made (not root, no cgroup v1 cpuacct)."""
    try:
        CGROUP.mkdir(exist_ok=True)
    except OSError:
        return None
    procs, usage = CGROUP / "cgroup.procs", CGROUP / "cpuacct.usage"

    def enter() -> None:
        procs.write_text("0")

    try:
        costs: list[float | None] = []
        for argv in argvs:
            if argv is None:
                costs.append(None)
                continue
            total = 0
            for _ in range(runs):
                before = int(usage.read_text())
                subprocess.run(argv, capture_output=True, check=True, preexec_fn=enter)
                total += int(usage.read_text()) - before
            costs.append(total / runs / 1e9)
        return costs
    finally:
        deadline = time.monotonic() + 5
        while procs.read_text().strip() and time.monotonic() < deadline:  # bubblewrap's last exits
            time.sleep(0.01)
        with contextlib.suppress(OSError):
            CGROUP.rmdir()


def main() -> None:
    """Measure and print the medians side by side, and what each sandbox adds."""
    runs = rounds(sys.argv[1:], 40, __doc__)
    abi, reason = landlock_abi()
    usable, why = namespace_support()
    with tempfile.TemporaryDirectory() as tmp:
        launch = Path(tmp)
        landlock = SandboxPolicy("workspace-write", launch, temp_dirs=(Path(tempfile.gettempdir()),))
        namespaces = SandboxPolicy("workspace-write", launch, namespaces=True)
        rows = []
        cpu_rows = []
        for label, command in (("true", ["true"]), ("bash -c true", ["bash", "-c", "true"])):
            argvs = [
                command,
                landlock.launcher_argv(command) if abi >= 1 else None,
                namespaces.launcher_argv(command) if usable else None,
            ]
            bare, alone, both = _interleaved([_run(a) if a is not None else None for a in argvs], runs)
            assert bare is not None
            rows.append((label, bare, alone, both))
            cpu = _cpu_costs(argvs, runs)
            if cpu is not None and cpu[0] is not None:
                cpu_rows.append((label, cpu[0], cpu[1], cpu[2]))
        interpreter = [str(Path(sys.executable).resolve()), "-I", "-S", "-c", "pass"]
        python_alone, _unused = _interleaved([_run(interpreter), None], runs)
    print(f"sandbox start-up, median of {runs} interleaved runs (Python {sys.version.split()[0]})")
    print(f"  Landlock: ABI {abi}" + (f" ({reason})" if abi < 1 else ""))
    print("  namespaces: bubblewrap" if usable else f"  namespaces: not available ({why})")
    header = f"  {'command':<14} {'bare':>10} | {'Landlock':>10} {'added':>9} {'<12ms':>5} |"
    print(f"{header} {'bwrap+Landlock':>10} {'added':>9} {'<25ms':>5}")
    for label, bare, alone, both in rows:
        print(
            f"  {label:<14} {bare * 1000:>8.2f}ms | {_cell(alone, bare, LANDLOCK_TARGET_MS)} |"
            f" {_cell(both, bare, NAMESPACES_TARGET_MS)}"
        )
    if cpu_rows:
        print("  CPU time of each process tree (cgroup cpuacct; machine load does not inflate it):")
        for label, bare_cpu, alone_cpu, both_cpu in cpu_rows:
            print(
                f"  {label:<14} {bare_cpu * 1000:>8.2f}ms | {_cell(alone_cpu, bare_cpu, LANDLOCK_TARGET_MS)} |"
                f" {_cell(both_cpu, bare_cpu, NAMESPACES_TARGET_MS)}"
            )
    assert python_alone is not None
    print(
        f"  for reference, the interpreter alone (python -I -S -c pass): {python_alone * 1000:.2f}ms; the launcher"
        " adds Landlock's system calls and one exec to it"
    )


if __name__ == "__main__":
    main()
