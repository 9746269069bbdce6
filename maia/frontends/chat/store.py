"""The UI's state, without any terminal: input editing, history, questions, lists, menus, status (§15.1).

:meth:`UIStore.handle` applies one key in the current mode and returns what it means for the
application (an :data:`Event`), if anything. Nothing here reads a clock or writes to a terminal.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from wcwidth import grapheme_boundary_before, iter_graphemes

from maia.frontends.chat.complete import Completer, Item, Menu, context
from maia.frontends.terminal.keys import PASTE, Key

Mode = Literal["input", "busy", "ask", "confirm", "select", "multiselect"]
AnswerValue = Literal["yes", "no", "stop", "always", "always-session"]
WINDOW = 10  # lines shown in a list


@dataclass(frozen=True, slots=True)
class Submit:
    """Enter on the input: the text."""

    text: str


@dataclass(frozen=True, slots=True)
class Interrupt:
    """Ctrl+C (or Esc while a turn runs)."""


@dataclass(frozen=True, slots=True)
class EndOfInput:
    """Ctrl+D on an empty input, or the terminal is gone."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A confirmation or permission answer."""

    value: AnswerValue


@dataclass(frozen=True, slots=True)
class Chosen:
    """A list choice (None: cancelled) or, for a multi-select, the chosen indexes."""

    index: int | None = None
    indexes: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Action:
    """A key the interface acts on at once, whatever it is waiting for."""

    name: Literal["mode", "reasoning", "redraw", "suspend"]


Event = Submit | Interrupt | EndOfInput | Answer | Chosen | Action

_ACTIONS: dict[str, Literal["mode", "reasoning", "redraw", "suspend"]] = {
    "KEY_BTAB": "mode",  # Shift+Tab
    "KEY_SHIFT_TAB": "mode",  # Shift+Tab in the kitty keyboard protocol
    "KEY_CTRL_O": "reasoning",
    "KEY_CTRL_L": "redraw",
    "KEY_CTRL_Z": "suspend",
}

# controls but tab and newline, and the invisible bidirectional marks that could make text read otherwise
PASTE_COLLAPSE_LINES = 5  # a paste of more lines (or characters) is one token in the input box
PASTE_COLLAPSE_CHARS = 1500
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean_input(text: str) -> str:
    """Text as it enters the input (typed, pasted, from the history or a completion): line breaks as
    ``\\n``, other controls and bidirectional marks dropped, tabs kept."""
    return _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


@dataclass(slots=True)
class LineInput:
    """The text being typed (several lines allowed) and the cursor, an offset that never splits a grapheme."""

    text: str = ""
    cursor: int = 0

    def set(self, text: str) -> None:
        """Replace the text, cursor at the end."""
        text = clean_input(text)
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

    def _cut(self, start: int, end: int) -> str:
        """Remove ``text[start:end]`` (cursor at ``start``) and return it."""
        removed = self.text[start:end]
        self.text = self.text[:start] + self.text[end:]
        self.cursor = start
        return removed

    def backspace(self) -> None:
        """Delete the character (grapheme) before the cursor."""
        if self.cursor:
            self._cut(self._before(self.cursor), self.cursor)

    def delete(self) -> None:
        """Delete the character (grapheme) under the cursor."""
        self.text = self.text[: self.cursor] + self.text[self._after(self.cursor) :]

    def delete_word(self) -> str:
        """Ctrl+W, Alt+Backspace: delete the word before the cursor; the text removed."""
        return self._cut(self._word_start(self.cursor), self.cursor)

    def delete_word_after(self) -> str:
        """Alt+D: delete up to the end of the word after the cursor; the text removed."""
        start = self.cursor
        self.word_right()
        return self._cut(start, self.cursor)

    def _word_start(self, pos: int) -> int:
        while pos and self.text[pos - 1].isspace():
            pos -= 1
        while pos and not self.text[pos - 1].isspace():
            pos -= 1
        return self._before(self._after(pos)) if pos else 0

    def word_left(self) -> None:
        """Ctrl+←, Alt+B: to the start of the word."""
        self.cursor = self._word_start(self.cursor)

    def word_right(self) -> None:
        """Ctrl+→, Alt+F: past the end of the word."""
        pos = self.cursor
        while pos < len(self.text) and self.text[pos].isspace():
            pos += 1
        while pos < len(self.text) and not self.text[pos].isspace():
            pos += 1
        self.cursor = self._before(self._after(pos)) if pos < len(self.text) else len(self.text)

    def kill_before(self) -> str:
        """Ctrl+U: delete everything before the cursor; the text removed."""
        return self._cut(0, self.cursor)

    def kill_after(self) -> str:
        """Ctrl+K: delete everything after the cursor; the text removed."""
        removed = self.text[self.cursor :]
        self.text = self.text[: self.cursor]
        return removed

    def move(self, delta: int) -> None:
        """Move the cursor by ``delta`` graphemes."""
        for _ in range(abs(delta)):
            self.cursor = self._after(self.cursor) if delta > 0 else self._before(self.cursor)

    def line_up(self) -> bool:
        """↑ in a text of several lines: to the line above, same column (False on the first line)."""
        start = self.text.rfind("\n", 0, self.cursor)
        if start < 0:
            return False
        column = self.cursor - start - 1
        above = self.text.rfind("\n", 0, start) + 1
        self.cursor = self._snap(min(above + column, start))
        return True

    def line_down(self) -> bool:
        """↓ in a text of several lines: to the line below, same column (False on the last line)."""
        end = self.text.find("\n", self.cursor)
        if end < 0:
            return False
        column = self.cursor - (self.text.rfind("\n", 0, self.cursor) + 1)
        below_end = self.text.find("\n", end + 1)
        below_end = len(self.text) if below_end < 0 else below_end
        self.cursor = self._snap(min(end + 1 + column, below_end))
        return True

    def _snap(self, pos: int) -> int:
        """``pos`` moved back to a grapheme boundary."""
        return self._before(self._after(pos)) if 0 < pos < len(self.text) else pos


class History:
    """Inputs already sent, browsed with ↑/↓ and searched with Ctrl+R; kept per launch folder across runs."""

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
            from maia.core.storage import write_atomic

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

    def search(self, query: str, before: int | None = None) -> int | None:
        """The newest entry holding ``query`` (case-insensitive) older than ``before``; None when none does."""
        lowered = query.lower()
        start = len(self.entries) if before is None else before
        for index in range(start - 1, -1, -1):
            if lowered in self.entries[index].lower():
                return index
        return None


@dataclass(slots=True)
class Search:
    """Ctrl+R: the query, the entry found, the input as it was before the search."""

    draft: str
    cursor: int
    query: str = ""
    index: int | None = None
    failed: bool = False


@dataclass(slots=True)
class Selection:
    """A list of choices in a 10-line window; checkboxes for a multi-select; typing filters a filterable one."""

    title: str
    choices: list[str]
    index: int = 0
    offset: int = 0
    checked: set[int] = field(default_factory=set)
    filterable: bool = False
    query: str = ""
    shown: list[int] = field(default_factory=list)  # indexes into ``choices`` that pass the filter

    def __post_init__(self) -> None:
        if not self.shown:
            self.shown = list(range(len(self.choices)))
        self.index = min(max(0, self.index), max(0, len(self.choices) - 1))
        self._follow()

    def _follow(self) -> None:
        if self.index < self.offset:
            self.offset = self.index
        elif self.index >= self.offset + WINDOW:
            self.offset = self.index - WINDOW + 1

    def move(self, delta: int) -> None:
        """↑/↓ (or k/j), keeping the cursor in the window."""
        if not self.shown:
            return
        self.index = (self.index + delta) % len(self.shown)
        self._follow()

    def visible(self) -> list[tuple[int, str]]:
        """The choices in the window: (index among those shown, text)."""
        rows = [(n, self.choices[i]) for n, i in enumerate(self.shown)]
        return rows[self.offset : self.offset + WINDOW]

    @property
    def current(self) -> int | None:
        """The index (in ``choices``) of the highlighted choice."""
        return self.shown[self.index] if self.shown else None

    def refilter(self, query: str) -> None:
        """Show only the choices holding every word of ``query`` (case-insensitive)."""
        current = self.current
        self.query = query
        words = query.lower().split()
        self.shown = [i for i, c in enumerate(self.choices) if all(w in c.lower() for w in words)]
        self.index = self.shown.index(current) if current in self.shown else 0
        self.offset = 0
        self._follow()


@dataclass(slots=True)
class Question:
    """A question in the input box: its text, and for a permission question the rows of what it is about
    (a command, a diff), scrolled with ↑/↓ and PgUp/PgDn, the engine's doubt, and the rules ``a`` adds."""

    text: str
    stop_allowed: bool = False
    detail: list[str] = field(default_factory=list)  # styled rows, already inert and wrapped
    reason: str = ""
    rules: tuple[str, ...] = ()
    offset: int = 0
    room: int = 10  # detail rows the last frame had room for
    stage: Literal["answer", "rules"] = "answer"

    def scroll(self, delta: int) -> None:
        """Scroll the detail by ``delta`` rows, within its length."""
        self.offset = max(0, min(self.offset + delta, max(0, len(self.detail) - self.room)))


@dataclass(slots=True)
class UIStore:
    """Everything the bottom area shows, and what each key does in each mode."""

    mode: Mode = "input"
    input: LineInput = field(default_factory=LineInput)
    history: History = field(default_factory=History)
    question: Question | None = None
    selection: Selection | None = None
    status: str = ""
    live_text: str = ""
    live_rows: list[str] = field(default_factory=list)
    progress_rows: list[str] = field(default_factory=list)  # a running command's last lines
    context_tokens: int = 0
    context_max: int | None = None
    context_estimated: bool = False  # the count is an estimate until the encoder is ready
    approval_mode: str = "ask"
    marks: str = ""  # short warnings on the bar (an MCP server down)
    model_name: str = ""  # on the bar: the model in use and the session, always in view
    session_label: str = ""
    queued: list[str] = field(default_factory=list)  # sent one by one when the turn ends
    killed: str = ""  # the last text Ctrl+K, Ctrl+U, Ctrl+W… removed, for Ctrl+Y
    search: Search | None = None
    menu: Menu | None = None
    completer: Completer | None = None
    placeholder: str = "Your request — /help: help · @: files · Shift+Tab: mode · Ctrl+C: quit"
    pastes: dict[str, str] = field(default_factory=dict)  # "[Pasted text #1 +60 lines]" → what was pasted
    _menu_key: tuple[str, int] | None = None
    _menu_closed: str | None = None  # Esc closed the menu for this text

    def handle(self, key: Key) -> Event | None:
        """Apply a key; return what it means for the application, if anything."""
        if self.mode in ("ask", "confirm"):
            return self._answer_key(key)
        if self.mode in ("select", "multiselect"):
            return self._select_key(key)
        action = _ACTIONS.get(key.name)
        if action is not None:
            return Action(action)
        event = self._typing_key(key)
        self.refresh_menu()
        return event

    def type_ahead(self, key: Key) -> None:
        """A key that must not answer anything (typed just as a question appeared): text goes to the draft."""
        if key.name == PASTE:
            self.paste(key.text)
        elif key.is_text:
            self.input.insert(key.text)

    def _typing_key(self, key: Key) -> Event | None:
        if self.search is not None and self._search_key(key):
            return None
        if self.menu is not None:
            handled, event = self._on_menu(key)
            if handled:
                return event
        if self.mode == "busy":
            return self._busy_key(key)
        return self._input_key(key)

    # --- typing ---------------------------------------------------------------------------------

    def paste(self, text: str) -> None:
        """A paste: inserted as is when short; a long one as a token (``[Pasted text #1 +60 lines]``) that Tab
        expands in place and Enter sends whole."""
        text = clean_input(text)
        lines = text.rstrip("\n").count("\n") + 1  # a last line break is no extra line
        if lines <= PASTE_COLLAPSE_LINES and len(text) <= PASTE_COLLAPSE_CHARS:
            self.input.insert(text)
            return
        number = len(self.pastes) + 1
        token = f"[Pasted text #{number} +{lines} lines]" if lines > 1 else f"[Pasted text #{number} {len(text)} chars]"
        self.pastes[token] = text
        self.input.insert(token)

    def expand_pastes(self, text: str) -> str:
        """``text`` with each paste token replaced by what was pasted."""
        for token, pasted in self.pastes.items():
            if token in text:
                text = text.replace(token, pasted)
        return text

    def collapse_pastes(self, text: str) -> str:
        """``text`` with each long paste shown as its token again (the transcript's echo)."""
        for token, pasted in self.pastes.items():
            if pasted in text:
                text = text.replace(pasted, token)
        return text

    def _expand_token_at_cursor(self) -> bool:
        """Tab right after (or inside) a paste token: the token becomes the pasted text."""
        line = self.input
        for token, pasted in self.pastes.items():
            start = line.text.find(token)
            while start >= 0:
                end = start + len(token)
                if start < line.cursor <= end:
                    line.text = line.text[:start] + pasted + line.text[end:]
                    line.cursor = start + len(pasted)
                    return True
                start = line.text.find(token, end)
        return False

    def _enter(self) -> Event | None:
        """Enter: send the input (paste tokens expanded); while a turn runs, queue it (sent when the turn ends)."""
        text = self.expand_pastes(self.input.text)
        self.history.add(text)
        self.input.set("")
        if self.mode == "busy":
            if text.strip():
                self.queued.append(text)
            return None
        return Submit(text)

    def _input_key(self, key: Key) -> Event | None:
        line = self.input
        name = key.name
        if name == "KEY_ENTER":
            return self._enter()
        if name == "KEY_CTRL_C":
            if line.text:  # a draft: Ctrl+C clears it
                line.set("")
                self.history.index = None
                return None
            return Interrupt()
        if name == "KEY_CTRL_D":
            if not line.text:
                return EndOfInput()
            line.delete()
            return None
        self._edit(key)
        return None

    def _busy_key(self, key: Key) -> Event | None:
        name = key.name
        if name == "KEY_CTRL_C":
            return Interrupt()
        if name == "KEY_ESCAPE":
            if self.queued:  # Esc drops the queued message first, then interrupts
                self.queued.pop()
                return None
            return Interrupt()
        if name == "KEY_ENTER":
            return self._enter()
        if name in ("KEY_UP", "KEY_CTRL_P") and self.queued and not self.input.text.strip():
            self.input.set(self.queued.pop())  # back into the box, to edit before it is sent
            return None
        if name == "KEY_CTRL_D":
            return None
        self._edit(key)
        return None

    def _edit(self, key: Key) -> None:
        """The editing keys shared by the prompt and type-ahead."""
        line = self.input
        name = key.name
        if name == PASTE:
            self.paste(key.text)
            return
        if key.is_text:
            line.insert(key.text)
            return
        if name in _KILLS:
            removed = _KILLS[name](line)
            if removed:
                self.killed = removed
            return
        action = _EDITING.get(name)
        if action is not None:
            action(line)
        elif name == "KEY_CTRL_Y":
            line.insert(self.killed)
        elif name == "KEY_TAB":
            self._tab()
        elif name == "KEY_CTRL_R":
            self.search = Search(line.text, line.cursor)
        elif name in ("KEY_UP", "KEY_CTRL_P"):
            if not line.line_up():
                previous = self.history.previous(line.text)
                if previous is not None:
                    line.set(previous)
        elif name in ("KEY_DOWN", "KEY_CTRL_N") and not line.line_down():
            following = self.history.next()
            if following is not None:
                line.set(following)

    def _tab(self) -> None:
        """Tab: complete the word when a menu can; else four spaces."""
        self._menu_closed = None
        if self._expand_token_at_cursor():
            return
        self.refresh_menu(force=True)
        menu = self.menu
        if menu is not None and menu.items:
            if len(menu.items) == 1:
                self._accept(menu, menu.items[0])
            return
        self.input.insert("    ")

    # --- Ctrl+R -----------------------------------------------------------------------------------

    def _search_key(self, key: Key) -> bool:
        """A key while searching the history; False when it ends the search and must act as usual."""
        search = self.search
        assert search is not None
        name = key.name
        if key.is_text or name == PASTE:
            search.query += clean_input(key.text)
            self._search_from(None)
        elif name == "KEY_BACKSPACE":
            search.query = search.query[:-1]
            self._search_from(None)
        elif name == "KEY_CTRL_R":
            self._search_from(search.index)
        elif name in ("KEY_ESCAPE", "KEY_CTRL_G", "KEY_CTRL_C"):
            self.input.text, self.input.cursor = search.draft, search.cursor
            self.search = None
        elif name == "KEY_ENTER":
            self.search = None  # the entry found stays in the box, to edit or send
        else:
            self.search = None
            return False
        return True

    def _search_from(self, before: int | None) -> None:
        search = self.search
        assert search is not None
        if not search.query:
            search.index, search.failed = None, False
            self.input.text, self.input.cursor = search.draft, search.cursor
            return
        found = self.history.search(search.query, before)
        search.failed = found is None
        if found is not None:
            search.index = found
            entry = clean_input(self.history.entries[found])
            self.input.text = entry
            self.input.cursor = max(0, entry.lower().find(search.query.lower()))

    # --- completion menus --------------------------------------------------------------------------

    def refresh_menu(self, force: bool = False) -> None:
        """Open, filter or close the menu for the word at the cursor."""
        text, cursor = self.input.text, self.input.cursor
        if not force and self._menu_key == (text, cursor):
            return
        self._menu_key = (text, cursor)
        if self._menu_closed is not None and self._menu_closed != text:
            self._menu_closed = None
        found = context(text, cursor) if self.completer is not None and self.search is None else None
        if found is None or self._menu_closed is not None or self.mode not in ("input", "busy"):
            self.menu = None
            return
        assert self.completer is not None
        kind, start, end, query = found
        note = ""
        if kind == "slash":
            items = self.completer.slash(query)
        else:
            items, note = self.completer.files(query)
        if not items and not note:
            self.menu = None
            return
        # the highlighted item stays when the same text is offered again (the file list came); typing resets it
        previous = self.menu.current if force and self.menu is not None and self.menu.kind == kind else None
        menu = Menu(kind, start, end, items, note=note)
        if previous is not None and previous in items:
            menu.index = items.index(previous)
            menu.move(0)
        self.menu = menu

    def _on_menu(self, key: Key) -> tuple[bool, Event | None]:
        menu = self.menu
        assert menu is not None
        name = key.name
        if name == "KEY_ESCAPE":
            self.menu = None
            self._menu_closed = self.input.text
            return True, None
        if not menu.items:
            return False, None
        if name in ("KEY_UP", "KEY_CTRL_P"):
            menu.move(-1)
        elif name in ("KEY_DOWN", "KEY_CTRL_N"):
            menu.move(1)
        elif name == "KEY_TAB":
            self._accept(menu, menu.items[menu.index])
        elif name == "KEY_ENTER":
            item = menu.items[menu.index]
            self._accept(menu, item)
            if menu.kind == "slash" and item.submit:
                self.menu = None
                return True, self._enter()
        else:
            return False, None
        return True, None

    def _accept(self, menu: Menu, item: Item) -> None:
        line = self.input
        insert = clean_input(item.insert)  # a file name is not MAIA's text: no control reaches the box
        line.text = line.text[: menu.start] + insert + line.text[menu.end :]
        line.cursor = menu.start + len(insert)
        self._menu_key = None
        self.refresh_menu()  # a folder keeps the picker open inside it

    # --- questions and lists -------------------------------------------------------------------------

    def _answer_key(self, key: Key) -> Event | None:
        question = self.question or Question("")
        char = key.text[:1].lower() if key.is_text else ""
        name = key.name
        if name == "KEY_CTRL_C":  # refuses, and stops the turn where that is offered
            return Answer("stop" if question.stop_allowed else "no")
        if question.stage == "rules":
            if char == "p":
                return Answer("always")
            if char == "t":  # not "s": s stops the turn one step earlier, a slip must not allow for the session
                return Answer("always-session")
            if name in ("KEY_ESCAPE", "KEY_LEFT", "KEY_BACKSPACE"):
                question.stage = "answer"
            return None
        if char in ("y", "o"):
            return Answer("yes")
        if char == "n" or name == "KEY_ESCAPE":
            return Answer("no")
        if char == "s" and question.stop_allowed:
            return Answer("stop")
        if char == "a" and question.rules:
            question.stage = "rules"
            return None
        scroll = {
            "KEY_UP": -1,
            "KEY_DOWN": 1,
            "KEY_PGUP": -max(1, question.room - 1),
            "KEY_PGDOWN": max(1, question.room - 1),
            "KEY_HOME": -len(question.detail),
            "KEY_END": len(question.detail),
        }.get(name)
        if scroll is not None:
            question.scroll(scroll)
        return None  # Enter alone, and anything else, is ignored: an explicit answer is needed

    def _select_key(self, key: Key) -> Event | None:
        selection = self.selection
        if selection is None:
            return Chosen()
        name = key.name
        if selection.filterable and (key.is_text or name == PASTE):
            selection.refilter(selection.query + clean_input(key.text).replace("\n", " "))
            return None
        if selection.filterable and name == "KEY_BACKSPACE":
            selection.refilter(selection.query[:-1])
            return None
        for char in key.text if key.is_text else [""]:
            event = self._select_one(selection, name, char)
            if event is not None:
                return event
        return None

    def _select_one(self, selection: Selection, name: str, char: str) -> Event | None:
        if name in ("KEY_UP", "KEY_CTRL_P") or char == "k":
            selection.move(-1)
        elif name in ("KEY_DOWN", "KEY_CTRL_N") or char == "j":
            selection.move(1)
        elif name == "KEY_PGUP":
            selection.move(-min(WINDOW, selection.index) if selection.index else 0)
        elif name == "KEY_PGDOWN":
            selection.move(min(WINDOW, len(selection.shown) - 1 - selection.index))
        elif name in ("KEY_ESCAPE", "KEY_CTRL_C"):
            return Chosen()
        elif self.mode == "select" and name == "KEY_ENTER":
            return Chosen(selection.current) if selection.current is not None else None
        elif self.mode == "multiselect" and char == " ":
            if selection.current is not None:
                selection.checked ^= {selection.current}
        elif self.mode == "multiselect" and name in ("KEY_ENTER", "KEY_DELETE"):
            chosen = selection.checked or ({selection.current} if selection.current is not None else set())
            return Chosen(indexes=tuple(sorted(chosen))) if chosen else None
        return None


def _newline(line: LineInput) -> None:
    line.insert("\n")


def _home(line: LineInput) -> None:
    line.cursor = line.text.rfind("\n", 0, line.cursor) + 1


def _end(line: LineInput) -> None:
    end = line.text.find("\n", line.cursor)
    line.cursor = len(line.text) if end < 0 else end


# blessed's key names (spec §15.5): Alt+Enter, Ctrl+J, Shift+Enter (kitty protocol) and keypad Enter
# (ESC O M) insert a new line
_EDITING: dict[str, Callable[[LineInput], object]] = {
    "KEY_CTRL_J": _newline,
    "KEY_ALT_ENTER": _newline,
    "KEY_SHIFT_ENTER": _newline,
    "KEY_KP_ENTER": _newline,
    "KEY_BACKSPACE": LineInput.backspace,
    "KEY_DELETE": LineInput.delete,
    "KEY_LEFT": lambda line: line.move(-1),
    "KEY_CTRL_B": lambda line: line.move(-1),
    "KEY_RIGHT": lambda line: line.move(1),
    "KEY_CTRL_F": lambda line: line.move(1),
    "KEY_CTRL_LEFT": LineInput.word_left,
    "KEY_ALT_LEFT": LineInput.word_left,
    "KEY_ALT_B": LineInput.word_left,
    "KEY_CTRL_RIGHT": LineInput.word_right,
    "KEY_ALT_RIGHT": LineInput.word_right,
    "KEY_ALT_F": LineInput.word_right,
    "KEY_HOME": _home,
    "KEY_CTRL_A": _home,
    "KEY_END": _end,
    "KEY_CTRL_E": _end,
}
# keys that remove text Ctrl+Y can put back
_KILLS: dict[str, Callable[[LineInput], str]] = {
    "KEY_CTRL_W": LineInput.delete_word,
    "KEY_ALT_BACKSPACE": LineInput.delete_word,
    "KEY_ALT_D": LineInput.delete_word_after,
    "KEY_CTRL_U": LineInput.kill_before,
    "KEY_CTRL_K": LineInput.kill_after,
}
