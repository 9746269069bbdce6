"""One retry policy for every front end: rate limits (429) and transient server failures (5xx).

The chat, ``maia ask``, sub-agents and workflows all send through :func:`send_with_retries`; they
differ only in how they wait (a countdown on the status line, a line on stderr, a workflow state),
which is the ``on_wait`` callback they pass.

``MAIA_RETRY_SCALE`` multiplies the waits MAIA chooses itself (never a delay the server states); the
sub-agents and workflow workers MAIA starts inherit it, so one variable sets every process's waits.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from maia.errors import ConfigError, HttpStatusError, ProviderError, RateLimited, StreamError
from maia.i18n import _

if TYPE_CHECKING:
    from maia.agent import LimitCallback, TurnResult
    from maia.conversation import Conversation

SCALE_VARIABLE = "MAIA_RETRY_SCALE"
TRANSIENT_STATUSES = frozenset({500, 502, 503, 504, 529})
_TRANSIENT_WORDS = ("overloaded", "temporarily unavailable", "service unavailable", "bad gateway")


@dataclass(frozen=True, slots=True)
class Wait:
    """A pause before trying again: why, how long, which attempt, and the error that caused it."""

    reason: Literal["rate_limited", "overloaded"]
    delay: float
    attempt: int
    error: ProviderError
    since: datetime = field(default_factory=datetime.now)

    @property
    def until(self) -> datetime:
        """When the retry happens."""
        return self.since + timedelta(seconds=self.delay)


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

    rate_limit_attempts: int = 8
    rate_limit_waits: tuple[float, ...] = (5.0, 10.0, 20.0, 40.0, 60.0)  # when the server gives no delay
    transient_attempts: int = 4
    transient_base: float = 2.0  # 2, 4, 8, 16 s (capped), each ± jitter
    transient_cap: float = 30.0
    jitter: float = 0.25
    long_wait: float = 15 * 60  # a wait longer than this needs the user's consent (or ends a script)
    scale: float = 1.0  # a factor on the waits above (MAIA_RETRY_SCALE); a delay the server states is kept

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> RetryPolicy:
        """The policy with ``MAIA_RETRY_SCALE`` applied (ConfigError for a value that is no number ≥ 0)."""
        value = (os.environ if env is None else env).get(SCALE_VARIABLE, "").strip()
        if not value:
            return cls()
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
        return cls(scale=scale)

    def wait_for(self, error: BaseException, attempt: int, rng: random.Random | None = None) -> Wait | None:
        """The wait before attempt ``attempt + 1`` after ``error``, or None when it must not be retried."""
        if isinstance(error, RateLimited):
            if attempt > self.rate_limit_attempts:
                return None
            delay = error.retry_after
            if delay is None:
                delay = self.rate_limit_waits[min(attempt - 1, len(self.rate_limit_waits) - 1)] * self.scale
            return Wait("rate_limited", max(0.0, delay), attempt, error)
        if isinstance(error, ProviderError) and is_transient(error):
            if attempt > self.transient_attempts:
                return None
            stated = error.retry_after if isinstance(error, HttpStatusError) else None
            if stated is not None:  # the server said when (Retry-After on a 503)
                return Wait("overloaded", max(0.0, min(stated, self.long_wait + 1)), attempt, error)
            base = min(self.transient_cap, self.transient_base * 2 ** (attempt - 1)) * self.scale
            spread = (rng or random).uniform(-self.jitter, self.jitter)
            return Wait("overloaded", round(base * (1 + spread), 2), attempt, error)
        return None


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
    attempts = {"rate_limited": 0, "overloaded": 0}
    resume = False
    while True:
        before = conversation.marker()
        try:
            if resume:
                return await conversation.resume(on_limit=on_limit, max_iterations=max_iterations)
            return await conversation.send(text, on_limit=on_limit, max_iterations=max_iterations)
        except ProviderError as error:
            kind = "rate_limited" if isinstance(error, RateLimited) else "overloaded"
            attempts[kind] += 1
            wait = policy.wait_for(error, attempts[kind])
            if wait is None:
                raise
            # resumed only if this attempt itself moved the conversation on (a loaded session may
            # already end with tool results: its can_resume says nothing about the new request)
            resume = (resume or conversation.marker() != before) and conversation.agent.can_resume
            if not await on_wait(wait):
                raise
