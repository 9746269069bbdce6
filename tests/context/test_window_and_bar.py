"""Maximum context (§13.2) and the context bar model (§13.3)."""

from __future__ import annotations

import pytest

from maia.context.bar import bar_model, format_tokens
from maia.context.window import parse_token_count, resolve_context_size
from maia.core.contracts import TextDelta
from maia.core.errors import HttpStatusError, ProviderUnreachable
from maia.provider.fake import ScriptedProvider, ScriptedTurn, text_turn
from maia.provider.models import ModelInfo


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("128000", 128_000),
        ("128 000 tokens", 128_000),
        ("131,072", 131_072),
        ("1.000.000", 1_000_000),
        ("200k", 200_000),
        ("200K tokens", 200_000),
        ("1M", 1_000_000),
        ("1,5 million", 1_500_000),
        ("2 millions", 2_000_000),
        ("1.5M tokens", 1_500_000),
        ("The limit is 200,000 tokens.", 200_000),
        ("8192 or 1M", 1_000_000),
        ("128k, and 4096 output", 128_000),
        ("version 4 128000", 128_000),
        ("999", None),
        ("200000000", None),
        ("no idea", None),
        ("", None),
        ("Maximum: 32 768", 32_768),
        ("1\u202f000\u202f000", 1_000_000),
    ],
)
def test_parse_token_count(text: str, value: int | None) -> None:
    assert parse_token_count(text) == value


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0"),
        (950, "950"),
        (999, "999"),
        (1000, "1k"),
        (12_345, "12.3k"),
        (123_456, "123.5k"),
        (200_000, "200k"),
        (999_949, "999.9k"),
        (999_960, "1M"),
        (1_048_576, "1.049M"),
        (2_000_000, "2M"),
    ],
)
def test_format_tokens(count: int, text: str) -> None:
    assert format_tokens(count) == text


@pytest.mark.parametrize(
    ("tokens", "maximum", "width", "squares", "filled", "level", "label"),
    [
        (45_700, 200_000, 80, 10, 3, "green", "45.7k / 200k · 23%"),
        (1, 200_000, 80, 10, 1, "green", "1 / 200k · 0%"),
        (0, 200_000, 80, 10, 0, "green", "0 / 200k · 0%"),
        (120_000, 200_000, 80, 10, 6, "yellow", "120k / 200k · 60%"),
        (119_999, 200_000, 80, 10, 6, "green", "120k / 200k · 60%"),
        (170_000, 200_000, 80, 10, 9, "red", "170k / 200k · 85%"),
        (250_000, 200_000, 80, 10, 10, "red", "250k / 200k · 125%"),
        (500_000, 1_000_000, 120, 10, 5, "green", "500k / 1M · 50%"),
        (500_000, 1_000_000, 40, 10, 5, "green", "500k / 1M · 50%"),
        (10_000, 100_000, 30, 10, 1, "green", "10k / 100k · 10%"),
        (10_000, 100_000, 20, 0, 0, "green", "10k / 100k · 10%"),
    ],
)
def test_bar_model(tokens: int, maximum: int, width: int, squares: int, filled: int, level: str, label: str) -> None:
    bar = bar_model(tokens, maximum, width)
    assert (bar.squares, bar.filled, bar.level, bar.label) == (squares, filled, level, label)
    assert len(bar.text) <= max(width, len(bar.label) + 2)


def test_the_gauge_keeps_its_width_whatever_the_maximum() -> None:
    """Issue 28: 32k, 128k and 1M models get the same gauge; the label says the figures."""
    widths = {len(bar_model(1_000, maximum, 80).text.split(" ")[0]) for maximum in (32_000, 128_000, 1_000_000)}
    assert widths == {10}


def test_unknown_maximum() -> None:
    bar = bar_model(12_345, None, 80)
    assert (bar.squares, bar.label) == (0, "12.3k tokens · max context unknown")


async def _list(models: list[ModelInfo]) -> list[ModelInfo]:
    return models


async def test_litellm_first_then_settings_then_the_model() -> None:
    async def listing() -> list[ModelInfo]:
        return [ModelInfo("m", 128_000), ModelInfo("other", None)]

    assert (await resolve_context_size("m", list_models=listing, setting=64_000, provider=None)).tokens == 128_000
    size = await resolve_context_size("other", list_models=listing, setting={"other": 64_000}, provider=None)
    assert (size.tokens, size.source) == (64_000, "from settings")
    provider = ScriptedProvider([text_turn("About 200k tokens.")])
    stated = await resolve_context_size("other", list_models=listing, setting=None, provider=provider)
    assert (stated.tokens, stated.source) == (200_000, "stated by the model")
    assert "whole number" in provider.requests[0].messages[0].text


async def test_unknown_size_warns() -> None:
    async def failing() -> list[ModelInfo]:
        raise HttpStatusError(404, "no such route")

    provider = ScriptedProvider([ScriptedTurn([TextDelta("I do not know.")])])
    size = await resolve_context_size("m", list_models=failing, setting=None, provider=provider)
    assert size.tokens is None and size.warning is not None and "MaxContextTokens" in size.warning


async def test_an_unreachable_proxy_is_said_as_such() -> None:
    """Issue 28: a wrong LiteLLM_URL is named, not reported as an unknown context size."""

    async def failing() -> list[ModelInfo]:
        raise ProviderUnreachable("http://x/v1/models", "refused")

    size = await resolve_context_size("m", list_models=failing, setting=64_000, provider=None)
    assert size.tokens == 64_000
    assert size.warning is not None and "LiteLLM is unreachable (http://x/v1/models)" in size.warning
    assert "maia setup" in size.warning and "context size" not in size.warning
