"""Path rules (§9.3): the path the tool will open, judged as written and where it really is.

The tools and the engine share one normaliser, :func:`maia.core.paths.resolve_user_path` (white
space stripped, ``~`` expanded, relative to the launch folder, ``..`` resolved); the engine then
also follows symbolic links (``os.path.realpath``) and, on a case-insensitive file system, compares
without case. ``dir/**`` covers ``dir`` itself.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

from maia.core.globs import has_magic
from maia.core.paths import maia_home, normalise_user_path
from maia.permissions.match import path_glob

CONTEXT_FILES = ("MAIA.md", "AGENTS.md", "CLAUDE.md")
# what tells MAIA (and other agents) which servers to start and which agents to run
CONFIG_NAMES = (".mcp.json", ".agents")


@functools.lru_cache(maxsize=64)
def case_insensitive(folder: str) -> bool:
    """Whether the file system holding ``folder`` ignores case (macOS and Windows defaults)."""
    real = os.path.realpath(folder)
    head, tail = os.path.split(real)
    while tail and tail.lower() == tail.upper():  # no letter to flip: look at a parent
        head, tail = os.path.split(head)
    if not tail:
        return sys.platform in ("darwin", "win32")
    flipped = os.path.join(head, tail.swapcase())
    try:
        return os.path.samefile(os.path.join(head, tail), flipped)
    except OSError:
        return False


@functools.lru_cache(maxsize=4096)
def _pattern_at(pattern: str, anchor: str) -> str:
    if pattern.endswith("/"):
        pattern += "**"
    expanded = os.path.expanduser(pattern.strip())
    if os.path.isabs(expanded):
        return os.path.normpath(expanded)
    return os.path.normpath(os.path.join(anchor, expanded))


@functools.lru_cache(maxsize=64)
def _bases(launch: str) -> tuple[str, str]:
    """The launch folder as written and where it really is (it does not move during a run)."""
    return os.path.normpath(launch), os.path.realpath(launch)


@functools.lru_cache(maxsize=4096)
def _real(path: str) -> str:
    return os.path.realpath(path)


class Folders(dict[str, str]):
    """What :func:`locations` learns during one decision, never longer (links may appear between
    decisions): each folder's real path, and the names of the links in the folders many targets share."""

    __slots__ = ("links", "looks")

    def __init__(self) -> None:
        super().__init__()
        self.links: dict[str, frozenset[str] | None] = {}  # None: could not be listed
        self.looks: dict[str, int] = {}  # targets met in each folder not listed yet


_LISTED_AFTER = 4  # targets in one folder before it is listed rather than asked about name by name
_LISTING_LIMIT = 4096  # a folder holding more entries is asked about name by name


def _links_in(folder: str) -> frozenset[str] | None:
    """The names of the symbolic links in ``folder``; empty when it does not exist or is no folder
    (then nothing in it is a link); None when it cannot be listed or holds too many entries."""
    found: set[str] = set()
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= _LISTING_LIMIT:
                    return None
                if entry.is_symlink():
                    found.add(entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return frozenset()
    except OSError:  # permission (a name may still be looked up), a loop…: name by name
        return None
    return frozenset(found)


def _is_link(path: str, folder: str, name: str, folders: dict[str, str]) -> bool:
    """os.path.islink(path), answered from a listing of the folder when many targets share it."""
    if not isinstance(folders, Folders):
        return os.path.islink(path)
    links = folders.links.get(folder, _UNLISTED)
    if links is _UNLISTED:
        looks = folders.looks[folder] = folders.looks.get(folder, 0) + 1
        if looks < _LISTED_AFTER:
            return os.path.islink(path)
        # (the folder part of an absolute path: "" stands for /)
        links = folders.links[folder] = _links_in(folder or ("/" if path.startswith("/") else "."))
    if links is None:
        return os.path.islink(path)
    return name in links


_UNLISTED: frozenset[str] = frozenset({"/"})  # (no name holds a /)


# a relative path that normalising leaves as it is: names of non-blank ends, neither . nor .., one /
# apart, no ~ to expand (an absolute launch folder is put before it as it is)
_PLAIN_RELATIVE = re.compile(r"(?!\.\.?(?:/|$))[^/\s~][^/]*(?<!\s)(?:/(?!\.\.?(?:/|$))[^/]+)*(?<!\s)")


def locations(value: str, launch: Path, folders: dict[str, str] | None = None) -> tuple[str, str]:
    """(the path as written, normalised; the path links resolved), both absolute.

    ``folders`` caches resolved parent folders for the length of one decision (many targets share
    a folder; resolving walks every component), never longer: links may appear between decisions.
    A :class:`Folders` also lists the folders many targets share, rather than looking each up.
    """
    base = _bases(str(launch))[0]
    if _PLAIN_RELATIVE.fullmatch(value) and base.startswith("/") and not base.startswith("//") and len(base) > 1:
        lexical = base + "/" + value  # what normalise_user_path gives such a path (most targets)
    else:
        lexical = normalise_user_path(value, base)
    if folders is None:
        return lexical, os.path.realpath(lexical)
    parent, _slash, name = lexical.rpartition("/")
    if not name or _is_link(lexical, parent, name, folders):
        return lexical, os.path.realpath(lexical)
    real_parent = folders.get(parent)
    if real_parent is None:
        real_parent = folders[parent] = os.path.realpath(parent or "/")
    return lexical, real_parent.rstrip("/") + "/" + name


class _PathRule:
    """A path pattern compiled for one launch folder: anchored at the folder as written and at its
    real path, folded when the file system ignores case, ``dir/**`` also covering ``dir``."""

    __slots__ = ("fold", "lexical", "real")

    def __init__(self, pattern: str, launch: str, fold: bool) -> None:
        lexical_base, real_base = _bases(launch)
        self.fold = fold
        self.lexical = self._side(_pattern_at(pattern, lexical_base))
        self.real = self._side(_pattern_at(pattern, real_base))

    def _side(self, pattern: str) -> tuple[Callable[[str], bool], Callable[[str], bool] | None]:
        if self.fold:
            pattern = pattern.casefold()
        # dir/** also covers dir itself
        folder = path_glob(pattern[:-3]).fullmatch if pattern.endswith("/**") and len(pattern) > 3 else None
        return path_glob(pattern).fullmatch, folder

    def matches(self, lexical: str, real: str, for_allow: bool) -> bool:
        if self.fold:
            lexical, real = lexical.casefold(), real.casefold()
        full, folder = self.lexical
        lexical_hit = full(lexical) or (folder is not None and folder(lexical))
        if for_allow and not lexical_hit:
            return False
        if not for_allow and lexical_hit:
            return True
        full, folder = self.real
        return full(real) or (folder is not None and folder(real))


@functools.lru_cache(maxsize=4096)
def _path_rule(pattern: str, launch: str, fold: bool) -> _PathRule:
    return _PathRule(pattern, launch, fold)


def path_matches(
    pattern: str, value: str, launch: Path, *, for_allow: bool, where: tuple[str, str] | None = None
) -> bool:
    """Whether a path rule pattern covers ``value``.

    The path is compared twice: as written (normalised) and where it really is (links resolved,
    against the real launch folder). A deny or ask applies when either matches; an allow only when
    both do, so a link never lets a rule reach outside what it names. ``where`` is
    :func:`locations` of ``value`` when the caller already has it.
    """
    lexical, real = where if where is not None else locations(value, launch)
    folder = str(launch)
    return _path_rule(pattern, folder, case_insensitive(_bases(folder)[1])).matches(lexical, real, for_allow)


# --- protected paths ---------------------------------------------------------------------------------


def _inside(path: str, root: str, fold: bool) -> bool:
    if fold:
        path, root = path.casefold(), root.casefold()
    return path == root or path.startswith(root.rstrip("/") + "/")


def protected(value: str, launch: Path, where: tuple[str, str] | None = None) -> str | None:
    """The protected area a write to ``value`` reaches (``.maia/``, MAIA's home, ``.git/``, the
    project's MAIA.md / AGENTS.md / CLAUDE.md), or None."""
    lexical, real = where if where is not None else locations(value, launch)
    return ProtectedAreas(launch).reached(lexical, real)


class ProtectedAreas:
    """The protected areas of a launch folder, for many targets of one decision: MAIA_HOME and HOME
    are read once, when it is made (so make one per decision, never keep it)."""

    __slots__ = ("_around", "_base", "_fold", "_git_dirs", "_sides")

    def __init__(self, launch: Path) -> None:
        lexical_base, real_base = _bases(str(launch))
        self._base = real_base
        self._git_dirs: dict[str, bool] = {}
        self._around: dict[str, str | None] = {}  # _git_dir_around by the path's folder
        self._fold = case_insensitive(real_base)
        home = _home(os.environ.get("MAIA_HOME", ""), os.environ.get("HOME", ""))
        # per side (as written, links resolved): the areas, and what a path inside one starts with
        self._sides = tuple(
            (areas, frozenset(areas), tuple(area.rstrip("/") + "/" for area in areas))
            for areas in (_areas(lexical_base, home), _areas(real_base, home))
        )

    def reached(self, lexical: str, real: str) -> str | None:
        """The protected area a path reaches (:func:`locations` of it: as written, links resolved), or None."""
        fold = self._fold
        for path, (areas, exact, starts) in zip((lexical, real), self._sides, strict=True):
            # most paths are in no area: one comparison says so (without case folding only)
            if fold or path in exact or path.startswith(starts):
                for area in areas:
                    if _inside(path, area, fold):
                        return area
            if ".git" in (path.casefold() if fold else path):
                parts = path.casefold().split("/") if fold else path.split("/")
                if ".git" in parts:
                    return path[: path.casefold().find("/.git") + 5] if fold else path[: path.find("/.git") + 5]
        # the answer depends on the folder holding the path only (many targets share theirs), and the
        # text before the last / stands for that folder (os.path.dirname strips it the same way)
        slash = real.rfind("/")
        if slash < 0:
            return self._git_dir_around(real)
        holder = real[:slash]
        if holder in self._around:
            return self._around[holder]
        around = self._around[holder] = self._git_dir_around(real)
        return around

    def _git_dir_around(self, real: str) -> str | None:
        """A git directory not named .git (a bare repository shipped inside the project) that holds
        ``real``: a folder between it and the launch folder with HEAD, objects/ and refs/."""
        base = self._base.rstrip("/") + "/"
        folder = os.path.dirname(real)  # the folders holding the file: most share theirs (one look each)
        while folder.startswith(base):
            known = self._git_dirs.get(folder)
            if known is None:
                known = self._git_dirs[folder] = (
                    os.path.isfile(os.path.join(folder, "HEAD"))
                    and os.path.isdir(os.path.join(folder, "objects"))
                    and os.path.isdir(os.path.join(folder, "refs"))
                )
            if known:
                return folder
            folder = os.path.dirname(folder)
        return None


@functools.lru_cache(maxsize=16)
def _home(maia_home_variable: str, home_variable: str) -> str:
    """MAIA's home for these values of MAIA_HOME and HOME (resolving it touches the disk)."""
    return str(maia_home())


@functools.lru_cache(maxsize=64)
def _areas(base: str, home: str) -> tuple[str, ...]:
    return (
        os.path.join(base, ".maia"),
        os.path.normpath(home),
        _real(home),
        *(os.path.join(base, name) for name in CONTEXT_FILES),
        *(os.path.join(base, name) for name in CONFIG_NAMES),
    )


def names_area(pattern: str, area: str, launch: Path) -> bool:
    """Whether a rule names a protected area itself: the fixed start of its pattern lies inside it
    (``Write(.maia/settings.json)``, ``Edit(.git/**)``), which ``Write(**)`` does not."""
    fixed: list[str] = []
    for segment in os.path.expanduser(pattern.strip()).split("/"):
        if has_magic(segment):
            break
        fixed.append(segment)
    literal = "/".join(fixed)
    if not literal:
        return False
    bases = _bases(str(launch))
    fold = case_insensitive(bases[1])
    for base in bases:
        at = os.path.normpath(literal if os.path.isabs(literal) else os.path.join(base, literal))
        if _inside(at, area, fold) or _inside(os.path.realpath(at), area, fold):
            return True
        if area.endswith("/.git") and ".git" in at.split("/"):
            return True
    return False


def inside_launch(path: str, launch: Path) -> bool:
    """Whether ``path`` lies inside the launch folder both as the tools open it (normalised) and where
    it really leads (links resolved; a file not there yet: its nearest existing folder's real path,
    then the rest), against the launch folder's real path."""
    lexical, real = locations(path, launch)
    base, real_base = os.path.normpath(launch), os.path.realpath(launch)
    fold = case_insensitive(real_base)

    def within(candidate: str, root: str) -> bool:
        if fold:
            candidate, root = candidate.casefold(), root.casefold()
        return candidate == root or candidate.startswith(root.rstrip("/") + "/")

    return within(lexical, base) and within(real, real_base)
