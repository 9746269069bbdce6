"""Driving a ripgrep binary with options that make it answer exactly like the Python engine."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from maia.search import FileHit, GrepQuery, path_order
from maia.search.regex import PatternError, needs_pcre
from maia.shell import terminate_group

COMMON = [
    "--no-config",
    "--color=never",
    "--hidden",
    "--no-require-git",
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--no-messages",
    "--glob=!.git",
    "--glob=!node_modules",
]


async def run_rg(binary: str, args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """Run ripgrep in its own process group; cancellation kills it."""
    process = await asyncio.create_subprocess_exec(
        binary,
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await process.communicate()
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            await terminate_group(process)
        raise
    return process.returncode or 0, out, err


def name_filter(glob: str | None) -> list[str]:
    """A file-name pre-filter as a ripgrep *type*: unlike ``--glob``, a type never re-includes ignored files.

    Only the last path segment is used (types match file names); the full glob is applied afterwards.
    """
    if not glob:
        return []
    negated = glob.startswith("!")
    last = glob.lstrip("!").rstrip("/").rsplit("/", 1)[-1]
    if not last or last == "**" or (negated and "/" in glob.lstrip("!")):
        return []
    return [f"--type-add=maiafilter:{last}", "--type-not=maiafilter" if negated else "--type=maiafilter"]


def grep_args(query: GrepQuery) -> list[str]:
    """ripgrep's arguments for a query (the search root comes last)."""
    args = [*COMMON, "--max-filesize=2M", *name_filter(query.glob)]
    if query.ignore_case:
        args.append("--ignore-case")
    if needs_pcre(query.pattern):
        args.append("--pcre2")
    if query.mode == "files_with_matches":
        args += ["--files-with-matches", "--null"]
    elif query.mode == "count":
        args += ["--count", "--null"]
    else:
        args += ["--line-number", "--null", "--no-heading"]
        if query.before:
            args.append(f"--before-context={query.before}")
        if query.after:
            args.append(f"--after-context={query.after}")
    return [*args, "--regexp", query.pattern, "--", str(query.root)]


def _relative(path: bytes, root: bytes) -> str:
    if path == root:
        return ""
    if path.startswith(root + b"/"):
        path = path[len(root) + 1 :]
    return path.decode("utf-8", errors="replace")


def parse_output(query: GrepQuery, out: bytes) -> list[FileHit]:
    """ripgrep's ``--null`` output → hits, sorted as the Python engine walks."""
    root = str(query.root).encode()
    hits: dict[str, FileHit] = {}
    if query.mode == "files_with_matches":
        for path in out.split(b"\0"):
            if path:
                rel = _relative(path, root)
                hits[rel] = FileHit(rel)
    else:
        for line in out.split(b"\n"):
            if not line or line == b"--" or b"\0" not in line:
                continue
            path, _sep, rest = line.partition(b"\0")
            rel = _relative(path, root)
            if query.mode == "count":
                if rest.isdigit():
                    hits[rel] = FileHit(rel, count=int(rest))
                continue
            number, separator, text = _split_numbered(rest)
            if number is None:
                continue  # "binary file matches" and other notes
            hit = hits.setdefault(rel, FileHit(rel))
            is_match = separator == ":"
            hit.lines.append((number, text.decode("utf-8", errors="replace").rstrip("\r"), is_match))
            hit.count += is_match
    ordered = sorted(hits.values(), key=lambda h: path_order(h.rel))
    for hit in ordered:
        hit.lines.sort()
    return ordered


def _split_numbered(rest: bytes) -> tuple[int | None, str, bytes]:
    index = 0
    while index < len(rest) and 48 <= rest[index] <= 57:
        index += 1
    if index == 0 or index >= len(rest) or rest[index : index + 1] not in (b":", b"-"):
        return None, "", b""
    return int(rest[:index]), rest[index : index + 1].decode(), rest[index + 1 :]


async def grep(binary: str, query: GrepQuery, cwd: Path) -> list[FileHit]:
    """Search with ripgrep; a pattern it refuses is a :class:`PatternError`."""
    code, out, err = await run_rg(binary, grep_args(query), cwd)
    if code == 2 and not out:
        message = err.decode("utf-8", errors="replace").strip()
        if "regex" in message or "error parsing" in message or "PCRE2" in message:
            raise PatternError(message.splitlines()[-1] if message else "invalid pattern")
    return parse_output(query, out)


async def list_files(binary: str, root: Path, glob: str | None, cwd: Path, *, max_depth: int = 0) -> list[str]:
    """Every non-ignored file under ``root`` (``glob``'s file-name part narrows it), relative, sorted."""
    args = [*COMMON, "--files", "--null", *name_filter(glob)]
    if max_depth:
        args.append(f"--max-depth={max_depth}")
    _code, out, _err = await run_rg(binary, [*args, "--", str(root)], cwd)
    root_bytes = str(root).encode()
    rels = [_relative(p, root_bytes) for p in out.split(b"\0") if p]
    rels.sort(key=path_order)
    return rels
