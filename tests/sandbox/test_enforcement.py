"""The sandbox on the real kernel: controls inside and outside, links, moves, fail-closed, groups, network."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from maia.process.sandbox.launcher import DEVICES, FAULT_VARIABLE
from maia.process.shell import run_shell
from tests.agent.helpers import process_alive, wait_gone
from tests.sandbox.helpers import Areas, make_areas, needs_landlock, needs_network_rules, needs_scopes

pytestmark = needs_landlock

# Prints the errno name of opening PATH for writing (OK when it worked).
WRITE_PROBE = (
    "import errno, sys\n"
    "try:\n"
    "    open(sys.argv[1], 'w').write('x')\n"
    "except OSError as e:\n"
    "    print(errno.errorcode[e.errno]); sys.exit(1)\n"
    "print('OK')\n"
)


@pytest.fixture
def areas(tmp_path: Path) -> Areas:
    return make_areas(tmp_path)


async def test_write_inside_the_launch_folder_and_temp_succeeds(areas: Areas) -> None:
    result = await run_shell(
        f"echo in > inside.txt && mkdir -p sub/deeper && echo t > {areas.temp}/t.txt && cat inside.txt",
        areas.launch,
        sandbox=areas.policy(),
    )
    assert (result.state, result.exit_code, result.output) == ("exited", 0, "in\n")
    assert (areas.launch / "inside.txt").read_text() == "in\n"
    assert (areas.temp / "t.txt").read_text() == "t\n"
    assert (areas.launch / "sub" / "deeper").is_dir()
    assert result.note is None


async def test_write_outside_fails_with_eacces(areas: Areas) -> None:
    target = areas.outside / "escape.txt"
    result = await run_shell([sys.executable, "-c", WRITE_PROBE, str(target)], areas.launch, sandbox=areas.policy())
    assert (result.exit_code, result.output.strip()) == (1, "EACCES")
    assert not target.exists()


async def test_companion_without_the_sandbox_the_same_write_succeeds(areas: Areas) -> None:
    target = areas.outside / "escape.txt"
    result = await run_shell([sys.executable, "-c", WRITE_PROBE, str(target)], areas.launch, sandbox=None)
    assert (result.exit_code, result.output.strip()) == (0, "OK")
    assert target.read_text() == "x"


async def test_links_inside_pointing_outside_do_not_open_a_way_out(areas: Areas) -> None:
    (areas.launch / "to-file").symlink_to(areas.outside / "file.txt")
    (areas.launch / "to-dir").symlink_to(areas.outside)
    (areas.outside / "existing.txt").write_text("kept")
    result = await run_shell(
        "echo a > to-file; echo $?; touch to-dir/new; echo $?; ln -s /etc/passwd to-dir/link; echo $?; "
        f"ln {areas.outside}/existing.txt hard; echo $?",
        areas.launch,
        sandbox=areas.policy(),
    )
    codes = [line for line in result.output.splitlines() if line.isdigit()]
    assert codes == ["1", "1", "1", "1"]
    assert "Permission denied" in result.output
    assert sorted(os.listdir(areas.outside)) == ["existing.txt"]
    assert not (areas.launch / "hard").exists()


async def test_moving_a_file_out_fails_and_the_file_stays(areas: Areas) -> None:
    (areas.launch / "keep.txt").write_text("data")
    result = await run_shell(f"mv keep.txt {areas.outside}/", areas.launch, sandbox=areas.policy())
    assert result.exit_code != 0
    assert (areas.launch / "keep.txt").read_text() == "data"
    assert not (areas.outside / "keep.txt").exists()
    # moving inside the writable folders (across them too) works
    moved = await run_shell(
        f"mkdir d && mv keep.txt d/ && mv d/keep.txt {areas.temp}/", areas.launch, sandbox=areas.policy()
    )
    assert moved.exit_code == 0, moved.output
    assert (areas.temp / "keep.txt").read_text() == "data"


async def test_deleting_or_truncating_outside_fails(areas: Areas) -> None:
    victim = areas.outside / "victim.txt"
    victim.write_text("precious")
    result = await run_shell(
        f"rm -f {victim}; truncate -s 0 {victim}; : > {victim}", areas.launch, sandbox=areas.policy()
    )
    assert result.exit_code != 0
    assert victim.read_text() == "precious"


async def test_the_restriction_dies_with_the_child(areas: Areas) -> None:
    target = areas.outside / "later.txt"
    narrow = await run_shell(f"echo 1 > {target}", areas.launch, sandbox=areas.policy())
    assert narrow.exit_code == 1 and not target.exists()
    wider = await run_shell(f"echo 2 > {target}", areas.launch, sandbox=areas.policy(extra_roots=(areas.outside,)))
    assert wider.exit_code == 0 and target.read_text() == "2\n"
    # and MAIA's own process was never confined
    (areas.outside / "maia.txt").write_text("free")


async def test_read_only_allows_devices_and_nothing_else(areas: Areas) -> None:
    result = await run_shell(
        "cat /etc/hostname > /dev/null && echo read-ok; echo x > here.txt",
        areas.launch,
        sandbox=areas.policy(mode="read-only"),
    )
    assert result.output.startswith("read-ok\n")
    assert result.exit_code == 1 and not (areas.launch / "here.txt").exists()


async def test_devices_pipes_heredocs_and_sigpipe_behave_as_outside(areas: Areas) -> None:
    command = (
        "echo x > /dev/null && head -c 4 /dev/urandom | wc -c && cat <<'END'\nheredoc\nEND\n"
        "yes | head -n 1; echo pipe=${PIPESTATUS[0]}; echo out > /dev/stdout"
    )
    result = await run_shell(command, areas.launch, sandbox=areas.policy())
    # yes ends by SIGPIPE (141) as in a normal shell: the launcher restored the default disposition
    assert result.output == "4\nheredoc\ny\npipe=141\nout\n", result.output
    assert result.exit_code == 0
    assert all(d.startswith("/dev/") for d in DEVICES)


async def test_the_command_inherits_no_launcher_descriptor(areas: Areas) -> None:
    result = await run_shell("ls /proc/self/fd", areas.launch, sandbox=areas.policy())
    assert set(result.output.split()) <= {"0", "1", "2", "3"}  # 3: the folder ls is reading


async def test_modules_in_the_launch_folder_cannot_hijack_the_launcher(areas: Areas) -> None:
    # the launcher runs with -I: neither the current folder nor PYTHONPATH is searched for modules
    for name in ("ctypes", "struct", "errno", "stat", "os"):
        (areas.launch / f"{name}.py").write_text(f"open({str(areas.outside / name)!r}, 'w')\n")
    result = await run_shell(
        "echo still-sandboxed", areas.launch, env={"PYTHONPATH": str(areas.launch)}, sandbox=areas.policy()
    )
    assert (result.exit_code, result.output) == (0, "still-sandboxed\n")
    assert os.listdir(areas.outside) == []


async def test_program_not_found_is_a_start_failure_as_without_sandbox(areas: Areas) -> None:
    sandboxed = await run_shell(["no-such-program-xyz"], areas.launch, sandbox=areas.policy())
    plain = await run_shell(["no-such-program-xyz"], areas.launch)
    assert sandboxed.state == plain.state == "failed_to_start"
    assert sandboxed.error == plain.error


@pytest.mark.parametrize("step", ["probe", "create", "add_rule", "restrict"])
async def test_an_enforcement_failure_runs_nothing(areas: Areas, step: str) -> None:
    marker = areas.launch / "marker"
    result = await run_shell(f"touch {marker}", areas.launch, env={FAULT_VARIABLE: step}, sandbox=areas.policy())
    assert result.state == "failed_to_start"
    assert result.error is not None
    assert "nothing was run" in result.error.lower() and '"Sandbox": "off"' in result.error
    assert result.output == ""
    assert not marker.exists()


async def test_a_missing_writable_folder_runs_nothing(areas: Areas) -> None:
    marker = areas.launch / "marker"
    policy = areas.policy(extra_roots=(areas.outside / "gone",))
    result = await run_shell(f"touch {marker}", areas.launch, sandbox=policy)
    assert result.state == "failed_to_start"
    assert result.error is not None and "gone" in result.error
    assert not marker.exists()


async def test_timeout_kills_the_sandboxed_group(areas: Areas) -> None:
    result = await run_shell("sleep 30 & echo $!; wait", areas.launch, timeout=1.0, sandbox=areas.policy())
    assert result.state == "timeout"
    assert await wait_gone(int(result.output.split()[0]))


async def test_cancellation_kills_the_sandboxed_group(areas: Areas) -> None:
    pid_file = areas.launch / "pid"
    task = asyncio.create_task(
        run_shell(f"sleep 30 & echo $! > {pid_file}; wait", areas.launch, sandbox=areas.policy())
    )
    for _ in range(3000):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(pid)


CONNECT = (
    "import socket, sys\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=10).close()\n"
    "except OSError as e:\n"
    "    print(type(e).__name__, e); sys.exit(1)\n"
    "print('connected')\n"
)


@needs_network_rules
async def test_network_off_refuses_tcp_and_on_allows_it(areas: Areas) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = str(listener.getsockname()[1])
        off = await run_shell([sys.executable, "-c", CONNECT, port], areas.launch, sandbox=areas.policy(network=False))
        on = await run_shell([sys.executable, "-c", CONNECT, port], areas.launch, sandbox=areas.policy(network=True))
    assert off.exit_code == 1 and off.output.strip() == "PermissionError [Errno 13] Permission denied"
    assert off.note is not None and "TCP connections are refused" in off.note
    assert (on.exit_code, on.output.strip()) == (0, "connected")


@needs_scopes
async def test_signals_to_processes_outside_the_sandbox_are_refused(areas: Areas) -> None:
    outsider = subprocess.Popen(["sleep", "30"])
    try:
        result = await run_shell(f"kill -TERM {outsider.pid}", areas.launch, sandbox=areas.policy())
        assert result.exit_code == 1 and "Operation not permitted" in result.output
        assert process_alive(outsider.pid)
        # inside its own sandbox, a command still signals its children
        own = await run_shell("sleep 30 & kill $! && wait $!; echo $?", areas.launch, sandbox=areas.policy())
        assert own.output.strip() == "143"
    finally:
        outsider.kill()
        outsider.wait()


def test_the_launcher_runs_as_a_module(areas: Areas) -> None:
    target = areas.outside / "m.txt"
    done = subprocess.run(
        [
            sys.executable, "-m", "maia.process.sandbox", "--write", str(areas.launch),
            "--", "sh", "-c", f"echo x > {target}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode != 0 and "Permission denied" in done.stderr
    assert not target.exists()
    usage = subprocess.run(
        [sys.executable, "-m", "maia.process.sandbox", "--write"], capture_output=True, text=True, timeout=60
    )
    assert usage.returncode == 2 and "usage:" in usage.stderr
    failed = subprocess.run(
        [
            sys.executable, "-m", "maia.process.sandbox", "--write", str(areas.outside / "gone"),
            "--", "touch", str(target),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert failed.returncode == 125 and "maia sandbox:" in failed.stderr
    assert not target.exists()
