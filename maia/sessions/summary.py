"""The head of a session file a listing reads: the origins and the ``summary`` object written first.

Kept apart from the codec (which imports the content blocks): ``maia sessions list`` reads 500 files'
heads and never builds a message, so it never imports them (start-up cost, issue 29).
"""

from __future__ import annotations

import json
from typing import Any, Literal

Origin = Literal["chat", "ask", "subagent", "workflow"]
ORIGINS: tuple[Origin, ...] = ("chat", "ask", "subagent", "workflow")

SUMMARY_HEAD = 4096  # bytes a listing reads of each file (a summary takes a few hundred)
SUMMARY_START = '{"summary":'


def read_summary(head: str) -> dict[str, Any] | None:
    """The ``summary`` object at the start of a session file's text (None when the file has none: an
    older MAIA wrote it, or the head was cut inside it)."""
    if not head.startswith(SUMMARY_START):
        return None
    try:
        value, _end = json.JSONDecoder().raw_decode(head, len(SUMMARY_START))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
