"""Choosing the engine and shaping the Grep and Glob answers the model reads."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from maia.core.globs import check_glob, has_magic
from maia.i18n import _
from maia.search import FileHit, GrepQuery, cut_line, display_path, fallback, find_ripgrep, rg
from maia.search.fallback import glob_filter
from maia.search.regex import compile_python


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """The text for the model, and how much was left out."""

    text: str
    shown: int
    total: int | None


def _engine(prefer: str | None) -> str | None:
    choice = prefer or os.environ.get("MAIA_SEARCH_ENGINE", "")
    if choice == "python":
        return None
    return find_ripgrep()


async def grep_hits(query: GrepQuery, *, head_limit: int = 0, engine: str | None = None) -> list[FileHit]:
    """The hits of a query, from ripgrep when available, else from the Python engine."""
    compile_python(query.pattern, query.ignore_case)  # the same clear error whichever engine runs
    # one more than asked, so that the answer can tell there was more; both engines stop at exactly
    # this point (a file's lines may be cut), so their answers are the same text
    max_files = head_limit + 1 if head_limit and query.mode != "content" else 0
    max_lines = head_limit + 1 if head_limit and query.mode == "content" else 0
    binary = _engine(engine)
    if binary is not None and not query.root.is_file():
        keep = glob_filter(query.glob) if query.glob else None
        return await rg.grep(binary, query, query.root, keep=keep, max_files=max_files, max_lines=max_lines)
    return await asyncio.to_thread(fallback.grep_files, query, max_files=max_files, max_lines=max_lines)


def format_hits(
    query: GrepQuery, hits: list[FileHit], launch: Path, head_limit: int, *, line_numbers: bool = True
) -> SearchAnswer:
    """Files, counts or numbered lines (``path:n:text``, context ``path-n-text``, ``--`` between groups)."""

    base = display_path(query.root, launch)
    prefix = "" if base == "." else base + "/"

    def name(hit: FileHit) -> str:
        return prefix + hit.rel if hit.rel else base

    if query.mode == "files_with_matches":
        rows = [name(h) for h in hits]
    elif query.mode == "count":
        rows = [f"{name(h)}:{h.count}" for h in hits]
    else:
        rows = []
        for hit in hits:
            shown = name(hit)
            previous: int | None = None
            for number, text, is_match in hit.lines:
                if previous is not None and number > previous + 1:
                    rows.append("--")
                mark = ":" if is_match else "-"
                where = f"{number}{mark}" if line_numbers else ""
                rows.append(f"{shown}{mark}{where}{cut_line(text)}")
                previous = number
            if query.before or query.after:
                rows.append("--")
        if rows and rows[-1] == "--":
            rows.pop()
    total = len(rows)
    if head_limit and total > head_limit:
        rows = rows[:head_limit]
        rows.append(
            _("[{shown} of at least {total} results shown: narrow the search or raise head_limit]").format(
                shown=head_limit, total=total
            )
        )
    if not rows:
        return SearchAnswer(_("No matches."), 0, 0)
    return SearchAnswer("\n".join(rows), min(total, head_limit or total), total)


def split_glob(pattern: str, base: Path) -> tuple[Path, str]:
    """An absolute or ``~`` pattern → (folder to walk, pattern relative to it)."""
    expanded = os.path.expanduser(pattern)
    if not os.path.isabs(expanded):
        return base, pattern.removeprefix("./")
    parts = Path(expanded).parts
    fixed: list[str] = []
    for part in parts:
        if has_magic(part):
            break
        fixed.append(part)
    root = Path(*fixed) if fixed else Path("/")
    rest = "/".join(parts[len(fixed) :])
    return root, rest


def _narrow(relative: str) -> tuple[str, int]:
    """The literal leading folders of a glob, and how deep below them it can match (0 = any depth)."""
    segments = relative.split("/")
    fixed: list[str] = []
    while len(segments) > 1 and not has_magic(segments[0]):
        fixed.append(segments.pop(0))
    depth = 0 if any("**" in seg for seg in segments) else len(segments)
    return "/".join(fixed), depth


def _rg_name_glob(relative: str) -> str | None:
    """The glob's last segment as a ripgrep pre-filter, when ripgrep surely reads it as we do (else None:
    ripgrep lists everything and our engine alone decides; a glob ripgrep rejects would list nothing)."""
    last = relative.rsplit("/", 1)[-1]
    depth = 0
    for ch in last:
        if ch in "[]\\!":
            return None
        if ch == "{":
            depth += 1
            if depth > 1:
                return None
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return None
    return last if depth == 0 else None


async def glob_paths(pattern: str, base: Path, *, limit: int = 0, engine: str | None = None) -> tuple[list[Path], int]:
    """Files matching ``pattern`` under ``base``: (first ``limit`` in path order, total)."""
    root, relative = split_glob(pattern, base)
    if not relative:
        return ([root], 1) if root.is_file() else ([], 0)
    glob = check_glob(relative)
    start, depth = _narrow(relative)
    walk_root = root / start if start else root
    if not walk_root.is_dir():
        return [], 0
    # one folder's listing (no "**", one level) costs less in Python than starting ripgrep
    binary = _engine(engine) if depth != 1 else None
    if binary is not None:
        found = await rg.list_files(binary, walk_root, _rg_name_glob(relative), max_depth=depth)
        prefix = start + "/" if start else ""
        if prefix:
            found = [prefix + r for r in found]
        rels = glob.matching(found)
        total = len(rels)
        if limit:
            rels = rels[:limit]
    else:
        rels, total = await asyncio.to_thread(
            fallback.glob_files, root, glob, limit=limit, start=start, max_depth=depth
        )
    return [root / r for r in rels], total
