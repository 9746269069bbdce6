"""Headless runs (``maia ask``): one request, no terminal, output for scripts (text, JSON, JSON lines)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, TextIO

from maia.agent import TurnResult, final_text
from maia.contracts import AskAnswer, Message, ToolResultBlock, ToolsProgress, ToolUseBlock, Usage
from maia.conversation import Conversation
from maia.errors import RateLimited
from maia.i18n import _
from maia.permissions.engine import Decision
from maia.permissions.rules import Verdict

OutputFormat = Literal["text", "json", "stream-json"]
MAX_WAIT = 15 * 60
DEFAULT_WAITS = (5.0, 10.0, 20.0, 40.0, 60.0)
MAX_RETRIES = 8


def headless_permissions(
    check: Callable[[str, Mapping[str, Any]], Decision], yes: bool
) -> Callable[[str, Mapping[str, Any]], Decision]:
    """Nobody can answer a question: ``ask`` becomes a refusal explained to the model, or ``--yes`` allows it.

    A ``deny`` always stays a deny.
    """

    def decide(name: str, tool_input: Mapping[str, Any]) -> Decision:
        decision = check(name, tool_input)
        if decision.verdict != Verdict.ASK:
            return decision
        if yes:
            return Decision(Verdict.ALLOW, "--yes", _("allowed by --yes"))
        return Decision(
            Verdict.DENY,
            None,
            _(
                "Not run: this is a non-interactive run (maia ask) and this call needs the user's confirmation. "
                "Do not retry it; the user can allow it with --allow 'Rule' or --yes."
            ),
        )

    return decide


class HeadlessUI:
    """AgentUI for scripts: JSON events on stdout (stream-json) or progress on stderr (text, json)."""

    def __init__(self, output: OutputFormat, stdout: TextIO, stderr: TextIO, *, verbose: bool = True) -> None:
        self.output = output
        self.stdout = stdout
        self.stderr = stderr
        self.verbose = verbose
        self.warnings: list[str] = []

    def emit(self, event: dict[str, Any]) -> None:
        """One JSON event per line (stream-json only)."""
        if self.output == "stream-json":
            self.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
            self.stdout.flush()

    def progress(self, text: str) -> None:
        """A progress line on stderr (not in stream-json, where events say it all)."""
        if self.output != "stream-json" and self.verbose:
            self.stderr.write(text + "\n")
            self.stderr.flush()

    def on_thinking(self, thinking: bool) -> None:
        """Nothing to show."""

    def on_text(self, text: str) -> None:
        """Answer text as it streams."""
        self.emit({"type": "text", "text": text})

    def on_text_end(self) -> None:
        """Nothing to show."""

    def on_reasoning(self, text: str) -> None:
        """Reasoning, as its own event."""
        self.emit({"type": "reasoning", "text": text})

    def on_tool_call(self, name: str, summary: str) -> None:
        """A tool call."""
        self.emit({"type": "tool_call", "name": name, "summary": summary})
        self.progress(f"→ {name} {summary}".rstrip())

    def on_tool_result(self, name: str, output: str, is_error: bool) -> None:
        """A tool result."""
        self.emit({"type": "tool_result", "name": name, "output": output, "is_error": is_error})
        first = output.strip().splitlines()[0] if output.strip() else ""
        self.progress(("  ✗ " if is_error else "  ✓ ") + first[:200])

    def on_warning(self, message: str) -> None:
        """A warning: stderr, or a warning event."""
        self.warnings.append(message)
        self.emit({"type": "warning", "message": message})
        if self.output != "stream-json":
            self.stderr.write(_("Warning: {message}").format(message=message) + "\n")

    async def confirm(self, message: str) -> bool:
        """Nobody can answer: no."""
        return False

    async def ask(self, message: str) -> AskAnswer:
        """Nobody can answer: no (permissions already turned questions into refusals)."""
        return "no"

    def on_context_usage(self, tokens: int) -> None:
        """Context size (stream-json only)."""
        self.emit({"type": "context", "tokens": tokens})

    def on_tools_running(self, progress: ToolsProgress | None) -> None:
        """Nothing to show."""


@dataclass(slots=True)
class Report:
    """What ``--output json`` prints and the final ``stream-json`` event carries."""

    status: str
    answer: str = ""
    model: str = ""
    session: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object."""
        data: dict[str, Any] = {
            "status": self.status,
            "answer": self.answer,
            "model": self.model,
            "session": self.session,
            "tool_calls": self.tool_calls,
            "usage": self.usage,
            "warnings": self.warnings,
        }
        if self.error is not None:
            data["error"] = self.error
        return data


def tool_calls_of(messages: list[Message]) -> list[dict[str, Any]]:
    """Each tool call of these messages with its result."""
    results = {b.tool_use_id: b for m in messages for b in m.content if isinstance(b, ToolResultBlock)}
    calls = []
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                result = results.get(block.id)
                calls.append(
                    {
                        "id": block.id,
                        "name": block.name,
                        "input": block.input,
                        "output": result.content if result else None,
                        "is_error": result.is_error if result else None,
                    }
                )
    return calls


def usage_of(usage: list[Usage]) -> dict[str, Any]:
    """Usage added up over the model calls (cost when the proxy gave one)."""
    costs = [u.cost for u in usage if u.cost is not None]
    return {
        "input_tokens": sum(u.input_tokens for u in usage),
        "output_tokens": sum(u.output_tokens for u in usage),
        "reasoning_tokens": sum(u.reasoning_tokens for u in usage),
        "cost": sum(costs) if costs else None,
        "calls": len(usage),
    }


async def send_with_retries(
    conversation: Conversation,
    text: str,
    ui: HeadlessUI,
    *,
    wait: bool,
    max_iterations: int | None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> TurnResult:
    """Send, and on HTTP 429 wait as the server asks (status on stderr) and go on; ``wait=False`` fails at once."""
    attempt = 0
    resume = False
    while True:
        try:
            if resume:
                return await conversation.resume(max_iterations=max_iterations)
            return await conversation.send(text, max_iterations=max_iterations)
        except RateLimited as error:
            attempt += 1
            if not wait or attempt > MAX_RETRIES:
                raise
            delay = (
                error.retry_after
                if error.retry_after is not None
                else DEFAULT_WAITS[min(attempt - 1, len(DEFAULT_WAITS) - 1)]
            )
            if delay > MAX_WAIT:
                raise
            at = (datetime.now() + timedelta(seconds=delay)).strftime("%H:%M:%S")
            ui.emit({"type": "rate_limited", "retry_in": delay, "retry_at": at})
            if ui.output != "stream-json":
                ui.stderr.write(
                    _("Rate-limited, retrying at {time} ({seconds:g} s)").format(time=at, seconds=delay) + "\n"
                )
                ui.stderr.flush()
            await sleep(delay)
            resume = conversation.agent.can_resume


def report_for(
    conversation: Conversation,
    status: str,
    start: int,
    usage_start: int,
    session: str | None,
    ui: HeadlessUI,
    error: str | None = None,
) -> Report:
    """The report of this run: only what it added to the conversation."""
    added = conversation.agent.messages[start:]
    answer = final_text(conversation.agent) if added else ""
    return Report(
        status=status,
        answer=answer,
        model=conversation.provider.model,
        session=session,
        tool_calls=tool_calls_of(added),
        usage=usage_of(conversation.agent.usage[usage_start:]),
        warnings=list(ui.warnings),
        error=error,
    )


@dataclass(slots=True)
class AskOptions:
    """What ``maia ask`` was asked to do."""

    prompt: str
    model: str
    launch: Any  # Path
    home: Any  # Path
    settings: Any  # Settings
    allow: tuple[str, ...] = ()
    yes: bool = False
    max_iterations: int | None = None
    resume: str | None = None
    continue_last: bool = False
    save: bool = True
    wait: bool = True


def _last_session(store: Any) -> str | None:
    for info in store.listing():
        if info.error is None and info.agent is None:
            return str(info.name)
    return None


async def run_ask(options: AskOptions, ui: HeadlessUI) -> tuple[Report, int]:
    """Run one request to the end: (report, exit status). Provider and usage errors end up in the report."""
    import signal

    from maia.context.tokens import TokenCounter
    from maia.context.window import resolve_context_size
    from maia.errors import ExitStatus, MaiaError, NotFoundError
    from maia.provider.litellm import LiteLLMProvider
    from maia.provider.models import list_models
    from maia.refs import resolve_references
    from maia.sessions import SessionManager, SessionStore, ensure_project_folders
    from maia.signals import forget_signal, on_signal
    from maia.skills import parse_invocation, resolve_invocation

    settings = options.settings
    provider = LiteLLMProvider(settings, options.model)
    store = None
    if options.save or options.resume or options.continue_last:
        warning = ensure_project_folders(options.launch) if options.save else None
        if warning:
            ui.on_warning(warning)
        store = SessionStore.for_launch(options.launch)
    sessions = SessionManager(store if options.save else None)

    async def models() -> Any:
        return await list_models(settings)

    conversation = Conversation(
        launch=options.launch,
        home=options.home,
        provider=provider,
        ui=ui,
        sessions=sessions,
        counter=TokenCounter(),
        max_iterations=options.max_iterations or settings.max_iterations,
        list_models=models,
        extra_allow=options.allow,
        wrap_permissions=lambda check: headless_permissions(check, options.yes),
    )
    for message in conversation.setup.warnings:
        ui.on_warning(message)
    start = usage_start = 0
    status, code, error = "done", int(ExitStatus.OK), None
    task = asyncio.current_task()
    if task is not None:
        on_signal(signal.SIGTERM, task.cancel)  # SIGTERM: the same as Ctrl+C
    try:
        if options.resume or options.continue_last:
            assert store is not None
            name = options.resume or _last_session(store)
            if name is None:
                raise NotFoundError(_("No saved session to continue in this folder."))
            conversation.load(store.load(name))
            if not options.save:
                sessions.store = None
        start = len(conversation.agent.messages)
        size = await resolve_context_size(
            options.model, list_models=models, setting=settings.max_context_tokens, provider=None
        )
        conversation.max_context = size.tokens
        text = options.prompt
        invocation = parse_invocation(text)
        if invocation is not None:
            if invocation.name is None:
                names = ", ".join(sorted(conversation.setup.skills)) or _("none")
                raise MaiaError(_("Give a skill name after §. Available skills: {names}.").format(names=names))
            text = resolve_invocation(invocation, conversation.setup.skills)
        else:
            refs = resolve_references(text, options.launch)
            for message in refs.warnings:
                ui.on_warning(message)
            if refs.context:
                conversation.agent.pending_context.append(refs.context)
        result = await send_with_retries(
            conversation, text, ui, wait=options.wait, max_iterations=options.max_iterations
        )
        if result == "max_iterations":
            status, code = "max_iterations", int(ExitStatus.ITERATION_LIMIT)
            ui.on_warning(
                _("Stopped: more than {count} iterations (raise --max-iterations).").format(
                    count=options.max_iterations or settings.max_iterations
                )
            )
        elif result == "stopped":
            status = "stopped"
    except asyncio.CancelledError:
        status, code = "interrupted", int(ExitStatus.INTERRUPTED)
        error = _("Interrupted.")
    except MaiaError as failure:
        status, code, error = "error", int(failure.exit_status), failure.message
        if failure.hint:
            error = f"{error}\n{failure.hint}"
    finally:
        forget_signal(signal.SIGTERM)
        await provider.aclose()
    saved = None
    if options.save:
        try:
            saved = conversation.save() or sessions.current_file
        except MaiaError as failure:
            ui.on_warning(failure.message)
    report = report_for(conversation, status, start, usage_start, saved, ui, error)
    return report, code
