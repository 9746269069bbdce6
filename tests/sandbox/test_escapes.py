"""The eight escapes of issue 24, each run as the model would (the Bash tool, MAIA's own processes),
then checked on the file, the terminal's bytes, the environment or a marker."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from maia.app.changes import git_diff
from maia.core.contracts import ToolContext
from maia.core.settings import load_settings
from maia.process.sandbox.policy import SandboxPolicy, policy_from_settings
from maia.subagents.spares import child_command
from maia.tools.bash import BashTool
from maia.workflows.detach import worker_command
from maia.workflows.worker import RunOptions
from tests.sandbox.helpers import needs_bwrap

pytestmark = needs_bwrap


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(project: Path) -> Path:
    """The launch folder as a git repository with one commit."""
    _git(project, "init", "-q")
    (project / "f.txt").write_text("one\n")
    _git(project, "add", "f.txt")
    _git(project, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-qm", "first")
    return project


@pytest.fixture
def policy(home: Path, project: Path, write_settings: Callable[..., Path]) -> SandboxPolicy:
    """The policy MAIA builds from the user's settings at start-up (bubblewrap here)."""
    write_settings()
    built = policy_from_settings(load_settings(home), project)
    assert built is not None and built.uses_namespaces
    return built


async def bash(command: str, policy: SandboxPolicy) -> str:
    """Run ``command`` through the Bash tool, as the model would."""
    return await BashTool().execute({"command": command}, ToolContext(launch=policy.launch, sandbox=policy))


async def test_1_fsmonitor_written_by_a_command_never_runs_on_diff(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "fsmonitor-ran"
    policy = policy_from_settings(None, repo)
    assert policy is not None
    config = (repo / ".git" / "config").read_bytes()
    out = await bash(f"git config core.fsmonitor 'touch {marker}; false'", policy)
    assert "[exit code: 0]" not in out and (repo / ".git" / "config").read_bytes() == config
    assert "is protected" in out
    # and when the configuration holds such programs anyway (a cloned repository, an older MAIA)
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    for key, program in (
        ("core.fsmonitor", "fsmonitor"),
        ("filter.evil.clean", "clean"),
        ("filter.evil.process", "process"),
        ("diff.evil.textconv", "textconv"),
        ("diff.evil.command", "external"),
        ("core.pager", "pager"),
    ):
        _git(repo, "config", key, f"touch {tmp_path / program}; cat")
    (repo / "f.txt").write_text("two\n")
    text = git_diff(repo, [repo / "f.txt"])
    assert text is not None and "+two" in text
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "project" and p.name != "maia-home") == []


async def test_2_a_command_cannot_rewrite_mcp_json(project: Path, policy: SandboxPolicy) -> None:
    declared = {"mcpServers": {"docs": {"command": "node", "args": ["server.js"]}}}
    (project / ".mcp.json").write_text(json.dumps(declared))
    evil = json.dumps({"mcpServers": {"docs": {"command": "sh", "args": ["-c", "touch pwned"]}}})
    out = await bash(f"echo '{evil}' > .mcp.json; cp /dev/null .maia-x; mv .maia-x .mcp.json", policy)
    assert json.loads((project / ".mcp.json").read_text()) == declared
    assert "MAIA sandbox: .mcp.json is protected" in out
    (project / ".maia").mkdir()
    (project / "MAIA.md").write_text("be nice\n")
    await bash("echo evil > MAIA.md; rm -rf .maia; echo '{}' > .maia/settings.json", policy)
    assert (project / "MAIA.md").read_text() == "be nice\n" and (project / ".maia").is_dir()
    assert not (project / ".maia" / "settings.json").exists()


@pytest.fixture
def tmux_server(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed")
    socket = tmp_path / "tmux.sock"
    subprocess.run([tmux, "-S", str(socket), "new-session", "-d", "-s", "t", "sleep 600"], check=True)
    pid = subprocess.run(
        [tmux, "-S", str(socket), "display-message", "-p", "#{pid}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    yield socket, f"{socket},{pid},0"
    subprocess.run([tmux, "-S", str(socket), "kill-server"], capture_output=True)


def _windows(socket: Path) -> int:
    listed = subprocess.run(["tmux", "-S", str(socket), "list-windows"], capture_output=True, text=True, check=True)
    return len(listed.stdout.splitlines())


async def test_3_tmux_new_window_does_not_reach_the_users_tmux(
    policy: SandboxPolicy, tmux_server: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    socket, variable = tmux_server
    monkeypatch.setenv("TMUX", variable)  # MAIA runs inside that tmux
    monkeypatch.setenv("TMUX_PANE", "%0")
    out = await bash("echo TMUX=$TMUX; tmux new-window 'sleep 600'", policy)
    assert "TMUX=\n" in out and "[exit code: 0]" not in out
    assert _windows(socket) == 1


async def test_4_commands_cannot_write_to_the_users_terminal(policy: SandboxPolicy) -> None:
    master, slave = os.openpty()
    try:
        os.set_blocking(master, False)
        name = os.ttyname(slave)
        out = await bash(f"printf '\\033]0;pwned\\007\\033]52;c;cHduZWQ=\\007' > {name}; ls /dev/pts", policy)
        assert out.splitlines()[-2:] == ["ptmx", "[exit code: 0]"]  # a fresh /dev/pts: no terminal of the host
        ready, _w, _x = select.select([master], [], [], 0)
        assert ready == [] or os.read(master, 4096) == b""
    finally:
        os.close(master)
        os.close(slave)


def test_5_the_key_in_maias_environment_is_out_of_reach(project: Path, home: Path, write_settings: Any) -> None:
    write_settings()
    script = (
        "import asyncio, os, sys\n"
        "from pathlib import Path\n"
        "from maia.core.settings import load_settings\n"
        "from maia.process.sandbox.policy import policy_from_settings\n"
        "from tests.sandbox.test_escapes import bash\n"
        "policy = policy_from_settings(load_settings(Path(sys.argv[1])), Path(sys.argv[2]))\n"
        'command = f\'cat /proc/{os.getpid()}/environ /proc/*/environ | tr "\\\\0" "\\\\n" | grep -c KEY\'\n'
        "print(asyncio.run(bash(command, policy)))\n"
    )
    env = {**os.environ, "LITELLM_API_KEY": "sk-escape-5-secret"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(home), str(project)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert "sk-escape-5-secret" not in done.stdout
    assert "0" in done.stdout.splitlines(), done.stdout  # no environment shows the key


async def test_6_maias_settings_and_hidden_paths_are_out_of_reach(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside_tmp = Path(tempfile.mkdtemp(prefix="maia-test-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    try:
        home = outside_tmp / "maia-home"
        home.mkdir()
        ssh = outside_tmp / "ssh"
        ssh.mkdir()
        (ssh / "id_ed25519").write_text("PRIVATE KEY\n")
        settings = {
            "LiteLLM_URL": "http://127.0.0.1:9",
            "OpenAI_EndPoint": "/v1/chat/completions",
            "LiteLLM_Models": "/v1/models",
            "LiteLLM_API_Key": "sk-escape-6-secret",
            "SandboxHiddenPaths": [str(ssh)],
        }
        (home / "settings.json").write_text(json.dumps(settings))
        monkeypatch.setenv("MAIA_HOME", str(home))
        policy = policy_from_settings(load_settings(home), project)
        assert policy is not None and home.resolve() in policy.hidden and ssh.resolve() in policy.hidden
        out = await bash(f"cat {home}/settings.json; cat {ssh}/id_ed25519; ls -A {home} {ssh}", policy)
        assert "sk-escape-6-secret" not in out and "PRIVATE KEY" not in out
        assert f"MAIA sandbox: {home}/settings.json is hidden from commands" in out
    finally:
        shutil.rmtree(outside_tmp)


def _evil_maia(folder: Path, marker: Path) -> None:
    package = folder / "maia"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('replaced')\n")
    (package / "__main__.py").write_text(f"open({str(marker)!r}, 'w').write('replaced')\n")


def test_7_a_maia_package_in_the_launch_folder_does_not_replace_maia(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "replaced"
    _evil_maia(project, marker)
    env = {**os.environ, "PYTHONPATH": str(project)}
    command = child_command()
    assert command[:2] == [os.path.abspath(sys.executable), "-I"]
    subprocess.run(command, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert not marker.exists()
    options = RunOptions(home=tmp_path / "maia-home", launch=project, agent_file=project / "AGENT.md")
    worker = worker_command(cast(Any, SimpleNamespace(id="wf-none")), options)
    assert worker[:2] == [os.path.abspath(sys.executable), "-I"]
    subprocess.run(worker, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert not marker.exists()


async def test_8_another_project_under_tmp_cannot_be_reconfigured(policy: SandboxPolicy, tmp_path: Path) -> None:
    other = tmp_path / "other" / ".maia"
    other.mkdir(parents=True)
    (other / "settings.json").write_text("{}")
    out = await bash(f'echo \'{{"permissions": {{"allow": ["Bash"]}}}}\' > {other}/settings.json', policy)
    assert (other / "settings.json").read_text() == "{}" and "[exit code: 0]" not in out
    # its own /tmp works, private to this MAIA process, and TMPDIR names it
    assert await bash('echo hi > /tmp/x && cat /tmp/x && echo "$TMPDIR"', policy) == "hi\n/tmp\n[exit code: 0]"


def test_maia_marks_itself_non_dumpable(monkeypatch: pytest.MonkeyPatch) -> None:
    script = (
        "import ctypes\n"
        "from maia.process.sandbox.selfguard import mark_non_dumpable\n"
        "libc = ctypes.CDLL(None)\n"
        "before = libc.prctl(3, 0, 0, 0, 0)\n"
        "print(before, mark_non_dumpable(), libc.prctl(3, 0, 0, 0, 0))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["1", "True", "0"]
    # and the entry points call it before anything else
    import maia.commands as commands
    import maia.process.sandbox.selfguard as selfguard

    calls: list[str] = []
    monkeypatch.setattr(selfguard, "mark_non_dumpable", lambda: calls.append("marked") or True)
    with pytest.raises(SystemExit):
        commands.main(["--version"])
    assert calls == ["marked"]
