"""Linear-time matching for rule patterns: no regular expression, so no catastrophic backtracking.

Two kinds of pattern:

- **wildcards** (Bash commands, names, values): ``*`` is any text, everything else is literal. A
  star-only pattern is matched greedily, piece after piece, with ``str.find``: each piece is looked
  for once, left to right, so the work grows with the text, never with the number of stars.
- **path globs** (Read, Write, Edit, Glob, Grep, Redirect): ``**`` any depth, ``*`` and ``?``
  within a segment, ``[…]`` classes, ``{a,b}`` alternatives. They run as a set of positions (a
  Thompson simulation), memoised per (state set, character): one dictionary step per character.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass

MAX_ALTERNATIVES = 256  # a {a,b}{c,d}… pattern beyond this keeps its braces literal


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


# --- path globs -------------------------------------------------------------------------------------

# token kinds
_LIT, _ONE, _CLASS, _STAR, _GSTAR, _GSLASH = range(6)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: int
    text: str = ""  # the literal character
    test: Callable[[str], bool] | None = None  # for classes


def _expand_braces(pattern: str) -> list[str]:
    """``a{b,c}d`` → ``abd``, ``acd`` (nested, escapes kept); unbalanced braces stay literal."""
    results = [pattern]
    changed = True
    while changed:
        changed = False
        expanded: list[str] = []
        for item in results:
            span = _innermost_braces(item)
            if span is None:
                expanded.append(item)
                continue
            start, end, commas = span
            before, after = item[:start], item[end + 1 :]
            bounds = [start, *commas, end]
            for left, right in itertools.pairwise(bounds):
                expanded.append(before + item[left + 1 : right] + after)
            changed = True
            if len(expanded) > MAX_ALTERNATIVES:
                return [pattern.replace("{", "\\{").replace("}", "\\}")]
        results = expanded
    return results


def _innermost_braces(text: str) -> tuple[int, int, list[int]] | None:
    """The first ``{…}`` holding no other brace, with its top-level commas; None when there is none."""
    open_at = -1
    commas: list[int] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            close = text.find("]", i + 2)
            if close != -1:
                i = close + 1
                continue
        if ch == "{":
            open_at, commas = i, []
        elif ch == "," and open_at >= 0:
            commas.append(i)
        elif ch == "}" and open_at >= 0:
            return open_at, i, commas
        i += 1
    return None


def _class_test(body: str) -> Callable[[str], bool]:
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    singles: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            singles.add(body[i + 1])
            i += 2
        elif i + 2 < len(body) and body[i + 1] == "-":
            ranges.append((body[i], body[i + 2]))
            i += 3
        else:
            singles.add(body[i])
            i += 1

    def test(ch: str) -> bool:
        inside = ch in singles or any(low <= ch <= high for low, high in ranges)
        return inside != negate

    return test


def _tokens(pattern: str) -> tuple[_Token, ...]:
    out: list[_Token] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append(_Token(_GSLASH))
            i += 3
        elif pattern.startswith("**", i):
            out.append(_Token(_GSTAR))
            i += 2
        elif ch == "*":
            out.append(_Token(_STAR))
            i += 1
        elif ch == "?":
            out.append(_Token(_ONE))
            i += 1
        elif ch == "[" and pattern.find("]", i + 2) != -1:
            end = pattern.find("]", i + 2)
            out.append(_Token(_CLASS, test=_class_test(pattern[i + 1 : end])))
            i = end + 1
        elif ch == "\\" and i + 1 < len(pattern):
            out.append(_Token(_LIT, pattern[i + 1]))
            i += 2
        else:
            out.append(_Token(_LIT, ch))
            i += 1
    return tuple(out)


def _literal_run(tokens: tuple[_Token, ...]) -> tuple[_Token, ...]:
    """The leading literal characters of a token list."""
    end = 0
    while end < len(tokens) and tokens[end].kind == _LIT:
        end += 1
    return tokens[:end]


# A state is (alternative, position, inside): ``inside`` marks the loop of a ``**/`` token.
_State = tuple[int, int, bool]


class PathGlob:
    """A compiled path glob; :meth:`fullmatch` takes time linear in the path's length."""

    __slots__ = ("_alternatives", "_cache", "_prefix", "_simple", "_start")

    def __init__(self, pattern: str) -> None:
        self._alternatives = tuple(_tokens(p) for p in _expand_braces(pattern))
        self._cache: dict[tuple[frozenset[_State], str], frozenset[_State]] = {}
        self._start = self._closure({(a, 0, False) for a in range(len(self._alternatives))})
        # the literal start every match shares, and whether the pattern is just `literal` or
        # `literal**` (most path rules): then a string comparison decides
        prefixes = ["".join(t.text for t in _literal_run(tokens)) for tokens in self._alternatives]
        self._prefix = prefixes[0] if len(prefixes) == 1 else ""
        only = self._alternatives[0] if len(self._alternatives) == 1 else ()
        run = len(_literal_run(only))
        self._simple: str | None = None
        if only and run == len(only):
            self._simple = "exact"
        elif only and run == len(only) - 1 and only[-1].kind == _GSTAR:
            self._simple = "prefix"

    def _closure(self, states: set[_State]) -> frozenset[_State]:
        stack = list(states)
        seen = set(states)
        while stack:
            alt, pos, inside = stack.pop()
            tokens = self._alternatives[alt]
            if inside or pos >= len(tokens):
                continue
            kind = tokens[pos].kind
            follow: list[_State] = []
            if kind in (_STAR, _GSTAR):
                follow.append((alt, pos + 1, False))
            elif kind == _GSLASH:
                follow.extend(((alt, pos + 1, False), (alt, pos, True)))
            for state in follow:
                if state not in seen:
                    seen.add(state)
                    stack.append(state)
        return frozenset(seen)

    def _step(self, states: frozenset[_State], ch: str) -> frozenset[_State]:
        key = (states, ch)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        after: set[_State] = set()
        for alt, pos, inside in states:
            tokens = self._alternatives[alt]
            if inside:  # the `.*` of a `**/`: any character; a `/` may also end it
                after.add((alt, pos, True))
                if ch == "/":
                    after.add((alt, pos + 1, False))
                continue
            if pos >= len(tokens):
                continue
            token = tokens[pos]
            kind = token.kind
            if kind == _LIT:
                if ch == token.text:
                    after.add((alt, pos + 1, False))
            elif kind == _ONE:
                if ch != "/":
                    after.add((alt, pos + 1, False))
            elif kind == _CLASS:
                assert token.test is not None
                if token.test(ch):
                    after.add((alt, pos + 1, False))
            elif kind == _STAR:
                if ch != "/":
                    after.add((alt, pos, False))
            elif kind == _GSTAR:
                after.add((alt, pos, False))
        result = self._closure(after)
        if len(self._cache) > 20_000:
            self._cache.clear()
        self._cache[key] = result
        return result

    def fullmatch(self, text: str) -> bool:
        """Whether the whole path matches."""
        if self._simple == "exact":
            return text == self._prefix
        if not text.startswith(self._prefix):
            return False
        if self._simple == "prefix":
            return True
        states = self._start
        for ch in text:
            states = self._step(states, ch)
            if not states:
                return False
        return any(pos == len(self._alternatives[alt]) and not inside for alt, pos, inside in states)


@functools.lru_cache(maxsize=4096)
def path_glob(pattern: str) -> PathGlob:
    """Compile a path glob (cached)."""
    return PathGlob(pattern)
