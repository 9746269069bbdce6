"""A sandboxed command that adds .git/commondir (or config.worktree) would make the user's own next git
run another repository's core.fsmonitor and hooks, outside any sandbox: MAIA removes the file and tells the
model (from the security review)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from maia.core.settings import Settings
from maia.process.sandbox.policy import policy_from_settings
from maia.process.shell import run_shell

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_a_commondir_planted_by_a_command_is_removed_and_the_user_git_runs_nothing(
    tmp_path: Path, project: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    marker = tmp_path / "PWNED"
    evil = project / "evil"
    script = (
        f"cp -r .git {evil} && git --git-dir={evil} config core.fsmonitor 'touch {marker}; false' "
        "&& echo ../evil > .git/commondir"
    )
    policy = policy_from_settings(
        Settings(path=tmp_path / "s.json", litellm_url="http://x", chat_endpoint="/c", models_endpoint="/m"), project
    )
    done = asyncio.run(run_shell(script, project, sandbox=policy))
    assert done.state == "exited", done
    assert not (project / ".git" / "commondir").exists()
    assert done.note is not None and ".git/commondir" in done.note
    subprocess.run(["git", "status"], cwd=project, capture_output=True, check=False)
    assert not marker.exists()
