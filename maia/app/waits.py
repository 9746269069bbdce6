"""The words every front end uses while it waits for the server: one line per wait, the right words per cause.

A known reset ("limited until 15:00, resuming then"), a 429 that says no time (MAIA's own growing
backoff, said as such), a failing server named by its status (a 500 is no "overload"), an outage.
"""

from __future__ import annotations

from datetime import datetime

from maia.app.retry import Wait, status_words
from maia.i18n import _


def clock(when: datetime, delay: float) -> str:
    """``15:00`` for a wait of minutes ending on a whole minute, else ``15:00:07``."""
    if delay >= 60 and when.second == 0:
        return when.strftime("%H:%M")
    return when.strftime("%H:%M:%S")


def span(seconds: float) -> str:
    """``42 s``, ``4 min 12 s``, ``3 h 05 min``."""
    total = int(seconds + 0.999)
    if total < 60:
        return _("{seconds} s").format(seconds=total)
    if total < 3600:
        minutes, rest = divmod(total, 60)
        return _("{minutes} min {seconds:02d} s").format(minutes=minutes, seconds=rest)
    hours, rest = divmod(total, 3600)
    return _("{hours} h {minutes:02d} min").format(hours=hours, minutes=rest // 60)


def wait_line(wait: Wait, left: float | None = None) -> str:
    """One line saying why MAIA waits, until when, and how long is left (``left``: now; default: all of it)."""
    at = clock(wait.until, wait.delay)
    remaining = span(wait.delay if left is None else left)
    if wait.reason == "rate_limited" and wait.known:
        return _("Limited until {time}, resuming then ({left})").format(time=at, left=remaining)
    if wait.reason == "rate_limited":
        return _("Rate-limited, no time given: retrying at {time} ({left}, attempt {attempt})").format(
            time=at, left=remaining, attempt=wait.attempt
        )
    return _("{what}: retrying at {time} ({left})").format(what=status_words(wait.error), time=at, left=remaining)
