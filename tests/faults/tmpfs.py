"""Small file systems for the fault tests: a tmpfs of a given size (a full disk) or read-only.

Mounting needs root (CI runs as root): elsewhere the tests that need it are skipped with the reason,
and with ``CI=true`` they fail instead. Every mount is undone when the test ends, whatever happens
(a lazy unmount: a process still holding a file there cannot keep it mounted).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI runs as root: this must work there)")
    pytest.skip(reason)


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """Mount a tmpfs of ``size`` (``1m``, ``8m``…) on ``folder`` (created), unmounted on the way out."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        _unavailable("mounting a small tmpfs (a full disk) needs root")
    if shutil.which("mount") is None:
        _unavailable("no mount command")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        _unavailable(f"cannot mount a tmpfs: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def read_only(folder: Path) -> None:
    """Make a mounted tmpfs read-only (root ignores file modes: only the mount can refuse writes)."""
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True, capture_output=True)


def fill(folder: Path) -> Path:
    """Fill the file system of ``folder`` to the last byte; the filler file (delete it to free the room)."""
    filler = folder / "filler.bin"
    block = b"\0" * 65536
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(block)
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
        for size in (4096, 512, 1):  # the last partial blocks
            with contextlib.suppress(OSError):
                while True:
                    handle.write(b"\0" * size)
    return filler
