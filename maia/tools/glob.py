"""Glob: files whose path matches a pattern (``**`` any depth), 100 at most, in path order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from maia.contracts import ToolContext
from maia.i18n import _
from maia.paths import resolve_user_path
from maia.search import display_path
from maia.search.engine import glob_paths
from maia.tools.base import BuiltinTool, ToolError, require_str

MAX_RESULTS = 100


class GlobTool(BuiltinTool):
    """Find files by name pattern."""

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

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """List the matching files."""
        pattern = require_str(tool_input, "pattern", _("a glob such as **/*.py"))
        base = resolve_user_path(str(tool_input.get("path") or "."), ctx.cwd)
        if not base.is_dir():
            raise ToolError(_("Folder not found: {path}").format(path=tool_input.get("path")))
        found, total = await glob_paths(pattern, base, limit=MAX_RESULTS)
        if not found:
            return _("No files match {pattern}.").format(pattern=pattern)
        lines = [display_path(p, ctx.cwd) for p in found]
        if total > len(found):
            lines.append(
                _("[{shown} of {total} files shown: use a narrower pattern]").format(shown=len(found), total=total)
            )
        return "\n".join(lines)
