"""Compaction before any request that would not fit, also in the middle of a turn (issue 27 item 7,
finding 8: a 136 k-token request was sent to a 128 k model mid-turn).

A real ``maia ask`` against a loopback server: the model reads a file too big for the context left;
the next request must not carry it whole: the conversation is compacted first (announced), and the
turn carries on from the summary to its answer.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from maia.agent.conversation import Conversation
from maia.app.loadout import assemble
from maia.context.tokens import TokenCounter, count_text
from maia.core.errors import ProviderError
from maia.provider.fake import ScriptedProvider, ScriptedTurn, text_turn, tool_turn
from maia.sessions.store import SessionManager, SessionStore
from maia.tools import builtin_tools
from tests.agent.helpers import RecordingUI
from tests.app.helpers import CHAT, maia
from tests.streams import text_stream, tool_stream

MAX_CONTEXT = 8000
SUMMARY = """## Project context
- A test project with one big file.
## Current goal
- Read big.txt and say what it is.
## Relevant files
- big.txt
## Decisions/Conclusions
- big.txt is a long list of words.
## Next steps
- Answer the user."""


def request_tokens(body: dict[str, Any]) -> int:
    """What a request weighs with MAIA's own tokenizer: every message's text, and the tools."""
    texts = []
    for message in body["messages"]:
        content = message.get("content")
        texts.append(content if isinstance(content, str) else json.dumps(content or ""))
        texts.extend(json.dumps(call) for call in message.get("tool_calls", []))
    return count_text("\n".join(texts)) + count_text(json.dumps(body.get("tools", [])))


def test_a_request_that_would_not_fit_mid_turn_is_compacted_first(
    server: HTTPServer, write_settings: Callable[..., Path], project: Path
) -> None:
    write_settings(server.url_for(""), MaxContextTokens=MAX_CONTEXT)
    words = random.Random(7).choices(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"], k=8000)
    big = project / "big.txt"
    big.write_text("\n".join(" ".join(words[i : i + 16]) for i in range(0, len(words), 16)), encoding="utf-8")
    bodies: list[dict[str, Any]] = []

    def scripted(request: Request) -> Response:
        body = json.loads(request.get_data())
        bodies.append(body)
        last = json.dumps(body["messages"][-1])
        if "Write a compacted summary" in last:
            answer = text_stream(SUMMARY)
        elif len(bodies) == 1:
            answer = tool_stream("Read", {"path": "big.txt"})
        else:
            answer = text_stream("big.txt is a long list of NATO words.")
        return Response(answer, content_type="text/event-stream")

    server.expect_request(CHAT, method="POST").respond_with_handler(scripted)
    result = maia("ask", "-m", "m", "--allow", "Read", "What is in big.txt?", timeout=120)  # no size from LiteLLM
    assert result.returncode == 0, result.stderr
    assert result.stdout == "big.txt is a long list of NATO words.\n"
    assert "in the middle of the turn: compacting the conversation, then carrying on" in result.stderr
    assert len(bodies) == 3  # the request, the summary, the turn carried on from the summary
    assert "Write a compacted summary" in json.dumps(bodies[1]["messages"][-1])
    carried = bodies[2]
    assert SUMMARY in carried["messages"][0]["content"]  # the summary replaces the conversation
    assert "What is in big.txt?" in json.dumps(carried["messages"][-1])  # and the request is carried on
    for body in bodies:  # no request ever exceeded the model's context
        assert request_tokens(body) < MAX_CONTEXT, request_tokens(body)


# --- what an error or Ctrl+C after a compaction mid-turn leaves (in process: the scripted provider) ---


def _conversation(project: Path, home: Path, provider: ScriptedProvider) -> Conversation:
    return Conversation(
        launch=project,
        loadout=assemble(project, home, builtin_tools(), {}),
        provider=provider,
        ui=RecordingUI(),  # type: ignore[arg-type]
        sessions=SessionManager(SessionStore.for_launch(project), "work"),
        counter=TokenCounter(),
    )


@pytest.mark.parametrize("failure", ["error", "cancel"])
async def test_a_failure_after_a_compaction_mid_turn_never_brings_the_old_conversation_back(
    project: Path, home: Path, failure: str
) -> None:
    (project / "big.txt").write_text("word " * 3000, encoding="utf-8")
    gate = asyncio.Event()

    async def hold() -> None:
        await gate.wait()

    fails = ProviderError("the proxy fell over")
    last = ScriptedTurn([fails]) if failure == "error" else ScriptedTurn([hold])
    provider = ScriptedProvider([text_turn("hi"), tool_turn(("Read", {"path": "big.txt"})), text_turn(SUMMARY), last])
    conversation = _conversation(project, home, provider)
    await conversation.send("hello")  # a conversation before the turn: the compaction replaces it
    conversation.max_context = conversation.context_tokens() + 4500 + 400  # the file will not fit
    turn = asyncio.ensure_future(conversation.send("read big.txt"))
    if failure == "error":
        with pytest.raises(ProviderError):
            await turn
    else:
        while provider.remaining:  # the held answer has begun: the compaction is done
            await asyncio.sleep(0.01)
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
    assert conversation.start_context == SUMMARY  # still the compacted conversation
    assert conversation.sessions.name == "work__1"
    texts = [m.text for m in conversation.agent.messages]
    assert "hello" not in texts and not any("word word" in t for t in texts), texts  # never the old one
    assert len(provider.requests) == 4 and "read big.txt" in provider.requests[3].messages[-1].text
