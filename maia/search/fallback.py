"""The pure-Python search engine: the same answers as ripgrep, for machines without it."""

from __future__ import annotations

import bisect
import codecs
import functools
import os
import re
from collections.abc import Callable
from pathlib import Path

from maia.core.globs import PathGlob, expand_braces, glob_problem
from maia.i18n import _
from maia.search import BINARY_SNIFF_BYTES, COMPILED_PYTHON, MAX_FILE_BYTES, FileHit, GrepQuery
from maia.search.ignore import compile_ignore, walk
from maia.search.regex import PatternError, compile_python, required_literal, to_python


def _matching_lines(
    text: str,
    regex: re.Pattern[str],
    first_only: bool = False,
    next_literal: Callable[[int], int] | None = None,
) -> list[tuple[int, int]]:
    """(start, end) of each line holding a match that stays within the line, as ripgrep finds them.

    ``next_literal(pos)``: where the next occurrence of a text every match contains starts (-1: none).
    A match that stays within a line contains one, so the search may jump to that occurrence's line:
    the regular expression engine then skips the text between at C speed, case-insensitive too.
    """
    found: list[tuple[int, int]] = []
    pos = 0
    size = len(text)
    search, find, rfind = regex.search, text.find, text.rfind
    while pos <= size:
        if next_literal is not None:
            at = next_literal(pos)
            if at < 0:
                break
            line_start = rfind("\n", 0, at) + 1
            if line_start > pos:
                pos = line_start
        match = search(text, pos)
        if match is None:
            break
        begin = match.start()
        start = rfind("\n", 0, begin) + 1
        end = find("\n", begin)
        if end == -1:
            end = size
        if match.end() <= end or search(text[start:end]) is not None:
            if not (start == size and start > 0):  # no phantom line after a final newline
                found.append((start, end))
                if first_only:
                    break
            pos = end + 1
        else:
            pos = begin + 1  # the match crossed a line end: look again within lines
    return found


def _read(path: str) -> bytes | None:
    """The bytes of a text file; None for files over 2 MB, unreadable or binary (a NUL up front)."""
    try:
        # O_NOFOLLOW: a file the walk saw, turned into a link since, is not read through (as ripgrep
        # never follows links inside the tree); a searched file's path is its real path
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        data = os.read(fd, BINARY_SNIFF_BYTES)
        if b"\0" in data:
            return None
        if len(data) == BINARY_SNIFF_BYTES:  # a larger file: only now is its size worth a stat
            size = os.fstat(fd).st_size
            if size > MAX_FILE_BYTES:
                return None
            chunks = [data]
            while chunk := os.read(fd, max(size - len(data), 65536)):
                chunks.append(chunk)
            data = b"".join(chunks)
            if len(data) > MAX_FILE_BYTES:
                return None
    except OSError:
        return None
    finally:
        os.close(fd)
    return data[3:] if data.startswith(codecs.BOM_UTF8) else data


def _search_text(
    text: str,
    rel: str,
    query: GrepQuery,
    regex: re.Pattern[str],
    next_literal: Callable[[int], int] | None = None,
) -> FileHit | None:
    if query.mode == "files_with_matches":
        if not _matching_lines(text, regex, True, next_literal):
            return None
        return FileHit(rel)
    spans = _matching_lines(text, regex, False, next_literal)
    if not spans:
        return None
    if query.mode == "count":
        return FileHit(rel, count=len(spans))
    hit = FileHit(rel, count=len(spans))
    if not (query.before or query.after):
        line_no = 1
        last = 0
        for start, end in spans:
            line_no += text.count("\n", last, start)
            last = start
            hit.lines.append((line_no, text[start:end].rstrip("\r"), True))
        return hit
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    starts: list[int] = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    matched = {bisect.bisect_right(starts, start) for start, _end in spans}
    wanted: set[int] = set()
    for number in matched:
        wanted.update(range(max(1, number - query.before), min(len(lines), number + query.after) + 1))
    hit.lines = [(n, lines[n - 1].rstrip("\r"), n in matched) for n in sorted(wanted)]
    return hit


def glob_filter(glob: str) -> Callable[[str], bool]:
    """Grep's ``glob``, as ripgrep reads its ``--glob``: gitignore syntax (no slash = any folder) and
    ``{a,b}`` alternatives. A file is kept when its own path matches (``docs`` keeps files named docs,
    ``docs/**`` what is in docs); with ``!``, a file is left out when it or one of its folders matches
    (``!docs`` leaves the docs folder out). :class:`PatternError` for one that cannot be meant (``[z-a]``)."""
    negated = glob.startswith("!")
    problem = glob_problem(glob.lstrip("!"))
    if problem is not None:  # (ripgrep refuses it too: both engines say so, the same way)
        raise PatternError(_("Invalid glob {glob!r}: {problem}.").format(glob=glob, problem=problem))
    compiled = compile_ignore(expand_braces(glob.lstrip("!")))
    if compiled is None:
        return lambda rel: True

    def in_matching(rel: str) -> bool:
        """The file, or one of its folders, matches."""
        parts = rel.split("/")
        folders = ("/".join(parts[: n + 1]) + "/" for n in range(len(parts) - 1))
        return compiled.decide(rel) is True or any(compiled.decide(f) is True for f in folders)

    if negated:
        return lambda rel: not in_matching(rel)
    # not its folders: ripgrep's name pre-filter (see rg.name_filter) could not keep a file for them
    return lambda rel: compiled.decide(rel) is True


def grep_files(query: GrepQuery, *, max_files: int = 0, max_lines: int = 0) -> list[FileHit]:
    """Search ``query.root`` (a folder or a file); stop early once the limits are reached (0 = none)."""
    regex = compile_python(query.pattern, query.ignore_case)
    literal = required_literal(query.pattern)
    needle: bytes | None = None
    folded: bytes | None = None
    if literal and not query.ignore_case:
        needle = literal.encode("utf-8")
    elif literal and literal.isascii():
        folded = literal.lower().encode("ascii")
    # the engine finds a leading literal fast by itself; a literal further in is looked for first
    literal_inside = bool(literal) and not to_python(query.pattern).startswith(literal or "")
    keep = glob_filter(query.glob) if query.glob else None
    hits: list[FileHit] = []
    lines_seen = 0
    root = query.root
    candidates = iter([("", str(root), 0)]) if root.is_file() else walk(root)
    for rel, path, _depth in candidates:
        if keep is not None and rel and not keep(rel):
            continue
        if rel.endswith(COMPILED_PYTHON):  # binary by format: not opened (a file given by name is, as by ripgrep)
            continue
        data = _read(path)
        if data is None:
            continue
        next_literal: Callable[[int], int] | None = None
        if needle is not None:
            if needle not in data:
                continue  # the required literal is absent: the regex cannot match
            text = data.decode("utf-8", errors="replace")
            if literal_inside and literal:
                next_literal = functools.partial(text.find, literal)
        elif folded is not None and data.isascii():
            lowered = data.lower()
            if folded not in lowered:
                continue  # (without case, only ASCII text is pre-checked: Unicode folds the Kelvin sign to k)
            text = data.decode("ascii")
            next_literal = functools.partial(lowered.find, folded)  # ASCII: byte and character offsets agree
        else:
            text = data.decode("utf-8", errors="replace")
        hit = _search_text(text, rel, query, regex, next_literal)
        if hit is None:
            continue
        if max_lines and lines_seen + len(hit.lines) > max_lines:
            # cut inside the file, exactly where ripgrep's reader stops
            kept = hit.lines[: max_lines - lines_seen]
            hit = FileHit(hit.rel, kept, sum(m for _n, _t, m in kept))
        hits.append(hit)
        lines_seen += len(hit.lines)
        if max_files and len(hits) >= max_files:
            break
        if max_lines and lines_seen >= max_lines:
            break
    return hits


def glob_files(
    root: Path, glob: PathGlob, *, limit: int = 0, start: str = "", max_depth: int = 0
) -> tuple[list[str], int]:
    """Files under ``root`` whose root-relative path fully matches ``glob``; (first ``limit``, total).

    ``start`` (a sub-folder) and ``max_depth`` (levels below it, 0 = any) only narrow the walk.
    """
    prefix = start + "/" if start else ""
    suffix = glob.name_suffix
    candidates = [
        prefix + sub_rel
        for sub_rel, _path, _info in walk(root / start if start else root, max_depth=max_depth)
        if not suffix or sub_rel.endswith(suffix)  # cheap test first: the name cannot match
    ]
    found = glob.matching(candidates)  # the whole listing at once: each folder is matched once
    return (found[:limit] if limit else found), len(found)
