"""Sessions on disk (§12): ``./.maia/.sessions/<name>.json``, atomic writes under a lock, names.

A crash at any moment leaves the previous file intact (temp file, fsync, rename), and two MAIA
processes in one folder never overwrite each other's session: each file carries the id of the
session that owns it, checked under a lock before every write.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from maia.contracts import Message, TextBlock, ToolResultBlock, ToolUseBlock, message_to_dict
from maia.errors import MaiaError, NotFoundError, UsageError
from maia.i18n import _
from maia.storage import write_atomic

FORMAT_VERSION = 1
MAX_NAME = 100
_FORBIDDEN = re.compile(r'[\\/:*?"<>|\x00-\x1f\x7f]')
_COMPACTED = re.compile(r"^(.*)__(\d+)$")
MAX_COMPACTIONS = 1000


class SessionError(MaiaError):
    """A session file that cannot be read or written."""


# --- names (§12.2) ---------------------------------------------------------------------------


def default_name(now: datetime | None = None) -> str:
    """``session_YYYY-MM-DD_HH_MM_SS`` in local time."""
    return (now or datetime.now()).strftime("session_%Y-%m-%d_%H_%M_%S")


def normalize_name(text: str) -> str:
    """Spaces and outer quotes removed."""
    name = text.strip()
    while len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"":
        name = name[1:-1].strip()
    return name


def validate_name(name: str) -> str:
    """The normalised name, or a UsageError saying what is wrong with it."""
    name = normalize_name(name)
    if not name:
        raise UsageError(_("A session name cannot be empty."))
    if len(name) > MAX_NAME:
        raise UsageError(
            _("A session name has at most {max} characters ({count} given).").format(max=MAX_NAME, count=len(name))
        )
    bad = _FORBIDDEN.search(name)
    if bad:
        shown = repr(bad.group()) if bad.group().isprintable() else f"U+{ord(bad.group()):04X}"
        raise UsageError(
            _('A session name cannot contain {char} (nor \\ / : * ? " < > | or control characters).').format(char=shown)
        )
    if name.startswith(".") or name.endswith("."):
        raise UsageError(_("A session name cannot start or end with a dot."))
    return name


def next_compacted_name(name: str) -> str:
    """``xxx`` → ``xxx__1`` → … → ``xxx__1000`` → ``xxx__1`` (§14.4)."""
    match = _COMPACTED.match(name)
    if match and 1 <= int(match.group(2)) <= MAX_COMPACTIONS and match.group(1):
        origin, number = match.group(1), int(match.group(2))
        suffix = f"__{number % MAX_COMPACTIONS + 1}"
    else:
        origin, suffix = name, "__1"
    return origin[: MAX_NAME - len(suffix)] + suffix


def is_compacted(name: str) -> bool:
    """Whether a name carries a compaction number (``xxx__n``, 1 ≤ n ≤ 1000)."""
    match = _COMPACTED.match(name)
    return bool(match and match.group(1) and 1 <= int(match.group(2)) <= MAX_COMPACTIONS)


# --- messages on disk ------------------------------------------------------------------------


def _block_from(data: Any) -> TextBlock | ToolUseBlock | ToolResultBlock:
    if not isinstance(data, dict):
        raise ValueError("a content block must be an object")
    kind = data.get("type")
    if kind == "text":
        return TextBlock(str(data.get("text", "")))
    if kind == "tool_use":
        inp = data.get("input")
        return ToolUseBlock(str(data.get("id", "")), str(data.get("name", "")), inp if isinstance(inp, dict) else {})
    if kind == "tool_result":
        return ToolResultBlock(
            str(data.get("toolUseId", data.get("tool_use_id", ""))),
            str(data.get("content", "")),
            bool(data.get("isError", data.get("is_error", False))),
        )
    raise ValueError(f"unknown content block type {kind!r}")


def message_from(data: Any) -> Message:
    """A message from its JSON form (strings accepted as a single text block)."""
    if not isinstance(data, dict) or data.get("role") not in ("user", "assistant"):
        raise ValueError("a message needs a role user or assistant")
    content = data.get("content", [])
    if isinstance(content, str):
        blocks: list[Any] = [TextBlock(content)]
    elif isinstance(content, list):
        blocks = [_block_from(b) for b in content]
    else:
        raise ValueError("a message's content must be a list")
    return Message(data["role"], blocks)


@dataclass(slots=True)
class SavedSession:
    """The content of a session file (§12.1, plus ``version`` and the owner ``id``)."""

    name: str
    model: str = ""
    cwd: str = ""
    messages: list[Message] = field(default_factory=list)
    pending_context: list[str] = field(default_factory=list)
    start_context: str | None = None
    created_at: str = ""
    updated_at: str = ""
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    agent: str | None = None
    parent_session: str | None = None

    @property
    def empty(self) -> bool:
        """Never saved: no message and no starting context."""
        return not self.messages and not self.start_context

    def to_json(self) -> dict[str, Any]:
        """The file's JSON object."""
        data: dict[str, Any] = {
            "version": FORMAT_VERSION,
            "id": self.id,
            "name": self.name,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "model": self.model,
            "cwd": self.cwd,
            "messages": [message_to_dict(m) for m in self.messages],
            "pendingContext": list(self.pending_context),
        }
        if self.start_context:
            data["startContext"] = self.start_context
        if self.agent:
            data["agent"] = self.agent
        if self.parent_session:
            data["parentSession"] = self.parent_session
        return data

    def digest(self) -> str:
        """What changes when the conversation changes (timestamps left out)."""
        data = self.to_json()
        data.pop("updatedAt")
        return json.dumps(data, sort_keys=True, ensure_ascii=False)


def parse_session(text: str, name: str) -> SavedSession:
    """A session from a file's text; the file name is the name; missing fields get defaults."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            _("invalid JSON at line {line}, column {col}").format(line=error.lineno, col=error.colno)
        ) from None
    if not isinstance(data, dict):
        raise ValueError(_("not a session (the file must hold a JSON object)"))
    version = data.get("version", FORMAT_VERSION)
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise ValueError(
            _("written by a newer MAIA (format {version}); update MAIA to read it").format(version=version)
        )
    messages = data.get("messages", [])
    if not isinstance(messages, list):
        raise ValueError(_('"messages" must be a list'))
    try:
        parsed = [message_from(m) for m in messages]
    except ValueError as error:
        raise ValueError(_("a message is malformed: {error}").format(error=error)) from None
    pending = data.get("pendingContext", [])
    start = data.get("startContext")
    return SavedSession(
        name=name,
        model=str(data.get("model") or ""),
        cwd=str(data.get("cwd") or ""),
        messages=parsed,
        pending_context=[str(p) for p in pending] if isinstance(pending, list) else [],
        start_context=str(start) if isinstance(start, str) and start else None,
        created_at=str(data.get("createdAt") or ""),
        updated_at=str(data.get("updatedAt") or ""),
        id=str(data.get("id") or uuid.uuid4().hex),
        agent=str(data["agent"]) if data.get("agent") else None,
        parent_session=str(data["parentSession"]) if data.get("parentSession") else None,
    )


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One line of a listing; ``error`` set for an unreadable file."""

    name: str
    path: Path
    size: int
    updated_at: str = ""
    messages: int = 0
    model: str = ""
    agent: str | None = None
    compacted: bool = False
    error: str | None = None


def _dump(session: SavedSession) -> str:
    # compact JSON: a 5 MB session is written in one go (``maia sessions show --json`` pretty-prints)
    return json.dumps(session.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


class SessionStore:
    """The session files of one launch folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def for_launch(cls, launch: Path) -> SessionStore:
        """``<launch>/.maia/.sessions``."""
        return cls(launch / ".maia" / ".sessions")

    def path(self, name: str) -> Path:
        """The file of a session name."""
        return self.folder / f"{name}.json"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the folder's lock (every read-modify-write of session files)."""
        from filelock import FileLock

        self.folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.folder / ".lock"), timeout=30):
            yield

    def names(self) -> list[str]:
        """Every session name, sorted."""
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.json") if not p.name.startswith("."))

    def find(self, name: str) -> str | None:
        """The stored name matching ``name`` (exact first, then ignoring case)."""
        names = self.names()
        if name in names:
            return name
        lowered = name.lower()
        return next((n for n in names if n.lower() == lowered), None)

    def suggest(self, name: str, limit: int = 3) -> list[str]:
        """Stored names close to ``name``."""
        names = self.names()
        lowered = {n.lower(): n for n in names}
        close = difflib.get_close_matches(name.lower(), list(lowered), n=limit, cutoff=0.5)
        contains = [n for n in names if name.lower() in n.lower() and n.lower() not in close]
        return [lowered[c] for c in close] + contains[: max(0, limit - len(close))]

    def not_found(self, name: str) -> NotFoundError:
        """The error for an unknown name, with suggestions."""
        hints = self.suggest(name)
        hint = (
            _("Did you mean: {names}?").format(names=", ".join(hints))
            if hints
            else _("`maia sessions list` shows the saved sessions.")
        )
        return NotFoundError(_("No session named {name!r}.").format(name=name), hint=hint)

    def load(self, name: str) -> SavedSession:
        """Read a session (case-insensitive name); a broken file is a clear SessionError."""
        found = self.find(name)
        if found is None:
            raise self.not_found(name)
        path = self.path(found)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise SessionError(_("Cannot read {path}: {error}").format(path=path, error=error)) from None
        try:
            return parse_session(text, found)
        except ValueError as error:
            raise SessionError(_("{path} is not a valid session: {error}").format(path=path, error=error)) from None

    def info(self, name: str) -> SessionInfo:
        """A listing line for one file (never raises for a broken file)."""
        path = self.path(name)
        try:
            size = path.stat().st_size
            session = parse_session(path.read_text(encoding="utf-8"), name)
        except (OSError, UnicodeDecodeError, ValueError) as error:
            return SessionInfo(name, path, path.stat().st_size if path.exists() else 0, error=str(error))
        return SessionInfo(
            name,
            path,
            size,
            session.updated_at,
            len(session.messages),
            session.model,
            session.agent,
            is_compacted(name),
        )

    def listing(self) -> list[SessionInfo]:
        """Every session, most recently updated first; broken files included, marked."""
        infos = [self.info(n) for n in self.names()]
        return sorted(infos, key=lambda i: (i.updated_at or "", i.name), reverse=True)

    def owner_of(self, name: str) -> str | None:
        """The id stored in a session file (None if absent or unreadable)."""
        try:
            with self.path(name).open("rb") as handle:
                head = handle.read(512)
        except OSError:
            return None
        match = re.search(rb'"id"\s*:\s*"([0-9A-Za-z_-]+)"', head)  # MAIA writes the id near the top
        if match:
            return match.group(1).decode()
        try:
            data = json.loads(self.path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return str(data.get("id")) if isinstance(data, dict) and data.get("id") else None

    def free_name(self, wanted: str, owner: str) -> str:
        """``wanted``, or ``wanted_2``, ``wanted_3``… when another session holds it (call under the lock)."""
        candidate = wanted
        n = 1
        while True:
            existing = self.find(candidate)
            if existing is None or self.owner_of(existing) == owner:
                return candidate
            n += 1
            suffix = f"_{n}"
            candidate = wanted[: MAX_NAME - len(suffix)] + suffix

    def write(self, session: SavedSession, *, replace: str | None = None, take_over: bool = False) -> str:
        """Save under the session's name (suffixed if another session owns it); returns the name used.

        ``replace`` is the file this session was saved as before (a rename): it is removed.
        ``take_over`` overwrites a file of that name whoever owns it (a compaction cycling to ``__1``).
        """
        with self.locked():
            name = session.name if take_over else self.free_name(session.name, session.id)
            session.name = name
            now = _now()
            session.created_at = session.created_at or now
            session.updated_at = now
            old = self.find(name)
            if old is not None and old != name:  # only the case differs: rename the file itself
                os.replace(self.path(old), self.path(name))
            write_atomic(self.path(name), _dump(session))
            if replace and replace != name and self.find(replace) == replace and self.owner_of(replace) == session.id:
                with contextlib.suppress(FileNotFoundError):
                    self.path(replace).unlink()
        return name

    def rename(self, old: str, new: str) -> str:
        """Rename a saved session's file (and the name inside it)."""
        session = self.load(old)
        new = validate_name(new)
        existing = self.find(new)
        if existing is not None and existing.lower() != session.name.lower():
            raise UsageError(_("A session named {name!r} already exists.").format(name=existing))
        previous = session.name
        session.name = new
        with self.locked():
            if existing is not None:  # the same file, only the case changes
                os.replace(self.path(previous), self.path(new))
            write_atomic(self.path(new), _dump(session))
            if previous != new and self.path(previous).exists() and existing is None:
                self.path(previous).unlink()
        return new

    def remove(self, names: list[str]) -> list[tuple[str, str | None]]:
        """Delete files; (name, None) when gone (already absent counts), (name, error) otherwise."""
        results: list[tuple[str, str | None]] = []
        with self.locked():
            for name in names:
                found = self.find(name) or name
                try:
                    self.path(found).unlink()
                    results.append((found, None))
                except FileNotFoundError:
                    results.append((found, None))
                except OSError as error:
                    results.append((found, error.strerror or str(error)))
        return results


def ensure_project_folders(launch: Path) -> str | None:
    """Create ``./.maia/.sessions`` and list ``.maia/`` in the repository's ``.gitignore``.

    Returns a warning when the folders cannot be created (sessions are then off).
    """
    try:
        (launch / ".maia" / ".sessions").mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return _("Cannot create {path} ({error}): sessions will not be saved.").format(
            path=launch / ".maia" / ".sessions", error=error.strerror
        )
    gitignore = launch / ".gitignore"
    if gitignore.exists() or (launch / ".git").exists():
        try:
            text = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
            lines = {line.strip() for line in text.splitlines()}
            if not lines & {".maia", ".maia/", "/.maia", "/.maia/"}:
                sep = "" if not text or text.endswith("\n") else "\n"
                write_atomic(gitignore, f"{text}{sep}.maia/\n")
        except (OSError, UnicodeDecodeError):
            pass  # a .gitignore MAIA cannot edit is left alone
    return None


class SessionManager:
    """The current session of a conversation: its name, its file, what was last saved (§12.3)."""

    def __init__(self, store: SessionStore | None, name: str | None = None) -> None:
        self.store = store
        self.session = SavedSession(name=name or default_name())
        self.current_file: str | None = None
        self._saved_digest: str | None = None

    @property
    def name(self) -> str:
        """The session's name (a rename takes effect at the next save)."""
        return self.session.name

    def rename(self, new: str) -> str:
        """Set a new name (validated); the file is renamed at the next save."""
        self.session.name = validate_name(new)
        return self.session.name

    def update(
        self, *, messages: list[Message], pending: list[str], start_context: str | None, model: str, cwd: Path
    ) -> None:
        """Record the conversation's current state."""
        self.session.messages = list(messages)
        self.session.pending_context = list(pending)
        self.session.start_context = start_context
        self.session.model = model
        self.session.cwd = str(cwd)

    def save(self, *, take_over: bool = False) -> str | None:
        """Write the session if it is not empty and changed since the last save; the name used, or None."""
        if self.store is None or self.session.empty:
            return None
        digest = self.session.digest()
        if digest == self._saved_digest and self.current_file == self.session.name:
            return None
        name = self.store.write(self.session, replace=self.current_file, take_over=take_over)
        self.current_file = name
        self._saved_digest = self.session.digest()
        return name

    def adopt(self, saved: SavedSession) -> None:
        """Continue a loaded session (its file becomes the current one)."""
        self.session = saved
        self.current_file = saved.name
        self._saved_digest = saved.digest()

    def start_new(self, name: str | None = None, *, start_context: str | None = None) -> None:
        """A fresh session (new id, new default name unless given)."""
        self.session = SavedSession(name=name or default_name(), start_context=start_context)
        self.current_file = None
        self._saved_digest = None
