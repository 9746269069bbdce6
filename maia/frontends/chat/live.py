"""An answer while it streams: finished blocks go to the log as they arrive, the unfinished one is shown live.

The text is cut into Markdown blocks (a blank line outside a code fence, or a closing fence, ends
a block). A finished block goes to the log, to be rendered as Markdown there; the block still
being written is shown as plain rows in the live area above the status line. A block taller than
the live area spills into the log line by line (rendered by the line renderer), so the beginning
of a long answer is always on screen or in the scrollback while it arrives, never held back.

Costs stay flat as the answer grows: text is made inert and wrapped as it comes (only the last
row of the current line is wrapped again), and a frame shows at most the live area's rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from maia.frontends.chat.fastmd import LineRenderer
from maia.frontends.terminal.inert import inert
from maia.frontends.terminal.metrics import layout, length, wrap

_FENCE = re.compile(r" {0,3}(```+|~~~+)")


@dataclass(frozen=True, slots=True)
class Block:
    """A finished Markdown block (source text), and its rows as they were shown live."""

    source: str
    shown: list[str]


@dataclass(frozen=True, slots=True)
class Lines:
    """Styled lines for the log as they are (a spilled block, rows of a very long line)."""

    lines: list[str]


Output = Block | Lines


@dataclass(slots=True)
class _Line:
    """The line being written: its finished rows and its last, unfinished row (inert text)."""

    rows: list[str] = field(default_factory=list)
    tail: str = ""  # the last row, still growing: the only text wrapped again when a piece arrives
    given: bool = False  # its first rows went to the log (a line taller than the live area); dropped here
    columns: int = 0  # display width so far (tab stops)


class LiveAnswer:
    """Feed it the pieces of an answer; it says what goes to the log and what stays live."""

    def __init__(self, width: int, room: int) -> None:
        self.width = max(10, width)
        self.room = max(1, room)
        self.text: list[str] = []  # the raw answer, for /copy
        self._hold = ""  # a carriage return at the end of a piece waits for a possible newline
        self._block: list[str] = []  # finished lines of the current block (inert)
        self._block_rows: list[str] = []
        self._line = _Line()
        self._fence: str | None = None
        self._spilled = False
        self._renderer = LineRenderer()

    # --- input ----------------------------------------------------------------------------------

    def feed(self, piece: str) -> list[Output]:
        """A piece of the answer arrived."""
        self.text.append(piece)
        piece = self._hold + piece
        self._hold = ""
        if piece.endswith("\r"):
            piece, self._hold = piece[:-1], "\r"
        out: list[Output] = []
        while piece:
            newline = piece.find("\n")
            chunk, piece = (piece, "") if newline < 0 else (piece[: newline + 1], piece[newline + 1 :])
            ended = chunk.endswith("\n")
            self._append(chunk[:-1].removesuffix("\r") if ended else chunk)
            if ended:
                out.extend(self._end_line())
        out.extend(self._spill())
        return out

    def _append(self, raw: str) -> None:
        line = self._line
        text = inert(raw, column=line.columns) if raw else ""
        if not text:
            return
        line.columns += length(text)
        tail = line.tail + text
        spans = layout(tail, self.width)
        line.rows.extend(tail[s:e] for s, e in spans[:-1])
        line.tail = tail[spans[-1][0] :]

    def _line_rows(self) -> list[str]:
        line = self._line
        return [*line.rows, line.tail] if line.rows or line.tail else []

    def _end_line(self) -> list[Output]:
        line = self._line
        text = "".join(line.rows) + line.tail
        shown = self._line_rows() or [""]
        given = line.given
        self._line = _Line()
        out: list[Output] = []
        if given:  # its beginning is already in the log as plain rows: the rest follows the same way
            out.append(Lines(shown))
            return out
        fence = _FENCE.match(text)
        if self._spilled:
            if not text.strip() and self._fence is None:
                return self._close_block()
            out.append(Lines(wrap(self._renderer.line(text), self.width)))
            if fence:
                self._toggle_fence(fence.group(1))
                if self._fence is None:
                    out.extend(self._close_block())
            return out
        if fence:
            opening = self._fence is None
            self._toggle_fence(fence.group(1))
            if opening and self._block:  # a fence starts a new block
                out.extend(self._close_block())
            self._add(text, shown)
            if not opening and self._fence is None:
                out.extend(self._close_block())
            return out
        if not text.strip() and self._fence is None:
            out.extend(self._close_block())
            return out
        self._add(text, shown)
        return out

    def _toggle_fence(self, marker: str) -> None:
        if self._fence is None:
            self._fence = marker
        elif marker.startswith(self._fence[0]) and len(marker) >= len(self._fence):
            self._fence = None

    def _add(self, text: str, shown: list[str]) -> None:
        self._block.append(text)
        self._block_rows.extend(shown)

    def _close_block(self) -> list[Output]:
        if self._spilled:
            self._spilled = False
            self._renderer = LineRenderer()
            return [Lines([""])]
        if not self._block:
            return []
        block = Block("\n".join(self._block), self._block_rows)
        self._block, self._block_rows = [], []
        return [block]

    def _spill(self) -> list[Output]:
        """Keep the live area within its room: the oldest finished lines, then rows, go to the log."""
        out: list[Output] = []
        line_rows = self._line_rows()
        if len(self._block_rows) + len(line_rows) <= self.room:
            return out
        if self._block:
            self._spilled = True
            lines: list[str] = []
            for text in self._block:
                lines.extend(wrap(self._renderer.line(text), self.width))
            out.append(Lines(lines))
            self._block, self._block_rows = [], []
        line = self._line
        extra = len(line_rows) - self.room
        if extra > 0:  # one line taller than the live area: its finished rows go as they are
            out.append(Lines(line_rows[:extra]))
            del line.rows[:extra]  # keep only what is live: the cost stays flat however long the line
            line.given = True
            self._spilled = True
        return out

    def finish(self) -> list[Output]:
        """The answer is complete: everything left goes to the log."""
        out: list[Output] = []
        if self._hold:
            self._hold = ""
            self._append("\r")
        if self._line.rows or self._line.tail:
            out.extend(self._end_line())
        out.extend(self._close_block())
        return out

    def abort(self) -> list[str]:
        """Interrupted: the rows shown live, as they were seen."""
        rows = [*self._block_rows, *self._line_rows()]
        self._block, self._block_rows, self._line = [], [], _Line()
        return rows

    # --- display --------------------------------------------------------------------------------

    def rows(self) -> list[str]:
        """What the live area shows."""
        return [*self._block_rows, *self._line_rows()]

    def resize(self, width: int, room: int) -> None:
        """The terminal changed size: wrap again what is live."""
        self.width, self.room = max(10, width), max(1, room)
        self._block_rows = [row for text in self._block for row in _rows(text, self.width)]
        line = self._line
        if not line.given and (line.rows or line.tail):
            text = "".join(line.rows) + line.tail
            spans = layout(text, self.width)
            line.rows = [text[s:e] for s, e in spans[:-1]]
            line.tail = text[spans[-1][0] :]

    @property
    def answer(self) -> str:
        """The raw answer so far."""
        return "".join(self.text)


def _rows(text: str, width: int) -> list[str]:
    return [text[s:e] for s, e in layout(text, width)]
