"""The MCP tool source (§22): declarations → rules → parallel connections → tools, with health.

``McpSource(home, launch, rules)`` is all a process needs (the chat, ``maia ask``, a sub-agent
child building its own from disk). ``start()`` selects servers by the rules before any
connection and connects the enabled ones in parallel; a failing server is marked FAIL with its
cause and the others go on. Beyond the spec: a server whose transport dies is reconnected once
(tools listed again) when it is next needed, and the call is resent when it provably never
reached the server; ``reconnect()`` retries on demand. Prompts and resources are offered too.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shlex
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from maia.core.contracts import SourceReport, Tool
from maia.i18n import _
from maia.mcp.client import (
    Connection,
    ConnectionLost,
    McpFailure,
    describe_error,
    model_dump,
    quiet_sdk_logging,
    timed_out,
)
from maia.mcp.config import LoadedConfig, ServerConfig, load_config
from maia.mcp.results import prompt_messages, resource_text, tool_outcome
from maia.mcp.rules import Selection, hidden_because, select_servers, tool_name
from maia.mcp.tool import McpTool, RemoteTool, checked_schema, short_description
from maia.permissions.rules import RuleSet

if TYPE_CHECKING:
    from mcp import Client

    from maia.process.sandbox.policy import SandboxPolicy

State: TypeAlias = Literal["ok", "fail", "disabled", "connecting", "idle"]
MAX_PAGES = 100
PING_BOUND = 3.0  # after a timeout, how long a ping may take to prove the server is alive (only slow)
CLOSE_TIMEOUT = 2.5  # §22: connections closed within 3 s on a signal (the application allows a source 3 s)
_REF = re.compile(r"(?<![\w@])@([A-Za-z0-9_-]+):(\S+)")


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """A server's health, for ``/mcp``, ``maia mcp list`` and the status line."""

    name: str
    state: State  # ok | fail | disabled | connecting | idle (enabled, not tried yet)
    transport: str
    origin: str  # user | project
    target: str  # URL (no credentials, no query) or command line
    reason: str  # why enabled or disabled (the deciding rule)
    cause: str | None = None  # why it failed
    description: str = ""
    tools: int = 0
    hidden_tools: int = 0
    prompts: int = 0
    resources: int = 0
    connect_seconds: float | None = None  # handshake
    list_seconds: float | None = None  # tools (and prompts, resources) listed
    since: float | None = None  # wall-clock time of the last state change
    reconnects: int = 0
    protocol_version: str | None = None
    server_name: str | None = None


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument of a server prompt."""

    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True)
class PromptInfo:
    """A server prompt, offered as the slash command ``/mcp__<server>__<prompt>``."""

    server: str
    name: str
    command: str
    description: str
    arguments: tuple[PromptArgument, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """A server resource, attached to a prompt with ``@<server>:<uri>``."""

    server: str
    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None


def parse_prompt_arguments(prompt: PromptInfo, text: str) -> dict[str, str]:
    """``/cmd a b`` or ``/cmd name=value …``: words fill the arguments in order; ValueError names what is missing."""
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise ValueError(_("cannot split the arguments: {error}").format(error=error)) from None
    names = [a.name for a in prompt.arguments]
    values: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            values[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in values]
    if len(positional) > len(free):
        if not free:
            if names:
                raise ValueError(
                    _("too many arguments: {prompt} takes {names}").format(
                        prompt=prompt.command, names=", ".join(names)
                    )
                )
            raise ValueError(_("{prompt} takes no arguments").format(prompt=prompt.command))
        # the last argument takes the rest of the line
        head, rest = positional[: len(free) - 1], positional[len(free) - 1 :]
        positional = [*head, " ".join(rest)]
    values.update(zip(free, positional, strict=False))
    missing = [a.name for a in prompt.arguments if a.required and a.name not in values]
    if missing:
        usage = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)
        raise ValueError(
            _("missing argument {names}: /{prompt} {usage}").format(
                names=", ".join(missing), prompt=prompt.command, usage=usage
            )
        )
    return values


class ToolFailure(Exception):
    """A tool call failed; the message is for the model (the runner makes it an error result)."""


class _Server:
    """One declared server: its selection, connection, tools and health."""

    def __init__(self, selection: Selection, rules: RuleSet, log_dir: Path, notify: Callable[[], None]) -> None:
        self.selection = selection
        self.config = selection.server
        self.rules = rules
        self.log_dir = log_dir
        self.notify = notify
        self.state: State = "idle" if selection.enabled else "disabled"
        self.cause: str | None = None
        self.conn: Connection | None = None
        self.sandbox: SandboxPolicy | None = None
        self.tools: dict[str, RemoteTool] = {}
        self.hidden = 0
        self.prompts: list[PromptInfo] = []
        self.resources: list[ResourceInfo] = []
        self.warnings: list[str] = []
        self.list_seconds: float | None = None
        self.connect_seconds: float | None = None
        self.since: float | None = None
        self.reconnects = 0
        self.connected_once = False
        self.lock = asyncio.Lock()
        self.closing: set[asyncio.Task[None]] = set()  # hung connections being closed in the background

    @property
    def name(self) -> str:
        return self.config.name

    def _set(self, state: State, cause: str | None = None) -> None:
        self.state, self.cause, self.since = state, cause, time.time()
        self.notify()

    def status(self) -> ServerStatus:
        conn = self.conn
        return ServerStatus(
            name=self.name,
            state=self.state,
            transport=self.config.transport,
            origin=self.config.origin,
            target=self.config.target,
            reason=self.selection.reason,
            cause=self.cause,
            description=self.config.description,
            tools=len(self.tools),
            hidden_tools=self.hidden,
            prompts=len(self.prompts),
            resources=len(self.resources),
            connect_seconds=self.connect_seconds,
            list_seconds=self.list_seconds,
            since=self.since,
            reconnects=self.reconnects,
            protocol_version=conn.protocol_version if conn else None,
            server_name=conn.server_name if conn else None,
        )

    # --- connecting ---------------------------------------------------------------------------

    async def connect(self) -> None:
        """(Re)connect and list; never raises for a server's failure (state and cause say it)."""
        async with self.lock:
            await self._connect_locked()

    async def ensure(self) -> Connection:
        """A live connection, reconnecting once if needed; :class:`McpFailure` when the server stays down."""
        conn = self.conn
        if conn is not None and conn.alive and self.state == "ok":
            return conn
        async with self.lock:
            conn = self.conn
            if conn is None or not conn.alive or self.state != "ok":
                await self._connect_locked()
            if self.state != "ok" or self.conn is None:
                raise McpFailure(self.cause or _("not connected"))
            return self.conn

    async def _connect_locked(self) -> None:
        old, self.conn = self.conn, None
        if old is not None:
            await old.close(timeout=2.0)
        if self.connected_once:
            self.reconnects += 1
        self._set("connecting")
        safe_name = re.sub(r"[^A-Za-z0-9_-]", "_", self.name)
        conn = Connection(self.config, stderr_log=self.log_dir / f"{safe_name}.stderr.log", sandbox=self.sandbox)
        conn.on_end = lambda: self._ended(conn)
        try:
            await conn.open()
            started = time.monotonic()
            if "tools" in conn.capabilities:
                listed = await conn.request(_list_tools)
            else:  # a server that announces no tools may still list some; its silence is no failure
                listed = await self._optional(conn, "tools", _list_tools, announced=False)
            prompts = await self._optional(conn, "prompts", _list_prompts)
            resources = await self._optional(conn, "resources", _list_resources)
            self.list_seconds = time.monotonic() - started
        except asyncio.CancelledError:
            await conn.close(timeout=1.0)
            self._set("fail", _("connection interrupted"))
            raise
        except McpFailure as failure:
            await conn.close(timeout=1.0)
            self._set("fail", failure.cause)
            return
        except Exception as error:  # an SDK or server error while listing: the server is unusable
            await conn.close(timeout=1.0)
            self._set("fail", describe_error(error, self.config, conn.http))
            return
        self.conn = conn
        self.connect_seconds = conn.connect_seconds
        self.connected_once = True
        self._take_tools(listed)
        self.prompts = [_prompt_info(self.name, p) for p in prompts if isinstance(p, Mapping) and p.get("name")]
        self.resources = [_resource_info(self.name, r) for r in resources if isinstance(r, Mapping) and r.get("uri")]
        self._set("ok")

    async def _optional(
        self, conn: Connection, capability: str, call: Any, *, announced: bool = True
    ) -> list[Mapping[str, Any]]:
        """Prompts and resources are extras: a server without them, or failing on them, stays usable."""
        if announced and capability not in conn.capabilities:
            return []
        try:
            result: list[Mapping[str, Any]] = await conn.request(call)
        except ConnectionLost:
            raise
        except Exception as error:
            if not announced:
                return []
            failed = (  # one sentence per capability: "prompts" and "resources" are protocol words
                _("MCP server {name}: listing its prompts failed: {cause}")
                if capability == "prompts"
                else _("MCP server {name}: listing its resources failed: {cause}")
            )
            self.warnings.append(failed.format(name=self.name, cause=describe_error(error, self.config, conn.http)))
            return []
        return result

    def _take_tools(self, listed: Sequence[Mapping[str, Any]]) -> None:
        tools: dict[str, RemoteTool] = {}
        hidden = 0
        for raw in listed:
            name = raw.get("name")
            if not isinstance(name, str) or not name:
                continue
            if hidden_because(self.config, name, self.rules) is not None:
                hidden += 1
                continue
            public = tool_name(self.name, name)
            if public in tools:
                self.warnings.append(
                    _(
                        'MCP server {server}: tool "{tool}" has the same name as "{other}" once made safe ({public}); '
                        "ignored."
                    ).format(server=self.name, tool=name, other=tools[public].name, public=public)
                )
                continue
            schema, problem = checked_schema(raw.get("inputSchema"))
            if problem is not None:
                self.warnings.append(
                    _(
                        "MCP server {server}: tool {tool} has an invalid input schema ({problem}); any input is "
                        "accepted."
                    ).format(server=self.name, tool=name, problem=problem)
                )
            description = raw.get("description")
            tools[public] = RemoteTool(
                self.name, name, public, short_description(description if isinstance(description, str) else ""), schema
            )
        self.tools, self.hidden = tools, hidden

    def _ended(self, conn: Connection) -> None:
        """The transport of the current connection ended by itself: FAIL now (the status line shows it)."""
        if conn is self.conn and self.state == "ok":
            self._set("fail", conn.cause())

    def lost(self, cause: str) -> None:
        """The transport died mid-session: FAIL until the next reconnection."""
        self._set("fail", cause)

    async def after_timeout(self, conn: Connection, error: BaseException) -> bool:
        """A request timed out: a ping tells a slow server (kept) from a hung one, marked down and
        closed in the background (the next call reconnects). True when it was marked down."""
        if not timed_out(error) or conn is not self.conn:
            return False

        async def ping(client: Client) -> Any:
            with warnings.catch_warnings():  # MAIA speaks the handshake mode where ping still exists
                warnings.simplefilter("ignore")
                return await client.send_ping()

        try:
            await asyncio.wait_for(conn.request(ping), min(PING_BOUND, self.config.timeout + 1.0))
            return False
        except asyncio.CancelledError:
            raise
        except Exception:  # no pong: the server is hung (stopped, deadlocked, unreachable)
            pass
        if conn is self.conn:
            self.conn = None
            self._set("fail", describe_error(error, self.config, conn.http))
            closing = asyncio.ensure_future(conn.close(timeout=2.0))
            self.closing.add(closing)
            closing.add_done_callback(self.closing.discard)
        return True

    async def close(self, timeout: float) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            await conn.close(timeout=timeout)
        if self.closing:
            await asyncio.wait(set(self.closing), timeout=timeout)
        if self.selection.enabled:
            self.state, self.since = "idle", time.time()

    # --- requests -----------------------------------------------------------------------------

    async def request(self, call: Callable[[Client], Any], *, resend: bool, what: str) -> Any:
        """Run a request, reconnecting once when the transport died; resent only when it cannot have run
        (or when ``resend`` says the request has no effect on the server)."""
        try:
            conn = await self.ensure()
        except McpFailure as failure:
            raise ToolFailure(
                _("MCP server {server} is unavailable: {cause}").format(server=self.name, cause=failure.cause)
            ) from None
        try:
            return await conn.request(call)
        except ConnectionLost as lost:
            self.lost(lost.cause)
            first = lost
        except ToolFailure:
            raise
        except Exception as error:
            raise await self._failure(conn, error, what) from None
        try:
            conn = await self.ensure()
        except McpFailure as failure:
            raise ToolFailure(
                _("MCP server {server}: the connection was lost ({lost}) and reconnecting failed: {cause}").format(
                    server=self.name, lost=first.cause, cause=failure.cause
                )
            ) from None
        if first.may_have_run and not resend:
            raise ToolFailure(
                _(
                    "MCP server {server}: the connection broke during {what} ({cause}). MAIA reconnected, but the "
                    "call may or may not have run on the server: check its effect before calling it again."
                ).format(server=self.name, what=what, cause=first.cause)
            )
        try:
            return await conn.request(call)
        except ConnectionLost as again:
            self.lost(again.cause)
            raise ToolFailure(
                _("MCP server {server}: the connection was lost again: {cause}").format(
                    server=self.name, cause=again.cause
                )
            ) from None
        except ToolFailure:
            raise
        except Exception as error:
            raise await self._failure(conn, error, what) from None

    async def _failure(self, conn: Connection, error: BaseException, what: str) -> ToolFailure:
        """A request's failure for the model; a timeout marks a hung server down first."""
        cause = describe_error(error, self.config, conn.http)
        if await self.after_timeout(conn, error):
            return ToolFailure(
                _(
                    "MCP server {server}: {what} failed: {cause}. The server does not answer any more: it is marked "
                    "down and will be reconnected on the next call."
                ).format(server=self.name, what=what, cause=cause)
            )
        return ToolFailure(
            _("MCP server {server}: {what} failed: {cause}").format(server=self.name, what=what, cause=cause)
        )

    async def call_tool(self, remote: RemoteTool, arguments: dict[str, Any]) -> str:
        what = _("the call of {tool}").format(tool=remote.name)

        async def call(client: Client) -> Any:
            current = self.tools.get(remote.public_name)
            if current is None:
                raise ToolFailure(
                    _("MCP server {server} no longer offers the tool {tool}.").format(
                        server=self.name, tool=remote.name
                    )
                )
            return model_dump(await client.call_tool(current.name, arguments))

        result = await self.request(call, resend=False, what=what)
        outcome = tool_outcome(result)
        if outcome.is_error:
            raise ToolFailure(outcome.text or _("the tool reported an error without a message"))
        return outcome.text


async def _paged(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Mapping[str, Any]]:
    """Every item of a paginated MCP list (``field`` of each page), ``MAX_PAGES`` pages at most."""
    items: list[Mapping[str, Any]] = []
    cursor: str | None = None
    for _page in range(MAX_PAGES):
        result = await fetch(cursor)
        items.extend(model_dump(item) for item in getattr(result, field))
        cursor = result.next_cursor
        if not cursor:
            break
    return items


async def _list_tools(client: Client) -> list[Mapping[str, Any]]:
    return await _paged(lambda cursor: client.list_tools(cursor=cursor), "tools")


async def _list_prompts(client: Client) -> list[Mapping[str, Any]]:
    return await _paged(lambda cursor: client.list_prompts(cursor=cursor), "prompts")


async def _list_resources(client: Client) -> list[Mapping[str, Any]]:
    return await _paged(lambda cursor: client.list_resources(cursor=cursor), "resources")


def _prompt_info(server: str, raw: Mapping[str, Any]) -> PromptInfo:
    arguments = tuple(
        PromptArgument(str(a["name"]), str(a.get("description") or ""), bool(a.get("required")))
        for a in raw.get("arguments") or []
        if isinstance(a, Mapping) and a.get("name")
    )
    return PromptInfo(
        server,
        str(raw["name"]),
        tool_name(server, str(raw["name"])),
        short_description(raw.get("description")),
        arguments,
    )


def _resource_info(server: str, raw: Mapping[str, Any]) -> ResourceInfo:
    return ResourceInfo(
        server,
        str(raw["uri"]),
        str(raw.get("name") or raw["uri"]),
        short_description(raw.get("description")),
        raw.get("mimeType") if isinstance(raw.get("mimeType"), str) else None,
    )


@dataclass(slots=True)
class Plan:
    """Declarations and the rules' decision for each server, before any connection."""

    config: LoadedConfig
    selections: list[Selection]
    warnings: list[str] = field(default_factory=list)
    rules: RuleSet = field(default_factory=RuleSet)
    user_rules: RuleSet = field(default_factory=RuleSet)


class McpSource:
    """Tools of the MCP servers the rules enable: a :class:`~maia.core.contracts.ToolSource` with health."""

    def __init__(
        self,
        home: Path,
        launch: Path,
        rules: RuleSet | None = None,
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.home = home
        self.launch = launch
        self._rules = rules
        self._env = env
        self.sandbox: SandboxPolicy | None = None  # set by the application: local servers run in it
        self._servers: dict[str, _Server] = {}
        self._listeners: list[Callable[[], None]] = []

    @property
    def name(self) -> str:
        """``mcp``."""
        return "mcp"

    # --- life cycle ---------------------------------------------------------------------------

    def plan(self) -> Plan:
        """Read the declarations and decide every server by the rules: no connection (``maia mcp list``)."""
        from maia.permissions.sources import load_rules

        loaded_rules = load_rules(self.home, self.launch)
        rules = self._rules if self._rules is not None else loaded_rules.ruleset
        # the user's own file, read here whatever rules the caller passed: a project server needs it
        user_rules = next((s.ruleset for s in loaded_rules.sources if s.scope == "user"), RuleSet())
        config = load_config(self.home, self.launch, self._env)
        from maia.core.trust import folder_trusted

        trusted = folder_trusted(self.launch, self.home)
        selections, rule_warnings = select_servers(config.servers, rules, user_rules, trusted=trusted)
        return Plan(config, selections, [*config.warnings, *rule_warnings], rules, user_rules)

    async def start(self) -> SourceReport:
        """Select by the rules, then connect the enabled servers in parallel; never raises for a server."""
        if self._servers:
            await self.aclose()
        plan = self.plan()
        log_dir = self.home / "logs" / "mcp"
        self._servers = {s.name: _Server(s, plan.rules, log_dir, self._changed) for s in plan.selections}
        for server in self._servers.values():
            server.sandbox = self.sandbox
        enabled = [s for s in self._servers.values() if s.selection.enabled]
        if enabled:
            quiet_sdk_logging(self.home / "logs" / "mcp.log")
            await asyncio.gather(*(s.connect() for s in enabled))
        return self._report(enabled, plan.warnings)

    def _report(self, servers: Sequence[_Server], warnings: Sequence[str] = ()) -> SourceReport:
        infos: list[str] = []
        out = list(warnings)
        for server in servers:
            out.extend(server.warnings)
            server.warnings.clear()
            if server.state == "ok":
                infos.append(
                    _("MCP server {name}: OK, {count} tools ({seconds:.1f} s)").format(
                        name=server.name,
                        count=len(server.tools),
                        seconds=(server.connect_seconds or 0.0) + (server.list_seconds or 0.0),
                    )
                )
            elif server.state == "fail":
                out.append(_("MCP server {name}: FAIL: {cause}").format(name=server.name, cause=server.cause))
        return SourceReport(tuple(infos), tuple(out))

    async def aclose(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Close every connection in parallel, returning within ``timeout`` seconds (§22: 3 s at most)."""
        closing = [asyncio.ensure_future(s.close(timeout)) for s in self._servers.values()]
        if not closing:
            return
        done, pending = await asyncio.wait(closing, timeout=timeout + 0.1)
        for task in pending:
            task.cancel()
        for task in done:
            if not task.cancelled():
                task.exception()  # retrieved: a failing close is not worth a log line on the terminal

    async def reconnect(self, name: str | None = None) -> SourceReport:
        """``/mcp reconnect [NAME]``: that server afresh, or every enabled server that is not OK."""
        if name is not None:
            server = self._servers.get(name)
            if server is None:
                return SourceReport(warnings=(_("No MCP server is declared as {name}.").format(name=name),))
            if not server.selection.enabled:
                return SourceReport(
                    warnings=(
                        _("MCP server {name} is not enabled: {reason}").format(
                            name=name, reason=server.selection.reason
                        ),
                    )
                )
            targets = [server]
        else:
            targets = [
                s
                for s in self._servers.values()
                if s.selection.enabled and (s.state != "ok" or s.conn is None or not s.conn.alive)
            ]
        await asyncio.gather(*(s.connect() for s in targets))
        return self._report(targets)

    # --- what the application reads -----------------------------------------------------------

    def tools(self) -> list[Tool]:
        """Tools of the servers that are up, or that were up and went down (a call reconnects)."""
        seen: set[str] = set()
        tools: list[Tool] = []
        for server in self._servers.values():
            if not server.selection.enabled:
                continue
            for remote in server.tools.values():
                if remote.public_name in seen:
                    continue
                seen.add(remote.public_name)
                tools.append(McpTool(remote, self._call_tool))
        return tools

    def servers(self) -> list[ServerStatus]:
        """Every declared server (enabled or not) and its health, in declaration order."""
        return [s.status() for s in self._servers.values()]

    def failing(self) -> list[str]:
        """Enabled servers that are down: the status line shows a mark when this is not empty."""
        return [s.name for s in self._servers.values() if s.state == "fail"]

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` whenever a server's state changes; returns a function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def _changed(self) -> None:
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):  # a display callback never breaks a connection
                listener()

    async def _call_tool(self, remote: RemoteTool, arguments: dict[str, Any]) -> str:
        from maia.tools.base import ToolError

        server = self._servers.get(remote.server)
        if server is None:
            raise ToolError(_("MCP server {server} is closed.").format(server=remote.server))
        try:
            return await server.call_tool(remote, arguments)
        except ToolFailure as failure:
            raise ToolError(str(failure)) from None

    # --- prompts and resources ----------------------------------------------------------------

    def prompts(self) -> list[PromptInfo]:
        """Prompts of the connected servers: slash commands ``/mcp__<server>__<prompt>``."""
        return [p for s in self._servers.values() if s.selection.enabled for p in s.prompts]

    def find_prompt(self, command: str) -> PromptInfo | None:
        """The prompt behind ``mcp__<server>__<prompt>`` (with or without the leading /)."""
        command = command.lstrip("/")
        return next((p for p in self.prompts() if p.command == command), None)

    async def get_prompt(self, server: str, name: str, arguments: Mapping[str, str]) -> list[tuple[str, str]]:
        """The prompt's messages as (role, text); :class:`ToolFailure` says why not."""
        handle = self._enabled(server)

        async def call(client: Client) -> Any:
            return model_dump(await client.get_prompt(name, dict(arguments)))

        result = await handle.request(call, resend=True, what=_("the prompt {name}").format(name=name))
        return prompt_messages(result)

    def resources(self) -> list[ResourceInfo]:
        """Resources of the connected servers (as listed when they connected)."""
        return [r for s in self._servers.values() if s.selection.enabled for r in s.resources]

    async def list_resources(self, server: str) -> list[ResourceInfo]:
        """List a server's resources again."""
        handle = self._enabled(server)
        listed = await handle.request(_list_resources, resend=True, what=_("listing resources"))
        handle.resources = [_resource_info(server, r) for r in listed if isinstance(r, Mapping) and r.get("uri")]
        return list(handle.resources)

    async def read_resource(self, server: str, uri: str) -> str:
        """A resource's text (binary parts described), cut at 100,000 characters."""
        handle = self._enabled(server)

        async def call(client: Client) -> Any:
            return model_dump(await client.read_resource(uri))

        result = await handle.request(call, resend=True, what=_("reading {uri}").format(uri=uri))
        return resource_text(result)

    def resource_refs(self, text: str) -> list[tuple[str, str]]:
        """The ``@server:uri`` references in a prompt whose server is enabled, as (server, uri)."""
        found: list[tuple[str, str]] = []
        for match in _REF.finditer(text):
            server, uri = match.group(1), match.group(2)
            handle = self._servers.get(server)
            if handle is None or not handle.selection.enabled:
                continue
            known = {r.uri for r in handle.resources}
            stripped = uri.rstrip(".,;:!?)")
            if uri not in known and stripped in known:
                uri = stripped
            found.append((server, uri))
        return found

    def _enabled(self, server: str) -> _Server:
        handle = self._servers.get(server)
        if handle is None:
            raise ToolFailure(_("No MCP server is declared as {name}.").format(name=server))
        if not handle.selection.enabled:
            raise ToolFailure(
                _("MCP server {name} is not enabled: {reason}").format(name=server, reason=handle.selection.reason)
            )
        return handle


@dataclass(frozen=True, slots=True)
class ProbeOutcome:
    """What ``maia mcp test`` shows: the health, the tools offered, those hidden and the warnings."""

    status: ServerStatus
    tools: tuple[str, ...]  # public names (mcp__server__tool)
    warnings: tuple[str, ...]
    seconds: float = 0.0  # from the start of the attempt to its success or failure


async def probe_server(config: ServerConfig, home: Path, rules: RuleSet | None = None) -> ProbeOutcome:
    """Connect one server, list its tools and close, whatever the rules say (``maia mcp test``)."""
    quiet_sdk_logging(home / "logs" / "mcp.log")
    selection = Selection(config, True, _("tested"))
    server = _Server(selection, rules or RuleSet(), home / "logs" / "mcp", lambda: None)
    started = time.monotonic()
    try:
        await server.connect()
        elapsed = time.monotonic() - started
        return ProbeOutcome(server.status(), tuple(server.tools), tuple(server.warnings), elapsed)
    finally:
        await server.close(5.0)
