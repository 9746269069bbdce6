"""Pure rendering: log entries and the bottom area as ANSI lines for a given width (§15.2-§15.5)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from wcwidth import wcswidth, wcwidth

from maia.context.bar import BarModel, bar_model
from maia.i18n import _
from maia.ui.store import UIStore

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[90m"
GREEN_BRIGHT = "\x1b[92m"
YELLOW_BRIGHT = "\x1b[93m"
LIGHT_BLUE = "\x1b[38;2;126;200;255m"
ERROR_TEXT = "\x1b[38;2;220;138;221m"
BADGES = {  # background, label
    "info": ("\x1b[44;30m", "INFO"),
    "warn": ("\x1b[43;30m", "WARN"),
    "fail": ("\x1b[41;30m", "FAIL"),
    "ask": ("\x1b[42;30m", "ASK"),
    "ok": ("\x1b[42;30m", "OK"),
}
TEXT_COLOURS = {"info": LIGHT_BLUE, "warn": "", "fail": ERROR_TEXT, "ask": BOLD, "ok": ""}
BAR_COLOURS = {"green": "\x1b[32m", "yellow": "\x1b[33m", "red": "\x1b[31m"}
ARROW3 = ("▹▹▹▹▹", "▸▹▹▹▹", "▹▸▹▹▹", "▹▹▸▹▹", "▹▹▹▸▹", "▹▹▹▹▸")
DOTS10 = ("⢄", "⢂", "⢁", "⡁", "⡈", "⡐", "⡠")
TOOL_PREVIEW = 600
SHELL_PREVIEW = 4000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def visible_width(text: str) -> int:
    """Columns a string takes on screen (escape sequences excluded, wide characters counted twice)."""
    plain = _ANSI.sub("", text)
    width = wcswidth(plain)
    return width if width >= 0 else sum(max(0, wcwidth(c)) for c in plain)


def fit(text: str, width: int) -> str:
    """Cut a (possibly coloured) line to ``width`` columns."""
    if visible_width(text) <= width:
        return text
    out: list[str] = []
    used = 0
    i = 0
    while i < len(text):
        match = _ANSI.match(text, i)
        if match:
            out.append(match.group())
            i = match.end()
            continue
        w = max(0, wcwidth(text[i]))
        if used + w > width:
            break
        out.append(text[i])
        used += w
        i += 1
    return "".join(out) + RESET


def _hard(word: str, width: int) -> list[str]:
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for char in word:
        w = max(0, wcwidth(char))
        if used + w > width and current:
            pieces.append("".join(current))
            current, used = [], 0
        current.append(char)
        used += w
    pieces.append("".join(current))
    return pieces


def wrap(text: str, width: int, *, words: bool = True) -> list[str]:
    """Plain text wrapped at ``width`` columns, at spaces when ``words`` (line breaks kept)."""
    width = max(1, width)
    lines: list[str] = []
    for raw in text.split("\n"):
        if not words:
            lines.extend(_hard(raw, width))
            continue
        current = ""
        for word in raw.split(" "):
            candidate = f"{current} {word}" if current else word
            if wcswidth(candidate) <= width or (not current and not word):
                current = candidate
                continue
            if current:
                lines.append(current)
            pieces = _hard(word, width)
            lines.extend(pieces[:-1])
            current = pieces[-1]
        lines.append(current)
    return lines


def badge(kind: str, text: str, width: int) -> list[str]:
    """A log message with its badge; following lines are indented under the text."""
    background, label = BADGES[kind]
    colour = TEXT_COLOURS[kind]
    prefix = f"{background} {label} {RESET} "
    indent = len(label) + 3
    body = wrap(text, max(10, width - indent))
    lines = [prefix + colour + body[0] + RESET]
    lines.extend(" " * indent + colour + line + RESET for line in body[1:])
    return lines


def user_lines(text: str, width: int) -> list[str]:
    """The user's request as it is echoed in the log."""
    body = wrap(text, max(10, width - 2))
    return [f"{BOLD}❯ {body[0]}{RESET}", *[f"  {line}" for line in body[1:]]]


def tool_call_lines(name: str, summary: str, width: int) -> list[str]:
    """``⏺ Name(summary)`` for a tool call."""
    shown = summary.replace("\n", " ")
    return [fit(f"{GREEN_BRIGHT}⏺{RESET} {BOLD}{name}{RESET}({shown})", width)]


def result_lines(output: str, is_error: bool, width: int, limit: int = TOOL_PREVIEW) -> list[str]:
    """A result preview: ``limit`` characters at most, grey (errors in the error colour)."""
    text = (
        output
        if len(output) <= limit
        else output[:limit] + _("… [{count} more characters]").format(count=len(output) - limit)
    )
    colour = ERROR_TEXT if is_error else DIM
    body = wrap(text.rstrip("\n") or _("(no output)"), max(10, width - 4))
    return [f"  {DIM}⎿{RESET} {colour}{body[0]}{RESET}", *[f"    {colour}{line}{RESET}" for line in body[1:]]]


def bar_line(tokens: int, maximum: int | None, width: int) -> str:
    """The context bar, right-aligned: coloured squares then the label."""
    model: BarModel = bar_model(tokens, maximum, width - 1)
    colour = BAR_COLOURS[model.level]
    squares = f"{colour}{'■' * model.filled}{DIM}{'■' * (model.squares - model.filled)}{RESET}"
    text = f"{squares} {DIM}{model.label}{RESET}" if model.squares else f"{DIM}{model.label}{RESET}"
    pad = max(0, width - 1 - visible_width(text))
    return fit(" " * pad + text, width)


@dataclass(frozen=True, slots=True)
class Frame:
    """The bottom area: its lines and where the cursor goes (None: hidden)."""

    lines: list[str]
    cursor: tuple[int, int] | None


def frame(store: UIStore, width: int, height: int, tick: int) -> Frame:
    """Live answer text, status line, input box (or question, list), context bar."""
    lines: list[str] = []
    if store.live_text:
        wrapped = wrap(store.live_text, width - 1, words=False)
        room = max(1, height - 8)
        lines.extend(wrapped[-room:])
    status = ""
    if store.status:
        status = f"{YELLOW_BRIGHT}{DOTS10[tick % len(DOTS10)]} {store.status}{RESET}"
    lines.append(fit(status, width - 1))
    busy = store.mode == "busy"
    border = f"{DIM if busy else GREEN_BRIGHT}{'┈' * (width - 1)}{RESET}"
    lines.append(border)
    cursor: tuple[int, int] | None = None
    if store.mode == "input":
        spinner = ARROW3[tick % len(ARROW3)]
        prefix_width = len(spinner) + 1
        if not store.input.text:
            lines.append(fit(f"{GREEN_BRIGHT}{spinner}{RESET} {DIM}{_(store.placeholder)}{RESET}", width - 1))
            cursor = (len(lines) - 1, prefix_width)
        else:
            before = store.input.text[: store.input.cursor]
            wrapped = wrap(store.input.text, width - 1 - prefix_width, words=False)
            cursor_lines = wrap(before, width - 1 - prefix_width, words=False)
            first = len(lines)
            for n, text in enumerate(wrapped):
                lead = f"{GREEN_BRIGHT}{spinner}{RESET} " if n == 0 else " " * prefix_width
                lines.append(lead + text)
            cursor = (first + len(cursor_lines) - 1, prefix_width + visible_width(cursor_lines[-1]))
    elif busy and store.input.text:
        typed = wrap(store.input.text, width - 7, words=False)
        lines.extend(f"{DIM}{'…' if n == 0 else ' '}     {text}{RESET}" for n, text in enumerate(typed))
    elif busy:
        lines.append(fit(f"{DIM}{_('Working — Ctrl+C: interrupt')}{RESET}", width - 1))
    elif store.mode in ("ask", "confirm"):
        choices = "(y/n/s=stop)" if store.stop_allowed else "(y/n)"
        for line in badge("ask", f"{store.question} {choices}", width - 1):
            lines.append(line)
    elif store.selection is not None:
        lines.extend(badge("ask", store.selection.title, width - 1))
        for index, choice in store.selection.visible():
            mark = "❯" if index == store.selection.index else " "
            box = ("[x] " if index in store.selection.checked else "[ ] ") if store.mode == "multiselect" else ""
            colour = GREEN_BRIGHT if index == store.selection.index else ""
            lines.append(fit(f"{colour}{mark} {box}{choice}{RESET}", width - 1))
        hint = (
            _("↑/↓ move · Space check · Delete confirm · Esc cancel")
            if store.mode == "multiselect"
            else _("↑/↓ move · Enter choose · Esc cancel")
        )
        lines.append(f"{DIM}{hint}{RESET}")
    lines.append(border)
    lines.append(bar_line(store.context_tokens, store.context_max, width))
    return Frame(lines, cursor)
