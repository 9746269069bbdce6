"""MAIA's child processes up to their first model request, side by side with their references.

- *sub-agent*: from the Agent call (``launch_subagent``, which starts ``python -I -m maia --subagent``
  by absolute path) to the child's first request reaching a loopback LiteLLM-shaped server (the parent, this
  script, makes the child's requests: ``maia.subagents.relay``; its HTTP stack loaded first, as a MAIA
  parent's is by its own model's answer), beside a
  ``python -I`` that only imports the child's module (``maia.frontends.subagent``); target ≤ 1.5x.
  Twice: a cold start (no spare child: a call whose task arrives all at once), and a call that finds a
  spare child loaded and waiting (started and loaded outside the timed part): the one a previous call
  left, or the one started when the model's answer named the Agent tool, if the task took longer to
  stream than a spare takes to load (printed). A third reference is a
  ``python -I`` importing every module the child has loaded at its first request, then ending at once
  (``os._exit``: no teardown, as the child is measured to its first request): what loading its code costs.
- *a conversation's first Agent call, end to end*: ``maia ask`` whose model (the loopback server) names the
  Agent tool, then streams the task for 0.5 s: from the call's last byte to the child's first request
  (the child started at the tool's name, and the first tool call's own loads made meanwhile). Then the
  same with the whole call (name and task) sent in one piece, as some providers send calls, after the
  model "thought" for 0, 200, 300 or 500 ms, sending nothing meanwhile (a LiteLLM proxy holds its headers
  until its first chunk): a spare starts loading 0.1 s after the request is sent. And an answer fanning a
  job out: three Agent calls, each naming the tool then streaming its task for 0.3 s: from the answer's
  last byte to the last of the three children's first requests.
- *detached workflow*: from the start of ``maia run AGENT TASK --detach`` to the worker's first
  request at the server; target ≤ 0.6 s, shown beside ``maia --help`` run in the same rounds (the
  machine's pace).

Run: ``.venv/bin/python bench/children.py [runs] [--against PYTHON]`` (medians; each case and its reference
alternate). ``--against`` names the Python of another MAIA install (a venv of another checkout, e.g. main's):
its cases run in the same rounds and a before/after table is printed.
Python compiles MAIA's modules on every start when ``PYTHONDONTWRITEBYTECODE`` is set and no cache
exists (MAIA's children may not write one): the script compiles both sides first.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path

from common import LoopbackProxy, compile_caches, rounds, sse_answer

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
LOADING: list[float] = []  # a spare child's start → its "ready" (the task's streaming time it needs)
_LOCK = threading.Lock()


_ASK = re.compile(rb"ask bench (\d+)(?: whole (\d+))?(?: fan (\d+))?")
THINKING = (0, 200, 300, 500)  # ms the model "thinks" before it sends a whole Agent call (the one-piece cases)
STREAMING = 0.5  # seconds the bench's model takes to stream an Agent call's task (after naming the tool)
WHOLE: dict[int, float] = {}  # task number → when its Agent call's last byte was sent
FAN = 3  # Agent calls in one answer (a model fanning a job out)
FAN_STREAMING = 0.3  # seconds each of their tasks takes to stream after its call names the tool


def _event(chunk: dict[str, object]) -> bytes:
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


class _Proxy(LoopbackProxy):
    models = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        asked = _ASK.search(body)
        if asked and not re.search(rb'"role": ?"tool"', body):
            whole, fan = asked.group(2), asked.group(3)
            if fan is not None:
                self._agent_calls(int(asked.group(1)), int(fan))
                return
            self._agent_call(int(asked.group(1)), None if whole is None else int(whole) / 1000)
            return
        found = _TASK.search(body)
        if found:
            with _LOCK:
                FIRST.setdefault(int(found.group(1)), time.monotonic())
        self.send_body(sse_answer("Done.", MODEL), "text/event-stream")

    def _agent_call(self, number: int, thinking: float | None) -> None:
        """The model names the Agent tool, then streams the task for STREAMING seconds; or (``thinking`` in
        seconds) it thinks that long, sending nothing, then sends the whole call in one piece."""
        if thinking is not None:
            time.sleep(thinking)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        arguments = json.dumps({"agent": "rev", "task": f"bench task {number}"})
        call = {"index": 0, "id": f"call_{number}", "type": "function", "function": {"name": "Agent", "arguments": ""}}
        if thinking is not None:
            call["function"] = {"name": "Agent", "arguments": arguments}
            rest = {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}
        else:
            self.wfile.write(_event({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]}))
            self.wfile.flush()
            time.sleep(STREAMING)
            more = {"index": 0, "function": {"arguments": arguments}}
            rest = {"choices": [{"index": 0, "delta": {"tool_calls": [more]}}]}
        self.wfile.write(_event(rest) + _event({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        with _LOCK:
            WHOLE[number] = time.monotonic()
        self.close_connection = True

    def _agent_calls(self, number: int, count: int) -> None:
        """``count`` Agent calls in one answer (tasks ``number`` onwards), as a model fanning a job out sends
        them: each names the tool, then streams its task for FAN_STREAMING seconds."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for index in range(count):
            call = {"index": index, "id": f"call_{number + index}", "type": "function"}
            call["function"] = {"name": "Agent", "arguments": ""}
            delta: dict[str, object] = {"tool_calls": [call]}
            if index == 0:
                delta["role"] = "assistant"
            self.wfile.write(_event({"choices": [{"index": 0, "delta": delta}]}))
            self.wfile.flush()
            time.sleep(FAN_STREAMING)
            arguments = json.dumps({"agent": "rev", "task": f"bench task {number + index}"})
            more = {"index": index, "function": {"arguments": arguments}}
            self.wfile.write(_event({"choices": [{"index": 0, "delta": {"tool_calls": [more]}}]}))
        self.wfile.write(_event({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        with _LOCK:
            WHOLE[number] = time.monotonic()
        self.close_connection = True


def _compile_both_sides(other: str | None = None) -> None:
    compile_caches(ROOT)
    if other is not None:  # the other install compiles its own tree and packages
        code = (
            "import compileall, os, sys, maia\n"
            "tree = os.path.dirname(os.path.dirname(maia.__file__))\n"
            "for d in ('maia', 'commands'): compileall.compile_dir(os.path.join(tree, d), quiet=1)\n"
            "for p in sys.path:\n"
            "    if p.endswith('site-packages'): compileall.compile_dir(p, quiet=1, maxlevels=20)\n"
        )
        subprocess.run([other, "-I", "-c", code], check=True, cwd=tempfile.gettempdir())


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
    args = sys.argv[1:]
    other = None
    if "--against" in args:
        at = args.index("--against")
        other = args[at + 1]
        del args[at : at + 2]
    runs = rounds(args, 9, __doc__)
    _compile_both_sides(other)
    sys.path.insert(0, str(ROOT))
    # a MAIA parent has had its own model's answer before its Agent call: its HTTP stack is loaded
    import anyio._backends._asyncio  # noqa: F401
    import httpcore  # noqa: F401

    import maia.subagents.relay  # noqa: F401
    from maia.subagents.definitions import load_agents
    from maia.subagents.launcher import launch_subagent
    from maia.subagents.protocol import ChildSpec
    from maia.subagents.spares import discard_spares, spare_ready, start_spare

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    pythons = {"this": sys.executable, **({"other": other} if other else {})}
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

        loop = asyncio.new_event_loop()  # one loop for every call, as in a conversation (spares are per loop)

        def child_call(python: str, spare: bool) -> float:
            number = next(numbers)
            spec = ChildSpec(definition=definition, task=f"bench task {number}", launch=project, home=home, model=MODEL)
            command = [python, "-I", "-m", "maia", "--subagent"]  # as child_command() builds it
            if spare:  # not timed: the spare a previous call left, or the model's naming of the call started
                loading = time.monotonic()
                loop.run_until_complete(start_spare(project, command=command, env=env))
                if not loop.run_until_complete(spare_ready()):
                    raise SystemExit("the spare child did not load")
                LOADING.append(time.monotonic() - loading)
            else:  # not timed: no spare left from another case
                loop.run_until_complete(discard_spares())
            started = time.monotonic()
            result = loop.run_until_complete(launch_subagent(spec, env=env, command=command))
            if not result.ok:
                raise SystemExit(f"the sub-agent failed: {result.error} {result.stderr_tail}")
            return _first_seen(number) - started

        def imports(python: str, code: str) -> float:
            started = time.monotonic()
            subprocess.run([python, "-I", "-c", code], env=env, check=True, cwd=tmp)
            return time.monotonic() - started

        def detached(python: str) -> float:
            number = next(numbers)
            started = time.monotonic()
            argv = [python, "-m", "maia", "run", str(flow), f"bench task {number}", "--model", MODEL, "--detach"]
            # cwd: no checkout's maia/ folder may stand in for the install's (``-m`` puts it first on the path)
            subprocess.run(argv, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL, cwd=tmp)
            first = _first_seen(number) - started
            while _workers_running(home):  # the next round starts on a quiet machine
                time.sleep(0.01)
            return first

        def ask_first_call(python: str, thinking: int | None = None) -> float:
            number = next(numbers)
            prompt = f"ask bench {number}" + ("" if thinking is None else f" whole {thinking}")
            argv = [python, "-m", "maia", "ask", "--model", MODEL, "--yes", "--allow", "Agent", prompt]
            subprocess.run(argv, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL, cwd=tmp)
            return _first_seen(number) - WHOLE[number]

        def ask_fan(python: str) -> float:
            number = next(numbers)
            for _other in range(FAN - 1):  # the answer's other tasks take the next numbers
                next(numbers)
            argv = [
                python,
                "-m",
                "maia",
                "ask",
                "--model",
                MODEL,
                "--yes",
                "--allow",
                "Agent",
                f"ask bench {number} fan {FAN}",
            ]
            subprocess.run(argv, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL, cwd=tmp)
            return max(_first_seen(number + index) for index in range(FAN)) - WHOLE[number]

        def help_(python: str) -> float:
            started = time.monotonic()
            subprocess.run([python, "-m", "maia", "--help"], env=env, check=True, stdout=subprocess.DEVNULL, cwd=tmp)
            return time.monotonic() - started

        kinds: dict[str, Callable[[str], float]] = {
            "subagent": functools.partial(child_call, spare=False),
            "spare": functools.partial(child_call, spare=True),
            "import": functools.partial(imports, code="import maia.frontends.subagent"),
            # no interpreter teardown (os._exit): the child is measured up to its first request, not its end
            "loaded": functools.partial(  # as the child loads it: no collection meanwhile (maia.__main__)
                imports,
                code="import gc; gc.disable(); import os, maia.frontends.subagent as s; s.warm_up(); os._exit(0)",
            ),
            "detached": detached,
            "ask": ask_first_call,
            **{f"whole{ms}": functools.partial(ask_first_call, thinking=ms) for ms in THINKING},
            "fan": ask_fan,
            "help": help_,
        }
        # another install may have neither spares nor warm_up, nor spares started with the request
        this_only = {"spare", "loaded", *(f"whole{ms}" for ms in THINKING)}
        cases = {
            (side, kind): kinds[kind] for kind in kinds for side in pythons if side == "this" or kind not in this_only
        }
        for (side, _kind), case in cases.items():  # warm-up: caches, the agent folder read once
            case(pythons[side])
        samples: dict[tuple[str, str], list[float]] = {label: [] for label in cases}
        labels = list(cases)
        for round_no in range(runs):
            shift = round_no % len(labels)
            for label in labels[shift:] + labels[:shift]:
                samples[label].append(cases[label](pythons[label[0]]))
        loop.run_until_complete(discard_spares())
        loop.close()
    server.shutdown()
    _report(runs, {label: statistics.median(values) for label, values in samples.items()}, other)


def _report(runs: int, by_side: dict[tuple[str, str], float], other: str | None) -> None:
    medians = {kind: value for (side, kind), value in by_side.items() if side == "this"}
    ratio = medians["subagent"] / medians["import"]
    print(f"MAIA's children up to their first model request (medians of {runs} interleaved rounds)")
    spare = medians["spare"] / medians["import"]
    print(
        f"  sub-agent, cold (no spare: a task named and sent at once): Agent call → child's first request"
        f" {medians['subagent'] * 1000:5.0f} ms; importing the child's module {medians['import'] * 1000:5.0f} ms;"
        f" {ratio:.2f}x (target ≤ 1.50x) {'OK' if ratio <= 1.5 else 'OVER'}"
    )
    print(
        f"  sub-agent, a spare child waiting (the calls after the first; the first too when the spare had time to"
        f" load, {statistics.median(LOADING) * 1000:.0f} ms, from the tool's name or 0.1 s after the request):"
        f" {medians['spare'] * 1000:5.0f} ms;"
        f" {spare:.2f}x the import (target ≤ 1.50x) {'OK' if spare <= 1.5 else 'OVER'}"
    )
    print(
        f"  loading every module the child loads before its first request (its module, then warm_up; the"
        f" process then ends at once, without the teardown the import reference includes):"
        f" {medians['loaded'] * 1000:5.0f} ms; the cold call is {medians['subagent'] / medians['loaded']:.2f}x that"
    )
    print(
        f"  maia ask, a conversation's first Agent call, its task streamed for {STREAMING:.1f} s after the tool's"
        f" name: the call's last byte → the child's first request {medians['ask'] * 1000:5.0f} ms"
    )
    for ms in THINKING:
        print(
            f"  maia ask, a conversation's first Agent call sent in one piece {ms:3d} ms after the request was"
            f" sent: the call's last byte → the child's first request {medians[f'whole{ms}'] * 1000:5.0f} ms"
        )
    print(
        f"  maia ask, {FAN} Agent calls in one answer, each task streamed for {FAN_STREAMING:.1f} s after its"
        f" call names the tool: the answer's last byte → the last child's first request {medians['fan'] * 1000:5.0f} ms"
    )
    first = medians["detached"]
    print(
        f"  maia run -d → worker's first request {first * 1000:7.0f} ms (target ≤ 600 ms)"
        f" {'OK' if first <= 0.6 else 'OVER'}; maia --help, same rounds {medians['help'] * 1000:7.0f} ms"
        f" ({first / medians['help']:.2f}x)"
    )
    if other is None:
        return
    before = {kind: value for (side, kind), value in by_side.items() if side == "other"}
    print(f"\nSide by side, same rounds: other = {other}")
    print("| measure | other | this | target |\n| --- | --- | --- | --- |")
    for kind, text, target in (
        ("subagent", "sub-agent: Agent call → child's first request", ""),
        ("import", "importing the child's module (reference)", ""),
        ("fan", f"`maia ask`, {FAN} Agent calls in one answer: its last byte → the last child's first request", ""),
        ("detached", "`maia run -d` → worker's first request", "≤ 600 ms"),
        ("help", "`maia --help` (the machine's pace)", ""),
    ):
        print(f"| {text} | {before[kind] * 1000:.0f} ms | {medians[kind] * 1000:.0f} ms | {target} |")
    print(
        f"| sub-agent / its own module import | {before['subagent'] / before['import']:.2f}x"
        f" | {medians['subagent'] / medians['import']:.2f}x | ≤ 1.50x |"
    )


if __name__ == "__main__":
    main()
