"""One live connection to one MCP server, through the official SDK (imported here only).

The SDK's transports are anyio context managers that must be entered and left by one task, so
each connection is owned by a task of its own that opens the client, waits for ``close()`` and
leaves it (Streamable HTTP: ``DELETE`` of the session; SSE: the stream closed; stdio: stdin
closed, then SIGTERM/SIGKILL of the process group). Requests run from the caller's task and
race the owner: when the transport dies, the pending call ends at once with
:class:`ConnectionLost`, which says whether the request can have reached the server.

MAIA speaks the initialize handshake (SDK ``mode="legacy"``): servers on SDK 1.x only know it and
SDK 2.x servers still accept it, so one round trip fewer than the SDK's discover-then-fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from maia import __version__
from maia.i18n import _
from maia.mcp.config import ServerConfig, display_url

if TYPE_CHECKING:
    import httpx2
    from mcp import Client

    from maia.process.sandbox.policy import SandboxPolicy

T = TypeVar("T")

# Codes of the SDK's own errors (mcp_types.jsonrpc), repeated here so this module imports lazily.
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
INVALID_REQUEST = -32600
SSE_READ_TIMEOUT = 3600.0  # an idle legacy SSE stream is not a dead one
_LOGGERS = ("mcp", "mcp_types", "httpx2", "httpcore2", "sse_starlette")


class McpFailure(Exception):
    """A server could not be reached or answered badly; ``cause`` is for the user."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


class ConnectionLost(McpFailure):
    """The transport died. ``may_have_run`` is False when the request provably never reached the server."""

    def __init__(self, cause: str, *, may_have_run: bool) -> None:
        super().__init__(cause)
        self.may_have_run = may_have_run


class RequestTimedOut(McpFailure):
    """No answer within the server's ``timeout``: the request was given up (it may still run there)."""


# the SDK's own read timeout should fire first; this bound holds when it does not (a hung HTTP POST…)
TIMEOUT_GRACE = 1.0


def timed_out(error: BaseException) -> bool:
    """Whether a request's failure is its timeout (ours, or the SDK's ``REQUEST_TIMEOUT``)."""
    if isinstance(error, RequestTimedOut):
        return True
    from mcp.shared.exceptions import MCPError

    return isinstance(error, MCPError) and error.code == REQUEST_TIMEOUT


class _QuietFile(logging.FileHandler):
    """A log file whose own failures (folder removed, disk full) are silent."""

    def handleError(self, record: logging.LogRecord) -> None:
        """Never print logging errors on the terminal."""


_installed: logging.Handler | None = None


def quiet_sdk_logging(log_file: Path | None = None) -> None:
    """Keep the SDK's log lines off the terminal (they would break the chat's screen): to a file, or nowhere."""
    global _installed
    handler: logging.Handler = logging.NullHandler()
    if log_file is not None:
        with contextlib.suppress(OSError):
            log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = _QuietFile(log_file, encoding="utf-8", delay=True)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.propagate = False
        if _installed is not None:
            logger.removeHandler(_installed)
        logger.addHandler(handler)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.WARNING)
    if _installed is not None:
        _installed.close()
    _installed = handler


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for sub in error.exceptions for leaf in _leaves(sub)]
    return [error]


def _http_hint(status: int) -> str:
    if status in (401, 403):
        return _(" (check the token in the server's headers)")
    if status == 404:
        return _(" (check the URL's path, often /mcp, or /sse for the older transport)")
    if status == 405:
        return _(' (the server may use the other transport: try "type": "sse" or "http")')
    return ""


class _HttpErrors:
    """The last HTTP error status seen on a connection: the SDK reports most of them as one vague error."""

    def __init__(self) -> None:
        self.last: tuple[int, str, str] | None = None

    async def hook(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            detail = ""
            with contextlib.suppress(Exception):
                body = (await response.aread())[:300].decode("utf-8", "replace")
                detail = " ".join(body.split())
            self.last = (response.status_code, response.reason_phrase or "", detail)

    def describe(self) -> str | None:
        if self.last is None:
            return None
        status, reason, detail = self.last
        text = f"HTTP {status} {reason}".strip()
        if detail:
            text += f": {detail[:200]}"
        return text + _http_hint(status)


_QUERY = re.compile(r"(https?://[^\s'\"?#]*)[?#][^\s'\"]*")


def describe_error(error: BaseException, config: ServerConfig, http: _HttpErrors | None = None) -> str:
    """One line saying what went wrong, for ``/mcp``, ``maia mcp test`` and the model (URLs without query)."""
    return _QUERY.sub(r"\1?…", _describe(error, config, http))


def _describe(error: BaseException, config: ServerConfig, http: _HttpErrors | None) -> str:
    import httpx2
    from mcp.shared.exceptions import MCPError

    leaves = _leaves(error)
    # prefer the most telling failure of a group: network, HTTP, then protocol errors
    for leaf in leaves:
        if isinstance(leaf, httpx2.ConnectTimeout):
            return _("no connection to {url} within the timeout").format(url=display_url(config.url or ""))
        if isinstance(leaf, httpx2.ConnectError):
            return _("cannot connect to {url}: {error}").format(
                url=display_url(config.url or ""), error=str(leaf) or type(leaf).__name__
            )
        if isinstance(leaf, httpx2.HTTPStatusError):
            response = leaf.response
            return f"HTTP {response.status_code} {response.reason_phrase}".strip() + _http_hint(response.status_code)
    for leaf in leaves:
        if isinstance(leaf, FileNotFoundError) and config.transport == "stdio":
            return _("command not found: {command} (is it installed and on PATH?)").format(command=config.command)
        if isinstance(leaf, PermissionError) and config.transport == "stdio":
            return _("cannot run {command}: permission denied").format(command=config.command)
        if isinstance(leaf, McpFailure):
            return leaf.cause
        if isinstance(leaf, MCPError):
            if leaf.code == CONNECTION_CLOSED:
                if config.transport == "stdio":
                    return _("the server process ended (connection closed)")
                if http is not None and http.describe():
                    return str(http.describe())
                return _("the server closed the connection")
            if leaf.code == REQUEST_TIMEOUT:
                return _("no answer within {seconds:g} s").format(seconds=config.timeout)
            if http is not None and http.describe() and leaf.message == "Server returned an error response":
                return str(http.describe())
            return _("server error {code}: {message}").format(code=leaf.code, message=leaf.message)
        if isinstance(leaf, httpx2.TimeoutException):
            return _("no answer within {seconds:g} s").format(seconds=config.timeout)
        if isinstance(leaf, httpx2.HTTPError):
            return _("HTTP error: {error}").format(error=str(leaf) or type(leaf).__name__)
        if isinstance(leaf, TimeoutError):
            return _("no answer within {seconds:g} s").format(seconds=config.timeout)
        if isinstance(leaf, OSError):
            return _("system error: {error}").format(error=leaf.strerror or str(leaf))
    first = leaves[0] if leaves else error
    return f"{type(first).__name__}: {first}".rstrip(": ")


def _never_delivered(error: BaseException | None) -> bool:
    """Whether a transport failure proves the last request never reached the server (safe to resend)."""
    if error is None:
        return False
    import httpx2

    return any(isinstance(leaf, httpx2.ConnectError | httpx2.ConnectTimeout) for leaf in _leaves(error))


def session_expired(error: BaseException) -> bool:
    """The server does not know our session any more (restarted): the request was not processed."""
    from mcp.shared.exceptions import MCPError

    return (
        isinstance(error, MCPError)
        and error.code == INVALID_REQUEST
        and error.message in ("Session not found", "Session terminated")
    )


def _import_sdk() -> None:
    import mcp.client.sse
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401


class _WatchedRead:
    """The transport's read stream, noticing when it ends (the server is gone before any new call)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class Connection:
    """A connection to one server: ``open()``, requests through ``request()``, ``close()``."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        stderr_log: Path | None = None,
        on_end: Callable[[], None] | None = None,
        sandbox: SandboxPolicy | None = None,
    ) -> None:
        self.config = config
        self.sandbox = sandbox if config.sandbox else None  # a local server runs in the commands' sandbox
        self.stderr_log = stderr_log
        self.on_end = on_end  # called once when the transport ends by itself (a local server exited…)
        self.http = _HttpErrors()
        self.protocol_version: str | None = None
        self.server_name: str | None = None
        self.capabilities: dict[str, Any] = {}
        self.connect_seconds: float | None = None
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._scope: Any = None  # the owner's anyio cancel scope
        self._ready: asyncio.Future[None] | None = None
        self._stop = asyncio.Event()
        self._ended_at: float | None = None  # the read stream ended: nothing more will come
        self.error: BaseException | None = None

    # --- life cycle -------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Open, and neither the owner task nor the transport's read side has ended."""
        return (
            self._client is not None and self._owner is not None and not self._owner.done() and self._ended_at is None
        )

    def cause(self) -> str:
        """Why the connection is not usable (for messages)."""
        if self.error is not None:
            return describe_error(self.error, self.config, self.http)
        if self.config.transport == "stdio":
            return _("the server process ended") + self.stderr_tail()
        return _("the connection ended")

    def stderr_tail(self, limit: int = 300) -> str:
        """The last line the local server wrote on stderr, as ``: <line>`` (or nothing)."""
        if self.stderr_log is None:
            return ""
        try:
            lines = [line.strip() for line in self.stderr_log.read_text("utf-8", "replace").splitlines()]
        except OSError:
            return ""
        lines = [line for line in lines if line]
        return f": {lines[-1][:limit]}" if lines else ""

    async def open(self) -> None:
        """Connect and shake hands within the server's timeout; :class:`McpFailure` says why not."""
        if self.config.transport == "stdio" and self.sandbox is not None and self.sandbox.refusal is not None:
            raise McpFailure(self.sandbox.refusal)  # "Sandbox": "strict" without bubblewrap: nothing starts
        _import_sdk()  # before the clock starts: loading the SDK is not the server's slowness
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        started = time.monotonic()
        self._owner = asyncio.create_task(self._own(), name=f"mcp:{self.config.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), self.config.timeout)
        except TimeoutError:
            await self._stop_owner(grace=0.0)
            raise McpFailure(_("no answer within {seconds:g} s").format(seconds=self.config.timeout)) from None
        except asyncio.CancelledError:
            await self._stop_owner(grace=0.0)
            raise
        except McpFailure:
            await self._stop_owner(grace=2.0)
            if self.config.transport == "stdio":
                tail = self.stderr_tail()
                raise McpFailure(self.cause() + (tail if tail and tail[2:] not in self.cause() else "")) from None
            raise
        self.connect_seconds = time.monotonic() - started

    async def close(self, timeout: float = 5.0) -> None:
        """Leave the session (DELETE / stream closed / process stopped), returning within ``timeout`` s.

        A local server still running then is left to the SDK's shutdown (stdin closed, SIGTERM, SIGKILL
        of its process group), which goes on while the event loop runs.
        """
        await self._stop_owner(grace=max(0.0, timeout - 0.5), hard=min(0.5, timeout))

    async def _stop_owner(self, grace: float, hard: float = 0.5) -> None:
        owner = self._owner
        if owner is None or owner.done():
            return
        self._stop.set()
        if grace > 0:
            await asyncio.wait({owner}, timeout=grace)  # never raises for the owner's own end
        if owner.done():
            return
        if self._scope is None:  # not running yet: nothing to shut down
            owner.cancel()
        else:
            # anyio's cancellation, not task.cancel(): the SDK shields its shutdown (DELETE, or stdin
            # closed then SIGTERM/SIGKILL of the server's group) from it, and a native cancel defeats that
            self._scope.cancel()
        await asyncio.wait({owner}, timeout=hard)

    async def _own(self) -> None:
        import anyio

        assert self._ready is not None
        ready = self._ready
        errlog: TextIO | None = None
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self.config.transport == "stdio":
                    errlog = self._open_errlog()
                async with self._transport(errlog) as client:
                    self._client = client
                    session = client.session
                    self.protocol_version = session.protocol_version
                    info = session.server_info
                    self.server_name = info.name if info is not None else None
                    capabilities = session.server_capabilities
                    if capabilities is not None:
                        self.capabilities = capabilities.model_dump(exclude_none=True)
                    if not ready.done():
                        ready.set_result(None)
                    await self._stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as error:  # the transport died or the handshake failed: record why
            self.error = error
            if not ready.done():
                ready.set_exception(McpFailure(describe_error(error, self.config, self.http)))
        finally:
            self._mark_ended()
            if errlog is not None:
                errlog.close()
            if not ready.done():
                ready.set_exception(McpFailure(_("the connection ended during the handshake")))
            # a failure nobody waited for must not be reported as "never retrieved"
            if ready.done() and not ready.cancelled():
                ready.exception()

    def _open_errlog(self) -> TextIO | None:
        if self.stderr_log is None:
            return open(os.devnull, "w", encoding="utf-8")
        self.stderr_log.parent.mkdir(parents=True, exist_ok=True)
        return open(self.stderr_log, "w", encoding="utf-8", errors="replace")

    def _mark_ended(self) -> None:
        if self._ended_at is None:
            self._ended_at = time.monotonic()
            if self.on_end is not None and not self._stop.is_set() and self._ready is not None and self._ready.done():
                self.on_end()

    @contextlib.asynccontextmanager
    async def _transport(self, errlog: TextIO | None) -> AsyncIterator[Client]:
        from mcp import Client
        from mcp_types import Implementation

        @contextlib.asynccontextmanager
        async def watched() -> AsyncIterator[Any]:
            async with self._raw_transport(errlog) as (read, write):
                yield _WatchedRead(read, self._mark_ended), write

        client = Client(
            watched(),  # any async context manager of (read, write) is a transport
            mode="legacy",
            read_timeout_seconds=self.config.timeout,
            client_info=Implementation(name="maia", version=__version__),
            cache=None,
        )
        async with client:
            yield client

    def _raw_transport(self, errlog: TextIO | None) -> contextlib.AbstractAsyncContextManager[Any]:
        config = self.config
        if config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            command, args, env = config.command or "", list(config.args), dict(config.env)
            if self.sandbox is not None:
                command, *args = self.sandbox.launcher_argv([command, *args])
                env = self.sandbox.environment(env)
                if not self.sandbox.namespaces:
                    env.pop("TMPDIR", None)
            params = StdioServerParameters(command=command, args=args, env=env or None, cwd=config.cwd)
            return stdio_client(params, errlog=errlog) if errlog is not None else stdio_client(params)
        import httpx2

        headers = dict(config.headers)
        hooks = {"response": [self.http.hook]}
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            def factory(
                headers: dict[str, str] | None = None,
                timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = None,
            ) -> httpx2.AsyncClient:
                return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, event_hooks=hooks)

            return sse_client(
                config.url or "",
                headers=headers,
                timeout=config.timeout,
                sse_read_timeout=max(SSE_READ_TIMEOUT, config.timeout),
                httpx_client_factory=factory,
            )
        from mcp.client.streamable_http import streamable_http_client

        http_client = httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(config.timeout, read=max(300.0, config.timeout)),
            event_hooks=hooks,
        )
        return _owned_http(http_client, streamable_http_client(config.url or "", http_client=http_client))

    # --- requests ---------------------------------------------------------------------------

    async def request(self, call: Callable[[Client], Awaitable[T]]) -> T:
        """Run ``call`` on the client; a dead transport raises :class:`ConnectionLost` at once."""
        if not self.alive or self._client is None:
            raise ConnectionLost(self.cause(), may_have_run=False)
        assert self._owner is not None
        client = self._client
        task = asyncio.ensure_future(call(client))
        try:
            done, _pending = await asyncio.wait(
                {task, self._owner}, timeout=self.config.timeout + TIMEOUT_GRACE, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.wait({task}, timeout=TIMEOUT_GRACE)  # a hung transport never holds Ctrl+C
            raise
        if not done:  # every request is bounded by the timeout, whatever the transport does
            task.cancel()
            await asyncio.wait({task}, timeout=TIMEOUT_GRACE)
            raise RequestTimedOut(_("no answer within {seconds:g} s").format(seconds=self.config.timeout))
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            self._mark_ended()
            raise ConnectionLost(self.cause(), may_have_run=not _never_delivered(self.error))
        try:
            return task.result()
        except Exception as error:
            from mcp.shared.exceptions import MCPError

            if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
                # let the owner record the transport's own error (it explains the closure)
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(self._owner), 1.0)
                self._mark_ended()
                raise ConnectionLost(self.cause(), may_have_run=not _never_delivered(self.error)) from None
            if session_expired(error):
                self._mark_ended()
                raise ConnectionLost(_("the server forgot the session (it restarted?)"), may_have_run=False) from None
            raise


@contextlib.asynccontextmanager
async def _owned_http(http_client: httpx2.AsyncClient, transport: Any) -> AsyncIterator[Any]:
    """The Streamable HTTP transport with its httpx2 client closed afterwards."""
    async with http_client, transport as streams:
        yield streams


def model_dump(value: Any) -> Mapping[str, Any]:
    """The JSON form (camelCase keys) of an SDK result."""
    dumped: Mapping[str, Any] = value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped
