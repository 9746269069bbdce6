"""Write: create or replace a file (parent folders created); ``content`` aliases and arrays accepted."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maia.core.contracts import ToolContext, ToolTraits
from maia.core.paths import resolve_user_path
from maia.core.storage import write_atomic_at
from maia.i18n import _, ngettext
from maia.permissions.subject import PathSubject, Subject
from maia.tools.base import BuiltinTool, ToolError, file_key, open_folder_of, received, require_str

CONTENT_ALIASES = ("content", "contents", "text", "file_text", "file_content", "data", "body")


def content_of(tool_input: Mapping[str, Any]) -> str:
    """The text to write: ``content`` or an alias, a string or a list of lines."""
    for key in CONTENT_ALIASES:
        if key not in tool_input:
            continue
        value = tool_input[key]
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return "\n".join(value)
    raise ToolError(
        _(
            'Parameter "content" missing or invalid (the full text of the file, as a string). Parameters received: '
            "{received}. If your answer was cut by the output limit, write the file in several smaller parts "
            "(Write a first part, then Edit to append)."
        ).format(received=received(tool_input))
    )


class WriteTool(BuiltinTool):
    """Create or overwrite a file."""

    traits = ToolTraits(writes_file="path", shows_file=True, main_input="path")

    name = "Write"
    description = (
        "Create a file or replace its whole content. Parent folders are created. Give the complete text in "
        "content. Read an existing file before replacing it; prefer Edit for small changes."
    )
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to write."},
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path"],
    }
    default_permission = "ask"
    summary_key = "path"

    def lock_key(self, tool_input: Mapping[str, Any], launch: Path) -> str | None:
        """Reads and writes of one file run one after the other."""
        return file_key(tool_input, launch)

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """Write and Edit rules (one family) match the file's path."""
        path = tool_input.get("path")
        return PathSubject(path if isinstance(path, str) else None, "write")

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Write the file atomically."""
        raw = require_str(tool_input, "path", _("the path of the file to write"))
        text = content_of(tool_input)
        # a link is written through (the file it points to changes, the link stays a link); the permission
        # engine judged both the link's name and its target
        path = Path(os.path.realpath(resolve_user_path(raw, ctx.launch)))
        if path.is_dir():
            raise ToolError(_("{path} is a folder: give a file path.").format(path=raw))
        existed = path.exists()
        if ctx.changes is not None:
            ctx.changes.before_write(path)
        try:
            await asyncio.to_thread(_write_in_judged_folder, ctx, raw, path, text)
        except OSError as error:
            raise ToolError(_("Cannot write {path}: {error}").format(path=raw, error=error.strerror)) from None
        if ctx.changes is not None:
            ctx.changes.after_write(path)
        lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        if existed:
            return ngettext("Replaced {path} ({lines} line).", "Replaced {path} ({lines} lines).", lines).format(
                path=raw, lines=lines
            )
        return ngettext("Created {path} ({lines} line).", "Created {path} ({lines} lines).", lines).format(
            path=raw, lines=lines
        )


def _write_in_judged_folder(ctx: ToolContext, raw: str, path: Path, text: str) -> None:
    """Write ``path`` inside its folder as opened and judged again (a link swapped in meanwhile is refused)."""
    folder, name = open_folder_of(ctx, "Write", raw, path)
    try:
        write_atomic_at(folder, name, text)
    finally:
        os.close(folder)
