"""Decoding what the terminal sends into key events: legacy sequences, kitty's CSI u, bracketed paste."""

from __future__ import annotations

import re
from dataclasses import dataclass

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"

_CSI = re.compile(r"\x1b\[([0-9;:?>]*)([A-Za-z~^$@])")
_SS3 = re.compile(r"\x1bO([A-Za-z])")
_LEGACY = {
    "A": "up",
    "B": "down",
    "C": "right",
    "D": "left",
    "H": "home",
    "F": "end",
    "1~": "home",
    "7~": "home",
    "4~": "end",
    "8~": "end",
    "3~": "delete",
    "2~": "insert",
    "5~": "page_up",
    "6~": "page_down",
    "Z": "shift_tab",
}
_CONTROL = {
    "\r": "enter",
    "\n": "newline",
    "\t": "tab",
    "\x7f": "backspace",
    "\x08": "backspace",
    "\x01": "ctrl_a",
    "\x05": "ctrl_e",
    "\x15": "ctrl_u",
    "\x17": "ctrl_w",
    "\x03": "ctrl_c",
    "\x04": "ctrl_d",
    "\x0c": "ctrl_l",
    "\x0b": "ctrl_k",
    "\x02": "left",
    "\x06": "right",
    "\x10": "up",
    "\x0e": "down",
}


@dataclass(frozen=True, slots=True)
class Key:
    """A key press: a ``name`` (enter, up, ctrl_c, char…), the character for ``char``, pasted text for ``paste``."""

    name: str
    text: str = ""


class KeyDecoder:
    """Feed it what the terminal sends; it returns complete key events (an unfinished sequence waits)."""

    def __init__(self) -> None:
        self._buffer = ""
        self._paste: list[str] | None = None

    @property
    def pending(self) -> bool:
        """An incomplete sequence is waiting (a lone Esc is only known after a short pause)."""
        return bool(self._buffer)

    def flush(self) -> list[Key]:
        """After a pause: a waiting lone Esc is the Esc key."""
        keys = [Key("escape")] if self._buffer == "\x1b" else []
        self._buffer = "" if self._buffer == "\x1b" else self._buffer
        return keys

    def feed(self, data: str) -> list[Key]:
        """Decode as much as possible."""
        self._buffer += data
        keys: list[Key] = []
        while self._buffer:
            if self._paste is not None:
                end = self._buffer.find(PASTE_END)
                if end < 0:
                    keep = len(PASTE_END) - 1  # the end marker may be split across reads: keep a tail
                    if len(self._buffer) > keep:
                        self._paste.append(self._buffer[:-keep])
                        self._buffer = self._buffer[-keep:]
                    break
                self._paste.append(self._buffer[:end])
                text = "".join(self._paste).replace("\r\n", "\n").replace("\r", "\n")
                keys.append(Key("paste", text))
                self._paste = None
                self._buffer = self._buffer[end + len(PASTE_END) :]
                continue
            key, used = self._one(self._buffer)
            if used == 0:
                break  # incomplete: wait for more bytes
            self._buffer = self._buffer[used:]
            if key is not None:
                if key.name == "paste_start":
                    self._paste = []
                else:
                    keys.append(key)
        return keys

    def _one(self, data: str) -> tuple[Key | None, int]:
        first = data[0]
        if first != "\x1b":
            if first in _CONTROL:
                return Key(_CONTROL[first]), 1
            if ord(first) < 32:
                return None, 1  # other control characters are ignored
            return Key("char", first), 1
        if len(data) == 1:
            return None, 0  # a lone Esc, or the start of a sequence: wait
        if data.startswith(PASTE_START):
            return Key("paste_start"), len(PASTE_START)
        if data[1] == "[":
            match = _CSI.match(data)
            if match is None:
                return (None, 0) if len(data) < 16 else (None, 2)
            return _csi(match.group(1), match.group(2)), match.end()
        if data[1] == "O":
            if len(data) < 3:
                return None, 0
            match = _SS3.match(data)
            if match is None:
                return None, 2
            letter = match.group(1)
            if letter == "M":
                return Key("newline"), 3  # keypad Enter sent as ESC O M
            return Key(_LEGACY.get(letter, "unknown")), 3
        if data[1] in "\r\n":
            return Key("newline"), 2  # Alt+Enter
        if data[1] == "\x7f":
            return Key("ctrl_w"), 2  # Alt+Backspace: delete a word
        return Key("alt", data[1]), 2


def _csi(params: str, final: str) -> Key | None:
    if final == "u":  # kitty keyboard protocol: CSI code[;modifiers] u
        parts = params.split(";")
        if params.startswith("?"):
            return Key("kitty_flags", params[1:])
        code = int(parts[0].split(":")[0] or 0)
        mods = int(parts[1].split(":")[0]) - 1 if len(parts) > 1 and parts[1] else 0
        shift, alt, ctrl = bool(mods & 1), bool(mods & 2), bool(mods & 4)
        if code == 13:
            return Key("newline") if shift or alt else Key("enter")
        if code == 27:
            return Key("escape")
        if code == 9:
            return Key("tab")
        if code == 127:
            return Key("backspace")
        if ctrl and 97 <= code <= 122:
            name = f"ctrl_{chr(code)}"
            return Key(name) if name in {v for v in _CONTROL.values()} else Key("ctrl", chr(code))
        if 32 <= code < 0x110000 and not ctrl:
            return Key("char", chr(code).upper() if shift and chr(code).isalpha() else chr(code))
        return None
    sequence = params.split(";")[0] + final if final == "~" else final
    legacy = _LEGACY.get(sequence)  # modified arrows (CSI 1;5A…) are read as plain arrows
    return Key(legacy) if legacy else None
