"""A conversation as every front end runs it: agent, session file, context size, compaction (§12-§14).

The conversation is equipped by a :class:`~maia.app.loadout.Loadout` (tools, skills, rules,
instructions) that the application assembles; switching session, compacting or clearing never reads
the disk again, except for the session files themselves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from maia.agent.loop import (
    AgentSession,
    Checkpoint,
    LimitCallback,
    TurnResult,
    checkpoint,
    restore,
    resume_turn,
    run_turn,
)
from maia.context.compaction import (
    MARGIN,
    MY_REQUEST,
    RESUME_AFTER_EMERGENCY,
    RESUME_MID_TURN,
    SUMMARY_TOKENS,
    EmptySummary,
    auto_threshold,
    needs_compaction,
    request_summary,
)
from maia.context.tokens import MESSAGE_OVERHEAD, TokenCounter
from maia.core.contracts import AgentUI, LLMProvider, Message, PermissionCheck, TextBlock, ToolContext
from maia.core.errors import ContextTooLong, MaiaError, ProviderError
from maia.i18n import _
from maia.sessions.codec import SavedSession
from maia.sessions.store import SessionManager

if TYPE_CHECKING:
    from collections.abc import Mapping

    from maia.app.loadout import Loadout


@dataclass(frozen=True, slots=True)
class Compaction:
    """What a compaction did: the file kept as it was, the new session, the summary, and why."""

    previous: str | None
    name: str
    summary: str
    truncated: bool
    # "manual", "auto" (threshold reached between turns), "midturn" (reached within a turn) or
    # "emergency" (the server refused)
    reason: str = "manual"
    tokens_before: int | None = None


Marker = tuple[int, int | None]


class Conversation:
    """One conversation with the agent, persisted in its session file."""

    def __init__(
        self,
        *,
        launch: Path,
        loadout: Loadout,
        provider: LLMProvider,
        ui: AgentUI,
        sessions: SessionManager,
        counter: TokenCounter | None = None,
        max_iterations: int = 50,
        max_context: int | None = None,
        env: Mapping[str, str] | None = None,
        wrap_permissions: Callable[[PermissionCheck], PermissionCheck] | None = None,
        tool_context: Callable[[AgentSession], ToolContext] | None = None,
        prompt: Callable[[Loadout, str | None], str] | None = None,
    ) -> None:
        self.launch = launch
        self.loadout = loadout
        # a front end's own system prompt (a sub-agent's, a workflow's), given the compaction summary if any;
        # None: MAIA's (the loadout's)
        self.prompt = prompt
        self.ui = ui
        self.sessions = sessions
        self.counter = counter
        self.max_context = max_context
        self.wrap_permissions = wrap_permissions
        self.start_context: str | None = None
        self.epoch = 0  # changes whenever the conversation is replaced (clear, load, compaction)
        self.on_compacted: Callable[[Compaction], None] | None = None
        self._request: str | None = None  # the request of the turn going on (a compaction mid-turn repeats it)
        self._failed_at: Marker | None = None  # where an automatic compaction last failed: not tried again there
        # PreCompact hooks: (trigger "manual" | "auto" | "emergency", focus) before a summary is asked for
        self.before_compact: Callable[[str, str | None], Awaitable[None]] | None = None
        self.agent = AgentSession(
            provider=provider,
            system=self._system(None),
            tools=dict(loadout.tools),
            ui=ui,
            launch=launch,
            permissions=self._permissions(),
            env=env,
            max_iterations=max_iterations,
            count_context=self._count if counter is not None else None,
            tool_context=tool_context,
        )
        self.agent.before_request = self._make_room

    # --- equipment ------------------------------------------------------------------------------

    def _system(self, start_context: str | None) -> str:
        """The system prompt for the current loadout, from ``start_context`` (a compaction summary) if any."""
        if self.prompt is not None:
            return self.prompt(self.loadout, start_context)
        return self.loadout.system(start_context)

    def _permissions(self) -> PermissionCheck:
        check = self.loadout.permission_check()
        return self.wrap_permissions(check) if self.wrap_permissions is not None else check

    def use_loadout(self, loadout: Loadout) -> None:
        """Equip the agent anew (``/clear`` reloads rules, tools and instructions); messages are kept."""
        self.loadout = loadout
        self.agent.system = self._system(self.start_context)
        self.agent.tools = dict(loadout.tools)
        self.agent.permissions = self._permissions()

    def set_start_context(self, start_context: str | None) -> None:
        """Start from a compaction summary (which replaces the project instructions), or from none."""
        self.start_context = start_context
        self.agent.system = self._system(start_context)

    def clear(self) -> None:
        """An empty conversation; the session keeps its name."""
        self.epoch += 1
        self.set_start_context(None)
        self.agent.messages.clear()
        self.agent.pending_context.clear()
        self.agent.merge_next = False

    @property
    def provider(self) -> LLMProvider:
        """The model provider."""
        return self.agent.provider

    def use_provider(self, provider: LLMProvider) -> None:
        """Talk to another model (or server) from the next request on; the conversation is kept."""
        self.agent.provider = provider

    # --- state ----------------------------------------------------------------------------------

    def marker(self) -> Marker:
        """Identifies the conversation's state: it changes whenever a message is added or replaced."""
        messages = self.agent.messages
        return len(messages), id(messages[-1]) if messages else None

    def _count(self, session: AgentSession) -> int:
        assert self.counter is not None
        return self.counter.count(
            session.system, session.messages, [t.spec for t in session.tools.values()], session.pending_context
        )

    def _surely_fits(self, incoming: str = "") -> bool:
        """Whether the context (and ``incoming``) is surely below the automatic compaction threshold without
        an exact count: no threshold at all, or an upper bound below it while the encoder is not built yet."""
        threshold = auto_threshold(self.max_context)
        if threshold is None:
            return True  # needs_compaction is false whatever the count
        if self.counter is None:
            return False
        agent = self.agent
        pending = [*agent.pending_context, *((incoming,) if incoming else ())]
        overhead = MESSAGE_OVERHEAD if incoming else 0
        tools = [t.spec for t in agent.tools.values()]
        return self.counter.surely_at_most(threshold - overhead, agent.system, agent.messages, tools, pending)

    def context_tokens(self) -> int:
        """The context size now (§13.1); 0 without a counter."""
        return self._count(self.agent) if self.counter is not None else 0

    # --- persistence ----------------------------------------------------------------------------

    def save(self) -> str | None:
        """Save the session if it changed (never an empty one); the name written, or None.

        A failure (disk full, folder gone) raises a SessionError with one clear line; the previous
        file is left intact.
        """
        self.sessions.update(
            messages=self.agent.messages,
            pending=self.agent.pending_context,
            start_context=self.start_context,
            model=self.provider.model,
            launch=self.launch,
        )
        return self.sessions.save()

    def load(self, saved: SavedSession) -> SavedSession:
        """Continue a saved session (locked for this process, read again under the lock); the model is kept.

        Returns the session as read under the lock."""
        saved = self.sessions.adopt(saved)
        self.epoch += 1
        if saved.start_context != self.start_context:
            self.set_start_context(saved.start_context)
        self.agent.messages[:] = saved.messages
        self.agent.pending_context[:] = saved.pending_context
        self.agent.merge_next = bool(saved.messages) and saved.messages[-1].role == "user"
        return saved

    def load_unlocked(self, saved: SavedSession) -> None:
        """Continue a copy of ``saved`` (a fresh session that starts with its messages; its file is new)."""
        self.sessions.start_new(saved.name, start_context=saved.start_context)
        self.sessions.session.id = saved.id
        self.epoch += 1
        self.set_start_context(saved.start_context)
        self.agent.messages[:] = saved.messages
        self.agent.pending_context[:] = saved.pending_context
        self.agent.merge_next = bool(saved.messages) and saved.messages[-1].role == "user"

    def new_session(self) -> str | None:
        """``/new``: save this one, start an empty conversation and a new name; the old one's name."""
        saved = self.save()
        self.clear()
        self.sessions.start_new()
        return saved

    # --- rewinding (/undo) ----------------------------------------------------------------------

    def rewind_point(self) -> tuple[int, Checkpoint]:
        """Where ``/undo`` takes the conversation back to: before the request about to be sent."""
        return self.epoch, checkpoint(self.agent)

    def rewind(self, point: object) -> bool:
        """Go back to ``point``; False when the conversation was replaced since (compaction, load…)."""
        if not isinstance(point, tuple) or point[0] != self.epoch:
            return False
        restore(self.agent, point[1])
        return True

    # --- turns ----------------------------------------------------------------------------------

    async def compact(
        self, *, emergency: bool = False, focus: str | None = None, reason: str = "manual", shrink: bool = False
    ) -> Compaction | None:
        """Summarise and start over from the summary (§14.2); None when there is nothing to compact.

        ``shrink``: cut long tool results in the summary request (as an emergency does), so that it fits.
        Any error or cancellation before the switch leaves the conversation exactly as it was.
        """
        agent = self.agent
        if not agent.messages and not agent.pending_context:
            return None
        if self.before_compact is not None:
            await self.before_compact("emergency" if emergency else reason, focus)
        tokens_before = self.context_tokens() if self.counter is not None else None
        previous = self.save() or self.sessions.current_file
        summary = await request_summary(
            agent.provider,
            agent.system,
            agent.messages,
            agent.pending_context,
            [t.spec for t in agent.tools.values()],
            emergency=emergency or shrink,
            focus=focus,
        )
        # the new name is reserved (locked) before anything changes: a busy name leaves all as it was
        new_name, take_over = self.sessions.start_compacted(summary.text)
        self.clear()
        self.set_start_context(summary.text)
        self.sessions.update(
            messages=[], pending=[], start_context=summary.text, model=self.provider.model, launch=self.launch
        )
        written = self.sessions.save(take_over=take_over)
        outcome = Compaction(
            previous,
            written or new_name,
            summary.text,
            summary.truncated,
            "emergency" if emergency else reason,
            tokens_before,
        )
        if self.on_compacted is not None:
            self.on_compacted(outcome)
        return outcome

    def _request_tokens(self, text: str) -> int:
        if self.counter is None:
            return 0
        return self.counter.message(Message("user", [TextBlock(text)]))

    async def _auto_compact(self, incoming: str = "") -> Compaction | None:
        if self.counter is None:
            return None
        if self._surely_fits(incoming):
            return None  # the same answer as an exact count, without waiting for the encoder
        tokens = self.context_tokens() + (self._request_tokens(incoming) if incoming else 0)
        if not needs_compaction(tokens, self.max_context):
            return None
        try:
            return await self.compact(reason="auto", shrink=self._too_big_to_summarise(tokens))
        except MaiaError as error:
            self._failed_at = self.marker()
            self.ui.on_warning(
                _("Automatic compaction failed ({error}); the conversation goes on.").format(error=error.message)
            )
            return None

    def _too_big_to_summarise(self, tokens: int) -> bool:
        """The summary request itself would not fit with the conversation whole."""
        return self.max_context is not None and tokens > self.max_context - SUMMARY_TOKENS - MARGIN // 2

    async def _make_room(self, agent: AgentSession) -> str | None:
        """Before each model call of a turn: a request that would not fit in the model's context is never
        sent; the conversation is compacted first (announced) and the turn carries on from the summary."""
        if self.counter is None or agent is not self.agent or self._failed_at == self.marker():
            return None
        if self._surely_fits():
            return None  # the same answer as an exact count, without waiting for the encoder
        tokens = self.context_tokens()
        if not needs_compaction(tokens, self.max_context):
            return None
        self.ui.on_warning(
            _(
                "The context is nearly full ({tokens} of {maximum} tokens) in the middle of the turn: compacting "
                "the conversation, then carrying on."
            ).format(tokens=f"{tokens:,}", maximum=f"{self.max_context:,}")
        )
        try:
            await self.compact(reason="midturn", shrink=self._too_big_to_summarise(tokens))
        except ContextTooLong:
            raise  # even the summary request did not fit: the emergency compaction of send() takes over
        except ProviderError as error:
            if not isinstance(error, EmptySummary):
                raise  # a limit or an outage: waited for and retried like any request
            self._failed_at = self.marker()
            self.ui.on_warning(_("Compaction failed ({error}); the turn goes on.").format(error=error.message))
            return None
        except MaiaError as error:
            self._failed_at = self.marker()
            self.ui.on_warning(_("Compaction failed ({error}); the turn goes on.").format(error=error.message))
            return None
        request = self._request
        return f"{RESUME_MID_TURN}\n\n{MY_REQUEST}\n\n{request}" if request else RESUME_MID_TURN

    async def send(
        self, text: str, *, on_limit: LimitCallback | None = None, max_iterations: int | None = None
    ) -> TurnResult:
        """A user request: compaction if due (counting the request), the turn, then one emergency
        compaction and retry if the server finds it too long."""
        self._request = text
        await self._auto_compact(text)
        try:
            result = await run_turn(self.agent, text, on_limit=on_limit, max_iterations=max_iterations)
        except ContextTooLong as original:
            self.ui.on_warning(
                _("The model refused the request as too long: compacting the conversation, then trying once more.")
            )
            try:
                await self.compact(emergency=True)
            except MaiaError:
                raise original from None
            result = await run_turn(
                self.agent, f"{RESUME_AFTER_EMERGENCY}\n\n{text}", on_limit=on_limit, max_iterations=max_iterations
            )
        await self._auto_compact()
        return result

    async def resume(self, *, on_limit: LimitCallback | None = None, max_iterations: int | None = None) -> TurnResult:
        """Carry on after an error that left unanswered tool results."""
        return await resume_turn(self.agent, on_limit=on_limit, max_iterations=max_iterations)
