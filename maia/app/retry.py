"""One retry policy for every front end: rate and usage limits (429), transient server failures (5xx) and
outages (the proxy unreachable, a connection dropped or timed out), the last for a bounded window.

The chat, ``maia ask``, sub-agents and workflows all send through :func:`send_with_retries`; they
differ only in how they wait (a countdown on the status line, a line on stderr, a workflow state),
which is the ``on_wait`` callback they pass.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from maia.core.errors import (
    ConfigError,
    HttpStatusError,
    IncompleteStream,
    ProviderError,
    ProviderTimeout,
    ProviderUnreachable,
    RateLimited,
    StreamError,
)
from maia.i18n import _

if TYPE_CHECKING:
    from maia.agent.conversation import Conversation
    from maia.agent.loop import LimitCallback, TurnResult
    from maia.core.settings import Settings

SCALE_VARIABLE = "MAIA_RETRY_SCALE"  # a factor on the waits MAIA chooses itself (tests shorten them)

TRANSIENT_STATUSES = frozenset({500, 502, 503, 504, 529})
_TRANSIENT_WORDS = ("overloaded", "temporarily unavailable", "service unavailable", "bad gateway")


Reason = Literal["rate_limited", "overloaded", "unreachable"]
PERSISTENT_AFTER = 3  # this many 429s in a row without a time: the limit "keeps coming"
DEFAULT_RATE_LIMIT_BACKOFF: tuple[float, ...] = (5.0, 10.0, 20.0, 40.0, 60.0, 120.0, 300.0)
DEFAULT_OUTAGE_WINDOW = 120.0


@dataclass(frozen=True, slots=True)
class Wait:
    """A pause before trying again: why, how long, which attempt, and the error that caused it.

    ``known``: the server said when (a header or its message); False: MAIA's own backoff."""

    reason: Reason
    delay: float
    attempt: int
    error: ProviderError
    since: datetime = field(default_factory=datetime.now)
    known: bool = True

    @property
    def until(self) -> datetime:
        """When the retry happens."""
        return self.since + timedelta(seconds=self.delay)

    @property
    def persistent(self) -> bool:
        """A 429 that keeps coming with no time given: the chat asks before waiting again (at the third
        in a row, then every fifth)."""
        late = self.attempt - PERSISTENT_AFTER
        return self.reason == "rate_limited" and not self.known and late >= 0 and late % 5 == 0


def is_outage(error: BaseException) -> bool:
    """The proxy could not be reached, the connection dropped mid-answer, or it sent nothing in time."""
    return isinstance(error, ProviderUnreachable | ProviderTimeout | IncompleteStream)


def status_words(error: ProviderError) -> str:
    """What a retried failure is, in a few words for the status line (a 500 is no "overload")."""
    from maia.i18n import _

    if isinstance(error, ProviderUnreachable):
        return _("LiteLLM unreachable")
    if isinstance(error, ProviderTimeout):
        return _("No answer from LiteLLM")
    if isinstance(error, IncompleteStream):
        return _("Connection to LiteLLM lost")
    status = error.status if isinstance(error, HttpStatusError) else None
    if status is None and isinstance(error, StreamError) and (error.code or "").strip().isdigit():
        status = int((error.code or "").strip())
    words = {
        500: _("Server error (HTTP 500)"),
        502: _("Bad gateway (HTTP 502)"),
        503: _("Service unavailable (HTTP 503)"),
        504: _("Gateway timeout (HTTP 504)"),
        529: _("Server overloaded (HTTP 529)"),
    }
    if status in words:
        return words[status]
    if isinstance(error, StreamError) and "overloaded" in error.detail.lower():
        return _("Server overloaded")
    return _("Server error")


def is_transient(error: BaseException) -> bool:
    """A server-side failure worth retrying: HTTP 500/502/503/504/529, or an in-stream "overloaded"."""
    if isinstance(error, RateLimited):
        return False
    if isinstance(error, HttpStatusError):
        return error.status in TRANSIENT_STATUSES
    if isinstance(error, StreamError):
        code = (error.code or "").strip()
        detail = error.detail.lower()
        return code in {str(s) for s in TRANSIENT_STATUSES} or any(w in detail for w in _TRANSIENT_WORDS)
    return False


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times and how long to wait before giving up."""

    rate_limit_attempts: int = 20
    rate_limit_waits: tuple[float, ...] = DEFAULT_RATE_LIMIT_BACKOFF  # when nothing tells the time; the last repeats
    transient_attempts: int = 4
    transient_base: float = 2.0  # 2, 4, 8, 16 s (capped), each ± jitter
    transient_cap: float = 30.0
    jitter: float = 0.25
    long_wait: float = 15 * 60  # a wait longer than this needs the user's consent in the chat
    outage_window: float = DEFAULT_OUTAGE_WINDOW  # how long an outage is retried, from its first failure
    outage_base: float = 1.0  # 1, 2, 4, 8, 16, 30 s… within the window
    outage_cap: float = 30.0
    scale: float = 1.0  # a factor on the waits MAIA chooses (MAIA_RETRY_SCALE); a delay the server states is kept

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> RetryPolicy:
        """The policy with ``MAIA_RETRY_SCALE`` applied (ConfigError for a value that is no number ≥ 0)."""
        return cls(scale=retry_scale(env))

    @classmethod
    def from_settings(cls, settings: Settings, env: Mapping[str, str] | None = None) -> RetryPolicy:
        """The policy with the user's ``RateLimitBackoff`` and ``OutageRetrySeconds`` (and ``MAIA_RETRY_SCALE``)."""
        return cls(
            rate_limit_waits=tuple(settings.rate_limit_backoff) or DEFAULT_RATE_LIMIT_BACKOFF,
            outage_window=settings.outage_retry,
            scale=retry_scale(env),
        )

    def wait_for(
        self, error: BaseException, attempt: int, rng: random.Random | None = None, *, elapsed: float = 0.0
    ) -> Wait | None:
        """The wait before attempt ``attempt + 1`` after ``error``, or None when it must not be retried.

        ``elapsed``: seconds since the first failure of this outage (outages are retried within a window)."""
        if isinstance(error, RateLimited):
            if attempt > self.rate_limit_attempts:
                return None
            delay = error.retry_after
            if delay is not None:
                return Wait("rate_limited", max(0.0, delay), attempt, error)
            delay = self.rate_limit_waits[min(attempt - 1, len(self.rate_limit_waits) - 1)] * self.scale
            return Wait("rate_limited", max(0.0, delay), attempt, error, known=False)
        if isinstance(error, ProviderError) and is_outage(error):
            left = self.outage_window - elapsed
            if left <= 0:
                return None
            base = min(self.outage_cap, self.outage_base * 2 ** (attempt - 1)) * self.scale
            spread = (rng or random).uniform(-self.jitter, self.jitter)
            return Wait("unreachable", round(min(left, base * (1 + spread)), 2), attempt, error, known=False)
        if isinstance(error, ProviderError) and is_transient(error):
            if attempt > self.transient_attempts:
                return None
            stated = error.retry_after if isinstance(error, HttpStatusError) else None
            if stated is not None:  # the server said when (Retry-After on a 503)
                return Wait("overloaded", max(0.0, min(stated, self.long_wait + 1)), attempt, error)
            base = min(self.transient_cap, self.transient_base * 2 ** (attempt - 1)) * self.scale
            spread = (rng or random).uniform(-self.jitter, self.jitter)
            return Wait("overloaded", round(base * (1 + spread), 2), attempt, error, known=False)
        return None


def retry_scale(env: Mapping[str, str] | None = None) -> float:
    """``MAIA_RETRY_SCALE`` (1 when unset); ConfigError for a value that is no number ≥ 0."""
    value = (os.environ if env is None else env).get(SCALE_VARIABLE, "").strip()
    if not value:
        return 1.0
    try:
        scale = float(value)
    except ValueError:
        scale = -1.0
    if not math.isfinite(scale) or scale < 0:
        raise ConfigError(
            _("{variable} must be a number, 0 or more (it multiplies the waits before a retry): {value!r}.").format(
                variable=SCALE_VARIABLE, value=value
            )
        )
    return scale


def kind_of(error: ProviderError) -> Reason:
    """Which retry budget ``error`` counts against."""
    if isinstance(error, RateLimited):
        return "rate_limited"
    return "unreachable" if is_outage(error) else "overloaded"


class Attempts:
    """Failures in a row of each kind, and when the current outage began; progress starts them over."""

    def __init__(self) -> None:
        self.counts: dict[Reason, int] = {}
        self.outage_since: float | None = None
        self.reset()

    def reset(self) -> None:
        """A request got through: the next failure is a first one again."""
        self.counts = {"rate_limited": 0, "overloaded": 0, "unreachable": 0}
        self.outage_since = None

    def failed(self, error: ProviderError, now: float) -> tuple[int, float]:
        """Count ``error``: (its attempt number, seconds since the outage began)."""
        kind = kind_of(error)
        self.counts[kind] += 1
        if kind != "unreachable":
            self.outage_since = None
            return self.counts[kind], 0.0
        if self.outage_since is None:
            self.outage_since = now
        return self.counts[kind], now - self.outage_since


OnWait = Callable[[Wait], Awaitable[bool]]


async def send_with_retries(
    conversation: Conversation,
    text: str,
    *,
    on_wait: OnWait,
    policy: RetryPolicy | None = None,
    on_limit: LimitCallback | None = None,
    max_iterations: int | None = None,
) -> TurnResult:
    """Send ``text``; on a retryable failure let ``on_wait`` wait (False: give up) and try again.

    A retry never loses the request and never repeats tools that already ran: when the failed attempt
    left the request in the conversation with unanswered tool results, the turn is resumed; when it
    was rolled back (or replaced by a compaction), the request is sent again.
    """
    policy = policy or RetryPolicy.from_environment()
    attempts = Attempts()
    resume = False
    while True:
        before = conversation.marker()
        try:
            if resume:
                return await conversation.resume(on_limit=on_limit, max_iterations=max_iterations)
            return await conversation.send(text, on_limit=on_limit, max_iterations=max_iterations)
        except ProviderError as error:
            if conversation.marker() != before:
                attempts.reset()  # the turn moved on before failing: a new failure, not the same one again
            attempt, elapsed = attempts.failed(error, time.monotonic())
            wait = policy.wait_for(error, attempt, elapsed=elapsed)
            if wait is None:
                raise
            # resumed only if this attempt itself moved the conversation on (a loaded session may
            # already end with tool results: its can_resume says nothing about the new request)
            resume = (resume or conversation.marker() != before) and conversation.agent.can_resume
            if not await on_wait(wait):
                raise
