"""The agent turn loop (§6.2): pure orchestration, no printing, no prompting, no file writes.

Rollback contract: a turn cancelled by the caller (Ctrl+C) restores ``messages``, ``pending_context``
and the merge flag exactly as before the request, then re-raises ``CancelledError``. A provider error
leaves the conversation valid for the next request: when nothing but the request had been added it
is rolled back too (the caller may simply send it again); otherwise the conversation ends with the
last tool results and ``can_resume`` is true (``resume_turn`` carries on, or the next input merges).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from maia.agent.runner import PermissionCheck, RunOutcome, ToolRunner
from maia.core.contracts import (
    AgentUI,
    ChatRequest,
    ContentBlock,
    Done,
    LLMProvider,
    Message,
    ReasoningDelta,
    TextBlock,
    TextDelta,
    Thinking,
    ThinkingBlock,
    Tool,
    ToolContext,
    ToolResultBlock,
    ToolUse,
    ToolUseBlock,
    Truncated,
    Usage,
)
from maia.core.paths import home_path
from maia.i18n import _

if TYPE_CHECKING:
    from maia.permissions.engine import Decision

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
    launch: Path
    messages: list[Message] = field(default_factory=list)
    pending_context: list[str] = field(default_factory=list)
    permissions: PermissionCheck | None = None
    env: Mapping[str, str] | None = None
    max_iterations: int = MAX_ITERATIONS
    count_context: Callable[[AgentSession], int] | None = None
    merge_next: bool = False
    usage: list[Usage] = field(default_factory=list)
    truncations: list[Truncated] = field(default_factory=list)
    # builds the context each tool call gets (the application adds its services); None: launch, model, env
    tool_context: Callable[[AgentSession], ToolContext] | None = None
    # told of every message the loop adds (a front end's record of the run survives compaction)
    on_message: Callable[[Message], None] | None = None
    # what the last interruption did: "kept" (progress kept, the model told) or "rolled_back"
    interrupted: Literal["kept", "rolled_back"] | None = None
    # "always" answers: (rules, kept in the project's local settings) → the application remembers them
    remember: Callable[[Sequence[str], bool], None] | None = None
    # hears a tool call's name as soon as the model streams it, its arguments still to come
    on_tool_start: Callable[[str], None] | None = None
    # told as each model request is sent (the model will be at work on its answer for a while)
    on_request: Callable[[], None] | None = None
    # called before each model call: compacts a conversation that would not fit and returns the request
    # to carry on with (the turn goes on from the summary), or None when nothing was done
    before_request: Callable[[AgentSession], Awaitable[str | None]] | None = None
    # what the user typed for the request being sent, when the front end knows it (kept in the session)
    typed_request: str | None = None
    _streaming: list[str] | None = None  # the text of the answer being streamed
    _runner: ToolRunner | None = None  # the tool calls being run

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
            "Raise MaxOutputTokens in {settings} if tool calls arrive incomplete."
        ).format(settings=home_path("settings.json"))
    return _(
        "The answer stopped at exactly {tokens} output tokens with a tool call: it was probably cut by the "
        "output token limit. Raise MaxOutputTokens in {settings}."
    ).format(tokens=event.output_tokens, settings=home_path("settings.json"))


def _report_context(session: AgentSession) -> None:
    if session.count_context is not None:
        session.ui.on_context_usage(session.count_context(session))


def add_request(session: AgentSession, user_text: str) -> None:
    """Join the pending context to the text in one user message (merged into the last one if due)."""
    text = "\n\n".join([*session.pending_context, user_text]) if session.pending_context else user_text
    session.pending_context.clear()
    typed = session.typed_request if session.typed_request is not None else user_text
    block = TextBlock(text, typed=typed if typed != text else None)
    if session.can_resume:
        last = session.messages[-1]
        session.messages[-1] = Message("user", [*last.content, block])
    else:
        session.messages.append(Message("user", [block]))
    session.merge_next = False


def cut_arguments_result(call: ToolUseBlock) -> str:
    """What the model is told when its call's arguments arrived cut (not valid JSON)."""
    raw = call.raw_arguments or ""
    return (
        f"Not run: the arguments of this {call.name} call were cut off after {len(raw)} characters (the answer "
        "reached the output token limit), so they are not valid JSON. Send smaller calls: split long content "
        "into parts (for a file, Write a first part, then append the rest with Edit), and keep each call's "
        "arguments short."
    )


async def _call_model(session: AgentSession) -> tuple[str, list[ToolUseBlock], list[ThinkingBlock]]:
    specs = [t.spec for t in session.tools.values()]
    request = ChatRequest(session.system, list(session.messages), specs, on_tool_start=session.on_tool_start)
    if session.on_request is not None:
        with contextlib.suppress(Exception):  # a head start for what the answer may need, nothing more
            session.on_request()
    text: list[str] = []
    calls: list[ToolUseBlock] = []
    thinking: list[ThinkingBlock] = []
    session._streaming = text
    session.ui.on_thinking(True)
    try:
        # aclosing: the provider's stream (and its HTTP response) is closed as soon as we stop reading
        async with contextlib.aclosing(session.provider.chat(request)) as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    text.append(event.text)
                    session.ui.on_text(event.text)
                elif isinstance(event, ReasoningDelta):
                    session.ui.on_reasoning(event.text)
                elif isinstance(event, Thinking):
                    thinking.append(event.block)
                elif isinstance(event, ToolUse):
                    raw = None if event.arguments_valid else event.raw_arguments
                    calls.append(ToolUseBlock(event.id, event.name, event.input if raw is None else {}, raw))
                elif isinstance(event, Usage):
                    session.usage.append(event)
                elif isinstance(event, Truncated):
                    session.truncations.append(event)
                    session.ui.on_warning(truncation_warning(event))
                elif isinstance(event, Done):
                    break
    finally:
        session.ui.on_thinking(False)
    session._streaming = None
    if text:
        session.ui.on_text_end()
    return "".join(text), calls, thinking


def _append(session: AgentSession, message: Message) -> None:
    session.messages.append(message)
    if session.on_message is not None:
        session.on_message(message)


def _context_for(session: AgentSession) -> ToolContext:
    if session.tool_context is not None:
        return session.tool_context(session)
    return ToolContext(launch=session.launch, model=session.provider.model, env=session.env, ui=session.ui)


async def _run_calls(session: AgentSession, calls: list[ToolUseBlock]) -> RunOutcome:
    """Run the calls; those whose arguments arrived cut are answered without running."""
    cut = {c.id: c for c in calls if c.raw_arguments is not None}
    runnable = [c for c in calls if c.id not in cut]
    for call in cut.values():
        session.ui.on_tool_call(call.name, _("(arguments cut off)"))
        session.ui.on_tool_result(call.name, cut_arguments_result(call), True)
    # the check is read at each call: an "always" answer in this batch applies to the next calls
    check: PermissionCheck | None = None
    if session.permissions is not None:

        def check(name: str, tool_input: Mapping[str, Any]) -> Decision:
            assert session.permissions is not None
            return session.permissions(name, tool_input)

    runner = ToolRunner(session.tools, session.ui, _context_for(session), check, remember=session.remember)
    session._runner = runner
    outcome = await runner.run(runnable) if runnable else RunOutcome([])
    session._runner = None
    by_id = {r.tool_use_id: r for r in outcome.results}
    results = [ToolResultBlock(c.id, cut_arguments_result(c), True) if c.id in cut else by_id[c.id] for c in calls]
    return RunOutcome(results, outcome.stopped)


@dataclass(slots=True)
class _Turn:
    """What an interruption or error of this turn rolls back to (moved on by a compaction mid-turn)."""

    saved: Checkpoint
    base: int


async def _make_room(session: AgentSession, turn: _Turn) -> None:
    """A conversation that would not fit is compacted before the request; the turn carries on from the
    summary (what a rollback restores is then the compacted conversation, never the old one)."""
    if session.before_request is None:
        return
    carry_on = await session.before_request(session)
    if carry_on is None:
        return
    turn.saved = checkpoint(session)
    add_request(session, carry_on)
    turn.base = len(session.messages)
    _report_context(session)


async def _loop(
    session: AgentSession, on_limit: LimitCallback | None, max_iterations: int | None, turn: _Turn
) -> TurnResult:
    limit = max_iterations or session.max_iterations
    while True:
        for _iteration in range(limit):
            await _make_room(session, turn)
            text, calls, thinking = await _call_model(session)
            content: list[ContentBlock] = [*thinking]
            if text or not calls:
                content.append(TextBlock(text))
            content.extend(calls)
            _append(session, Message("assistant", content))
            session.merge_next = False
            _report_context(session)
            if not calls:
                return "done"
            outcome = await _run_calls(session, calls)
            _append(session, Message("user", list(outcome.results)))
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
    return await _guarded(session, saved, on_limit, max_iterations, len(session.messages))


async def resume_turn(
    session: AgentSession, *, on_limit: LimitCallback | None = None, max_iterations: int | None = None
) -> TurnResult:
    """Carry on after an error that left unanswered tool results (``can_resume``)."""
    if not session.can_resume:
        raise ValueError("resume_turn needs a conversation ending with unanswered tool results")
    return await _guarded(session, checkpoint(session), on_limit, max_iterations, len(session.messages))


INTERRUPTED_CALL = (
    "Interrupted by the user before this call finished: it may have partly run. Check the state before relying on it."
)
NOT_STARTED = "Not run: the user interrupted the turn before this call started."
INTERRUPTED_MARK = "[The user interrupted this turn here.]"
INTERRUPTED_ANSWER = "[The user interrupted your previous answer before it was complete.]"


def _on_interrupt(session: AgentSession, saved: Checkpoint, base: int) -> None:
    """Ctrl+C: keep what the model already said and did (it must not be blind to files a tool changed),
    with a mark saying where the user stopped it; roll back only when nothing happened yet."""
    partial = "".join(session._streaming or [])
    runner, session._runner, session._streaming = session._runner, None, None
    if len(session.messages) <= base and not partial:
        restore(session, saved)
        session.interrupted = "rolled_back"
        return
    last = session.messages[-1]
    if last.role == "assistant" and last.tool_uses:
        done = runner.completed if runner is not None else {}
        started = runner.started if runner is not None else set()
        results: list[ContentBlock] = [
            done.get(c.id) or ToolResultBlock(c.id, INTERRUPTED_CALL if c.id in started else NOT_STARTED, True)
            for c in last.tool_uses
        ]
        _append(session, Message("user", [*results, TextBlock(INTERRUPTED_MARK)]))
        session.merge_next = True
    else:
        if partial:
            _append(session, Message("assistant", [TextBlock(partial)]))
            session.merge_next = False
        session.pending_context.append(INTERRUPTED_ANSWER)
    session.interrupted = "kept"


async def _guarded(
    session: AgentSession,
    saved: Checkpoint,
    on_limit: LimitCallback | None,
    max_iterations: int | None,
    base: int,
) -> TurnResult:
    session.interrupted = None
    turn = _Turn(saved, base)
    try:
        return await _loop(session, on_limit, max_iterations, turn)
    except asyncio.CancelledError:
        _on_interrupt(session, turn.saved, turn.base)
        raise
    except BaseException:
        session._streaming = session._runner = None
        if not session.can_resume:
            restore(session, turn.saved)
        raise


def final_text(session: AgentSession) -> str:
    """The text of the last assistant message (the turn's answer)."""
    for message in reversed(session.messages):
        if message.role == "assistant":
            return message.text
    return ""
