"""Linear-time matching for rule patterns: no regular expression, so no catastrophic backtracking.

Two kinds of pattern:

- **wildcards** (Bash commands, names, values): ``*`` is any text, everything else is literal. A
  star-only pattern is matched greedily, piece after piece, with ``str.find``: each piece is looked
  for once, left to right, so the work grows with the text, never with the number of stars.
- **path globs** (Read, Write, Edit, Glob, Grep, Redirect): the one engine of :mod:`maia.core.globs`
  (``**`` any depth, ``*`` and ``?`` within a segment, ``[…]`` classes, ``{a,b}`` alternatives),
  re-exported here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

# path globs have one engine, shared with the Glob tool and `@` references
from maia.core.globs import MAX_ALTERNATIVES, PathGlob, path_glob

__all__ = ["MAX_ALTERNATIVES", "PathGlob", "Wildcard", "path_glob", "wildcard"]


# --- wildcards -----------------------------------------------------------------------------------


def _pieces_match(pieces: tuple[str, ...], text: str) -> bool:
    if len(pieces) == 1:
        return text == pieces[0]
    first, last = pieces[0], pieces[-1]
    if len(text) < len(first) + len(last) or not text.startswith(first) or not text.endswith(last):
        return False
    position = len(first)
    end = len(text) - len(last)
    for piece in pieces[1:-1]:
        if not piece:
            continue
        found = text.find(piece, position, end)
        if found < 0:
            return False
        position = found + len(piece)
    return True


@dataclass(frozen=True, slots=True)
class Wildcard:
    """A compiled ``*`` pattern; a final `` *`` also matches nothing (``cmd *`` covers ``cmd``)."""

    pieces: tuple[str, ...]
    head: tuple[str, ...] | None  # the pattern without its final " *", when it has one

    def fullmatch(self, text: str) -> bool:
        """Whether the whole text matches."""
        pieces = self.pieces
        if len(pieces) == 2 and not pieces[1]:  # `prefix*`, most rules (`git diff *`): one comparison or two
            return text.startswith(pieces[0]) or (self.head is not None and text == self.head[0])
        if self.head is not None and _pieces_match(self.head, text):
            return True
        return _pieces_match(pieces, text)

    @property
    def literal_prefix(self) -> str:
        """The text before the first ``*`` (used to index rules)."""
        return self.pieces[0]


@functools.lru_cache(maxsize=4096)
def wildcard(pattern: str) -> Wildcard:
    """Compile a ``*`` pattern."""
    head = tuple(pattern[:-2].split("*")) if pattern.endswith(" *") else None
    return Wildcard(tuple(pattern.split("*")), head)
