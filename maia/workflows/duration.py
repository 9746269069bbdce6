"""Durations as people write them in a workflow's ``timeout`` or ``--timeout``: 90s, 30m, 1.5h, 2d."""

from __future__ import annotations

import re

from maia.i18n import _

UNITS: dict[str, float] = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)\s*$", re.IGNORECASE)
HINT = "90s, 30m, 2h, 1d; a bare number is minutes"


class DurationError(ValueError):
    """A text that is not a duration; the message says how to write one."""


def parse_duration(value: object) -> float:
    """Seconds for ``value``: a number with a unit (ms, s, m, min, h, d) or a bare number of minutes."""
    if isinstance(value, bool) or value is None:
        raise DurationError(_("{value!r} is not a duration ({hint})").format(value=value, hint=HINT))
    if isinstance(value, int | float):
        amount, unit = float(value), "m"
    else:
        match = _DURATION.match(str(value))
        if match is None:
            raise DurationError(_("{value!r} is not a duration ({hint})").format(value=value, hint=HINT))
        amount, unit = float(match.group(1)), (match.group(2).lower() or "m")
        if unit not in UNITS:
            raise DurationError(
                _("{value!r}: unknown unit {unit!r}; use ms, s, m, min, h or d ({hint})").format(
                    value=value, unit=match.group(2), hint=HINT
                )
            )
    seconds = amount * UNITS[unit]
    if seconds <= 0:
        raise DurationError(_("{value!r}: a time limit must be longer than zero").format(value=value))
    return seconds


def format_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``2 h 5 min``, ``3 d 4 h``: short, for listings."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return _("{count:g} s").format(count=round(seconds, 1))
    minutes = int(seconds // 60)
    if minutes < 60:
        return _("{count} min").format(count=minutes)
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return (
            _("{hours} h {minutes} min").format(hours=hours, minutes=minutes)
            if minutes
            else _("{hours} h").format(hours=hours)
        )
    days, hours = divmod(hours, 24)
    return _("{days} d {hours} h").format(days=days, hours=hours) if hours else _("{days} d").format(days=days)
