"""A sub-agent's model requests, made by its parent (both ends).

The parent already holds a loaded HTTP stack (it has just had its own model's answer); a child that sends
its requests over the protocol pipe does not load httpx's transport (httpcore, h11) and anyio's asyncio
layer before its first request: about 30 ms of a child's start, and some memory in each child. The child
still builds each request with httpx (its provider is the same code), and reads the answer as httpx's own
response: only the bytes travel through the parent, which holds nothing of the child's conversation.

child → parent: ``http {id, method, url, headers, body, timeout}``, ``http-cancel {id}``.
parent → child: ``http-head {id, status, headers}``, then ``http-data {id, data}``…, then ``http-end {id}``,
or ``http-error {id, error, message}`` at any point (``error``: the name of the httpx exception it raised).
Bodies travel as base64. A child uses this only when its ``start`` says ``relay: true``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx

Send = Callable[[dict[str, Any]], Any]  # the child's send: True/False (sent or not), or a coroutine (parent)

_TIMEOUT_KEYS = ("connect", "read", "write", "pool")
_METHODS = frozenset({"GET", "POST"})


def _pairs(headers: Any) -> list[tuple[str, str]]:
    """Header pairs from a message (anything malformed left out)."""
    pairs: list[tuple[str, str]] = []
    for pair in headers if isinstance(headers, list) else ():
        if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], str):
            pairs.append((pair[0], pair[1]))
    return pairs


def _timeout(data: Any) -> dict[str, float | None]:
    """A request's timeout dict as httpx takes it (a missing or malformed value: none)."""
    data = data if isinstance(data, dict) else {}
    return {
        key: float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None
        for key, value in ((key, data.get(key)) for key in _TIMEOUT_KEYS)
    }


def _error_class(name: Any) -> type[httpx.TransportError]:
    """The httpx exception a relayed error names; TransportError for anything else."""
    found = getattr(httpx, name, None) if isinstance(name, str) else None
    if isinstance(found, type) and issubclass(found, httpx.TransportError):
        return found
    return httpx.TransportError


# --- child side ------------------------------------------------------------------------------------


class ParentRelay:
    """The child's end: requests sent to the parent, its answers routed back to them by id."""

    def __init__(self, send: Callable[[dict[str, Any]], bool]) -> None:
        self._send = send
        self._next_id = 0
        self._open: dict[int, asyncio.Queue[dict[str, Any] | None]] = {}
        self._lost = False

    def transport(self) -> httpx.AsyncBaseTransport:
        """An httpx transport whose requests the parent makes."""
        return _RelayTransport(self)

    def dispatch(self, message: dict[str, Any]) -> None:
        """An ``http-*`` message from the parent, to the request it answers (one no longer open is dropped)."""
        queue = self._open.get(message.get("id"))  # type: ignore[arg-type]
        if queue is not None:
            queue.put_nowait(message)

    def lose(self) -> None:
        """The parent is gone: every open request fails, and any later one."""
        self._lost = True
        for queue in self._open.values():
            queue.put_nowait(None)

    def _open_request(self, message: dict[str, Any]) -> tuple[int, asyncio.Queue[dict[str, Any] | None]]:
        self._next_id += 1
        request_id = self._next_id
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._open[request_id] = queue
        if self._lost or not self._send({**message, "id": request_id}):
            queue.put_nowait(None)
        return request_id, queue

    def _close(self, request_id: int, *, cancel: bool) -> None:
        if self._open.pop(request_id, None) is not None and cancel and not self._lost:
            self._send({"type": "http-cancel", "id": request_id})


def _failure(message: dict[str, Any] | None, request: httpx.Request) -> httpx.TransportError:
    if message is None:
        return httpx.ReadError("the parent process is gone", request=request)
    text = message.get("message")
    return _error_class(message.get("error"))(text if isinstance(text, str) else "", request=request)


class _RelayTransport(httpx.AsyncBaseTransport):
    def __init__(self, relay: ParentRelay) -> None:
        self._relay = relay

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request through the parent; the response once its status and headers have come."""
        body = await request.aread()
        message = {
            "type": "http",
            "method": request.method,
            "url": str(request.url),
            "headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in request.headers.raw],
            "body": base64.b64encode(body).decode("ascii"),
            "timeout": _timeout(request.extensions.get("timeout")),
        }
        request_id, queue = self._relay._open_request(message)
        try:
            head = await queue.get()
        except BaseException:  # cancelled while the parent makes it: the parent stops
            self._relay._close(request_id, cancel=True)
            raise
        if head is None or head.get("type") != "http-head":
            self._relay._close(request_id, cancel=False)
            raise _failure(head, request)
        status = head.get("status")
        if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 999:
            self._relay._close(request_id, cancel=True)
            raise httpx.RemoteProtocolError(f"the parent relayed a bad status: {status!r}", request=request)
        stream = _RelayStream(self._relay, request_id, queue, request)
        return httpx.Response(status, headers=_pairs(head.get("headers")), stream=stream, request=request)


class _RelayStream(httpx.AsyncByteStream):
    def __init__(
        self, relay: ParentRelay, request_id: int, queue: asyncio.Queue[dict[str, Any] | None], request: httpx.Request
    ) -> None:
        self._relay = relay
        self._id = request_id
        self._queue = queue
        self._request = request
        self._ended = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while not self._ended:
            message = await self._queue.get()
            if message is not None and message.get("type") == "http-data":
                data = message.get("data")
                try:
                    yield base64.b64decode(data if isinstance(data, str) else "", validate=True)
                except ValueError:
                    raise httpx.RemoteProtocolError("the parent relayed bad data", request=self._request) from None
                continue
            self._ended = True
            self._relay._close(self._id, cancel=False)
            if message is None or message.get("type") != "http-end":
                raise _failure(message, self._request)

    async def aclose(self) -> None:
        """A response closed before its end: the parent stops reading it."""
        if not self._ended:
            self._ended = True
            self._relay._close(self._id, cancel=True)


# --- parent side -----------------------------------------------------------------------------------


class RelayServer:
    """The parent's end for one child: each of its requests made with one HTTP client, answered back."""

    def __init__(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self._send = send
        self._client: httpx.AsyncClient | None = None
        self._tasks: dict[int, asyncio.Task[None]] = {}

    def handle(self, message: dict[str, Any]) -> None:
        """An ``http`` or ``http-cancel`` message from the child."""
        request_id = message.get("id")
        if not isinstance(request_id, int) or isinstance(request_id, bool):
            return
        if message.get("type") == "http-cancel":
            task = self._tasks.pop(request_id, None)
            if task is not None:
                task.cancel()
            return
        if request_id in self._tasks:
            return  # an id already in use: the child is broken, its first request goes on
        task = asyncio.create_task(self._relay(request_id, message))
        self._tasks[request_id] = task

        def forget(ended: asyncio.Task[None]) -> None:
            if self._tasks.get(request_id) is ended:
                del self._tasks[request_id]

        task.add_done_callback(forget)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            from maia.provider.litellm import tls_context

            self._client = httpx.AsyncClient(verify=tls_context(), timeout=None)
        return self._client

    async def _relay(self, request_id: int, message: dict[str, Any]) -> None:
        try:
            method, url, body = message.get("method"), message.get("url"), message.get("body")
            if method not in _METHODS or not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise httpx.UnsupportedProtocol(f"the relay does not make {method!r} requests to {url!r}")
            content = base64.b64decode(body if isinstance(body, str) else "", validate=True)
            client = self._http()
            request = client.build_request(
                str(method),
                url,
                headers=_pairs(message.get("headers")),
                content=content,
                extensions={"timeout": _timeout(message.get("timeout"))},
            )
            response = await client.send(request, stream=True)
            try:
                headers = [[k.decode("latin-1"), v.decode("latin-1")] for k, v in response.headers.raw]
                await self._send(
                    {"type": "http-head", "id": request_id, "status": response.status_code, "headers": headers}
                )
                async for chunk in response.aiter_raw():  # undecoded: the child's httpx decodes as it would have
                    if chunk:
                        await self._send(
                            {"type": "http-data", "id": request_id, "data": base64.b64encode(chunk).decode("ascii")}
                        )
            finally:
                await response.aclose()
            await self._send({"type": "http-end", "id": request_id})
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the child gets it as its own client would have raised it
            name = type(error).__name__ if isinstance(error, httpx.TransportError) else "TransportError"
            await self._send({"type": "http-error", "id": request_id, "error": name, "message": str(error) or name})

    async def aclose(self) -> None:
        """Stop every request under way and close the client."""
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        if self._client is not None:
            client, self._client = self._client, None
            with contextlib.suppress(Exception):
                await client.aclose()
