"""Path rules (§9.3): the path the tool will open, judged as written and where it really is.

The tools and the engine share one normaliser, :func:`maia.core.paths.resolve_user_path` (white
space stripped, ``~`` expanded, relative to the launch folder, ``..`` resolved); the engine then
also follows symbolic links (``os.path.realpath``) and, on a case-insensitive file system, compares
without case. ``dir/**`` covers ``dir`` itself.
"""

from __future__ import annotations

import functools
import os
import sys
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


def _glob_matches(pattern: str, path: str, fold: bool) -> bool:
    if fold:
        pattern, path = pattern.casefold(), path.casefold()
    if path_glob(pattern).fullmatch(path):
        return True
    # dir/** also covers dir itself
    return pattern.endswith("/**") and len(pattern) > 3 and path_glob(pattern[:-3]).fullmatch(path)


@functools.lru_cache(maxsize=64)
def _bases(cwd: str) -> tuple[str, str]:
    """The launch folder as written and where it really is (it does not move during a run)."""
    return os.path.normpath(cwd), os.path.realpath(cwd)


@functools.lru_cache(maxsize=4096)
def _real(path: str) -> str:
    return os.path.realpath(path)


def locations(value: str, cwd: Path, folders: dict[str, str] | None = None) -> tuple[str, str]:
    """(the path as written, normalised; the path links resolved), both absolute.

    ``folders`` caches resolved parent folders for the length of one decision (many targets share
    a folder; resolving walks every component), never longer: links may appear between decisions.
    """
    lexical = normalise_user_path(value, _bases(str(cwd))[0])
    if folders is None:
        return lexical, os.path.realpath(lexical)
    parent, _slash, name = lexical.rpartition("/")
    if not name or os.path.islink(lexical):
        return lexical, os.path.realpath(lexical)
    real_parent = folders.get(parent)
    if real_parent is None:
        real_parent = folders[parent] = os.path.realpath(parent or "/")
    return lexical, real_parent.rstrip("/") + "/" + name


def path_matches(pattern: str, value: str, cwd: Path, *, for_allow: bool, where: tuple[str, str] | None = None) -> bool:
    """Whether a path rule pattern covers ``value``.

    The path is compared twice: as written (normalised) and where it really is (links resolved,
    against the real launch folder). A deny or ask applies when either matches; an allow only when
    both do, so a link never lets a rule reach outside what it names. ``where`` is
    :func:`locations` of ``value`` when the caller already has it.
    """
    lexical_base, real_base = _bases(str(cwd))
    lexical, real = where if where is not None else locations(value, cwd)
    fold = case_insensitive(real_base)
    lexical_hit = _glob_matches(_pattern_at(pattern, lexical_base), lexical, fold)
    real_hit = _glob_matches(_pattern_at(pattern, real_base), real, fold)
    return (lexical_hit and real_hit) if for_allow else (lexical_hit or real_hit)


# --- protected paths ---------------------------------------------------------------------------------


def _inside(path: str, root: str, fold: bool) -> bool:
    if fold:
        path, root = path.casefold(), root.casefold()
    return path == root or path.startswith(root.rstrip("/") + "/")


def protected(value: str, cwd: Path, where: tuple[str, str] | None = None) -> str | None:
    """The protected area a write to ``value`` reaches (``.maia/``, MAIA's home, ``.git/``, the
    project's MAIA.md / AGENTS.md / CLAUDE.md), or None."""
    lexical, real = where if where is not None else locations(value, cwd)
    return ProtectedAreas(cwd).reached(lexical, real)


class ProtectedAreas:
    """The protected areas of a launch folder, for many targets of one decision: MAIA_HOME and HOME
    are read once, when it is made (so make one per decision, never keep it)."""

    __slots__ = ("_base", "_fold", "_git_dirs", "_sides")

    def __init__(self, cwd: Path) -> None:
        lexical_base, real_base = _bases(str(cwd))
        self._base = real_base
        self._git_dirs: dict[str, bool] = {}
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
        return self._git_dir_around(real)

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


def names_area(pattern: str, area: str, cwd: Path) -> bool:
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
    bases = _bases(str(cwd))
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
