"""Edit: replace one unique occurrence of ``old_string`` with ``new_string``."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maia.core.contracts import ToolContext, ToolTraits
from maia.core.paths import resolve_user_path
from maia.core.storage import write_atomic_at
from maia.i18n import _
from maia.permissions.subject import PathSubject, Subject
from maia.tools.base import BuiltinTool, ToolError, file_key, open_folder_of, require_str


class EditTool(BuiltinTool):
    """Replace a unique piece of text in a file."""

    traits = ToolTraits(writes_file="path", shows_file=True, main_input="path")

    name = "Edit"
    description = (
        "Replace exactly one occurrence of old_string with new_string in a file. old_string must appear "
        "once: include enough surrounding lines to make it unique. Read the file first."
    )
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to change."},
            "old_string": {"type": "string", "description": "The exact text to replace (unique in the file)."},
            "new_string": {"type": "string", "description": "The replacement text."},
        },
        "required": ["path", "old_string", "new_string"],
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
        """Apply the replacement."""
        raw = require_str(tool_input, "path", _("the path of the file to change"))
        old = require_str(tool_input, "old_string", _("the exact text to replace"))
        new = tool_input.get("new_string")
        if not isinstance(new, str):
            raise ToolError(_('Parameter "new_string" missing or invalid (the replacement text).'))
        if old == new:
            raise ToolError(_("old_string and new_string are the same: nothing to change."))
        # a link is written through (the file it points to changes, the link stays a link); the permission
        # engine judged both the link's name and its target
        path = Path(os.path.realpath(resolve_user_path(raw, ctx.launch)))
        try:
            folder, name = await asyncio.to_thread(open_folder_of, ctx, "Edit", raw, path)
        except FileNotFoundError:
            raise ToolError(_("File not found: {path}").format(path=raw)) from None
        except OSError as error:
            raise ToolError(_("Cannot read {path}: {error}").format(path=raw, error=error.strerror)) from None
        try:
            return await self._edit_in(folder, name, path, raw, old, new, ctx)
        finally:
            os.close(folder)

    async def _edit_in(self, folder: int, name: str, path: Path, raw: str, old: str, new: str, ctx: ToolContext) -> str:
        """The replacement, read and written inside the opened (and judged) folder."""
        try:
            text = await asyncio.to_thread(_read_at, folder, name)
        except FileNotFoundError:
            raise ToolError(_("File not found: {path}").format(path=raw)) from None
        except (OSError, UnicodeDecodeError) as error:
            raise ToolError(_("Cannot read {path}: {error}").format(path=raw, error=error)) from None
        count = text.count(old)
        if count == 0:
            raise ToolError(
                _(
                    "old_string was not found in {path}: Read the file and copy the text exactly "
                    "(spaces and line breaks included)."
                ).format(path=raw)
            )
        if count > 1:
            raise ToolError(
                _("old_string appears {count} times in {path}: add surrounding lines so that it is unique.").format(
                    count=count, path=raw
                )
            )
        start = text.index(old)
        if ctx.changes is not None:
            ctx.changes.before_write(path)
        try:
            await asyncio.to_thread(write_atomic_at, folder, name, text.replace(old, new, 1))
        except OSError as error:
            raise ToolError(_("Cannot write {path}: {error}").format(path=raw, error=error.strerror)) from None
        if ctx.changes is not None:
            ctx.changes.after_write(path)
        line = text.count("\n", 0, start) + 1
        return _("Edited {path} at line {line}.").format(path=raw, line=line)


def _read_at(folder: int, name: str) -> str:
    """The file's text, opened inside ``folder`` without following a link swapped in since the check."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder)
    with os.fdopen(fd, "rb") as handle:
        return handle.read().decode("utf-8")
