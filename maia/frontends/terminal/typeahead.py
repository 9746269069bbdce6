"""Keys typed before the chat takes the terminal: none is lost, and the terminal's echo of them is erased.

Until the chat enters raw mode the terminal is in the shell's cooked mode: the terminal echoes what the
user types, and the kernel keeps it (an Enter arrives as a line feed: ICRNL). :func:`take` switches to raw
mode at once (no more echo, every key kept as sent), reads what is waiting, and says what was echoed so the
chat can erase it before drawing its first frame.
"""

from __future__ import annotations

import os
import select
import termios
import tty
from dataclasses import dataclass, field
from typing import Any

from wcwidth import wcwidth

Attributes = list[Any]  # termios.tcgetattr's list


@dataclass(slots=True)
class TypedAhead:
    """What the user typed before the chat read the terminal."""

    keys: bytes = b""  # as the chat's key reader expects them (an Enter is a carriage return)
    echoed: str = ""  # what the terminal echoed of them (shown above the cursor)
    attributes: Attributes | None = field(default=None)  # the terminal's modes before: restored on exit


def take(fd: int) -> TypedAhead:
    """Raw mode now, and the keys waiting on ``fd`` (nothing when ``fd`` is not a terminal)."""
    try:
        saved: Attributes = termios.tcgetattr(fd)
        tty.setraw(fd, termios.TCSANOW)  # TCSANOW: never discard the keys waiting (TCSAFLUSH would)
    except (termios.error, OSError):
        return TypedAhead()
    data = bytearray()
    while True:
        try:
            if not select.select([fd], [], [], 0)[0]:
                break
            chunk = os.read(fd, 65536)
        except (OSError, ValueError):
            break
        if not chunk:
            break
        data += chunk
    iflag, lflag = int(saved[0]), int(saved[3])
    echoed = bytes(data).decode("utf-8", "replace") if lflag & termios.ECHO else ""
    keys = bytes(data)
    if keys and iflag & termios.ICRNL and not iflag & termios.IGNCR and keys.find(b"\n") == len(keys) - 1:
        # the terminal turned the Enter into a line feed: one line and its Enter is a request typed ahead,
        # sent; more lines are a paste (the terminal cannot bracket it yet), kept whole in the box
        keys = keys[:-1] + b"\r"
    return TypedAhead(keys=keys, echoed=echoed, attributes=saved)


def echo_rows(echoed: str, width: int) -> int:
    """Rows the echo of ``echoed`` went down from the row it began on (the terminal wraps at ``width``)."""
    rows = column = 0
    for char in echoed:
        if char == "\n":
            rows, column = rows + 1, 0
            continue
        if char == "\t":
            size = 8 - column % 8
        elif char < " " or char == "\x7f":
            size = 2  # echoed as ^X (ECHOCTL)
        else:
            size = max(0, wcwidth(char))
        if column + size > width:
            rows, column = rows + 1, 0
        column += size
    return rows


def erase_echo(echoed: str, width: int, height: int) -> str:
    """The sequence that erases the echo (the cursor is where the echo ended; it began at column 0)."""
    if not echoed:
        return ""
    rows = min(echo_rows(echoed, width), max(0, height - 1))
    return "\r" + (f"\x1b[{rows}A" if rows else "") + "\x1b[J"
