"""Running ``maia`` as a real process against the loopback LiteLLM server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer

CHAT = "/v1/chat/completions"


def maia(
    *args: str,
    input: str | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
    env: dict[str, str] | None = None,
    preexec: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m maia ARGS`` to the end (MAIA_HOME and MAIA_CWD come from the test's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "maia", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        preexec_fn=preexec,
        stdin=None if input is not None else subprocess.DEVNULL,
    )


def spawn(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start ``python -m maia ARGS`` in the background."""
    return subprocess.Popen(
        [sys.executable, "-m", "maia", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def chat_bodies(server: HTTPServer) -> list[dict[str, Any]]:
    """The JSON bodies of every chat request the server received, in order."""
    return [json.loads(request.data) for request, _response in server.log if request.path == CHAT]


def wait_until(condition: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    """Poll until ``condition()`` holds (generous: the suite must pass on a loaded 2-core machine)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def session_files(project: Path) -> dict[str, dict[str, Any]]:
    """The session files of a launch folder, parsed."""
    folder = project / ".maia" / ".sessions"
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def user_texts(session: dict[str, Any]) -> list[str]:
    """The text of each user message of a session file."""
    texts = []
    for message in session["messages"]:
        if message["role"] == "user":
            texts.append("".join(b.get("text", "") for b in message["content"] if b["type"] == "text"))
    return texts
