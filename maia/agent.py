"""The agent turn loop (§6.2): pure orchestration, no printing, no prompting, no file writes.

Rollback contract: a turn cancelled by the caller (Ctrl+C) restores ``messages``, ``pending_context``
and the merge flag exactly as before the request, then re-raises ``CancelledError``. A provider error
leaves the conversation valid for the next request: when nothing but the request had been added it
is rolled back too (the caller may simply send it again); otherwise the conversation ends with the
last tool results and ``can_resume`` is true (``resume_turn`` carries on, or the next input merges).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from maia.contracts import (
    AgentUI,
    ChatRequest,
    ContentBlock,
    Done,
    LLMProvider,
    Message,
    ReasoningDelta,
    TextBlock,
    TextDelta,
    Tool,
    ToolContext,
    ToolUse,
    ToolUseBlock,
    Truncated,
    Usage,
)
from maia.i18n import _
from maia.runner import PermissionCheck, ToolRunner

MAX_ITERATIONS = 50
TurnResult = Literal["done", "max_iterations", "stopped"]
LimitCallback = Callable[[int], Awaitable[bool]]


@dataclass(slots=True)
class AgentSession:
    """The state of one conversation with the agent (§6.1)."""

    provider: LLMProvider
    system: str
    tools: dict[str, Tool]
    ui: AgentUI
    cwd: Path
    messages: list[Message] = field(default_factory=list)
    pending_context: list[str] = field(default_factory=list)
    permissions: PermissionCheck | None = None
    env: Mapping[str, str] | None = None
    max_iterations: int = MAX_ITERATIONS
    count_context: Callable[[AgentSession], int] | None = None
    merge_next: bool = False
    usage: list[Usage] = field(default_factory=list)
    truncations: list[Truncated] = field(default_factory=list)

    @property
    def can_resume(self) -> bool:
        """The conversation ends with tool results the model has not answered yet."""
        return self.merge_next and bool(self.messages) and self.messages[-1].role == "user"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What a rollback restores."""

    messages: list[Message]
    pending_context: list[str]
    merge_next: bool


def checkpoint(session: AgentSession) -> Checkpoint:
    """Save the conversation state (messages are never mutated in place, so a shallow copy is enough)."""
    return Checkpoint(list(session.messages), list(session.pending_context), session.merge_next)


def restore(session: AgentSession, saved: Checkpoint) -> None:
    """Put the conversation back exactly as it was at ``saved``."""
    session.messages[:] = saved.messages
    session.pending_context[:] = saved.pending_context
    session.merge_next = saved.merge_next


def truncation_warning(event: Truncated) -> str:
    """The user-facing text of a truncation warning."""
    if event.reason == "length":
        return _(
            "The answer was cut by the output token limit (finish reason: length). "
            "Raise MaxOutputTokens in ~/.maia/settings.json if tool calls arrive incomplete."
        )
    return _(
        "The answer stopped at exactly {tokens} output tokens with a tool call: it was probably cut by the "
        "output token limit. Raise MaxOutputTokens in ~/.maia/settings.json."
    ).format(tokens=event.output_tokens)


def _report_context(session: AgentSession) -> None:
    if session.count_context is not None:
        session.ui.on_context_usage(session.count_context(session))


def add_request(session: AgentSession, user_text: str) -> None:
    """Join the pending context to the text in one user message (merged into the last one if due)."""
    text = "\n\n".join([*session.pending_context, user_text]) if session.pending_context else user_text
    session.pending_context.clear()
    if session.can_resume:
        last = session.messages[-1]
        session.messages[-1] = Message("user", [*last.content, TextBlock(text)])
    else:
        session.messages.append(Message("user", [TextBlock(text)]))
    session.merge_next = False


async def _call_model(session: AgentSession) -> tuple[str, list[ToolUseBlock]]:
    request = ChatRequest(session.system, list(session.messages), [t.spec for t in session.tools.values()])
    text: list[str] = []
    calls: list[ToolUseBlock] = []
    session.ui.on_thinking(True)
    try:
        async for event in session.provider.chat(request):
            if isinstance(event, TextDelta):
                text.append(event.text)
                session.ui.on_text(event.text)
            elif isinstance(event, ReasoningDelta):
                session.ui.on_reasoning(event.text)
            elif isinstance(event, ToolUse):
                calls.append(ToolUseBlock(event.id, event.name, event.input))
            elif isinstance(event, Usage):
                session.usage.append(event)
            elif isinstance(event, Truncated):
                session.truncations.append(event)
                session.ui.on_warning(truncation_warning(event))
            elif isinstance(event, Done):
                break
    finally:
        session.ui.on_thinking(False)
    if text:
        session.ui.on_text_end()
    return "".join(text), calls


async def _loop(session: AgentSession, on_limit: LimitCallback | None, max_iterations: int | None) -> TurnResult:
    limit = max_iterations or session.max_iterations
    runner_ctx = ToolContext(cwd=session.cwd, model=session.provider.model, env=session.env)
    while True:
        for _iteration in range(limit):
            text, calls = await _call_model(session)
            content: list[ContentBlock] = [TextBlock(text)] if text or not calls else []
            content.extend(calls)
            session.messages.append(Message("assistant", content))
            session.merge_next = False
            _report_context(session)
            if not calls:
                return "done"
            runner = ToolRunner(session.tools, session.ui, runner_ctx, session.permissions)
            outcome = await runner.run(calls)
            session.messages.append(Message("user", list(outcome.results)))
            session.merge_next = True  # until the model answers these results
            _report_context(session)
            if outcome.stopped:
                return "stopped"
        if on_limit is None or not await on_limit(limit):
            return "max_iterations"


async def run_turn(
    session: AgentSession,
    user_text: str,
    *,
    on_limit: LimitCallback | None = None,
    max_iterations: int | None = None,
) -> TurnResult:
    """Send ``user_text`` and run the model/tool loop until an answer without tool calls (§6.2)."""
    saved = checkpoint(session)
    add_request(session, user_text)
    _report_context(session)
    return await _guarded(session, saved, on_limit, max_iterations)


async def resume_turn(
    session: AgentSession, *, on_limit: LimitCallback | None = None, max_iterations: int | None = None
) -> TurnResult:
    """Carry on after an error that left unanswered tool results (``can_resume``)."""
    if not session.can_resume:
        raise ValueError("resume_turn needs a conversation ending with unanswered tool results")
    return await _guarded(session, checkpoint(session), on_limit, max_iterations)


async def _guarded(
    session: AgentSession, saved: Checkpoint, on_limit: LimitCallback | None, max_iterations: int | None
) -> TurnResult:
    try:
        return await _loop(session, on_limit, max_iterations)
    except asyncio.CancelledError:
        restore(session, saved)
        raise
    except BaseException:
        if not session.can_resume:
            restore(session, saved)
        raise


def final_text(session: AgentSession) -> str:
    """The text of the last assistant message (the turn's answer)."""
    for message in reversed(session.messages):
        if message.role == "assistant":
            return message.text
    return ""
