"""``maia ask`` against a real HTTP server serving LiteLLM streams: outputs, permissions, retries, exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from maia.agent.loop import INTERRUPTED_ANSWER
from maia.commands import cli
from maia.sessions.store import SessionStore
from tests.conftest import fixture_bytes
from tests.streams import text_stream as _text_stream
from tests.streams import tool_stream


def text_stream(text: str, usage: tuple[int, int] = (10, 5)) -> bytes:
    return _text_stream(text, usage)


CHAT = "/v1/chat/completions"
TEXT = "Hello! I read the repo; main.py has 3 functions."


def chat(server: HTTPServer, body: bytes, status: int = 200, **headers: str) -> None:
    server.expect_oneshot_request(CHAT, method="POST").respond_with_data(
        body, status=status, headers=headers, content_type="text/event-stream" if status == 200 else "application/json"
    )


def requests(server: HTTPServer) -> list[dict[str, Any]]:
    return [json.loads(r.data) for r, _ in server.log if r.path == CHAT]


def run(*args: str, stdin: str | None = None) -> Any:
    return CliRunner().invoke(cli, ["ask", *args], input=stdin)


def test_text_output(server: HTTPServer, project: Path) -> None:
    chat(server, fixture_bytes("scripted-openai-text.sse"))
    result = run("--model", "scripted-openai", "say hi")
    assert result.exit_code == 0, result.output
    assert result.stdout == TEXT + "\n"
    body = requests(server)[0]
    assert body["model"] == "scripted-openai" and body["messages"][-1] == {"role": "user", "content": "say hi"}
    assert body["messages"][0]["role"] == "system" and "You are MAIA" in body["messages"][0]["content"]
    (name,) = SessionStore.for_launch(project).names()
    assert name.startswith("session_")


def test_json_output_whole(server: HTTPServer) -> None:
    chat(server, tool_stream("Read", {"path": "notes.txt"}))
    chat(server, text_stream("It says hello.", (30, 4)))
    result = run("-m", "scripted-openai", "-o", "json", "--no-save", "--allow", "Read", "what is in notes.txt?")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data == {
        "status": "done",
        "answer": "It says hello.",
        "model": "scripted-openai",
        "session": None,
        "tool_calls": [
            {
                "id": "call_1",
                "name": "Read",
                "input": {"path": "notes.txt"},
                "output": "File not found: notes.txt",
                "is_error": True,
            }
        ],
        "usage": {"input_tokens": 30, "output_tokens": 4, "reasoning_tokens": 0, "cost": None, "calls": 1},
        "warnings": data["warnings"],
    }


def test_json_flag_is_output_json(server: HTTPServer) -> None:
    chat(server, text_stream("Hello.", (3, 1)))
    result = run("-m", "scripted-openai", "--json", "--no-save", "hi")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["answer"] == "Hello."
    clash = run("-m", "scripted-openai", "--json", "-o", "stream-json", "--no-save", "hi")
    assert clash.exit_code == 2 and "Use --json or --output stream-json, not both." in clash.output


def test_stream_json_events(server: HTTPServer, project: Path) -> None:
    (project / "notes.txt").write_text("hello")
    chat(server, tool_stream("Read", {"path": "notes.txt"}))
    server.expect_oneshot_request(CHAT).respond_with_data(
        text_stream("Done."), content_type="text/event-stream", headers={"x-litellm-response-cost": "0.0021"}
    )
    result = run("-m", "m", "-o", "stream-json", "--no-save", "--allow", "Read", "read it")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("text") < kinds.index("final")
    call = next(e for e in events if e["type"] == "tool_call")
    assert call["id"] and call["name"] == "Read" and call["input"] == {"path": "notes.txt"}  # issue 28
    assert next(e for e in events if e["type"] == "tool_result") == {
        "type": "tool_result",
        "name": "Read",
        "output": "     1\thello",
        "is_error": False,
    }
    assert [e["text"] for e in events if e["type"] == "text"] == ["Done."]
    final = events[-1]
    assert final["type"] == "final" and final["answer"] == "Done." and final["usage"]["cost"] == 0.0021


def test_a_call_that_would_ask_is_refused_then_allowed(server: HTTPServer, project: Path) -> None:
    chat(server, tool_stream("Bash", {"command": "echo hi > made.txt"}))
    chat(server, text_stream("I could not."))
    refused = run("-m", "m", "--no-save", "make the file")
    assert refused.exit_code == 0 and refused.stdout == "I could not.\n"
    tool_message = requests(server)[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "non-interactive run (maia ask)" in tool_message["content"]
    assert not (project / "made.txt").exists()
    server.clear_log()
    chat(server, tool_stream("Bash", {"command": "echo hi > made.txt"}))
    chat(server, text_stream("Made."))
    allowed = run("-m", "m", "--no-save", "--allow", "Bash(echo *)", "--allow", "Redirect(made.txt)", "make it")
    assert allowed.exit_code == 0 and allowed.stdout == "Made.\n"
    assert (project / "made.txt").read_text() == "hi\n"
    assert requests(server)[1]["messages"][-1]["content"] == "[exit code: 0]"


def test_yes_allows_asks_but_never_a_deny(server: HTTPServer, project: Path) -> None:
    (project / ".maia").mkdir()
    (project / ".maia" / "settings.json").write_text('{"permissions": {"deny": ["Bash(rm *)"]}}')
    (project / "keep.txt").write_text("x")
    chat(server, tool_stream("Bash", {"command": "rm keep.txt"}))
    chat(server, text_stream("Refused."))
    result = run("-m", "m", "--no-save", "--yes", "delete it")
    assert result.exit_code == 0 and (project / "keep.txt").exists()
    assert "Action denied by the permission rules (Bash(rm *))" in requests(server)[1]["messages"][-1]["content"]


def test_prompt_from_stdin_and_at_references(server: HTTPServer, project: Path) -> None:
    (project / "spec.md").write_text("# Spec\nBe brief.")
    chat(server, text_stream("Brief."))
    result = run("-m", "m", "--no-save", stdin="summarise @spec.md\n")
    assert result.exit_code == 0 and result.stdout == "Brief.\n"
    content = requests(server)[0]["messages"][-1]["content"]
    assert '<file path="spec.md">\n# Spec\nBe brief.\n</file>' in content and content.endswith("summarise @spec.md\n")


def test_resume_and_continue(server: HTTPServer, project: Path) -> None:
    chat(server, text_stream("First answer."))
    chat(server, text_stream("Second answer."))
    chat(server, text_stream("Third answer."))
    assert run("-m", "m", "first question").exit_code == 0
    (name,) = SessionStore.for_launch(project).names()
    assert run("-m", "m", "--resume", name, "second question").exit_code == 0
    assert run("-m", "m", "--continue", "third question").exit_code == 0
    third = requests(server)[2]["messages"]
    assert [m["content"] for m in third if m["role"] != "system"] == [
        "first question",
        "First answer.",
        "second question",
        "Second answer.",
        "third question",
    ]
    assert SessionStore.for_launch(project).names() == [name]
    missing = run("-m", "m", "--resume", "nope", "x")
    assert missing.exit_code == 2 and "No session named 'nope'" in missing.stderr


def test_rate_limit_then_success(server: HTTPServer) -> None:
    chat(server, fixture_bytes("scripted-openai-rate-limit.sse"), status=429, **{"retry-after": "1"})
    chat(server, text_stream("After waiting."))
    started = time.monotonic()
    result = run("-m", "m", "--no-save", "hi")
    assert result.exit_code == 0 and result.stdout == "After waiting.\n"
    assert time.monotonic() - started >= 0.9
    assert "Limited until " in result.stderr and "resuming then" in result.stderr


def test_no_wait_fails_at_once(server: HTTPServer) -> None:
    chat(server, fixture_bytes("scripted-openai-rate-limit.sse"), status=429, **{"retry-after": "30"})
    result = run("-m", "m", "--no-save", "--no-wait", "-o", "json", "hi")
    assert len(requests(server)) == 1 and "retrying" not in result.stderr  # no wait, no second attempt
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["status"] == "error" and data["error"].startswith("LiteLLM answered HTTP 429: litellm.RateLimitError")


def test_exit_codes(server: HTTPServer) -> None:
    chat(server, b'{"error": {"message": "upstream exploded"}}', status=500)
    error = run("-m", "m", "--no-save", "--no-wait", "hi")
    assert error.exit_code == 1 and "Error: LiteLLM answered HTTP 500: upstream exploded" in error.stderr
    usage = run("-m", "m", "--resume", "a", "--continue", "x")
    assert usage.exit_code == 2 and "not both" in usage.stderr
    empty = run("-m", "m", "   ")
    assert empty.exit_code == 2
    chat(server, tool_stream("TodoWrite", {"todos": []}))
    limited = run("-m", "m", "--no-save", "--allow", "TodoWrite", "--max-iterations", "1", "-o", "json", "plan")
    assert limited.exit_code == 3
    assert json.loads(limited.stdout)["status"] == "max_iterations"


def test_no_model_is_a_usage_error(server: HTTPServer) -> None:
    result = run("hello")
    assert result.exit_code == 2 and "No model chosen" in result.stderr


def test_missing_settings(home: Path) -> None:
    result = run("-m", "m", "hi")
    assert result.exit_code == 1 and "Settings file not found" in result.stderr


def _slow(_request: Request) -> Response:
    def body() -> Iterator[bytes]:
        yield b'data: {"choices":[{"index":0,"delta":{"content":"start"}}]}\n\n'
        time.sleep(4)  # longer than the test needs to send its signal
        yield b"data: [DONE]\n\n"

    return Response(body(), content_type="text/event-stream")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_exits_130_and_keeps_the_conversation(server: HTTPServer, project: Path, sig: int) -> None:
    server.expect_request(CHAT).respond_with_handler(_slow)
    process = subprocess.Popen(
        [sys.executable, "-m", "maia", "ask", "-m", "m", "-o", "json", "wait for me"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    deadline = time.monotonic() + 20
    while not [r for r, _ in server.log if r.path == CHAT] and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    process.send_signal(sig)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 130, err
    if sig == signal.SIGTERM:
        assert json.loads(out)["status"] == "interrupted"
    assert "Traceback" not in err
    # the conversation is kept: the request, what the model had streamed, and a note for the model
    saved = SessionStore.for_launch(project).load(SessionStore.for_launch(project).names()[0])
    assert [(m.role, m.text) for m in saved.messages] == [("user", "wait for me"), ("assistant", "start")]
    assert saved.pending_context == [INTERRUPTED_ANSWER]


def test_a_short_turn_loads_only_what_its_request_needs(server: HTTPServer, project: Path) -> None:
    """Issue 29: the tokenizer, jsonschema, the permission engine, the search engine and httpx's own
    command-line client (rich, pygments) are not loaded by a short turn that calls no tool."""
    chat(server, fixture_bytes("scripted-openai-text.sse"))
    heavy = ["tiktoken", "jsonschema", "rich", "pygments", "maia.permissions.engine", "maia.search.engine", "pathspec"]
    code = (
        "import json, sys\n"
        "from maia.commands import main\n"
        "try:\n    main(['ask', '--model', 'scripted-openai', '--no-save', 'say hi'])\nexcept SystemExit:\n    pass\n"
        f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    lines = done.stdout.strip().splitlines()
    assert lines[0] == TEXT, done.stderr
    assert json.loads(lines[-1]) == []
