"""Sub-agents as a tool source: the AGENT.md definitions, the ``Agent`` tool, the prompt's paragraph."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from maia.core.contracts import SourceReport, Tool
from maia.provider.models import ModelInfo
from maia.subagents.definitions import AgentDefinition, LoadedAgents, load_agents, loaded_message
from maia.subagents.tool import AGENT_TOOL, AgentTool, agent_tools, agents_prompt_section

# whether a call (a tool's name, its input) could run: the application's judgement (see expect_call)
MayRun = Callable[[str, Mapping[str, Any]], bool]


class AgentSource:
    """``~/.maia/agents`` and ``./.maia/agents`` (§20.1), read at each start (start-up, ``/clear``)."""

    name = "agents"

    def __init__(
        self,
        launch: Path,
        home: Path,
        *,
        depth: int = 0,
        list_models: Callable[[], Awaitable[list[ModelInfo]]] | None = None,
        notify: Callable[[str], None] | None = None,
        extra_allow: Sequence[str] = (),
        extra_deny: Sequence[str] = (),
        loader: Callable[[], LoadedAgents] | None = None,
    ) -> None:
        self.launch = launch
        self.loader = loader  # None: the two usual folders (a workflow loads its own)
        self.home = home
        self.depth = depth
        self.list_models = list_models
        self.notify = notify
        self.extra_allow = tuple(extra_allow)
        self.extra_deny = tuple(extra_deny)
        self.agents: dict[str, AgentDefinition] = {}
        self._tools: list[Tool] = []

    async def start(self) -> SourceReport:
        """Load the definitions; a broken one is a warning, the others load."""
        if self.depth >= 1 and self.loader is None:
            # no nesting: a sub-agent has no Agent tool, no agents paragraph and no `&name`, so its process
            # reads no AGENT.md before its first request (issue 29, item 6)
            return SourceReport()
        loaded = self.loader() if self.loader is not None else load_agents(self.home, self.launch)
        self.agents = dict(loaded.agents)
        self._tools = list(
            agent_tools(
                self.agents,
                depth=self.depth,
                home=self.home,
                list_models=self.list_models,
                notify=self.notify,
                extra_allow=self.extra_allow,
                extra_deny=self.extra_deny,
                spares=True,  # discarded by aclose
            )
        )
        message = loaded_message(self.agents)
        return SourceReport((message,) if message else (), tuple(loaded.warnings))

    def tools(self) -> list[Tool]:
        """The ``Agent`` tool when at least one agent exists (never inside a sub-agent)."""
        return list(self._tools)

    def prompt_section(self) -> str:
        """The system prompt's paragraph listing the agents."""
        return agents_prompt_section(self.agents) if self._tools else ""

    def expect_call(self, name: str, count: int = 1, may_run: MayRun | None = None) -> None:
        """The model is streaming its ``count``-th call to ``name`` of this answer: for the Agent tool, spare
        children start loading now, while the call's arguments (the task) are still coming, until ``count``
        are waiting or starting (see ``spares.MAX_SPARES``); none when ``may_run`` says no call to any of
        the agents could run (``maia ask`` without a rule allowing one)."""
        if name != AGENT_TOOL:
            return
        if may_run is not None and not any(may_run(name, {"agent": agent, "task": ""}) for agent in self.agents):
            return
        for tool in self._tools:
            if isinstance(tool, AgentTool) and tool.spares:
                from maia.subagents.spares import expect_child

                expect_child(self.launch, tool.command, count=count)

    def expect_request(self, offered: Collection[str], may_run: MayRun | None = None) -> None:
        """The model has been at work on a request offering ``offered`` for a moment: if the Agent tool is
        among them, a spare child starts loading now, unless one is waiting or starting. A model's answer
        takes longer than a child's load (~0.2 s), so the conversation's first call finds it loaded, even
        one whose task comes in one piece; it is the spare a finished run leaves, started earlier."""
        if AGENT_TOOL in offered:
            self.expect_call(AGENT_TOOL, 1, may_run)

    async def aclose(self) -> None:
        """The spare child waiting for a next call, if any, is killed (each run's own child ends with it)."""
        from maia.subagents.spares import discard_spares

        await discard_spares()
