"""Untrusted text made inert before it reaches the terminal: nothing in it can move the cursor or send a command.

Text from the model, a tool, a file, a server or a session file may hold escape sequences that
would retitle the window, write the clipboard (OSC 52), clear the screen, or draw a fake
permission question over the real one. :func:`inert` is the one place that neutralises them; the
terminal layer applies it to every piece of text it is given, and only MAIA's own renderers add
escape sequences afterwards; the commands apply it to what they print on a terminal (``maia ask``'s
answer and progress, ``maia sessions show``, workflow logs, error messages).
"""

from __future__ import annotations

import re
from collections.abc import Callable

Width = Callable[[str], int]

ESC_PICTURE = "␛"
CR_PICTURE = "␍"
DEL_PICTURE = "␡"
TABSIZE = 8

# C0 controls but newline, DEL, C1 controls, bidirectional overrides/isolates/marks, lone surrogates
_SUSPECT = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _picture(char: str) -> str:
    code = ord(char)
    if char == "\x1b":
        return ESC_PICTURE
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ … ␟ (␍ for a lone carriage return)
    if code == 0x7F:
        return DEL_PICTURE
    if code <= 0x9F:
        return f"\\x{code:02x}"  # C1 controls have no picture; some terminals would obey 0x9b as CSI
    if char in _BIDI:
        return f"⟨U+{code:04X}⟩"  # reordering marks could disguise a command (Trojan Source)
    return "\ufffd"  # a lone surrogate cannot be printed


def _cells(text: str) -> int:
    """Display columns by wcwidth (the terminal layer passes blessed's measure instead)."""
    from wcwidth import wcswidth

    return max(0, wcswidth(text))


def _expand_tabs(line: str, tabsize: int, column: int = 0, width: Width = _cells) -> str:
    """Tabs to spaces up to the next stop, counting display columns (a CJK character is two)."""
    parts = line.split("\t")
    out = [parts[0]]
    column += width(parts[0])
    for part in parts[1:]:
        pad = tabsize - column % tabsize
        out.append(" " * pad + part)
        column += pad + width(part)
    return "".join(out)


def inert(text: str, tabsize: int = TABSIZE, column: int = 0, width: Width = _cells) -> str:
    """``text`` with every control character shown visibly, tabs expanded, CR never moving the cursor.

    ESC becomes ``␛``, other C0 controls their Control Picture (``␇``, ``␍``…), C1 controls ``\\x9b``,
    bidirectional overrides ``⟨U+202E⟩``; ``\\r\\n`` becomes ``\\n``. Newlines are kept: callers lay
    out lines themselves. ``column`` is where the text starts on its line (for tab stops).
    """
    if _SUSPECT.search(text) is None:
        return text
    text = text.replace("\r\n", "\n")
    has_tabs = "\t" in text
    text = _SUSPECT.sub(lambda m: m.group() if m.group() == "\t" else _picture(m.group()), text)
    if has_tabs:
        lines = text.split("\n")
        text = "\n".join(
            _expand_tabs(line, tabsize, column if n == 0 else 0, width) if "\t" in line else line
            for n, line in enumerate(lines)
        )
    return text


def inert_line(text: str) -> str:
    """Like :func:`inert`, on one line: newlines shown as ``␤`` (window titles, list entries)."""
    return inert(text).replace("\n", "␤")


def for_terminal(text: str, stream: object) -> str:
    """``text`` made inert when ``stream`` is a terminal; unchanged for files and pipes (scripts get the
    real bytes)."""
    isatty = getattr(stream, "isatty", None)
    try:
        on_terminal = bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        on_terminal = False
    return inert(text) if on_terminal else text


def paste_safe(text: str) -> tuple[str, int]:
    """``text`` for the clipboard: control characters (but newline and tab) and bidirectional marks left
    out, with how many. Pasted into a shell, an ESC could end a bracketed paste early and run what
    follows, and an override could make a command read differently from what runs."""
    text = text.replace("\r\n", "\n")
    removed = 0

    def drop(match: re.Match[str]) -> str:
        nonlocal removed
        if match.group() == "\t":
            return "\t"
        removed += 1
        return ""

    return _SUSPECT.sub(drop, text), removed
