"""The context bar as a pure model (§13.3): squares of 10,000 tokens, colours, labels, growing scale."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from maia.i18n import _

SQUARE_TOKENS = 10_000
YELLOW_AT = 0.60
RED_AT = 0.85
Level = Literal["green", "yellow", "red"]


def format_tokens(count: int) -> str:
    """``950``, ``12.3k``, ``123.5k``, ``200k``, ``1.049M`` (100-token precision below a million, then 1,000)."""
    if count < 1_000:
        return str(count)
    hundreds = round(count / 100) * 100
    if hundreds < 1_000_000:
        text = f"{hundreds / 1000:.1f}".rstrip("0").rstrip(".")
        return f"{text}k"
    thousands = round(count / 1000) * 1000
    text = f"{thousands / 1_000_000:.3f}".rstrip("0").rstrip(".")
    return f"{text}M"


@dataclass(frozen=True, slots=True)
class BarModel:
    """What the bar shows: ``filled`` of ``squares`` at ``scale`` tokens each, a colour level, a label."""

    tokens: int
    maximum: int | None
    squares: int
    filled: int
    scale: int
    level: Level
    label: str

    @property
    def text(self) -> str:
        """The bar as plain text (■ filled, □ empty), then the label."""
        bar = "■" * self.filled + "□" * (self.squares - self.filled)
        return f"{bar} {self.label}".strip()


def bar_model(tokens: int, maximum: int | None, width: int) -> BarModel:
    """The bar for ``tokens`` of ``maximum`` in ``width`` columns; the scale grows by 10,000 to fit."""
    if not maximum or maximum <= 0:
        label = _("{tokens} tokens · max context unknown").format(tokens=format_tokens(tokens))
        return BarModel(tokens, None, 0, 0, SQUARE_TOKENS, "green", label)
    ratio = tokens / maximum
    level: Level = "red" if ratio >= RED_AT else "yellow" if ratio >= YELLOW_AT else "green"
    percent = round(ratio * 100)
    scale = SQUARE_TOKENS
    while True:
        squares = max(1, math.ceil(maximum / scale))
        base = f"{format_tokens(tokens)} / {format_tokens(maximum)} · {percent}%"
        label = base if scale == SQUARE_TOKENS else f"{base} · 1■ = {format_tokens(scale)}"
        if squares + 1 + len(label) <= width or squares == 1:
            break
        scale += SQUARE_TOKENS
    filled = min(squares, math.ceil(tokens / scale)) if tokens > 0 else 0
    if tokens > 0:
        filled = max(1, filled)
    return BarModel(tokens, maximum, squares, filled, scale, level, label)
