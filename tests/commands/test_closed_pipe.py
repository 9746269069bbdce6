"""A closed pipe on standard output is normal use (``maia sessions list | head``): every command ends at once,
quietly, with the status of a Unix tool ended by SIGPIPE (141), and logs no error."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from maia.commands import PIPE_CLOSED
from tests.streams import sse, text_stream

CHAT = "/v1/chat/completions"
MAIA = [sys.executable, "-m", "maia"]


def run_with_reader_gone(args: list[str]) -> tuple[int, str]:
    """Run ``maia ARGS`` with its standard output a pipe whose reader is closed before MAIA writes."""
    process = subprocess.Popen([*MAIA, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    err = process.stderr.read().decode()
    return process.wait(timeout=60), err


@pytest.mark.parametrize(
    "args",
    [["sessions", "list"], ["permissions"], ["agents", "list"], ["workflows"], ["--help"], ["sessions", "--help"]],
    ids=" ".join,
)
def test_a_listing_into_a_closed_pipe_ends_quietly(args: list[str], home: Path) -> None:
    status, err = run_with_reader_gone(args)
    assert (status, err) == (PIPE_CLOSED, "")
    assert not (home / "errors.log").exists()


def test_models_and_ask_into_a_closed_pipe_end_quietly(server: HTTPServer, home: Path) -> None:
    server.expect_request(CHAT, method="POST").respond_with_data(
        text_stream("Hello there."), content_type="text/event-stream"
    )
    for args in (["models"], ["ask", "-m", "scripted-openai", "say hi"]):
        status, err = run_with_reader_gone(args)
        assert (status, err) == (PIPE_CLOSED, ""), args
    assert not (home / "errors.log").exists()


def test_a_long_streamed_answer_cut_by_head(server: HTTPServer, home: Path) -> None:
    # head exits after its first line while the events still stream: a later write finds the pipe closed
    deltas = [{"choices": [{"index": 0, "delta": {"content": f"line {n} {'x' * 70}\n"}}]} for n in range(5000)]
    server.expect_request(CHAT, method="POST").respond_with_data(sse(*deltas), content_type="text/event-stream")
    ask = shlex.join([*MAIA, "ask", "-m", "scripted-openai", "-o", "stream-json", "tell me a lot"])
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {ask} | head -n 1"], capture_output=True, text=True, env=os.environ.copy()
    )
    assert done.stdout.count("\n") == 1 and done.stderr == ""
    assert done.returncode == PIPE_CLOSED
    assert not (home / "errors.log").exists()
