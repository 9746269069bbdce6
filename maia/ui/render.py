"""Pure rendering: log entries and the bottom area as styled lines for a given width (§15.2-§15.5).

Every function here takes text that is already inert (see :mod:`maia.ui.inert`) and adds MAIA's
own styles; widths come from :mod:`maia.ui.metrics` (the terminal's own measure), colours from
:mod:`maia.ui.style`. No line is ever wider than ``width`` columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from maia.context.bar import BarModel, bar_model
from maia.i18n import _
from maia.ui.metrics import layout, length, terminal, truncate, wrap
from maia.ui.store import UIStore
from maia.ui.style import palette

ARROW3 = ("▹▹▹▹▹", "▸▹▹▹▹", "▹▸▹▹▹", "▹▹▸▹▹", "▹▹▹▸▹", "▹▹▹▹▸")
DOTS10 = ("⢄", "⢂", "⢁", "⡁", "⡈", "⡐", "⡠")
TOOL_PREVIEW = 600  # characters of a tool result (§15.1)
SHELL_PREVIEW = 4000  # characters of a `!` command's output (§15.1)
TOOL_PREVIEW_LINES = 10
SHELL_PREVIEW_LINES = 40
LABELS = {"info": "INFO", "warn": "WARN", "fail": "FAIL", "ask": "ASK", "ok": "OK"}
INPUT_PREFIX = 6  # the spinner and a space


def visible_width(text: str) -> int:
    """Columns a string takes on screen (escape sequences excluded, wide characters as the terminal draws them)."""
    return length(text)


def fit(text: str, width: int) -> str:
    """Cut a (possibly styled) line to ``width`` columns."""
    if length(text) <= width:
        return text
    return truncate(text, width) + palette().reset


def badge(kind: str, text: str, width: int) -> list[str]:
    """A log message with its badge; following lines are indented under the text."""
    p = palette()
    label = LABELS[kind]
    colour = {"info": p.info, "fail": p.error, "ask": p.bold}.get(kind, "")
    prefix = f"{p.badges[kind]} {label} {p.reset} "
    indent = len(label) + 3
    body = wrap(text, max(10, width - indent))
    lines = [fit(prefix + colour + body[0] + p.reset, width)]
    lines.extend(fit(" " * indent + colour + line + p.reset, width) for line in body[1:])
    return lines


def user_lines(text: str, width: int) -> list[str]:
    """The user's request as it is echoed in the log."""
    p = palette()
    body = wrap(text, max(10, width - 2))
    return [fit(f"{p.bold}❯ {body[0]}{p.reset}", width), *[fit(f"  {line}", width) for line in body[1:]]]


def tool_call_lines(name: str, summary: str, width: int, link: str | None = None) -> list[str]:
    """``⏺ Name(summary)`` for a tool call, on one line; ``link`` makes the summary clickable (OSC 8)."""
    p = palette()
    shown = summary.replace("\n", " ")
    head = f"{p.green}⏺{p.reset} {p.bold}{name}{p.reset}("
    room = max(1, width - length(head) - 1)
    if length(shown) > room:
        shown = truncate(shown, room - 1) + "…"
    if link and len(link) < 2000:
        shown = terminal().link(link, shown)  # OSC 8, through blessed
    return [head + shown + ")"]


def preview(text: str, max_chars: int, max_lines: int) -> tuple[list[str], str]:
    """The first whole lines of ``text`` within both limits, and a note saying what was left out.

    A first line longer than ``max_chars`` is cut there.
    """
    lines = text.rstrip("\n").split("\n")
    kept: list[str] = []
    used = 0
    for line in lines:
        if len(kept) >= max_lines or (kept and used + len(line) > max_chars):
            break
        if not kept and len(line) > max_chars:
            left = len(text.rstrip("\n")) - max_chars
            return [line[:max_chars]], _("… [{count} more characters]").format(count=left)
        kept.append(line)
        used += len(line) + 1
    more = len(lines) - len(kept)
    return kept, _("… [{count} more lines]").format(count=more) if more else ""


def result_lines(
    output: str,
    is_error: bool,
    width: int,
    limit: int = TOOL_PREVIEW,
    max_lines: int = TOOL_PREVIEW_LINES,
) -> list[str]:
    """A result preview: whole lines (indentation kept), ``limit`` characters and ``max_lines`` lines at most."""
    p = palette()
    colour = p.error if is_error else p.dim
    kept, note = preview(output, limit, max_lines)
    if not any(line.strip() for line in kept):
        kept, note = [_("(no output)")], ""
    body: list[str] = []
    for line in kept:
        body.extend(wrap(line, max(10, width - 4)))
    if note:
        body.append(note)
    first = f"  {p.dim}⎿{p.reset} {colour}{body[0]}{p.reset}"
    return [fit(first, width), *[fit(f"    {colour}{line}{p.reset}", width) for line in body[1:]]]


def approval_lines(detail: str, kind: str | None, width: int) -> list[str]:
    """What a permission question is about, whole (a command, a unified diff, arguments), already inert."""
    p = palette()
    lines: list[str] = []
    for raw in detail.rstrip("\n").split("\n"):
        colour = ""
        if kind == "diff":
            if raw.startswith("+") and not raw.startswith("+++"):
                colour = p.green
            elif raw.startswith("-") and not raw.startswith("---"):
                colour = p.error
            elif raw.startswith(("@@", "+++", "---")):
                colour = p.dim
        for row in wrap(raw, max(10, width - 4)) or [""]:
            lines.append(fit(f"  {p.dim}│{p.reset} {colour}{row}{p.reset if colour else ''}", width))
    return lines


def bar_line(tokens: int, maximum: int | None, width: int) -> str:
    """The context bar, right-aligned: coloured squares then the label."""
    p = palette()
    model: BarModel = bar_model(tokens, maximum, width - 1)
    colour = p.bar[model.level]
    squares = f"{colour}{'■' * model.filled}{p.dim}{'■' * (model.squares - model.filled)}{p.reset}"
    text = f"{squares} {p.dim}{model.label}{p.reset}" if model.squares else f"{p.dim}{model.label}{p.reset}"
    pad = max(0, width - 1 - length(text))
    return fit(" " * pad + text, width - 1)


def status_summary(
    model: str | None,
    tokens: int,
    maximum: int | None,
    session: str | None,
    cost: float | None,
) -> str:
    """The ``/status`` line: model, context used, session, cost so far (plain text, for an INFO message)."""
    parts = [_("Model: {model}").format(model=model or _("none"))]
    if maximum:
        parts.append(
            _("context: {tokens} / {maximum} tokens ({percent}%)").format(
                tokens=f"{tokens:,}", maximum=f"{maximum:,}", percent=round(100 * tokens / maximum)
            )
        )
    else:
        parts.append(_("context: {tokens} tokens").format(tokens=f"{tokens:,}"))
    parts.append(_("session: {name}").format(name=session or _("not saved")))
    parts.append(_("cost: {cost}").format(cost=f"${cost:.4f}" if cost is not None else _("unknown")))
    return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class Frame:
    """The bottom area: its lines and where the cursor goes (None: hidden)."""

    lines: list[str]
    cursor: tuple[int, int] | None


def input_rows(text: str, cursor: int, width: int) -> tuple[list[str], tuple[int, int]]:
    """The input wrapped at word boundaries for ``width`` columns, and the cursor's (row, column)."""
    rows = layout(text, width)
    row = 0
    for n, (start, end) in enumerate(rows):
        if start <= cursor <= end:
            row = n
            if cursor < end or n == len(rows) - 1 or text[end : end + 1] == "\n":
                break
    start, end = rows[row]
    column = length(_shown(text[start:cursor]))
    return [_shown(text[s:e]) for s, e in rows], (row, column)


def _shown(text: str) -> str:
    """Input text as displayed: a tab is four spaces."""
    return text.replace("\t", "    ")


def _window(rows: list[str], cursor_row: int, room: int) -> tuple[list[str], int]:
    """At most ``room`` rows around the cursor's row; the cursor's row in the window."""
    if len(rows) <= room:
        return rows, cursor_row
    top = min(max(0, cursor_row - room + 1), len(rows) - room)
    return rows[top : top + room], cursor_row - top


def frame(store: UIStore, width: int, height: int, tick: int) -> Frame:
    """Live answer rows, status line, input box (or question, list), context bar; never taller than ``height - 1``."""
    p = palette()
    width = max(10, width)
    limit = max(5, height - 1)
    inner = width - 1
    busy = store.mode == "busy"
    border = f"{p.dim if busy else p.green}{'┈' * inner}{p.reset}"
    status = ""
    if store.status:
        status = fit(f"{p.yellow}{DOTS10[tick % len(DOTS10)]} {store.status}{p.reset}", inner)
    body: list[str] = []
    cursor: tuple[int, int] | None = None
    room = limit - 4  # status, two borders, bar
    if store.mode == "input":
        spinner = ARROW3[tick % len(ARROW3)]
        if not store.input.text:
            body.append(fit(f"{p.green}{spinner}{p.reset} {p.dim}{_(store.placeholder)}{p.reset}", inner))
            cursor = (0, INPUT_PREFIX)
        else:
            rows, (row, column) = input_rows(store.input.text, store.input.cursor, inner - INPUT_PREFIX - 1)
            rows, row = _window(rows, row, room)
            for n, text in enumerate(rows):
                lead = f"{p.green}{spinner}{p.reset} " if n == 0 else " " * INPUT_PREFIX
                body.append(fit(lead + text, inner))
            cursor = (row, INPUT_PREFIX + column)
    elif busy and store.input.text:
        rows, (row, _column) = input_rows(store.input.text, store.input.cursor, inner - INPUT_PREFIX - 1)
        rows, _row = _window(rows, row, room)
        body.extend(fit(f"{p.dim}{'…' if n == 0 else ' '}     {text}{p.reset}", inner) for n, text in enumerate(rows))
    elif busy:
        body.append(fit(f"{p.dim}{_('Working — Ctrl+C: interrupt')}{p.reset}", inner))
    elif store.mode in ("ask", "confirm"):
        choices = "(y/n/s=stop)" if store.stop_allowed else "(y/n)"
        lines = badge("ask", f"{store.question} {choices}", inner)
        if len(lines) > room:
            lines = [*lines[: room - 1], f"{p.dim}{_('… (the whole question is printed above)')}{p.reset}"]
        body.extend(lines)
    elif store.selection is not None:
        body.extend(badge("ask", store.selection.title, inner)[:1])
        for index, choice in store.selection.visible():
            mark = "❯" if index == store.selection.index else " "
            box = ("[x] " if index in store.selection.checked else "[ ] ") if store.mode == "multiselect" else ""
            colour = p.green if index == store.selection.index else ""
            body.append(fit(f"{colour}{mark} {box}{choice}{p.reset}", inner))
        hint = (
            _("↑/↓ move · Space check · Delete confirm · Esc cancel")
            if store.mode == "multiselect"
            else _("↑/↓ move · Enter choose · Esc cancel")
        )
        body.append(fit(f"{p.dim}{hint}{p.reset}", inner))
        body = body[: max(1, room)]
    live_room = max(0, limit - 4 - len(body))
    live = [fit(row, inner) for row in store.live_rows[len(store.live_rows) - live_room :]] if live_room else []
    lines = [*live, status, border, *body, border, bar_line(store.context_tokens, store.context_max, width)]
    if cursor is not None:
        cursor = (len(live) + 2 + cursor[0], cursor[1])
    return Frame(lines, cursor)
