"""A sub-agent's model requests made by its parent (``maia.subagents.relay``), both ends joined as the pipe
joins them (each message through JSON), against a real HTTP server on loopback."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from maia.core.contracts import ChatRequest, Message, TextBlock
from maia.core.errors import ProviderError, ProviderTimeout, ProviderUnreachable
from maia.core.settings import load_settings
from maia.provider.litellm import Answer, LiteLLMProvider, TransportFailure
from maia.subagents.relay import ParentRelay, RelayServer

REQUEST = ChatRequest("s", [Message("user", [TextBlock("hi")])])
LIMITS = {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}


class Pipe:
    """A child's relay and its parent's, joined: every message goes through JSON, as on the real pipe."""

    def __init__(self) -> None:
        self.up: list[dict[str, Any]] = []  # child → parent
        self.down: list[dict[str, Any]] = []  # parent → child
        self.child = ParentRelay(self._child_send)
        self.parent = RelayServer(self._parent_send)

    def _child_send(self, message: dict[str, Any]) -> bool:
        message = json.loads(json.dumps(message))
        self.up.append(message)
        self.parent.handle(message)
        return True

    async def _parent_send(self, message: dict[str, Any]) -> None:
        message = json.loads(json.dumps(message))
        self.down.append(message)
        self.child.dispatch(message)

    def post(
        self,
        url: str,
        body: bytes = b"{}",
        headers: dict[str, str] | None = None,
        timeout: dict[str, float] | None = None,
    ) -> AbstractAsyncContextManager[Answer]:
        """A request as the child's provider posts it."""
        return self.child.poster()(url, body, headers or {}, timeout or LIMITS)


@pytest.fixture
async def pipe() -> Any:
    joined = Pipe()
    yield joined
    await joined.parent.aclose()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stall(seconds: float) -> Callable[[Request], Response]:
    """A handler that answers ``seconds`` late."""

    def handle(_request: Request) -> Response:
        time.sleep(seconds)
        return Response("late")

    return handle


async def request_stalled(pipe: Pipe, httpserver: HTTPServer) -> None:
    """A request the server answers only after a second."""
    httpserver.expect_request("/slow", method="POST").respond_with_handler(stall(1.0))
    async with pipe.post(httpserver.url_for("/slow")):
        pass


async def test_a_request_and_its_streamed_answer_travel_whole(pipe: Pipe, httpserver: HTTPServer) -> None:
    seen: list[tuple[bytes, str | None]] = []

    def handle(request: Request) -> Response:
        seen.append((request.get_data(), request.headers.get("Authorization")))

        def chunks() -> Iterator[bytes]:
            for n in range(3):
                yield f"data: {n}\n\n".encode()

        response = Response(chunks(), content_type="text/event-stream", headers={"X-Limit": "7"})
        response.headers.add("X-Twice", "a")
        response.headers.add("X-Twice", "b")
        return response

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handle)
    body = json.dumps({"model": "m", "text": "é" * 50_000, "raw": "\x00\x01"}).encode() + bytes(range(256))
    url = httpserver.url_for("/v1/chat/completions")
    async with pipe.post(url, body, {"Authorization": "Bearer k"}) as answer:
        assert (answer.status_code, answer.reason_phrase) == (200, "OK")
        assert answer.headers["X-LIMIT"] == "7" and answer.headers.get("content-type", "").startswith("text/event-")
        assert answer.headers.get("x-twice") == "a, b"  # as httpx's get gives several of one name
        received = b"".join([chunk async for chunk in answer.aiter_bytes()])
    assert received == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
    assert seen == [(body, "Bearer k")]  # the bytes the child built, exactly
    assert [m["type"] for m in pipe.up] == ["http"]  # read to its end: no cancel
    assert pipe.down[-1] == {"type": "http-end", "id": 1}
    await asyncio.sleep(0.01)  # (a task's done callbacks run at the loop's next turn)
    assert pipe.parent._tasks == {}


async def test_an_encoded_answer_arrives_decoded_as_the_childs_own_client_would_read_it(
    pipe: Pipe, httpserver: HTTPServer
) -> None:
    packed = gzip.compress(b'{"ok": true}')
    httpserver.expect_request("/x", method="POST").respond_with_data(packed, headers={"Content-Encoding": "gzip"})
    async with pipe.post(httpserver.url_for("/x")) as answer:
        assert json.loads(await answer.aread()) == {"ok": True}
        assert answer.headers["content-encoding"] == "gzip"  # every header as it came (the provider's record of them)


async def test_an_error_status_comes_back_with_its_headers_and_body(pipe: Pipe, httpserver: HTTPServer) -> None:
    httpserver.expect_request("/x", method="POST").respond_with_data(
        '{"error": "slow down"}', status=429, headers={"Retry-After": "3"}, content_type="application/json"
    )
    async with pipe.post(httpserver.url_for("/x")) as answer:
        status, reason, wait, text = (
            answer.status_code, answer.reason_phrase, answer.headers.get("retry-after"), await answer.aread()
        )  # fmt: skip
    # (the server's own words: werkzeug says them in capitals)
    assert (status, reason.lower(), wait, json.loads(text)) == (429, "too many requests", "3", {"error": "slow down"})


async def test_an_unreachable_server_is_the_same_failure_in_the_child(pipe: Pipe) -> None:
    with pytest.raises(TransportFailure) as caught:
        async with pipe.post(f"http://127.0.0.1:{closed_port()}/v1/chat/completions"):
            pass
    assert caught.value.kind == "unreachable" and caught.value.detail
    assert pipe.down[-1]["type"] == "http-error" and pipe.down[-1]["kind"] == "unreachable"


async def test_the_childs_timeouts_apply_where_the_request_is_made(pipe: Pipe, httpserver: HTTPServer) -> None:
    httpserver.expect_request("/slow", method="POST").respond_with_handler(stall(1.5))
    started = time.monotonic()
    with pytest.raises(TransportFailure) as caught:
        async with pipe.post(httpserver.url_for("/slow"), timeout={**LIMITS, "read": 0.3}):
            pass
    assert caught.value.kind == "timeout"
    assert time.monotonic() - started < 1.4  # the child's read limit, not the server's pace
    assert pipe.up[0]["timeout"] == {"connect": 5.0, "read": 0.3, "write": 5.0, "pool": 5.0}


async def test_the_provider_through_the_relay_words_failures_as_ever(
    pipe: Pipe, write_settings: Callable[..., Path], home: Path
) -> None:
    """(Every captured LiteLLM answer through the relay: tests/provider/test_litellm.py.)"""
    write_settings(f"http://127.0.0.1:{closed_port()}")
    settings = load_settings(home, env={})
    errors = []
    for provider in (LiteLLMProvider(settings, "m"), LiteLLMProvider(settings, "m", poster=pipe.child.poster())):
        try:
            with pytest.raises(ProviderUnreachable) as caught:
                _ = [event async for event in provider.chat(REQUEST)]
            errors.append(caught.value.message)
        finally:
            await provider.aclose()
    assert errors[0] == errors[1] and "unreachable" in errors[0]


async def test_a_timeout_through_the_provider_names_the_users_setting(
    pipe: Pipe, httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(stall(1.5))
    write_settings(httpserver.url_for(""), ReadTimeout=0.3)
    provider = LiteLLMProvider(load_settings(home, env={}), "m", poster=pipe.child.poster())
    try:
        with pytest.raises(ProviderTimeout, match=r"0\.3 s"):
            _ = [event async for event in provider.chat(REQUEST)]
    finally:
        await provider.aclose()


async def test_an_answer_the_child_leaves_is_stopped_in_the_parent(pipe: Pipe, httpserver: HTTPServer) -> None:
    ended: list[str] = []

    def handle(_request: Request) -> Response:
        def chunks() -> Iterator[bytes]:
            try:
                for n in range(100):
                    yield f"data: {n}\n\n".encode()
                    time.sleep(0.05)
            finally:
                ended.append("closed")

        return Response(chunks(), content_type="text/event-stream")

    httpserver.expect_request("/s", method="POST").respond_with_handler(handle)
    async with pipe.post(httpserver.url_for("/s")) as answer:
        async for _chunk in answer.aiter_bytes():
            break  # the child has what it wants
    assert pipe.up[-1] == {"type": "http-cancel", "id": 1}
    await asyncio.sleep(0.05)
    assert pipe.parent._tasks == {}  # the parent's request is stopped, not read to its end
    deadline = time.monotonic() + 5
    while not ended and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert ended == ["closed"]  # the server saw its connection go long before its 100 chunks


async def test_a_child_cancelled_while_waiting_stops_the_parents_request(pipe: Pipe, httpserver: HTTPServer) -> None:
    task = asyncio.create_task(request_stalled(pipe, httpserver))
    await asyncio.sleep(0.2)
    assert len(pipe.parent._tasks) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert pipe.up[-1] == {"type": "http-cancel", "id": 1}
    await asyncio.sleep(0.05)
    assert pipe.parent._tasks == {}


async def test_a_lost_parent_fails_every_request_at_once() -> None:
    sent: list[dict[str, Any]] = []
    relay = ParentRelay(lambda message: sent.append(message) or True)  # a parent that never answers
    post = relay.poster()

    async def request() -> None:
        async with post("http://127.0.0.1:9/x", b"{}", {}, LIMITS):
            pass

    task = asyncio.create_task(request())
    await asyncio.sleep(0.05)
    relay.lose()
    with pytest.raises(TransportFailure, match="parent process is gone"):
        await task
    with pytest.raises(TransportFailure, match="parent process is gone"):
        await request()
    assert [m["type"] for m in sent] == ["http"]  # nothing more is sent to a parent that is gone


async def test_a_pipe_that_cannot_take_the_request_fails_it() -> None:
    post = ParentRelay(lambda message: False).poster()
    with pytest.raises(TransportFailure) as caught:
        async with post("http://127.0.0.1:9/x", b"{}", {}, LIMITS):
            pass
    assert caught.value.kind == "incomplete"


async def test_the_parent_makes_only_web_requests() -> None:
    answers: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        answers.append(message)

    server = RelayServer(send)
    try:
        for number, (method, url) in enumerate(
            [("POST", "file:///etc/passwd"), ("DELETE", "http://127.0.0.1:9/"), ("POST", "unix:/run/x.sock"),
             ("GET", "http://127.0.0.1:9/")],
            1,
        ):  # fmt: skip
            server.handle({"type": "http", "id": number, "method": method, "url": url, "headers": [], "body": ""})
        for _ in range(50):
            if len(answers) == 4:
                break
            await asyncio.sleep(0.02)
    finally:
        await server.aclose()
    assert sorted((a["id"], a["type"], a["kind"]) for a in answers) == [
        (1, "http-error", "unreachable"),
        (2, "http-error", "unreachable"),
        (3, "http-error", "unreachable"),
        (4, "http-error", "unreachable"),
    ]
    assert all("relay does not make" in a["message"] for a in answers)


async def test_malformed_answers_from_the_parent_fail_the_request_not_the_child() -> None:
    cases: list[tuple[list[dict[str, Any]], str]] = [
        ([{"type": "http-head", "status": "two hundred", "headers": []}], "bad status"),
        ([{"type": "http-error", "kind": "SystemExit", "message": "odd"}], "odd"),
        (
            [{"type": "http-head", "status": 200, "headers": [["a", 1], "b"]}, {"type": "http-data", "data": "%%"}],
            "bad data",
        ),
        ([{"type": "http-head", "status": 200, "headers": []}, {"type": "http-head"}], "unexpected"),
        ([{"type": "http-end"}], "unexpected"),
    ]
    for answers, expected in cases:
        relays: list[ParentRelay] = []

        def send(
            message: dict[str, Any], answers: list[dict[str, Any]] = answers, to: list[ParentRelay] = relays
        ) -> bool:
            for answer in answers:
                asyncio.get_running_loop().call_soon(to[0].dispatch, {**answer, "id": message["id"]})
            return True

        relay = ParentRelay(send)
        relays.append(relay)
        relay.dispatch({"type": "http-data", "id": 99, "data": "eA=="})  # for no open request: dropped
        with pytest.raises(TransportFailure, match=expected) as caught:
            async with relay.poster()("http://127.0.0.1:9/x", b"{}", {}, LIMITS) as answer:
                await answer.aread()
        assert caught.value.kind == "error"  # a broken relay is no outage: never retried


async def test_closing_the_parents_end_stops_what_is_under_way(pipe: Pipe, httpserver: HTTPServer) -> None:
    task = asyncio.create_task(request_stalled(pipe, httpserver))
    await asyncio.sleep(0.2)
    await pipe.parent.aclose()
    assert pipe.parent._tasks == {} and pipe.parent._client is None
    pipe.child.lose()  # as the child hears when its parent stops it
    with pytest.raises(TransportFailure, match="parent process is gone"):
        await task


async def test_a_failure_that_is_no_outage_is_said_at_once_not_retried(
    pipe: Pipe, httpserver: HTTPServer, write_settings: Callable[..., Path], home: Path
) -> None:
    """An answer that cannot be decoded (here, as a non-ASCII key would be) is an error with its words, as it
    is on the child's own connection, never a cut stream that the run would retry for minutes."""
    from maia.app.retry import is_outage

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_data(
        b"not gzip at all", headers={"Content-Encoding": "gzip"}, content_type="text/event-stream"
    )
    write_settings(httpserver.url_for(""))
    provider = LiteLLMProvider(load_settings(home, env={}), "m", poster=pipe.child.poster())
    try:
        with pytest.raises(ProviderError) as caught:
            _ = [event async for event in provider.chat(REQUEST)]
    finally:
        await provider.aclose()
    assert not is_outage(caught.value)
    assert "DecodingError" in caught.value.message and httpserver.url_for("") in caught.value.message


async def test_closing_the_parents_end_never_swallows_its_own_cancellation() -> None:
    """A second Ctrl+C while the relay closes (a request still cleaning up) still stops the caller."""

    async def send(_message: dict[str, Any]) -> None:
        pass

    async def slow_cleanup() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            await asyncio.sleep(0.3)  # as a response's close may take a moment

    server = RelayServer(send)
    server._tasks[1] = asyncio.create_task(slow_cleanup())
    await asyncio.sleep(0)
    closing = asyncio.create_task(server.aclose())
    await asyncio.sleep(0.05)
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
