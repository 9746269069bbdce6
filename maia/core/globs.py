"""The one path-glob engine, shared by permission rules, the Glob tool and ``@`` references.

Syntax: ``**`` any depth (``**/`` zero or more folders), ``*`` and ``?`` within one segment,
``[…]`` classes (``!`` or ``^`` negates, ``a-z`` ranges, ``\\`` escapes), ``{a,b}`` alternatives
(nested; unbalanced braces stay literal), ``\\x`` a literal ``x``. An unclosed ``[`` is literal.

No regular expression: a pattern runs as a set of positions (a Thompson simulation) memoised per
(state set, character), so matching takes one dictionary step per character of the path, and
compiling takes one pass over the pattern. Compiling never raises: every string reads as some
pattern. :func:`check_glob` tells, for text a person or the model typed, what is probably a
mistake (a reversed range such as ``[z-a]`` matches nothing), as a :class:`GlobError`.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from maia.core.errors import UsageError
from maia.i18n import _

MAX_ALTERNATIVES = 256  # a {a,b}{c,d}… pattern beyond this keeps its braces literal
MAX_NESTING = 64  # and so does one whose {…} groups nest deeper than this


class GlobError(UsageError):
    """A glob a person or the model typed reads as something that cannot be meant (e.g. ``[z-a]``)."""

    def __init__(self, pattern: str, problem: str) -> None:
        super().__init__(_("Glob {pattern}: {problem}.").format(pattern=pattern, problem=problem))
        self.pattern = pattern
        self.problem = problem


def has_magic(text: str) -> bool:
    """Whether a path segment contains glob syntax."""
    return any(c in text for c in "*?[{")


# --- reading a pattern ----------------------------------------------------------------------------

# token kinds
_LIT, _ONE, _CLASS, _STAR, _GSTAR, _GSLASH = range(6)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: int
    text: str = ""  # the literal character
    test: Callable[[str], bool] | None = None  # for classes


def _class_ends(pattern: str) -> list[int]:
    """For each index, where a class opened by a ``[`` there ends (-1: none), in one pass.

    A class holds at least one character, so its ``]`` is looked for from two places on.
    """
    n = len(pattern)
    following = [-1] * (n + 3)  # following[j]: the first "]" at or after j
    for j in range(n - 1, -1, -1):
        following[j] = j if pattern[j] == "]" else following[j + 1]
    return [following[i + 2] for i in range(n)]


def _class_parts(body: str) -> tuple[bool, set[str], list[tuple[str, str]]]:
    """A class body → (negated, single characters, ranges)."""
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
    return negate, singles, ranges


def _class_test(body: str) -> Callable[[str], bool]:
    negate, singles, ranges = _class_parts(body)

    def test(ch: str) -> bool:
        inside = ch in singles or any(low <= ch <= high for low, high in ranges)
        return inside != negate

    return test


# A brace tree: a sequence of literal strings and groups; a group is a list of alternative sequences.
_Seq = list["str | list[_Seq]"]


def _brace_tree(pattern: str) -> _Seq | None:
    """Read ``{…}`` groups in one pass with a stack; a group never closed is put back as the text it was.
    None when groups nest deeper than ``MAX_NESTING``."""
    ends = _class_ends(pattern)
    root: _Seq = []
    stack: list[tuple[_Seq, list[_Seq]]] = []  # each open group: (the sequence it sits in, its alternatives)
    current = root
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            current.append(pattern[i : i + 2])
            i += 2
        elif ch == "[" and ends[i] != -1:
            current.append(pattern[i : ends[i] + 1])
            i = ends[i] + 1
        elif ch == "{":
            if len(stack) >= MAX_NESTING:
                return None  # deeper than anyone writes: the caller keeps the braces literal
            alternatives: list[_Seq] = [[]]
            stack.append((current, alternatives))
            current = alternatives[0]
            i += 1
        elif ch == "," and stack:
            stack[-1][1].append([])
            current = stack[-1][1][-1]
            i += 1
        elif ch == "}" and stack:
            parent, alternatives = stack.pop()
            parent.append(alternatives)
            current = parent
            i += 1
        else:
            current.append(ch)
            i += 1
    while stack:  # never closed: a literal "{", its alternatives joined by literal ","
        parent, alternatives = stack.pop()
        parent.append("{")
        for k, alternative in enumerate(alternatives):
            if k:
                parent.append(",")
            parent.extend(alternative)
    return root


def expand_braces(pattern: str) -> list[str]:
    """``a{b,c}d`` → ``abd``, ``acd`` (nested, escapes and classes kept); unbalanced braces stay literal,
    and so do all braces of a pattern with more than ``MAX_ALTERNATIVES`` alternatives or nested deeper
    than ``MAX_NESTING``."""
    tree = _brace_tree(pattern)
    if tree is None or _count(tree) > MAX_ALTERNATIVES:
        return [pattern.replace("{", "\\{").replace("}", "\\}")]
    return _strings(tree)


def _count(seq: _Seq) -> int:
    total = 1
    for item in seq:
        if not isinstance(item, str):
            total *= sum(_count(alternative) for alternative in item)
            if total > MAX_ALTERNATIVES:
                return total  # no need to count further
    return total


def _strings(seq: _Seq) -> list[str]:
    results = [""]
    for item in seq:
        if isinstance(item, str):
            results = [r + item for r in results]
        else:
            options = [s for alternative in item for s in _strings(alternative)]
            results = [r + o for r in results for o in options]
    return results


def _tokens(pattern: str) -> tuple[_Token, ...]:
    out: list[_Token] = []
    ends = _class_ends(pattern)
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
        elif ch == "[" and ends[i] != -1:
            end = ends[i]
            out.append(_Token(_CLASS, text=pattern[i : end + 1], test=_class_test(pattern[i + 1 : end])))
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


def _literal_tail(tokens: tuple[_Token, ...]) -> str:
    """The trailing literal characters of a token list."""
    start = len(tokens)
    while start > 0 and tokens[start - 1].kind == _LIT:
        start -= 1
    return "".join(t.text for t in tokens[start:])


# --- matching -------------------------------------------------------------------------------------

# A state is (alternative, position, inside): ``inside`` marks the loop of a ``**/`` token.
_State = tuple[int, int, bool]


class PathGlob:
    """A compiled path glob; :meth:`fullmatch` takes time linear in the path's length."""

    __slots__ = ("_alternatives", "_cache", "_prefix", "_simple", "_start", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._alternatives = tuple(_tokens(p) for p in expand_braces(pattern))
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

    @property
    def name_suffix(self) -> str:
        """The literal end of the file name every match has (``**/*.py`` → ``.py``; may be empty)."""
        tails = [_literal_tail(tokens).rsplit("/", 1)[-1] for tokens in self._alternatives]
        if not tails:
            return ""
        suffix = tails[0]
        for tail in tails[1:]:
            while suffix and not tail.endswith(suffix):
                suffix = suffix[1:]
        return suffix

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

    def matching(self, paths: Iterable[str]) -> list[str]:
        """The paths that :meth:`fullmatch`, in their order: the same answer, for a whole listing at once.

        A pattern of the form ``lead**/name`` (``**/*.py``, ``src/**/test_*.py``, ``**/*.{ts,tsx}``),
        where ``name`` has only literal characters and ``*``, matches a path when it starts with
        ``lead`` and its last segment matches ``name``: string tests decide it. Any other pattern
        steps through each folder (``a/b/``) once for all the paths under it.
        """
        if self._simple is not None:
            return list(filter(self.fullmatch, paths))
        plans = self._name_plans()
        if plans is not None and len(plans) == 1:
            lead, pieces = plans[0]
            if not lead and len(pieces) == 2 and not pieces[0]:  # `**/*suffix`, the most common glob
                # the suffix holds no "/": a path ending with it has a name ending with it
                return list(filter(operator.methodcaller("endswith", pieces[1]), paths))
            return [path for path in paths if _name_plan_matches(plans[0], path)]
        if plans is not None:
            return [path for path in paths if any(_name_plan_matches(plan, path) for plan in plans)]
        return self._matching_by_folder(paths)

    def _name_plans(self) -> list[tuple[str, list[str]]] | None:
        """Each alternative as (lead, the name's literal pieces between ``*``), or None if one is not of that form."""
        plans: list[tuple[str, list[str]]] = []
        for tokens in self._alternatives:
            lead = _literal_run(tokens)
            rest = tokens[len(lead) :]
            if not rest or rest[0].kind != _GSLASH:
                return None
            pieces = [""]
            for token in rest[1:]:
                if token.kind == _STAR:
                    pieces.append("")
                elif token.kind == _LIT and token.text != "/":
                    pieces[-1] += token.text
                else:
                    return None
            plans.append(("".join(t.text for t in lead), pieces))
        return plans

    def _matching_by_folder(self, paths: Iterable[str]) -> list[str]:
        prefix = self._prefix
        cache = self._cache
        step = self._step
        folders: dict[str, frozenset[_State]] = {"": self._start}
        accepting: dict[frozenset[_State], bool] = {}
        kept: list[str] = []
        for path in paths:
            if not path.startswith(prefix):
                continue
            cut = path.rfind("/") + 1
            states = folders.get(path[:cut])
            if states is None:
                states = self._folder_states(path[:cut], folders)
            for ch in path[cut:]:
                if not states:
                    break
                following = cache.get((states, ch))
                states = step(states, ch) if following is None else following
            if not states:
                continue
            verdict = accepting.get(states)
            if verdict is None:
                verdict = accepting[states] = any(
                    pos == len(self._alternatives[alt]) and not inside for alt, pos, inside in states
                )
            if verdict:
                kept.append(path)
        return kept

    def _folder_states(self, folder: str, folders: dict[str, frozenset[_State]]) -> frozenset[_State]:
        """The states after ``folder`` (which ends with ``/``), from its nearest known parent; each folder
        on the way is remembered (``folders`` holds ``""``)."""
        cuts = [len(folder)]  # the ends of the folder and of its parents not yet known, deepest first
        while folder[: cuts[-1]] not in folders:
            cuts.append(folder.rfind("/", 0, cuts[-1] - 1) + 1)
        at = cuts.pop()
        states = folders[folder[:at]]
        for end in reversed(cuts):
            for ch in folder[at:end]:
                if not states:
                    break
                states = self._step(states, ch)
            folders[folder[:end]] = states
            at = end
        return states


def _name_plan_matches(plan: tuple[str, list[str]], path: str) -> bool:
    """Whether ``path`` matches ``lead**/name`` given as (lead, name's pieces between ``*``)."""
    lead, pieces = plan
    if not path.startswith(lead):
        return False
    rest = path[len(lead) :]
    name = rest[rest.rfind("/") + 1 :]
    if len(pieces) == 1:
        return name == pieces[0]
    first, last = pieces[0], pieces[-1]
    if len(name) < len(first) + len(last) or not name.startswith(first) or not name.endswith(last):
        return False
    at, stop = len(first), len(name) - len(last)
    for piece in pieces[1:-1]:  # each literal between two stars, leftmost first
        at = name.find(piece, at, stop)
        if at < 0:
            return False
        at += len(piece)
    return True


@functools.lru_cache(maxsize=4096)
def path_glob(pattern: str) -> PathGlob:
    """Compile a path glob (cached); never raises."""
    return PathGlob(pattern)


# --- telling a person what is wrong ---------------------------------------------------------------


def glob_problem(pattern: str) -> str | None:
    """Why a typed glob cannot be what its author meant (one clause), or None when it reads well."""
    tree = _brace_tree(pattern)
    if tree is None:
        return _("its {{…}} groups nest more than {depth} deep").format(depth=MAX_NESTING)
    if _count(tree) > MAX_ALTERNATIVES:
        return _("it has more than {count} {{…}} alternatives").format(count=MAX_ALTERNATIVES)
    for alternative in expand_braces(pattern):
        for token in _tokens(alternative):
            if token.kind != _CLASS:
                continue
            for low, high in _class_parts(token.text[1:-1])[2]:
                if low > high:
                    return _("the range {range} in {cls} is reversed and matches nothing (write {fix})").format(
                        range=f"{low}-{high}", cls=token.text, fix=f"{high}-{low}"
                    )
    return None


def check_glob(pattern: str) -> PathGlob:
    """Compile a glob a person or the model typed; :class:`GlobError` when it cannot be what was meant."""
    problem = glob_problem(pattern)
    if problem is not None:
        raise GlobError(pattern, problem)
    return path_glob(pattern)
