"""Shared timing helpers for the benchmarks: medians of repeated runs, references interleaved with them."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path

Row = tuple[str, float, float | None, float | None]  # (label, measured s, reference s or None = skipped, target)


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


def run_command(argv: Sequence[str], *, shell: bool = False) -> Callable[[], object]:
    """A callable running a command (output discarded); a failure to start raises, a non-zero exit does not."""
    if shell:
        return lambda: subprocess.run(argv[0], shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return lambda: subprocess.run(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def interleaved(cases: Mapping[str, Callable[[], object] | None], runs: int) -> dict[str, float | None]:
    """Median seconds of each case, all cases run once per round in turn (after a warm-up round).

    A case given as None, or one that raises, is reported as None ("skipped"), never dropped.
    Running the measured paths and their references in the same rounds keeps them under the same load.
    """
    alive: dict[str, Callable[[], object]] = {}
    for label, fn in cases.items():
        if fn is None:
            continue
        try:
            fn()
        except Exception as error:  # a reference that cannot run is reported, not hidden
            print(f"  ({label}: skipped, {type(error).__name__}: {error})")
            continue
        alive[label] = fn
    samples: dict[str, list[float]] = {label: [] for label in alive}
    labels = list(alive)
    for round_no in range(runs):
        # rotate the order so no case always runs right after the same neighbour
        shift = round_no % len(labels) if labels else 0
        for label in labels[shift:] + labels[:shift]:
            start = time.perf_counter()
            alive[label]()
            samples[label].append(time.perf_counter() - start)
    return {label: statistics.median(samples[label]) if label in samples else None for label in cases}


def peak_rss(code: str, env: Mapping[str, str] | None = None) -> tuple[int, int, int]:
    """Run ``code`` in a fresh Python; (its peak RSS, its RSS when ``_ready()`` was called, its children's), in kB.

    The peak is the kernel's high-water mark of the child's own memory (``VmHWM``), not a sample; it
    is read from ``/proc`` because ``ru_maxrss`` would include the parent's memory inherited at spawn.
    The children's figure is ``RUSAGE_CHILDREN``'s largest child (which inherits the child's small start).
    """
    prologue = (
        "import atexit, resource, sys\n"
        "def _hwm():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'):\n"
        "            return int(line.split()[1])\n"
        "    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "def _ready():\n"
        "    print('READY', _hwm(), flush=True)\n"
        "atexit.register(lambda: print('PEAK', _hwm(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prologue + code],
        capture_output=True,
        text=True,
        env=None if env is None else dict(env),
    )
    if done.returncode != 0:
        raise RuntimeError(f"child failed: {done.stderr.strip()[-800:]}")
    ready = peak = children = 0
    for line in done.stdout.splitlines():
        if line.startswith("READY "):
            ready = int(line.split()[1])
        elif line.startswith("PEAK "):
            peak, children = (int(v) for v in line.split()[1:3])
    return peak, ready, children


def report(title: str, rows: Sequence[Row]) -> None:
    """Print rows of (label, measured s, reference s, target ratio) with their ratio and verdict.

    A reference of None prints "skipped"; a target of None marks a row shown for information only.
    """
    print(title)
    print(f"  {'case':<64} {'median':>10} {'reference':>10} {'ratio':>7} {'target':>7}")
    for label, value, reference, target in rows:
        goal = "-" if target is None else f"{target:.2f}x"
        if reference is None:
            print(f"  {label:<64} {value * 1000:>8.2f}ms {'skipped':>10} {'-':>7} {goal:>7}")
            continue
        ratio = value / reference if reference else float("inf")
        verdict = "info" if target is None else "ok" if ratio <= target else "OVER"
        print(f"  {label:<64} {value * 1000:>8.2f}ms {reference * 1000:>8.2f}ms {ratio:>6.2f}x {goal:>7} {verdict}")


def dump(path: str | None, data: object) -> None:
    """Write the figures as JSON when a path was given (to compare runs)."""
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)


def rounds(args: Sequence[str], default: int, doc: str | None) -> int:
    """The number of rounds a bench script was given (its first argument); ``-h`` prints its docstring."""
    if not args:
        return default
    if args[0] in ("-h", "--help"):
        print((doc or "").strip())
        print(f"\nusage: {sys.argv[0]} [ROUNDS]   (default {default})")
        raise SystemExit(0)
    try:
        return int(args[0])
    except ValueError:
        raise SystemExit(f"{sys.argv[0]}: ROUNDS must be a number, not {args[0]!r} (-h for help)") from None


def sse_answer(text: str, model: str = "m") -> bytes:
    """A LiteLLM streamed answer holding ``text`` (one content chunk, then the end with usage)."""
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": {"content": text}}],
        },
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
        },
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


class LoopbackProxy(BaseHTTPRequestHandler):
    """A LiteLLM-shaped server for benches (stdlib only): ``/v1/models`` lists ``models``; a subclass answers POST."""

    protocol_version = "HTTP/1.1"
    models: bytes = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()

    def log_message(self, *args: object) -> None:
        """Quiet: a bench prints its own figures only."""

    def send_body(self, body: bytes, kind: str) -> None:
        """Answer 200 with ``body``."""
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        """The model list; any other GET (``/model/info``) an empty list."""
        self.send_body(self.models if self.path.startswith("/v1/models") else b'{"data": []}', "application/json")


def compile_caches(root: Path) -> None:
    """Bytecode for MAIA and its libraries: with PYTHONDONTWRITEBYTECODE set, each start would compile them."""
    import compileall

    for folder in (root / "maia", root / "commands"):
        compileall.compile_dir(str(folder), quiet=1)
    for path in sys.path:
        if path.endswith("site-packages"):
            compileall.compile_dir(path, quiet=1, maxlevels=20)
