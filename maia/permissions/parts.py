"""What a Bash command runs, as both readers (the plain grammar and tree-sitter) report it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Stands for text only known when the command runs ($X, $(…), the arguments xargs adds…).
# Rule patterns never contain it, so only a ``*`` can match it.
DYN = "\x00"

_DYNAMIC_TARGET = re.compile(r"[$`*?\[\]{}]")
_DYNAMIC_PROGRAM = re.compile(r"[*?\[\]{}]")


_NO_INDEXES: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True, init=False)
class Part:
    """One simple command: its words (program first) and its ``NAME=value`` prefix."""

    words: tuple[str, ...]
    assignments: tuple[str, ...] = ()
    opaque: bool = False  # runs something nobody can see (a shell reading a pipe, python -c…)
    via: str | None = None  # the program that runs it (a wrapper)
    why: str | None = None  # for an opaque part: what cannot be seen
    position: int = 0  # where it starts in the command text (order of execution)
    group: int = 0  # parts of one pipeline share a group: they run at the same time
    # indexes of words that undergo pathname expansion and may become anything, even an option
    open_words: frozenset[int] = frozenset()
    folder_moved: bool = False  # an earlier part changed folder (cd, pushd…): where it runs is unknown

    def __new__(
        cls,
        words: tuple[str, ...],
        assignments: tuple[str, ...] = (),
        opaque: bool = False,
        via: str | None = None,
        why: str | None = None,
        position: int = 0,
        group: int = 0,
        open_words: frozenset[int] = _NO_INDEXES,
        folder_moved: bool = False,
    ) -> Part:
        part = _Unsealed()
        part.words = words
        part.assignments = assignments
        part.opaque = opaque
        part.via = via
        part.why = why
        part.position = position
        part.group = group
        part.open_words = open_words
        part.folder_moved = folder_moved
        part.__class__ = cls  # type: ignore[assignment]  # sealed: from now on frozen like any Part
        return part  # type: ignore[return-value]

    @property
    def program(self) -> str:
        """The program word as bash would look it up (may contain DYN)."""
        return self.words[0] if self.words else ""

    @property
    def program_dynamic(self) -> bool:
        """The program is only known at run time: such a part is never allowed."""
        program = self.program
        if program in ("[", "[["):
            return False
        return not self.words or DYN in program or bool(_DYNAMIC_PROGRAM.search(program))

    def key(self) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
        """What matters for matching rules (position aside)."""
        return self.words, self.assignments, self.opaque


@dataclass(frozen=True, slots=True, init=False)
class Redirect:
    """An output redirection to a file."""

    target: str
    operator: str
    position: int = 0
    group: int = 0
    certain: bool = True  # False when the target is known but what it points to is not (links, cd…)
    why: str | None = None
    base: str | None = None  # the folder a relative target starts from, when a cd moved it there

    def __new__(
        cls,
        target: str,
        operator: str,
        position: int = 0,
        group: int = 0,
        certain: bool = True,
        why: str | None = None,
        base: str | None = None,
    ) -> Redirect:
        redirect = _UnsealedRedirect()
        redirect.target = target
        redirect.operator = operator
        redirect.position = position
        redirect.group = group
        redirect.certain = certain
        redirect.why = why
        redirect.base = base
        redirect.__class__ = cls  # type: ignore[assignment]  # sealed (see Part)
        return redirect  # type: ignore[return-value]

    @property
    def dynamic(self) -> bool:
        """The target is only known at run time (variables, globs, braces…)."""
        return DYN in self.target or bool(_DYNAMIC_TARGET.search(self.target))


class _Unsealed:
    """A Part being filled in: the same slots, in the same order, set by plain assignment, then made
    a Part by changing its class. A frozen dataclass must set each field through
    ``object.__setattr__``, four times slower, and a 100 KB command makes thousands of parts."""

    __slots__ = Part.__slots__  # the same layout, or sealing fails
    words: tuple[str, ...]
    assignments: tuple[str, ...]
    opaque: bool
    via: str | None
    why: str | None
    position: int
    group: int
    open_words: frozenset[int]
    folder_moved: bool


class _UnsealedRedirect:
    """A Redirect being filled in (see _Unsealed)."""

    __slots__ = Redirect.__slots__
    target: str
    operator: str
    position: int
    group: int
    certain: bool
    why: str | None
    base: str | None


@dataclass(slots=True)
class Reading:
    """Everything a command would run and write to, and what made the reading unsure."""

    parts: list[Part] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    substitution: bool = False
    uncertain: list[str] = field(default_factory=list)
    # when the parse is unsure: a rough lexical reading, used only to find reasons to deny or ask
    fallback_parts: list[Part] = field(default_factory=list)
    fallback_redirects: list[Redirect] = field(default_factory=list)

    def merge(self, other: Reading) -> None:
        """Add another reading (an inner script) to this one."""
        self.parts.extend(other.parts)
        self.redirects.extend(other.redirects)
        self.substitution = self.substitution or other.substitution
        self.uncertain.extend(other.uncertain)
        self.fallback_parts.extend(other.fallback_parts)
        self.fallback_redirects.extend(other.fallback_redirects)
