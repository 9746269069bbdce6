"""Headless runs (``maia ask``): one request, no terminal, output for scripts (text, JSON, JSON lines).

A thin front end of the application layer: it opens an :class:`~maia.app.application.Application`,
prepares the prompt, sends it with the shared retry policy, and reports.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from maia.app.application import Application, AppOptions
from maia.app.retry import Wait
from maia.app.waits import span, wait_line
from maia.core.contracts import (
    Approval,
    AskAnswer,
    Message,
    ToolResultBlock,
    ToolsProgress,
    ToolUseBlock,
    Usage,
)
from maia.core.errors import ExitStatus, MaiaError
from maia.core.inert import for_terminal
from maia.core.settings import Settings
from maia.i18n import _
from maia.inputs.commands import Expanded
from maia.inputs.prepare import Allowed, Invalid, Prompt, SkillList, stdin_context
from maia.permissions.rules import Verdict
from maia.sessions.codec import SavedSession

if TYPE_CHECKING:
    from maia.permissions.engine import Decision

OutputFormat = Literal["text", "json", "stream-json"]
ASK_LOCK_WAIT = 5.0  # another `maia ask` on the same session: wait this long for it to finish
WAITING_NOTICE = 5.0  # first "waiting for the model" line after this many seconds without an answer
WAITING_EVERY = 15.0


def headless_permissions(
    check: Callable[[str, Mapping[str, Any]], Decision], yes: bool
) -> Callable[[str, Mapping[str, Any]], Decision]:
    """Nobody can answer a question: ``ask`` becomes a refusal explained to the model, or ``--yes`` allows it
    when the question comes from "no rule applies" (never from doubt about a deny rule). A ``deny``
    always stays a deny."""

    def decide(name: str, tool_input: Mapping[str, Any]) -> Decision:
        from maia.permissions.engine import Decision  # loaded by the first tool call, not at start-up

        decision = check(name, tool_input)
        if decision.verdict != Verdict.ASK:
            return decision
        if yes and not decision.doubt:
            return Decision(Verdict.ALLOW, "--yes", _("allowed by --yes"))
        if yes:  # an ask that comes from doubt (unreadable command, a deny rule it might dodge…)
            return Decision(
                Verdict.DENY,
                None,
                _(
                    "Not run: --yes only answers questions no rule raised, and this one comes from doubt: "
                    "{reason}. Do not retry it as is; the user can allow it with a rule that names it."
                ).format(reason=decision.reason),
            )
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

    interactive = False  # no person answers: questions are refused, or answered by --yes (sub-agents)

    def __init__(self, output: OutputFormat, stdout: TextIO, stderr: TextIO, *, verbose: bool = True) -> None:
        self.yes = False  # maia ask --yes: plain questions (never doubts) are answered yes
        self.output = output
        self.stdout = stdout
        self.stderr = stderr
        self.verbose = verbose
        self.warnings: list[str] = []
        self._waiting: asyncio.TimerHandle | None = None
        self._waited = 0.0
        self._calls: list[ToolUseBlock] = []  # the model's calls not announced yet

    def emit(self, event: dict[str, Any]) -> None:
        """One JSON event per line (stream-json only)."""
        if self.output == "stream-json":
            self.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
            self.stdout.flush()

    def progress(self, text: str) -> None:
        """A progress line on stderr (not in stream-json, where events say it all), inert on a terminal."""
        if self.output != "stream-json" and self.verbose:
            self.stderr.write(for_terminal(text, self.stderr) + "\n")
            self.stderr.flush()

    def note(self, text: str) -> None:
        """Information about the run (which session was continued…): stderr, or a note event."""
        self.emit({"type": "note", "message": text})
        self.progress(text)

    # --- a model that takes its time -------------------------------------------------------------

    def _schedule_waiting(self, delay: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._waiting = loop.call_later(delay, self._still_waiting, delay)

    def _still_waiting(self, delay: float) -> None:
        self._waited += delay
        self.emit({"type": "waiting", "seconds": int(self._waited)})
        self.progress(_("Waiting for the model ({seconds} s)…").format(seconds=int(self._waited)))
        self._schedule_waiting(WAITING_EVERY)

    def _stop_waiting(self) -> None:
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None

    # --- AgentUI --------------------------------------------------------------------------------

    def on_thinking(self, thinking: bool) -> None:
        """Say so on stderr when the model is silent for a while."""
        self._stop_waiting()
        if thinking:
            self._waited = 0.0
            self._schedule_waiting(WAITING_NOTICE)

    def on_text(self, text: str) -> None:
        """Answer text as it streams."""
        self._stop_waiting()
        self.emit({"type": "text", "text": text})

    def on_text_end(self) -> None:
        """Nothing to show."""

    def on_reasoning(self, text: str) -> None:
        """Reasoning, as its own event."""
        self._stop_waiting()
        self.emit({"type": "reasoning", "text": text})

    def expect_calls(self, calls: list[ToolUseBlock]) -> None:
        """The calls of the model's last message: their ids and inputs go with the tool_call events."""
        self._calls.extend(calls)

    def on_tool_call(self, name: str, summary: str) -> None:
        """A tool call (its ``id`` and ``input`` too, for scripts that follow a run)."""
        event: dict[str, Any] = {"type": "tool_call", "name": name, "summary": summary}
        call = next((c for c in self._calls if c.name == name), None)
        if call is not None:  # the calls are announced in the order the model made them
            self._calls.remove(call)
            event = {"type": "tool_call", "id": call.id, "name": name, "input": call.input, "summary": summary}
        self.emit(event)
        self.progress(f"→ {name} {summary}".rstrip())

    def on_tool_result(self, name: str, output: str, is_error: bool) -> None:
        """A tool result."""
        self.emit({"type": "tool_result", "name": name, "output": output, "is_error": is_error})
        first = output.strip().splitlines()[0] if output.strip() else ""
        self.progress(("  ✗ " if is_error else "  ✓ ") + first[:200])

    def on_subagent_tool(self, agent: str, phase: str, name: str, summary: str, is_error: bool) -> None:
        """A sub-agent's tool call (``subagent_tool_call``) or its end (``subagent_tool_result``, first line)."""
        if phase == "call":
            self.emit({"type": "subagent_tool_call", "agent": agent, "name": name, "summary": summary})
            self.progress(f"  [{agent}] → {name} {summary}".rstrip())
        else:
            event = {"type": "subagent_tool_result", "agent": agent, "name": name, "summary": summary}
            self.emit({**event, "is_error": is_error})
            self.progress(f"  [{agent}]   " + ("✗ " if is_error else "✓ ") + summary[:200])

    def on_warning(self, message: str) -> None:
        """A warning: stderr, or a warning event."""
        self.warnings.append(message)
        self.emit({"type": "warning", "message": message})
        if self.output != "stream-json":
            self.stderr.write(for_terminal(_("Warning: {message}").format(message=message), self.stderr) + "\n")
            self.stderr.flush()

    async def confirm(self, message: str) -> bool:
        """Nobody can answer: no."""
        return False

    async def ask(self, message: str, approval: Approval | None = None) -> AskAnswer:
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


class RunRecord:
    """Every message the agent added during this run: the report's source, kept even when a compaction
    replaces the conversation in the middle of the run."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def add(self, message: Message) -> None:
        """Called by the agent loop for each message it adds."""
        self.messages.append(message)

    @property
    def answer(self) -> str:
        """The text of the last answer."""
        for message in reversed(self.messages):
            if message.role == "assistant":
                return message.text
        return ""


@dataclass(slots=True)
class AskOptions:
    """What ``maia ask`` was asked to do."""

    prompt: str
    model: str
    launch: Path
    home: Path
    settings: Settings
    allow: tuple[str, ...] = ()
    yes: bool = False
    max_iterations: int | None = None
    resume: str | None = None
    continue_last: bool = False
    save: bool = True
    wait: bool = True
    max_wait: float | None = None  # seconds of waiting for the server in all; None: as long as it takes
    stdin: str | None = None  # piped input, attached to the prompt as data
    mode: str | None = None  # the approval mode (--mode); None: the settings' Mode


def _make_waiter(options: AskOptions, ui: HeadlessUI) -> Callable[[Wait], Any]:
    """Wait as the server asks (a known reset, a growing backoff, an outage's window), saying so on stderr;
    ``--max-wait`` bounds the waiting in all, ``--no-wait`` fails at once."""
    waited = 0.0

    async def on_wait(wait: Wait) -> bool:
        nonlocal waited
        if not options.wait:
            return False
        at = wait.until.strftime("%H:%M:%S")
        if options.max_wait is not None and waited + wait.delay > options.max_wait:
            ui.on_warning(
                _("{line}: longer than --max-wait ({limit}) allows, giving up.").format(
                    line=wait_line(wait), limit=span(options.max_wait)
                )
            )
            return False
        ui.emit(
            {
                "type": wait.reason,
                "retry_in": wait.delay,
                "retry_at": at,
                "attempt": wait.attempt,
                "known": wait.known,
                "error": wait.error.message,
            }
        )
        ui.progress(wait_line(wait))
        await asyncio.sleep(wait.delay)
        waited += wait.delay
        return True

    return on_wait


async def run_ask(options: AskOptions, ui: HeadlessUI) -> tuple[Report, int]:
    """Run one request to the end: (report, exit status). Provider, usage and save errors end up in the report."""
    from maia.context import tokens
    from maia.context.tokens import TokenCounter
    from maia.core.signals import on_terminating_signals

    # send first, count later: a short conversation is estimated rather than wait for the encoder
    # (a third of a short run); a long continued one is counted exactly (compaction depends on it)
    exact = [False]
    counter = TokenCounter(ready=lambda: exact[0] or tokens.ready())
    ui.yes = options.yes  # sub-agents' plain questions reach this UI: --yes answers them too
    app = Application(
        AppOptions(
            launch=options.launch,
            home=options.home,
            settings=options.settings,
            model=options.model,
            origin="ask",
            save=options.save,
            allow=options.allow,
            max_iterations=options.max_iterations,
            wrap_permissions=lambda check: headless_permissions(check, options.yes),
            lock_wait=ASK_LOCK_WAIT,
        ),
        ui,
        counter=counter,
    )
    record = RecordHook(app, ui)
    status, code, error = "done", int(ExitStatus.OK), None
    gone: BrokenPipeError | None = None
    task = asyncio.current_task()
    remove_handlers = on_terminating_signals(task.cancel) if task is not None else (lambda: None)
    try:
        await app.start()
        for message in app.report.warnings:
            ui.on_warning(message)
        why = app.set_mode(options.mode or options.settings.mode)  # type: ignore[arg-type]  # a Click choice
        if why:
            ui.on_warning(_("Mode auto: {why}.").format(why=why))
        picked = app.pick_session(resume=options.resume, continue_last=options.continue_last)
        if picked is not None:
            for warning in picked.warnings:
                ui.on_warning(warning)
            for note in picked.notes:
                ui.note(note)
            app.load(picked.session)
            exact[0] = _long(picked.session)
        record.attach()
        await app.context_size()
        text, command = await _prepare(app, options, ui)
        result = await app.send(text, on_wait=_make_waiter(options, ui), typed=options.prompt, command=command)
        if result == "max_iterations":
            status, code = "max_iterations", int(ExitStatus.ITERATION_LIMIT)
            ui.on_warning(
                _("Stopped: more than {count} iterations (raise --max-iterations).").format(
                    count=options.max_iterations or options.settings.max_iterations
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
    except BrokenPipeError as failure:  # `maia ask … | head`: the reader went away, not a bug; the session kept
        gone = failure
    except Exception as failure:  # the front end's guard: a bug is one line (traceback logged), the session kept
        from maia.core.errors import unexpected_message

        status, code, error = "error", int(ExitStatus.ERROR), unexpected_message(failure, options.home)
    finally:
        remove_handlers()
    saved = None
    if options.save:
        try:
            saved = app.save() or app.sessions.current_file
        except MaiaError as failure:
            error = f"{error}\n{failure.message}" if error else failure.message
            code = code or int(ExitStatus.ERROR)
            if status == "done":
                status = "error"  # the answer is in the report, but the run did not end as it should
    await app.aclose()
    if gone is not None:
        raise gone  # the entry point ends quietly when it was standard output's reader
    report = Report(
        status=status,
        answer=record.answer,
        model=app.model if app._conversation is not None else options.model,
        session=saved,
        tool_calls=tool_calls_of(record.messages),
        usage=usage_of(record.usage()),
        warnings=list(ui.warnings),
        error=error,
    )
    return report, code


ESTIMATE_LIMIT = 100_000  # characters of a continued conversation below which counts may be estimates


def _long(session: SavedSession) -> bool:
    """Whether a continued session is long enough for its count to matter (compaction)."""
    from maia.context.tokens import block_text

    total = 0
    for message in session.messages:
        for block in message.content:
            total += len(block_text(block))
            if total > ESTIMATE_LIMIT:
                return True
    return False


async def _prepare(app: Application, options: AskOptions, ui: HeadlessUI) -> tuple[str, Expanded | None]:
    """The prompt to send: a custom ``/command`` filled in, ``§skill`` resolved, ``@`` files and piped
    input attached as data; and the custom command's turn settings, if it is one."""
    command: Expanded | None = None
    prompt = options.prompt
    if prompt.startswith("/") and not prompt.startswith("//"):
        name, _sep, args = prompt[1:].partition(" ")
        if name.strip().lower() in app.commands.commands:
            # a command from the user's (or a trusted project's) own files: its ``!`` lines are its author's
            command = await app.run_command(name.strip().lower(), args.strip())
            prompt = command.prompt
    prepared = app.prepare(prompt, Allowed(bang=False, slash=False, agents=False))
    if isinstance(prepared, SkillList):
        names = ", ".join(sorted(app.skills)) or _("none")
        raise MaiaError(_("Give a skill name after §. Available skills: {names}.").format(names=names))
    if isinstance(prepared, Invalid):
        raise MaiaError(prepared.message)
    assert isinstance(prepared, Prompt)
    for warning in prepared.warnings:
        ui.on_warning(warning)
    for context in prepared.context:
        app.attach(context)
    if options.stdin and options.stdin.strip():
        block, cut = stdin_context(options.stdin)
        if cut:
            ui.on_warning(cut)
        app.attach(block)
    return prepared.text, command


class RecordHook:
    """Connects a :class:`RunRecord` to the application's agent once the conversation exists."""

    def __init__(self, app: Application, ui: HeadlessUI | None = None) -> None:
        self.app = app
        self.ui = ui
        self.record = RunRecord()
        self._usage_start = 0

    def _add(self, message: Message) -> None:
        self.record.add(message)
        if self.ui is not None and message.role == "assistant":
            self.ui.expect_calls(message.tool_uses)

    def attach(self) -> None:
        """Start recording (after the session to continue, if any, was loaded)."""
        agent = self.app.agent
        agent.on_message = self._add
        self._usage_start = len(agent.usage)

    @property
    def messages(self) -> list[Message]:
        """The messages this run added."""
        return self.record.messages

    @property
    def answer(self) -> str:
        """The last answer's text."""
        return self.record.answer

    def usage(self) -> list[Usage]:
        """The usage of this run's model calls."""
        if self.app._conversation is None:
            return []
        return self.app.agent.usage[self._usage_start :]
