"""Compaction before any request that would not fit, also in the middle of a turn (issue 27 item 7,
finding 8: a 136 k-token request was sent to a 128 k model mid-turn).

A real ``maia ask`` against a loopback server: the model reads a file too big for the context left;
the next request must not carry it whole: the conversation is compacted first (announced), and the
turn carries on from the summary to its answer.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from maia.context.tokens import count_text
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
