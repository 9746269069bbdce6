"""MCP server declarations (§22): ``~/.maia/mcp.json`` and the project's ``./.mcp.json``.

Both files hold ``{"mcpServers": {"<key>": {...}}}`` (the shape other agents use; VS Code's
``{"servers": {...}}`` is read too). A bad entry gives a warning naming the file, the key and the
fix, and the other entries load. The structure (types, enums, unknown fields) is checked with the
shipped schema ``maia/data/schemas/mcp.schema.json`` and settings.json's "field and fix" wording; what a
schema cannot say (a URL's form after ``${VAR}``, which fields a transport uses) is checked here.
Reading a file never starts or contacts anything: which servers run is decided afterwards by the
permission rules (``maia.mcp.rules``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit, urlunsplit

from maia.core.schemas import SchemaProblem, schema_errors
from maia.i18n import _

Transport: TypeAlias = Literal["http", "sse", "stdio"]
Origin: TypeAlias = Literal["user", "project"]

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 3600.0
MAX_KEY_LENGTH = 40  # "mcp__<key>__" must leave room for the tool's name within 64 characters
WRAPPERS = ("mcpServers", "servers")
_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_TYPES: dict[str, Transport] = {
    "http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "sse": "sse",
    "stdio": "stdio",
}
_FATAL_FIELDS = frozenset({"type", "url", "command", "args", "cwd"})  # the server cannot run without them
_ITEM_FIELDS = frozenset({"headers", "env"})  # a bad item is left out, the others kept


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One declared server, validated, with ``${VAR}`` already replaced."""

    name: str
    transport: Transport
    origin: Origin
    file: Path
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    timeout: float = DEFAULT_TIMEOUT
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    enabled: bool = True
    description: str = ""
    sandbox: bool = True  # a local server runs in MAIA's sandbox; only the user's own file may say false

    @property
    def target(self) -> str:
        """Where the server is, for display: the URL without credentials or query, or the command line."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return display_url(self.url or "")


@dataclass(slots=True)
class LoadedConfig:
    """Every valid declaration (user file first) and one warning per problem."""

    servers: list[ServerConfig] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> ServerConfig | None:
        """The server declared under ``name``, if any."""
        return next((s for s in self.servers if s.name == name), None)


def user_config_path(home: Path) -> Path:
    """The user's declarations: ``~/.maia/mcp.json``."""
    return home / "mcp.json"


def project_config_path(launch: Path) -> Path:
    """The project's declarations: ``./.mcp.json`` in the launch folder (never a parent folder)."""
    return launch / ".mcp.json"


def display_url(url: str) -> str:
    """A URL safe to print: no user:password, no query string (tokens often travel there)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def key_problem(name: str) -> str | None:
    """Why ``name`` cannot be a server key (None when it can)."""
    if not name:
        return _("the name is empty")
    if not _KEY.match(name):
        return _("a server name may only hold letters, digits, _ and -")
    if "__" in name:
        return _("a server name cannot contain __ (it separates the parts of mcp__server__tool)")
    if name.endswith("_"):
        return _("a server name cannot end with _ (mcp__server__tool would be ambiguous)")
    if len(name) > MAX_KEY_LENGTH:
        return _("a server name has at most {max} characters").format(max=MAX_KEY_LENGTH)
    return None


def expand(value: str, env: Mapping[str, str], missing: set[str]) -> str:
    """Replace ``${VAR}`` (and ``${VAR:-default}``) from ``env``; unknown names are added to ``missing``."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        missing.add(name)
        return ""

    return _VAR.sub(replace, value)


def read_servers_file(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The raw server map of a file (None when absent), or a warning saying why it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as error:
        return None, _("{path}: cannot be read ({error}); its MCP servers are ignored.").format(path=path, error=error)
    if not text.strip():
        return None, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return None, _("{path}: invalid JSON at line {line}, column {col}: {msg}; its MCP servers are ignored.").format(
            path=path, line=error.lineno, col=error.colno, msg=error.msg
        )
    # The file's shape, with the schema (each server's entry is checked on its own, by parse_entry).
    wrapper = next((w for w in WRAPPERS if w in data), None) if isinstance(data, dict) else None
    shape = [p for p in schema_errors(data, "mcp", _file_fixes(), path) if p.path in ((), (wrapper,))]
    for problem in shape:
        if problem.keyword == "type":
            return None, _("{problem}; its MCP servers are ignored.").format(problem=problem.message.removesuffix("."))
    assert isinstance(data, dict)  # the schema's top-level "type": "object"
    if wrapper is None:
        if not data:
            return {}, None
        return None, _(
            '{path}: no "mcpServers" object: write {{"mcpServers": {{"name": {{"url": "..."}}}}}}; '
            "its MCP servers are ignored."
        ).format(path=path)
    servers: dict[str, Any] = data[wrapper]  # an object: the schema said so
    return servers, None


def _file_fixes() -> dict[str, str]:
    """The fix for a file whose shape is wrong (keys: "" the file, then the two spellings of the map)."""
    servers = _("an object whose keys are server names")
    return {"": '{"mcpServers": {"name": {"url": "..."}}}', "mcpServers": servers, "servers": servers}


def parse_entry(
    name: str, raw: Any, *, origin: Origin, file: Path, launch: Path, env: Mapping[str, str]
) -> tuple[ServerConfig | None, list[str]]:
    """Validate one declaration: the server (or None) and the warnings, each naming file, key and fix."""
    where = f"{file}: mcpServers.{name}"
    warnings: list[str] = []

    def bad(message: str) -> tuple[None, list[str]]:
        warnings.append(_("{where}: {message}; server ignored.").format(where=where, message=message))
        return None, warnings

    problem = key_problem(name)
    if problem is not None:
        return bad(_("{problem}: rename the key").format(problem=problem))
    # The structure, with the schema; a problem with a field the server needs ignores it, another ignores
    # the field (or the item of headers/env) and keeps the rest.
    entry: Any = raw
    if isinstance(raw, dict) and isinstance(raw.get("type"), str):
        entry = {**raw, "type": raw["type"].strip().lower()}  # "HTTP" has always been read as "http"
    problems = schema_errors(entry, "mcp", _fixes(), file, under=("mcpServers", name))
    fatal = [p for p in problems if p.field is None or p.field in _FATAL_FIELDS]
    if fatal:
        warnings.extend(_("{problem}; server ignored.").format(problem=p.message.removesuffix(".")) for p in fatal)
        return None, warnings
    raw = dict(entry)
    for found in problems:
        warnings.append(_ignore(raw, found))
    missing: set[str] = set()

    inferred: Transport = "stdio" if "command" in raw and "url" not in raw else "http"
    transport = _TYPES[raw["type"]] if "type" in raw else inferred
    timeout = float(raw.get("timeout", DEFAULT_TIMEOUT))
    include = _patterns(raw, "includeTools")
    exclude = _patterns(raw, "excludeTools") or ()
    enabled = raw.get("enabled", True) and not raw.get("disabled", False)
    description = raw.get("description", "")

    common: dict[str, Any] = {
        "name": name,
        "transport": transport,
        "origin": origin,
        "file": file,
        "timeout": timeout,
        "include_tools": include,
        "exclude_tools": exclude,
        "enabled": enabled,
        "description": description,
    }
    if transport == "stdio":
        server, problem = _stdio(raw, where, launch, env, missing, warnings, common)
    else:
        server, problem = _remote(raw, where, env, missing, warnings, common)
    if problem is not None:
        return bad(problem)
    for var in sorted(missing):
        warnings.append(
            _(
                "{where}: the environment variable {var} is not set; an empty value is used (set it, or write "
                "${{{var}:-default}})."
            ).format(where=where, var=var)
        )
    return server, warnings


def _fixes() -> dict[str, str]:
    """The fix each field's problem shows (keys: fields of one server; "" the server itself)."""
    flag = _("true or false")
    tools = _('a list of tool names (* accepted), e.g. ["read_*"]')
    return {
        "": _('an object such as {"url": "https://…"} or {"command": "…"}'),
        "type": _('"http", "sse" or "stdio"'),
        "url": _('the server\'s address, e.g. "https://example.com/mcp"'),
        "headers": _('an object such as {"Authorization": "Bearer ${TOKEN}"}'),
        "timeout": _("a number of seconds above 0, at most {max}").format(max=int(MAX_TIMEOUT)),
        "includeTools": tools,
        "excludeTools": tools,
        "enabled": flag,
        "disabled": flag,
        "description": _("a string"),
        "command": _('the program to run, e.g. "npx"'),
        "args": _('a list of strings, e.g. ["-y", "some-server"]'),
        "env": _('an object of NAME: "value"'),
        "cwd": _("a folder path (relative paths start from the launch folder)"),
        "sandbox": flag,
    }


def _ignore(raw: dict[str, Any], problem: SchemaProblem) -> str:
    """Leave out what ``problem`` is about (an item of headers/env, else the field); the warning."""
    field = str(problem.field)
    if field in _ITEM_FIELDS and len(problem.path) > 1 and isinstance(raw.get(field), dict):
        raw[field] = {k: v for k, v in raw[field].items() if k != problem.path[1]}
    else:
        raw.pop(field, None)
    message = problem.message.removesuffix(".")
    if field == "timeout":
        return _("{problem}; the default {default} s is used.").format(problem=message, default=int(DEFAULT_TIMEOUT))
    return _("{problem}; ignored.").format(problem=message)


def _patterns(raw: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    if key not in raw:
        return None
    return tuple(v.strip() for v in raw[key] if v.strip())  # a list of strings: the schema said so


def _remote(
    raw: Mapping[str, Any],
    where: str,
    env: Mapping[str, str],
    missing: set[str],
    warnings: list[str],
    common: dict[str, Any],
) -> tuple[ServerConfig | None, str | None]:
    url = raw.get("url")
    if url is None or not url.strip():
        if "command" in raw:
            return None, _('"type" is "{type}" but the entry has a "command": write "type": "stdio"').format(
                type=common["transport"]
            )
        return None, _('"url" is required: the server\'s address, e.g. "https://example.com/mcp"')
    url = expand(url.strip(), env, missing)
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        return None, _('"url" must start with http:// or https:// and name a host, not {url!r}').format(
            url=display_url(url)
        )
    headers: dict[str, str] = {}
    for header, value in raw.get("headers", {}).items():  # values: strings or numbers (the schema)
        if not _HEADER_NAME.match(header):
            warnings.append(
                _('{where}: header "{header}" ignored: names are letters, digits and -, values are strings.').format(
                    where=where, header=header
                )
            )
            continue
        text = expand(str(value), env, missing)
        if "\n" in text or "\r" in text:
            warnings.append(
                _('{where}: header "{header}" ignored: its value holds a line break.').format(
                    where=where, header=header
                )
            )
            continue
        headers[header] = text
    for key in ("command", "args", "env", "cwd", "sandbox"):
        if key in raw:
            warnings.append(
                _('{where}: "{field}" is only used by local servers ("type": "stdio"); ignored.').format(
                    where=where, field=key
                )
            )
    return ServerConfig(url=url, headers=headers, **common), None


def _stdio(
    raw: Mapping[str, Any],
    where: str,
    launch: Path,
    env: Mapping[str, str],
    missing: set[str],
    warnings: list[str],
    common: dict[str, Any],
) -> tuple[ServerConfig | None, str | None]:
    command = raw.get("command")
    if command is None or not command.strip():
        return None, _('"command" is required for a local server: the program to run, e.g. "npx"')
    command = expand(command.strip(), env, missing)
    args = tuple(expand(str(a), env, missing) for a in raw.get("args", []))  # strings or numbers (the schema)
    server_env: dict[str, str] = {}
    for name, value in raw.get("env", {}).items():
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            warnings.append(
                _('{where}: env "{name}" ignored: names are letters, digits and _, values are strings.').format(
                    where=where, name=name
                )
            )
            continue
        server_env[name] = expand(str(value), env, missing)
    cwd = launch
    if "cwd" in raw:
        raw_cwd = raw["cwd"]
        if not raw_cwd.strip():
            return None, _('"cwd" must be a folder path (relative paths start from the launch folder)')
        folder = Path(os.path.expanduser(expand(raw_cwd.strip(), env, missing)))
        cwd = folder if folder.is_absolute() else launch / folder
    if "url" in raw or "headers" in raw:
        warnings.append(
            _(
                '{where}: "url" and "headers" are only used by remote servers ("type": "http" or "sse"); ignored.'
            ).format(where=where)
        )
    sandboxed = True
    if "sandbox" in raw:
        value = raw["sandbox"]
        if not value and common["origin"] == "project":
            warnings.append(
                _(
                    '{where}: "sandbox": false is ignored in a project\'s file: only your own mcp.json can run a '
                    "server outside the sandbox."
                ).format(where=where)
            )
        else:
            sandboxed = value
    return ServerConfig(command=command, args=args, env=server_env, cwd=cwd, sandbox=sandboxed, **common), None


def load_config(home: Path, launch: Path, env: Mapping[str, str] | None = None) -> LoadedConfig:
    """The user's then the project's declarations; a key declared in both keeps the user's."""
    env = os.environ if env is None else env
    loaded = LoadedConfig()
    taken: dict[str, Origin] = {}
    files: tuple[tuple[Origin, Path], ...] = (
        ("user", user_config_path(home)),
        ("project", project_config_path(launch)),
    )
    for origin, path in files:
        if origin == "project" and path.resolve() == user_config_path(home).resolve():
            continue
        servers, warning = read_servers_file(path)
        if warning:
            loaded.warnings.append(warning)
        for name, raw in (servers or {}).items():
            server, warnings = parse_entry(name, raw, origin=origin, file=path, launch=launch, env=env)
            loaded.warnings.extend(warnings)
            if server is None:
                continue
            if name in taken:
                loaded.warnings.append(
                    _("{path}: mcpServers.{name} is also declared in {user}; the user's declaration is used.").format(
                        path=path, name=name, user=user_config_path(home)
                    )
                )
                continue
            taken[name] = origin
            loaded.servers.append(server)
    return loaded
