"""Contracts between MAIA's parts (spec §4): messages, tool specs, stream events, Tool, AgentUI, LLMProvider."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from maia.permissions.engine import Decision
    from maia.permissions.subject import Subject
    from maia.process.sandbox.policy import SandboxPolicy

Role: TypeAlias = Literal["user", "assistant"]
StopReason: TypeAlias = Literal["end_turn", "tool_use", "max_tokens", "other"]
Permission: TypeAlias = Literal["auto", "ask"]
# "always": yes, and the question's rules go into ./.maia/settings.local.json; "always-session": for
# this session only
AskAnswer: TypeAlias = Literal["yes", "no", "stop", "always", "always-session"]


# Whether a person approved the tool call being run (a question answered yes), or it ran without a
# question (a rule, a mode, a default). Set by the runner around each call: a tool that finds its path
# leading elsewhere than when it was judged may go on only where a person saw it (see tools.base).
CALL_ASKED: ContextVar[bool] = ContextVar("maia_call_asked", default=False)


# --- messages (§4.1) -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, weakref_slot=True)
class TextBlock:
    """Plain text in a message."""

    text: str
    type: Literal["text"] = "text"
    # a user request: what the user typed, when ``text`` holds more (attached files, a command's output, a
    # skill's prompt); shown instead of ``text`` in listings and replays. Never sent, never compared.
    typed: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, weakref_slot=True)
class ToolUseBlock:
    """A tool call requested by the model.

    ``raw_arguments`` keeps the argument text as received when it was not valid JSON (a call cut by
    the output limit); ``input`` is then empty and the call is never run.
    """

    id: str
    name: str
    input: dict[str, Any]
    raw_arguments: str | None = None
    type: Literal["tool_use"] = "tool_use"


@dataclass(frozen=True, slots=True, weakref_slot=True)
class ToolResultBlock:
    """The result of a tool call, sent back to the model."""

    tool_use_id: str
    content: str
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True, weakref_slot=True)
class ThinkingBlock:
    """The model's reasoning as the provider signed it (Anthropic extended thinking): sent back unchanged
    with the next request, as the provider requires; never shown as part of the answer."""

    thinking: str
    signature: str | None = None
    redacted: str | None = None  # a redacted block carries opaque data instead of text
    type: Literal["thinking"] = "thinking"


ContentBlock: TypeAlias = TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock


@dataclass(slots=True, weakref_slot=True)
class Message:
    """One conversation message in MAIA's provider-neutral format."""

    role: Role
    content: list[ContentBlock]

    @property
    def text(self) -> str:
        """The concatenated text blocks of the message."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls of the message, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]


# --- tools (§4.3) ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What the model is told about a tool: name, description and JSON Schema of its input."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


# (tool name, tool input) → the permission engine's decision for that call
PermissionCheck: TypeAlias = "Callable[[str, Mapping[str, Any]], Decision]"
# model name → a provider for that model (the application's factory; sub-agents use it)
ProviderFactory: TypeAlias = "Callable[[str], LLMProvider]"


class FileChanges(Protocol):
    """Told by Write and Edit around each file they replace (``/undo`` and ``/diff`` keep snapshots)."""

    def before_write(self, path: Path) -> None:
        """``path`` is about to be replaced or created."""

    def after_write(self, path: Path) -> None:
        """``path`` was written."""


@dataclass(slots=True)
class ToolContext:
    """What a tool gets when it runs: where, with which model, and the application's services."""

    launch: Path
    model: str | None = None
    env: Mapping[str, str] | None = None
    ui: AgentUI | None = None
    permissions: PermissionCheck | None = None
    providers: ProviderFactory | None = None
    depth: int = 0  # 0 for the main agent, 1 inside a sub-agent
    session: str | None = None  # the name of the conversation's session, when it has one
    changes: FileChanges | None = None  # snapshots for /undo and /diff
    sandbox: SandboxPolicy | None = None  # the OS sandbox for Bash and custom tools; None: off
    # (command, what the sandbox refused) → whether to run it again outside the sandbox (the auto mode)
    rerun_unsandboxed: Callable[[str, str], Awaitable[bool]] | None = None
    hooks: ToolHooks | None = None  # PreToolUse / PostToolUse hooks around each call; None: none
    # an "always" answer given for a sub-agent's call: (rules, in the project's local settings or this session)
    remember: Callable[[tuple[str, ...], bool], None] | None = None


@dataclass(frozen=True, slots=True)
class HookVerdict:
    """A PreToolUse hook's answer: ``deny`` refuses the call (``stop`` also ends the iteration), ``ask``
    asks although a rule allowed it, ``allow`` spares a question a rule asked (never a deny or a doubt)."""

    decision: Literal["allow", "deny", "ask"]
    reason: str
    stop: bool = False


class ToolHooks(Protocol):
    """What the tool runner asks of the hooks around each call (see maia.hooks)."""

    async def before_tool(self, name: str, tool_input: Mapping[str, Any]) -> HookVerdict | None:
        """PreToolUse: the hooks' verdict, None when none has one."""
        ...

    async def after_tool(self, name: str, tool_input: Mapping[str, Any], output: str, is_error: bool) -> str | None:
        """PostToolUse: text appended to the result for the model, if any."""
        ...

    def notify(self, message: str) -> None:
        """Notification: MAIA waits for the user (runs in the background)."""
        ...


@dataclass(frozen=True, slots=True)
class ToolTraits:
    """What the rest of MAIA knows of a tool without knowing its name (approvals, modes, front ends)."""

    read_only: bool = False  # writes nothing and runs nothing: the plan mode lets it through
    writes_file: str | None = None  # the input naming the one file it writes (a diff is shown, the edits mode)
    shows_file: bool = False  # its summary (``describe``) is a file path: a hyperlink where terminals show them
    main_input: str | None = None  # the input a bare INPUT stands for in ``maia permissions check TOOL INPUT``


@runtime_checkable
class Tool(Protocol):
    """A capability the model can call. ``execute`` returns text; an exception becomes an error result."""

    @property
    def spec(self) -> ToolSpec:
        """The tool's name, description and input schema."""
        ...

    @property
    def permission(self) -> Permission:
        """The default permission when no rule applies to the call."""
        ...

    @property
    def traits(self) -> ToolTraits:
        """What the tool is (read-only, the file it writes, how its summary shows)."""
        ...

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """What permission rules match a call against (maia.permissions.subject)."""
        ...

    def describe(self, tool_input: Mapping[str, Any]) -> str:
        """A short summary of the call, for the UI and confirmations."""
        ...

    def lock_key(self, tool_input: Mapping[str, Any], launch: Path) -> str | None:
        """Calls sharing a key run one after the other, in call order."""
        ...

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Run the tool and return its result text."""
        ...


# --- stream events (§4.2) --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning, never part of the answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A complete tool call (emitted at the end of the stream)."""

    id: str
    name: str
    input: dict[str, Any]
    raw_arguments: str = ""
    arguments_valid: bool = True


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage reported by the server (reasoning tokens removed from ``output_tokens``)."""

    input_tokens: int
    output_tokens: int
    reasoning_tokens: int = 0
    cost: float | None = None


@dataclass(frozen=True, slots=True)
class Truncated:
    """The answer was cut by the output token limit."""

    reason: Literal["length", "suspicious_limit"]
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Done:
    """End of a complete answer."""

    stop_reason: StopReason


@dataclass(frozen=True, slots=True)
class Thinking:
    """A complete signed reasoning block (emitted at the end of the stream, before the tool calls)."""

    block: ThinkingBlock


StreamEvent: TypeAlias = TextDelta | ReasoningDelta | Thinking | ToolUse | Usage | Truncated | Done


# --- provider (§4.2) -------------------------------------------------------------------------


@dataclass(slots=True)
class ChatRequest:
    """One model call: system prompt, conversation, tools, optional output limit."""

    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int | None = None
    # hears a tool call's name as soon as it arrives, its arguments still streaming (the Agent tool's
    # child can start loading meanwhile); not part of what is sent
    on_tool_start: Callable[[str], None] | None = field(default=None, compare=False, repr=False)


@runtime_checkable
class LLMProvider(Protocol):
    """A streaming chat model. Cancelling the consuming task aborts the request."""

    @property
    def id(self) -> str:
        """The provider's identifier (``litellm``)."""
        ...

    @property
    def model(self) -> str:
        """The model name sent to the server."""
        ...

    def chat(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Stream the model's answer to ``request``."""
        ...

    def with_model(self, model: str) -> LLMProvider:
        """The same provider (same server, same connection pool) talking to another model."""
        ...

    async def aclose(self) -> None:
        """Release connections; the provider is not used afterwards."""
        ...


# --- tool sources ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SourceReport:
    """What starting a tool source has to tell the user."""

    infos: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@runtime_checkable
class ToolSource(Protocol):
    """Where tools come from (built-in, custom tools, skills, an MCP server…), with a life cycle.

    The application starts each source once, asks it for its tools whenever it builds a
    conversation, and closes it at the end (or when the source must be reloaded).
    """

    @property
    def name(self) -> str:
        """A short name for messages (``builtin``, ``custom``, ``mcp:github``…)."""
        ...

    async def start(self) -> SourceReport:
        """Load or connect; never raises for a user's mistake (the report says what failed)."""
        ...

    def tools(self) -> list[Tool]:
        """The tools this source offers now."""
        ...

    async def aclose(self) -> None:
        """Release what ``start`` acquired (processes, connections)."""
        ...


# --- UI (§4.4) -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolsProgress:
    """Parallel tools progress: the names of the calls and how many are done."""

    names: tuple[str, ...]
    done: int


@dataclass(frozen=True, slots=True)
class Approval:
    """What a question about a tool call shows (all of it untrusted text: the UI makes it inert)."""

    tool: str
    summary: str
    detail: str | None = None  # the exact command, a unified diff, or the arguments
    detail_kind: Literal["command", "diff", "text"] | None = None
    reason: str | None = None  # why the permission engine asked, when it asked out of doubt
    rules: tuple[str, ...] = ()  # what "always" would add; empty: "always" is not offered


class AgentUI(Protocol):
    """What the agent loop tells the user and asks them; injected, so the loop never prints."""

    def on_thinking(self, thinking: bool) -> None:
        """The model is (or stopped) working on an answer."""

    def on_text(self, text: str) -> None:
        """A piece of the answer text arrived."""

    def on_text_end(self) -> None:
        """The answer text of one model call is complete."""

    def on_reasoning(self, text: str) -> None:
        """A piece of the model's reasoning arrived."""

    def on_tool_call(self, name: str, summary: str) -> None:
        """A tool call is announced."""

    def on_tool_result(self, name: str, output: str, is_error: bool) -> None:
        """A tool call finished."""

    def on_subagent_tool(self, agent: str, phase: str, name: str, summary: str, is_error: bool) -> None:
        """A tool call of the sub-agent ``agent`` (launched by the Agent tool or ``&``): ``phase`` "call" with its
        summary, or "result" with the first line of its output (``is_error`` when it failed)."""

    def on_warning(self, message: str) -> None:
        """Something the user should know (truncated answer…)."""

    def confirm(self, message: str) -> Awaitable[bool]:
        """Ask a yes/no question."""
        ...

    def ask(self, message: str, approval: Approval | None = None) -> Awaitable[AskAnswer]:
        """Ask yes/no/stop (and, when ``approval`` offers rules, always) about a tool call."""
        ...

    def on_context_usage(self, tokens: int) -> None:
        """The context size changed."""

    def on_tools_running(self, progress: ToolsProgress | None) -> None:
        """Parallel tools progress, or None when they are all done."""
