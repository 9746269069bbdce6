"""The LiteLLM provider over real HTTP: pytest-httpserver serves the captures byte for byte."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from maia.core.contracts import (
    ChatRequest,
    Done,
    Message,
    StreamEvent,
    TextBlock,
    TextDelta,
    ToolResultBlock,
    ToolSpec,
    ToolUse,
    ToolUseBlock,
    Truncated,
    Usage,
)
from maia.core.errors import (
    AuthFailed,
    ContextTooLong,
    EmptyResponse,
    HttpStatusError,
    IncompleteStream,
    ProviderUnreachable,
    RateLimited,
    StreamError,
    UnknownModel,
)
from maia.core.settings import Settings, load_settings
from maia.provider.litellm import LiteLLMProvider, build_chat_body
from tests.conftest import FIXTURES, fixture_bytes, fixture_meta

CHAT = "/v1/chat/completions"


def _settings(url: str, write_settings: Callable[..., Path], home: Path, **extra: Any) -> Settings:
    write_settings(url, **extra)
    return load_settings(home, env={})


async def _collect(provider: LiteLLMProvider, request: ChatRequest | None = None) -> list[StreamEvent]:
    request = request or ChatRequest("You are MAIA.", [Message("user", [TextBlock("hi")])])
    try:
        return [e async for e in provider.chat(request)]
    finally:
        await provider.aclose()


def _serve_capture(httpserver: HTTPServer, stem: str) -> dict[str, Any]:
    meta = fixture_meta(stem)
    suffix = ".sse" if (FIXTURES / f"{stem}.sse").exists() else ".json"
    headers = {k: v for k, v in meta["headers"].items() if k not in ("content-length", "transfer-encoding", "date")}
    content_type = headers.pop("content-type")
    httpserver.expect_request(CHAT, method="POST").respond_with_data(
        fixture_bytes(stem + suffix), status=meta["status"], headers=headers, content_type=content_type
    )
    return meta


ALL_CHAT_CAPTURES = sorted(
    p.name.removesuffix(".meta.json") for p in FIXTURES.glob("*.meta.json") if not p.name.startswith("proxy-")
)


@pytest.mark.parametrize("relayed", [False, True], ids=["direct", "relayed"])
@pytest.mark.parametrize("stem", ALL_CHAT_CAPTURES)
async def test_every_capture_served_over_http(
    stem: str, relayed: bool, httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    """Each captured answer, read by the provider's own connection and through a sub-agent's parent (the relay)."""
    from tests.subagents.test_relay import Pipe

    meta = _serve_capture(httpserver, stem)
    pipe = Pipe() if relayed else None
    provider = LiteLLMProvider(
        _settings(httpserver.url_for(""), write_settings, home),
        meta["model"],
        poster=pipe.child.poster() if pipe is not None else None,
    )
    try:
        await _check_capture(provider, meta)
    finally:
        if pipe is not None:
            await pipe.parent.aclose()


async def _check_capture(provider: LiteLLMProvider, meta: dict[str, Any]) -> None:
    turn = meta["script_turn"]
    error = turn.get("error", {}).get("kind")
    if error == "rate_limit":
        with pytest.raises(RateLimited) as info:
            await _collect(provider)
        assert info.value.retry_after == 7
        assert info.value.status == 429
        assert "RateLimitError" in info.value.detail
    elif error == "context_length":
        with pytest.raises(ContextTooLong) as ctx:
            await _collect(provider)
        assert ctx.value.status == 400
    elif error == "overloaded":
        with pytest.raises(HttpStatusError) as http:
            await _collect(provider)
        assert http.value.status == 529
        assert http.value.detail.startswith("litellm.APIError: APIError: OpenAIException - Overloaded")
    elif "stream_error_after" in turn or "disconnect_after" in turn:
        with pytest.raises(StreamError):
            await _collect(provider)
    else:
        events = await _collect(provider)
        assert isinstance(events[-1], Done)
        if meta["model"] != "mock-litellm":
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == turn.get("text", "")
            assert [e.name for e in events if isinstance(e, ToolUse)] == [c["name"] for c in turn.get("tool_calls", [])]


async def test_request_body_headers_and_message_mapping(
    httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    httpserver.expect_request(CHAT, method="POST").respond_with_data(
        fixture_bytes("scripted-openai-tool-result-roundtrip.sse"), content_type="text/event-stream"
    )
    settings = _settings(
        httpserver.url_for("/"), write_settings, home, LiteLLM_API_Key="sk-test", MaxOutputTokens=32000
    )
    tool = ToolSpec("read_file", "Read a text file.", {"type": "object", "properties": {"path": {"type": "string"}}})
    messages = [
        Message("user", [TextBlock("What is in a.py?")]),
        Message("assistant", [ToolUseBlock("call_prev_1", "read_file", {"path": "a.py"})]),
        Message("user", [ToolResultBlock("call_prev_1", "print('hello')\n"), TextBlock("and then?")]),
    ]
    events = await _collect(LiteLLMProvider(settings, "scripted-openai"), ChatRequest("sys", messages, [tool]))
    assert events[-1] == Done("end_turn")
    (request, _response) = httpserver.log[0]
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.headers["Accept"] == "text/event-stream"
    assert request.headers["Content-Type"] == "application/json"
    body = json.loads(request.data)
    assert body == {
        "model": "scripted-openai",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 32000,
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "What is in a.py?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_prev_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_prev_1", "content": "print('hello')\n"},
            {"role": "user", "content": "and then?"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a text file.",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                },
            }
        ],
    }


def test_mapping_matches_the_request_a_real_proxy_accepted() -> None:
    meta = fixture_meta("scripted-openai-tool-result-roundtrip")
    sent = meta["request"]["messages"]
    call = json.loads(sent[2]["tool_calls"][0]["function"]["arguments"])
    request = ChatRequest(
        sent[0]["content"],
        [
            Message("user", [TextBlock(sent[1]["content"])]),
            Message("assistant", [ToolUseBlock("call_prev_1", "read_file", call)]),
            Message("user", [ToolResultBlock("call_prev_1", sent[3]["content"])]),
        ],
    )
    assert build_chat_body("m", request)["messages"] == sent


def test_request_max_tokens_overrides_setting_and_absent_when_unset() -> None:
    request = ChatRequest("", [Message("user", [TextBlock("x")])], max_tokens=4000)
    assert build_chat_body("m", request, 16000)["max_tokens"] == 4000
    body = build_chat_body("m", ChatRequest("", [Message("user", [TextBlock("x")])]))
    assert "max_tokens" not in body and "tools" not in body
    assert body["messages"] == [{"role": "user", "content": "x"}]


async def test_api_key_from_environment(
    httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    httpserver.expect_request(CHAT).respond_with_data(fixture_bytes("scripted-openai-text.sse"))
    write_settings(httpserver.url_for(""))
    settings = load_settings(home, env={"LITELLM_API_KEY": "sk-env"})
    await _collect(LiteLLMProvider(settings, "m"))
    assert httpserver.log[0][0].headers["Authorization"] == "Bearer sk-env"


async def test_no_key_sends_no_authorization(
    httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    httpserver.expect_request(CHAT).respond_with_data(fixture_bytes("scripted-openai-text.sse"))
    await _collect(LiteLLMProvider(_settings(httpserver.url_for(""), write_settings, home), "m"))
    assert "Authorization" not in httpserver.log[0][0].headers


async def test_unreachable_server_names_the_url(write_settings: Callable[..., Path], home: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = _settings(f"http://127.0.0.1:{port}", write_settings, home)
    with pytest.raises(ProviderUnreachable) as info:
        await _collect(LiteLLMProvider(settings, "m"))
    assert info.value.url == f"http://127.0.0.1:{port}/v1/chat/completions"
    assert f"127.0.0.1:{port}/v1/chat/completions" in str(info.value)


@pytest.mark.parametrize(
    ("stem", "status", "detail", "kind", "exit_status"),
    [
        # a proxy without a database answers a wrong key with 400 "No connected db."
        ("proxy-auth-wrong", 400, "No connected db.", AuthFailed, 1),
        (
            "proxy-unknown-model",
            400,
            "/chat/completions: Invalid model name passed in model=no-such-model.",
            UnknownModel,
            2,
        ),
    ],
)
async def test_proxy_errors_carry_status_and_server_message(
    stem: str,
    status: int,
    detail: str,
    kind: type[HttpStatusError],
    exit_status: int,
    httpserver: HTTPServer,
    write_settings: Callable[..., Path],
    home: Path,
) -> None:
    httpserver.expect_request(CHAT).respond_with_data(
        fixture_bytes(stem + ".json"), status=status, content_type="application/json"
    )
    with pytest.raises(HttpStatusError) as info:
        await _collect(LiteLLMProvider(_settings(httpserver.url_for(""), write_settings, home), "m"))
    assert info.value.status == status
    assert info.value.detail.startswith(detail)
    assert type(info.value) is kind
    assert int(info.value.exit_status) == exit_status
    if kind is AuthFailed:  # the hint names the settings file actually in use (MAIA_HOME here)
        assert info.value.hint is not None and str(home / "settings.json") in info.value.hint
        assert "LiteLLM_API_Key" in info.value.hint


async def test_missing_key_is_auth_failed_with_a_hint(
    httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    httpserver.expect_request(CHAT).respond_with_data(
        fixture_bytes("proxy-auth-missing.json"), status=401, content_type="application/json"
    )
    with pytest.raises(AuthFailed) as info:
        await _collect(LiteLLMProvider(_settings(httpserver.url_for(""), write_settings, home), "m"))
    assert info.value.detail == "Authentication Error, No api key passed in."
    assert info.value.hint is not None and "LiteLLM_API_Key" in info.value.hint


async def test_non_json_error_body_shows_its_first_500_characters(
    httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    httpserver.expect_request(CHAT).respond_with_data("<html>" + "x" * 1000, status=502, content_type="text/html")
    with pytest.raises(HttpStatusError) as info:
        await _collect(LiteLLMProvider(_settings(httpserver.url_for(""), write_settings, home), "m"))
    assert info.value.status == 502
    assert info.value.detail == ("<html>" + "x" * 1000)[:500]


async def test_rate_limit_without_delay_headers(
    httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    httpserver.expect_request(CHAT).respond_with_data('{"error": {"message": "slow down"}}', status=429)
    with pytest.raises(RateLimited) as info:
        await _collect(LiteLLMProvider(_settings(httpserver.url_for(""), write_settings, home), "m"))
    assert info.value.retry_after is None


async def test_stream_without_done_is_a_failed_turn(
    httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    body = fixture_bytes("scripted-openai-text.sse").replace(b"data: [DONE]\n\n", b"")
    httpserver.expect_request(CHAT).respond_with_data(body, content_type="text/event-stream")
    seen: list[StreamEvent] = []
    provider = LiteLLMProvider(_settings(httpserver.url_for(""), write_settings, home), "m")
    with pytest.raises(IncompleteStream):
        async for event in provider.chat(ChatRequest("", [Message("user", [TextBlock("x")])])):
            seen.append(event)
    await provider.aclose()
    assert (
        "".join(e.text for e in seen if isinstance(e, TextDelta)) == "Hello! I read the repo; main.py has 3 functions."
    )
    assert not [e for e in seen if isinstance(e, Done)]


async def test_empty_body_is_an_error(httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path) -> None:
    httpserver.expect_request(CHAT).respond_with_data(b"", content_type="text/event-stream")
    with pytest.raises(EmptyResponse):
        await _collect(LiteLLMProvider(_settings(httpserver.url_for(""), write_settings, home), "m"))


async def test_connection_dropped_mid_body_is_a_failed_turn(write_settings: Callable[..., Path], home: Path) -> None:
    """A real socket that promises a chunked body and dies half-way through it."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        chunk = b'data: {"choices":[{"index":0,"delta":{"content":"partial"}}]}\n\n'
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" + b"ff\r\ndata: {")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        provider = LiteLLMProvider(_settings(f"http://127.0.0.1:{port}", write_settings, home), "m")
        seen: list[StreamEvent] = []
        with pytest.raises(IncompleteStream):
            async for event in provider.chat(ChatRequest("", [Message("user", [TextBlock("x")])])):
                seen.append(event)
        await provider.aclose()
    assert seen == [TextDelta("partial")]


async def test_cancellation_propagates_unchanged(
    httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    def slow(_request: Request) -> Response:
        def body() -> Iterator[bytes]:
            yield b'data: {"choices":[{"index":0,"delta":{"content":"first"}}]}\n\n'
            time.sleep(5)
            yield b"data: [DONE]\n\n"

        return Response(body(), content_type="text/event-stream")

    httpserver.expect_request(CHAT).respond_with_handler(slow)
    provider = LiteLLMProvider(_settings(httpserver.url_for(""), write_settings, home), "m")
    first = asyncio.Event()

    async def consume() -> None:
        async for event in provider.chat(ChatRequest("", [Message("user", [TextBlock("x")])])):
            assert event == TextDelta("first")
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    task.cancel()
    started = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert time.monotonic() - started < 2  # not waiting for the server's next chunk
    await provider.aclose()


async def test_truncated_capture_warns(httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path) -> None:
    _serve_capture(httpserver, "scripted-anthropic-truncated-tool-call")
    events = await _collect(LiteLLMProvider(_settings(httpserver.url_for(""), write_settings, home), "m"))
    assert Truncated("length", 11) in events
    assert events[-1] == Done("max_tokens")


async def test_cost_header_used_when_usage_has_none(
    httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    httpserver.expect_request(CHAT).respond_with_data(
        fixture_bytes("scripted-openai-text.sse"),
        content_type="text/event-stream",
        headers={"x-litellm-response-cost": "0.0042"},
    )
    events = await _collect(LiteLLMProvider(_settings(httpserver.url_for(""), write_settings, home), "m"))
    assert [e for e in events if isinstance(e, Usage)] == [Usage(120, 14, 0, 0.0042)]


async def test_debug_log_records_the_raw_stream(
    httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path, tmp_path: Path
) -> None:
    raw = fixture_bytes("scripted-openai-reasoning.sse")
    httpserver.expect_request(CHAT).respond_with_data(raw, content_type="text/event-stream")
    log = tmp_path / "debug.log"
    settings = _settings(httpserver.url_for(""), write_settings, home)
    await _collect(LiteLLMProvider(settings, "m", env={"MAIA_DEBUG_LLM": str(log)}))
    recorded = log.read_bytes()
    assert raw in recorded
    assert b"POST " + settings.chat_url.encode() in recorded


def test_debug_log_default_location(tmp_path: Path) -> None:
    from maia.provider.litellm import debug_log_path

    assert debug_log_path({"MAIA_DEBUG_LLM": "1"}) is not None
    assert debug_log_path({"MAIA_DEBUG_LLM": "1"}).name == "maia-llm-debug.log"  # type: ignore[union-attr]
    assert debug_log_path({}) is None
    assert debug_log_path({"MAIA_DEBUG_LLM": "0"}) is None
