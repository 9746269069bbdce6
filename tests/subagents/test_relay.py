"""A sub-agent's model requests made by its parent (``maia.subagents.relay``), both ends joined as the pipe
joins them (each message through JSON), against a real HTTP server on loopback."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from maia.core.contracts import ChatRequest, Message, TextBlock
from maia.core.errors import ProviderTimeout, ProviderUnreachable
from maia.core.settings import load_settings
from maia.provider.litellm import LiteLLMProvider
from maia.subagents.relay import ParentRelay, RelayServer

REQUEST = ChatRequest("s", [Message("user", [TextBlock("hi")])])


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

    def client(self, **kwargs: Any) -> httpx.AsyncClient:
        """The child's HTTP client, as its provider builds it."""
        return httpx.AsyncClient(transport=self.child.transport(), trust_env=False, **kwargs)


@pytest.fixture
async def pipe() -> Any:
    joined = Pipe()
    yield joined
    await joined.parent.aclose()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_request_and_its_streamed_answer_travel_whole(pipe: Pipe, httpserver: HTTPServer) -> None:
    seen: list[tuple[bytes, str | None]] = []

    def handle(request: Request) -> Response:
        seen.append((request.get_data(), request.headers.get("Authorization")))

        def chunks() -> Iterator[bytes]:
            for n in range(3):
                yield f"data: {n}\n\n".encode()

        return Response(chunks(), content_type="text/event-stream", headers={"X-Limit": "7"})

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handle)
    async with pipe.client() as client:
        body = {"model": "m", "text": "é" * 50_000, "raw": "\x00\x01"}
        headers = {"Authorization": "Bearer k"}
        async with client.stream("POST", httpserver.url_for("/v1/chat/completions"), json=body, headers=headers) as r:
            assert r.status_code == 200
            assert r.headers["x-limit"] == "7" and r.headers["content-type"].startswith("text/event-stream")
            received = b"".join([chunk async for chunk in r.aiter_bytes()])
    assert received == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
    assert [(json.loads(data), auth) for data, auth in seen] == [(body, "Bearer k")]
    assert [m["type"] for m in pipe.up] == ["http"]  # read to its end: no cancel
    assert pipe.down[-1] == {"type": "http-end", "id": 1}
    await asyncio.sleep(0.01)  # (a task's done callbacks run at the loop's next turn)
    assert pipe.parent._tasks == {}


async def test_an_encoded_answer_is_decoded_by_the_child_as_its_own_client_would(
    pipe: Pipe, httpserver: HTTPServer
) -> None:
    packed = gzip.compress(b'{"ok": true}')
    httpserver.expect_request("/x").respond_with_data(packed, headers={"Content-Encoding": "gzip"})
    async with pipe.client() as client:
        response = await client.get(httpserver.url_for("/x"))
    assert response.json() == {"ok": True}


async def test_an_error_status_comes_back_with_its_headers_and_body(pipe: Pipe, httpserver: HTTPServer) -> None:
    httpserver.expect_request("/x", method="POST").respond_with_data(
        '{"error": "slow down"}', status=429, headers={"Retry-After": "3"}, content_type="application/json"
    )
    async with pipe.client() as client:
        response = await client.post(httpserver.url_for("/x"), content=b"{}")
    assert (response.status_code, response.headers["retry-after"], response.json()) == (
        429,
        "3",
        {"error": "slow down"},
    )


async def test_an_unreachable_server_is_the_same_error_in_the_child(pipe: Pipe) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1/chat/completions"
    async with pipe.client() as client:
        with pytest.raises(httpx.ConnectError) as caught:
            await client.post(url, content=b"{}")
    assert caught.value.request.url == url
    assert pipe.down[-1]["type"] == "http-error" and pipe.down[-1]["error"] == "ConnectError"


async def test_the_childs_timeouts_apply_where_the_request_is_made(pipe: Pipe, httpserver: HTTPServer) -> None:
    def stall(_request: Request) -> Response:
        time.sleep(1.5)
        return Response("late")

    httpserver.expect_request("/slow").respond_with_handler(stall)
    async with pipe.client(timeout=httpx.Timeout(5.0, read=0.3)) as client:
        started = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            await client.get(httpserver.url_for("/slow"))
    assert time.monotonic() - started < 1.4  # the child's read limit, not the server's pace
    assert pipe.up[0]["timeout"] == {"connect": 5.0, "read": 0.3, "write": 5.0, "pool": 5.0}


async def test_the_provider_through_the_relay_words_failures_as_ever(
    pipe: Pipe, write_settings: Callable[..., Path], home: Path
) -> None:
    """(Every captured LiteLLM answer through the relay: tests/provider/test_litellm.py.)"""
    write_settings(f"http://127.0.0.1:{closed_port()}")
    settings = load_settings(home, env={})
    errors = []
    for provider in (LiteLLMProvider(settings, "m"), LiteLLMProvider(settings, "m", transport=pipe.child.transport())):
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
    def stall(_request: Request) -> Response:
        time.sleep(1.5)
        return Response("late")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(stall)
    write_settings(httpserver.url_for(""), ReadTimeout=0.3)
    provider = LiteLLMProvider(load_settings(home, env={}), "m", transport=pipe.child.transport())
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

    httpserver.expect_request("/s").respond_with_handler(handle)
    async with pipe.client() as client, client.stream("GET", httpserver.url_for("/s")) as response:
        async for _chunk in response.aiter_bytes():
            break  # the child has what it wants
    assert pipe.up[-1] == {"type": "http-cancel", "id": 1}
    await asyncio.sleep(0.05)
    assert pipe.parent._tasks == {}  # the parent's request is stopped, not read to its end
    deadline = time.monotonic() + 5
    while not ended and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert ended == ["closed"]  # the server saw its connection go long before its 100 chunks


async def test_a_child_cancelled_while_waiting_stops_the_parents_request(pipe: Pipe, httpserver: HTTPServer) -> None:
    def stall(_request: Request) -> Response:
        time.sleep(1.0)
        return Response("late")

    httpserver.expect_request("/slow").respond_with_handler(stall)
    async with pipe.client() as client:
        task = asyncio.create_task(client.get(httpserver.url_for("/slow")))
        await asyncio.sleep(0.2)
        assert len(pipe.parent._tasks) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert pipe.up[-1] == {"type": "http-cancel", "id": 1}
    await asyncio.sleep(0.05)
    assert pipe.parent._tasks == {}


async def test_a_lost_parent_fails_every_request_at_once(httpserver: HTTPServer) -> None:
    sent: list[dict[str, Any]] = []
    relay = ParentRelay(lambda message: sent.append(message) or True)  # a parent that never answers
    async with httpx.AsyncClient(transport=relay.transport(), trust_env=False) as client:
        task = asyncio.create_task(client.get(httpserver.url_for("/x")))
        await asyncio.sleep(0.05)
        relay.lose()
        with pytest.raises(httpx.ReadError, match="parent"):
            await task
        with pytest.raises(httpx.ReadError, match="parent"):
            await client.get(httpserver.url_for("/x"))
    assert [m["type"] for m in sent] == ["http"]  # nothing more is sent to a parent that is gone


async def test_a_pipe_that_cannot_take_the_request_fails_it(httpserver: HTTPServer) -> None:
    relay = ParentRelay(lambda message: False)
    async with httpx.AsyncClient(transport=relay.transport(), trust_env=False) as client:
        with pytest.raises(httpx.ReadError):
            await client.get(httpserver.url_for("/x"))


async def test_the_parent_makes_only_web_requests(pipe: Pipe) -> None:
    answers: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        answers.append(message)

    server = RelayServer(send)
    try:
        for number, (method, url) in enumerate(
            [("POST", "file:///etc/passwd"), ("DELETE", "http://127.0.0.1:9/"), ("POST", "unix:/run/x.sock")], 1
        ):
            server.handle({"type": "http", "id": number, "method": method, "url": url, "headers": [], "body": ""})
        for _ in range(50):
            if len(answers) == 3:
                break
            await asyncio.sleep(0.02)
    finally:
        await server.aclose()
    assert sorted((a["id"], a["type"], a["error"]) for a in answers) == [
        (1, "http-error", "UnsupportedProtocol"),
        (2, "http-error", "UnsupportedProtocol"),
        (3, "http-error", "UnsupportedProtocol"),
    ]


async def test_malformed_answers_from_the_parent_fail_the_request_not_the_child(httpserver: HTTPServer) -> None:
    cases: list[tuple[list[dict[str, Any]], type[Exception]]] = [
        ([{"type": "http-head", "status": "two hundred", "headers": []}], httpx.RemoteProtocolError),
        ([{"type": "http-error", "error": "SystemExit", "message": "x"}], httpx.TransportError),
        (
            [{"type": "http-head", "status": 200, "headers": [["a", 1], "b"]}, {"type": "http-data", "data": "%%"}],
            httpx.RemoteProtocolError,
        ),
        ([{"type": "http-head", "status": 200, "headers": []}, {"type": "http-head"}], httpx.TransportError),
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
        async with httpx.AsyncClient(transport=relay.transport(), trust_env=False) as client:
            with pytest.raises(expected):
                response = await client.get(httpserver.url_for("/x"))
                await response.aread()


async def test_closing_the_parents_end_stops_what_is_under_way(pipe: Pipe, httpserver: HTTPServer) -> None:
    def stall(_request: Request) -> Response:
        time.sleep(1.0)
        return Response("late")

    httpserver.expect_request("/slow").respond_with_handler(stall)
    async with pipe.client() as client:
        task = asyncio.create_task(client.get(httpserver.url_for("/slow")))
        await asyncio.sleep(0.2)
        await pipe.parent.aclose()
        assert pipe.parent._tasks == {} and pipe.parent._client is None
        pipe.child.lose()  # as the child hears when its parent stops it
        with pytest.raises(httpx.ReadError):
            await task
