"""Reading the documentation's Markdown as the tests need it: fenced blocks, headings, tables, code spans."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
SHELLS = frozenset({"sh", "bash", "shell", "console", "zsh"})
NOT_RUN = re.compile(r"^<!--\s*not run\b.*-->$")


def pages() -> list[Path]:
    """Every page of docs/."""
    return sorted(DOCS.glob("*.md"))


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced code block: its language, its lines, where it starts, and whether it is marked not run."""

    path: Path
    line: int  # 1-based line of the opening fence
    language: str
    lines: tuple[str, ...]
    not_run: bool

    @property
    def where(self) -> str:
        """``docs/x.md:12``."""
        return f"{self.path.relative_to(REPO)}:{self.line}"


def fences(path: Path) -> list[Fence]:
    """The fenced blocks of a page, with the ``<!-- not run -->`` mark of the line before each."""
    found: list[Fence] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = re.match(r"^(`{3,}|~{3,})\s*([\w+-]*)", lines[i])
        if not match:
            i += 1
            continue
        marker, language = match.group(1), match.group(2).lower()
        previous = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        end = i + 1
        while end < len(lines) and not lines[end].startswith(marker):
            end += 1
        found.append(Fence(path, i + 1, language, tuple(lines[i + 1 : end]), bool(NOT_RUN.match(previous))))
        i = end + 1
    return found


def numbered_prose(path: Path) -> list[tuple[int, str]]:
    """(1-based line number, line) of the page's lines outside fenced blocks (HTML comments kept)."""
    out: list[tuple[int, str]] = []
    inside: str | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = re.match(r"^(`{3,}|~{3,})", line)
        if inside is None and match:
            inside = match.group(1)
            continue
        if inside is not None:
            if line.startswith(inside):
                inside = None
            continue
        out.append((number, line))
    return out


def prose(path: Path) -> list[str]:
    """The page's lines outside fenced blocks."""
    return [line for _number, line in numbered_prose(path)]


def code_spans(text: str) -> list[str]:
    """The inline code spans of a line (table pipes escaped as ``\\|`` read as ``|``)."""
    return [span.replace("\\|", "|") for span in re.findall(r"(?<!`)`([^`\n]+)`(?!`)", text)]


def headings(path: Path) -> list[tuple[int, str]]:
    """(level, text) of every heading outside fenced blocks."""
    found = []
    for line in prose(path):
        match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if match:
            found.append((len(match.group(1)), match.group(2)))
    return found


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def sections(path: Path, level: int) -> dict[str, list[str]]:
    """Heading text → the lines under it, up to the next heading of ``level`` or higher."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in prose(path):
        match = re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
        if match and len(match.group(1)) <= level:
            current = out.setdefault(match.group(2), [])
            continue
        if current is not None:
            current.append(line)
    return out


def tables(lines: list[str]) -> list[list[list[str]]]:
    """The tables among ``lines``: rows of cells (header first, separator row left out)."""
    found: list[list[list[str]]] = []
    rows: list[list[str]] = []
    for line in [*lines, ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if not all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                rows.append(cells)
        elif rows:
            found.append(rows)
            rows = []
    return found
