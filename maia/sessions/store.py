"""Sessions on disk (§12): ``./.maia/.sessions/<name>.json``, atomic writes under a lock, names.

A crash at any moment leaves the previous file intact (temp file, fsync, rename), and two MAIA
processes in one folder never overwrite each other's session: each file carries the id of the
session that owns it, checked under a lock before every write.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from maia.core.errors import MaiaError, NotFoundError, UsageError
from maia.core.storage import write_atomic
from maia.i18n import _
from maia.sessions.summary import ORIGINS, SUMMARY_HEAD, Origin, read_summary

if TYPE_CHECKING:
    from maia.core.contracts import Message
    from maia.sessions.codec import EncodedSession, SavedSession

# the codec (and the content blocks it builds) is imported where a session is read or written, not at
# import: `maia sessions list` reads only the files' heads (start-up cost, issue 29)

MAX_NAME = 100
_FORBIDDEN = re.compile(r'[\\/:*?"<>|\x00-\x1f\x7f]')
_COMPACTED = re.compile(r"^(.*)__(\d+)$")
MAX_COMPACTIONS = 1000
_HEAD_ID = re.compile(r'"id":"([0-9A-Za-z_-]+)"')


PRIVATE = 0o600  # sessions hold the conversation: readable by their owner only


class SessionError(MaiaError):
    """A session file that cannot be read or written."""


class ForeignSession(SessionError):
    """A session file this user's MAIA did not write here (no valid seal): never carried on unaccepted."""


class SessionBusy(SessionError):
    """The session is open in another MAIA process."""


class SessionLock:
    """Held by the one process that has a session open, for as long as it has it open.

    An ``flock`` on ``.<name>.lock`` beside the session files: the kernel releases it when the process
    dies, so a crash never leaves a session locked. The holder writes its pid and role in the file,
    for the message the next process gets.
    """

    def __init__(self, folder: Path, name: str, role: str = "maia") -> None:
        self.folder = folder
        self.name = name
        self.role = role
        self._fd: int | None = None

    @property
    def path(self) -> Path:
        """The lock file (names are case-insensitive, so is the lock)."""
        return self.folder / f".{self.name.lower()}.lock"

    @property
    def held(self) -> bool:
        """Whether this process holds it."""
        return self._fd is not None

    def holder(self) -> str:
        """Who holds it, as recorded in the file (``pid role``), or ``""``."""
        try:
            return self.path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return ""

    def _try(self) -> bool:
        import fcntl

        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            # never through a link: a repository could ship `.NAME.lock` pointing at a file to truncate
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, PRIVATE)
        except OSError as error:
            if error.errno != errno.ELOOP:
                raise
            raise SessionError(
                _("{path} is a symbolic link: MAIA never writes a session's lock through one.").format(path=self.path),
                hint=_("Remove it (it is not MAIA's), then try again."),
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        try:
            same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the holder removed the file while we opened it: try again on the new file
            os.close(fd)
            return self._try()
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {self.role}\n".encode())
        self._fd = fd
        return True

    def acquire(self, wait: float = 0.0) -> None:
        """Take the lock, waiting up to ``wait`` seconds; SessionBusy names the process holding it."""
        if self._fd is not None or sys.platform == "win32":
            return
        deadline = time.monotonic() + wait
        while not self._try():
            if time.monotonic() >= deadline:
                pid, _sep, role = self.holder().partition(" ")
                raise SessionBusy(
                    _("The session {name} is in use by another MAIA ({role}, process {pid}).").format(
                        name=self.name, role=role or "maia", pid=pid or "?"
                    ),
                    hint=_("Wait for it to finish, or use another session (maia sessions list)."),
                )
            time.sleep(0.1)

    def busy(self) -> bool:
        """Whether another process holds it now (without taking it)."""
        if self._fd is not None or sys.platform == "win32" or not self.path.exists():
            return False
        if self._try():
            self.release()
            return False
        return True

    def release(self) -> None:
        """Give the lock back (the file is removed first, so nobody locks a file about to vanish)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None


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
    origin: Origin = "chat"
    first_prompt: str = ""
    cleared: bool = False
    foreign: bool = False  # no valid seal in its head: not written by this user's MAIA here

    @property
    def sort_key(self) -> float:
        """When it last changed, as a timestamp: the recorded time (whatever its time zone), else the file's."""
        if self.updated_at:
            try:
                return datetime.fromisoformat(self.updated_at).timestamp()
            except ValueError:
                pass
        try:
            return self.path.stat().st_mtime
        except OSError:
            return 0.0


def first_prompt(messages: list[Message], limit: int = 80) -> str:
    """The first thing the user typed, on one line (for listings)."""
    from maia.sessions.codec import user_words

    for message in messages:
        words = user_words(message) if message.role == "user" else ""
        if words.strip():
            line = " ".join(words.split())
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def summary_of(session: SavedSession) -> dict[str, object]:
    """What a listing shows of a session, written at the head of its file (see ``read_summary``)."""
    summary: dict[str, object] = {
        "messages": len(session.messages),
        "firstPrompt": first_prompt(session.messages),
        "model": session.model,
        "origin": session.origin,
    }
    if session.agent:
        summary["agent"] = session.agent
    if session.cleared:
        summary["cleared"] = True
    return summary


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


class SessionStore:
    """The session files of one launch folder."""

    def __init__(self, folder: Path, home: Path | None = None) -> None:
        from maia.core.paths import maia_home

        self.folder = folder
        self.home = home if home is not None else maia_home()  # where the sealing key is
        self.written: EncodedSession | None = None  # what the last write wrote (its digest)
        self.launch: Path | None = None  # the launch folder the sessions folder must lie in
        # during one listing: (linked away, the folder's real path), worked out once rather than per file
        self._listing_paths: tuple[bool, str | None] | None = None  # (linked away, real path), per listing

    @classmethod
    def for_launch(cls, launch: Path, home: Path | None = None) -> SessionStore:
        """``<launch>/.maia/.sessions``."""
        store = cls(launch / ".maia" / ".sessions", home)
        store.launch = launch
        return store

    @property
    def linked_away(self) -> bool:
        """Whether the sessions folder is reached through a link inside the project (``.maia`` or
        ``.maia/.sessions`` a symbolic link): a repository can ship one pointing at another project's
        sessions, whose seals (keyed on the real path) would then count here. Such a folder is
        never this folder's history (nothing in it is the user's own) and is never written."""
        if self.launch is not None:
            expected = os.path.join(os.path.realpath(self.launch), ".maia", ".sessions")
        else:
            expected = os.path.join(os.path.realpath(self.folder.parent), self.folder.name)
        return os.path.realpath(self.folder) != expected

    def _refuse_linked(self) -> None:
        if self.linked_away:
            raise SessionError(
                _(
                    "{path} is a symbolic link (or lies behind one) to another folder: sessions are not "
                    "saved through it."
                ).format(path=self.folder)
            )

    # --- seals: which files this user's MAIA wrote (maia.sessions.seal) ---------------------------

    def seal_of(self, session_id: str) -> str | None:
        """The seal a file of this session carries (None when the home cannot hold the key: the file
        is then written unsealed, and counts as foreign until accepted)."""
        from maia.sessions.seal import seal

        if self.linked_away:  # never seal a file for another folder's sessions
            return None
        try:
            return seal(self.home, self.folder, session_id)
        except OSError:
            return None

    def is_own(self, session: SavedSession) -> bool:
        """Whether a loaded session's file carries this user's seal for this folder."""
        from maia.sessions.seal import sealed

        return not self.linked_away and sealed(self.home, self.folder, session.id, session.seal)

    def require_own(self, session: SavedSession) -> None:
        """ForeignSession unless this user's MAIA wrote the session's file here."""
        if self.is_own(session):
            return
        raise ForeignSession(
            _(
                "The session {name} was not written by your MAIA in this folder: a repository may have "
                "planted it, with turns you never typed. It is not carried on."
            ).format(name=session.name),
            hint=_(
                "Read it with `maia sessions show {name}`; if it is yours (or written by an older MAIA), "
                "accept the saved sessions of this folder with `maia trust`."
            ).format(name=session.name),
        )

    def accept(self, name: str) -> None:
        """Seal a foreign session as the user's own (the user accepted it: ``maia trust``)."""
        with self.locked():
            session = self.load(name)
            if self.is_own(session):
                return
            session.seal = self.seal_of(session.id)
            if session.seal is None:
                raise SessionError(
                    _("The session {name} could not be accepted: {home} cannot hold the key.").format(
                        name=name, home=self.home
                    )
                )
            from maia.sessions.codec import encode_session

            text = encode_session(session).file_text(session.updated_at, self._summary(session))
            try:
                write_atomic(self.path(session.name), text, mode=PRIVATE)
            except OSError as error:
                raise SessionError(
                    _("The session {name} could not be accepted: {error}").format(
                        name=name, error=error.strerror or error
                    )
                ) from None

    def foreign(self) -> list[SessionInfo]:
        """The readable sessions of the folder that carry no valid seal (from the head of each file)."""
        if not self.folder.is_dir():
            return []
        return [info for info in self.listing() if info.foreign and info.error is None]

    @staticmethod
    def foreign_line(info: SessionInfo) -> str:
        """``name (3 msg) — first prompt``: one foreign session as the trust question shows it."""
        prompt = f" \u2014 {info.first_prompt}" if info.first_prompt else ""
        return f"{info.name} ({info.messages} msg){prompt}"

    def _summary(self, session: SavedSession) -> dict[str, object]:
        summary = summary_of(session)
        if session.seal:
            summary["seal"] = session.seal
        return summary

    def path(self, name: str) -> Path:
        """The file of a session name."""
        return self.folder / f"{name}.json"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the folder's lock (every read-modify-write of session files)."""
        from filelock import FileLock

        self._refuse_linked()  # every write holds this lock: none goes through a planted link
        self.folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.folder / ".lock"), timeout=30):
            yield

    def names(self) -> list[str]:
        """Every session name, sorted."""
        try:
            # names straight from the folder: a listing of 500 sessions builds no Path per file to get them
            with os.scandir(self.folder) as entries:
                found = [e.name[:-5] for e in entries if e.name.endswith(".json") and not e.name.startswith(".")]
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return []
        return sorted(found)

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
            from maia.sessions.codec import parse_session

            return parse_session(text, found)
        except ValueError as error:
            raise SessionError(_("{path} is not a valid session: {error}").format(path=path, error=error)) from None

    def info(self, name: str) -> SessionInfo:
        """A listing line for one file (never raises for a broken file): from the summary at the head of
        the file when it has one, else from the whole file (written by an older MAIA)."""
        path = self.path(name)
        quick = self._quick_info(name, path)
        if quick is not None:
            return quick
        try:
            size = path.stat().st_size
            from maia.sessions.codec import parse_session

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
            origin=session.origin,
            first_prompt=first_prompt(session.messages),
            cleared=session.cleared,
            foreign=not self.is_own(session),
        )

    def _quick_info(self, name: str, path: Path) -> SessionInfo | None:
        try:  # no file object: a listing opens hundreds of files for a few hundred bytes each
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                size = os.fstat(fd).st_size
                head = os.read(fd, SUMMARY_HEAD).decode("utf-8", "replace")
            finally:
                os.close(fd)
        except OSError:
            return None
        summary = read_summary(head)
        if summary is None:
            return None  # an older MAIA's file, or an odd one: the whole file is read
        fields = (
            summary.get("updatedAt"),
            summary.get("messages"),
            summary.get("model"),
            summary.get("origin"),
            summary.get("firstPrompt"),
        )
        updated, count, model, origin, prompt = fields
        agent = summary.get("agent")
        if not (
            isinstance(updated, str)
            and isinstance(count, int)
            and isinstance(model, str)
            and origin in ORIGINS
            and isinstance(prompt, str)
            and (agent is None or isinstance(agent, str))
        ):
            return None  # not a summary MAIA wrote: the whole file decides
        return SessionInfo(
            name,
            path,
            size,
            updated,
            count,
            model,
            agent,
            is_compacted(name),
            origin=origin,
            first_prompt=prompt,
            cleared=summary.get("cleared") is True,
            foreign=not self._head_sealed(head, summary.get("seal")),
        )

    def _head_sealed(self, head: str, value: object) -> bool:
        """The seal of a listing's head, against the id that follows the summary (the whole file is
        checked again when it is loaded)."""
        from maia.sessions.seal import sealed

        found = _HEAD_ID.search(head)  # the body's own id comes first (the summary's strings are escaped)
        if found is None:
            return False
        linked, real = self._listing_paths or (self.linked_away, None)
        return not linked and sealed(self.home, self.folder, found.group(1), value, real)

    def listing(self) -> list[SessionInfo]:
        """Every session, most recently changed first; broken files included, marked."""
        from maia.sessions.seal import has_key

        # worked out once for all the files; without a key (no session sealed yet) nothing is this user's
        # own, and no file makes the key be looked for again
        linked = self.linked_away or not has_key(self.home)
        self._listing_paths = (linked, None if linked else os.path.realpath(self.folder))
        try:
            infos = [self.info(n) for n in self.names()]
        finally:
            self._listing_paths = None
        return sorted(infos, key=lambda i: (i.sort_key, i.name), reverse=True)

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

    def write(
        self,
        session: SavedSession,
        *,
        replace: str | None = None,
        take_over: bool = False,
        claim: Callable[[str], None] | None = None,
        encoded: EncodedSession | None = None,
    ) -> str:
        """Save under the session's name (suffixed if another session owns it); returns the name used.

        ``encoded`` is the session already serialised (by the manager, to compare it with the last
        save): used as it is when the name and creation time did not change meanwhile.

        ``replace`` is the file this session was saved as before (a rename): it is removed.
        ``take_over`` overwrites a file of that name whoever owns it (a compaction cycling to ``__1``).
        ``claim`` is called with the chosen name before anything is written (the manager locks it).
        A failure to write is a SessionError with one clear line; the previous file stays intact.
        """
        try:
            with self.locked():
                name = session.name if take_over else self.free_name(session.name, session.id)
                if claim is not None:
                    claim(name)
                session.name = name
                now = _now()
                session.created_at = session.created_at or now
                session.updated_at = now
                old = self.find(name)
                if old is not None and old != name:  # only the case differs: rename the file itself
                    os.replace(self.path(old), self.path(name))
                if encoded is None or (encoded.name, encoded.created_at) != (session.name, session.created_at):
                    from maia.sessions.codec import encode_session

                    encoded = encode_session(session)
                self.written = encoded
                session.seal = self.seal_of(session.id)  # MAIA writes it: the user's own
                write_atomic(self.path(name), encoded.file_pieces(now, self._summary(session)), mode=PRIVATE)
                if (
                    replace
                    and replace != name
                    and self.find(replace) == replace
                    and self.owner_of(replace) == session.id
                ):
                    with contextlib.suppress(FileNotFoundError):
                        self.path(replace).unlink()
        except TimeoutError:
            raise SessionError(
                _("The session {name} could not be saved: {folder} stayed locked by another MAIA.").format(
                    name=session.name, folder=self.folder
                )
            ) from None
        except OSError as error:
            raise SessionError(
                _("The session {name} could not be saved in {folder}: {error}").format(
                    name=session.name, folder=self.folder, error=error.strerror or error
                )
            ) from None
        return name

    def refuse_if_open(self, name: str) -> None:
        """SessionBusy when a MAIA has the session open (it would write the old name again)."""
        lock = SessionLock(self.folder, name)
        if lock.busy():
            pid, _sep, role = lock.holder().partition(" ")
            raise SessionBusy(
                _("The session {name} is open in another MAIA ({role}, process {pid}): close it first.").format(
                    name=name, role=role or "maia", pid=pid or "?"
                )
            )

    def rename(self, old: str, new: str) -> str:
        """Rename a saved session's file (and the name inside it); refused while a MAIA has it open."""
        session = self.load(old)
        self.refuse_if_open(session.name)
        new = validate_name(new)
        existing = self.find(new)
        if existing is not None and existing.lower() != session.name.lower():
            raise UsageError(_("A session named {name!r} already exists.").format(name=existing))
        previous = session.name
        session.name = new
        with self.locked():
            if existing is not None:  # the same file, only the case changes
                os.replace(self.path(previous), self.path(new))
            from maia.sessions.codec import encode_session

            # the seal is kept as it was: renaming never makes a foreign file the user's own
            text = encode_session(session).file_text(session.updated_at, self._summary(session))
            write_atomic(self.path(new), text, mode=PRIVATE)
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
                    self.refuse_if_open(found)
                except SessionBusy as busy:
                    results.append((found, busy.message))
                    continue
                try:
                    self.path(found).unlink()
                    results.append((found, None))
                except FileNotFoundError:
                    results.append((found, None))
                except OSError as error:
                    results.append((found, error.strerror or str(error)))
        return results


MAIA_GITIGNORE = """# Written by MAIA: what stays on this machine (sessions, personal settings, the model chosen in
# the chat's list), this file included, so that a MAIA run leaves `git status` clean.
# Commit .maia/settings.json, tools/, skills/, agents/.
.sessions/
settings.local.json
config.json
.gitignore
"""
_OWN_GITIGNORE = "# Written by MAIA"


def ensure_project_folders(launch: Path) -> str | None:
    """Create ``./.maia/.sessions`` and ``./.maia/.gitignore`` (sessions and local settings ignored).

    The user's own ``.gitignore`` is never touched. Returns a warning when the folders cannot be
    created (sessions are then off).
    """
    folder = launch / ".maia"
    try:
        (folder / ".sessions").mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return _("Cannot create {path} ({error}): sessions will not be saved.").format(
            path=folder / ".sessions", error=error.strerror
        )
    if SessionStore.for_launch(launch).linked_away:  # a repository's planted link to another project
        return _(
            "{path} is a symbolic link (or lies behind one) to another folder: sessions will not be saved."
        ).format(path=folder / ".sessions")
    ignore = folder / ".gitignore"
    try:
        current: str | None = ignore.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    # MAIA's own file, written by an older MAIA, is brought up to date; one the user wrote is theirs
    missing = current is None and not ignore.exists()
    outdated = current is not None and current.startswith(_OWN_GITIGNORE) and current != MAIA_GITIGNORE
    if missing or outdated:
        with contextlib.suppress(OSError):  # a read-only folder: sessions still work, git may list them
            write_atomic(ignore, MAIA_GITIGNORE)
    return None


class SessionManager:
    """The current session of a conversation: its name, its file, what was last saved (§12.3).

    Once the session has a file (loaded, or saved once), this process holds its lock until it moves
    to another session or closes: a second MAIA cannot write the same file and lose a turn.
    """

    def __init__(
        self,
        store: SessionStore | None,
        name: str | None = None,
        *,
        origin: Origin = "chat",
        lock_wait: float = 0.0,
    ) -> None:
        self.store = store
        self.origin: Origin = origin
        self.lock_wait = lock_wait
        from maia.sessions.codec import SavedSession

        self.session = SavedSession(name=name or default_name(), origin=origin)
        self.current_file: str | None = None
        self._saved_digest: str | None = None
        self._lock: SessionLock | None = None

    @property
    def name(self) -> str:
        """The session's name (a rename takes effect at the next save)."""
        return self.session.name

    def rename(self, new: str) -> str:
        """Set a new name (validated, not another session's); the file is renamed at the next save."""
        name = validate_name(new)
        if self.store is not None:
            existing = self.store.find(name)
            if (
                existing is not None
                and existing.lower() != (self.current_file or "").lower()
                and self.store.owner_of(existing) != self.session.id
            ):
                raise UsageError(_("A session named {name!r} already exists.").format(name=existing))
        self.session.name = name
        return name

    def update(
        self, *, messages: list[Message], pending: list[str], start_context: str | None, model: str, launch: Path
    ) -> None:
        """Record the conversation's current state."""
        self.session.messages = list(messages)
        self.session.pending_context = list(pending)
        self.session.start_context = start_context
        self.session.model = model
        self.session.launch = str(launch)

    def _claim(self, name: str) -> None:
        """Hold the lock of the file about to be written (called under the folder lock)."""
        assert self.store is not None
        if self._lock is not None and self._lock.name.lower() == name.lower():
            return
        lock = SessionLock(self.store.folder, name, self.origin)
        lock.acquire(0.0)
        self._release()
        self._lock = lock

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def save(self, *, take_over: bool = False) -> str | None:
        """Write the session if it is not empty and changed since the last save; the name used, or None."""
        if self.store is None or self.session.empty:
            return None
        session = self.session
        session.created_at = session.created_at or _now()  # before the digest: the file records it
        from maia.sessions.codec import encode_session

        encoded = encode_session(session)  # serialised once: compared, then written as it is
        if encoded.digest == self._saved_digest and self.current_file == session.name:
            return None
        name = self.store.write(
            session, replace=self.current_file, take_over=take_over, claim=self._claim, encoded=encoded
        )
        self.current_file = name
        written = self.store.written
        self._saved_digest = written.digest if written is not None else session.digest()
        return name

    def adopt(self, saved: SavedSession) -> SavedSession:
        """Continue a loaded session: its file becomes the current one, locked for this process.

        The file is read again once the lock is held, so a turn another process saved while this one
        waited is never overwritten; that fresh content is returned. SessionBusy when another process
        keeps it open (after waiting ``lock_wait`` seconds).
        """
        if self.store is not None:
            lock: SessionLock | None = None
            if self._lock is None or self._lock.name.lower() != saved.name.lower():
                lock = SessionLock(self.store.folder, saved.name, self.origin)
                lock.acquire(self.lock_wait)
            try:
                if self.store.find(saved.name) is not None:
                    saved = self.store.load(saved.name)
                    # every way of carrying a session on comes here: a file this user's MAIA did not
                    # write is history nobody typed, never carried on unaccepted (ForeignSession)
                    self.store.require_own(saved)
            except BaseException:
                if lock is not None:
                    lock.release()
                raise
            if lock is not None:
                self._release()
                self._lock = lock
        saved.cleared = False  # carried on: --continue may pick it again
        saved.origin = self.origin  # the last front end that wrote it is its kind
        self.session = saved
        self.current_file = saved.name
        self._saved_digest = saved.digest()
        return saved

    def start_new(self, name: str | None = None, *, start_context: str | None = None) -> None:
        """A fresh session (new id, new default name unless given); the previous one's lock is released."""
        self._release()
        from maia.sessions.codec import SavedSession

        self.session = SavedSession(name=name or default_name(), start_context=start_context, origin=self.origin)
        self.current_file = None
        self._saved_digest = None

    def start_compacted(self, start_context: str) -> tuple[str, bool]:
        """Switch to the compacted continuation ``xxx__n`` (§14.4): the next number no other session
        holds; only when all 1000 are taken does the numbering wrap and overwrite. The new name's lock
        is taken first, so a SessionBusy leaves everything as it was. Returns (name, overwrite)."""
        name = next_compacted_name(self.session.name)
        match = _COMPACTED.match(self.session.name)
        take_over = bool(match and match.group(2) == str(MAX_COMPACTIONS))  # 1000 → 1 overwrites (§14.4)
        lock: SessionLock | None = None
        if self.store is not None and not take_over:
            first = name
            for _attempt in range(MAX_COMPACTIONS):
                existing = self.store.find(name)
                if existing is None or self.store.owner_of(existing) == self.session.id:
                    break
                name = next_compacted_name(name)
            else:
                name, take_over = first, True
        if self.store is not None:
            lock = SessionLock(self.store.folder, name, self.origin)
            lock.acquire(0.0)
        self._release()
        self._lock = lock
        from maia.sessions.codec import SavedSession

        self.session = SavedSession(name=name, start_context=start_context, origin=self.origin)
        self.current_file = None
        self._saved_digest = None
        return name, take_over

    def close(self) -> None:
        """The conversation ends: release the session's lock."""
        self._release()
