"""The starting context (§11.1): ``MAIA.md``, else ``CLAUDE.md``, else ``AGENTS.md`` in the launch folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CONTEXT_FILES = ("MAIA.md", "CLAUDE.md", "AGENTS.md")


@dataclass(frozen=True, slots=True)
class ContextFile:
    """The project instructions that were found."""

    path: Path
    text: str


def find_context_file(launch: Path) -> ContextFile | None:
    """The first of MAIA.md, CLAUDE.md, AGENTS.md in the launch folder (never its parents)."""
    for name in CONTEXT_FILES:
        path = launch / name
        if path.is_file():
            try:
                return ContextFile(path, path.read_text(encoding="utf-8-sig", errors="replace"))
            except OSError:
                continue
    return None
