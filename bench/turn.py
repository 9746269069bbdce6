"""The cost of a turn, end to end, against a loopback LiteLLM-shaped server, beside a minimal httpx client.

Rows, each with the minimal client's figures measured in the same rounds (they alternate):

- one short ``maia ask`` turn: wall time and peak RSS (medians of ``runs``);
- a 20-turn ``maia ask --continue`` series: wall time and peak RSS of each turn's process, beside a
  minimal client process sending the same growing conversation;
- a 20-turn ``maia chat``, driven in a real pseudo-terminal read through the tests' pyte screen:
  for each turn, the time from Enter to the answer on the screen and the chat's RSS then, beside a
  minimal client that keeps one connection in one process and sends the same growing conversation.

Run: ``.venv/bin/python bench/turn.py [runs] [--turns N] [--json FILE]`` (the chat needs the test
extras: pexpect, pyte). Python compiles MAIA's modules on every start when ``PYTHONDONTWRITEBYTECODE``
is set and no cache exists: the script compiles both sides first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import LoopbackProxy, compile_caches, sse_answer  # noqa: E402  (bench/ is this script's folder)

MODELS = json.dumps({"object": "list", "data": [{"id": "m", "object": "model", "max_input_tokens": 128000}]}).encode()
Turn = tuple[float, float]  # (wall seconds, RSS MiB)


def answer_to(body: bytes) -> str:
    """The answer to a request: it names the last user message, so each turn's answer is told apart."""
    try:
        messages = json.loads(body).get("messages", [])
    except ValueError:
        messages = []
    last = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    if isinstance(last, list):  # content parts
        last = " ".join(str(part.get("text", "")) for part in last if isinstance(part, dict))
    return f"Answer to {str(last).strip().splitlines()[-1] if str(last).strip() else 'you'}. This is a short answer."


class _Proxy(LoopbackProxy):
    models = MODELS

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_body(sse_answer(answer_to(body)), "text/event-stream")


# The minimal client: one request; with a conversation file, it sends the conversation and adds to it.
CLIENT = """
import httpx, json, os, sys
url = sys.argv[1]
history = sys.argv[2] if len(sys.argv) > 2 else None
prompt = sys.argv[3] if len(sys.argv) > 3 else "hi"
messages = json.load(open(history)) if history and os.path.exists(history) else []
messages.append({"role": "user", "content": prompt})
with httpx.Client() as client:
    body = {"model": "m", "stream": True, "messages": messages}
    with client.stream("POST", url, json=body) as response:
        parts = []
        for line in response.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                for choice in json.loads(line[6:]).get("choices", []):
                    parts.append(choice.get("delta", {}).get("content") or "")
messages.append({"role": "assistant", "content": "".join(parts)})
if history:
    json.dump(messages, open(history, "w"))
print("".join(parts))
"""

# The minimal chat: one process, one connection; a line on stdin is a turn, answered by its wall time and RSS.
CHAT_CLIENT = r"""
import httpx, json, sys, time
url = sys.argv[1]
messages = []
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
with httpx.Client() as client:
    print("READY", flush=True)
    for prompt in sys.stdin:
        start = time.perf_counter()
        messages.append({"role": "user", "content": prompt.strip()})
        with client.stream("POST", url, json={"model": "m", "stream": True, "messages": messages}) as response:
            parts = []
            for line in response.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    for choice in json.loads(line[6:]).get("choices", []):
                        parts.append(choice.get("delta", {}).get("content") or "")
        text = "".join(parts)
        sys.stdout.write(text + "\n")  # what a terminal client shows
        messages.append({"role": "assistant", "content": text})
        print("TURN", time.perf_counter() - start, rss(), flush=True)
"""


def run(argv: list[str], env: dict[str, str]) -> Turn:
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


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def one_turn(maia: list[str], reference: list[str], env: dict[str, str], runs: int) -> tuple[Turn, Turn]:
    """Medians of one short ``maia ask`` turn and of the minimal client, alternating."""
    samples: dict[str, list[Turn]] = {"maia": [], "reference": []}
    run(maia, env)
    run(reference, env)
    for _ in range(runs):
        samples["maia"].append(run(maia, env))
        samples["reference"].append(run(reference, env))
    return _median(samples["maia"]), _median(samples["reference"])


def _median(turns: list[Turn]) -> Turn:
    return statistics.median(t[0] for t in turns), statistics.median(t[1] for t in turns)


def ask_series(client: Path, url: str, env: dict[str, str], folder: Path, turns: int) -> tuple[list[Turn], list[Turn]]:
    """``maia ask --continue`` turn after turn, and the minimal client sending the same growing conversation."""
    series = [sys.executable, "-m", "maia", "ask", "-m", "m"]
    history = folder / "reference-history.json"
    maia: list[Turn] = []
    reference: list[Turn] = []
    for n in range(turns):
        prompt = f"turn {n + 1}: go on"
        reference.append(run([sys.executable, str(client), url, str(history), prompt], env))
        maia.append(run([*series, *(["--continue"] if n else []), prompt], env))
    return maia, reference


def chat_series(home: Path, project: Path, url: str, turns: int) -> tuple[list[Turn], list[Turn], float]:
    """A scripted chat in a pseudo-terminal, turn after turn, and the minimal chat client, alternating.

    Returns each turn's (Enter → the answer on the screen, the chat's RSS then), the minimal
    client's (request → answer, its RSS), and the chat's start-up (launch → the input box).
    """
    from tests.e2e.terminal import Terminal, chat_env

    reference = subprocess.Popen(
        [sys.executable, "-c", CHAT_CLIENT, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert reference.stdin is not None and reference.stdout is not None
    assert reference.stdout.readline().strip() == "READY"
    term = Terminal(["chat", "-m", "m"], project, chat_env(home, project), 100, 30)
    chat: list[Turn] = []
    minimal: list[Turn] = []
    try:
        term.wait_for("Your request", timeout=60)
        startup = time.monotonic() - term.started
        term.settle(quiet=0.5, timeout=30)
        for n in range(turns):
            prompt = f"turn {n + 1}: go on"
            reference.stdin.write(prompt + "\n")
            reference.stdin.flush()
            while not (line := reference.stdout.readline()).startswith("TURN"):
                if not line:
                    raise RuntimeError("the minimal chat client stopped")
            _tag, wall, rss = line.split()
            minimal.append((float(wall), int(rss) / 1024))
            needle = f"Answer to {prompt}."
            start = time.monotonic()
            term.send(prompt + "\r")
            while needle not in term.text():  # read as soon as anything arrives
                term.pump(0)
                if time.monotonic() - start > 60:
                    raise RuntimeError(f"turn {n + 1}: the answer never showed")
            chat.append((time.monotonic() - start, _rss_mib(term.child.pid)))
            term.settle(quiet=0.3, timeout=30)  # the turn is over (saved, bar counted) before the next
    finally:
        term.close()
        reference.stdin.close()
        reference.wait(10)
    return chat, minimal, startup


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", type=int, default=7)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--skip-chat", action="store_true", help="no chat series (no test extras)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    options = parser.parse_args()
    compile_caches(ROOT)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        project.mkdir()
        settings = {"LiteLLM_URL": url, "OpenAI_EndPoint": "/v1/chat/completions", "LiteLLM_Models": "/v1/models"}
        (home / "settings.json").write_text(json.dumps({**settings, "MaxContextTokens": 128000}))
        env = {**os.environ, "MAIA_HOME": str(home), "MAIA_CWD": str(project)}
        client = Path(tmp) / "client.py"
        client.write_text(CLIENT)
        endpoint = f"{url}/v1/chat/completions"
        maia = [sys.executable, "-m", "maia", "ask", "-m", "m", "--no-save", "hi"]
        (wall, rss), (ref_wall, ref_rss) = one_turn(maia, [sys.executable, str(client), endpoint], env, options.runs)
        figures["ask"] = {"maia": [wall, rss], "reference": [ref_wall, ref_rss]}
        print(f"maia ask, one short turn, beside a minimal httpx client (medians of {options.runs})")
        print(
            f"  wall   {wall * 1000:8.1f} ms   reference {ref_wall * 1000:8.1f} ms"
            f"   {wall / ref_wall:5.2f}x (target 1.8x)"
        )
        print(f"  RSS    {rss:8.1f} MiB  reference {ref_rss:8.1f} MiB  (target 60 MiB)")

        asked, asked_ref = ask_series(client, endpoint, env, Path(tmp), options.turns)
        figures["ask_series"] = {"maia": asked, "reference": asked_ref}
        chat: list[Turn] = []
        chat_ref: list[Turn] = []
        if not options.skip_chat:
            chat, chat_ref, startup = chat_series(home, project, url, options.turns)
            figures["chat_series"] = {"maia": chat, "reference": chat_ref, "startup": startup}
    server.shutdown()
    print(f"a {options.turns}-turn conversation, per turn: wall (ms) and RSS (MiB), each beside the minimal client")
    header = f"  {'turn':>4}  {'ask --continue':>16}  {'client process':>16}"
    if chat:
        header += f"  {'chat (PTY)':>16}  {'client, 1 process':>17}"
    print(header)
    for n in range(options.turns):
        row = f"  {n + 1:>4}  {_cell(asked[n]):>16}  {_cell(asked_ref[n]):>16}"
        if chat:
            row += f"  {_cell(chat[n]):>16}  {_cell(chat_ref[n]):>17}"
        print(row)
    row = f"  {'med.':>4}  {_cell(_median(asked)):>16}  {_cell(_median(asked_ref)):>16}"
    if chat:
        row += f"  {_cell(_median(chat)):>16}  {_cell(_median(chat_ref)):>17}"
    print(row)
    if chat:
        print(f"  (chat: launch → input box {figures['chat_series']['startup'] * 1000:.0f} ms, not in the turns)")  # type: ignore[index]
    if options.json:
        Path(options.json).write_text(json.dumps(figures, indent=1))


def _cell(turn: Turn) -> str:
    return f"{turn[0] * 1000:7.0f} {turn[1]:6.1f}"


if __name__ == "__main__":
    main()
