"""The chat's blessed Terminal and what the terminal can do, found with a bounded wait.

``blessed.Terminal()`` asks the terminal for its capabilities (XTGETTCAP, XTVERSION), each query
closed by a cursor-position request that every real terminal answers at once; blessed waits
``BLESSED_QUERY_TIMEOUT_SECONDS`` (5 s by default) for terminals that never answer (a plain PTY, a
script, some CI runners). MAIA bounds that wait to :data:`START_TIMEOUT` at start-up (unless the
user set the variable), learns from the first probe whether the terminal answers at all, and only
then asks the rest (kitty keyboard, synchronized output, focus events, in-band resize, colour
scheme): a silent terminal costs two bounded waits, never blessed's default.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from blessed import Terminal

START_TIMEOUT = 0.2  # seconds each start-up probe may wait for a terminal that does not answer
QUERY_TIMEOUT = 1.0  # a terminal that answered once answers again: a generous bound for later queries
Notifier = Literal["osc99", "osc9", "osc777", "bell"]

# terminals known to show OSC 8 hyperlinks / desktop notifications, by the name they give
# (TERM_PROGRAM or their XTVERSION answer), lower case
_HYPERLINKS = (
    "kitty",
    "iterm",
    "wezterm",
    "ghostty",
    "foot",
    "contour",
    "rio",
    "alacritty",
    "vscode",
    "tabby",
    "hyper",
    "warp",
    "mintty",
    "konsole",
    "xterm.js",
)
_OSC9 = ("iterm", "wezterm", "ghostty", "conemu")
_OSC777 = ("foot", "rxvt", "urxvt", "contour")
# terminals that cut their rows when the window gets narrower instead of wrapping them again (reflow):
# xterm by its XTVERSION answer ("XTerm(390)": the name "xterm"), st and the Linux console by TERM
_NO_REFLOW_NAMES = ("xterm",)
_NO_REFLOW_TERMS = ("linux", "st", "st-256color", "st-meta", "st-meta-256color")


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the chat may use in this terminal."""

    answers: bool = False  # the terminal answers queries (cursor position reports)
    kitty: bool = False  # kitty keyboard protocol (Shift+Enter is distinct)
    sync: bool = False  # synchronized output (mode 2026)
    paste_reported: bool = False  # DECRQM says bracketed paste exists (it is enabled anyway)
    focus: bool = False  # focus in/out events (mode 1004)
    resize: bool = False  # in-band resize reports (mode 2048)
    scheme: str | None = None  # "dark" or "light" when the terminal says
    name: str = ""  # the terminal's name (TERM_PROGRAM, XTVERSION), lower case
    hyperlinks: bool = False
    notifier: Notifier = "bell"
    redraw: bool = True  # cursor movement exists (not TERM=dumb)
    reflows: bool = True  # a narrower window wraps the rows on screen again (tmux, most terminals; not xterm)


def create_terminal(stream: IO[str]) -> Terminal:
    """A blessed Terminal on ``stream`` whose start-up probe waits at most :data:`START_TIMEOUT` per query.

    ``NO_COLOR`` is hidden from blessed while it starts: blessed would otherwise turn off every
    sequence, cursor movement included; MAIA applies ``NO_COLOR`` to colours itself.
    """
    import blessed
    import blessed.terminal

    user = os.environ.get("BLESSED_QUERY_TIMEOUT_SECONDS")
    timeout = START_TIMEOUT
    if user:
        with contextlib.suppress(ValueError):
            timeout = float(user)

    class _Terminal(blessed.Terminal):
        """blessed's Terminal, its start-up queries bounded (their defaults are read when blessed is imported),
        and the keys typed while it waits for a terminal that never answers given back."""

        _reading: list[str] | None = None  # what the keyboard gave during a query, while one runs

        def detect_term_program(self, timeout: float = timeout, force: bool = False) -> bool | str:
            return super().detect_term_program(timeout=timeout, force=force)

        def _read_available(self) -> str:
            text: str = super()._read_available()
            if self._reading is not None:
                self._reading.append(text)
            return text

        def _query_boundary_multiple(self, *args: Any, **kwargs: Any) -> Any:
            # blessed (1.52) drops what it read when the terminal never answers this query (the capability
            # probe of Terminal.__init__): the keys a user types as soon as they launch MAIA. Kept here and
            # pushed back, in order, behind what was buffered before, for the chat's first read.
            held = "".join(reversed(self._keyboard_buf))  # the order blessed pops them in
            self._reading = []
            try:
                result = super()._query_boundary_multiple(*args, **kwargs)
            finally:
                read, self._reading = "".join(self._reading), None
            if result is None and (held or read) and not self._keyboard_buf:
                self.ungetch(held + read)
            return result

    module = vars(blessed.terminal)
    saved_default = module["TERMINAL_QUERY_TIMEOUT_SECONDS"]
    module["TERMINAL_QUERY_TIMEOUT_SECONDS"] = timeout  # the XTGETTCAP probe of Terminal.__init__
    no_color = os.environ.pop("NO_COLOR", None)
    dumb = os.environ.get("TERM") == "dumb"  # blessed would take it for xterm; such a terminal is never asked
    try:
        return _Terminal(stream=stream, force_styling=None if dumb else False)
    finally:
        module["TERMINAL_QUERY_TIMEOUT_SECONDS"] = saved_default
        if no_color is not None:
            os.environ["NO_COLOR"] = no_color


def answers_queries(term: Terminal) -> bool:
    """Whether the terminal answered blessed's start-up probe (its cursor-position fence came back)."""
    # blessed records every capability it asked for once the fence came back, none when it timed out
    return term.is_a_tty and len(term._xtgettcap_cache) > 0


def terminal_name(term: Terminal) -> str:
    """The terminal's own name, lower case ('' when it does not say)."""
    program = os.environ.get("TERM_PROGRAM", "")
    if program:
        return program.lower()
    if os.environ.get("WT_SESSION"):
        return "windows terminal"
    version = term._software_version_cache
    return (version.name or "").lower() if version is not None else ""


def background_scheme(term: Terminal, timeout: float) -> str | None:
    """The scheme ("dark" or "light") from the default background colour (OSC 11), for terminals that do
    not answer the colour-scheme query: tmux among them, which answers OSC 11 with the outer terminal's
    background."""
    red, green, blue = term.get_bgcolor(timeout=timeout, bits=8)
    if red < 0:
        return None
    luminance = (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255
    return "light" if luminance > 0.5 else "dark"


def probe(term: Terminal, timeout: float | None = None) -> Capabilities:
    """Ask the terminal what it supports (only if it answered the start-up probe)."""
    from maia.frontends.terminal.screen import parameterized

    redraw = bool(term.does_styling and parameterized(term, "cuu")(1) and str(term.clear_eos))
    redraw = redraw and os.environ.get("TERM") != "dumb"
    name = terminal_name(term)
    reflows = name not in _NO_REFLOW_NAMES and os.environ.get("TERM") not in _NO_REFLOW_TERMS
    hyperlinks = any(known in name for known in _HYPERLINKS) or int(os.environ.get("VTE_VERSION", "0") or 0) >= 5000
    if not answers_queries(term) or not redraw:
        return Capabilities(
            name=name, hyperlinks=hyperlinks and redraw, redraw=redraw, notifier=_notifier(name), reflows=reflows
        )
    wait = QUERY_TIMEOUT if timeout is None else timeout
    kitty = term.get_kitty_keyboard_state(timeout=wait) is not None
    sync = term.does_synchronized_output(timeout=wait)
    paste = term.does_bracketed_paste(timeout=wait)
    focus = term.does_focus_events(timeout=wait)
    resize = term.does_inband_resize(timeout=wait)
    scheme = term.get_color_scheme(timeout=wait) or background_scheme(term, wait)
    notifier = _notifier(name)
    if notifier == "bell" and focus and term.does_kitty_notifications(timeout=wait):
        notifier = "osc99"
    return Capabilities(
        answers=True,
        kitty=kitty,
        sync=sync,
        paste_reported=paste,
        focus=focus,
        resize=resize,
        scheme=scheme,
        name=name,
        hyperlinks=hyperlinks,
        notifier=notifier,
        reflows=reflows,
    )


def _notifier(name: str) -> Notifier:
    if "kitty" in name:
        return "osc99"
    if any(known in name for known in _OSC9) or name == "windows terminal":
        return "osc9"
    if any(known in name for known in _OSC777):
        return "osc777"
    return "bell"


def notification(notifier: Notifier, title: str, body: str) -> str:
    """The sequence that shows a desktop notification (a bell where none is known to work)."""
    if notifier == "osc99":
        return f"\x1b]99;i=maia:d=0;{title}\x1b\\\x1b]99;i=maia:d=1:p=body;{body}\x1b\\"
    if notifier == "osc9":
        return f"\x1b]9;{title}: {body}\x1b\\"
    if notifier == "osc777":
        return f"\x1b]777;notify;{title};{body}\x1b\\"
    return "\x07"
