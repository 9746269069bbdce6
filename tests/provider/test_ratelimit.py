"""The delay to wait after HTTP 429, from every header form LiteLLM passes through."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from maia.core.settings import compile_patterns
from maia.provider.ratelimit import parse_delay, reset_from_text, retry_delay
from tests.conftest import fixture_meta

NOW = datetime(2030, 1, 1, 0, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7.0),
        ("1.5", 1.5),
        ("0", 0.0),
        ("-3", 0.0),
        ("2s", 2.0),
        ("6m0s", 360.0),
        ("1h2m3.5s", 3723.5),
        ("250ms", 0.25),
        ("Tue, 01 Jan 2030 00:00:30 GMT", 30.0),
        ("2030-01-01T00:00:02Z", 2.0),
        ("2030-01-01T00:01:00+00:00", 60.0),
        ("2029-12-31T23:59:00Z", 0.0),
        ("soon", None),
        ("", None),
    ],
)
def test_parse_delay(value: str, seconds: float | None) -> None:
    assert parse_delay(value, NOW) == seconds


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "12"}, 12.0),
        ({"llm_provider-retry-after": "7"}, 7.0),
        ({"retry-after": "3", "llm_provider-retry-after": "7"}, 3.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"x-ratelimit-reset-requests": "2s", "x-ratelimit-remaining-requests": "0"}, 2.0),
        ({"llm_provider-x-ratelimit-reset-tokens": "6m0s", "llm_provider-x-ratelimit-remaining-tokens": "0"}, 360.0),
        (
            {
                "x-ratelimit-reset-requests": "1s",
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-tokens": "9s",
                "x-ratelimit-remaining-tokens": "5000",
            },
            1.0,
        ),
        ({"x-ratelimit-reset-requests": "2s", "x-ratelimit-reset-tokens": "5s"}, 5.0),
        (
            {
                "llm_provider-anthropic-ratelimit-requests-reset": "2030-01-01T00:00:04Z",
                "llm_provider-anthropic-ratelimit-requests-remaining": "0",
            },
            4.0,
        ),
        ({"content-type": "application/json"}, None),
    ],
)
def test_retry_delay_from_headers(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_delay(headers, NOW) == seconds


@pytest.mark.parametrize("stem", ["scripted-openai-rate-limit", "scripted-anthropic-rate-limit"])
def test_captured_429_headers(stem: str) -> None:
    assert retry_delay(fixture_meta(stem)["headers"], NOW) == 7.0


def test_captured_openai_reset_headers_alone() -> None:
    headers = {k: v for k, v in fixture_meta("scripted-openai-rate-limit")["headers"].items() if "retry-after" not in k}
    assert retry_delay(headers, NOW) == 2.0


# --- the error text (issue 27: a limit whose only clue is its message) ----------------------------


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC here: a time of day without a zone is read in local time."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("Your usage limit has been reached; it resets at 3pm", 15 * 3600.0),
        ("usage limit reached, resets at 00:30", 1800.0),
        ("Limit exceeded: try again at 2:15 a.m. (UTC)", 2 * 3600 + 900.0),
        ("Rate limit reached. Please try again in 4h 12m.", 4 * 3600 + 720.0),
        ("Please try again in 6ms.", 0.006),
        ("Quota exceeded. Please retry in 27.8s.", 27.8),
        ("resets in 3 hours and 5 minutes", 11100.0),
        ("retry after 30 seconds", 30.0),
        ("quota resets at 2030-01-01T02:00:00Z", 7200.0),
        ("Claude AI usage limit reached|1893459600", 3600.0),
        ("slow down", None),
        ("try again later", None),
        ("retry at 3 apples", None),  # a bare number is no time of day
    ],
)
def test_reset_from_text(text: str, seconds: float | None, utc: None) -> None:
    assert reset_from_text(text, NOW) == seconds


def test_a_time_of_day_already_past_is_tomorrow() -> None:
    late = datetime(2030, 1, 1, 16, 0, 0, tzinfo=UTC)
    assert reset_from_text("resets at 3pm UTC", late) == 23 * 3600.0


def test_the_users_patterns_come_first_and_must_name_their_time() -> None:
    patterns = compile_patterns([r"cooldown=(?P<time>\d+)"])
    assert reset_from_text("cooldown=90, try again in 2s", NOW, patterns) == 90.0
    with pytest.raises(ValueError, match="no group named"):
        compile_patterns(["cooldown=\\d+"])
    with pytest.raises(ValueError, match="missing \\)"):
        compile_patterns(["(cooldown"])
