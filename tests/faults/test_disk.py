"""Findings 5 and 7: a full disk and a read-only MAIA home.

After: a workflow that meets a full disk keeps its final answer (saved with the room the workflow set
aside, or printed), its record says what happened (never "process lost"), no trace file is left empty
or cut, and no Python traceback reaches run.log; a home too full for the tokenizer's vocabulary
still runs (the cache moves to the temporary folder); a read-only home gives one clear sentence, no
traceback, for ``maia mcp add`` and ``maia mcp remove``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from tests.app.helpers import CHAT, maia
from tests.faults.tmpfs import fill, read_only, tmpfs
from tests.streams import text_stream
from tests.subagents.conftest import BODY, agent_md
from tests.workflows.conftest import PARENT_BODY, Gate, WorkflowLiteLLM, detach, wait_ended


@pytest.fixture
def small_home(home: Path) -> Iterator[Path]:
    """The test's MAIA home on a tmpfs of 16 MB (mounted before the settings are written)."""
    with tmpfs(home, "16m") as mounted:
        yield mounted


@pytest.fixture
def tiny_home(home: Path) -> Iterator[Path]:
    """The test's MAIA home on a tmpfs of 1 MB: too small for the tokenizer's 3.6 MB vocabulary."""
    with tmpfs(home, "1m") as mounted:
        yield mounted


def flows(tmp_path: Path) -> Path:
    folder = tmp_path / "flows"
    for name, text in (
        ("boss", agent_md("boss", "", PARENT_BODY.format(agents="rev"), "Runs reviews.")),
        ("rev", agent_md("rev", "", BODY)),
    ):
        (folder / name).mkdir(parents=True)
        (folder / name / "AGENT.md").write_text(text)
    return folder / "boss"


def test_a_full_disk_during_a_workflow_keeps_the_answer_and_says_why(
    small_home: Path, server: HTTPServer, tmp_path: Path
) -> None:
    """The disk fills while the parent thinks: the answer is still saved, the record is final and
    right, traces are whole JSON or absent, run.log holds no traceback."""
    script = WorkflowLiteLLM(server)
    gate = Gate()
    answer = "All reviewed: nothing to fix."
    script.add("parent", gate.hold(text_stream(answer)))
    workflow = detach(flows(tmp_path), "review", "--permission-mode", "allow")
    try:
        assert gate.reached.wait(90), "the parent's request never came"
        filler = fill(small_home)
        gate.open()
        ended = wait_ended(workflow)
    finally:
        gate.open()
    folder = small_home / "workflows" / workflow
    log = (folder / "run.log").read_text(errors="replace")
    assert "Traceback" not in log
    assert "process lost" not in ended["label"] and "is gone" not in (ended["error"] or "")
    result = maia("result", workflow)
    if ended["state"] == "done":  # the room set aside was enough: nothing lost
        assert result.stdout.strip() == answer
    else:  # the record names the full disk, and the answer was printed (run.log is its output)
        assert "disk is full" in (ended["error"] or "")
        assert answer in log
    for trace in (folder / "traces").glob("*"):
        json.loads(trace.read_text())  # whole, never empty or cut
    filler.unlink()


def test_a_home_too_full_for_the_tokenizer_still_answers(tiny_home: Path, server: HTTPServer) -> None:
    """Before: every run failed with "Internal error". After: the vocabulary goes to the temporary folder."""
    server.expect_oneshot_request(CHAT, method="POST").respond_with_data(
        text_stream("Hello.", (10, 2)), content_type="text/event-stream"
    )
    done = maia("ask", "-m", "m", "say hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello."
    assert not (tiny_home / "cache" / "tiktoken" / "fb374d419588a4632f3f557e76b4b70aebbca790").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["mcp", "add", "docs", "https://docs.example.com/mcp"],
        ["mcp", "remove", "old"],
    ],
    ids=["add", "remove"],
)
def test_a_read_only_home_gives_a_clear_error(small_home: Path, command: list[str]) -> None:
    """After: one sentence naming the file and saying read-only; no traceback; the file untouched."""
    servers = small_home / "mcp.json"
    servers.write_text(json.dumps({"mcpServers": {"old": {"url": "https://old.example.com/mcp"}}}))
    read_only(small_home)
    done = maia(*command)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert "read-only" in done.stderr, done.stderr
    assert json.loads(servers.read_text())["mcpServers"] == {"old": {"url": "https://old.example.com/mcp"}}


def test_maia_ask_on_a_full_disk_prints_the_answer_and_says_why(
    project: Path, server: HTTPServer, tmp_path: Path
) -> None:
    """The session cannot be saved (the project's disk is full): the answer is still printed, the error
    says the disk is full, and no traceback is shown."""
    with tmpfs(project, "2m"):
        fill(project)
        server.expect_oneshot_request(CHAT, method="POST").respond_with_data(
            text_stream("Hello.", (10, 2)), content_type="text/event-stream"
        )
        done = maia("ask", "-m", "m", "say hello")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip() == "Hello."
    assert "full" in done.stderr or "space" in done.stderr.lower(), done.stderr


def test_a_worker_lost_on_a_full_disk_is_shown_as_such(small_home: Path, server: HTTPServer, tmp_path: Path) -> None:
    """The worker dies (SIGKILL) while the disk is full, so it wrote nothing: ``maia workflow`` says the
    disk was full rather than a bare "process lost"."""
    import os
    import signal

    script = WorkflowLiteLLM(server)
    gate = Gate()
    script.add("parent", gate.hold(text_stream("never sent")))
    workflow = detach(flows(tmp_path), "review", "--permission-mode", "allow")
    folder = small_home / "workflows" / workflow
    try:
        assert gate.reached.wait(90)
        filler = fill(small_home)
        os.kill(int(json.loads((folder / "workflow.json").read_text())["pid"]), signal.SIGKILL)
        ended = wait_ended(workflow)
    finally:
        gate.open()
    assert ended["label"] == "error (disk full)"
    assert "disk was full" in (ended["error"] or "")
    filler.unlink()
    assert maia("workflow", workflow, "--json").returncode == 0
