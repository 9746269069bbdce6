"""The LiteLLM provider (§7.1-§7.2): OpenAI-format streaming chat over ``httpx.AsyncClient`` (or through a
sub-agent's parent, which makes the request with its own)."""

from __future__ import annotations

import functools
import json
import os
import re
import ssl
import sys
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, aclosing, asynccontextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol

from maia.core.contracts import (
    ChatRequest,
    Message,
    StreamEvent,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from maia.core.errors import (
    AuthFailed,
    ContextTooLong,
    EmptyResponse,
    HttpStatusError,
    IncompleteStream,
    ProviderError,
    ProviderTimeout,
    ProviderUnreachable,
    RateLimited,
    StreamError,
    UnknownModel,
)
from maia.core.paths import maia_home
from maia.core.settings import Settings, compile_patterns
from maia.i18n import _
from maia.provider.ratelimit import mentions_limit, reset_from_text, retry_delay
from maia.provider.sse import (
    DONE_MARKER,
    SseDecoder,
    StreamAssembler,
    is_context_too_long,
    parse_completion,
)

if TYPE_CHECKING:
    import httpx

# httpx is imported where a request is made, not with this module: a sub-agent, whose parent makes its
# requests (maia.subagents.relay), never loads it before its first request.


class Answer(Protocol):
    """An HTTP answer as the provider reads it: an httpx response, or one a sub-agent's parent relays."""

    @property
    def status_code(self) -> int:
        """The status."""
        ...

    @property
    def reason_phrase(self) -> str:
        """The status's words."""
        ...

    @property
    def headers(self) -> Mapping[str, str]:
        """The headers, looked up in any case (several of one name: joined by commas)."""
        ...

    async def aread(self) -> bytes:
        """The whole body."""
        ...

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body as it arrives (decoded as its Content-Encoding says)."""
        ...


FailureKind = Literal["unreachable", "incomplete", "timeout", "error"]


class TransportFailure(Exception):
    """A request that failed below HTTP: no connection, a cut answer, a timeout, or (``error``, relayed only)
    something else that made it impossible (an answer that cannot be decoded…); ``detail``: what happened."""

    def __init__(self, kind: FailureKind, detail: str) -> None:
        super().__init__(detail)
        self.kind: FailureKind = kind
        self.detail = detail


def transport_failure(exc: httpx.TransportError) -> TransportFailure:
    """What an httpx transport error means for a model request (a sub-agent's parent sends the same)."""
    import httpx

    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.UnsupportedProtocol):
        return TransportFailure("unreachable", detail)
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return TransportFailure("incomplete", detail)
    if isinstance(exc, httpx.TimeoutException):
        return TransportFailure("timeout", detail)
    return TransportFailure("unreachable", detail)


# (url, body, headers, timeouts) → the answer, open while the context lasts; TransportFailure when it fails
Poster = Callable[[str, bytes, dict[str, str], dict[str, float]], AbstractAsyncContextManager[Answer]]


class _StoreAtFirstHandshake(ssl.SSLContext):
    """A client context that verifies as httpx's default one (hostname checked, certificate required,
    certifi or SSL_CERT_FILE/SSL_CERT_DIR), whose certificate store is loaded just before its first TLS
    connection: a loopback ``http://`` proxy never pays for it (tens of milliseconds before a first request)."""

    _lock = threading.Lock()
    _store_loaded = False

    def _load_store(self) -> None:
        with self._lock:
            if self._store_loaded:
                return
            if os.environ.get("SSL_CERT_FILE"):
                self.load_verify_locations(cafile=os.environ["SSL_CERT_FILE"])
            elif os.environ.get("SSL_CERT_DIR"):
                self.load_verify_locations(capath=os.environ["SSL_CERT_DIR"])
            else:
                import certifi

                self.load_verify_locations(cafile=certifi.where())
            self._store_loaded = True

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        """The store first (a failure to load it fails the connection: nothing goes unverified)."""
        self._load_store()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        """The store first (asyncio's and anyio's TLS go through here)."""
        self._load_store()
        return super().wrap_bio(*args, **kwargs)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS settings httpx would build for each client (certifi, or SSL_CERT_FILE/SSL_CERT_DIR), built
    once per process: the model list, the provider and its twins for sub-agents each open a client before
    the first answer. The certificate store loads at the first TLS connection (start-up cost)."""
    context = _StoreAtFirstHandshake(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname, as default
    keylog = os.environ.get("SSLKEYLOGFILE")  # as ssl.create_default_context does
    if keylog and not sys.flags.ignore_environment:
        context.keylog_filename = keylog
    return context


def timeouts(settings: Settings) -> dict[str, float]:
    """Connection limits (seconds); ``ReadTimeout`` (seconds without a byte from the proxy) is the user's."""
    return {"connect": 15.0, "read": float(settings.read_timeout), "write": 60.0, "pool": 15.0}


def client_timeout(settings: Settings) -> httpx.Timeout:
    """The limits as httpx takes them."""
    import httpx

    return httpx.Timeout(**timeouts(settings))


def encode_json(body: Any) -> bytes:
    """A request's JSON body, as httpx's ``json=`` encodes it."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


_ERROR_BODY_LIMIT = 500


CUT_ARGUMENTS_SHOWN = 300


def _arguments_text(block: ToolUseBlock) -> str:
    """The call's arguments as JSON text; a call cut by the output limit is sent back as a valid object
    holding the start of what arrived (servers reject invalid JSON here), never as an empty call."""
    if block.raw_arguments is None:
        return json.dumps(block.input, ensure_ascii=False)
    raw = block.raw_arguments
    shown = raw[:CUT_ARGUMENTS_SHOWN] + ("…" if len(raw) > CUT_ARGUMENTS_SHOWN else "")
    return json.dumps({"truncated_arguments": shown, "received_characters": len(raw)}, ensure_ascii=False)


def _thinking_dict(block: ThinkingBlock) -> dict[str, Any]:
    if block.redacted is not None:
        return {"type": "redacted_thinking", "data": block.redacted}
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def map_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """MAIA's neutral messages → OpenAI chat messages (§7.1 table)."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in messages:
        if message.role == "assistant":
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            calls = [
                {
                    "id": b.id,
                    "type": "function",
                    "function": {"name": b.name, "arguments": _arguments_text(b)},
                }
                for b in message.content
                if isinstance(b, ToolUseBlock)
            ]
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            thinking = [_thinking_dict(b) for b in message.content if isinstance(b, ThinkingBlock)]
            if thinking:  # Anthropic wants its signed reasoning back, unchanged (LiteLLM's thinking_blocks)
                entry["thinking_blocks"] = thinking
            out.append(entry)
            continue
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                out.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": block.content})
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        if text:
            out.append({"role": "user", "content": text})
    return out


def map_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs → OpenAI ``tools`` entries."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": dict(t.input_schema)},
        }
        for t in tools
    ]


def build_chat_body(model: str, request: ChatRequest, max_output_tokens: int | None = None) -> dict[str, Any]:
    """The JSON body of a streaming chat request (§7.1)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": map_messages(request.system, request.messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    max_tokens = request.max_tokens or max_output_tokens
    if max_tokens:
        body["max_tokens"] = max_tokens
    if request.tools:
        body["tools"] = map_tools(request.tools)
    return body


def error_detail(body: bytes) -> str:
    """The server's ``error.message`` when the body is LiteLLM's JSON error, else its first 500 characters."""
    text = body.decode("utf-8", errors="replace").strip()
    with suppress(ValueError):
        data = json.loads(text)
        if isinstance(data, dict):
            error = data.get("error")
            if isinstance(error, dict) and error.get("message"):
                return str(error["message"])
            if isinstance(error, str) and error:
                return error
            if isinstance(data.get("detail"), str):
                return str(data["detail"])
    return text[:_ERROR_BODY_LIMIT]


_BAD_KEY_DETAILS = ("no connected db", "invalid proxy server token", "authentication error", "invalid api key")
_UNKNOWN_MODEL = ("invalid model name", "model not found", "no deployments available for selected model")


def _key_hint(settings_path: Path | None) -> str:
    where = str(settings_path) if settings_path is not None else "~/.maia/settings.json"
    return _(
        "The proxy did not accept the API key: check LiteLLM_API_Key in {path} (or the LITELLM_API_KEY "
        "variable, used when the setting is absent)."
    ).format(path=where)


def classify_http_error(
    status: int,
    body: bytes,
    headers: Mapping[str, str],
    url: str,
    reason: str = "",
    *,
    settings_path: Path | None = None,
    patterns: Sequence[re.Pattern[str]] = (),
) -> ProviderError:
    """The typed error for a non-2xx answer: context too long, rate limited, auth failed, unknown model…

    ``patterns``: the user's ``RateLimitPatterns`` (tried before the known phrasings)."""
    detail = error_detail(body) or reason or _("no details given")
    lowered = detail.lower()
    if is_context_too_long(detail):
        return ContextTooLong(detail, status=status)
    now = datetime.now(UTC)
    if status == 429:
        return RateLimited(status, detail, limit_delay(headers, detail, now, patterns), url=url)
    if status in (400, 403, 503) and (mentions_limit(detail) or _matches(detail, patterns)):
        # some gateways answer a usage limit with another status: it is one when its text says when it ends
        delay = reset_from_text(detail, now, patterns)
        if delay is not None:
            return RateLimited(status, detail, delay, url=url)
    # LiteLLM answers a wrong key with 400 "No connected db." when it runs without a database
    if status in (401, 403) or any(words in lowered for words in _BAD_KEY_DETAILS):
        return AuthFailed(status, detail, url=url, hint=_key_hint(settings_path))
    if status in (400, 404) and any(words in lowered for words in _UNKNOWN_MODEL):
        return UnknownModel(status, detail, url=url, hint=_("`maia models` lists the models this proxy offers."))
    retry_after = retry_delay(headers, datetime.now(UTC)) if status in (502, 503, 504, 529) else None
    return HttpStatusError(status, detail, url=url, retry_after=retry_after)


def _matches(text: str, patterns: Sequence[re.Pattern[str]]) -> bool:
    return any(p.search(text) for p in patterns)


def limit_delay(
    headers: Mapping[str, str], detail: str, now: datetime, patterns: Sequence[re.Pattern[str]] = ()
) -> float | None:
    """How long a limit lasts: the headers (a), else the error text (b); the later of both when both tell,
    so a retry never comes before the reset the message names. None: nothing tells (c)."""
    stated = retry_delay(headers, now)
    told = reset_from_text(detail, now, patterns)
    if stated is None or told is None:
        return told if stated is None else stated
    return max(stated, told)


def debug_log_path(env: Mapping[str, str] | None = None) -> Path | None:
    """Where ``MAIA_DEBUG_LLM`` asks the raw stream to be recorded, or None when it is off.

    ``1`` records into MAIA's home (the log holds prompts and answers: never a shared temporary folder).
    """
    env = os.environ if env is None else env
    value = env.get("MAIA_DEBUG_LLM", "").strip()
    if not value or value.lower() in ("0", "false", "no", "off"):
        return None
    if value.lower() in ("1", "true", "yes", "on"):
        return maia_home(env) / "maia-llm-debug.log"
    return Path(value).expanduser()


def _header_cost(headers: Mapping[str, str]) -> float | None:
    value = headers.get("x-litellm-response-cost")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


class LiteLLMProvider:
    """Streams chat completions from a LiteLLM proxy. Cancelling the consumer aborts the request."""

    def __init__(
        self,
        settings: Settings,
        model: str,
        *,
        client: httpx.AsyncClient | None = None,
        env: Mapping[str, str] | None = None,
        poster: Poster | None = None,
    ) -> None:
        self._settings = settings
        self._model = model
        self._client = client
        self._poster = poster  # makes the requests instead of an HTTP client here (a sub-agent's parent)
        self._owns_client = client is None
        self._debug_path = debug_log_path(env)
        self._patterns = compile_patterns(settings.rate_limit_patterns)  # validated with the settings
        self.last_response_headers: dict[str, str] = {}

    @property
    def id(self) -> str:
        """The provider's identifier."""
        return "litellm"

    @property
    def model(self) -> str:
        """The model name sent to LiteLLM."""
        return self._model

    @model.setter
    def model(self, value: str) -> None:
        self._model = value

    def with_model(self, model: str) -> LiteLLMProvider:
        """A provider for another model on the same server, sharing this one's HTTP client (or poster)."""
        if self._poster is not None:
            twin = LiteLLMProvider(self._settings, model, poster=self._poster)
        else:
            twin = LiteLLMProvider(self._settings, model, client=self._http())
        twin._debug_path = self._debug_path
        return twin

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(timeout=client_timeout(self._settings), verify=tls_context())
        return self._client

    def _post(self, url: str, content: bytes, headers: dict[str, str]) -> AbstractAsyncContextManager[Answer]:
        if self._poster is not None:
            return self._poster(url, content, headers, timeouts(self._settings))
        return self._post_here(url, content, headers)

    @asynccontextmanager
    async def _post_here(self, url: str, content: bytes, headers: dict[str, str]) -> AsyncIterator[Answer]:
        """The request on this process's own connection (failures while the answer is read included)."""
        import httpx

        client = self._http()
        try:
            async with client.stream("POST", url, content=content, headers=headers) as response:
                yield response
        except httpx.TransportError as exc:
            raise transport_failure(exc) from exc

    async def aclose(self) -> None:
        """Close the HTTP client when the provider created it."""
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self._settings.api_key:
            headers["Authorization"] = f"Bearer {self._settings.api_key}"
        return headers

    async def chat(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Stream the answer to ``request`` as events (§4.2)."""
        url = self._settings.chat_url
        body = build_chat_body(self._model, request, self._settings.max_output_tokens)
        log = self._open_debug_log(url, body)
        try:
            async with aclosing(self._stream(url, body, log, request.on_tool_start)) as stream:
                async for event in stream:
                    yield event
        finally:
            if log is not None:
                log.close()

    def _open_debug_log(self, url: str, body: dict[str, Any]) -> IO[bytes] | None:
        if self._debug_path is None:
            return None
        try:
            self._debug_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._debug_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            log = os.fdopen(fd, "ab")
        except OSError:
            return None
        stamp = datetime.now(UTC).isoformat()
        summary = {"model": body["model"], "messages": len(body["messages"]), "tools": len(body.get("tools", []))}
        log.write(f"\n=== {stamp} POST {url} {json.dumps(summary)}\n".encode())
        return log

    async def _stream(
        self, url: str, body: dict[str, Any], log: IO[bytes] | None, on_call: Callable[[str], None] | None = None
    ) -> AsyncGenerator[StreamEvent, None]:
        try:
            async with self._post(url, encode_json(body), self._headers()) as response:
                self.last_response_headers = dict(response.headers)
                if log is not None:
                    log.write(f"--- HTTP {response.status_code}\n".encode())
                if not 200 <= response.status_code < 300:
                    raw = await response.aread()
                    if log is not None:
                        log.write(raw)
                    raise classify_http_error(
                        response.status_code,
                        raw,
                        response.headers,
                        url,
                        response.reason_phrase,
                        settings_path=self._settings.path,
                        patterns=self._patterns,
                    )
                async with aclosing(self._read_answer(response, log, on_call)) as answer:
                    async for event in answer:
                        yield event
        except TransportFailure as failure:
            raise self._transport_error(url, failure) from failure
        except StreamError as error:  # a limit reported in the stream ("code": 429, or its words and a time)
            limited = self._limit_in_stream(error)
            if limited is None:
                raise
            raise limited from None

    def _limit_in_stream(self, error: StreamError) -> RateLimited | None:
        code = (error.code or "").strip()
        delay = reset_from_text(error.detail, datetime.now(UTC), self._patterns)
        named = mentions_limit(error.detail) or _matches(error.detail, self._patterns)
        if code == "429" or (delay is not None and named):
            return RateLimited(429, error.detail, delay)
        return None

    def _transport_error(self, url: str, failure: TransportFailure) -> ProviderError:
        if failure.kind == "error":  # not an outage: said at once, never retried
            return ProviderError(
                _("The request to LiteLLM failed ({url}): {detail}").format(url=url, detail=failure.detail)
            )
        if failure.kind == "incomplete":
            return IncompleteStream()
        if failure.kind == "timeout":
            return ProviderTimeout(
                _("LiteLLM sent nothing for {seconds:g} s ({url}): the proxy or the model is stuck.").format(
                    seconds=self._settings.read_timeout, url=url
                ),
                hint=_("If the model is only slow, raise ReadTimeout (seconds) in {path}.").format(
                    path=self._settings.path
                ),
            )
        return ProviderUnreachable(url, failure.detail)

    async def _read_answer(
        self, response: Answer, log: IO[bytes] | None, on_call: Callable[[str], None] | None = None
    ) -> AsyncGenerator[StreamEvent, None]:
        content_type = response.headers.get("content-type", "")
        assembler = StreamAssembler(header_cost=_header_cost(response.headers), on_call=on_call)
        if "application/json" in content_type:
            raw = await response.aread()
            if log is not None:
                log.write(raw)
            if not raw.strip():
                raise EmptyResponse()
            try:
                data = json.loads(raw)
            except ValueError:
                raise ProviderError(
                    _("LiteLLM sent invalid JSON: {start}").format(start=raw[:200].decode("utf-8", "replace"))
                ) from None
            for event in parse_completion(data):
                yield event
            return
        decoder = SseDecoder()
        received = False
        async for chunk in response.aiter_bytes():
            if not chunk:
                continue
            received = True
            if log is not None:
                log.write(chunk)
            for payload in decoder.feed(chunk):
                if payload == DONE_MARKER:
                    for event in assembler.finish():
                        yield event
                    return
                for event in assembler.feed_payload(payload):
                    yield event
        for payload in decoder.close():
            if payload == DONE_MARKER:
                for event in assembler.finish():
                    yield event
                return
            for event in assembler.feed_payload(payload):
                yield event
        if not received:
            raise EmptyResponse()
        raise IncompleteStream()
