"""The namespace sandbox's policy, status and failures: strict mode, bubblewrap refusing, the model's line."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from maia.commands import cli
from maia.core.contracts import ToolContext
from maia.core.settings import load_settings
from maia.process.sandbox import namespaces
from maia.process.sandbox.policy import policy_from_settings, startup_notices, status_lines
from maia.process.shell import run_shell
from maia.tools.bash import BashTool
from tests.sandbox.helpers import landlock_only, needs_bwrap  # noqa: F401  (landlock_only: a fixture)


@needs_bwrap
async def test_a_bwrap_that_cannot_start_runs_nothing(project: Path, tmp_path: Path) -> None:
    policy = policy_from_settings(None, project)
    assert policy is not None and policy.uses_namespaces
    broken = replace(policy, extra_roots=(tmp_path / "gone",))  # bwrap cannot bind a missing folder
    result = await run_shell(f"touch {project}/ran", project, sandbox=broken)
    assert result.state == "failed_to_start" and result.error is not None
    assert result.error.startswith("the sandbox could not be applied: bwrap: ")
    assert not (project / "ran").exists()


@needs_bwrap
async def test_the_model_is_told_even_when_the_command_exits_0(project: Path) -> None:
    (project / "AGENTS.md").write_text("rules\n")
    policy = policy_from_settings(None, project)
    assert policy is not None
    out = await BashTool().execute(
        {"command": "echo more >> AGENTS.md; echo done"}, ToolContext(launch=project, sandbox=policy)
    )
    lines = out.splitlines()
    assert lines[-1] == "[exit code: 0]" and lines[-3] == "done"
    assert lines[-2].startswith("MAIA sandbox: AGENTS.md is protected in the namespace sandbox")
    assert (project / "AGENTS.md").read_text() == "rules\n"


@needs_bwrap
async def test_read_only_mode_and_network_off(home: Path, project: Path, write_settings: Callable[..., Path]) -> None:
    write_settings(Sandbox="read-only", SandboxNetwork="off")
    policy = policy_from_settings(load_settings(home), project)
    assert policy is not None and policy.uses_namespaces
    ctx = ToolContext(launch=project, sandbox=policy)
    out = await BashTool().execute({"command": "touch x; grep -c : /proc/net/dev"}, ctx)
    assert not (project / "x").exists()
    lines = out.splitlines()
    assert lines[1] == "1" and lines[-1] == "[exit code: 0]"  # a network namespace of its own: loopback only
    assert "read-only sandbox" in lines[2] and "there is no network (loopback included)" in lines[2]


@pytest.mark.usefixtures("landlock_only")
async def test_strict_without_bubblewrap_refuses_commands(
    home: Path, project: Path, write_settings: Callable[..., Path]
) -> None:
    write_settings(Sandbox="strict")
    settings = load_settings(home)
    policy = policy_from_settings(settings, project)
    assert policy is not None and policy.strict and not policy.uses_namespaces and policy.refusal
    out = await BashTool().execute({"command": f"touch {project}/ran"}, ToolContext(launch=project, sandbox=policy))
    assert out.startswith("[the command could not be started: the sandbox could not be applied: ")
    assert '"Sandbox": "strict" needs the namespace sandbox' in out and "apt install bubblewrap" in out
    assert not (project / "ran").exists()
    (warning,) = startup_notices(settings, project)
    assert warning.level == "warning" and "shell commands will not run" in warning.text
    assert any(line.startswith("Shell commands will not run: ") for line in status_lines(policy))


@needs_bwrap
def test_status_shows_the_namespace_sandbox(project: Path, home: Path, write_settings: Callable[..., Path]) -> None:
    (project / ".mcp.json").write_text("{}")
    secrets = project.parent / "secrets"
    secrets.mkdir()
    write_settings(SandboxHiddenPaths=[str(secrets)])
    result = CliRunner().invoke(cli, ["sandbox", "status"])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "Namespaces: bubblewrap (new mount, PID and IPC namespaces" in text
    assert f"  {project.resolve()}  (launch folder)" in text
    assert "(private temporary folder, /tmp and TMPDIR inside)" in text
    assert "Read-only inside the writable folders (protected):" in text
    assert f"  {project.resolve() / '.mcp.json'}" in text
    assert f"  {home.resolve()}" in text and f"  {secrets.resolve()}" in text
    data = json.loads(CliRunner().invoke(cli, ["sandbox", "status", "--json"]).output)
    assert data["namespaces"] is True and data["enforced"] is True
    assert str(project.resolve() / ".mcp.json") in data["protected_paths"]
    assert data["private_tmp"] == str(namespaces.private_tmp())


@pytest.mark.usefixtures("landlock_only")
def test_status_without_bubblewrap_says_what_is_missing(project: Path, home: Path) -> None:
    result = CliRunner().invoke(cli, ["sandbox", "status"])
    assert result.exit_code == 0, result.output
    assert "Sandbox: Landlock only (namespaces turned off by MAIA_SANDBOX_NAMESPACES). Missing: protected" in (
        result.output.replace("\n", " ")
    )


@needs_bwrap
async def test_the_users_own_custom_tools_still_run_from_the_hidden_home(
    home: Path, project: Path, write_settings: Callable[..., Path]
) -> None:
    from maia.tools.custom import load_custom_tools

    write_settings()
    folder = home / "tools" / "hello"
    folder.mkdir(parents=True)
    (folder / "TOOL.json").write_text(json.dumps({"description": "Say hi.", "command": {"run": "sh ./hi.sh"}}))
    (folder / "hi.sh").write_text(f"echo hi; cat {home}/settings.json; (echo x > {folder}/hi.sh); exit 0\n")
    (tool,) = load_custom_tools(project, home).tools
    policy = policy_from_settings(load_settings(home), project)
    assert policy is not None and policy.uses_namespaces
    out = await tool.execute({}, ToolContext(launch=project, sandbox=policy))
    assert out.startswith("hi\n")  # the tool's folder is visible, read-only; settings.json is not
    assert "LiteLLM_URL" not in out and (folder / "hi.sh").read_text().startswith("echo hi")


@needs_bwrap
def test_a_working_bwrap_is_remembered_across_starts(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    namespaces.probe.cache_clear()
    try:
        assert namespaces.probe()[0] is not None
        remembered = home / "cache" / "bwrap-works"
        assert remembered.is_file()
        namespaces.probe.cache_clear()

        def no_process(*_args: object, **_kwargs: object) -> None:
            raise AssertionError("bwrap was run again")

        monkeypatch.setattr(subprocess, "run", no_process)
        assert namespaces.probe()[0] is not None  # from the file: no process at start-up
        remembered.write_text("another kernel")
        namespaces.probe.cache_clear()
        with pytest.raises(AssertionError, match="run again"):
            namespaces.probe()
    finally:
        namespaces.probe.cache_clear()


@needs_bwrap
async def test_the_sandbox_command_lines_stay_short_and_no_descriptor_leaks(project: Path) -> None:
    policy = policy_from_settings(None, project)
    assert policy is not None and policy.uses_namespaces
    out = await BashTool().execute(
        {"command": "wc -c < /proc/1/cmdline; ls /proc/self/fd | wc -l"}, ToolContext(launch=project, sandbox=policy)
    )
    size, fds, status = out.splitlines()
    assert int(size) < 2000  # the launcher's bytecode came through a memory file, bwrap's options too
    assert int(fds) == 4 and status == "[exit code: 0]"  # stdin, stdout, stderr and ls's own
