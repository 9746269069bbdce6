"""The chat: first prompt (answering and silent terminals), idle output, redraw cost, Markdown, keystroke latency.

Run: ``.venv/bin/python bench/chat.py [runs]`` (needs the test extras: pexpect, pyte, pytest-httpserver).

Every start-up figure is the median of ``runs`` runs, taken side by side with its reference (the
runs alternate), in the same kind of pseudo-terminal read through the tests' pyte screen:

- *answering*: the terminal answers queries as a real one does (cursor position, DEC modes…);
- *silent*: a plain PTY that answers nothing (a script, a CI runner): blessed's queries time out.

The reference is a Python that imports the stack and creates a ``blessed.Terminal`` in the same
terminal, then prints a line. Idle output counts the bytes the chat writes while it waits at the
prompt. Redraw cost is measured in the process, the frames written to a real PTY.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# run as a script, this file's folder comes first on the path, and bench/queue.py hides the standard queue module
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))

from pytest_httpserver import HTTPServer  # noqa: E402
from werkzeug import Request, Response  # noqa: E402

from bench.common import rounds  # noqa: E402
from tests.e2e.terminal import Terminal, chat_env  # noqa: E402

STACK = (
    "import click, httpx, jsonschema, yaml, wcwidth, rich.markdown, tree_sitter, tree_sitter_bash, pathspec, "
    "filelock, markdownify, blessed\nterm = blessed.Terminal()\nprint('REFERENCE READY')"
)
PROMPT = "Your request"


def launch(home: Path, project: Path, answers: bool, reference: bool = False) -> Terminal:
    """``maia chat`` (or the reference program) in a 100×30 pseudo-terminal."""
    program = [sys.executable, "-c", STACK] if reference else None
    return Terminal(
        ["chat", "-m", "bench-model"], project, chat_env(home, project), 100, 30, answers=answers, program=program
    )


def time_to(term: Terminal, needle: str) -> float:
    """Seconds from spawn until ``needle`` is on the screen."""
    term.wait_for(needle, timeout=60)
    return time.monotonic() - term.started


def startup(home: Path, project: Path, runs: int, answers: bool) -> tuple[float, float, float, float]:
    """Median seconds to the first prompt, to the first request reaching the server (typed as soon as the box
    shows), to text typed at launch being visible, and to the reference's line, alternating runs."""
    chat, request, typed, reference = [], [], [], []
    for _ in range(runs):
        ref = launch(home, project, answers, reference=True)
        reference.append(time_to(ref, "REFERENCE READY"))
        ref.close()
        term = launch(home, project, answers)
        chat.append(time_to(term, PROMPT))
        REQUESTS.clear()
        term.send("first request\r")
        term.wait_until(lambda: bool(REQUESTS), "the request never reached the server", timeout=60)
        request.append(REQUESTS[0] - term.started)
        term.close()
        typed.append(typed_visible(home, project, answers))
    return statistics.median(chat), statistics.median(request), statistics.median(typed), statistics.median(reference)


def typed_visible(home: Path, project: Path, answers: bool) -> float:
    """Seconds from spawn until text typed the moment the input box shows is visible in it (what a person
    typing at once sees; keys typed before the chat reads the terminal are the terminal's own echo)."""
    term = launch(home, project, answers)
    for needle in (PROMPT, "typed at once"):
        while needle not in term.text():
            term.pump(0)  # read as soon as anything arrives: wait_for would pump 50 ms at a time
            if time.monotonic() - term.started > 60:
                raise AssertionError(f"{needle!r} never appeared; screen:\n{term.text()}")
        if needle == PROMPT:
            term.send("typed at once")
    seconds = time.monotonic() - term.started
    term.close()
    return seconds


def idle_output(home: Path, project: Path, seconds: float = 5.0) -> tuple[float, int]:
    """Bytes per second written at the idle prompt (after it settled), and the RSS (kB) then."""
    term = launch(home, project, True)
    # the bar knows the maximum and counts exactly (no "~": the tokenizer is loaded): start-up is over
    term.wait_until(lambda: "/ 128k" in term.text() and "~" not in term.screen.display[-1], "never ready", 60)
    term.settle(quiet=1.0, timeout=15)
    before = len(term.raw)
    term.pump(seconds)
    rate = (len(term.raw) - before) / seconds
    rss = 0
    for line in Path(f"/proc/{term.child.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    term.close()
    return rate, rss


REQUESTS: list[float] = []  # when the server received each chat request (time.monotonic)


def slow_stream(_request: Request) -> Response:
    """An answer arriving in 100 pieces, 50 ms apart."""
    REQUESTS.append(time.monotonic())

    def body() -> Iterator[bytes]:
        for n in range(100):
            yield b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": f"w{n} "}}]}).encode() + b"\n\n"
            time.sleep(0.05)
        yield b"data: [DONE]\n\n"

    return Response(body(), content_type="text/event-stream")


def keystroke_latency(home: Path, project: Path, samples: int = 10) -> float:
    """Median milliseconds from a key press to its echo in the input box while an answer streams."""
    term = launch(home, project, True)
    term.wait_for(PROMPT)
    term.send("go\r")
    term.wait_for("w1 ")
    delays = []
    for n in range(samples):
        marker = chr(0x0436 + n)  # Cyrillic letters: no escape sequence contains their bytes
        start = time.monotonic()
        term.send(marker)
        # read as soon as anything arrives (pump(0) returns after one read): wait_for pumps 50 ms at a time
        while marker not in term.text():
            term.pump(0)
            if time.monotonic() - start > 10:
                raise AssertionError(f"{marker!r} never appeared")
        delays.append(time.monotonic() - start)
        time.sleep(0.05)
    term.close()
    return statistics.median(delays) * 1000


def redraw_costs(lengths: tuple[int, ...] = (1_000, 10_000, 100_000, 200_000)) -> list[tuple[int, float]]:
    """Milliseconds per frame (a piece of text arrives, the frame is redrawn) after ``n`` characters streamed."""
    import pty
    import random

    from maia.frontends.chat.term import TerminalUI

    random.seed(1)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "x" * 12, "code()", "\tindent"]
    results = []
    for n in lengths:
        text = ""
        while len(text) < n:
            text += " ".join(random.choice(words) for _ in range(12)) + ("\n" if random.random() < 0.3 else " ")
        master, slave = pty.openpty()
        os.set_blocking(master, False)
        stop = threading.Event()

        def drain(fd: int = master, done: threading.Event = stop) -> None:
            while not done.is_set():
                try:
                    os.read(fd, 1 << 16)
                except BlockingIOError:
                    time.sleep(0.001)
                except OSError:
                    return

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        stdin = os.fdopen(slave, "r", closefd=False)
        stdout = os.fdopen(os.dup(slave), "w", encoding="utf-8", closefd=True)

        async def run(body: str = text[:n], out: object = stdout, inp: object = stdin) -> float:
            ui = TerminalUI(stdin=inp, stdout=out)  # type: ignore[arg-type]
            ui.start()
            ui.set_busy(True, "Thinking")
            ui.on_thinking(True)
            ui.on_text(body)
            ui.redraw()
            samples = []
            for _ in range(15):
                start = time.perf_counter()
                ui.on_text("w ")
                ui.redraw()
                samples.append(time.perf_counter() - start)
            ui.on_text_end()
            ui.stop()
            return statistics.median(samples)

        results.append((n, asyncio.run(run()) * 1000))
        stop.set()
        stdout.close()
        os.close(slave)
        os.close(master)
    return results


def main() -> None:
    """Measure and print."""
    runs = rounds(sys.argv[1:], 7, __doc__)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
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
        startup(home, project, 1, True)  # warm caches (vocabulary placed, bytecode)
        answering, first_request, typed, answering_ref = startup(home, project, runs, True)
        silent, _silent_request, _silent_typed, silent_ref = startup(home, project, runs, False)
        rate, rss = idle_output(home, project)
        latency = keystroke_latency(home, project)
    server.stop()
    from maia.frontends.chat.markdown import render_markdown

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
    print(f"maia chat to the first prompt (medians of {runs} runs, side by side with the reference)")
    print(
        f"  answering terminal: {answering * 1000:.0f} ms; stack + blessed Terminal {answering_ref * 1000:.0f} ms;"
        f" ratio {answering / answering_ref:.2f}x (target ≤ 1.2x)"
    )
    print(
        f"  text typed as the box shows, visible: {typed * 1000:.0f} ms; ratio {typed / answering_ref:.2f}x"
        f" (target ≤ 1.2x) {'OK' if typed / answering_ref <= 1.2 else 'OVER'}"
    )
    print(
        f"  first request typed as the box shows, at the server: {first_request * 1000:.0f} ms;"
        f" ratio {first_request / answering_ref:.2f}x the reference (no wait for the tokenizer; target ≤ 1.5x)"
        f" {'OK' if first_request / answering_ref <= 1.5 else 'OVER'}"
    )
    print(
        f"  silent terminal:    {silent * 1000:.0f} ms; stack + blessed Terminal {silent_ref * 1000:.0f} ms;"
        f" {1000 * (silent - answering):+.0f} ms vs answering (target ≤ +500 ms)"
    )
    print(f"idle output at the prompt: {rate:.0f} bytes/s; idle memory (RSS): {rss / 1024:.1f} MB")
    print(f"keystroke to screen while an answer streams: median {latency:.1f} ms")
    print(f"2,000-line Markdown answer rendered in {render:.0f} ms")
    print("redraw while an answer streams (a piece arrives, one frame):")
    for length, cost in redraw_costs():
        print(f"  after {length:>7,} characters: {cost:.2f} ms per frame")


if __name__ == "__main__":
    main()
