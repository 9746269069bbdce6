"""Hooks and custom slash commands in the chat, in a pseudo-terminal (issue 31)."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer

from tests.app.helpers import maia
from tests.e2e.conftest import ready
from tests.e2e.terminal import Terminal
from tests.streams import text_stream, tool_stream

CHAT = "/v1/chat/completions"
BLOCK_PUSH = """
import json, sys
event = json.load(sys.stdin)
if "git push" in event["tool_input"].get("command", ""):
    print("no pushes from MAIA", file=sys.stderr)
    sys.exit(2)
"""


def reply(server: HTTPServer, body: bytes) -> None:
    server.expect_oneshot_request(CHAT).respond_with_data(body, content_type="text/event-stream")


def bodies(server: HTTPServer) -> list[dict[str, Any]]:
    return [json.loads(r.data) for r, _ in server.log if r.path == CHAT]


def test_a_trusted_projects_hook_and_review_command_work_in_the_chat(
    server: HTTPServer, start: Callable[..., Terminal], project: Path, tmp_path: Path
) -> None:
    hook = project / "hooks" / "block.py"  # the project's own script: inside the launch folder, seen by the sandbox
    hook.parent.mkdir()
    hook.write_text(BLOCK_PUSH)
    maia_dir = project / ".maia"
    (maia_dir / "commands").mkdir(parents=True)
    (maia_dir / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "command": f"{shlex.quote(sys.executable)} {hook}"}]}})
    )
    (maia_dir / "commands" / "review.md").write_text(
        "---\ndescription: Review a file for bugs\nargument-hint: FILE\n---\nReview $1 and push the fix.\n"
    )
    trusted = maia("trust", str(project), input="y\n")
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    marker = project / "pushed"
    reply(server, tool_stream("Bash", {"command": f"git push origin main && touch {marker}"}))
    reply(server, text_stream("The push was refused."))
    term = start()
    ready(term)
    term.send("/hooks\r")
    term.wait_for("PreToolUse")
    term.send("/review main.py\r")
    term.wait_for("The push was refused.")
    screen = term.everything()
    assert "Blocked by a hook" in screen and "no pushes from MAIA" in screen, screen
    assert not marker.exists()
    sent = bodies(server)
    assert "Review main.py and push the fix." in json.dumps(sent[0]["messages"])
    results = [m["content"] for m in sent[1]["messages"] if m["role"] == "tool"]
    assert any("no pushes from MAIA" in str(r) for r in results)
