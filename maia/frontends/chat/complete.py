"""Completion in the input box: the ``/`` menu (commands, skills, MCP prompts) and the ``@`` file picker.

The menu itself is pure state (:class:`Menu`, :class:`Item`); what it offers comes from a
:class:`Completer` the chat provides. Files come from :class:`FileIndex`, listed off the event
loop with the search engine's own listing (ignore files honoured), git-ignored files after the
others; matching is fuzzy and costs one pass over the cached list per keystroke.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

MENU_ROWS = 8
MAX_FILES = 20_000  # paths listed for the picker; a bigger tree is still searchable with Glob
INDEX_TTL = 30.0  # seconds a listing is reused before the next ``@`` lists again


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of a menu: what is shown, what replaces the word, a note, and whether Enter runs it."""

    label: str
    insert: str
    note: str = ""
    submit: bool = False  # a command that takes no argument: Enter completes and sends it


@dataclass(slots=True)
class Menu:
    """An open menu over the word ``text[start:end]`` of the input."""

    kind: Literal["slash", "file"]
    start: int
    end: int
    items: list[Item]
    index: int = 0
    offset: int = 0
    note: str = ""  # shown when there is nothing (yet) to offer, e.g. "listing files…"

    def move(self, delta: int) -> None:
        """↑/↓ within the menu, keeping the choice in the window."""
        if not self.items:
            return
        self.index = (self.index + delta) % len(self.items)
        if self.index < self.offset:
            self.offset = self.index
        elif self.index >= self.offset + MENU_ROWS:
            self.offset = self.index - MENU_ROWS + 1

    def visible(self) -> list[tuple[int, Item]]:
        """The items in the window."""
        return list(enumerate(self.items))[self.offset : self.offset + MENU_ROWS]

    @property
    def current(self) -> Item | None:
        """The highlighted item."""
        return self.items[self.index] if self.items else None


class Completer(Protocol):
    """What the front end offers to complete."""

    def slash(self, prefix: str) -> list[Item]:
        """Slash commands (and skills, MCP prompts) whose name starts with ``prefix``."""
        ...

    def files(self, query: str) -> tuple[list[Item], str]:
        """Files matching ``query`` (fuzzy), and a note when the list is not ready."""
        ...


def word_at(text: str, cursor: int) -> tuple[int, str]:
    """The word that ends at the cursor (from the last white space before it) and where it starts."""
    start = cursor
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return start, text[start:cursor]


def context(text: str, cursor: int) -> tuple[Literal["slash", "file"], int, int, str] | None:
    """What the cursor is completing: a slash command's name, or an ``@`` file; None for neither."""
    if text.startswith("/") and not text.startswith("//") and not any(c.isspace() for c in text[:cursor]):
        end = cursor
        while end < len(text) and not text[end].isspace():
            end += 1
        return "slash", 0, end, text[1:cursor]
    start, word = word_at(text, cursor)
    if word.startswith("@") and not word.startswith(("@'", '@"')) and ":" not in word:
        end = cursor
        while end < len(text) and not text[end].isspace():
            end += 1
        return "file", start, end, word[1:]
    return None


def quote_path(path: str) -> str:
    """A path as ``@`` takes it: quoted when it holds white space or a quote."""
    if not any(c.isspace() or c in "'\"" for c in path):
        return path
    return "'" + path.replace("'", "\\'") + "'"


# --- fuzzy file matching ------------------------------------------------------------------------------


@dataclass(slots=True)
class Listing:
    """Paths relative to the launch folder (folders end with ``/``); those from ``ignored_from`` on are ignored."""

    paths: list[str] = field(default_factory=list)
    ignored_from: int = 0
    lowered: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.lowered:
            self.lowered = [p.lower() for p in self.paths]


def fuzzy(listing: Listing, query: str, limit: int = 50) -> list[str]:
    """Paths matching ``query``: in the name first, then in the path, then as a subsequence; ignored ones
    after the others, shorter paths first within each rank (a folder typed whole: what is inside it)."""
    q = query.lower()
    if not q:
        ranked = sorted(
            range(len(listing.paths)), key=lambda i: (i >= listing.ignored_from, listing.paths[i].count("/"), i)
        )
        return [listing.paths[i] for i in ranked[:limit]]
    scored: list[tuple[bool, int, int, str]] = []
    found: set[int] = set()
    for i, low in enumerate(listing.lowered):
        pos = low.find(q)
        if pos < 0 or (low == q and q.endswith("/")):  # inside a folder: its files, not the folder again
            continue
        name_start = low.rstrip("/").rfind("/") + 1
        rank = 0 if pos >= name_start else 1
        scored.append((i >= listing.ignored_from, rank, len(low), listing.paths[i]))
        found.add(i)
    if len(scored) < limit:
        for i, low in enumerate(listing.lowered):
            if i not in found and low != q and _subsequence(q, low):
                scored.append((i >= listing.ignored_from, 2, len(low), listing.paths[i]))
    scored.sort()
    return [path for *_key, path in scored[:limit]]


def _subsequence(query: str, text: str) -> bool:
    """Every character of ``query`` in ``text``, in order: linear (a regex ``a.*?b.*?…`` backtracks without
    bound on a long name that almost matches, and this runs on the event loop at each key)."""
    at = 0
    for char in query:
        at = text.find(char, at) + 1
        if not at:
            return False
    return True


def _with_folders(files: list[str]) -> list[str]:
    """The files and the folders that hold them (``dir/``), each folder once, before its files."""
    out: list[str] = []
    seen: set[str] = set()
    for path in files:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth]) + "/"
            if folder not in seen:
                seen.add(folder)
                out.append(folder)
        out.append(path)
    return out


OWN_STATE = ".maia/."  # .maia/.sessions/, .maia/.gitignore: not .maia/settings.json or .maia/agents/


def list_launch_folder(root: Path, limit: int = MAX_FILES) -> Listing:
    """Every file under ``root`` (ignore files honoured), then the ignored ones; blocking, for a thread."""
    from maia.search.ignore import walk

    kept: list[str] = []
    for rel, _abs, _depth in walk(root):
        if rel.startswith(OWN_STATE):  # MAIA's own state (sessions, their lock) is never worth attaching
            continue
        kept.append(rel)
        if len(kept) >= limit:
            break
    known = set(kept)
    ignored: list[str] = []
    if len(kept) < limit:
        for rel, _abs, _depth in walk(root, use_ignore=False):
            if rel not in known and not rel.startswith(OWN_STATE):
                ignored.append(rel)
                if len(kept) + len(ignored) >= limit:
                    break
    first = _with_folders(kept)
    shown = set(first)
    rest = [p for p in _with_folders(ignored) if p not in shown]
    return Listing(first + rest, len(first))


class FileIndex:
    """The launch folder's files for the ``@`` picker, listed in a thread when first needed."""

    def __init__(self, root: Path, on_ready: Callable[[], None] | None = None) -> None:
        self.root = root
        self.on_ready = on_ready
        self.listing: Listing | None = None
        self._listed_at = 0.0
        self._task: asyncio.Task[None] | None = None

    def get(self) -> Listing | None:
        """The listing when there is one (a new one is started when it is missing or old)."""
        stale = self.listing is None or time.monotonic() - self._listed_at > INDEX_TTL
        if stale and self._task is None:
            with contextlib.suppress(RuntimeError):  # no running loop: nothing to list with
                self._task = asyncio.get_running_loop().create_task(self._list())
        return self.listing

    async def _list(self) -> None:
        try:
            self.listing = await asyncio.to_thread(list_launch_folder, self.root)
            self._listed_at = time.monotonic()
        except OSError:
            self.listing = self.listing or Listing()
        finally:
            self._task = None
        if self.on_ready is not None:
            self.on_ready()

    def close(self) -> None:
        """Stop a listing under way."""
        if self._task is not None:
            self._task.cancel()
