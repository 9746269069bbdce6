"""The chat: time to the first prompt, idle memory, a 2,000-line Markdown answer, keystroke latency while streaming.

Run: ``.venv/bin/python bench/chat.py [runs]`` (needs the test extras: pexpect, pytest-httpserver).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
from common import time_command
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from maia.ui.markdown import render_markdown

ROOT = Path(__file__).resolve().parents[1]
STACK = (
    "import click, httpx, jsonschema, yaml, wcwidth, rich.markdown, tree_sitter, tree_sitter_bash, pathspec, "
    "filelock, markdownify"
)


def spawn(home: Path, project: Path) -> pexpect.spawn:
    """Start ``maia chat`` in a 100×30 pseudo-terminal."""
    env = {**os.environ, "MAIA_HOME": str(home), "MAIA_CWD": str(project), "TERM": "xterm-256color"}
    return pexpect.spawn(
        sys.executable, ["-m", "maia", "chat", "-m", "bench-model"], env=env, dimensions=(30, 100), timeout=30
    )


def first_prompt(home: Path, project: Path) -> tuple[float, int]:
    """Seconds until the input box is drawn, and the idle RSS (kB) a second later."""
    start = time.perf_counter()
    child = spawn(home, project)
    child.expect("Your request")
    elapsed = time.perf_counter() - start
    time.sleep(1.0)
    rss = 0
    for line in Path(f"/proc/{child.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    child.terminate(force=True)
    return elapsed, rss


def slow_stream(_request: Request) -> Response:
    """An answer arriving in 100 pieces, 50 ms apart."""

    def body() -> Iterator[bytes]:
        for n in range(100):
            yield b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": f"w{n} "}}]}).encode() + b"\n\n"
            time.sleep(0.05)
        yield b"data: [DONE]\n\n"

    return Response(body(), content_type="text/event-stream")


def keystroke_latency(home: Path, project: Path, samples: int = 10) -> float:
    """Median milliseconds from a key press to its echo in the input box while an answer streams."""
    child = spawn(home, project)
    child.delaybeforesend = None  # pexpect waits 50 ms before each send by default
    child.expect("Your request")
    child.send("go\r")
    child.expect("w1 ")
    delays = []
    for n in range(samples):
        marker = chr(0x0436 + n)  # Cyrillic letters: no escape sequence contains their bytes
        start = time.perf_counter()
        child.send(marker)
        child.expect(marker.encode(), timeout=5)
        delays.append(time.perf_counter() - start)
        time.sleep(0.05)
    child.terminate(force=True)
    return statistics.median(delays) * 1000


def main() -> None:
    """Measure and print."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    server = HTTPServer()
    server.start()
    server.expect_request("/v1/models").respond_with_json({"data": [{"id": "bench-model", "max_input_tokens": 128000}]})
    server.expect_request("/v1/chat/completions").respond_with_handler(slow_stream)
    with tempfile.TemporaryDirectory() as folder:
        home, project = Path(folder) / "home", Path(folder) / "project"
        home.mkdir()
        project.mkdir()
        (home / "settings.json").write_text(
            json.dumps(
                {
                    "LiteLLM_URL": server.url_for(""),
                    "OpenAI_EndPoint": "/v1/chat/completions",
                    "LiteLLM_Models": "/v1/models",
                }
            )
        )
        first_prompt(home, project)  # warm caches (vocabulary placed, bytecode)
        results = [first_prompt(home, project) for _ in range(runs)]
        startup = statistics.median(r[0] for r in results)
        rss = statistics.median(r[1] for r in results)
        reference = time_command([sys.executable, "-c", STACK], runs)
        try:
            import blessed  # noqa: F401

            blessed_ref = time_command(
                [
                    sys.executable,
                    "-c",
                    STACK + "\nimport blessed, io\nblessed.Terminal(stream=io.StringIO(), force_styling=True)",
                ],
                runs,
            )
        except ImportError:
            blessed_ref = None
        latency = keystroke_latency(home, project)
    server.stop()
    markdown = "\n".join(
        f"{n}. item **{n}** with `code` and [a link](https://x/{n})" if n % 5 else f"## Part {n}" for n in range(2000)
    )
    render_markdown(markdown, 100)
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        render_markdown(markdown, 100)
        samples.append(time.perf_counter() - start)
    render = statistics.median(samples) * 1000
    print(f"maia chat to the first prompt: median {startup * 1000:.0f} ms of {runs} runs")
    print(
        f"  reference, importing the stack:                {reference * 1000:.0f} ms  ratio {startup / reference:.2f}x"
    )
    if blessed_ref:
        print(
            f"  reference, stack + a blessed Terminal:          {blessed_ref * 1000:.0f} ms  ratio "
            f"{startup / blessed_ref:.2f}x (target ≤ 1.2x)"
        )
    print(f"idle memory (RSS): {rss / 1024:.1f} MB (target ≤ 80 MB)")
    print(f"2,000-line Markdown answer rendered in {render:.0f} ms (target ≤ 50 ms)")
    print(f"keystroke to screen while an answer streams: median {latency:.1f} ms")


if __name__ == "__main__":
    main()
