"""The cost of a turn, end to end: ``maia ask`` against a loopback LiteLLM-shaped server, beside a minimal
httpx client doing the same request in the same rounds.

Rows: one short turn (wall time and peak RSS), then a 20-turn ``maia ask --continue`` series (wall
time and peak RSS per turn, first and last turn), each with the minimal client's figures.

Run: ``.venv/bin/python bench/turn.py [runs]``. Python compiles MAIA's modules on every start when
``PYTHONDONTWRITEBYTECODE`` is set and no cache exists: the script compiles both sides first.
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ANSWER = "Hello there, this is a short answer."
MODELS = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()


def _stream(text: str) -> bytes:
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": text}}],
        },
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
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
        self._send(MODELS if self.path.startswith("/v1/models") else b'{"data": []}', "application/json")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._send(_stream(ANSWER), "text/event-stream")


CLIENT = """
import httpx, json, sys
url = sys.argv[1]
with httpx.Client() as client:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with client.stream("POST", url, json=body) as response:
        parts = []
        for line in response.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                for choice in json.loads(line[6:]).get("choices", []):
                    parts.append(choice.get("delta", {}).get("content") or "")
print("".join(parts))
"""


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one process, from the kernel's accounting of that child (wait4)."""
    start = time.perf_counter()
    pid = os.posix_spawn(
        argv[0],
        argv,
        env,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ],
    )
    _pid, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv} failed")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    root = Path(__file__).resolve().parents[1]
    compileall.compile_dir(str(root / "maia"), quiet=1)
    compileall.compile_dir(str(root / "commands"), quiet=1)
    for path in sys.path:
        if path.endswith("site-packages"):
            compileall.compile_dir(path, quiet=1, maxlevels=20)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        project.mkdir()
        settings = {"LiteLLM_URL": url, "OpenAI_EndPoint": "/v1/chat/completions", "LiteLLM_Models": "/v1/models"}
        (home / "settings.json").write_text(json.dumps({**settings, "MaxContextTokens": 128000}))
        env = {**os.environ, "MAIA_HOME": str(home), "MAIA_CWD": str(project)}
        client = Path(tmp) / "client.py"
        client.write_text(CLIENT)
        maia = [sys.executable, "-m", "maia", "ask", "-m", "m", "--no-save", "hi"]
        reference = [sys.executable, str(client), f"{url}/v1/chat/completions"]
        samples: dict[str, list[tuple[float, float]]] = {"maia": [], "reference": []}
        run(maia, env)
        run(reference, env)
        for _ in range(runs):
            samples["maia"].append(run(maia, env))
            samples["reference"].append(run(reference, env))
        print("maia ask, one short turn, beside a minimal httpx client (medians)")
        wall = statistics.median(s[0] for s in samples["maia"])
        ref_wall = statistics.median(s[0] for s in samples["reference"])
        rss = statistics.median(s[1] for s in samples["maia"])
        ref_rss = statistics.median(s[1] for s in samples["reference"])
        ratio = wall / ref_wall
        print(f"  wall   {wall * 1000:8.1f} ms   reference {ref_wall * 1000:8.1f} ms   {ratio:5.2f}x (target 1.8x)")
        print(f"  RSS    {rss:8.1f} MiB  reference {ref_rss:8.1f} MiB  (target 60 MiB)")

        series = [sys.executable, "-m", "maia", "ask", "-m", "m"]
        turns: list[tuple[float, float]] = []
        for n in range(20):
            turns.append(run([*series, *(["--continue"] if n else []), f"turn {n}: go on"], env))
            run(reference, env)
        print("maia ask --continue, a 20-turn series: per turn")
        for n in (0, 9, 19):
            print(f"  turn {n + 1:2}: {turns[n][0] * 1000:8.1f} ms  {turns[n][1]:6.1f} MiB")
        print(f"  median {statistics.median(t[0] for t in turns) * 1000:8.1f} ms, reference {ref_wall * 1000:.1f} ms")
    server.shutdown()


if __name__ == "__main__":
    main()
