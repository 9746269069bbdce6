"""Colours of the interface, from blessed: true colour down-converted to the terminal's depth, two themes.

The palette is built once for the terminal the chat runs in (:func:`configure`): blessed's
``color_rgb`` gives the nearest colour the terminal has (``number_of_colors``: 16M, 256, 16 or 8),
``NO_COLOR`` removes every colour (bold stays), ``FORCE_COLOR`` keeps colours where the terminal
description has none, and the theme follows the terminal's background (blessed's colour-scheme
query) unless settings.json says ``"Theme": "dark"`` or ``"light"``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from blessed import Terminal

Theme = Literal["dark", "light"]
RGB = tuple[int, int, int]

# spec colours (§15.2) on a dark background, and their counterparts readable on a light one
_DARK: dict[str, RGB] = {
    "info": (0x7E, 0xC8, 0xFF),
    "error": (0xDC, 0x8A, 0xDD),
    "code": (230, 219, 116),
    "heading": (126, 200, 255),
    "link": (102, 217, 239),
    "shadow": (70, 70, 90),
    "pink": (255, 121, 198),
}
LIGHT_CODE: RGB = (0x80, 0x60, 0x00)  # inline and fenced code on a light background
_LIGHT: dict[str, RGB] = {
    "info": (0x00, 0x5F, 0xA8),
    "error": (0xA0, 0x20, 0x90),
    "code": LIGHT_CODE,
    "heading": (0x00, 0x5F, 0xA8),
    "link": (0x00, 0x70, 0x90),
    "shadow": (170, 170, 190),
    "pink": (0xC0, 0x20, 0x80),
}


@dataclass(frozen=True, slots=True)
class Palette:
    """Escape sequences for each role (empty strings when colours are off)."""

    theme: Theme = "dark"
    colors: int = 1 << 24
    styled: bool = True  # any escape sequence at all (not on TERM=dumb)
    reset: str = "\x1b[m"
    bold: str = "\x1b[1m"
    italic: str = "\x1b[3m"
    underline: str = "\x1b[4m"
    dim: str = "\x1b[90m"
    green: str = "\x1b[92m"  # greenBright: input box, tool bullet
    yellow: str = "\x1b[93m"  # yellowBright: the status spinner
    info: str = "\x1b[38;2;126;200;255m"
    error: str = "\x1b[38;2;220;138;221m"
    code: str = "\x1b[38;2;230;219;116m"
    heading: str = "\x1b[1m\x1b[38;2;126;200;255m"
    link: str = "\x1b[4m\x1b[38;2;102;217;239m"
    shadow: str = "\x1b[38;2;70;70;90m"
    pink: str = "\x1b[38;2;255;121;198m"
    badges: dict[str, str] = field(
        default_factory=lambda: {
            "info": "\x1b[30m\x1b[44m",
            "warn": "\x1b[30m\x1b[43m",
            "fail": "\x1b[30m\x1b[41m",
            "ask": "\x1b[30m\x1b[42m",
            "ok": "\x1b[30m\x1b[42m",
        }
    )
    bar: dict[str, str] = field(default_factory=lambda: {"green": "\x1b[32m", "yellow": "\x1b[33m", "red": "\x1b[31m"})

    def rgb(self, red: int, green: int, blue: int, background: bool = False) -> str:
        """A true colour (image pixels), at the terminal's depth ('' without colours)."""
        if not self.colors:
            return ""
        if self.colors == 1 << 24:
            return f"\x1b[{48 if background else 38};2;{red};{green};{blue}m"
        key = (self.colors, red, green, blue, background)
        cached = _RGB_CACHE.get(key)
        if cached is None:
            term = _terminal_for_palette
            if term is None:
                return ""
            cached = str(term.on_color_rgb(red, green, blue) if background else term.color_rgb(red, green, blue))
            _RGB_CACHE[key] = cached
        return cached


_RGB_CACHE: dict[tuple[int, int, int, int, bool], str] = {}


_terminal_for_palette: Terminal | None = None
_palette = Palette()


def palette() -> Palette:
    """The palette in use."""
    return _palette


def color_depth(term: Terminal, environ: dict[str, str] | None = None) -> int:
    """Colours to use: blessed's ``number_of_colors``, 0 with ``NO_COLOR``, at least 16 with ``FORCE_COLOR``."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return 0
    colors = term.number_of_colors
    force = env.get("FORCE_COLOR", "")
    if force and force.lower() not in ("0", "false"):
        levels = {"1": 16, "2": 256, "3": 1 << 24}
        colors = max(colors, levels.get(force, 16))
    if env.get("TERM", "") == "dumb" and not force:
        return 0
    return colors


def plain_palette() -> Palette:
    """No escape sequence at all (``TERM=dumb``)."""
    none = {k: "" for k in ("info", "warn", "fail", "ask", "ok")}
    return Palette(
        colors=0,
        styled=False,
        reset="",
        bold="",
        italic="",
        underline="",
        dim="",
        green="",
        yellow="",
        info="",
        error="",
        code="",
        heading="",
        link="",
        shadow="",
        pink="",
        badges=none,
        bar={"green": "", "yellow": "", "red": ""},
    )


def build(term: Terminal, theme: Theme, colors: int) -> Palette:
    """The palette for ``term`` at ``colors`` colours and ``theme``."""
    global _terminal_for_palette
    _terminal_for_palette = term
    if not colors:
        empty = {k: "" for k in ("info", "warn", "fail", "ask", "ok")}
        return Palette(
            theme=theme,
            colors=0,
            dim="",
            green="",
            yellow="",
            info="",
            error="",
            code="",
            heading="\x1b[1m",
            link="\x1b[4m",
            shadow="",
            pink="",
            badges={k: "\x1b[7m" for k in empty},  # reverse video still marks a badge
            bar={"green": "", "yellow": "", "red": ""},
        )
    if not str(term.green):  # FORCE_COLOR on a terminal whose description has no colours: xterm's sequences
        from maia.frontends.terminal.metrics import headless_terminal

        term = headless_terminal()
        _terminal_for_palette = term
    term.number_of_colors = colors  # FORCE_COLOR may ask for more than the terminal description says
    _RGB_CACHE.clear()
    table = _LIGHT if theme == "light" else _DARK

    def fg(role: str) -> str:
        return str(term.color_rgb(*table[role]))

    many = colors >= 16
    green = str(term.bright_green if many else term.green)
    yellow = str(term.bright_yellow if many else term.yellow)
    if theme == "light":  # the bright variants are hard to read on white
        green, yellow = str(term.color_rgb(0x00, 0x87, 0x00)), str(term.color_rgb(0xAF, 0x6F, 0x00))
    return replace(
        Palette(),
        theme=theme,
        colors=colors,
        reset=str(term.normal),
        bold=str(term.bold),
        italic=str(term.italic),
        underline=str(term.underline),
        dim=str(term.bright_black if many else term.dim),
        green=green,
        yellow=yellow,
        info=fg("info"),
        error=fg("error"),
        code=fg("code"),
        heading=str(term.bold) + fg("heading"),
        link=str(term.underline) + fg("link"),
        shadow=fg("shadow"),
        pink=fg("pink"),
        badges={
            "info": str(term.black_on_blue),
            "warn": str(term.black_on_yellow),
            "fail": str(term.black_on_red),
            "ask": str(term.black_on_green),
            "ok": str(term.black_on_green),
        },
        bar={"green": str(term.green), "yellow": str(term.yellow), "red": str(term.red)},
    )


def configure(term: Terminal, theme: Theme, colors: int, styled: bool = True) -> Palette:
    """Use the palette for ``term`` from now on (``styled=False``: no escape sequence at all)."""
    global _palette
    _palette = build(term, theme, colors) if styled else plain_palette()
    return _palette


def reset_palette() -> None:
    """Back to the default palette (true colour, dark): tests."""
    global _palette, _terminal_for_palette
    _palette, _terminal_for_palette = Palette(), None


def theme_from_env(environ: dict[str, str] | None = None) -> Theme | None:
    """``COLORFGBG`` (set by rxvt, Konsole…): a light background when its last field is 7 or 15."""
    env = os.environ if environ is None else environ
    value = env.get("COLORFGBG", "")
    background = value.rsplit(";", 1)[-1] if value else ""
    if background.isdigit():
        return "light" if int(background) in (7, 15) else "dark"
    return None
