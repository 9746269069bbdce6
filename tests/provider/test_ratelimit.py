"""The delay to wait after HTTP 429, from every header form LiteLLM passes through."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from maia.provider.ratelimit import parse_delay, retry_delay
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
