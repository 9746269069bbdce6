"""Untrusted text (a model's words, a tool's summary, a log) made inert before it reaches a terminal."""

from __future__ import annotations

from maia.core.inert import inert

__all__ = ["inert", "one_line"]


def one_line(text: str, limit: int = 200) -> str:
    """The text on one line (newlines as spaces), cut to ``limit`` characters, inert."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return inert(flat)
