"""Which session files this user's MAIA wrote: a seal keyed by a secret in MAIA's home.

A repository can ship ``.maia/.sessions/NAME.json`` with a made-up history: a "user" turn asking for
something, fake tool results. Carried on, the model would take it as the user's own words. So every
session file MAIA writes carries a *seal*: an HMAC of the sessions folder's real path and the
session's id, keyed by ``~/.maia/session.key`` (32 random bytes, 0600, made once). A file without a
valid seal did not come from this user's MAIA in this folder (planted, copied from elsewhere, or
written by a MAIA older than seals): it is *foreign*, and MAIA never carries it on without the user
accepting it (``maia trust``).

The seal is constant for a session (folder and id do not change), so saving a turn costs one HMAC of
a few dozen bytes, computed once per session: no extra write, no hashing of the conversation. It does
not cover the content: a file changed in place by someone who can write ``.maia/.sessions/`` keeps
its seal (the sandbox keeps ``.maia/`` read-only for commands). The key never leaves MAIA's home,
which the sandbox hides from commands.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
from pathlib import Path

KEY_FILE = "session.key"
_KEY_BYTES = 32
_CONTEXT = b"maia-session-seal-v1\x00"


def key_path(home: Path) -> Path:
    """``~/.maia/session.key``."""
    return home / KEY_FILE


def _read_key(path: Path) -> bytes | None:
    try:
        key = path.read_bytes()
    except OSError:
        return None
    return key if len(key) == _KEY_BYTES else None


_KEYS: dict[str, bytes] = {}  # per home, once read (an absent key is not remembered: it may be made later)
_SEALS: dict[tuple[str, str, str], str] = {}


def _key(home: str, create: bool) -> bytes | None:
    if home in _KEYS:
        return _KEYS[home]
    path = key_path(Path(home))
    key = _read_key(path)
    if key is None and create:
        key = _make_key(path)
    if key is not None:
        _KEYS[home] = key
    return key


def _make_key(path: Path) -> bytes | None:
    # made once: written whole to a temporary file, then linked into place (a link never replaces a
    # key another MAIA made meanwhile; the one that is in place wins)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(os.urandom(_KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return _read_key(path)


def _message(real: str, session_id: str) -> bytes:
    return _CONTEXT + real.encode("utf-8", "surrogateescape") + b"\x00" + session_id.encode("utf-8", "surrogateescape")


def _seal(home: str, folder: str, session_id: str, create: bool, real: str | None = None) -> str | None:
    cached = _SEALS.get((home, folder, session_id))
    if cached is not None:
        return cached
    key = _key(home, create)
    if key is None:
        return None
    message = _message(real if real is not None else os.path.realpath(folder), session_id)
    value = hmac.new(key, message, hashlib.sha256).hexdigest()
    if len(_SEALS) > 1024:  # a long-lived process (a workflow worker) reads many sessions
        _SEALS.clear()
    _SEALS[(home, folder, session_id)] = value
    return value


def has_key(home: Path) -> bool:
    """Whether this home has its key (none yet: no session of it is sealed)."""
    return _key(str(home), False) is not None


def seal(home: Path, folder: Path, session_id: str) -> str:
    """The seal MAIA writes in a session file of ``folder`` (the key is made on first use)."""
    value = _seal(str(home), str(folder), session_id, True)
    if value is None:  # the key could not be read back: an unreadable home
        raise OSError(f"cannot read {key_path(home)}")
    return value


def sealed(home: Path, folder: Path, session_id: str, value: object, real: str | None = None) -> bool:
    """Whether ``value`` is this user's seal for the session ``session_id`` of ``folder`` (``real``: the
    folder's real path when the caller has just worked it out, as a listing does once for all its files)."""
    if not isinstance(value, str) or not value:
        return False
    expected = _seal(str(home), str(folder), session_id, False, real)
    return expected is not None and hmac.compare_digest(expected, value)
