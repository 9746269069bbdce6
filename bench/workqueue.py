"""Workflows on a queue vs local detached workflows: throughput, memory, time to the first model request.

Run: ``.venv/bin/python bench/workqueue.py [count] [--json FILE]`` (needs the test and queue extras and
``redis-server``). Side by side on this machine, with a scripted LiteLLM server that answers every
parent at once:

- *queue*: ``count`` workflows submitted with ``maia run --queue`` to a redis-server of the bench's own,
  run by 2 ``maia worker`` processes;
- *local*: ``count`` workflows started with ``maia run --detach`` (one process each).

Figures: submission time per workflow, wall time until all are done (throughput), the peak resident
memory of the processes running them (the 2 workers; the sum of the detached workers at once), and
the median and 95th percentile of the time from submission to the workflow's first model request.
"""

from __future__ import annotations

import sys
from pathlib import Path

# run as a script, this file's folder comes first on the path, (the standard library must win over it)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_httpserver import HTTPServer  # noqa: E402
from werkzeug import Request, Response  # noqa: E402

from bench.common import dump  # noqa: E402
from tests.streams import text_stream  # noqa: E402

MODEL = "bench-model"
_TASK = re.compile(r"bench task (\d+)")
AGENT = """---
name: boss
description: Answers at once.
---
# Instructions system
Answer.

# Missions
- Answer the task.

# Output
One line.
"""


class Clock:
    """The scripted server: answers every request at once, notes when each task was first seen."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.first: dict[int, float] = {}

    def handle(self, request: Request) -> Response:
        body = request.get_data(as_text=True)
        found = _TASK.search(body)
        if found:
            with self.lock:
                self.first.setdefault(int(found.group(1)), time.monotonic())
        return Response(text_stream("done"), content_type="text/event-stream")


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def rss_kb(pids: list[int]) -> int:
    """The summed resident memory of these processes (kB), those already gone counting 0."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def detached_workers() -> list[int]:
    """The pids of the local detached workers now running (``maia run … --workflow-id``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--workflow-id" in command and b"maia" in command:
                found.append(int(entry.name))
    return found


def wait_all_done(states: Callable[[], list[str]], count: int, pids: Callable[[], list[int]]) -> tuple[float, int]:
    """Until ``count`` workflows are final: the seconds taken and the peak memory (kB) of ``pids``."""
    started = time.monotonic()
    peak = 0
    while True:
        peak = max(peak, rss_kb(pids()))
        current = states()
        if len(current) == count and all(s in ("done", "error") for s in current):
            return time.monotonic() - started, peak
        if time.monotonic() - started > 1800:
            raise SystemExit("the workflows did not end within 30 minutes")
        time.sleep(0.2)


def run_case(name: str, count: int, base: Path, url: str, redis_url: str | None) -> dict[str, float]:
    """Submit ``count`` workflows, wait for them all; the figures."""
    home = base / f"{name}-home"
    project = base / f"{name}-project"
    home.mkdir()
    project.mkdir()
    (home / "settings.json").write_text(
        json.dumps({"LiteLLM_URL": url, "OpenAI_EndPoint": "/v1/chat/completions", "LiteLLM_Models": "/v1/models"})
    )
    agent = base / f"{name}-flows" / "boss"
    agent.mkdir(parents=True)
    (agent / "AGENT.md").write_text(AGENT)
    env = {**os.environ, "MAIA_HOME": str(home), "MAIA_CWD": str(project), "LANGUAGE": "en"}
    env.pop("MAIA_QUEUE", None)
    workers: list[subprocess.Popen[bytes]] = []
    if redis_url is not None:
        env["MAIA_QUEUE"] = redis_url
        for number in (1, 2):
            (base / f"worker-{number}-home").mkdir()
            shutil.copy(home / "settings.json", base / f"worker-{number}-home" / "settings.json")
            workers.append(
                subprocess.Popen(
                    [sys.executable, "-m", "maia", "worker", "--name", f"bench-{number}"],
                    env={**env, "MAIA_HOME": str(base / f"worker-{number}-home")},
                    stdin=subprocess.DEVNULL,
                )
            )
    clock = CLOCK
    clock.first.clear()
    submitted: dict[int, float] = {}
    began = time.monotonic()
    for number in range(count):
        submitted[number] = time.monotonic()
        args = ["run", str(agent), f"bench task {number}", "--model", MODEL]
        done = subprocess.run(
            [sys.executable, "-m", "maia", *args, *([] if redis_url else ["--detach"])],
            env=env,
            capture_output=True,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise SystemExit(done.stderr.decode())
    submit = (time.monotonic() - began) / count

    def states() -> list[str]:
        listed = subprocess.run(
            [sys.executable, "-m", "maia", "workflows", "--all", "--json"], env=env, capture_output=True
        )
        return [w["state"] for w in json.loads(listed.stdout or b"[]")]

    def pids() -> list[int]:
        return [w.pid for w in workers] if workers else detached_workers()

    _wall, peak = wait_all_done(states, count, pids)
    wall = time.monotonic() - began
    for worker in workers:
        worker.terminate()
        worker.wait(timeout=60)
    firsts = sorted(clock.first[n] - submitted[n] for n in clock.first)
    return {
        "submit_s": submit,
        "wall_s": wall,
        "per_min": count / wall * 60,
        "peak_rss_mb": peak / 1024,
        "first_median_s": statistics.median(firsts),
        "first_p95_s": firsts[int(len(firsts) * 0.95) - 1] if len(firsts) > 1 else firsts[0],
    }


CLOCK = Clock()


def main() -> None:
    """Both cases side by side, then the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", nargs="?", type=int, default=50)
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed")
    server = HTTPServer(host="127.0.0.1", port=free_port(), threaded=True)
    server.expect_request("/v1/models").respond_with_json({"data": [{"id": MODEL, "object": "model"}]})
    server.expect_request("/model/info").respond_with_json({"data": []})
    server.expect_request("/v1/chat/completions").respond_with_handler(CLOCK.handle)
    server.start()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="maia-bench-queue-") as temp:
        base = Path(temp)
        redis = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", temp],
            stdout=subprocess.DEVNULL,
        )
        try:
            time.sleep(0.5)  # redis-server starts in well under that; the first submission would say otherwise
            queue = run_case("queue", args.count, base, server.url_for(""), f"redis://127.0.0.1:{port}/0")
            local = run_case("local", args.count, base, server.url_for(""), None)
        finally:
            redis.terminate()
            redis.wait(timeout=30)
            server.stop()
    print(f"{args.count} workflows, scripted model; queue: 2 workers; local: maia run --detach each")
    print(f"  {'figure':<44} {'queue':>10} {'local':>10}")
    rows = [
        ("submission per workflow (s)", "submit_s", "{:.2f}"),
        ("wall time, all done (s)", "wall_s", "{:.1f}"),
        ("throughput (workflows/min)", "per_min", "{:.1f}"),
        ("peak memory of the runners (MB)", "peak_rss_mb", "{:.0f}"),
        ("submission → first model request, median (s)", "first_median_s", "{:.2f}"),
        ("submission → first model request, p95 (s)", "first_p95_s", "{:.2f}"),
    ]
    for label, key, form in rows:
        print(f"  {label:<44} {form.format(queue[key]):>10} {form.format(local[key]):>10}")
    dump(args.json_path, {"queue": queue, "local": local})


if __name__ == "__main__":
    main()
