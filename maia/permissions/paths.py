"""Path rules (§9.3): the path the tool will open, judged as written and where it really is.

The tools and the engine share one normaliser, :func:`maia.paths.resolve_user_path` (white
space stripped, ``~`` expanded, relative to the launch folder, ``..`` resolved); the engine then
also follows symbolic links (``os.path.realpath``) and, on a case-insensitive file system, compares
without case. ``dir/**`` covers ``dir`` itself.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from maia.globs import has_magic
from maia.paths import maia_home, resolve_user_path
from maia.permissions.match import path_glob

CONTEXT_FILES = ("MAIA.md", "AGENTS.md", "CLAUDE.md")


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


def locations(value: str, cwd: Path) -> tuple[str, str]:
    """(the path as written, normalised; the path links resolved), both absolute."""
    lexical = str(resolve_user_path(value, Path(os.path.normpath(str(cwd)))))
    return lexical, os.path.realpath(lexical)


def path_matches(pattern: str, value: str, cwd: Path, *, for_allow: bool) -> bool:
    """Whether a path rule pattern covers ``value``.

    The path is compared twice: as written (normalised) and where it really is (links resolved,
    against the real launch folder). A deny or ask applies when either matches; an allow only when
    both do, so a link never lets a rule reach outside what it names.
    """
    lexical_base = os.path.normpath(str(cwd))
    real_base = os.path.realpath(str(cwd))
    lexical, real = locations(value, cwd)
    fold = case_insensitive(real_base)
    lexical_hit = _glob_matches(_pattern_at(pattern, lexical_base), lexical, fold)
    real_hit = _glob_matches(_pattern_at(pattern, real_base), real, fold)
    return (lexical_hit and real_hit) if for_allow else (lexical_hit or real_hit)


# --- protected paths ---------------------------------------------------------------------------------


def _inside(path: str, root: str, fold: bool) -> bool:
    if fold:
        path, root = path.casefold(), root.casefold()
    return path == root or path.startswith(root.rstrip("/") + "/")


def protected(value: str, cwd: Path) -> str | None:
    """The protected area a write to ``value`` reaches (``.maia/``, MAIA's home, ``.git/``, the
    project's MAIA.md / AGENTS.md / CLAUDE.md), or None."""
    lexical, real = locations(value, cwd)
    fold = case_insensitive(os.path.realpath(str(cwd)))
    for path, base in ((lexical, os.path.normpath(str(cwd))), (real, os.path.realpath(str(cwd)))):
        for area in _areas(base):
            if _inside(path, area, fold):
                return area
        parts = path.casefold().split("/") if fold else path.split("/")
        if ".git" in parts:
            return path[: path.casefold().find("/.git") + 5] if fold else path[: path.find("/.git") + 5]
    return None


def _areas(base: str) -> list[str]:
    home = str(maia_home())
    return [
        os.path.join(base, ".maia"),
        os.path.normpath(home),
        os.path.realpath(home),
        *(os.path.join(base, name) for name in CONTEXT_FILES),
    ]


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
    fold = case_insensitive(os.path.realpath(str(cwd)))
    for base in (os.path.normpath(str(cwd)), os.path.realpath(str(cwd))):
        at = os.path.normpath(literal if os.path.isabs(literal) else os.path.join(base, literal))
        if _inside(at, area, fold) or _inside(os.path.realpath(at), area, fold):
            return True
        if area.endswith("/.git") and ".git" in at.split("/"):
            return True
    return False
