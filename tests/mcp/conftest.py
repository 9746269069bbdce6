"""MCP test helpers: real SDK servers started as processes on loopback, declarations and rules on disk."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import trust_project

SERVER_APP = Path(__file__).with_name("server_app.py")
READY_TIMEOUT = 90.0  # a cold start of the SDK on a loaded 2-core machine takes seconds


@dataclass
class RunningServer:
    """One server process (HTTP transports) and how to reach it."""

    transport: str
    port: int
    process: subprocess.Popen[str]
    args: list[str] = field(default_factory=list)
    log: Path | None = None

    @property
    def url(self) -> str:
        path = "/sse" if self.transport == "sse" else "/mcp"
        return f"http://127.0.0.1:{self.port}{path}"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)


def _start(args: list[str], log: Path) -> tuple[subprocess.Popen[str], int]:
    handle = log.open("a", encoding="utf-8")
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=handle, text=True)
    handle.close()
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if selector.select(timeout=0.5):
            line = process.stdout.readline()
            if line.startswith("READY "):
                selector.close()
                return process, int(line.split()[1])
            if not line and process.poll() is not None:
                break
    process.kill()
    pytest.fail(f"the MCP test server did not start: {log.read_text(errors='replace')[-2000:]}")


@pytest.fixture
def mcp_server(tmp_path: Path) -> Iterator[Callable[..., RunningServer]]:
    """Start a real SDK server: ``mcp_server("http"|"http-json"|"http-stateless"|"sse", token=…, port=…)``."""
    running: list[RunningServer] = []

    def start(
        transport: str = "http", *, token: str | None = None, port: int = 0, python: str = sys.executable
    ) -> RunningServer:
        args = [python, str(SERVER_APP), "--transport", transport, "--port", str(port)]
        if token:
            args += ["--token", token]
        log = tmp_path / f"server-{transport}-{len(running)}.log"
        process, bound = _start(args, log)
        server = RunningServer(transport, bound, process, args, log)
        running.append(server)
        return server

    yield start
    for server in running:
        server.kill()


def restart(server: RunningServer) -> RunningServer:
    """Start the same server again on the same port (a new process: old sessions are unknown to it)."""
    server.kill()
    args = [*server.args]
    args[args.index("--port") + 1] = str(server.port)
    assert server.log is not None
    process, _port = _start(args, server.log)
    server.process = process
    return server


def stdio_entry(
    marker: Path | None = None, python: str = sys.executable, flags: Sequence[str] = (), **extra: Any
) -> dict[str, Any]:
    """A local server declaration running the test server over stdio."""
    args = [str(SERVER_APP), "--transport", "stdio", *flags]
    if marker is not None:
        args += ["--marker", str(marker)]
    return {"type": "stdio", "command": python, "args": args, **extra}


def write_servers(path: Path, servers: dict[str, Any]) -> Path:
    """Write ``{"mcpServers": servers}`` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    _trust_if_project(path)
    return path


def _trust_if_project(path: Path) -> None:
    """A project's .mcp.json and rules count in a folder the user trusted: these tests' projects are."""
    folder = path.parent if path.name == ".mcp.json" else path.parent.parent
    home = os.environ.get("MAIA_HOME")
    if (path.name == ".mcp.json" or path.parent.name == ".maia") and home and folder.resolve() != Path(home).resolve():
        trust_project(folder)


def write_rules(folder: Path, allow: Sequence[str] = (), deny: Sequence[str] = (), ask: Sequence[str] = ()) -> Path:
    """Write a settings.json holding only permission rules in ``folder``."""
    path = folder / "settings.json"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"permissions": {"allow": list(allow), "ask": list(ask), "deny": list(deny)}}), encoding="utf-8"
    )
    _trust_if_project(path)
    return path


def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll ``condition`` until it holds (fails the test after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("condition not met in time")
        time.sleep(0.05)


async def eventually(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Async :func:`wait_until`: the event loop (and the connections) keep running while it waits."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("condition not met in time")
        await asyncio.sleep(0.05)


def process_gone(pid: int) -> bool:
    """Whether the process no longer exists (or is a zombie nobody waits for)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(") ")[1].startswith("Z")
    except OSError:
        return True


def kill_process(pid: int) -> None:
    """SIGKILL a process, ignoring one already gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
