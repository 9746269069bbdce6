"""A sub-agent's model requests, made by its parent (both ends).

The parent already holds a loaded HTTP stack (it has just had its own model's answer). A child that hands
its requests to it over the protocol pipe never loads httpx, its transport or anyio: tens of milliseconds
of its start, and memory in each child. The child builds each request as it would send it (its provider,
settings, key and timeouts) and reads the answer as its provider reads any (``maia.provider.litellm.Answer``);
the parent holds nothing of the child's conversation, and a failure reaches the child as its own connection
would have raised it (``TransportFailure``: unreachable, a cut answer, a timeout).

child → parent: ``http {id, method, url, headers, body, timeout}``, ``http-cancel {id}``.
parent → child: ``http-head {id, status, reason, headers}``, then ``http-data {id, data}``…, then
``http-end {id}``; or ``http-error {id, kind, message}`` at any point (``kind``: unreachable, incomplete,
timeout, as the child's own connection would have failed; ``error`` for anything else, never retried).
Bodies travel as base64; the answer's body decoded (the parent's client undoes its Content-Encoding; the
headers are all relayed as they came). Only POST requests to http(s) URLs are made. A child uses this only
when its ``start`` says ``relay: true``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from maia.provider.litellm import Answer, FailureKind, Poster, TransportFailure

if TYPE_CHECKING:
    import httpx

_TIMEOUT_KEYS = ("connect", "read", "write", "pool")
_KINDS: tuple[FailureKind, ...] = ("unreachable", "incomplete", "timeout", "error")


def _pairs(headers: Any) -> list[tuple[str, str]]:
    """Header pairs from a message (anything malformed left out)."""
    pairs: list[tuple[str, str]] = []
    for pair in headers if isinstance(headers, list) else ():
        if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], str):
            pairs.append((pair[0], pair[1]))
    return pairs


def _timeout(data: Any) -> dict[str, float | None]:
    """A request's timeouts as httpx takes them (a missing or malformed value: none)."""
    data = data if isinstance(data, dict) else {}
    return {
        key: float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None
        for key, value in ((key, data.get(key)) for key in _TIMEOUT_KEYS)
    }


# --- child side ------------------------------------------------------------------------------------


class _Headers(dict[str, str]):
    """Headers by lower-case name (several of one name joined by commas, as httpx's ``get`` gives them)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        super().__init__()
        for name, value in pairs:
            key = name.lower()
            self[key] = f"{self[key]}, {value}" if key in self else value

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key`` in any case."""
        return super().get(key.lower(), default)

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key.lower() if isinstance(key, str) else key)


class _RelayedAnswer:
    """An answer the parent is relaying: read once, as it arrives."""

    def __init__(
        self, status: int, reason: str, headers: _Headers, read: Callable[[], Awaitable[bytes | None]]
    ) -> None:
        self.status_code = status
        self.reason_phrase = reason
        self.headers = headers
        self._read = read

    async def aread(self) -> bytes:
        """The whole body."""
        return b"".join([chunk async for chunk in self.aiter_bytes()])

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body as it arrives."""
        while (chunk := await self._read()) is not None:
            yield chunk


def _failure(message: dict[str, Any] | None) -> TransportFailure:
    if message is None:
        return TransportFailure("incomplete", "the parent process is gone")
    kind, text = message.get("kind"), message.get("message")
    detail = text if isinstance(text, str) and text else "the parent could not make the request"
    if message.get("type") != "http-error":
        return TransportFailure("error", f"the parent relayed an unexpected {message.get('type')!r} message")
    return TransportFailure(kind if kind in _KINDS else "error", detail)


class ParentRelay:
    """The child's end: requests sent to the parent, its answers routed back to them by id."""

    def __init__(self, send: Callable[[dict[str, Any]], bool]) -> None:
        self._send = send
        self._next_id = 0
        self._open: dict[int, asyncio.Queue[dict[str, Any] | None]] = {}
        self._lost = False

    def poster(self) -> Poster:
        """What a provider posts its requests with: the parent makes them."""
        return self._post

    def dispatch(self, message: dict[str, Any]) -> None:
        """An ``http-*`` message from the parent, to the request it answers (one no longer open is dropped)."""
        request_id = message.get("id")
        queue = self._open.get(request_id) if isinstance(request_id, int) else None
        if queue is not None:
            queue.put_nowait(message)

    def lose(self) -> None:
        """The parent is gone: every open request fails, and any later one."""
        self._lost = True
        for queue in self._open.values():
            queue.put_nowait(None)

    @contextlib.asynccontextmanager
    async def _post(
        self, url: str, content: bytes, headers: dict[str, str], timeout: dict[str, float]
    ) -> AsyncIterator[Answer]:
        self._next_id += 1
        request_id = self._next_id
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._open[request_id] = queue
        message = {
            "type": "http",
            "id": request_id,
            "method": "POST",
            "url": url,
            "headers": [[k, v] for k, v in headers.items()],
            "body": base64.b64encode(content).decode("ascii"),
            "timeout": timeout,
        }
        if self._lost or not self._send(message):
            queue.put_nowait(None)
        ended = False

        async def read() -> bytes | None:
            nonlocal ended
            if ended:
                return None
            message = await queue.get()
            if message is not None and message.get("type") == "http-data":
                data = message.get("data")
                try:
                    return base64.b64decode(data if isinstance(data, str) else "", validate=True)
                except ValueError:
                    ended = True
                    raise TransportFailure("error", "the parent relayed bad data") from None
            ended = True
            if message is not None and message.get("type") == "http-end":
                return None
            raise _failure(message)

        try:
            head = await queue.get()
            if head is None or head.get("type") != "http-head":
                ended = True
                raise _failure(head)
            status, reason = head.get("status"), head.get("reason")
            if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 999:
                raise TransportFailure("error", f"the parent relayed a bad status: {status!r}")
            reason = reason if isinstance(reason, str) else ""
            yield _RelayedAnswer(status, reason, _Headers(_pairs(head.get("headers"))), read)
        finally:
            # an answer left before its end (read no further, or cancelled): the parent stops reading it
            if self._open.pop(request_id, None) is not None and not ended and not self._lost:
                self._send({"type": "http-cancel", "id": request_id})


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
            task = self._tasks.get(request_id)  # (kept until it has ended: aclose waits for it)
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
            import httpx

            from maia.provider.litellm import tls_context

            self._client = httpx.AsyncClient(verify=tls_context(), timeout=None)
        return self._client

    async def _relay(self, request_id: int, message: dict[str, Any]) -> None:
        import httpx

        from maia.provider.litellm import transport_failure

        try:
            method, url, body = message.get("method"), message.get("url"), message.get("body")
            if method != "POST" or not isinstance(url, str) or not url.startswith(("http://", "https://")):
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
                head = {
                    "type": "http-head",
                    "id": request_id,
                    "status": response.status_code,
                    "reason": response.reason_phrase,
                    "headers": [[k, v] for k, v in response.headers.multi_items()],
                }
                await self._send(head)
                async for chunk in response.aiter_bytes():
                    if chunk:
                        data = base64.b64encode(chunk).decode("ascii")
                        await self._send({"type": "http-data", "id": request_id, "data": data})
            finally:
                await response.aclose()
            await self._send({"type": "http-end", "id": request_id})
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the child's provider words it as its own connection's failure
            if isinstance(error, httpx.TransportError):
                failure = transport_failure(error)
                kind, text = failure.kind, failure.detail
            else:  # an answer that cannot be decoded, a header that cannot be sent, a URL that cannot be: no outage
                kind, text = "error", f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            await self._send({"type": "http-error", "id": request_id, "kind": kind, "message": text})

    async def aclose(self) -> None:
        """Stop every request under way and close the client."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        # their own ends (CancelledError) are results here; a cancellation of this call still propagates
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        if self._client is not None:
            client, self._client = self._client, None
            with contextlib.suppress(Exception):
                await client.aclose()
