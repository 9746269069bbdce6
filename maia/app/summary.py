"""Asking the model for a final answer, and retrying a sub-agent's or a workflow's own requests: the
waits of the shared retry policy, told to whoever watches (the parent, a workflow's log)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from maia.agent.loop import AgentSession, add_request
from maia.core.contracts import ChatRequest, Done, Message, TextBlock, TextDelta, Usage
from maia.core.errors import ProviderError

if TYPE_CHECKING:
    from maia.app.retry import RetryPolicy

FINAL_SUMMARY_TOKENS = 4000
T = TypeVar("T")


class Logs(Protocol):
    """Where the retry notices go (the parent's interface, a workflow's log)."""

    def log(self, level: str, message: str) -> None:
        """One line for the user."""

    def waiting(self, reason: str | None, until: str | None) -> None:
        """A wait for the server begins (until ``until``, an ISO time) or, with None, ends."""


async def retrying(ui: Logs, attempt: Callable[[int], Awaitable[T]], policy: RetryPolicy | None = None) -> T:
    """Run ``attempt(n)``; on a limit, a failing server or an outage wait as the shared retry policy says
    (told to the parent, whose time limit bounds the wait: never given up early) and try again."""
    from maia.app.retry import Attempts, RetryPolicy
    from maia.app.waits import wait_line

    policy = policy or RetryPolicy.from_environment()  # MAIA_RETRY_SCALE, inherited from the parent
    attempts = Attempts()
    tries = 0
    while True:
        try:
            return await attempt(tries)
        except ProviderError as error:
            number, elapsed = attempts.failed(error, time.monotonic())
            wait = policy.wait_for(error, number, elapsed=elapsed)
            if wait is None:
                raise
            tries += 1
            ui.log("info", wait_line(wait))
            ui.waiting(wait.reason, wait.until.astimezone().isoformat(timespec="seconds"))
            try:
                await asyncio.sleep(wait.delay)
            finally:
                ui.waiting(None, None)


async def request_final_summary(
    session: AgentSession, ui: Logs, request_text: str | None = None, policy: RetryPolicy | None = None
) -> str:
    """Ask for the final answer (tools declared, unusable, 4000 tokens); recorded in the conversation.

    ``request_text`` replaces the sub-agent's wording (a workflow's parent asks for its Output)."""
    from maia.subagents.prompt import FINAL_SUMMARY_REQUEST

    add_request(session, request_text or FINAL_SUMMARY_REQUEST)
    request = ChatRequest(
        session.system, list(session.messages), [t.spec for t in session.tools.values()], FINAL_SUMMARY_TOKENS
    )

    async def ask(_attempt: int) -> str:
        text: list[str] = []
        async with contextlib.aclosing(session.provider.chat(request)) as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    text.append(event.text)
                elif isinstance(event, Usage):
                    session.usage.append(event)
                elif isinstance(event, Done):
                    break
        return "".join(text).strip()  # tool calls are ignored: they cannot run any more

    summary = await retrying(ui, ask, policy)
    session.messages.append(Message("assistant", [TextBlock(summary)]))
    session.merge_next = False
    return summary
