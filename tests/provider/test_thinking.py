"""Anthropic's signed reasoning through LiteLLM: collected from the stream, kept in the session, sent back."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_httpserver import HTTPServer

from maia.core.contracts import Message, TextBlock, Thinking, ThinkingBlock
from maia.provider.litellm import map_messages
from maia.provider.sse import StreamAssembler
from maia.sessions.codec import SavedSession, dump_session, parse_session
from tests.app.helpers import CHAT, chat_bodies, maia
from tests.streams import sse, text_stream


def _thinking_stream() -> bytes:
    """As LiteLLM streams it: reasoning text with thinking_blocks pieces, then the signature on its own."""

    def delta(**fields: object) -> dict[str, object]:
        return {"choices": [{"index": 0, "delta": fields}]}

    return sse(
        delta(
            reasoning_content="The user wants ", thinking_blocks=[{"type": "thinking", "thinking": "The user wants "}]
        ),
        delta(reasoning_content="a greeting.", thinking_blocks=[{"type": "thinking", "thinking": "a greeting."}]),
        delta(reasoning_content="", thinking_blocks=[{"type": "thinking", "thinking": "", "signature": "SIG=="}]),
        delta(content="Hello!"),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    )


def test_the_assembler_joins_the_pieces_and_keeps_the_signature() -> None:
    assembler = StreamAssembler()
    events = []
    for line in _thinking_stream().split(b"\n\n"):
        payload = line.removeprefix(b"data: ")
        if payload and payload != b"[DONE]":
            events.extend(assembler.feed_payload(payload))
    events.extend(assembler.finish())
    blocks = [e.block for e in events if isinstance(e, Thinking)]
    assert blocks == [ThinkingBlock("The user wants a greeting.", "SIG==")]


def test_unsigned_reasoning_is_not_sent_back() -> None:
    assembler = StreamAssembler()
    assembler.feed({"choices": [{"delta": {"thinking_blocks": [{"type": "thinking", "thinking": "x"}]}}]})
    assert assembler.thinking_events() == []


def test_thinking_blocks_go_back_in_litellms_form_and_survive_the_session_file() -> None:
    message = Message("assistant", [ThinkingBlock("why", "SIG"), ThinkingBlock("", None, "OPAQUE"), TextBlock("ok")])
    (mapped,) = map_messages("", [message])
    assert mapped == {
        "role": "assistant",
        "content": "ok",
        "thinking_blocks": [
            {"type": "thinking", "thinking": "why", "signature": "SIG"},
            {"type": "redacted_thinking", "data": "OPAQUE"},
        ],
    }
    session = SavedSession(name="s", messages=[message])
    assert parse_session(dump_session(session), "s").messages == [message]


def test_a_run_sends_the_signed_reasoning_with_the_next_request(server: HTTPServer, project: Path) -> None:
    from tests.streams import tool_stream

    def answer(body: bytes) -> None:
        server.expect_oneshot_request(CHAT).respond_with_data(body, content_type="text/event-stream")

    thinking_then_call = _thinking_stream().replace(b"Hello!", b"Planning.")
    call = tool_stream("TodoWrite", {"todos": []})
    answer(thinking_then_call[: -len(b"data: [DONE]\n\n")] + call)
    answer(text_stream("Done."))
    result = maia("ask", "-m", "m", "--allow", "TodoWrite", "--no-save", "go")
    assert result.returncode == 0, result.stderr
    second = chat_bodies(server)[1]["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert assistant["thinking_blocks"] == [
        {"type": "thinking", "thinking": "The user wants a greeting.", "signature": "SIG=="}
    ]
    assert assistant["tool_calls"][0]["function"]["name"] == "TodoWrite"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"todos": []}
