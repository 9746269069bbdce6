"""Writing files so that a crash at any moment leaves either the old or the new content."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path

# what a full disk, a read-only home or a folder the user cannot write gives: never a traceback
STORAGE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG}
)
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.tmp$")


@functools.lru_cache(maxsize=1)
def umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux's /proc)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    current = os.umask(0o022)  # elsewhere: read by setting, then put back at once
    os.umask(current)
    return current


def new_file_mode() -> int:
    """The mode a program creating a file normally gives it: 0666 minus the umask."""
    return 0o666 & ~umask()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temps(path: Path) -> None:
    """Remove temporary files left beside ``path`` by a writer that was killed mid-write."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            match = _TEMP.match(entry.name)
            if match is None or match.group("name") != path.name:
                continue
            pid = int(match.group("pid"))
            if pid != os.getpid() and not _pid_alive(pid):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def write_atomic(
    path: Path, data: str | bytes | Sequence[str | bytes | memoryview], *, mode: int | None = None
) -> None:
    """Replace ``path`` in one step: temp file in the same folder, fsync, rename.

    ``data`` may be a sequence of pieces, written one after the other (a large text and a small
    non-ASCII head are each encoded alone: joined, the whole text would be copied and widened).

    ``mode`` None keeps an existing file's mode and gives a new file ``0666 & ~umask`` (as any editor
    would); an explicit mode (0600 for private files) is always applied.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    target_mode = mode
    if target_mode is None:
        try:
            target_mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            target_mode = new_file_mode()
    # the writer's pid in the name lets a later save remove what a killed writer left behind
    import tempfile  # here: it imports shutil, random and the compressors, which a reading command never needs

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in data if isinstance(data, list | tuple) else (data,):
                handle.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, target_mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    remove_stale_temps(path)


def write_atomic_at(dir_fd: int, name: str, data: str | bytes, *, mode: int | None = None) -> None:
    """:func:`write_atomic` inside an already opened folder (``dir_fd``): the file written is in the folder
    that was opened and judged, whatever its path leads to meanwhile. ``name`` is a single name."""
    target_mode = mode
    if target_mode is None:
        try:
            target_mode = os.stat(name, dir_fd=dir_fd).st_mode & 0o7777
        except FileNotFoundError:
            target_mode = new_file_mode()
    tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), target_mode)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)  # replaces the entry, never a link's target
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


def storage_error(error: BaseException) -> bool:
    """Whether ``error`` is the disk's or the folder's fault (full, read-only, not writable), not a bug."""
    return isinstance(error, OSError) and error.errno in STORAGE_ERRNOS


def disk_full(error: BaseException) -> bool:
    """Whether ``error`` says the disk (or the user's quota) is full."""
    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def describe_storage_error(error: OSError) -> str:
    """One sentence for a write that failed because of the disk or the folder (names the file)."""
    from maia.i18n import _

    where = str(error.filename) if error.filename else _("a file of MAIA")
    reason = error.strerror or str(error)
    if disk_full(error):
        return _("{path}: the disk is full ({error}).").format(path=where, error=reason)
    if error.errno == errno.EROFS:
        return _("{path}: the file system is read-only ({error}).").format(path=where, error=reason)
    return _("{path}: cannot write there ({error}).").format(path=where, error=reason)
