"""run_shell: real processes in their own group; timeouts and cancellation kill grandchildren too."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from maia.process.shell import cut_middle, run_shell
from tests.agent.helpers import wait_gone


async def test_output_merged_in_arrival_order_and_exit_code(tmp_path: Path) -> None:
    result = await run_shell("echo out1; echo err1 >&2; echo out2; exit 3", tmp_path)
    assert result.output == "out1\nerr1\nout2\n"
    assert (result.state, result.exit_code) == ("exited", 3)
    assert result.describe() == "[exit code: 3]"


async def test_runs_in_the_given_folder_with_extra_env(tmp_path: Path) -> None:
    result = await run_shell("pwd; echo $MAIA_X", tmp_path, env={"MAIA_X": "yes"})
    assert result.output == f"{tmp_path}\nyes\n"


async def test_argv_without_shell(tmp_path: Path) -> None:
    result = await run_shell(["printf", "%s|", "a b", "$(id)"], tmp_path)
    assert result.output == "a b|$(id)|"


async def test_could_not_start(tmp_path: Path) -> None:
    result = await run_shell(["/nonexistent/program"], tmp_path)
    assert result.state == "failed_to_start"
    assert result.describe().startswith("[the command could not be started:")


async def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    result = await run_shell("sleep 30 & echo $!; wait", tmp_path, timeout=0.5)
    assert result.state == "timeout"
    assert result.describe(0.5) == "[timed out (0.5 s)]"
    assert await wait_gone(int(result.output.split()[0]))


async def test_cancellation_kills_the_group_even_while_starting(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    task = asyncio.create_task(run_shell(f"sleep 30 & echo $! > {pid_file}; wait", tmp_path))
    while not pid_file.exists() or not pid_file.read_text().strip():
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(int(pid_file.read_text()))


async def test_killed_by_signal(tmp_path: Path) -> None:
    result = await run_shell("kill -9 $$", tmp_path)
    assert (result.state, result.signal_number) == ("signal", 9)


async def test_capture_limit_keeps_head_and_tail(tmp_path: Path) -> None:
    result = await run_shell("seq 1 20000", tmp_path, max_chars=1000)
    assert result.output.startswith("1\n2\n3\n") and result.output.endswith("19999\n20000\n")
    assert "characters cut" in result.output and len(result.output) <= 1000 and result.truncated


def test_cut_middle() -> None:
    assert cut_middle("abc", 10) == ("abc", False)
    text, cut = cut_middle("x" * 50 + "y" * 50, 60)
    assert cut and len(text) == 60 and text.startswith("x") and text.endswith("y")


def test_commands_do_not_see_maias_own_virtual_environment(tmp_path: Path) -> None:
    """Issue 28: MAIA run from its venv (PATH starting with it, as `source .venv/bin/activate` does): the
    commands it runs find the system's ``python``, not MAIA's."""
    import os
    import subprocess
    import sys

    own_bin = os.path.join(sys.prefix, "bin")
    assert sys.prefix != sys.base_prefix, "the suite runs from a virtual environment"
    script = (
        "import asyncio, pathlib\n"
        "from maia.process.shell import run_shell\n"
        "r = asyncio.run(run_shell('echo \"$PATH\"; echo \"venv=$VIRTUAL_ENV\"', pathlib.Path('.')))\n"
        "print(r.output, end='')\n"
    )
    env = {**os.environ, "PATH": f"{own_bin}{os.pathsep}/usr/bin{os.pathsep}/bin", "VIRTUAL_ENV": sys.prefix}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    path, venv = done.stdout.splitlines()
    assert path.split(os.pathsep) == ["/usr/bin", "/bin"]
    assert venv == "venv="
