"""Read: a text file with numbered lines (6 columns + tab), from ``offset`` for ``limit`` lines."""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maia.core.contracts import ToolContext, ToolTraits
from maia.core.paths import resolve_user_path
from maia.i18n import _
from maia.permissions.subject import PathSubject, Subject
from maia.tools.base import BuiltinTool, ToolError, file_key, judge_opened, opened_path, optional_int, require_str

DEFAULT_LIMIT = 2000
BINARY_SNIFF = 8192
MAX_LINE_CHARS = 2000  # longer lines are cut (a minified file would otherwise fill the context)
KEEP_BYTES = MAX_LINE_CHARS * 4 + 4  # UTF-8 takes at most 4 bytes a character
SLICE = 256 * 1024
COUNT_REST_BYTES = 8 * 1024 * 1024  # past the lines shown, a rest this small is counted for "of N"


class ReadTool(BuiltinTool):
    """Read a text file."""

    traits = ToolTraits(read_only=True, shows_file=True, main_input="path")

    name = "Read"
    description = (
        "Read a text file. Returns its lines numbered (line number, tab, text). Use offset (first line, "
        "from 1) and limit (number of lines, default 2000) to read a long file in parts. Lines longer than "
        "2000 characters are cut. Relative paths start from the working folder; ~ is the home folder."
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

    def lock_key(self, tool_input: Mapping[str, Any], launch: Path) -> str | None:
        """Reads and writes of one file run one after the other."""
        return file_key(tool_input, launch)

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """Read rules match the file's path."""
        path = tool_input.get("path")
        return PathSubject(path if isinstance(path, str) else None, "read")

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Return the numbered lines."""
        import asyncio

        return await asyncio.to_thread(self._read, tool_input, ctx.launch, ctx)

    def _read(self, tool_input: Mapping[str, Any], launch: Path, ctx: ToolContext | None = None) -> str:
        raw = require_str(tool_input, "path", _("the path of the file to read"))
        offset = optional_int(tool_input, "offset", 1, minimum=1)
        limit = optional_int(tool_input, "limit", DEFAULT_LIMIT, minimum=1)
        path = resolve_user_path(raw, launch)
        if path.is_dir():
            raise ToolError(_("{path} is a folder, not a file: use Glob to list it.").format(path=raw))
        try:
            with path.open("rb") as handle:
                if ctx is not None:  # the file opened, not the name checked: a link swapped in meanwhile
                    judge_opened(ctx, "Read", raw, opened_path(handle.fileno(), path))
                return _numbered(raw, handle, offset, limit)
        except FileNotFoundError:
            raise ToolError(_("File not found: {path}").format(path=raw)) from None
        except PermissionError:
            raise ToolError(_("Permission denied: {path}").format(path=raw)) from None
        except OSError as error:
            raise ToolError(_("Cannot read {path}: {error}").format(path=raw, error=error.strerror)) from None


def _numbered(raw: str, handle: io.BufferedIOBase, offset: int, limit: int) -> str:
    """The numbered lines ``offset`` … ``offset + limit - 1``, reading no further than needed."""
    size = os.fstat(handle.fileno()).st_size
    lines = LineReader(handle)
    if b"\0" in lines.peek(BINARY_SNIFF):
        raise ToolError(_("{path} is a binary file ({size} bytes): Read only shows text.").format(path=raw, size=size))
    skipped = lines.skip(offset - 1)
    shown: list[str] = []
    cut = False
    number = offset
    while len(shown) < limit:
        line = lines.next_line()
        if line is None:
            break
        data, length = line
        text = data.decode("utf-8", errors="replace")
        if number == 1:
            text = text.removeprefix("\ufeff")
        if len(text) > MAX_LINE_CHARS:
            cut = True
            text = text[:MAX_LINE_CHARS] + _("… [line cut at {shown:,} characters; it is {size:,} bytes long]").format(
                shown=MAX_LINE_CHARS, size=length
            )
        shown.append(f"{number:>6}\t{text}")
        number += 1
    if not shown:
        if skipped == 0:
            return _("(the file {path} is empty)").format(path=raw)
        raise ToolError(
            _("{path} has only {count} lines: offset {offset} is past its end.").format(
                path=raw, count=skipped, offset=offset
            )
        )
    body = "\n".join(shown)
    last = number - 1
    if lines.more():
        remaining = lines.count_rest(COUNT_REST_BYTES)
        if remaining is None:
            body += "\n" + _("[lines {first}-{last} of a file of {size}: read on with offset={next}]").format(
                first=offset, last=last, size=human_size(size), next=last + 1
            )
        else:
            body += "\n" + _("[lines {first}-{last} of {total}: read on with offset={next}]").format(
                first=offset, last=last, total=last + remaining, next=last + 1
            )
    if cut:
        body += "\n" + _(
            "[Lines longer than {limit:,} characters are cut. To see more of line N, run for example "
            "sed -n 'Np' FILE | cut -c {start}-{end} with Bash.]"
        ).format(limit=MAX_LINE_CHARS, start=MAX_LINE_CHARS + 1, end=2 * MAX_LINE_CHARS)
    return body


def human_size(size: int) -> str:
    """Bytes as B, KB, MB or GB (powers of 1,024), as a listing shows them."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"  # pragma: no cover - the loop always returns


class LineReader:
    """Lines of a binary file read in slices: memory stays bounded whatever the file or its lines' length.

    Lines end at ``\n`` (a ``\r`` before it is dropped), as Grep and ripgrep number them; a last
    line without ``\n`` counts. A line's text is kept up to :data:`KEEP_BYTES`; past that only its
    length is counted. One buffer is reused for every slice (no allocation per slice).
    """

    def __init__(self, handle: io.BufferedIOBase, slice_size: int = SLICE) -> None:
        self._handle = handle
        self._buf = bytearray(slice_size)
        self._view = memoryview(self._buf)
        self._len = 0  # bytes of the buffer holding data
        self._pos = 0
        self._eof = False
        self._started = False  # bytes of a line not yet ended have been consumed

    def _fill(self) -> bool:
        """Read the next slice; False at the end of the file."""
        if self._eof:
            return False
        count = self._handle.readinto(self._view)
        if not count:
            self._eof = True
            self._len = self._pos = 0
            return False
        self._len, self._pos = count, 0
        return True

    def peek(self, count: int) -> bytes:
        """The next bytes (at most one slice), without consuming them."""
        if self._pos >= self._len:
            self._fill()
        return bytes(self._view[self._pos : min(self._len, self._pos + count)])

    def skip(self, count: int) -> int:
        """Skip ``count`` lines; returns how many there were (fewer at the end of the file)."""
        skipped = 0
        while skipped < count:
            if self._pos >= self._len and not self._fill():
                if self._started:
                    self._started = False
                    skipped += 1  # the last line, without its newline
                return skipped
            buf, pos, size = self._buf, self._pos, self._len
            ends = buf.count(b"\n", pos, size)
            if skipped + ends < count:
                skipped += ends
                self._started = buf[size - 1] != 10  # a line goes on into the next slice
                self._pos = size
                continue
            for _line in range(count - skipped):
                pos = buf.index(b"\n", pos, size) + 1
            self._pos = pos
            self._started = False
            skipped = count
        return skipped

    def next_line(self) -> tuple[bytes, int] | None:
        """The next line: (its first :data:`KEEP_BYTES` bytes, its whole length in bytes); None at the end."""
        kept: list[bytes] = []
        kept_len = 0
        length = 0
        last = -1
        while True:
            if self._pos >= self._len and not self._fill():
                if not self._started:
                    return None
                break
            buf, pos, size = self._buf, self._pos, self._len
            end = buf.find(b"\n", pos, size)
            stop = size if end == -1 else end
            if stop > pos:
                last = buf[stop - 1]
                length += stop - pos
                room = KEEP_BYTES - kept_len
                if room > 0:
                    piece = bytes(self._view[pos : min(stop, pos + room)])
                    kept.append(piece)
                    kept_len += len(piece)
            self._started = True
            if end == -1:
                self._pos = size
                continue
            self._pos = end + 1
            break
        self._started = False
        data = b"".join(kept)
        if last == 13:  # "\r\n"
            length -= 1
            if len(data) > length:
                data = data[:length]
        return data, length

    def more(self) -> bool:
        """Whether anything follows (another line)."""
        return self._pos < self._len or self._fill()

    def count_rest(self, max_bytes: int) -> int | None:
        """The lines left, if at most ``max_bytes`` bytes remain to be read; else None (not read)."""
        try:
            here = self._handle.tell()
            end = self._handle.seek(0, os.SEEK_END)
            self._handle.seek(here)
        except OSError:
            return None
        if end - here > max_bytes:
            return None
        count = 0
        last = 10
        while self._pos < self._len or self._fill():
            count += self._buf.count(b"\n", self._pos, self._len)
            last = self._buf[self._len - 1]
            self._pos = self._len
        return count + (1 if last != 10 else 0)
