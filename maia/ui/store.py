"""The UI's state, without any terminal: input editing, history, questions, lists, status (§15.1)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from maia.ui.keys import Key

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


@dataclass(slots=True)
class LineInput:
    """The text being typed (several lines allowed) and the cursor."""

    text: str = ""
    cursor: int = 0

    def set(self, text: str) -> None:
        """Replace the text, cursor at the end."""
        self.text, self.cursor = text, len(text)

    def insert(self, text: str) -> None:
        """Insert at the cursor."""
        self.text = self.text[: self.cursor] + text + self.text[self.cursor :]
        self.cursor += len(text)

    def backspace(self) -> None:
        """Delete the character before the cursor."""
        if self.cursor:
            self.text = self.text[: self.cursor - 1] + self.text[self.cursor :]
            self.cursor -= 1

    def delete(self) -> None:
        """Delete the character under the cursor."""
        self.text = self.text[: self.cursor] + self.text[self.cursor + 1 :]

    def delete_word(self) -> None:
        """Ctrl+W: delete the word before the cursor."""
        start = self.cursor
        while start and self.text[start - 1].isspace():
            start -= 1
        while start and not self.text[start - 1].isspace():
            start -= 1
        self.text = self.text[:start] + self.text[self.cursor :]
        self.cursor = start

    def kill_before(self) -> None:
        """Ctrl+U: delete everything before the cursor."""
        self.text = self.text[self.cursor :]
        self.cursor = 0

    def move(self, delta: int) -> None:
        """Move the cursor."""
        self.cursor = max(0, min(len(self.text), self.cursor + delta))


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
        if key.name == "ctrl_c":  # busy: Ctrl+C interrupts the turn
            return Interrupt()
        if key.name not in ("enter", "ctrl_d", "up", "down"):
            self._input_key(key)  # type-ahead: the next request can be written while the agent works
        return None

    def _input_key(self, key: Key) -> Event | None:
        line = self.input
        name = key.name
        if name == "enter":
            text = line.text
            self.history.add(text)
            line.set("")
            return Submit(text)
        if name == "ctrl_c":
            return Interrupt()
        if name == "ctrl_d":
            if not line.text:
                return EndOfInput()
            line.delete()
            return None
        actions: dict[str, Callable[[], object]] = {
            "newline": lambda: line.insert("\n"),
            "backspace": line.backspace,
            "delete": line.delete,
            "left": lambda: line.move(-1),
            "right": lambda: line.move(1),
            "ctrl_w": line.delete_word,
            "ctrl_u": line.kill_before,
            "home": lambda: setattr(line, "cursor", 0),
            "ctrl_a": lambda: setattr(line, "cursor", 0),
            "end": lambda: setattr(line, "cursor", len(line.text)),
            "ctrl_e": lambda: setattr(line, "cursor", len(line.text)),
        }
        if name in actions:
            actions[name]()
        elif name == "char" or name == "paste":
            line.insert(key.text)
        elif name == "tab":
            line.insert("    ")
        elif name == "up":
            previous = self.history.previous(line.text)
            if previous is not None:
                line.set(previous)
        elif name == "down":
            following = self.history.next()
            if following is not None:
                line.set(following)
        return None

    def _answer_key(self, key: Key) -> Event | None:
        char = key.text.lower() if key.name == "char" else ""
        if char in ("y", "o"):
            return Answer("yes")
        if char == "n" or key.name in ("escape", "ctrl_c"):
            return Answer("no")
        if char == "s" and self.stop_allowed:
            return Answer("stop")
        return None  # Enter alone, and anything else, is ignored: an explicit answer is needed

    def _select_key(self, key: Key) -> Event | None:
        selection = self.selection
        if selection is None:
            return Chosen()
        char = key.text if key.name == "char" else ""
        if key.name == "up" or char == "k":
            selection.move(-1)
        elif key.name == "down" or char == "j":
            selection.move(1)
        elif key.name in ("escape", "ctrl_c"):
            return Chosen()
        elif self.mode == "select" and key.name == "enter":
            return Chosen(selection.index)
        elif self.mode == "multiselect" and char == " ":
            selection.checked ^= {selection.index}
        elif self.mode == "multiselect" and key.name == "delete" and selection.checked:
            return Chosen(indexes=tuple(sorted(selection.checked)))
        return None
