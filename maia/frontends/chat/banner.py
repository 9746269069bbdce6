"""The welcome banner (§15.4): a 32×32 true-colour image in half blocks beside a rainbow pixel title."""

from __future__ import annotations

import colorsys
import functools
import json
from importlib import resources

from maia.frontends.terminal.metrics import wrap
from maia.frontends.terminal.style import palette
from maia.i18n import _

FULL_WIDTH = 58
MEDIUM_WIDTH = 25
FULL_HEIGHT = 30  # the 16-row image from this height; below, the image at half size (one screen on 80×24)
FONT = {  # 5×7 pixel letters
    "M": ["10001", "11011", "10101", "10101", "10001", "10001", "10001"],
    "a": ["00000", "00000", "01110", "00001", "01111", "10001", "01111"],
    "i": ["00100", "00000", "01100", "00100", "00100", "00100", "01110"],
}


def taglines() -> tuple[str, str]:
    """The two lines under the title."""
    return (_("Command-line AI assistant, powered by your own language models."), _("One agent, many models"))


@functools.lru_cache(maxsize=1)
def image_rows() -> list[list[str]]:
    """The packaged image: 32 rows of 32 ``rrggbb`` colours ("" is transparent)."""
    data = json.loads(resources.files("maia.frontends.chat").joinpath("assets/banner.json").read_text(encoding="utf-8"))
    return [[row[i : i + 6].replace("......", "") for i in range(0, len(row), 6)] for row in data["rows"]]


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[0:2], 16), int(colour[2:4], 16), int(colour[4:6], 16)


def _mean(colours: list[str]) -> str:
    """The average of ``rrggbb`` colours ("" is transparent: it wins when it is half of them or more)."""
    solid = [c for c in colours if c]
    if len(solid) * 2 <= len(colours):
        return ""
    channels = [_rgb(c) for c in solid]
    return "".join(f"{round(sum(c[i] for c in channels) / len(channels)):02x}" for i in range(3))


@functools.lru_cache(maxsize=1)
def half_rows() -> list[list[str]]:
    """The image at half size (16×16): each pixel the average of four."""
    rows = image_rows()
    return [
        [_mean([rows[y][x], rows[y][x + 1], rows[y + 1][x], rows[y + 1][x + 1]]) for x in range(0, len(rows[y]), 2)]
        for y in range(0, len(rows), 2)
    ]


def image_lines(half: bool = False) -> list[str]:
    """The image in half blocks: each character shows two pixels (▀ top colour, background bottom)."""
    rows = half_rows() if half else image_rows()
    p = palette()
    lines = []
    for y in range(0, len(rows), 2):
        out = []
        for top, bottom in zip(rows[y], rows[y + 1], strict=True):
            if top and bottom:
                out.append(p.rgb(*_rgb(top)) + p.rgb(*_rgb(bottom), background=True) + "▀" + p.reset)
            elif top:
                out.append(p.rgb(*_rgb(top)) + "▀" + p.reset)
            elif bottom:
                out.append(p.rgb(*_rgb(bottom)) + "▄" + p.reset)
            else:
                out.append(" ")
        lines.append("".join(out))
    return lines


def title_lines(word: str = "Maia") -> list[str]:
    """The title in the pixel font, with a shadow and a rainbow gradient from left to right."""
    glyphs = [FONT[c] for c in word]
    width = len(glyphs) * 6 - 1
    pixels = [[False] * width for _ in range(7)]
    for n, glyph in enumerate(glyphs):
        for y, row in enumerate(glyph):
            for x, bit in enumerate(row):
                pixels[y][n * 6 + x] = bit == "1"
    p = palette()
    lines = []
    for y in range(8):
        out = []
        for x in range(width + 1):
            on = y < 7 and x < width and pixels[y][x]
            shadow = y > 0 and x > 0 and pixels[y - 1][x - 1]
            if on:
                r, g, b = colorsys.hsv_to_rgb(x / (width + 2), 0.75, 1.0)
                out.append(f"{p.rgb(round(r * 255), round(g * 255), round(b * 255))}█{p.reset}")
            elif shadow and p.colors:  # without colours a shadow would merge with the letters
                out.append(f"{p.shadow}█{p.reset}")
            else:
                out.append(" ")
        lines.append("".join(out))
    return lines


def banner_lines(width: int, height: int = FULL_HEIGHT) -> list[str]:
    """The banner for a terminal ``width`` columns wide: full from 58 (the image at half size below 30 rows),
    without the image from 25, else a frame."""
    green, pink = taglines()
    p = palette()
    green_colour, pink_colour = p.green, p.pink
    if width >= FULL_WIDTH and p.colors:  # without colours the image would be a grey blot
        image = image_lines(half=height < FULL_HEIGHT)
        title = title_lines()
        top = (len(image) - len(title)) // 2
        lines = []
        for n, row in enumerate(image):
            right = title[n - top] if 0 <= n - top < len(title) else ""
            lines.append(f"{row}  {right}".rstrip())
        lines.append("")
        lines.extend(green_colour + line + p.reset for line in wrap(green, width - 1))
        lines.extend(pink_colour + line + p.reset for line in wrap(pink, width - 1))
        return lines
    if width >= MEDIUM_WIDTH:
        lines = list(title_lines())
        lines.append("")
        lines.extend(green_colour + line + p.reset for line in wrap(green, width - 1))
        lines.extend(pink_colour + line + p.reset for line in wrap(pink, width - 1))
        return lines
    inner = max(6, width - 2)
    centred = "Maia".center(inner)
    frame = [f"╔{'═' * inner}╗", f"║{centred}║", f"╚{'═' * inner}╝"]
    return [*frame, *[pink_colour + line + p.reset for line in wrap(pink, width - 1)]]
