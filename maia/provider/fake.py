"""A scripted provider: replays prepared answers to drive the agent loop in tests and examples.

It is a test double, never the product's default provider.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from maia.core.contracts import ChatRequest, Done, StreamEvent, TextDelta, ToolUse, Usage

Step = StreamEvent | BaseException | Callable[[], Any]


@dataclass
class ScriptedTurn:
    """One model answer: events to yield in order; an exception instance is raised where it stands,
    an async callable is awaited (to hold the stream open on an event or barrier)."""

    steps: list[Step] = field(default_factory=list)


def text_turn(text: str, *, usage: tuple[int, int] | None = None) -> ScriptedTurn:
    """An answer made of text only."""
    steps: list[Step] = [TextDelta(text)]
    if usage:
        steps.append(Usage(*usage))
    steps.append(Done("end_turn"))
    return ScriptedTurn(steps)


def tool_turn(*calls: tuple[str, dict[str, Any]], text: str = "", ids: Sequence[str] | None = None) -> ScriptedTurn:
    """An answer asking for tool calls ``(name, input)``."""
    steps: list[Step] = [TextDelta(text)] if text else []
    for n, (name, tool_input) in enumerate(calls):
        call_id = ids[n] if ids else f"call_{n}"
        steps.append(ToolUse(call_id, name, dict(tool_input)))
    steps.append(Done("tool_use"))
    return ScriptedTurn(steps)


class ScriptedProvider:
    """Answers each ``chat`` call with the next scripted turn and records the requests."""

    def __init__(self, turns: Sequence[ScriptedTurn], model: str = "scripted") -> None:
        self._turns = list(turns)
        self._model = model
        self.requests: list[ChatRequest] = []

    @property
    def id(self) -> str:
        """The provider's identifier."""
        return "scripted"

    @property
    def model(self) -> str:
        """The scripted model's name."""
        return self._model

    def with_model(self, model: str) -> ScriptedProvider:
        """The same script, answering as another model (the remaining turns are shared)."""
        twin = ScriptedProvider([], model)
        twin._turns = self._turns
        twin.requests = self.requests
        return twin

    async def aclose(self) -> None:
        """Nothing to release."""

    @property
    def remaining(self) -> int:
        """How many scripted answers are left."""
        return len(self._turns)

    async def chat(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Yield the next scripted answer."""
        # Snapshot the conversation: the loop keeps mutating its list after the call.
        self.requests.append(
            ChatRequest(request.system, copy.copy(request.messages), list(request.tools), request.max_tokens)
        )
        if not self._turns:
            raise AssertionError("ScriptedProvider: no scripted answer left")
        turn = self._turns.pop(0)
        for step in turn.steps:
            if isinstance(step, BaseException):
                raise step
            if callable(step):
                result = step()
                if asyncio.iscoroutine(result):
                    await result
                continue
            yield step
