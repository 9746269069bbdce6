"""The terminal layer's view of :mod:`maia.core.inert`: the same function, widths measured by blessed."""

from __future__ import annotations

from maia.core.inert import TABSIZE
from maia.core.inert import inert as _inert
from maia.frontends.terminal.metrics import length


def inert(text: str, tabsize: int = TABSIZE, column: int = 0) -> str:
    """:func:`maia.core.inert.inert` with tab stops counted in the terminal's own cells."""
    return _inert(text, tabsize, column, width=length)


def inert_line(text: str) -> str:
    """Like :func:`inert`, on one line: newlines shown as ``␤`` (window titles, list entries)."""
    return inert(text).replace("\n", "␤")
