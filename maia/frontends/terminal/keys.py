"""What the terminal sends, turned into keys by blessed: a small adapter around ``blessed.keyboard.resolve_sequence``.

blessed decodes every sequence (legacy, xterm modifiers, the kitty keyboard protocol, bracketed
paste, focus events) and names the keys (``KEY_ENTER``, ``KEY_CTRL_C``, ``KEY_SHIFT_ENTER``…).
This adapter adds what an asyncio chat needs around it:

- bytes are read by the event loop in large blocks (``Terminal.async_inkey`` reads one byte per
  system call, and a 1 MB paste would hold the loop), decoded incrementally, and resolved here;
- timing: a lone Esc (or an unfinished ``ESC [``) waits ``ESCDELAY`` (blessed's 350 ms) for the
  rest of its sequence, then is resolved as it stands, so a slow arrow key is not split and an
  incomplete sequence never swallows the next key; a paste whose end marker never comes ends
  after a pause instead of swallowing all later input;
- replies to terminal queries that arrive late (cursor reports, mode reports, capability strings)
  and unknown sequences are dropped instead of being typed as text;
- a few names are made distinct where blessed gives one name to keys the chat tells apart:
  ``\\n`` (Ctrl+J, a new line) versus ``\\r`` (Enter), and keypad Enter (``ESC O M``).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from blessed.keyboard import DEFAULT_ESCDELAY, resolve_sequence

if TYPE_CHECKING:
    from blessed import Terminal

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
PASTE = "BRACKETED_PASTE"
TEXT = ""  # the name of a key that is plain text
ESC_DELAY = DEFAULT_ESCDELAY
PASTE_TIMEOUT = 1.0  # a paste whose end marker has not come after this pause is over
_WINDOW = 64  # the longest key sequence blessed resolves (a paste is handled before)

_TEXT_RUN = re.compile(r"[^\x00-\x1f\x7f\x1b]+")
# a complete sequence blessed did not recognise (a late query reply, an unsupported key): dropped
_UNKNOWN = re.compile(r"\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|O.)", re.DOTALL)
# a string reply (OSC colours, DCS capabilities, APC): never a key; dropped once complete
_STRING_START = ("\x1b]", "\x1bP", "\x1b_", "\x1b^", "\x1bX")
_STRING = re.compile(r"\x1b[P_^X\]](?:(?!\x1b\\|\x07).)*(?:\x1b\\|\x07)", re.DOTALL)
_STRING_MAX = 65536
_DROPPED = frozenset({"CPR_RESPONSE", "XTGETTCAP_RESPONSE", "XTVERSION_RESPONSE", "CSI", "KEY_ESCAPE_SEQUENCE"})


@dataclass(frozen=True, slots=True)
class Key:
    """A key: blessed's ``name`` (``KEY_ENTER``, ``KEY_CTRL_C``…), or ``""`` with the typed ``text``.

    A paste is ``BRACKETED_PASTE`` with the pasted text (line breaks as ``\\n``); typed text that
    arrives in one read is one key.
    """

    name: str
    text: str = ""

    @property
    def is_text(self) -> bool:
        """Plain typed text."""
        return self.name == TEXT


def text_key(text: str) -> Key:
    """A key of typed text."""
    return Key(TEXT, text)


class KeyReader:
    """Feed it what the terminal sends; it returns complete keys (an unfinished sequence waits for more)."""

    def __init__(self, term: Terminal, esc_delay: float = ESC_DELAY, paste_timeout: float = PASTE_TIMEOUT) -> None:
        self.term = term
        self.esc_delay = esc_delay
        self.paste_timeout = paste_timeout
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""

    @property
    def delay(self) -> float | None:
        """Seconds to wait for the rest of a sequence before :meth:`flush` (None: nothing waits)."""
        if not self._buffer:
            return None
        return self.paste_timeout if self._buffer.startswith(PASTE_START) else self.esc_delay

    def feed(self, data: bytes | str) -> list[Key]:
        """Decode and resolve as much as possible."""
        self._buffer += data if isinstance(data, str) else self._decoder.decode(data)
        return self._resolve(final=False)

    def flush(self) -> list[Key]:
        """After a pause: whatever waits is resolved as it stands (a lone Esc is the Esc key)."""
        return self._resolve(final=True)

    def _resolve(self, final: bool) -> list[Key]:
        keys: list[Key] = []
        buffer = self._buffer
        term = self.term
        while buffer:
            if buffer.startswith(PASTE_START):
                end = buffer.find(PASTE_END, len(PASTE_START))
                if end < 0 and not final:
                    break
                body = buffer[len(PASTE_START) : end if end >= 0 else len(buffer)]
                keys.append(Key(PASTE, body.replace("\r\n", "\n").replace("\r", "\n")))
                buffer = buffer[end + len(PASTE_END) :] if end >= 0 else ""
                continue
            if buffer.startswith(_STRING_START):
                string = _STRING.match(buffer)
                if string is not None:
                    buffer = buffer[string.end() :]
                    continue
                if not final and len(buffer) < _STRING_MAX:
                    break  # the rest of the reply is on its way (or it was Alt+] and the pause will tell)
            run = _TEXT_RUN.match(buffer)
            if run is not None:
                keys.append(text_key(run.group()))
                buffer = buffer[run.end() :]
                continue
            window = buffer[:_WINDOW]
            # blessed's private tables are its resolver's documented inputs; Terminal.inkey passes the same
            stroke = resolve_sequence(
                window,
                term._keymap,
                term._keycodes,
                term._keymap_prefixes,
                final=final,
                dec_mode_cache=term._dec_mode_cache,
            )
            if stroke.name == "KEY_ESCAPE" and len(stroke) == 1 and len(buffer) > 1:
                unknown = _UNKNOWN.match(buffer)
                if unknown is not None:
                    buffer = buffer[unknown.end() :]  # a complete sequence blessed does not know: drop it
                    continue
            if stroke.name == "KEY_ESCAPE" and len(stroke) == 1 and not final:
                break  # a lone Esc or the start of a sequence: wait for the rest (or the pause)
            used = max(1, len(stroke))
            sequence = buffer[:used]
            buffer = buffer[used:]
            key = _key(stroke, sequence)
            if key is not None:
                keys.append(key)
        self._buffer = buffer
        return keys


def _key(stroke: object, sequence: str) -> Key | None:
    """The chat's key for one blessed keystroke (None: not a key)."""
    name: str | None = getattr(stroke, "name", None)
    if name in _DROPPED:
        return None
    if name == PASTE:
        text = str(getattr(stroke, "text", "") or "")
        return Key(PASTE, text.replace("\r\n", "\n").replace("\r", "\n"))
    if name == "KEY_ENTER":
        if sequence == "\n":
            return Key("KEY_CTRL_J")
        if sequence == "\x1bOM":
            return Key("KEY_KP_ENTER")
        return Key("KEY_ENTER")
    if name:
        return Key(name)
    if sequence and sequence[0] >= " " and sequence != "\x7f":
        return text_key(sequence)
    return None
