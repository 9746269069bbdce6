"""Folder trust: a folder's own files grant power only once the user has trusted that folder.

A cloned repository can carry files that would widen what MAIA does without asking: allow rules
and ``inertVariables`` in ``.maia/settings.json`` and ``.maia/settings.local.json``, ``.mcp.json``
servers, custom tools (``TOOL.json`` runs a program), a project ``AGENT.md``'s ``permissions`` and
``permissionMode``. Each is a :class:`Grant`. They are honoured only when :func:`folder_trusted`
says so; deny and ask rules are always honoured.

Trust is kept in ``~/.maia/trust.json`` (atomic writes, under a lock), keyed by the folder's real
path, with a digest of what the folder granted when it was trusted: when the grants change (a
``git pull`` adding ``allow: Bash``) the folder is no longer trusted until the user looks again
(:func:`check` says what changed). Rules MAIA writes itself after the user's "always" answer are
recorded as the user's own (:func:`note_written`): they are no grant of the folder, so they keep
it trusted. A folder that grants nothing needs no trust, except the user's home folder and ``/``,
which are never trusted implicitly.

The API for a later mechanism that runs code from the project (hooks, custom slash commands)::

    from maia import trust
    if trust.folder_trusted(launch, home):   # does a project-granting mechanism apply here?
        ...

and a collector added to :data:`COLLECTORS` makes its files part of what is shown and digested.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import importlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from maia.core.errors import MaiaError
from maia.i18n import _

TRUST_FILE = "trust.json"
VERSION = 1


def _mechanism(name: str) -> ModuleType:
    """A granting mechanism's module, loaded by name. The trust store sits below every layer that asks
    whether a folder is trusted (rules, MCP servers, tools, agents, hooks, commands) and reads the files
    of all of them: its collectors load those modules when they run, never at import."""
    return importlib.import_module(name)


@dataclass(frozen=True, slots=True)
class Grant:
    """One thing a folder's files grant: its kind, the file, what it says (shown), what is digested."""

    kind: str  # "allow", "inert", "mcp", "tool", "agent", "mode"
    file: Path
    text: str
    content: str = ""  # the raw content behind ``text`` (a server's env, a tool's definition)

    def line(self, folder: Path | None = None) -> str:
        """``allow Bash  (.maia/settings.json)``: one line for the user."""
        where = str(self.file)
        if folder is not None:
            with contextlib.suppress(ValueError):
                where = self.file.relative_to(folder).as_posix()
        label = {
            "allow": _("allows"),
            "inert": _("inert variable"),
            "mcp": _("MCP server"),
            "tool": _("custom tool"),
            "agent": _("agent allows"),
            "mode": _("workflow mode"),
            "hook": _("hook"),
            "command": _("slash command"),
        }.get(self.kind, self.kind)
        return f"{label} {self.text}  ({where})"

    @property
    def key(self) -> str:
        """What the digest covers."""
        return "\x00".join((self.kind, str(self.file), self.text, self.content))


@dataclass(slots=True)
class TrustState:
    """What a folder grants and whether those grants apply."""

    folder: Path  # the real path
    grants: list[Grant]
    trusted: bool
    recorded: bool = False  # the folder was trusted once (its grants changed since when not trusted now)
    added: list[str] = field(default_factory=list)  # grant lines new since it was trusted
    removed: list[str] = field(default_factory=list)
    written: frozenset[str] = frozenset()  # allow rules MAIA wrote after the user's "always"

    @property
    def needs_question(self) -> bool:
        """Untrusted, and something would be ignored: the chat asks, ``ask`` and ``run`` say so."""
        return not self.trusted and bool(self.grants)

    def lines(self) -> list[str]:
        """Every grant, one line each."""
        return [g.line(self.folder) for g in self.grants]

    def summary(self) -> str:
        """``allows Bash, Write(**); 1 MCP server; 2 tools``: the start-up line's words."""
        return describe(self.grants)


def describe(grants: Sequence[Grant]) -> str:
    """What grants add up to, in a few words ("" for none)."""
    from maia.i18n import ngettext

    allows = list(dict.fromkeys(g.text for g in grants if g.kind in ("allow", "agent")))
    parts = [_("allows {rules}").format(rules=", ".join(allows))] if allows else []
    inert, servers, tools = (sum(1 for g in grants if g.kind == k) for k in ("inert", "mcp", "tool"))
    if inert:
        parts.append(ngettext("{count} inert variable", "{count} inert variables", inert).format(count=inert))
    if servers:
        parts.append(ngettext("{count} MCP server", "{count} MCP servers", servers).format(count=servers))
    if tools:
        parts.append(ngettext("{count} tool", "{count} tools", tools).format(count=tools))
    hooks, commands = (sum(1 for g in grants if g.kind == k) for k in ("hook", "command"))
    if hooks:
        parts.append(ngettext("{count} hook", "{count} hooks", hooks).format(count=hooks))
    if commands:
        parts.append(ngettext("{count} slash command", "{count} slash commands", commands).format(count=commands))
    if any(g.kind == "mode" for g in grants):
        parts.append("permissionMode: allow")
    return "; ".join(parts)


# --- what a folder grants ---------------------------------------------------------------------------


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _same_file(a: Path, b: Path) -> bool:
    with contextlib.suppress(OSError):
        return a.exists() and b.exists() and os.path.samefile(a, b)
    return False


def _settings_grants(launch: Path, home: Path) -> list[Grant]:
    from maia.core.paths import settings_path

    INERT_KEY = _mechanism("maia.permissions.rules").INERT_KEY

    grants: list[Grant] = []
    for path in (launch / ".maia" / "settings.json", launch / ".maia" / "settings.local.json"):
        if _same_file(path, settings_path(home)):
            continue  # launched from the folder holding MAIA's home: the user's own settings
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError):
            continue  # absent, or unreadable: its allow rules are not read either
        permissions = data.get("permissions") if isinstance(data, dict) else None
        if not isinstance(permissions, dict):
            continue
        allow = permissions.get("allow")
        for entry in allow if isinstance(allow, list) else ():
            grants.append(Grant("allow", path, entry if isinstance(entry, str) else repr(entry)))
        inert = permissions.get(INERT_KEY)
        for entry in inert if isinstance(inert, list) else ():
            grants.append(Grant("inert", path, entry if isinstance(entry, str) else repr(entry)))
    return grants


def _mcp_grants(launch: Path, home: Path) -> list[Grant]:
    mcp = _mechanism("maia.mcp.config")
    project_config_path, read_servers_file, user_config_path = (
        mcp.project_config_path,
        mcp.read_servers_file,
        mcp.user_config_path,
    )

    path = project_config_path(launch)
    if _same_file(path, user_config_path(home)):
        return []
    servers, _warning = read_servers_file(path)
    grants = []
    for name, raw in (servers or {}).items():
        if isinstance(raw, dict):
            command = raw.get("command")
            raw_args = raw.get("args")
            args: list[Any] = raw_args if isinstance(raw_args, list) else []
            target = " ".join(str(w) for w in [command, *args]) if command else str(raw.get("url", "?"))
        else:
            target = "?"
        grants.append(Grant("mcp", path, f"{name}: {target}", json.dumps(raw, sort_keys=True, default=str)))
    return grants


def _tool_grants(launch: Path, home: Path) -> list[Grant]:
    base = launch / ".maia" / "tools"
    if not base.is_dir() or _same_file(base, home / "tools"):
        return []
    grants = []
    with contextlib.suppress(OSError):
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            path = next((folder / n for n in ("TOOL.json", "tool.json") if (folder / n).is_file()), None)
            if path is None:
                continue
            try:
                text = path.read_text(encoding="utf-8-sig")
                data = json.loads(text)
                run = data["command"]["run"]
                shown = f"{data.get('name', folder.name)}: {run}"
            except (OSError, ValueError, KeyError, TypeError):
                text, shown = "", f"{folder.name}: ?"
            grants.append(Grant("tool", path, shown, text))
    return grants


def _agent_grants(launch: Path, home: Path) -> list[Grant]:
    """Agents of ``.maia/agents``, and workflow folders right in the folder (``maia run FOLDER/boss``)."""
    definitions = _mechanism("maia.subagents.definitions")
    AGENT_FILES, DefinitionError, parse_agent = (
        definitions.AGENT_FILES,
        definitions.DefinitionError,
        definitions.parse_agent,
    )

    grants: list[Grant] = []
    for base in (launch / ".maia" / "agents", launch):
        if not base.is_dir() or _same_file(base, home / "agents") or _same_file(base, home):
            continue
        with contextlib.suppress(OSError):
            for folder in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")):
                path = next((folder / n for n in AGENT_FILES if (folder / n).is_file()), None)
                if path is None:
                    continue
                try:
                    parsed = parse_agent(
                        path, "project", extra_keys=("permissionmode", "timeout"), keep_agent_tool=True
                    )
                except DefinitionError:
                    continue
                grants.extend(Grant("agent", path, rule) for rule in parsed.definition.permissions.get("allow", ()))
                mode = str(parsed.extra.get("permissionmode") or "").strip().lower()
                if mode == "allow":
                    grants.append(Grant("mode", path, "permissionMode: allow"))
    return grants


# Each returns what one mechanism's files in the launch folder grant. A later mechanism that runs
# code from the project adds its collector here: its files then count in the question and the digest.
def _hook_grants(launch: Path, home: Path) -> list[Grant]:
    project_hooks = _mechanism("maia.app.hooks").project_hooks

    # matcher and timeout are in the line: a broadened matcher is a new grant, asked about again
    return [
        Grant("hook", hook.file or launch, f"{hook.event} [{hook.matcher or '*'}] {hook.command} ({hook.timeout:g} s)")
        for hook in project_hooks(launch, home)
    ]


def _command_grants(launch: Path, home: Path) -> list[Grant]:
    project_command_files = _mechanism("maia.inputs.commands").project_command_files

    grants: list[Grant] = []
    for name, path in project_command_files(launch):
        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        # the line names the content's digest: a changed prompt or ``!`` line is a new grant, asked again
        digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        bangs = [line[1:].strip() for line in content.splitlines() if line.startswith("!") and line[1:].strip()]
        runs = (" — runs: " + "; ".join(bangs)) if bangs else ""
        grants.append(Grant("command", path, f"/{name} ({digest}){runs}", content))
    return grants


COLLECTORS: list[Callable[[Path, Path], list[Grant]]] = [
    _settings_grants,
    _mcp_grants,
    _tool_grants,
    _agent_grants,
    _hook_grants,
    _command_grants,
]


def project_grants(launch: Path, home: Path, written: frozenset[str] = frozenset()) -> list[Grant]:
    """What the launch folder's own files grant (rules MAIA wrote for the user, ``written``, excluded)."""
    grants: list[Grant] = []
    for collect in COLLECTORS:
        grants.extend(collect(launch, home))
    return [g for g in grants if not (g.kind == "allow" and g.file.name == "settings.local.json" and g.text in written)]


def _key_digest(grant: Grant) -> str:
    return hashlib.sha256(grant.key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def digest(grants: Sequence[Grant]) -> str:
    """The digest of what grants say (order-independent)."""
    hasher = hashlib.sha256()
    for key in sorted(g.key for g in grants):
        hasher.update(key.encode("utf-8", "surrogatepass") + b"\x01")
    return hasher.hexdigest()


# --- the store ----------------------------------------------------------------------------------------


def store_path(home: Path) -> Path:
    """``~/.maia/trust.json``."""
    return home / TRUST_FILE


def _lock(home: Path) -> Any:
    from filelock import FileLock

    path = home / "locks" / "trust.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path), timeout=30)


def _read(home: Path) -> dict[str, Any]:
    try:
        data = json.loads(store_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # absent or broken: nothing is trusted (a broken store never trusts by accident)
    folders = data.get("folders") if isinstance(data, dict) else None
    return {k: v for k, v in folders.items() if isinstance(v, dict)} if isinstance(folders, dict) else {}


def _write(home: Path, folders: dict[str, Any]) -> None:
    from maia.core.storage import write_atomic

    home.mkdir(parents=True, exist_ok=True)
    payload = {"version": VERSION, "folders": dict(sorted(folders.items()))}
    write_atomic(store_path(home), json.dumps(payload, indent=2, ensure_ascii=False) + "\n", mode=0o600)


def never_implicit(folder: Path) -> bool:
    """The user's home folder and ``/``: never trusted without the user saying so."""
    real = _real(folder)
    return real == Path("/") or real == _real(Path.home())


def check(launch: Path, home: Path) -> TrustState:
    """What the folder grants, whether it is trusted, and what changed since it was."""
    folder = _real(launch)
    record = _read(home).get(str(folder), {})
    written = frozenset(str(r) for r in record.get("written", []) if isinstance(r, str))
    grants = project_grants(launch, home, written)
    recorded = isinstance(record.get("digest"), str)
    if recorded and record["digest"] == digest(grants):
        return TrustState(folder, grants, True, True, written=written)
    if not grants and not recorded:
        return TrustState(folder, grants, not never_implicit(folder), written=written)
    before = [str(line) for line in record.get("grants", [])] if recorded else []
    known = {str(k) for k in record.get("keys", [])} if recorded else set()
    now = [g.line(folder) for g in grants]
    # by content, not by the line shown: a server's new env or a tool's new parameters are a change too
    added = [g.line(folder) for g in grants if _key_digest(g) not in known]
    removed = [line for line in before if line not in now]
    # a trusted folder whose grants only shrank stays trusted: nothing more is granted than the user saw
    trusted = (recorded and not added) or (not grants and not never_implicit(folder))
    return TrustState(folder, grants, trusted, recorded, added, removed, written)


def folder_trusted(launch: Path, home: Path) -> bool:
    """Whether the launch folder's granting files apply: THE one call for any project-granting mechanism."""
    return check(launch, home).trusted


class TrustChanged(MaiaError):
    """What the folder grants changed between the question and the answer: nothing was trusted."""


def trust_folder(launch: Path, home: Path, shown: Sequence[Grant] | None = None) -> TrustState:
    """Trust the folder with what it grants now (recorded with its digest). ``shown``: the grants the
    user saw when answering; when the files changed since, nothing is trusted (TrustChanged)."""
    folder = _real(launch)
    with _lock(home):
        folders = _read(home)
        record = dict(folders.get(str(folder), {}))
        written = frozenset(str(r) for r in record.get("written", []) if isinstance(r, str))
        grants = project_grants(launch, home, written)
        if shown is not None and digest(grants) != digest(shown):
            raise TrustChanged(
                _("The files of {folder} changed while you answered: nothing was trusted. Look again.").format(
                    folder=folder
                )
            )
        record.update(
            {
                "digest": digest(grants),
                "grants": [g.line(folder) for g in grants],
                "keys": [_key_digest(g) for g in grants],
                "trusted": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            }
        )
        folders[str(folder)] = record
        _write(home, folders)
    return TrustState(folder, grants, True, True, written=written)


def revoke(path: Path, home: Path) -> bool:
    """Forget the folder's trust (and the rules MAIA wrote there count as its grants again); False when
    it was not recorded."""
    keys = {str(_real(path)), os.path.abspath(path)}
    with _lock(home):
        folders = _read(home)
        found = [k for k in keys if k in folders]
        for key in found:
            del folders[key]
        if found:
            _write(home, folders)
    return bool(found)


def trusted_folders(home: Path) -> list[dict[str, Any]]:
    """The folders trusted, with when and what they granted then."""
    return [
        {"path": path, "trusted": record.get("trusted"), "grants": list(record.get("grants", []))}
        for path, record in sorted(_read(home).items())
        if isinstance(record.get("digest"), str)
    ]


def note_written(launch: Path, home: Path, rules: Sequence[str]) -> None:
    """Rules MAIA wrote to ``./.maia/settings.local.json`` after the user's "always": the user's own, not
    a grant of the folder (so a trusted folder stays trusted, and an untrusted one keeps them)."""
    folder = _real(launch)
    with _lock(home):
        folders = _read(home)
        record = dict(folders.get(str(folder), {}))
        written = [str(r) for r in record.get("written", []) if isinstance(r, str)]
        written.extend(r for r in rules if r not in written)
        record["written"] = written
        folders[str(folder)] = record
        _write(home, folders)


def ignored_notice(state: TrustState, command: str = "maia trust") -> str:
    """The one line ``maia ask`` and ``maia run`` print in an untrusted folder (``command``: how to trust it)."""
    return _(
        "{folder} is not trusted: what its files grant is ignored ({grants}); deny and ask rules apply. "
        "Review and trust it with `{command}`."
    ).format(folder=state.folder, grants=state.summary(), command=command)
