"""Pure rendering: log entries and the bottom area as styled lines for a given width (§15.2-§15.5).

Every function here takes text that is already inert (see :mod:`maia.frontends.terminal.inert`) and adds MAIA's
own styles; widths come from :mod:`maia.frontends.terminal.metrics` (the terminal's own measure), colours from
:mod:`maia.frontends.terminal.style`. No line is ever wider than ``width`` columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from maia.context.bar import BarModel, bar_model
from maia.frontends.chat.complete import Menu
from maia.frontends.chat.store import Question, UIStore
from maia.frontends.terminal.inert import inert_line
from maia.frontends.terminal.metrics import layout, length, terminal, truncate, wrap
from maia.frontends.terminal.style import palette
from maia.i18n import _

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


def nested_tool_line(agent: str, name: str, summary: str, width: int, error: bool = False) -> str:
    """One line, indented under the Agent call: ``  ⎿ agent · Name(summary)``, or ``  ⎿ agent · ✗ error``."""
    p = palette()
    head = f"  {p.dim}⎿ {agent} ·{p.reset} "
    if error:
        head += f"{p.error}✗{p.reset} "
        body, tail = summary.replace("\n", " "), ""
    else:
        head += f"{p.bold}{name}{p.reset}("
        body, tail = summary.replace("\n", " "), ")"
    room = max(1, width - length(head) - len(tail))
    if length(body) > room:
        body = truncate(body, room - 1) + "…"
    return head + f"{p.dim}{body}{p.reset}" + tail


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


def bar_line(tokens: int, maximum: int | None, width: int, left: str = "", estimated: bool = False) -> str:
    """The context bar, right-aligned: coloured squares then the label; ``left`` (already styled) at the left.

    ``estimated``: the count is a rough one until the tokenizer is ready (shown with ``~``).
    """
    p = palette()
    room = width - 1 - (length(left) + 2 if left else 0)
    model: BarModel = bar_model(tokens, maximum, max(10, room - (1 if estimated else 0)))
    colour = p.bar[model.level]
    label = ("~" if estimated else "") + model.label
    squares = f"{colour}{'■' * model.filled}{p.dim}{'■' * (model.squares - model.filled)}{p.reset}"
    text = f"{squares} {p.dim}{label}{p.reset}" if model.squares else f"{p.dim}{label}{p.reset}"
    if left and length(left) + 2 + length(text) <= width - 1:
        pad = max(2, width - 1 - length(left) - length(text))
        return fit(left + " " * pad + text, width - 1)
    pad = max(0, width - 1 - length(text))
    return fit(" " * pad + text, width - 1)


def bar_left(approval_mode: str, marks: str, model: str = "", session: str = "") -> str:
    """The left of the bar: the approval mode (not shown for ``ask``), short warnings, the model and session."""
    p = palette()
    parts = []
    if approval_mode == "edits":
        parts.append(f"{p.yellow}⏵⏵ {_('edits allowed')}{p.reset} {p.dim}(Shift+Tab){p.reset}")
    elif approval_mode == "auto":
        parts.append(f"{p.error}⏵⏵⏵ {_('auto: edits and sandboxed commands')}{p.reset} {p.dim}(Shift+Tab){p.reset}")
    elif approval_mode == "plan":
        parts.append(f"{p.info}⏸ {_('plan mode')}{p.reset} {p.dim}(Shift+Tab){p.reset}")
    if marks:
        parts.append(f"{p.error}{marks}{p.reset}")
    where = " · ".join(inert_line(part) for part in (model, session) if part)
    if where:
        parts.append(f"{p.dim}{where}{p.reset}")
    return "  ".join(parts)


def status_summary(
    model: str | None,
    tokens: int,
    maximum: int | None,
    session: str | None,
    cost: float | None,
    mode: str | None = None,
) -> str:
    """The ``/status`` line: model, context used, session, approval mode, cost so far (plain text)."""
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
    if mode is not None:
        parts.append(_("mode: {mode}").format(mode=mode))
    parts.append(_("cost: {cost}").format(cost=f"${cost:.4f}" if cost is not None else _("unknown")))
    return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class Frame:
    """The bottom area: its lines, where the cursor goes (None: hidden), and the rows a question's detail had."""

    lines: list[str]
    cursor: tuple[int, int] | None
    detail_room: int = 0


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


def choices_text(question: Question) -> str:
    """``(y/n)``, ``(y/n/s=stop)``, ``(y/n/a/s=stop)``: the answers a question takes."""
    if not question.stop_allowed:
        return "(y/n)"
    return "(y/n/a/s=stop)" if question.rules else "(y/n/s=stop)"


def question_lines(question: Question, inner: int, room: int) -> tuple[list[str], int]:
    """A question in the box: text, the detail's window, the engine's doubt, the keys; rows the detail got."""
    p = palette()
    head = badge("ask", f"{question.text} {choices_text(question)}", inner)
    if question.detail and len(head) > 2:
        head = [*head[:1], fit(f"{p.dim}{'  …'}{p.reset}", inner)]  # the detail below says it all
    tail: list[str] = []
    if question.reason:
        tail.extend(fit(f"  {p.yellow}{line}{p.reset}", inner) for line in wrap(question.reason, max(10, inner - 2)))
    if question.stage == "rules":
        rules = ", ".join(question.rules)
        tail.append(fit(f"  {p.bold}{_('Always allow {rules}').format(rules=rules)}{p.reset}", inner))
        hint = _("p: in this project (./.maia/settings.local.json) · t: this session only · Esc: back")
    else:
        keys = [_("y yes"), _("n no")]
        if question.rules:
            keys.append(_("a always…"))
        if question.stop_allowed:
            keys.append(_("s stop"))
        hint = " · ".join(keys)
    detail_room = 0
    window: list[str] = []
    if question.detail:
        detail_room = max(1, room - len(head) - len(tail) - 1)
        offset = max(0, min(question.offset, len(question.detail) - detail_room))
        window = question.detail[offset : offset + detail_room]
        if len(question.detail) > detail_room:
            hint += " · " + _("↑↓ PgUp PgDn: {first}-{last} of {total}").format(
                first=offset + 1, last=offset + len(window), total=len(question.detail)
            )
    body = [*head, *window, *tail, fit(f"{p.dim}  {hint}{p.reset}", inner)]
    if len(body) > room:  # a tiny terminal: the question and the keys first
        body = [*head[: max(1, room - 1)], body[-1]][:room]
    return body, detail_room


def selection_lines(store: UIStore, inner: int, room: int) -> list[str]:
    """A list in the box: its title, the filter, the window of choices, the keys."""
    p = palette()
    selection = store.selection
    assert selection is not None
    body = badge("ask", selection.title, inner)[:1]
    if selection.filterable:
        shown = f"{selection.query}▏" if selection.query else f"{p.dim}{_('type to filter')}{p.reset}"
        body.append(fit(f"  {_('Filter:')} {shown}", inner))
    for index, choice in selection.visible():
        mark = "❯" if index == selection.index else " "
        real = selection.shown[index]
        box = ("[x] " if real in selection.checked else "[ ] ") if store.mode == "multiselect" else ""
        colour = p.green if index == selection.index else ""
        body.append(fit(f"{colour}{mark} {box}{choice}{p.reset}", inner))
    if not selection.shown:
        body.append(fit(f"  {p.dim}{_('(nothing matches)')}{p.reset}", inner))
    hint = (
        _("↑/↓ move · Space check · Enter confirm · Esc cancel")
        if store.mode == "multiselect"
        else _("↑/↓ move · Enter choose · Esc cancel")
    )
    body.append(fit(f"{p.dim}{hint}{p.reset}", inner))
    return body[: max(1, room)]


def menu_lines(menu: Menu, inner: int) -> list[str]:
    """The completion menu under the box: the window of items, the highlighted one marked."""
    p = palette()
    if not menu.items:
        return [fit(f"  {p.dim}{menu.note}{p.reset}", inner)] if menu.note else []
    # file names, skill and MCP prompt descriptions are not MAIA's: shown inert
    shown = [(index, inert_line(item.label), inert_line(item.note)) for index, item in menu.visible()]
    widest = max(length(label) for _n, label, _note in shown)
    column = min(max(12, widest + 2), max(12, inner // 2))
    lines = []
    for index, label, note in shown:
        label = label if length(label) < column else truncate(label, column - 2) + "…"
        label = label + " " * max(1, column - length(label))
        if index == menu.index:
            lines.append(fit(f"{p.green}❯ {label}{p.reset}{p.dim}{note}{p.reset}", inner))
        else:
            lines.append(fit(f"  {label}{p.dim}{note}{p.reset}", inner))
    if len(menu.items) > len(lines):
        more = _("{count} more · Tab: complete · Esc: close").format(count=len(menu.items) - len(lines))
        lines.append(fit(f"  {p.dim}{more}{p.reset}", inner))
    return lines


def frame(store: UIStore, width: int, height: int, tick: int) -> Frame:
    """Live answer rows, command output, status line, input box (or question, list), menu, context bar;
    never taller than ``height - 1``."""
    p = palette()
    width = max(10, width)
    limit = max(5, height - 1)
    inner = width - 1
    busy = store.mode == "busy"
    border = f"{p.dim if busy else p.green}{'┈' * inner}{p.reset}"
    status = ""
    if store.status:
        status = fit(f"{p.yellow}{DOTS10[tick % len(DOTS10)]} {store.status}{p.reset}", inner)
    menu = menu_lines(store.menu, inner) if store.menu is not None and store.mode in ("input", "busy") else []
    menu = menu[: max(0, limit - 6)]
    progress = store.progress_rows[-max(0, limit - 6 - len(menu)) :] if limit - 6 - len(menu) > 0 else []
    body: list[str] = []
    cursor: tuple[int, int] | None = None
    room = max(1, limit - 4 - len(menu) - len(progress))  # status, two borders, bar
    detail_room = 0
    if store.mode in ("input", "busy") and store.search is not None:
        search = store.search
        failed = f" {p.error}{_('(no match)')}{p.reset}" if search.failed else ""
        body.append(fit(f"{p.dim}{_('history search:')}{p.reset} {search.query}▏{failed}", inner))
    if busy and store.queued:
        for text in store.queued[-3:]:
            first = text.strip().split("\n")[0]
            body.append(fit(f"{p.dim}⏎ {_('queued:')} {first}{p.reset}", inner))
        if len(store.queued) > 3:
            body.append(fit(f"{p.dim}  {_('and {count} more').format(count=len(store.queued) - 3)}{p.reset}", inner))
        body.append(fit(f"{p.dim}  {_('sent when the turn ends · ↑: edit · Esc: drop')}{p.reset}", inner))
    if store.mode == "input":
        spinner = ARROW3[-1]  # idle: a still marker (an animation there says "working" when nothing is)
        if not store.input.text and store.search is None:
            body.append(fit(f"{p.green}{spinner}{p.reset} {p.dim}{_(store.placeholder)}{p.reset}", inner))
            cursor = (len(body) - 1, INPUT_PREFIX)
        else:
            top = len(body)
            rows, (row, column) = input_rows(store.input.text, store.input.cursor, inner - INPUT_PREFIX - 1)
            rows, row = _window(rows, row, max(1, room - top))
            for n, text in enumerate(rows):
                lead = f"{p.green}{spinner}{p.reset} " if n == 0 else " " * INPUT_PREFIX
                body.append(fit(lead + text, inner))
            cursor = (top + row, INPUT_PREFIX + column)
    elif busy and store.input.text:
        rows, (row, _column) = input_rows(store.input.text, store.input.cursor, inner - INPUT_PREFIX - 1)
        rows, _row = _window(rows, row, max(1, room - len(body)))
        body.extend(fit(f"{p.dim}{'…' if n == 0 else ' '}     {text}{p.reset}", inner) for n, text in enumerate(rows))
    elif busy:
        hint = _("Working — Esc or Ctrl+C: interrupt · type ahead, Enter queues")
        body.append(fit(f"{p.dim}{hint}{p.reset}", inner))
    elif store.mode in ("ask", "confirm") and store.question is not None:
        lines, detail_room = question_lines(store.question, inner, room)
        body.extend(lines)
    elif store.selection is not None:
        body.extend(selection_lines(store, inner, room))
    body = body[: max(1, room)]
    if cursor is not None and cursor[0] >= len(body):
        cursor = None
    live_room = max(0, limit - 4 - len(body) - len(menu) - len(progress))
    live = [fit(row, inner) for row in store.live_rows[len(store.live_rows) - live_room :]] if live_room else []
    # the left part that fits beside the gauge: everything, else without the session, else without the model
    bar = ""
    for model, session in ((store.model_name, store.session_label), (store.model_name, ""), ("", "")):
        left = bar_left(store.approval_mode, store.marks, model, session)
        bar = bar_line(store.context_tokens, store.context_max, width, left, store.context_estimated)
        if not left or (bar.startswith(left) and ("■" in bar or not store.context_max)):  # beside the gauge
            break
    lines = [*live, *progress, status, border, *body, border, *menu, bar]
    if cursor is not None:
        cursor = (len(live) + len(progress) + 2 + cursor[0], cursor[1])
    return Frame(lines, cursor, detail_room)
