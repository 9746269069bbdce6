"""Draws MAIA's banner image (original pixel art: a small robot) and writes banner.json beside this script.

Run: ``python maia/frontends/chat/assets/make_banner.py``. The image is 32×32 true-colour pixels; "" is transparent.
"""

from __future__ import annotations

import colorsys
import json
import math
from pathlib import Path

SIZE = 32


def hexcolour(r: float, g: float, b: float) -> str:
    """0..1 floats → ``rrggbb``."""
    return "".join(f"{max(0, min(255, round(v * 255))):02x}" for v in (r, g, b))


def draw() -> list[list[str]]:
    """The robot: antenna, rounded head with a gradient, a visor with two eyes, a smile, ears."""
    image = [["" for _ in range(SIZE)] for _ in range(SIZE)]

    def put(x: int, y: int, colour: str) -> None:
        if 0 <= x < SIZE and 0 <= y < SIZE:
            image[y][x] = colour

    # antenna: a stalk and a glowing ball
    for y in range(3, 8):
        put(15, y, "9aa5b1")
        put(16, y, "7b8794")
    for y in range(0, 4):
        for x in range(13, 19):
            if (x - 15.5) ** 2 + (y - 1.5) ** 2 <= 5.5:
                put(x, y, "ffb703" if (x - 15) ** 2 + (y - 1) ** 2 > 1 else "fff3b0")
    # head: rounded rectangle, teal to violet from top to bottom
    top, bottom, left, right, radius = 8, 28, 4, 27, 4
    for y in range(top, bottom + 1):
        hue = 0.47 + (y - top) / (bottom - top) * 0.25
        for x in range(left, right + 1):
            dx = max(left + radius - x, 0, x - (right - radius))
            dy = max(top + radius - y, 0, y - (bottom - radius))
            if dx * dx + dy * dy <= radius * radius:
                light = 0.55 - 0.12 * (x - left) / (right - left)
                put(x, y, hexcolour(*colorsys.hls_to_rgb(hue, light, 0.6)))
    # ears
    for y in range(15, 21):
        for x in (2, 3, 28, 29):
            put(x, y, "5c677d")
    # visor
    for y in range(12, 20):
        for x in range(7, 25):
            put(x, y, "1d2433" if (y, x) not in {(12, 7), (12, 24), (19, 7), (19, 24)} else image[y][x])
    # eyes: cyan discs with a white glint
    for cx in (11.5, 20.5):
        for y in range(13, 19):
            for x in range(8, 24):
                d = math.hypot(x - cx, y - 15.5)
                if d <= 2.3:
                    put(x, y, "e0fbfc" if d < 0.8 else "48cae4")
    # smile
    for x in range(11, 21):
        y = 23 + round(((x - 15.5) / 5) ** 2 * -2)
        put(x, y, "ffd6e0")
    return image


def main() -> None:
    """Write banner.json."""
    rows = ["".join(p or "......" for p in row) for row in draw()]
    (Path(__file__).with_name("banner.json")).write_text(json.dumps({"size": SIZE, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
