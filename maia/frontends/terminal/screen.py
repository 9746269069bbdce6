"""The bottom area on the normal screen: each redraw writes only the cells that changed.

The frame (status line, input box, context bar, live answer rows) lives below the log. A redraw
compares the new rows with those on screen, cell by cell (a cell is a grapheme with its style),
and rewrites only the changed run of each changed row; the cursor moves relatively, so nothing
depends on where the frame is on the screen. Log lines are written over the top of the frame and
the frame is drawn again below them, so the log scrolls into the terminal's scrollback and the
frame never does. The whole screen is never erased from its top-left corner (tmux, with its
default ``scroll-on-clear``, would push the screen into the scrollback: the old ghost input box).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from wcwidth import iter_graphemes, iter_sequences

from maia.frontends.terminal.metrics import grapheme_width

if TYPE_CHECKING:
    from blessed import Terminal

_RESETS = frozenset({"\x1b[m", "\x1b[0m", "\x1b(B\x1b[m", "\x1b(B\x1b[0m"})
_LINK_END = "\x1b]8;;\x1b\\"


@dataclass(frozen=True, slots=True)
class Cell:
    """One grapheme on screen and the escape sequences (style, hyperlink) it is drawn with."""

    text: str
    style: str
    width: int


def cells(line: str) -> list[Cell]:
    """A styled line split into cells."""
    out: list[Cell] = []
    sgr = ""
    link = ""
    for segment, is_sequence in iter_sequences(line):
        if is_sequence:
            if segment.startswith("\x1b]8;"):
                link = "" if segment == _LINK_END else segment
            elif segment in _RESETS:
                sgr = ""
            elif segment.endswith("m"):
                sgr += segment
            continue
        style = sgr + link
        for cluster in iter_graphemes(segment):
            out.append(Cell(cluster, style, grapheme_width(cluster)))
    return out


def _xterm_up(n: int) -> str:
    return f"\x1b[{n}A"


def _xterm_down(n: int) -> str:
    return f"\x1b[{n}B"


def _xterm_right(n: int) -> str:
    return f"\x1b[{n}C"


def parameterized(term: Terminal, name: str) -> Callable[[int], str]:
    """A terminfo capability that takes a number (``cuu``, ``cud``, ``cuf``) as a function."""
    capability = cast(Callable[[int], object], getattr(term, name))
    return lambda n: str(capability(n))


@dataclass(frozen=True, slots=True)
class Caps:
    """The cursor and erase sequences of the terminal (blessed's terminfo capabilities)."""

    up: Callable[[int], str] = _xterm_up
    down: Callable[[int], str] = _xterm_down
    right: Callable[[int], str] = _xterm_right
    clear_eol: str = "\x1b[K"
    clear_eos: str = "\x1b[J"
    hide_cursor: str = "\x1b[?25l"
    show_cursor: str = "\x1b[?25h"
    normal: str = "\x1b[m"
    wrap_off: str = "\x1b[?7l"  # auto-margins off (rmam) and on again (smam)
    wrap_on: str = "\x1b[?7h"

    @classmethod
    def of(cls, term: Terminal) -> Caps:
        """The capabilities of a blessed Terminal."""
        return cls(
            up=parameterized(term, "cuu"),
            down=parameterized(term, "cud"),
            right=parameterized(term, "cuf"),
            clear_eol=str(term.clear_eol),
            clear_eos=str(term.clear_eos),
            hide_cursor=str(term.hide_cursor),
            show_cursor=str(term.normal_cursor),
            normal=str(term.normal),
            # DEC private mode 7, known to every terminal that moves the cursor, where terminfo does not
            # say it (tmux's own entry)
            wrap_off=str(term.rmam) or "\x1b[?7l",
            wrap_on=str(term.smam) or "\x1b[?7h",
        )

    @property
    def can_redraw(self) -> bool:
        """Moving up and erasing are possible (not on ``TERM=dumb``)."""
        return bool(self.up(1) and self.clear_eol and self.clear_eos)


@dataclass(slots=True)
class Screen:
    """What the frame looks like on the terminal, and the sequences that bring it up to date."""

    rows: list[list[Cell]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    cursor_row: int = 0  # the terminal cursor's row, counted from the frame's first row
    cursor_col: int = 0
    cursor_visible: bool = True
    caps: Caps = field(default_factory=Caps)
    stale: bool = False  # after a resize the rows on screen are unknown: redraw them all

    def _move(self, row: int, col: int) -> str:
        out = ""
        if row < self.cursor_row:
            out += self.caps.up(self.cursor_row - row)
        elif row > self.cursor_row:
            # line feeds, not a cursor-down: below the last row they scroll instead of stopping, so a frame
            # still on its way when the window got shorter keeps its rows where its moves expect them
            out += "\n" * (row - self.cursor_row)
        if col != self.cursor_col or out:
            out += "\r" + (self.caps.right(col) if col else "")
        self.cursor_row, self.cursor_col = row, col
        return out

    def _cursor(self, cursor: tuple[int, int] | None) -> str:
        out = ""
        if cursor is None:
            if self.cursor_visible:
                out += self.caps.hide_cursor
                self.cursor_visible = False
            # the hidden cursor waits on the frame's first row, column 0: whatever a resize does to the
            # rows (a terminal that reflows them keeps the cursor on its line, one that does not keeps
            # its row; a shorter window drops rows below it first), the frame still starts at the cursor
            return out + self._move(0, 0)
        out += self._move(*cursor)
        if not self.cursor_visible:
            out += self.caps.show_cursor
            self.cursor_visible = True
        return out

    def draw(self, lines: list[str], cursor: tuple[int, int] | None, log: list[str] | None = None) -> str:
        """The output that turns the frame on screen into ``lines`` (with ``log`` lines printed above it).

        A whole frame, and any frame while the cursor is hidden (an answer streams), is drawn with the
        terminal's automatic wrapping off: a frame still on its way when the window gets narrower has its
        rows cut at the edge instead of wrapped onto more rows, so the cursor moves (relative) still land
        where they should and the frame's first row stays where it was.
        """
        if log or not self.rows or self.stale:
            return self._full(lines, cursor, log or [])
        out: list[str] = []
        new_rows = [
            self.rows[n] if n < len(self.lines) and self.lines[n] == line else cells(line)
            for n, line in enumerate(lines)
        ]
        common = min(len(new_rows), len(self.rows))
        for n in range(common):
            if n < len(self.lines) and self.lines[n] == lines[n]:
                continue
            out.append(self._row_diff(n, self.rows[n], new_rows[n]))
        if len(new_rows) > len(self.rows):
            last = len(self.rows) - 1
            out.append(self._move(last, sum(c.width for c in self.rows[last])) if self.rows else "")
            for n in range(len(self.rows), len(new_rows)):
                out.append("\r\n" + _paint(new_rows[n], self.caps.normal) + self.caps.clear_eol)
                self.cursor_row, self.cursor_col = n, sum(c.width for c in new_rows[n])
        elif len(new_rows) < len(self.rows):
            out.append(self._move(len(new_rows), 0) + self.caps.clear_eos)
        self.rows, self.lines = new_rows, list(lines)
        out.append(self._cursor(cursor))
        changes = "".join(out)
        if not changes or cursor is not None:  # the idle prompt's ticks change a cell or two: nothing to cut
            return changes
        return self.caps.wrap_off + changes + self.caps.wrap_on

    def _row_diff(self, row: int, old: list[Cell], new: list[Cell]) -> str:
        start = 0
        while start < len(old) and start < len(new) and old[start] == new[start]:
            start += 1
        old_end, new_end = len(old), len(new)
        old_width = sum(c.width for c in old)
        new_width = sum(c.width for c in new)
        if old_width == new_width:  # same columns after the change: an unchanged tail can stay
            while old_end > start and new_end > start and old[old_end - 1] == new[new_end - 1]:
                old_end -= 1
                new_end -= 1
        column = sum(c.width for c in new[:start])
        out = self._move(row, column) + _paint(new[start:new_end], self.caps.normal)
        self.cursor_col = column + sum(c.width for c in new[start:new_end])
        if new_end == len(new) and new_width < old_width:
            out += self.caps.clear_eol
        return out

    def _full(self, lines: list[str], cursor: tuple[int, int] | None, log: list[str]) -> str:
        """Log lines over the frame's first row, then the whole frame below them."""
        out = [self._move(0, 0) if self.rows else "\r"]
        # after a resize, rows a terminal reflowed keep their "wrapped" mark (tmux) and would be joined
        # to the next row when the window widens again: erasing each row from column 0 first drops it
        fresh = self.caps.clear_eol if self.stale else ""
        for line in log:  # wrapped by the terminal if it is narrower than they are: nothing is lost
            out.append(fresh + line + self.caps.clear_eol + "\r\n")
        out.append(self.caps.wrap_off)
        rows = [cells(line) for line in lines]
        for n, row in enumerate(rows):
            end = "\r\n" if n < len(rows) - 1 else ""
            out.append(fresh + _paint(row, self.caps.normal) + self.caps.clear_eol + end)
        if log or self.rows:
            out.append(self.caps.clear_eos)  # below the frame: never from the screen's top-left corner
        self.rows, self.lines, self.stale = rows, list(lines), False
        self.cursor_row = len(rows) - 1
        self.cursor_col = sum(c.width for c in rows[-1]) if rows else 0
        out.append(self._cursor(cursor))
        out.append(self.caps.wrap_on)
        return "".join(out)

    def erase(self) -> str:
        """Remove the frame (the cursor ends where its first row was)."""
        if not self.rows:
            return ""
        out = []
        for row in range(len(self.rows) - 1, -1, -1):  # row by row: no erase from the top-left corner
            move = self._move(row, 0)
            out.append((move if move.endswith("\r") else move + "\r") + self.caps.clear_eol)
        self.rows, self.lines = [], []
        self.cursor_row = self.cursor_col = 0
        if not self.cursor_visible:
            out.append(self.caps.show_cursor)
            self.cursor_visible = True
        return "".join(out)

    def forget(self, rows_above_cursor: int) -> None:
        """After a resize: the frame's rows are unknown; its first row is ``rows_above_cursor`` above the cursor."""
        self.cursor_row = rows_above_cursor
        self.cursor_col = -1  # unknown: the next move starts with a carriage return
        self.rows = [[] for _ in range(rows_above_cursor + 1)]
        self.lines = []
        self.stale = True


def _paint(row: list[Cell], normal: str = "\x1b[m") -> str:
    """Cells as text, each style switched only where it changes, reset at the end."""
    out: list[str] = []
    style = ""
    for cell in row:
        if cell.style != style:
            if style:
                out.append(normal + (_LINK_END if _has_link(style) else ""))
            out.append(cell.style)
            style = cell.style
        out.append(cell.text)
    if style:
        out.append(normal + (_LINK_END if _has_link(style) else ""))
    return "".join(out)


def _has_link(style: str) -> bool:
    return "\x1b]8;" in style
