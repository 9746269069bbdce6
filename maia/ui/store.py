"""The UI's state, without any terminal: input editing, history, questions, lists, status (§15.1)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from wcwidth import grapheme_boundary_before, iter_graphemes

from maia.ui.keys import PASTE, Key

Mode = Literal["input", "busy", "ask", "confirm", "select", "multiselect"]
WINDOW = 10  # lines shown in a list


@dataclass(frozen=True, slots=True)
class Submit:
    """Enter on the input: the text."""

    text: str


@dataclass(frozen=True, slots=True)
class Interrupt:
    """Ctrl+C."""


@dataclass(frozen=True, slots=True)
class EndOfInput:
    """Ctrl+D on an empty input."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A confirmation or permission answer: yes, no or stop."""

    value: Literal["yes", "no", "stop"]


@dataclass(frozen=True, slots=True)
class Chosen:
    """A list choice (None: cancelled) or, for a multi-select, the chosen indexes."""

    index: int | None = None
    indexes: tuple[int, ...] | None = None


Event = Submit | Interrupt | EndOfInput | Answer | Chosen


_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_input(text: str) -> str:
    """Typed or pasted text as it enters the input: line breaks as ``\\n``, other controls dropped, tabs kept."""
    return _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


@dataclass(slots=True)
class LineInput:
    """The text being typed (several lines allowed) and the cursor, an offset that never splits a grapheme."""

    text: str = ""
    cursor: int = 0

    def set(self, text: str) -> None:
        """Replace the text, cursor at the end."""
        self.text, self.cursor = text, len(text)

    def insert(self, text: str) -> None:
        """Insert at the cursor."""
        text = clean_input(text)
        self.text = self.text[: self.cursor] + text + self.text[self.cursor :]
        self.cursor += len(text)

    def _before(self, pos: int) -> int:
        return grapheme_boundary_before(self.text, pos) if pos > 0 else 0

    def _after(self, pos: int) -> int:
        for cluster in iter_graphemes(self.text, pos):
            return pos + len(cluster)
        return pos

    def backspace(self) -> None:
        """Delete the character (grapheme) before the cursor."""
        if self.cursor:
            start = self._before(self.cursor)
            self.text = self.text[:start] + self.text[self.cursor :]
            self.cursor = start

    def delete(self) -> None:
        """Delete the character (grapheme) under the cursor."""
        self.text = self.text[: self.cursor] + self.text[self._after(self.cursor) :]

    def delete_word(self) -> None:
        """Ctrl+W: delete the word before the cursor."""
        start = self._word_start(self.cursor)
        self.text = self.text[:start] + self.text[self.cursor :]
        self.cursor = start

    def _word_start(self, pos: int) -> int:
        while pos and self.text[pos - 1].isspace():
            pos -= 1
        while pos and not self.text[pos - 1].isspace():
            pos -= 1
        return self._before(self._after(pos)) if pos else 0

    def word_left(self) -> None:
        """Ctrl+←: to the start of the word."""
        self.cursor = self._word_start(self.cursor)

    def word_right(self) -> None:
        """Ctrl+→: past the end of the word."""
        pos = self.cursor
        while pos < len(self.text) and self.text[pos].isspace():
            pos += 1
        while pos < len(self.text) and not self.text[pos].isspace():
            pos += 1
        self.cursor = self._before(self._after(pos)) if pos < len(self.text) else len(self.text)

    def kill_before(self) -> None:
        """Ctrl+U: delete everything before the cursor."""
        self.text = self.text[self.cursor :]
        self.cursor = 0

    def kill_after(self) -> None:
        """Ctrl+K: delete everything after the cursor."""
        self.text = self.text[: self.cursor]

    def move(self, delta: int) -> None:
        """Move the cursor by ``delta`` graphemes."""
        for _ in range(abs(delta)):
            self.cursor = self._after(self.cursor) if delta > 0 else self._before(self.cursor)


class History:
    """Inputs already sent, browsed with ↑/↓; kept per launch folder across runs."""

    def __init__(self, entries: list[str] | None = None, path: Path | None = None, limit: int = 500) -> None:
        self.entries = list(entries or [])
        self.path = path
        self.limit = limit
        self.index: int | None = None
        self.draft = ""

    @classmethod
    def load(cls, path: Path) -> History:
        """Read the history file (a broken or missing file is an empty history)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            entries = [e for e in data if isinstance(e, str)] if isinstance(data, list) else []
        except (OSError, ValueError):
            entries = []
        return cls(entries, path)

    def add(self, text: str) -> None:
        """Remember a sent input (not twice in a row) and save the file."""
        if text.strip() and (not self.entries or self.entries[-1] != text):
            self.entries.append(text)
            del self.entries[: -self.limit]
        self.index = None
        if self.path is not None:
            from maia.storage import write_atomic

            with contextlib.suppress(OSError):  # a history that cannot be saved is not worth an error
                write_atomic(self.path, json.dumps(self.entries, ensure_ascii=False), mode=0o600)

    def previous(self, current: str) -> str | None:
        """↑: the previous entry."""
        if not self.entries:
            return None
        if self.index is None:
            self.draft = current
            self.index = len(self.entries)
        if self.index == 0:
            return None
        self.index -= 1
        return self.entries[self.index]

    def next(self) -> str | None:
        """↓: the next entry, then back to the draft."""
        if self.index is None:
            return None
        self.index += 1
        if self.index >= len(self.entries):
            self.index = None
            return self.draft
        return self.entries[self.index]


@dataclass(slots=True)
class Selection:
    """A list of choices in a 10-line window; checkboxes for a multi-select."""

    title: str
    choices: list[str]
    index: int = 0
    offset: int = 0
    checked: set[int] = field(default_factory=set)

    def move(self, delta: int) -> None:
        """↑/↓ (or k/j), keeping the cursor in the window."""
        if not self.choices:
            return
        self.index = (self.index + delta) % len(self.choices)
        if self.index < self.offset:
            self.offset = self.index
        elif self.index >= self.offset + WINDOW:
            self.offset = self.index - WINDOW + 1

    def visible(self) -> list[tuple[int, str]]:
        """The choices in the window."""
        return list(enumerate(self.choices))[self.offset : self.offset + WINDOW]


@dataclass(slots=True)
class UIStore:
    """Everything the bottom area shows, and what each key does in each mode."""

    mode: Mode = "input"
    input: LineInput = field(default_factory=LineInput)
    history: History = field(default_factory=History)
    question: str = ""
    stop_allowed: bool = False
    selection: Selection | None = None
    status: str = ""
    live_text: str = ""
    live_rows: list[str] = field(default_factory=list)
    context_tokens: int = 0
    context_max: int | None = None
    placeholder: str = "Your request — /help: help · §: skills · Ctrl+C: quit"

    def handle(self, key: Key) -> Event | None:
        """Apply a key; return what it means for the application, if anything."""
        if self.mode == "input":
            return self._input_key(key)
        if self.mode in ("ask", "confirm"):
            return self._answer_key(key)
        if self.mode in ("select", "multiselect"):
            return self._select_key(key)
        if key.name == "KEY_CTRL_C":  # busy: Ctrl+C interrupts the turn
            return Interrupt()
        if key.name not in ("KEY_ENTER", "KEY_CTRL_D", "KEY_UP", "KEY_DOWN", "KEY_CTRL_P", "KEY_CTRL_N"):
            self._input_key(key)  # type-ahead: the next request can be written while the agent works
        return None

    def _input_key(self, key: Key) -> Event | None:
        line = self.input
        name = key.name
        if name == "KEY_ENTER":
            text = line.text
            self.history.add(text)
            line.set("")
            return Submit(text)
        if name == "KEY_CTRL_C":
            return Interrupt()
        if name == "KEY_CTRL_D":
            if not line.text:
                return EndOfInput()
            line.delete()
            return None
        if key.is_text or name == PASTE:
            line.insert(key.text)
            return None
        action = _EDITING.get(name)
        if action is not None:
            action(line)
        elif name in ("KEY_UP", "KEY_CTRL_P"):
            previous = self.history.previous(line.text)
            if previous is not None:
                line.set(previous)
        elif name in ("KEY_DOWN", "KEY_CTRL_N"):
            following = self.history.next()
            if following is not None:
                line.set(following)
        return None

    def _answer_key(self, key: Key) -> Event | None:
        char = key.text[:1].lower() if key.is_text else ""
        if char in ("y", "o"):
            return Answer("yes")
        if char == "n" or key.name in ("KEY_ESCAPE", "KEY_CTRL_C"):
            return Answer("no")
        if char == "s" and self.stop_allowed:
            return Answer("stop")
        return None  # Enter alone, and anything else, is ignored: an explicit answer is needed

    def _select_key(self, key: Key) -> Event | None:
        selection = self.selection
        if selection is None:
            return Chosen()
        for char in key.text if key.is_text else [""]:
            event = self._select_one(selection, key.name, char)
            if event is not None:
                return event
        return None

    def _select_one(self, selection: Selection, name: str, char: str) -> Event | None:
        if name == "KEY_UP" or char == "k":
            selection.move(-1)
        elif name == "KEY_DOWN" or char == "j":
            selection.move(1)
        elif name in ("KEY_ESCAPE", "KEY_CTRL_C"):
            return Chosen()
        elif self.mode == "select" and name == "KEY_ENTER":
            return Chosen(selection.index)
        elif self.mode == "multiselect" and char == " ":
            selection.checked ^= {selection.index}
        elif self.mode == "multiselect" and name == "KEY_DELETE" and selection.checked:
            return Chosen(indexes=tuple(sorted(selection.checked)))
        return None


def _newline(line: LineInput) -> None:
    line.insert("\n")


def _home(line: LineInput) -> None:
    line.cursor = 0


def _end(line: LineInput) -> None:
    line.cursor = len(line.text)


# blessed's key names (spec §15.5): Alt+Enter, Ctrl+J, Shift+Enter (kitty protocol) and keypad Enter
# (ESC O M) insert a new line; Tab inserts four spaces
_EDITING: dict[str, Callable[[LineInput], object]] = {
    "KEY_CTRL_J": _newline,
    "KEY_ALT_ENTER": _newline,
    "KEY_SHIFT_ENTER": _newline,
    "KEY_KP_ENTER": _newline,
    "KEY_TAB": lambda line: line.insert("    "),
    "KEY_BACKSPACE": LineInput.backspace,
    "KEY_DELETE": LineInput.delete,
    "KEY_LEFT": lambda line: line.move(-1),
    "KEY_CTRL_B": lambda line: line.move(-1),
    "KEY_RIGHT": lambda line: line.move(1),
    "KEY_CTRL_F": lambda line: line.move(1),
    "KEY_CTRL_LEFT": LineInput.word_left,
    "KEY_ALT_LEFT": LineInput.word_left,
    "KEY_CTRL_RIGHT": LineInput.word_right,
    "KEY_ALT_RIGHT": LineInput.word_right,
    "KEY_CTRL_W": LineInput.delete_word,
    "KEY_ALT_BACKSPACE": LineInput.delete_word,
    "KEY_CTRL_U": LineInput.kill_before,
    "KEY_CTRL_K": LineInput.kill_after,
    "KEY_HOME": _home,
    "KEY_CTRL_A": _home,
    "KEY_END": _end,
    "KEY_CTRL_E": _end,
}
