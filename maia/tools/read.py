"""Read: a text file with numbered lines (6 columns + tab), from ``offset`` for ``limit`` lines."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maia.contracts import ToolContext
from maia.i18n import _
from maia.paths import resolve_user_path
from maia.permissions.subject import PathSubject, Subject
from maia.tools.base import BuiltinTool, ToolError, file_key, optional_int, require_str

DEFAULT_LIMIT = 2000
BINARY_SNIFF = 8192


class ReadTool(BuiltinTool):
    """Read a text file."""

    name = "Read"
    description = (
        "Read a text file. Returns its lines numbered (line number, tab, text). Use offset (first line, "
        "from 1) and limit (number of lines, default 2000) to read a long file in parts. Relative paths "
        "start from the working folder; ~ is the home folder."
    )
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to read."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1 = first line)."},
            "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read (default 2000)."},
        },
        "required": ["path"],
    }
    summary_key = "path"

    def lock_key(self, tool_input: Mapping[str, Any], cwd: Path) -> str | None:
        """Reads and writes of one file run one after the other."""
        return file_key(tool_input, cwd)

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """Read rules match the file's path."""
        path = tool_input.get("path")
        return PathSubject(path if isinstance(path, str) else None, "read")

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Return the numbered lines."""
        import asyncio

        return await asyncio.to_thread(self._read, tool_input, ctx.cwd)

    def _read(self, tool_input: Mapping[str, Any], cwd: Path) -> str:
        raw = require_str(tool_input, "path", _("the path of the file to read"))
        offset = optional_int(tool_input, "offset", 1, minimum=1)
        limit = optional_int(tool_input, "limit", DEFAULT_LIMIT, minimum=1)
        path = resolve_user_path(raw, cwd)
        if path.is_dir():
            raise ToolError(_("{path} is a folder, not a file: use Glob to list it.").format(path=raw))
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ToolError(_("File not found: {path}").format(path=raw)) from None
        except PermissionError:
            raise ToolError(_("Permission denied: {path}").format(path=raw)) from None
        except OSError as error:
            raise ToolError(_("Cannot read {path}: {error}").format(path=raw, error=error.strerror)) from None
        if b"\0" in data[:BINARY_SNIFF]:
            raise ToolError(
                _("{path} is a binary file ({size} bytes): Read only shows text.").format(path=raw, size=len(data))
            )
        text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
        lines = text.splitlines()
        if not lines:
            return _("(the file {path} is empty)").format(path=raw)
        if offset > len(lines):
            raise ToolError(
                _("{path} has only {count} lines: offset {offset} is past its end.").format(
                    path=raw, count=len(lines), offset=offset
                )
            )
        chosen = lines[offset - 1 : offset - 1 + limit]
        body = "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(chosen, start=offset))
        last = offset - 1 + len(chosen)
        if last < len(lines):
            body += "\n" + _("[lines {first}-{last} of {total}: read on with offset={next}]").format(
                first=offset, last=last, total=len(lines), next=last + 1
            )
        return body
