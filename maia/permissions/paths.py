"""Path rules (§9.3): globs relative to the launch folder, ``~`` and ``..`` normalised, links resolved."""

from __future__ import annotations

import os
from pathlib import Path

from maia.globs import glob_regex


def _absolute(value: str, base: str) -> str:
    expanded = os.path.expanduser(value)
    return os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(base, expanded))


def _pattern_at(pattern: str, anchor: str) -> str:
    if pattern.endswith("/"):
        pattern += "**"
    expanded = os.path.expanduser(pattern)
    if os.path.isabs(expanded):
        return os.path.normpath(expanded)
    return os.path.normpath(os.path.join(anchor, expanded))


def path_matches(pattern: str, value: str, cwd: Path, *, for_allow: bool) -> bool:
    """Whether a path rule pattern covers ``value``.

    The path is compared twice: as written (``..`` and ``~`` normalised) and where it really is
    (symbolic links resolved, against the real launch folder). A deny or ask applies when either
    matches; an allow only when both do, so a link never lets a rule reach outside what it names.
    """
    lexical_base = os.path.normpath(str(cwd))
    real_base = os.path.realpath(str(cwd))
    lexical = _absolute(value, lexical_base)
    real = os.path.realpath(_absolute(value, real_base))
    lexical_hit = bool(glob_regex(_pattern_at(pattern, lexical_base)).fullmatch(lexical))
    real_hit = bool(glob_regex(_pattern_at(pattern, real_base)).fullmatch(real))
    return (lexical_hit and real_hit) if for_allow else (lexical_hit or real_hit)
