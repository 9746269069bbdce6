"""The model's maximum context (§13.2, improved): LiteLLM first, then settings, then the model's word."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from maia.core.contracts import ChatRequest, LLMProvider, Message, TextBlock, TextDelta
from maia.core.errors import AuthFailed, ProviderError, ProviderUnreachable
from maia.i18n import _
from maia.provider.models import ModelInfo

MIN_CONTEXT = 1_000
MAX_CONTEXT = 100_000_000
ASK_TIMEOUT = 60.0
QUESTION = (
    "What is the maximum context size of this model, in tokens? Answer with a whole number only, for example 128000."
)

_NUMBER = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?!\d)|\d{1,3}(?:,\d{3})+(?![\d,])|\d{1,3}(?:\.\d{3})+(?![\d.])"
    r"|\d+(?:[.,]\d+)?)\s*(millions?|thousands?|mille|[kKmM])?(?![A-Za-z])",
)
_GROUPED = re.compile(r"\d{1,3}(?:([ \u00a0\u202f,.])\d{3})+")
_UNITS = {
    "k": 1_000,
    "thousand": 1_000,
    "thousands": 1_000,
    "mille": 1_000,
    "m": 1_000_000,
    "million": 1_000_000,
    "millions": 1_000_000,
}


def _value(digits: str) -> float:
    """``131,072`` / ``1.000.000`` / ``128 000`` are grouped thousands; ``1,5`` / ``1.5`` are decimals."""
    if _GROUPED.fullmatch(digits):
        return float(re.sub(r"\D", "", digits))
    return float(digits.replace(",", "."))


def parse_token_count(text: str) -> int | None:
    """A context size read from free text (``128000``, ``128 000 tokens``, ``131,072``, ``1.000.000``,
    ``200k``, ``1M``, ``1,5 million``, ``2 millions``). Values outside 1,000–100,000,000 are ignored;
    a value with a unit wins over a larger one without; otherwise the largest wins."""
    with_unit: list[int] = []
    plain: list[int] = []
    for match in _NUMBER.finditer(text):
        unit = (match.group(2) or "").lower()
        number = round(_value(match.group(1)) * _UNITS.get(unit, 1))
        if MIN_CONTEXT <= number <= MAX_CONTEXT:
            (with_unit if unit else plain).append(number)
    if with_unit:
        return max(with_unit)
    return max(plain) if plain else None


@dataclass(frozen=True, slots=True)
class ContextSize:
    """The maximum context, where it came from (for the announcement), and a warning if unknown."""

    tokens: int | None
    source: str
    warning: str | None = None


def from_settings(setting: int | Mapping[str, int] | None, model: str) -> int | None:
    """``MaxContextTokens``: one number, or a number per model name."""
    if isinstance(setting, int):
        return setting
    if isinstance(setting, Mapping):
        value = setting.get(model)
        return value if isinstance(value, int) else None
    return None


async def ask_model(provider: LLMProvider, timeout: float = ASK_TIMEOUT) -> int | None:
    """Ask the model its own limit (one short request); None when the answer is unreadable."""

    async def run() -> str:
        request = ChatRequest("", [Message("user", [TextBlock(QUESTION)])], max_tokens=50)
        return "".join([e.text async for e in provider.chat(request) if isinstance(e, TextDelta)])

    answer = await asyncio.wait_for(run(), timeout)
    return parse_token_count(answer)


async def resolve_context_size(
    model: str,
    *,
    list_models: Callable[[], Awaitable[list[ModelInfo]]] | None,
    setting: int | Mapping[str, int] | None,
    provider: LLMProvider | None,
) -> ContextSize:
    """LiteLLM's ``max_input_tokens`` > ``MaxContextTokens`` > the model's answer; unknown → a warning."""
    configured = from_settings(setting, model)
    if list_models is not None:
        try:
            for info in await list_models():
                if info.name == model and info.max_input_tokens:
                    return ContextSize(info.max_input_tokens, _("from LiteLLM"))
        except (ProviderUnreachable, AuthFailed) as error:
            # the proxy itself is wrong: no request will work, say that rather than "the context size"
            return ContextSize(
                configured,
                _("from settings") if configured else "",
                _("{error}\nCheck LiteLLM_URL and the key in settings.json (`maia setup` tests them).").format(
                    error=error.message
                ),
            )
        except ProviderError:
            pass
    if configured:
        return ContextSize(configured, _("from settings"))
    if provider is not None:
        try:
            stated = await ask_model(provider)
        except (ProviderError, TimeoutError) as error:
            return ContextSize(
                None,
                "",
                _(
                    "The model's context size is unknown ({error}): the context bar shows "
                    "tokens only and automatic compaction is off."
                ).format(error=error or "timeout"),
            )
        if stated:
            return ContextSize(stated, _("stated by the model"))
    return ContextSize(
        None,
        "",
        _(
            "The model's context size is unknown: set MaxContextTokens in settings.json; "
            "until then the bar shows tokens only and automatic compaction is off."
        ),
    )
