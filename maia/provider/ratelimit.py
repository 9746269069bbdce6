"""How long a rate or usage limit lasts: ``retry-after`` and the reset headers, prefixed or not, then the
error text ("resets at 3pm", "try again in 4h 12m", an ISO time) and the user's own patterns."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

from maia.core.settings import TIME_GROUP

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_PREFIX = "llm_provider-"


def parse_delay(value: str, now: datetime | None = None) -> float | None:
    """Seconds to wait from one header value: seconds, a duration (``6m0s``), an HTTP or ISO date."""
    text = value.strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    if _DURATION_PART.fullmatch(text) or re.fullmatch(r"(?:\d+(?:\.\d+)?(?:ms|us|µs|ns|h|m|s))+", text):
        return sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(text))
    now = now or datetime.now(UTC)
    when: datetime | None = None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def retry_delay(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The delay a 429 answer asks for, or None when its headers give none.

    ``retry-after`` (plain, then LiteLLM's ``llm_provider-`` copy) wins; otherwise the longest reset
    among the exhausted limits (remaining 0 or unknown), since each must reset before a retry.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    for name in ("retry-after", _PREFIX + "retry-after"):
        if name in lowered:
            delay = parse_delay(lowered[name], now)
            if delay is not None:
                return delay
    for name in ("retry-after-ms", _PREFIX + "retry-after-ms"):
        if name in lowered:
            try:
                return max(0.0, float(lowered[name]) / 1000)
            except ValueError:
                pass
    exhausted: list[float] = []
    others: list[float] = []
    for name, value in lowered.items():
        prefix = _PREFIX if name.startswith(_PREFIX) else ""
        bare = name[len(prefix) :]
        if bare.startswith("x-ratelimit-reset"):
            remaining = prefix + bare.replace("x-ratelimit-reset", "x-ratelimit-remaining", 1)
        elif bare.startswith("anthropic-ratelimit-") and bare.endswith("-reset"):
            remaining = prefix + bare[: -len("-reset")] + "-remaining"
        else:
            continue
        delay = parse_delay(value, now)
        if delay is None:
            continue
        left = lowered.get(remaining, "").strip()
        (exhausted if left in ("0", "") else others).append(delay)
    if exhausted:
        return max(exhausted)
    return max(others) if others else None


# --- the error text: "resets at 3pm", "try again in 4h 12m", an ISO time… ------------------------------

_UNIT_WORDS: dict[str, float] = {
    "ms": 1e-3,
    "millisecond": 1e-3,
    "milliseconds": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
}
_AMOUNT = re.compile(
    r"(\d+(?:\.\d+)?)\s*(milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|hr|h|days?|d)\b", re.IGNORECASE
)
_DURATION_TEXT = re.compile(
    r"(?:\d+(?:\.\d+)?\s*(?:milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|hr|h|days?|d)\b"
    r"(?:\s*(?:,|and)?\s*)?)+",
    re.IGNORECASE,
)
_CLOCK = re.compile(
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?(?::(?P<second>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?"
    r"(?:\s*\(?(?P<zone>utc|gmt|z|[+-]\d{2}:?\d{2})\)?)?$",
    re.IGNORECASE,
)
_ISO = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
_CLOCK_TEXT = (
    r"(?:\d{1,2}(?::\d{2}){1,2}\s*(?:[ap]\.?m\.?)?|\d{1,2}\s*[ap]\.?m\.?)"
    r"(?:\s*\(?(?:UTC|GMT|Z|[+-]\d{2}:?\d{2})\)?)?"
)
_DURATION_RE = r"(?:\d+(?:\.\d+)?\s*[a-z]+\b(?:\s*(?:,|and)?\s*)?)+"

# Known provider phrasings, most precise first; each names the time in the group ``time``.
KNOWN_PHRASINGS: tuple[str, ...] = (
    # Claude's usage limit: "Claude AI usage limit reached|1735689600" (a Unix time)
    r"limit reached\|(?P<time>\d{9,11})\b",
    # an ISO time after "reset"/"available"/"until"/"after"
    rf"(?:resets?|available|until|after|retry)\D{{0,20}}?(?P<time>{_ISO})",
    # "try again in 4h 12m", "retry in 27.8s", "resets in 3 hours", "retry after 30 seconds", "wait 20s"
    rf"(?:again|retry|resets?|reset|available|wait)\s+(?:in|after|for)?\s*(?P<time>{_DURATION_RE})",
    # "resets at 3pm", "reset at 15:00 UTC", "try again at 3:30 pm", "available again at 15:00"
    rf"(?:resets?|again|available|retry|until)\s+(?:at|after|on)?\s*(?P<time>{_CLOCK_TEXT})(?!\d)",
)


@functools.cache
def known_patterns() -> tuple[re.Pattern[str], ...]:
    """The known phrasings, compiled at their first use (a run that meets no limit never needs them)."""
    return tuple(re.compile(p, re.IGNORECASE) for p in KNOWN_PHRASINGS)


def parse_duration_text(text: str) -> float | None:
    """Seconds in ``4h 12m``, ``27.8s``, ``3 hours and 5 minutes``; None when it is no duration."""
    text = text.strip().rstrip(".")
    if not text or not _DURATION_TEXT.fullmatch(text):
        return None
    parts = _AMOUNT.findall(text)
    if not parts:
        return None
    return sum(float(n) * _UNIT_WORDS[u.lower()] for n, u in parts)


def parse_clock(text: str, now: datetime) -> float | None:
    """Seconds until the next ``3pm``, ``15:00``, ``3:30 pm UTC`` (local time unless a zone is given)."""
    match = _CLOCK.match(text.strip().rstrip("."))
    if match is None:
        return None
    hour, minute, second = int(match["hour"]), int(match["minute"] or 0), int(match["second"] or 0)
    ampm = (match["ampm"] or "").lower().replace(".", "")
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    elif match["minute"] is None:
        return None  # a bare number is no time of day
    if hour > 23 or minute > 59 or second > 59:
        return None
    zone = (match["zone"] or "").lower()
    if zone in ("utc", "gmt", "z"):
        here = now.astimezone(UTC)
    elif zone:
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        here = now.astimezone(timezone(sign * offset))
    else:
        here = now.astimezone()  # the user's local time, as the provider's message means it
    when = here.replace(hour=hour, minute=minute, second=second, microsecond=0)
    if when <= here - timedelta(seconds=1):
        when += timedelta(days=1)  # "resets at 3pm" said at 4pm: tomorrow
    return max(0.0, (when - here).total_seconds())


def parse_when(text: str, now: datetime | None = None) -> float | None:
    """Seconds until the time a limit message names: a duration, a time of day, an ISO or HTTP date,
    a Unix time; None when the text is none of them."""
    now = now or datetime.now(UTC)
    value = text.strip().rstrip(".")
    if not value:
        return None
    if re.fullmatch(r"\d{9,11}", value):  # a Unix time
        return max(0.0, float(value) - now.timestamp())
    for parse in (parse_duration_text, lambda v: parse_clock(v, now)):
        seconds = parse(value)
        if seconds is not None:
            return seconds
    if re.fullmatch(r"\d+(?:\.\d+)?", value):
        return float(value)  # a bare number in a user's pattern: seconds
    return parse_delay(value, now)


def reset_from_text(text: str, now: datetime | None = None, patterns: Sequence[re.Pattern[str]] = ()) -> float | None:
    """Seconds until the limit resets as the error text tells it (the user's patterns first), or None."""
    now = now or datetime.now(UTC)
    for regex in (*patterns, *known_patterns()):
        for match in regex.finditer(text):
            found = match.group(TIME_GROUP)
            seconds = parse_when(found, now) if found else None
            if seconds is not None:
                return seconds
    return None


_LIMIT_WORDS = ("usage limit", "rate limit", "quota", "too many requests", "limit reached", "limit exceeded")


def mentions_limit(text: str) -> bool:
    """The text speaks of a usage, quota or rate limit (some gateways answer one with a 400, 403 or 503)."""
    lowered = text.lower()
    return any(words in lowered for words in _LIMIT_WORDS)
