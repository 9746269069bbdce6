"""Shell completion: the scripts, and dynamic values read from local files only (never the network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def complete(words: str, *, shell: str = "bash") -> list[str]:
    """What ``maia`` offers when Tab is pressed after ``words`` (bash's protocol: type,value lines)."""
    parts = words.split(" ")
    env = {**os.environ, "_MAIA_COMPLETE": f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1)}
    done = subprocess.run([sys.executable, "-m", "maia"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return [line.split(",", 1)[1] for line in done.stdout.splitlines() if "," in line]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_completion_command_prints_the_script(shell: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "maia", "completion", shell], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "_MAIA_COMPLETE" in done.stdout


def test_commands_and_options() -> None:
    assert "sessions" in complete("maia ses")
    assert {"--resume", "--continue"} <= set(complete("maia chat --"))


def test_dynamic_values(home: Path, project: Path) -> None:
    sessions = project / ".maia" / ".sessions"
    sessions.mkdir(parents=True)
    (sessions / "bugfix.json").write_text("{}")
    (sessions / "refactor.json").write_text("{}")
    agent = project / ".maia" / "agents" / "reviewer"
    agent.mkdir(parents=True)
    (agent / "AGENT.md").write_text(
        "---\nname: reviewer\ndescription: reviews\n---\n# Instructions system\nx\n# Missions\ny\n# Output\nz\n"
    )
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"github": {"url": "http://127.0.0.1:9/mcp"}}}))
    (home / "cache").mkdir()
    (home / "cache" / "models.json").write_text(json.dumps(["gpt-4o", "claude-sonnet"]))
    assert complete("maia sessions show b") == ["bugfix"]
    assert complete("maia chat --resume r") == ["refactor"]
    assert complete("maia agents show ") == ["reviewer"]
    assert complete("maia mcp test ") == ["github"]
    assert complete("maia ask --model cl") == ["claude-sonnet"]


def test_no_cache_no_network_no_error(home: Path) -> None:
    (home / "settings.json").write_text(json.dumps({"LiteLLM_URL": "http://10.255.255.1:9"}))  # would hang
    assert complete("maia ask --model ") == []


def test_listing_the_models_fills_the_completion_cache(server: object, home: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "maia", "models"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    names = json.loads((home / "cache" / "models.json").read_text())
    assert names and all(name in done.stdout for name in names)
    assert set(complete("maia chat --model ")) == set(names)
