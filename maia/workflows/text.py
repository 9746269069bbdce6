"""Untrusted text (a model's words, a tool's summary, a log) made inert before it reaches a terminal."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and the C1 range (a lone 0x9b is a CSI on some terminals)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def inert(text: str) -> str:
    """Every control character except tab and newline shown as ``^X`` or ``\\xNN``: no escape sequence survives."""

    def show(match: re.Match[str]) -> str:
        code = ord(match.group())
        if code < 0x20:
            return "^" + chr(code + 0x40)
        return f"\\x{code:02x}"

    return _CONTROLS.sub(show, text)


def one_line(text: str, limit: int = 200) -> str:
    """The text on one line (newlines as spaces), cut to ``limit`` characters, inert."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return inert(flat)
