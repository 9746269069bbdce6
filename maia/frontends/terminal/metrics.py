"""Display widths as the terminal in use draws them: blessed's ``length``, ``wrap``, ``truncate``.

Widths depend on the terminal (an emoji with VS16 or a ZWJ sequence is one cell in some, two in
others; blessed and wcwidth know which from ``term_program``), so every width MAIA computes goes
through the :class:`blessed.Terminal` the chat runs in. The renderers are pure functions of state and
width; they read the terminal from here: :func:`use_terminal` sets it when the chat starts, and a
headless terminal (``xterm-256color``, no output) stands in for tests and benchmarks.
"""

from __future__ import annotations

import functools
import io
from typing import TYPE_CHECKING

from wcwidth import iter_graphemes

if TYPE_CHECKING:
    from blessed import Terminal

_terminal: Terminal | None = None


def headless_terminal(kind: str = "xterm-256color") -> Terminal:
    """A blessed Terminal that writes nowhere and asks the terminal nothing (tests, benchmarks)."""
    import blessed

    return blessed.Terminal(kind=kind, stream=io.StringIO(), force_styling=True)


def terminal() -> Terminal:
    """The terminal widths are measured for."""
    global _terminal
    if _terminal is None:
        _terminal = headless_terminal()
    return _terminal


def use_terminal(term: Terminal) -> None:
    """Measure for ``term`` from now on."""
    global _terminal
    _terminal = term
    _grapheme_width.cache_clear()


def length(text: str) -> int:
    """Columns ``text`` takes (escape sequences excluded, wide characters and emoji as the terminal draws them)."""
    return terminal().length(text)


def truncate(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns: styles kept, a wide character never cut in half."""
    if width <= 0:
        return ""
    if length(text) <= width:
        return text
    return terminal().truncate(text, width)


def wrap(text: str, width: int) -> list[str]:
    """Text wrapped at ``width`` columns at word boundaries; line breaks and leading indentation kept."""
    width = max(1, width)
    lines: list[str] = []
    term = terminal()
    for line in text.split("\n"):
        if not line.strip():
            lines.append("")
        elif length(line) <= width:
            lines.append(line.rstrip())
        else:
            lines.extend(term.wrap(line, width) or [""])
    return lines


@functools.lru_cache(maxsize=4096)
def _grapheme_width(cluster: str) -> int:
    if cluster == "\t":
        return 4  # only the input box holds tabs (pasted); it shows each as four spaces
    return terminal().length(cluster)


def grapheme_width(cluster: str) -> int:
    """Columns of one grapheme cluster."""
    return _grapheme_width(cluster)


def layout(text: str, width: int, start: int = 0) -> list[tuple[int, int]]:
    """Rows of plain ``text`` wrapped at ``width`` columns, as ``(start, end)`` offsets into ``text``.

    Greedy word wrap on grapheme clusters: a row breaks after its last space; a word longer than
    a row is cut between clusters, never inside one. A space that does not fit stays at the end
    of its row (one column over, so the cursor can stand after it). A newline ends its row (the
    offsets exclude it). Rows before the last never change when text is appended, which lets a
    streamed answer be wrapped incrementally.
    """
    width = max(1, width)
    rows: list[tuple[int, int]] = []
    row_start = start
    used = 0
    last_break = -1  # offset just after the last space of the current row
    used_at_break = 0
    pos = start
    for cluster in iter_graphemes(text, start):
        end = pos + len(cluster)
        if cluster == "\n":
            rows.append((row_start, pos))
            row_start, used, last_break = end, 0, -1
            pos = end
            continue
        w = _grapheme_width(cluster)
        if cluster == " ":
            if used + w > width:  # the space hangs at the end of the row
                rows.append((row_start, end))
                row_start, used, last_break = end, 0, -1
            else:
                used += w
                last_break, used_at_break = end, used
            pos = end
            continue
        if used + w > width and pos > row_start:
            if last_break > row_start:
                rows.append((row_start, last_break))
                row_start = last_break
                used -= used_at_break
            else:
                rows.append((row_start, pos))
                row_start, used = pos, 0
            last_break = -1
        used += w
        pos = end
    rows.append((row_start, len(text)))
    return rows
