"""The ``auto`` mode (issue 25): edits and sandboxed commands without a question, only under the namespace
sandbox; the offer to run a command again outside the sandbox after it refused something."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from maia.app.approvals import AUTO_RULE, auto_unavailable, with_mode
from maia.core.contracts import ToolContext
from maia.permissions.engine import Decision, explain
from maia.permissions.rules import Verdict
from maia.process.sandbox.policy import SandboxPolicy, policy_from_settings
from maia.tools.bash import BashTool
from tests.streams import text_stream, tool_stream

CHAT = "/v1/chat/completions"


class Namespaced(SandboxPolicy):
    """A policy that says its commands run under the namespace sandbox (what bubblewrap gives)."""

    @property
    def uses_namespaces(self) -> bool:
        """As the namespace sandbox does."""
        return True


def moded(rules: dict[str, list[str]], mode: str, launch: Path, policy: SandboxPolicy | None) -> Any:
    def check(name: str, tool_input: Any) -> Decision:
        return explain(name, tool_input, rules, launch)

    return with_mode(check, lambda: mode, launch, lambda: {}, lambda: policy)  # type: ignore[arg-type,return-value]


def test_auto_runs_commands_without_asking_only_under_namespaces(project: Path) -> None:
    namespaced = Namespaced(mode="workspace-write", launch=project)
    landlock = SandboxPolicy(mode="workspace-write", launch=project)
    call = {"command": "make test"}
    decision = moded({}, "auto", project, namespaced)("Bash", call)
    assert decision.verdict == Verdict.ALLOW and decision.rule == AUTO_RULE
    assert moded({}, "auto", project, landlock)("Bash", call).verdict == Verdict.ASK  # Landlock only: as edits
    assert moded({}, "auto", project, None)("Bash", call).verdict == Verdict.ASK  # sandbox off
    assert moded({}, "edits", project, namespaced)("Bash", call).verdict == Verdict.ASK
    # an ask rule, a deny rule and doubt (a protected path) are never lifted
    assert moded({"ask": ["Bash(make *)"]}, "auto", project, namespaced)("Bash", call).verdict == Verdict.ASK
    assert moded({"deny": ["Bash(make *)"]}, "auto", project, namespaced)("Bash", call).verdict == Verdict.DENY
    protected = moded({}, "auto", project, namespaced)("Bash", {"command": "echo x > .git/config"})
    assert protected.verdict == Verdict.ASK
    # edits inside the launch folder, as in edits; outside still asks
    write = moded({}, "auto", project, namespaced)
    assert write("Write", {"path": "a.txt", "content": "x"}).verdict == Verdict.ALLOW
    assert write("Write", {"path": "/etc/x", "content": "x"}).verdict == Verdict.ASK


def test_auto_says_why_it_acts_as_edits(project: Path) -> None:
    assert "Landlock only" in (auto_unavailable(SandboxPolicy(mode="workspace-write", launch=project)) or "")
    assert "sandbox is off" in (auto_unavailable(None) or "")
    assert auto_unavailable(Namespaced(mode="workspace-write", launch=project)) is None


def _bash(project: Path, policy: SandboxPolicy, answer: bool, asked: list[tuple[str, str]]) -> str:
    async def rerun(command: str, refused: str) -> bool:
        asked.append((command, refused))
        return answer

    ctx = ToolContext(launch=project, sandbox=policy, rerun_unsandboxed=rerun)
    return asyncio.run(BashTool().execute({"command": "mkdir " + str(project.parent / "outside")}, ctx))


def test_a_sandbox_refusal_offers_a_run_outside_and_no_keeps_it_refused(project: Path) -> None:
    policy = SandboxPolicy(mode="workspace-write", launch=project, temp_dirs=())  # Landlock: writes only here
    if policy_from_settings(None, project) is None:
        pytest.skip("no Landlock on this kernel")  # the sandbox tests cover its absence
    asked: list[tuple[str, str]] = []
    output = _bash(project, policy, False, asked)
    assert not (project.parent / "outside").exists()
    assert asked and asked[0][0].startswith("mkdir ") and "MAIA sandbox" in asked[0][1]  # names what was refused
    assert "MAIA sandbox" in output  # the model reads the reason
    output = _bash(project, policy, True, asked)
    assert (project.parent / "outside").is_dir() and "outside the sandbox" in output


def test_ask_mode_auto_without_namespaces_acts_as_edits_and_says_why(server: HTTPServer, project: Path) -> None:
    policy = policy_from_settings(None, project)
    if policy is not None and policy.uses_namespaces:
        pytest.skip("the namespace sandbox is here: the next test covers auto")
    server.expect_oneshot_request(CHAT).respond_with_data(
        tool_stream("Bash", {"command": "mkdir made"}), content_type="text/event-stream"
    )
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Asked."), content_type="text/event-stream")
    result = subprocess.run(
        [sys.executable, "-m", "maia", "ask", "--mode", "auto", "-m", "scripted-openai", "make it"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=os.environ.copy(),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("Mode auto:") == 1 and "acts as edits" in result.stderr
    assert not (project / "made").exists()


def test_ask_mode_auto_runs_a_command_in_the_namespace_sandbox_with_no_rule(server: HTTPServer, project: Path) -> None:
    policy = policy_from_settings(None, project)
    if policy is None or not policy.uses_namespaces:
        if os.environ.get("CI"):
            pytest.fail("CI must have the namespace sandbox (bubblewrap) for the auto mode")
        pytest.skip("no namespace sandbox on this machine")
    server.expect_oneshot_request(CHAT).respond_with_data(
        tool_stream("Bash", {"command": "mkdir made"}), content_type="text/event-stream"
    )
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Made."), content_type="text/event-stream")
    result = subprocess.run(
        [sys.executable, "-m", "maia", "ask", "--mode", "auto", "-m", "scripted-openai", "-o", "json", "make it"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=os.environ.copy(),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert (project / "made").is_dir()  # no rule, no question: it ran in the sandbox
    assert json.loads(result.stdout)["answer"] == "Made."
