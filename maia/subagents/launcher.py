"""Running a sub-agent in a child process, parent side (§20.2-§20.5).

The child is ``python -I -m maia --subagent`` in its own session (the terminal's Ctrl+C reaches only
the parent), spoken to in JSON lines. Its questions are asked in the parent's interface one at a
time. Cancelling the caller (Ctrl+C) or the 30-minute limit sends ``abort``, then SIGKILL after 5 s.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from maia.core.contracts import Approval, AskAnswer, Message
from maia.core.errors import MaiaError
from maia.i18n import _, ngettext
from maia.process import guardian
from maia.process.tree import kill_tree
from maia.subagents import protocol
from maia.subagents.protocol import ChildSpec, ProtocolError
from maia.subagents.spares import Launch, child_command, close_stdin, pool

if TYPE_CHECKING:
    from maia.subagents.relay import RelayServer

MAX_DURATION = 30 * 60.0
KILL_GRACE = 5.0
STDERR_LINES = 20
STDERR_LINE_CHARS = 500

# (question[, doubt]) → the user's answer; the doubt (the engine's reason) only when it asked out of doubt
Confirm = Callable[..., Awaitable[bool]]


class Unanswered(Exception):
    """Raised by a Confirm when no person can answer (a non-interactive run): the message says why."""


# (question, approval) → the user's answer in the same box as the parent's own calls (yes, no, always…)
AskApproval = Callable[[str, Approval], Awaitable[AskAnswer]]
OnLog = Callable[[str, str], None]  # (level "info" | "warn", message)
OnTool = Callable[[str, str, str, bool], None]  # (phase "call" | "result", tool, summary, is_error)
OnWait = Callable[[str | None, str | None], None]  # (reason, until): the child waits for the server; None: over


@dataclass(slots=True)
class _Questions:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0


_questions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Questions] = weakref.WeakKeyDictionary()


def _questions_here() -> _Questions:
    loop = asyncio.get_running_loop()
    questions = _questions.get(loop)
    if questions is None:
        questions = _questions[loop] = _Questions()
    return questions


def questions_waiting() -> int:
    """Sub-agent questions waiting for their turn behind the one being asked (this event loop)."""
    return _questions_here().waiting


@dataclass(slots=True)
class SubAgentResult:
    """How a sub-agent run ended."""

    agent: str
    ok: bool
    summary: str = ""
    error: str | None = None
    tool_calls: int = 0
    duration: float = 0.0
    model: str = ""
    messages: list[Message] = field(default_factory=list)
    trace: str | None = None  # the session name the trace was saved as
    stderr_tail: str = ""
    aborted: bool = False
    timed_out: bool = False


def trace_name(parent_session: str | None, agent: str) -> str:
    """``{parent session}-{agent}`` within the 100-character limit of session names (§20.5)."""
    from maia.sessions.store import MAX_NAME, default_name

    suffix = f"-{agent}"
    return (parent_session or default_name())[: MAX_NAME - len(suffix)] + suffix


def save_trace(spec: ChildSpec, messages: list[Message], model: str) -> str:
    """Write the sub-agent's conversation as a session (``_2``, ``_3``… when the name is taken)."""
    from maia.sessions.codec import SavedSession
    from maia.sessions.store import SessionStore

    session = SavedSession(
        name=trace_name(spec.parent_session, spec.definition.name),
        model=model,
        launch=str(spec.launch),
        messages=list(messages),
        agent=spec.definition.name,
        parent_session=spec.parent_session,
        origin="subagent",
    )
    return SessionStore.for_launch(spec.launch).write(session)


class _Run:
    """One child process and its conversation with the parent."""

    def __init__(
        self,
        spec: ChildSpec,
        process: asyncio.subprocess.Process,
        confirm: Confirm | None,
        on_log: OnLog | None,
        kill_grace: float,
        on_wait: OnWait | None = None,
        on_tool: OnTool | None = None,
        ask: AskApproval | None = None,
    ) -> None:
        self.spec = spec
        self.on_wait = on_wait
        self.on_tool = on_tool
        self.ask = ask
        self.waiting: tuple[str, str | None] | None = None  # (reason, until) while the child waits for the server
        self.kill_grace = kill_grace
        self.process = process
        self.confirm = confirm
        self.on_log = on_log
        self.done: dict[str, Any] | None = None
        self.took_task = False  # the child said ``started`` (or more): it read its task, never made again elsewhere
        self.stopping = False
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.questions: set[asyncio.Task[None]] = set()
        self.stderr_task: asyncio.Task[None] | None = None
        self.relay: RelayServer | None = None  # the child's model requests, made here

    @property
    def name(self) -> str:
        return self.spec.definition.name

    async def send(self, message: dict[str, Any]) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            return
        try:
            stdin.write(protocol.encode(message))
            await stdin.drain()
        except (ConnectionError, OSError):
            pass  # the child is gone: its exit tells the rest

    async def _pump_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        with contextlib.suppress(ValueError, OSError):
            while line := await stream.readline():
                text = line.decode("utf-8", "replace").rstrip()
                if text:
                    self.stderr.append(text[:STDERR_LINE_CHARS])

    async def _ask(
        self, request_id: Any, message: str, doubt: str | None = None, approval: Approval | None = None
    ) -> None:
        ok = False
        reason: str | None = None
        answer: str | None = None
        questions = _questions_here()
        questions.waiting += 1
        try:
            await questions.lock.acquire()
        finally:
            questions.waiting -= 1
        try:
            if not self.stopping and self.confirm is not None and self.done is None:
                question = _("[sub-agent {name}] {question}").format(name=self.name, question=message)
                try:
                    if approval is not None and self.ask is not None:
                        # the same box as the parent's own calls: the command or diff, the doubt, "always"
                        answer = await self.ask(question, approval)
                        ok = answer in ("yes", *protocol.ALWAYS_ANSWERS)
                    else:
                        ok = await (self.confirm(question, doubt) if doubt else self.confirm(question))
                except Unanswered as error:
                    reason = str(error)
                except Exception as error:  # an interface that cannot ask: the call is refused
                    self._log("warn", _("The question could not be asked: {error}").format(error=error))
        finally:
            questions.lock.release()
        await self.send(protocol.confirm_result(request_id, ok, reason, answer))

    def _tool(self, message: dict[str, Any]) -> None:
        """A tool event from the child, relayed (untrusted text: the interface makes it inert)."""
        phase, name, summary = message.get("phase"), message.get("name"), message.get("summary")
        if self.on_tool is None or phase not in ("call", "result") or not isinstance(name, str):
            return
        text = summary if isinstance(summary, str) else ""
        self.on_tool(str(phase), name[:100], text[: protocol.TOOL_TEXT], message.get("error") is True)

    def _log(self, level: str, message: str) -> None:
        if self.on_log is not None:
            self.on_log("warn" if level == "warn" else "info", message)

    async def converse(self) -> None:
        """Send the task, answer questions and relay logs until ``done`` or the end of the child's output."""
        from maia.subagents.relay import RelayServer

        self.stderr_task = asyncio.create_task(self._pump_stderr())
        self.relay = RelayServer(self.send)
        await self.send(protocol.start(self.spec, relay=True))
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            try:
                line = await stdout.readline()
            except (ValueError, OSError):  # a line beyond MAX_LINE: the child is broken
                self.stderr.append(_("(the sub-agent sent an oversized message)"))
                break
            if not line:
                break
            try:
                message = protocol.decode(line)
            except ProtocolError:
                self.stderr.append(line.decode("utf-8", "replace").rstrip()[:STDERR_LINE_CHARS])
                continue
            kind = message.get("type")
            if kind != "ready":  # "started", or anything a child says once it has read its task
                self.took_task = True
            if kind == "confirm":
                doubt = message.get("doubt")
                task = asyncio.create_task(
                    self._ask(
                        message.get("id"),
                        str(message.get("message", "")),
                        doubt if isinstance(doubt, str) else None,
                        protocol.approval_from_json(message.get("approval")),
                    )
                )
                self.questions.add(task)
                task.add_done_callback(self.questions.discard)
            elif kind == "log":
                self._log(str(message.get("level", "info")), str(message.get("message", "")))
            elif kind == "wait":
                reason, until = message.get("reason"), message.get("until")
                self.waiting = (str(reason), str(until) if until else None) if reason else None
                if self.on_wait is not None:
                    self.on_wait(str(reason) if reason else None, str(until) if reason and until else None)
            elif kind == "tool":
                self._tool(message)
            elif kind in ("http", "http-cancel") and self.relay is not None:
                self.relay.handle(message)
            elif kind == "done":
                self.done = message
                break
        await self._wait_exit()

    async def _wait_exit(self) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(self.process.wait()), self.kill_grace)
        except TimeoutError:
            kill_tree(self.process.pid)
            await self.process.wait()

    async def stop(self) -> None:
        """``abort``, then SIGKILL if the child has not ended after the grace delay; its done is kept."""
        self.stopping = True
        for task in list(self.questions):  # an open question is withdrawn: the child refuses it itself
            task.cancel()
        await self.send(protocol.abort())
        if self.relay is not None:  # its requests are dropped with it
            await self.relay.aclose()
        stdout = self.process.stdout
        assert stdout is not None

        async def drain() -> None:
            with contextlib.suppress(ValueError, OSError):
                while self.done is None and (line := await stdout.readline()):
                    with contextlib.suppress(ProtocolError):
                        message = protocol.decode(line)
                        if message.get("type") == "done":
                            self.done = message
            await self.process.wait()

        try:
            await asyncio.wait_for(drain(), self.kill_grace)
        except TimeoutError:
            kill_tree(self.process.pid)
            await self.process.wait()

    async def close(self) -> None:
        for task in list(self.questions):
            task.cancel()
        if self.relay is not None:
            await self.relay.aclose()
        if self.process.returncode is None:
            kill_tree(self.process.pid)
            await self.process.wait()
        guardian.release(self.process.pid)
        if self.stderr_task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self.stderr_task, 5.0)
        await close_stdin(self.process)

    def exit_description(self) -> str:
        code = self.process.returncode
        if code is not None and code < 0:
            return _("killed by signal {number}").format(number=-code)
        return _("exit code {code}").format(code=code)


async def launch_subagent(
    spec: ChildSpec,
    *,
    confirm: Confirm | None = None,
    on_log: OnLog | None = None,
    timeout: float | None = MAX_DURATION,
    kill_grace: float = KILL_GRACE,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    on_wait: OnWait | None = None,
    on_tool: OnTool | None = None,
    ask: AskApproval | None = None,
    keep_spare: bool = False,
) -> SubAgentResult:
    """Run one sub-agent to its end; failures are results, cancellation (Ctrl+C) stops the child then propagates.

    A spare child started for the same command, folder and environment is used when there is one;
    ``keep_spare``: once this run has ended, start one for the next call (see ``_Spare``).

    ``confirm`` asks the user (None: every question is answered no); ``on_log`` shows the child's logs;
    ``timeout`` None: no time limit of its own (a workflow's limit bounds it); ``on_wait`` hears when the
    child waits for the server (rate limit) and when it carries on; ``on_tool`` hears each tool call the
    child makes and how it ended; ``ask`` shows a question that carries its approval box (None: ``confirm``).
    """
    started = time.monotonic()
    launch = Launch.of(list(command or child_command()), spec.launch, env)
    spares = pool()
    generation = spares.generation
    process = await spares.take(launch)
    hooks = (confirm, on_log, kill_grace, on_wait, on_tool, ask)
    result = await _run_child(spec, launch, process, started, timeout, hooks)
    if keep_spare:
        spares.replace(launch, generation)
    return result


async def _run_child(
    spec: ChildSpec,
    launch: Launch,
    spare: asyncio.subprocess.Process | None,
    started: float,
    timeout: float | None,
    hooks: tuple[Any, ...],
) -> SubAgentResult:
    """One run in ``spare`` or a child started for it. A spare that ends without having said ``started`` had
    died before it could read its task (nothing was done): the run is made again in a child of its own."""
    name = spec.definition.name
    process = spare
    while True:
        if process is None:
            try:
                process = await launch.spawn()
            except OSError as error:
                return SubAgentResult(
                    name,
                    False,
                    error=_("The sub-agent could not be started: {error}").format(error=error.strerror or error),
                )
        run = _Run(spec, process, *hooks)
        result = SubAgentResult(name, False)
        try:
            async with asyncio.timeout(timeout):
                await run.converse()
        except TimeoutError:
            result.timed_out = True
            await run.stop()
        except asyncio.CancelledError:
            result.aborted = True
            # the stop runs in its own task: a second Ctrl+C cannot leave the child running
            stopping = asyncio.ensure_future(run.stop())
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(stopping)
            await run.close()
            _finish(run, result, started, timeout)
            raise
        except BaseException:
            await run.close()
            raise
        await run.close()
        if spare is not None and process is spare and not run.took_task and run.done is None and not result.timed_out:
            process = None  # the spare was dead before it could read its task: nothing was done, a child of its own
            continue
        _finish(run, result, started, timeout)
        return result


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _duration(seconds: float) -> str:
    if seconds >= 60:
        return _("{minutes:g} min").format(minutes=round(seconds / 60, 1))
    return _("{seconds:g} s").format(seconds=round(seconds, 1))


def _clock(iso: str | None) -> str:
    """An ISO time as the local ``HH:MM:SS`` (the text itself when it is no time)."""
    from datetime import datetime

    if not iso:
        return "?"
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return iso


def _finish(run: _Run, result: SubAgentResult, started: float, timeout: float | None) -> None:
    """Fill the result from the child's done message, or explain why there is none; save the trace."""
    from maia.sessions.codec import message_from_dict

    result.duration = time.monotonic() - started
    result.stderr_tail = "\n".join(run.stderr)
    done = run.done
    if done is not None:
        result.summary = str(done.get("summary") or "")
        result.tool_calls = _int(done.get("toolCalls"))
        result.model = str(done.get("model") or run.spec.model)
        with contextlib.suppress(ValueError):
            result.messages = [message_from_dict(m) for m in done.get("messages") or []]
    if result.timed_out and run.waiting is not None:
        # the parent (and its model) learn the real reason and time, never a stale "try again in 2s"
        result.error = _(
            "The sub-agent was stopped by its time limit ({limit}) while it waited for the server ({reason}) "
            "until {time}."
        ).format(limit=_duration(timeout or 0.0), reason=run.waiting[0], time=_clock(run.waiting[1]))
    elif result.timed_out:
        result.error = _("The sub-agent was stopped: it ran longer than its time limit ({limit}).").format(
            limit=_duration(timeout or 0.0)
        )
    elif result.aborted:
        result.error = _("The sub-agent was interrupted.")
    elif done is None and result.stderr_tail:
        result.error = _(
            "The sub-agent process ended without a result ({status}).\nEnd of its error output:\n{tail}"
        ).format(status=run.exit_description(), tail=result.stderr_tail)
    elif done is None:
        result.error = _("The sub-agent process ended without a result ({status}).").format(
            status=run.exit_description()
        )
    elif done.get("ok") is True:
        result.ok = True
    else:
        result.error = str(done.get("error") or _("The sub-agent failed without saying why."))
    if run.spec.definition.trace and result.messages:
        try:
            result.trace = save_trace(run.spec, result.messages, result.model or run.spec.model)
        except (OSError, MaiaError) as error:
            run._log("warn", _("The sub-agent's trace could not be saved: {error}").format(error=error))


# --- texts the interface shows (§20.4) --------------------------------------------------------


def done_message(result: SubAgentResult) -> str:
    """INFO at the end: ``Sub-agent "x" finished in N s (M tool calls).`` (+ the trace's name)."""
    calls = ngettext("{count} tool call", "{count} tool calls", result.tool_calls).format(count=result.tool_calls)
    if result.trace:
        return _('Sub-agent "{name}" finished in {seconds:.0f} s ({calls}). Trace: {trace}.').format(
            name=result.agent, seconds=result.duration, calls=calls, trace=result.trace
        )
    return _('Sub-agent "{name}" finished in {seconds:.0f} s ({calls}).').format(
        name=result.agent, seconds=result.duration, calls=calls
    )


def failure_message(result: SubAgentResult) -> str:
    """The warning when a sub-agent fails."""
    return _('Sub-agent "{name}" failed: {error}').format(name=result.agent, error=result.error or "?")


def summary_for_model(result: SubAgentResult) -> str:
    """The Agent tool's result: the summary, introduced."""
    return f'Summary of sub-agent "{result.agent}":\n\n{result.summary}'


def failure_for_model(result: SubAgentResult) -> str:
    """The Agent tool's error text (with the end of the child's error output when it crashed)."""
    return f'Sub-agent "{result.agent}" failed: {result.error or "unknown error"}'
