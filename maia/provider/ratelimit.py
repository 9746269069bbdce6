"""How long to wait after HTTP 429: ``retry-after`` and the rate-limit reset headers, prefixed or not."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

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
