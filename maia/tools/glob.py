"""Glob: files whose path matches a pattern (``**`` any depth), 100 at most, in path order."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from maia.core.contracts import ToolContext, ToolTraits
from maia.core.globs import GlobError, check_glob, has_magic
from maia.core.paths import resolve_user_path
from maia.i18n import _
from maia.permissions.subject import PathSubject, Subject
from maia.search import display_path
from maia.tools.base import BuiltinTool, ToolError, open_search_root, readable, require_str, still_opened

MAX_RESULTS = 100


def glob_start(pattern: str, path: str | None) -> tuple[str, str]:
    """The folder a Glob call really walks and the rest of its pattern.

    The pattern's leading folders without wildcards are joined to ``path`` (``~`` expanded, ``..``
    kept for the normaliser to resolve): ``../other/**/*.py`` walks ``../other``, ``/etc/*.conf``
    walks ``/etc``. The tool and the permission engine both use this, so rules judge the folder
    the search walks.
    """
    expanded = os.path.expanduser(pattern)
    segments = expanded.split("/")
    fixed: list[str] = []
    while len(segments) > 1 and not has_magic(segments[0]):
        fixed.append(segments.pop(0))
    rest = "/".join(segments)
    if os.path.isabs(expanded):
        return "/" + "/".join(f for f in fixed if f), rest
    if not path:
        return "/".join(fixed) or ".", rest
    return os.path.join(path, *fixed), rest


class GlobTool(BuiltinTool):
    """Find files by name pattern."""

    traits = ToolTraits(read_only=True, main_input="path")

    name = "Glob"
    description = (
        "Find files by path pattern: * matches within a folder name, ** any number of folders, {a,b} "
        "alternatives (e.g. **/*.py, src/**/*.{ts,tsx}). Searches the working folder or path; .git, "
        "node_modules and ignored files are skipped. At most 100 results."
    )
    schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The glob pattern, relative to path."},
            "path": {"type": "string", "description": "The folder to search (default: the working folder)."},
        },
        "required": ["pattern"],
    }
    summary_key = "pattern"

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """Glob rules match the folder the search really walks."""
        pattern = tool_input.get("pattern")
        path = tool_input.get("path")
        path = path if isinstance(path, str) and path else None
        if not isinstance(pattern, str) or not pattern:
            return PathSubject(path or ".", "search")
        return PathSubject(glob_start(pattern, path)[0], "search")

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """List the matching files."""
        pattern = require_str(tool_input, "pattern", _("a glob such as **/*.py"))
        try:
            check_glob(pattern)
        except GlobError as error:
            raise ToolError(str(error)) from None
        raw_path = str(tool_input.get("path") or "")
        if raw_path and not resolve_user_path(raw_path, ctx.launch).is_dir():
            raise ToolError(_("Folder not found: {path}").format(path=tool_input.get("path")))
        start, rest = glob_start(pattern, raw_path or None)
        root = resolve_user_path(start, ctx.launch)
        if not root.is_dir():
            return _("No files match {pattern}.").format(pattern=pattern)
        # the engine (and pathspec) loads at the first search, not with the tool list at start-up
        from maia.search.engine import glob_paths

        raw = raw_path or start
        # the walk starts from what was opened and judged (its real path), never a link swapped in since
        fd, real = open_search_root(ctx, "Glob", raw, root)
        try:
            found_real, total = await glob_paths(rest, real, limit=MAX_RESULTS)
            still_opened(fd, real, raw)
        finally:
            os.close(fd)
        # judged where each file really is; shown under the path the call named
        pairs = [(p, root / p.relative_to(real)) for p in found_real]
        kept = [shown for p, shown in pairs if readable(ctx, p)]
        found = pairs
        skipped = len(found) - len(kept)
        if not kept and not skipped:
            return _("No files match {pattern}.").format(pattern=pattern)
        lines = [display_path(p, ctx.launch) for p in kept]
        if total > len(found):
            lines.append(
                _("[{shown} of {total} files shown: use a narrower pattern]").format(shown=len(found), total=total)
            )
        if skipped:
            lines.append(_("[{count} matching files left out: a Read deny rule covers them]").format(count=skipped))
        return "\n".join(lines)
