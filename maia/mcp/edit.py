"""``maia mcp add`` / ``remove``: edit a declarations file in place, safely.

The file is read, changed and written under a lock (``filelock``, kept in MAIA's home so no lock
file appears in a project), written atomically (a crash leaves the old or the new file), and
every other key keeps its value and its place. A file that is not valid JSON is never rewritten.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from maia.core.errors import ConfigError, UsageError
from maia.core.storage import write_atomic
from maia.i18n import _
from maia.mcp.config import WRAPPERS, key_problem

_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def lock_path(home: Path, target: Path) -> Path:
    """The lock guarding ``target``'s read-modify-write (one per file, in ``~/.maia/locks``)."""
    digest = hashlib.sha256(str(target.resolve()).encode()).hexdigest()[:16]
    return home / "locks" / f"mcp-{digest}.lock"


def remote_entry(
    url: str, transport: str = "http", headers: Sequence[str] = (), timeout: float | None = None
) -> dict[str, Any]:
    """A remote declaration from ``maia mcp add NAME URL`` options; UsageError says what is wrong."""
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(_("The URL must start with http:// or https:// and name a host: {url}").format(url=url))
    if transport not in ("http", "sse"):
        raise UsageError(_('--type must be "http" or "sse" for a URL, not {value!r}').format(value=transport))
    entry: dict[str, Any] = {"type": transport, "url": url}
    parsed: dict[str, str] = {}
    for header in headers:
        name, sep, value = header.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not _HEADER_NAME.match(name) or "\n" in value or "\r" in value:
            raise UsageError(
                _('--header must be "Name: value", e.g. "Authorization: Bearer ${{TOKEN}}", not {value!r}').format(
                    value=header
                )
            )
        parsed[name] = value
    if parsed:
        entry["headers"] = parsed
    if timeout is not None:
        entry["timeout"] = _timeout(timeout)
    return entry


def local_entry(
    command: Sequence[str], env: Sequence[str] = (), cwd: str | None = None, timeout: float | None = None
) -> dict[str, Any]:
    """A local (stdio) declaration from ``maia mcp add NAME -- COMMAND ARGS…``."""
    if not command or not command[0].strip():
        raise UsageError(_("Give the command to run after --, e.g. maia mcp add files -- npx -y some-server"))
    entry: dict[str, Any] = {"type": "stdio", "command": command[0], "args": list(command[1:])}
    parsed: dict[str, str] = {}
    for item in env:
        name, sep, value = item.partition("=")
        if not sep or not _ENV_NAME.match(name):
            raise UsageError(_("--env must be NAME=value, e.g. API_KEY=${{API_KEY}}, not {value!r}").format(value=item))
        parsed[name] = value
    if parsed:
        entry["env"] = parsed
    if cwd:
        entry["cwd"] = cwd
    if timeout is not None:
        entry["timeout"] = _timeout(timeout)
    return entry


def _timeout(value: float) -> float | int:
    if not 0 < value <= 3600:
        raise UsageError(_("--timeout must be between 0 and 3600 seconds"))
    return int(value) if float(value).is_integer() else value


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(_("Cannot read {path}: {error}").format(path=path, error=error)) from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        message = _("{path}: invalid JSON at line {line}, column {col}: {msg}. Fix the file first; it was not changed.")
        raise ConfigError(message.format(path=path, line=error.lineno, col=error.colno, msg=error.msg)) from None
    if not isinstance(data, dict):
        raise ConfigError(
            _('{path} must hold a JSON object {{"mcpServers": {{...}}}}; it was not changed.').format(path=path)
        )
    return data


def _servers(data: dict[str, Any], path: Path, *, create: bool) -> dict[str, Any] | None:
    wrapper = next((w for w in WRAPPERS if w in data), None)
    if wrapper is None:
        if not create:
            return None
        data["mcpServers"] = {}
        wrapper = "mcpServers"
    servers = data[wrapper]
    if not isinstance(servers, dict):
        raise ConfigError(
            _('{path}: "{wrapper}" must be an object; fix the file first, it was not changed.').format(
                path=path, wrapper=wrapper
            )
        )
    return servers


def _write(path: Path, data: Mapping[str, Any]) -> None:
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def add_server(home: Path, path: Path, name: str, entry: Mapping[str, Any]) -> None:
    """Add ``name`` to the file (created if needed); a name already there is an error."""
    from filelock import FileLock

    problem = key_problem(name)
    if problem is not None:
        raise UsageError(_("Invalid server name {name!r}: {problem}.").format(name=name, problem=problem))
    lock = lock_path(home, path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock), timeout=30):
        data = _read(path)
        servers = _servers(data, path, create=True)
        assert servers is not None
        if name in servers:
            message = _(
                "A server named {name} is already declared in {path}: remove it first (maia mcp remove {name})."
            )
            raise UsageError(message.format(name=name, path=path))
        servers[name] = dict(entry)
        _write(path, data)


def remove_server(home: Path, path: Path, name: str) -> bool:
    """Remove ``name`` from the file; False when it was not there (the file is then left untouched)."""
    from filelock import FileLock

    lock = lock_path(home, path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock), timeout=30):
        data = _read(path)
        servers = _servers(data, path, create=False)
        if servers is None or name not in servers:
            return False
        del servers[name]
        _write(path, data)
        return True
