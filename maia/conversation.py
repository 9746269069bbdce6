"""A conversation as the chat and ``maia ask`` run it: agent, session file, context size, compaction (§12-§14)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from maia.agent import AgentSession, LimitCallback, TurnResult, resume_turn, run_turn
from maia.agent_setup import AgentSetup, build_agent
from maia.context.compaction import RESUME_AFTER_EMERGENCY, needs_compaction, request_summary
from maia.context.tokens import TokenCounter
from maia.contracts import AgentUI, LLMProvider
from maia.errors import ContextTooLong, MaiaError
from maia.i18n import _
from maia.provider.models import ModelInfo
from maia.runner import PermissionCheck
from maia.sessions import SavedSession, SessionManager, next_compacted_name


@dataclass(frozen=True, slots=True)
class Compaction:
    """What a compaction did: the file kept as it was, the new session, the summary."""

    previous: str | None
    name: str
    summary: str
    truncated: bool


class Conversation:
    """One conversation with the agent, persisted in its session file."""

    def __init__(
        self,
        *,
        launch: Path,
        home: Path,
        provider: LLMProvider,
        ui: AgentUI,
        sessions: SessionManager,
        counter: TokenCounter | None = None,
        max_iterations: int = 50,
        max_context: int | None = None,
        list_models: Callable[[], Awaitable[list[ModelInfo]]] | None = None,
        extra_allow: Sequence[str] = (),
        env: dict[str, str] | None = None,
        wrap_permissions: Callable[[PermissionCheck], PermissionCheck] | None = None,
    ) -> None:
        self.launch = launch
        self.home = home
        self.ui = ui
        self.sessions = sessions
        self.counter = counter
        self.max_context = max_context
        self.list_models = list_models
        self.extra_allow = tuple(extra_allow)
        self.wrap_permissions = wrap_permissions
        self.start_context: str | None = None
        self.setup = self._build(None)
        self.agent = AgentSession(
            provider=provider,
            system=self.setup.system,
            tools=self.setup.tools,
            ui=ui,
            cwd=launch,
            permissions=self._permissions(),
            env=env,
            max_iterations=max_iterations,
            count_context=self._count if counter is not None else None,
        )

    # --- agent ----------------------------------------------------------------------------------

    def _build(self, start_context: str | None) -> AgentSetup:
        return build_agent(
            self.launch,
            self.home,
            start_context=start_context,
            list_models=self.list_models,
            extra_allow=self.extra_allow,
        )

    def _permissions(self) -> PermissionCheck:
        check = self.setup.permission_check(self.launch)
        return self.wrap_permissions(check) if self.wrap_permissions is not None else check

    def reload(self, start_context: str | None = None) -> AgentSetup:
        """Re-read MAIA.md (or use the summary), skills, tools and rules; the conversation is kept."""
        self.setup = self._build(start_context)
        self.start_context = start_context
        self.agent.system = self.setup.system
        self.agent.tools = self.setup.tools
        self.agent.permissions = self._permissions()
        return self.setup

    def clear(self) -> AgentSetup:
        """``/clear``: a reloaded agent and an empty conversation; the session keeps its name."""
        setup = self.reload(None)
        self.agent.messages.clear()
        self.agent.pending_context.clear()
        self.agent.merge_next = False
        return setup

    @property
    def provider(self) -> LLMProvider:
        """The model provider."""
        return self.agent.provider

    def _count(self, session: AgentSession) -> int:
        assert self.counter is not None
        return self.counter.count(
            session.system, session.messages, [t.spec for t in session.tools.values()], session.pending_context
        )

    def context_tokens(self) -> int:
        """The context size now (§13.1); 0 without a counter."""
        return self._count(self.agent) if self.counter is not None else 0

    # --- persistence ----------------------------------------------------------------------------

    def save(self) -> str | None:
        """Save the session if it changed (never an empty one); the name written, or None."""
        self.sessions.update(
            messages=self.agent.messages,
            pending=self.agent.pending_context,
            start_context=self.start_context,
            model=self.provider.model,
            cwd=self.launch,
        )
        return self.sessions.save()

    def load(self, saved: SavedSession) -> None:
        """Continue a saved session; the current model is kept; the agent is rebuilt if the summary differs."""
        if saved.start_context != self.start_context:
            self.reload(saved.start_context)
        self.agent.messages[:] = saved.messages
        self.agent.pending_context[:] = saved.pending_context
        self.agent.merge_next = bool(saved.messages) and saved.messages[-1].role == "user"
        self.sessions.adopt(saved)

    def new_session(self) -> str | None:
        """``/new``: save this one, start a fresh agent and name; returns the name the old one was saved as."""
        saved = self.save()
        self.clear()
        self.sessions.start_new()
        return saved

    # --- turns ----------------------------------------------------------------------------------

    async def compact(self, *, emergency: bool = False) -> Compaction | None:
        """Summarise and start over from the summary (§14.2); None when there is nothing to compact.

        Any error or cancellation before the switch leaves the conversation exactly as it was.
        """
        agent = self.agent
        if not agent.messages and not agent.pending_context:
            return None
        previous = self.save()
        summary = await request_summary(
            agent.provider,
            agent.system,
            agent.messages,
            agent.pending_context,
            [t.spec for t in agent.tools.values()],
            emergency=emergency,
        )
        new_name = next_compacted_name(self.sessions.name)
        self.reload(summary.text)
        agent.messages.clear()
        agent.pending_context.clear()
        agent.merge_next = False
        self.sessions.start_new(new_name, start_context=summary.text)
        self.sessions.update(
            messages=[], pending=[], start_context=summary.text, model=self.provider.model, cwd=self.launch
        )
        written = self.sessions.save(take_over=True)
        return Compaction(previous, written or new_name, summary.text, summary.truncated)

    async def _auto_compact(self) -> Compaction | None:
        if self.counter is None or not needs_compaction(self.context_tokens(), self.max_context):
            return None
        try:
            return await self.compact()
        except MaiaError as error:
            self.ui.on_warning(
                _("Automatic compaction failed ({error}); the conversation goes on.").format(error=error.message)
            )
            return None

    async def send(
        self, text: str, *, on_limit: LimitCallback | None = None, max_iterations: int | None = None
    ) -> TurnResult:
        """A user request: compaction if due, the turn, one emergency compaction and retry if too long."""
        await self._auto_compact()
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
