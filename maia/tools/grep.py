"""Grep: search file contents with a regular expression (ripgrep, or the Python engine)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Mapping
from typing import Any, cast

from maia.core.contracts import ToolContext, ToolTraits
from maia.core.paths import resolve_user_path
from maia.i18n import _
from maia.permissions.subject import PathSubject, Subject
from maia.search import GrepQuery, OutputMode
from maia.search.regex import PatternError
from maia.tools.base import (
    BuiltinTool,
    ToolError,
    open_search_root,
    optional_int,
    readable,
    require_str,
    still_opened,
)

DEFAULT_HEAD_LIMIT = 250
MODES = ("files_with_matches", "content", "count")


class GrepTool(BuiltinTool):
    """Search file contents."""

    traits = ToolTraits(read_only=True, main_input="path")

    name = "Grep"
    description = (
        "Search file contents with a regular expression (JavaScript syntax). output_mode: files_with_matches "
        "(default: the files that match), content (matching lines, path:line:text; -A/-B/-C add context "
        "lines, -n line numbers), count (matches per file). -i ignores case; glob filters files by their path "
        "under the searched folder, in ripgrep's --glob syntax (e.g. *.py, *.{ts,tsx}, src/**; a leading ! "
        "leaves matches out); head_limit caps the output (default 250, 0 = no limit). .git, node_modules, "
        "ignored and binary files (compiled .pyc/.pyo too) and files over 2 MB are skipped; lines are cut at "
        "500 characters."
    )
    schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The regular expression to search for."},
            "path": {"type": "string", "description": "File or folder to search (default: the working folder)."},
            "glob": {"type": "string", "description": "Only files matching this glob (e.g. *.ts, src/**/*.py)."},
            "output_mode": {"type": "string", "enum": list(MODES)},
            "-i": {"type": "boolean", "description": "Ignore case."},
            "-n": {"type": "boolean", "description": "Show line numbers in content mode (default true)."},
            "-A": {"type": "integer", "minimum": 0, "description": "Lines of context after each match."},
            "-B": {"type": "integer", "minimum": 0, "description": "Lines of context before each match."},
            "-C": {"type": "integer", "minimum": 0, "description": "Lines of context before and after."},
            "head_limit": {"type": "integer", "minimum": 0, "description": "Maximum output entries (0 = all)."},
        },
        "required": ["pattern"],
    }
    summary_key = "pattern"

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """Grep rules match the file or folder searched (the launch folder by default)."""
        path = tool_input.get("path")
        return PathSubject(path if isinstance(path, str) and path else ".", "search")

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Run the search and format it for the model."""
        pattern = require_str(tool_input, "pattern", _("the regular expression to search for"))
        root = resolve_user_path(str(tool_input.get("path") or "."), ctx.launch)
        if not root.exists():
            raise ToolError(_("Path not found: {path}").format(path=tool_input.get("path")))
        mode = str(tool_input.get("output_mode") or "files_with_matches")
        if mode not in MODES:
            raise ToolError(
                _('output_mode must be one of {modes}, not "{mode}".').format(modes=", ".join(MODES), mode=mode)
            )
        context = optional_int(tool_input, "-C", 0)
        query = GrepQuery(
            pattern=pattern,
            root=root,
            mode=cast(OutputMode, mode),
            glob=str(tool_input["glob"]) if tool_input.get("glob") else None,
            ignore_case=bool(tool_input.get("-i")),
            before=optional_int(tool_input, "-B", context),
            after=optional_int(tool_input, "-A", context),
        )
        head_limit = optional_int(tool_input, "head_limit", DEFAULT_HEAD_LIMIT)
        # the engine (and pathspec) loads at the first search, not with the tool list at start-up
        from maia.search.engine import format_hits, grep_hits

        raw = str(tool_input.get("path") or ".")
        # the search walks what was opened and judged (its real path), never a link swapped in since
        fd, real = open_search_root(ctx, "Grep", raw, root)
        try:
            try:
                hits = await grep_hits(dataclasses.replace(query, root=real), head_limit=head_limit)
            except PatternError as error:
                raise ToolError(error.message) from None
            still_opened(fd, real, raw)
        finally:
            os.close(fd)
        # each file found is judged where it really is (a hard link to a denied file is that file); a
        # file searched by name was judged as it was opened
        kept = [h for h in hits if not h.rel or readable(ctx, real / h.rel)]
        skipped = len(hits) - len(kept)
        line_numbers = tool_input.get("-n") is not False
        # a full answer can hold millions of lines: shaped off the event loop
        answer = await asyncio.to_thread(format_hits, query, kept, ctx.launch, head_limit, line_numbers=line_numbers)
        text = answer.text
        if skipped:
            note = _("[{count} matching files left out: a Read deny rule covers them]").format(count=skipped)
            text = note if not kept else f"{text}\n{note}"
        return text
