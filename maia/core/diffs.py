"""Unified diffs of two contents, as ``diff -u`` prints them (approvals, ``/diff``, edits applied)."""

from __future__ import annotations

import difflib

from maia.i18n import _


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def unified_diff(before: bytes | None, after: bytes | None, name: str, context: int = 3) -> str:
    """``diff -u`` of two contents (None: the file does not exist)."""
    lines = difflib.unified_diff(
        _lines(before),
        _lines(after),
        fromfile="/dev/null" if before is None else f"a/{name}",
        tofile="/dev/null" if after is None else f"b/{name}",
        n=context,
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return text or _("{name}: no difference").format(name=name)


def text_diff(before: str | None, after: str, name: str, context: int = 3) -> str:
    """The diff a Write or Edit would make (for the approval question)."""
    return unified_diff(None if before is None else before.encode(), after.encode(), name, context)
