"""The context bar as a pure model (§13.3): a gauge of a fixed number of squares, colours, a label.

The gauge keeps its width whatever the model's maximum (a 1M-token model no longer fills the bar with
100 squares): each square is a tenth of the maximum, and the label gives the figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from maia.i18n import _

SQUARE_TOKENS = 10_000
GAUGE = 10  # squares of the gauge, whatever the maximum
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
    """The bar for ``tokens`` of ``maximum`` in ``width`` columns: ``GAUGE`` squares (none when even the label
    barely fits), each a tenth of the maximum."""
    if not maximum or maximum <= 0:
        label = _("{tokens} tokens · max context unknown").format(tokens=format_tokens(tokens))
        return BarModel(tokens, None, 0, 0, SQUARE_TOKENS, "green", label)
    ratio = tokens / maximum
    level: Level = "red" if ratio >= RED_AT else "yellow" if ratio >= YELLOW_AT else "green"
    label = f"{format_tokens(tokens)} / {format_tokens(maximum)} · {round(ratio * 100)}%"
    squares = GAUGE if GAUGE + 1 + len(label) <= width else 0
    filled = min(squares, math.ceil(ratio * squares)) if tokens > 0 and squares else 0
    return BarModel(tokens, maximum, squares, filled, max(1, math.ceil(maximum / GAUGE)), level, label)
