"""MAIA's child processes up to their first model request, side by side with their references.

- *sub-agent*: from the Agent call (``launch_subagent``, which starts ``python -I -m maia --subagent``
  by absolute path) to the child's first request reaching a loopback LiteLLM-shaped server, beside a
  ``python -I`` that only imports the child's module (``maia.frontends.subagent``); target ≤ 1.5x.
- *detached workflow*: from the start of ``maia run AGENT TASK --detach`` to the worker's first
  request at the server; target ≤ 0.6 s, shown beside ``maia --help`` run in the same rounds (the
  machine's pace).

Run: ``.venv/bin/python bench/children.py [runs]`` (medians; each case and its reference alternate).
Python compiles MAIA's modules on every start when ``PYTHONDONTWRITEBYTECODE`` is set and no cache
exists (MAIA's children may not write one): the script compiles both sides first.
"""

from __future__ import annotations

import asyncio
import compileall
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = "m"
_TASK = re.compile(rb"bench task (\d+)")
AGENT = """---
name: {name}
description: Answers at once.
---
# Instructions system
Answer.

# Missions
- Answer the task.

# Output
One line.
"""
FIRST: dict[int, float] = {}  # task number → when the server first saw it (time.monotonic)
_LOCK = threading.Lock()


def _stream(text: str) -> bytes:
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": MODEL,
            "choices": [{"index": 0, "delta": {"content": text}}],
        },
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": MODEL,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
        },
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


class _Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        models = {"object": "list", "data": [{"id": MODEL, "object": "model"}]}
        self._send(
            json.dumps(models if self.path.startswith("/v1/models") else {"data": []}).encode(), "application/json"
        )

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        found = _TASK.search(body)
        if found:
            with _LOCK:
                FIRST.setdefault(int(found.group(1)), time.monotonic())
        self._send(_stream("Done."), "text/event-stream")


def _compile_both_sides() -> None:
    compileall.compile_dir(str(ROOT / "maia"), quiet=1)
    compileall.compile_dir(str(ROOT / "commands"), quiet=1)
    for path in sys.path:
        if path.endswith("site-packages"):
            compileall.compile_dir(path, quiet=1, maxlevels=20)


def _first_seen(number: int, timeout: float = 60.0) -> float:
    deadline = time.monotonic() + timeout
    while number not in FIRST:
        if time.monotonic() > deadline:
            raise SystemExit(f"task {number} never reached the server")
        time.sleep(0.002)
    return FIRST[number]


def _workers_running(home: Path) -> bool:
    """Whether a detached worker of this bench (its MAIA_HOME) still runs."""
    marker = f"MAIA_HOME={home}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"--workflow-id" in (entry / "cmdline").read_bytes() and marker in (entry / "environ").read_bytes():
                return True
        except OSError:
            continue
    return False


def main() -> None:
    """Measure and print."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    _compile_both_sides()
    sys.path.insert(0, str(ROOT))
    from maia.subagents.definitions import load_agents
    from maia.subagents.launcher import launch_subagent
    from maia.subagents.protocol import ChildSpec

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="maia-bench-children-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        (home / "agents" / "rev").mkdir(parents=True)
        project.mkdir()
        (home / "settings.json").write_text(json.dumps({"LiteLLM_URL": url, "MaxContextTokens": 128000}))
        (home / "agents" / "rev" / "AGENT.md").write_text(AGENT.format(name="rev"))
        flow = Path(tmp) / "flows" / "boss"
        flow.mkdir(parents=True)
        (flow / "AGENT.md").write_text(AGENT.format(name="boss"))
        env = {**os.environ, "MAIA_HOME": str(home), "MAIA_CWD": str(project), "LANGUAGE": "en"}
        definition = load_agents(home, project).agents["rev"]
        numbers = iter(range(10**6))

        def subagent() -> float:
            number = next(numbers)
            spec = ChildSpec(definition=definition, task=f"bench task {number}", launch=project, home=home, model=MODEL)
            started = time.monotonic()
            result = asyncio.run(launch_subagent(spec, env=env))
            if not result.ok:
                raise SystemExit(f"the sub-agent failed: {result.error} {result.stderr_tail}")
            return _first_seen(number) - started

        def import_child() -> float:
            started = time.monotonic()
            subprocess.run([python, "-I", "-c", "import maia.frontends.subagent"], env=env, check=True)
            return time.monotonic() - started

        def detached() -> float:
            number = next(numbers)
            started = time.monotonic()
            argv = [python, "-m", "maia", "run", str(flow), f"bench task {number}", "--model", MODEL, "--detach"]
            subprocess.run(argv, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL)
            first = _first_seen(number) - started
            while _workers_running(home):  # the next round starts on a quiet machine
                time.sleep(0.01)
            return first

        def help_() -> float:
            started = time.monotonic()
            subprocess.run([python, "-m", "maia", "--help"], env=env, check=True, stdout=subprocess.DEVNULL)
            return time.monotonic() - started

        cases = {"subagent": subagent, "import": import_child, "detached": detached, "help": help_}
        for case in cases.values():  # warm-up: caches, the agent folder read once
            case()
        samples: dict[str, list[float]] = {label: [] for label in cases}
        labels = list(cases)
        for round_no in range(runs):
            shift = round_no % len(labels)
            for label in labels[shift:] + labels[:shift]:
                samples[label].append(cases[label]())
    server.shutdown()
    medians = {label: statistics.median(values) for label, values in samples.items()}
    ratio = medians["subagent"] / medians["import"]
    print(f"MAIA's children up to their first model request (medians of {runs} interleaved rounds)")
    print(
        f"  sub-agent: Agent call → child's first request {medians['subagent'] * 1000:7.0f} ms;"
        f" importing the child's module {medians['import'] * 1000:7.0f} ms;"
        f" {ratio:.2f}x (target ≤ 1.50x) {'OK' if ratio <= 1.5 else 'OVER'}"
    )
    first = medians["detached"]
    print(
        f"  maia run -d → worker's first request {first * 1000:7.0f} ms (target ≤ 600 ms)"
        f" {'OK' if first <= 0.6 else 'OVER'}; maia --help, same rounds {medians['help'] * 1000:7.0f} ms"
        f" ({first / medians['help']:.2f}x)"
    )


if __name__ == "__main__":
    main()
