"""``maia sandbox status``: text and JSON, with and without a settings file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from maia.commands import cli
from maia.process.sandbox.policy import landlock_abi
from tests.sandbox.helpers import landlock_only  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("landlock_only")


def test_status_json_without_settings_file(project: Path, home: Path) -> None:
    result = CliRunner().invoke(cli, ["sandbox", "status", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    abi = landlock_abi()[0]
    assert data["landlock_abi"] == abi and data["mode_source"] == "default"
    if abi >= 1:
        assert data["mode"] == "workspace-write" and data["enforced"] is True
        assert data["writable_roots"][0] == str(project.resolve())
        assert data["settings_file"] == str(home / "settings.json")
    else:
        assert data["mode"] == "off"


def test_status_text_follows_the_settings(project: Path, write_settings: Callable[..., Path]) -> None:
    write_settings(Sandbox="off")
    result = CliRunner().invoke(cli, ["sandbox"])
    assert result.exit_code == 0
    assert result.output.startswith("Sandbox: off (from the settings): commands run with your own rights\nKernel: ")
    write_settings(Sandbox="workspace-write", SandboxNetwork="off", SandboxWritableRoots=["missing"])
    result = CliRunner().invoke(cli, ["sandbox", "status"])
    assert result.exit_code == 0
    assert "Sandbox: workspace-write (from the settings)" in result.output
    assert f"  {project.resolve()}  (launch folder, .git included)" in result.output
    assert "UDP and UNIX sockets are not covered" in result.output
    assert "SandboxWritableRoots: missing is not an existing folder; ignored." in result.output


def test_bad_setting_is_a_clear_error(write_settings: Callable[..., Path]) -> None:
    path = write_settings(Sandbox="on")
    result = CliRunner().invoke(cli, ["sandbox", "status"])
    assert result.exit_code == 1
    expected = '"Sandbox" must be one of "off", "workspace-write", "read-only", "strict", not "on"'
    assert f"{path}: {expected}" in result.output
