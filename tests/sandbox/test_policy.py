"""Sandbox settings (schema, messages), the policy built from them, start-up notices and status lines."""

from __future__ import annotations

import marshal
from collections.abc import Callable
from pathlib import Path

import pytest

from maia.core.errors import ConfigError
from maia.core.settings import load_settings
from maia.process.sandbox.policy import (
    SandboxPolicy,
    policy_from_settings,
    startup_notices,
    status_data,
    status_lines,
    system_temp_dirs,
)
from tests.sandbox.helpers import landlock_only  # noqa: F401  (the fixture)

TEMP = (Path("/tmp"),)


pytestmark = pytest.mark.usefixtures("landlock_only")


def test_settings_keys_are_read(home: Path, write_settings: Callable[..., Path]) -> None:
    write_settings(Sandbox="read-only", SandboxWritableRoots=["~/.cache", "../shared"], SandboxNetwork="off")
    settings = load_settings(home)
    assert (settings.sandbox, settings.sandbox_writable_roots, settings.sandbox_network) == (
        "read-only",
        ["~/.cache", "../shared"],
        "off",
    )
    assert settings.warnings == []


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            {"Sandbox": "paranoid"},
            '"Sandbox" must be one of "off", "workspace-write", "read-only", "strict", not "paranoid"; '
            'fix: "workspace-write"',
        ),
        ({"SandboxNetwork": False}, '"SandboxNetwork" must be one of "on", "off", not false; fix: "on" (the default)'),
        ({"SandboxWritableRoots": "~/.cache"}, '"SandboxWritableRoots" must be a list, not a string; fix: a list of'),
        ({"SandboxWritableRoots": [3]}, '"SandboxWritableRoots[0]" must be a string, not a whole number'),
    ],
)
def test_bad_values_name_the_field_and_the_fix(
    home: Path, write_settings: Callable[..., Path], extra: dict[str, object], expected: str
) -> None:
    path = write_settings(**extra)
    with pytest.raises(ConfigError) as info:
        load_settings(home)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)


def test_default_is_workspace_write_with_landlock_and_off_without(project: Path) -> None:
    policy = policy_from_settings(None, project, abi=7, temp_dirs=TEMP)
    assert policy is not None and policy.mode == "workspace-write" and policy.network
    assert policy.writable_roots == (project.resolve(), Path("/tmp"))
    assert policy_from_settings(None, project, abi=0) is None


def test_explicit_choice_wins_and_fails_closed_without_landlock(
    home: Path, project: Path, write_settings: Callable[..., Path]
) -> None:
    write_settings(Sandbox="off")
    assert policy_from_settings(load_settings(home), project, abi=7) is None
    write_settings(Sandbox="workspace-write")
    # asked for but impossible: a policy is still returned, so the launcher refuses every command
    policy = policy_from_settings(load_settings(home), project, abi=0, temp_dirs=TEMP)
    assert policy is not None and policy.mode == "workspace-write"
    write_settings(Sandbox="read-only", SandboxNetwork="off")
    read_only = policy_from_settings(load_settings(home), project, abi=7, temp_dirs=TEMP)
    assert read_only is not None and read_only.writable_roots == () and not read_only.network
    assert "--read-only" in read_only.launcher_argv(["true"]) and "--no-network" in read_only.launcher_argv(["true"])


def test_user_roots_expand_home_resolve_relative_and_drop_missing(
    home: Path, project: Path, write_settings: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    user_home = tmp_path / "user"
    (user_home / ".cache").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    write_settings(SandboxWritableRoots=["~/.cache", "../shared", "nowhere"])
    settings = load_settings(home)
    policy = policy_from_settings(settings, project, abi=7, temp_dirs=TEMP)
    assert policy is not None
    assert policy.extra_roots == ((user_home / ".cache").resolve(), (tmp_path / "shared").resolve())
    argv = policy.launcher_argv(["echo", "hi"], status_fd=9)
    writes = [argv[i + 1] for i, word in enumerate(argv) if word == "--write"]
    assert writes == [str(project.resolve()), "/tmp", str(user_home / ".cache"), str(tmp_path / "shared")]
    assert argv[-3:] == ["--", "echo", "hi"] and argv[argv.index("--status-fd") + 1] == "9"
    notices = startup_notices(settings, project, abi=7)
    assert [(n.level, n.text) for n in notices if n.level == "warning"] == [
        ("warning", f"{settings.path}: SandboxWritableRoots: nowhere is not an existing folder; ignored.")
    ]


def test_launcher_argv_is_a_minimal_interpreter_start_from_a_copy_of_the_launcher(project: Path) -> None:
    argv = SandboxPolicy("workspace-write", project).launcher_argv(["true"])
    assert argv[1:4] == ["-I", "-S", "-c"]
    assert argv[4] == "import sys,marshal;exec(marshal.loads(bytes.fromhex(sys.argv.pop(1))))"
    code = marshal.loads(bytes.fromhex(argv[5]))  # compiled once by MAIA: nothing compiled per call
    assert "restrict" in code.co_names and "maia" not in code.co_names
    assert Path(argv[0]).resolve() == Path(argv[0])  # the real interpreter, not a link


def test_startup_notices(home: Path, project: Path, write_settings: Callable[..., Path]) -> None:
    (missing,) = startup_notices(None, project, abi=7)
    assert missing.level == "info" and missing.text.startswith("Sandbox: Landlock only (")
    assert "protected files" in missing.text and "apt install bubblewrap" in missing.text
    assert startup_notices(None, project, abi=7, use_namespaces=True) == []
    (info,) = startup_notices(
        None, project, abi=0, reason="this kernel has no Landlock (Linux 5.13 or later is needed)"
    )
    assert info.level == "info"
    assert info.text == (
        "Sandbox off: this kernel has no Landlock (Linux 5.13 or later is needed); commands run with your own rights."
    )
    write_settings(Sandbox="workspace-write")
    (warning,) = startup_notices(load_settings(home), project, abi=0)
    assert warning.level == "warning" and "cannot be applied" in warning.text and '"Sandbox": "off"' in warning.text
    write_settings(SandboxNetwork="off")
    (network,) = startup_notices(load_settings(home), project, abi=3)
    assert network.level == "warning" and "ABI 4" in network.text
    write_settings(Sandbox="off")
    assert startup_notices(load_settings(home), project, abi=0) == []


def test_a_launch_folder_holding_the_maia_home_is_flagged(tmp_path: Path, write_settings: Callable[..., Path]) -> None:
    path = write_settings()
    settings = load_settings(path.parent)
    notices = startup_notices(settings, path.parent.parent, abi=7)
    assert [n.level for n in notices] == ["info", "warning"] and "can change MAIA's settings" in notices[1].text


def test_status_lines_say_what_is_covered_and_what_is_not(project: Path) -> None:
    policy = SandboxPolicy("workspace-write", project, temp_dirs=TEMP, network=False)
    lines = status_lines(policy, abi=7, chosen=True)
    assert lines[:2] == ["Sandbox: workspace-write (from the settings)", "Kernel: Landlock ABI 7"]
    assert lines[2].startswith("Sandbox: Landlock only (") and lines[3] == "Writes allowed under:"
    assert f"  {project}  (launch folder, .git included)" in lines
    assert "  /tmp  (temporary folder)" in lines
    assert "Network: off: TCP connect and bind are refused; UDP and UNIX sockets are not covered" in lines
    assert "Reads: everywhere (the sandbox bounds writes, not reads)" in lines
    assert status_lines(None, abi=0, reason="no Landlock here", chosen=False) == [
        "Sandbox: off (the default on this system): commands run with your own rights",
        "Kernel: no Landlock (no Landlock here)",
    ]
    old = status_lines(policy, abi=2)
    assert any(line.startswith("Not enforceable on this kernel") for line in old)
    assert any("truncate()" in line for line in old)


def test_status_data(project: Path) -> None:
    data = status_data(SandboxPolicy("read-only", project, temp_dirs=TEMP), abi=7)
    assert data["mode"] == "read-only" and data["enforced"] is True
    assert data["writable_roots"] == [] and data["network"] == "on"
    assert data["not_covered"][:5] == ["reads", "UDP", "UNIX sockets", "protected files", "hidden paths"]
    assert status_data(None, abi=0, reason="x") == {
        "landlock_abi": 0,
        "landlock_unavailable_reason": "x",
        "mode": "off",
        "enforced": False,
        "namespaces": False,
        "namespaces_unavailable_reason": "namespaces turned off by MAIA_SANDBOX_NAMESPACES",
        "strict": False,
        "refusal": None,
    }


def test_system_temp_dirs_follow_tmpdir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert system_temp_dirs() == (tmp_path.resolve(), Path("/tmp"))
