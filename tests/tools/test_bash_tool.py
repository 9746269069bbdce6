"""The Bash tool with real processes: merged output, status line, 30,000-character cut, timeout, Ctrl+C."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from maia.core.contracts import ToolContext
from maia.tools.bash import BashTool
from tests.agent.helpers import wait_gone


async def test_output_and_exit_code_line(tmp_path: Path) -> None:
    out = await BashTool().execute({"command": "echo out; echo err >&2; false"}, ToolContext(launch=tmp_path))
    assert out == "out\nerr\n[exit code: 1]"


async def test_runs_in_the_launch_folder_with_bash(tmp_path: Path) -> None:
    out = await BashTool().execute({"command": "pwd; echo ${BASH_VERSION:+bash}"}, ToolContext(launch=tmp_path))
    assert out == f"{tmp_path}\nbash\n[exit code: 0]"


async def test_agent_env_is_passed(tmp_path: Path) -> None:
    out = await BashTool().execute(
        {"command": "echo $MAIA_TEST_VAR"}, ToolContext(launch=tmp_path, env={"MAIA_TEST_VAR": "v"})
    )
    assert out == "v\n[exit code: 0]"


async def test_long_output_keeps_head_and_tail(tmp_path: Path) -> None:
    out = await BashTool().execute({"command": "seq 1 100000"}, ToolContext(launch=tmp_path))
    body, status = out.rsplit("\n", 1)
    assert status == "[exit code: 0]"
    assert len(body) <= 30_000 + 1
    assert body.startswith("1\n2\n3\n") and body.endswith("99999\n100000")
    assert "characters cut" in body


async def test_timeout_kills_the_grandchild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("maia.tools.bash.DEFAULT_TIMEOUT", 0.5)
    out = await BashTool().execute({"command": "sleep 60 & echo $!; wait"}, ToolContext(launch=tmp_path))
    pid_line, status = out.split("\n")
    assert status == "[timed out (0.5 s)]"
    assert await wait_gone(int(pid_line))


async def test_ctrl_c_kills_the_grandchild(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    task = asyncio.create_task(
        BashTool().execute({"command": f"sleep 60 & echo $! > {pid_file}; wait"}, ToolContext(launch=tmp_path))
    )
    while not pid_file.exists() or not pid_file.read_text().strip():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(int(pid_file.read_text()))


async def test_a_command_that_cannot_start(tmp_path: Path) -> None:
    out = await BashTool().execute({"command": "/nonexistent/program"}, ToolContext(launch=tmp_path))
    assert out.endswith("[exit code: 127]") and "No such file or directory" in out
