"""Compaction (§14): summarise the conversation and start again from the summary."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from maia.core.contracts import (
    ChatRequest,
    Done,
    LLMProvider,
    Message,
    TextBlock,
    TextDelta,
    ToolResultBlock,
    ToolSpec,
)
from maia.core.errors import ProviderError
from maia.i18n import _

SUMMARY_TOKENS = 4000
MARGIN = 500
EMERGENCY_TOOL_RESULT_CHARS = 1500
SUMMARY_PROMPT = """Write a compacted summary of our conversation so far. Return it in exactly this format:
## Project context
- [Brief description of the project]
## Current goal
- [What we are trying to do]
## Relevant files
- [List of the important files]
## Decisions/Conclusions
- [Key points established]
## Next steps
- [What remains to be done]"""
FOCUS = "In this summary, keep in particular everything about: {focus}"
NO_TOOLS = "Do not call any tool now: answer only with the summary, in the format asked."
RESUME_AFTER_EMERGENCY = (
    "The conversation was too long for the model and has just been compacted: the summary above replaces it. "
    "Carry on with my last request."
)

RESUME_MID_TURN = (
    "The conversation grew too long for the model in the middle of your work and has just been compacted: the "
    "summary above replaces it. Carry on with my request from where you were (check the state of files before "
    "relying on what you did)."
)
MY_REQUEST = "My request was:"


def auto_threshold(max_context: int | None) -> int | None:
    """``max − (4000 + 500)`` when the maximum is known and the threshold positive."""
    if not max_context:
        return None
    threshold = max_context - (SUMMARY_TOKENS + MARGIN)
    return threshold if threshold > 0 else None


def needs_compaction(tokens: int, max_context: int | None) -> bool:
    """Strictly above the threshold."""
    threshold = auto_threshold(max_context)
    return threshold is not None and tokens > threshold


def shrink_tool_results(messages: Sequence[Message], limit: int = EMERGENCY_TOOL_RESULT_CHARS) -> list[Message]:
    """Tool results cut to ``limit`` characters (new messages; the originals are untouched)."""
    shrunk: list[Message] = []
    for message in messages:
        blocks = []
        for block in message.content:
            if isinstance(block, ToolResultBlock) and len(block.content) > limit:
                cut = block.content[:limit] + _("\n[… result shortened for the summary]")
                block = ToolResultBlock(block.tool_use_id, cut, block.is_error)
            blocks.append(block)
        shrunk.append(Message(message.role, blocks))
    return shrunk


@dataclass(frozen=True, slots=True)
class Summary:
    """The summary text, and whether it was cut by the output limit."""

    text: str
    truncated: bool


class EmptySummary(ProviderError):
    """The model answered the summary request with nothing."""


async def request_summary(
    provider: LLMProvider,
    system: str,
    messages: Sequence[Message],
    pending: Sequence[str],
    tools: Sequence[ToolSpec],
    *,
    emergency: bool = False,
    focus: str | None = None,
) -> Summary:
    """Ask the model for the five-section summary (tools declared but not to be used; 4,000 tokens).

    ``focus`` (``/compact TEXT``) tells the model what the summary must keep in particular.
    """
    history = shrink_tool_results(messages) if emergency else list(messages)
    request_text = SUMMARY_PROMPT
    if focus and focus.strip():
        request_text += "\n\n" + FOCUS.format(focus=focus.strip())
    prompt = "\n\n".join([*pending, request_text])
    if history and history[-1].role == "user":
        history[-1] = Message("user", [*history[-1].content, TextBlock(prompt)])
    else:
        history.append(Message("user", [TextBlock(prompt)]))
    request = ChatRequest(f"{system}\n\n{NO_TOOLS}", history, list(tools), max_tokens=SUMMARY_TOKENS)
    parts: list[str] = []
    truncated = False
    async with contextlib.aclosing(provider.chat(request)) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, Done):
                truncated = event.stop_reason == "max_tokens"
    text = "".join(parts).strip()
    if not text:
        raise EmptySummary(_("The model returned an empty summary: nothing was compacted."))
    return Summary(text, truncated)
