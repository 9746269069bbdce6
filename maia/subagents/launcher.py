"""Running a sub-agent in a child process, parent side (§20.2-§20.5).

The child is ``python -I -m maia --subagent`` in its own session (the terminal's Ctrl+C reaches only
the parent), spoken to in JSON lines. Its questions are asked in the parent's interface one at a
time. Cancelling the caller (Ctrl+C) or the 30-minute limit sends ``abort``, then SIGKILL after 5 s.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import sys
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from maia.core.contracts import Approval, AskAnswer, Message
from maia.core.errors import MaiaError
from maia.i18n import _, ngettext
from maia.process import guardian
from maia.subagents import protocol
from maia.subagents.protocol import ChildSpec, ProtocolError

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


def child_command() -> list[str]:
    """How a sub-agent process is started: this Python in isolated mode (nothing imported from the launch
    folder, PYTHONPATH or the user's site), MAIA's hidden mode."""
    from maia.process.sandbox.selfguard import python_argv

    return [*python_argv(), "-m", "maia", protocol.SUBAGENT_FLAG]


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


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux ``/proc``; empty elsewhere)."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children[int(fields[1])].append(int(entry))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL a child and everything it started, whatever process group its tools made for themselves."""
    if sys.platform == "win32":  # no process groups: the child alone
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
        return
    below = _descendants(pid)
    for target in (pid, *below):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(target, signal.SIGKILL)  # a group led by it (the child's, each tool's)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)


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
        self.stopping = False
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.questions: set[asyncio.Task[None]] = set()
        self.stderr_task: asyncio.Task[None] | None = None

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
        self.stderr_task = asyncio.create_task(self._pump_stderr())
        await self.send(protocol.start(self.spec))
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
        if self.process.returncode is None:
            kill_tree(self.process.pid)
            await self.process.wait()
        guardian.release(self.process.pid)
        if self.stderr_task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self.stderr_task, 5.0)

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
    name = spec.definition.name
    argv = list(command or child_command())
    key = _spare_key(argv, env, spec)
    process = _take_spare(key)
    if process is None:
        try:
            process = await _spawn(argv, env, spec)
        except OSError as error:
            return SubAgentResult(
                name,
                False,
                error=_("The sub-agent could not be started: {error}").format(error=error.strerror or error),
            )
    run = _Run(spec, process, confirm, on_log, kill_grace, on_wait, on_tool, ask)
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
    _finish(run, result, started, timeout)
    if keep_spare:
        _replace_spare(key, argv, env, spec)
    return result


# Spare children. A child spends most of its start loading Python modules (a few hundred; the parent
# waits on its first request for about twice the time a bare import of its own module takes). Once a
# conversation has run a sub-agent, the next one is likely: a spare child is started when a run ends,
# loads its modules and waits for its ``start`` (the task, the definition and every setting come only
# then, so a spare knows nothing that could go stale). The next call with the same command, folder
# and environment takes it; anything else discards it. One per event loop, at most; closed with the
# sub-agent source (and, like every child, killed by the guardian if this process dies).


@dataclass(eq=False, slots=True)
class _Spare:
    key: tuple[Any, ...]
    process: asyncio.subprocess.Process
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    watcher: asyncio.Task[None] | None = None


_spares: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Spare] = weakref.WeakKeyDictionary()
_starting: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[None]] = weakref.WeakKeyDictionary()


def _spare_key(argv: Sequence[str], env: Mapping[str, str] | None, spec: ChildSpec) -> tuple[Any, ...]:
    """What a spare must have been started with to serve a call: the same command, folder and environment."""
    environment = env if env is not None else os.environ
    return (tuple(argv), str(spec.launch), tuple(sorted(environment.items())))


async def _spawn(argv: Sequence[str], env: Mapping[str, str] | None, spec: ChildSpec) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=spec.launch,
        env=dict(env) if env is not None else None,
        start_new_session=True,
        limit=protocol.MAX_LINE,
    )
    guardian.watch(process.pid)  # the child's group dies with this process, even by SIGKILL
    return process


def _take_spare(key: tuple[Any, ...]) -> asyncio.subprocess.Process | None:
    """This loop's spare child if it was started for ``key`` and still runs (it is then no spare any more)."""
    loop = asyncio.get_running_loop()
    spare = _spares.pop(loop, None)
    if spare is None:
        return None
    if spare.watcher is not None:
        spare.watcher.cancel()  # its ``ready`` line, if still unread, reaches the run, which ignores it
    if spare.key != key or spare.process.returncode is not None:
        _discard_later(spare.process)
        return None
    return spare.process


def _replace_spare(key: tuple[Any, ...], argv: Sequence[str], env: Mapping[str, str] | None, spec: ChildSpec) -> None:
    """Start a spare for ``key`` in the background, unless one is already there or starting."""
    loop = asyncio.get_running_loop()
    current = _spares.get(loop)
    if current is not None and current.key == key and current.process.returncode is None:
        return
    starting = _starting.get(loop)
    if starting is not None and not starting.done():
        return
    _starting[loop] = loop.create_task(_start_spare(key, argv, env, spec))


async def _start_spare(
    key: tuple[Any, ...], argv: Sequence[str], env: Mapping[str, str] | None, spec: ChildSpec
) -> None:
    try:
        process = await _spawn(argv, env, spec)
    except OSError:
        return  # the next call starts its own child and says why if it cannot
    loop = asyncio.get_running_loop()
    old = _spares.pop(loop, None)
    if old is not None:
        if old.watcher is not None:
            old.watcher.cancel()
        _discard_later(old.process)
    spare = _Spare(key, process)
    spare.watcher = loop.create_task(_await_ready(spare))
    _spares[loop] = spare


async def _await_ready(spare: _Spare) -> None:
    """Read the spare's ``ready`` line (anything else, or its end, and it is no spare: discarded)."""
    stdout = spare.process.stdout
    assert stdout is not None
    try:
        line = await stdout.readline()
        ok = protocol.decode(line).get("type") == "ready"
    except (ValueError, OSError, ProtocolError):
        ok = False
    if ok:
        spare.ready.set()
        return
    loop = asyncio.get_running_loop()
    if _spares.get(loop) is spare:
        del _spares[loop]
    _discard_later(spare.process)


_discarding: set[asyncio.Task[None]] = set()


def _discard_later(process: asyncio.subprocess.Process) -> None:
    task = asyncio.get_running_loop().create_task(_discard(process))
    _discarding.add(task)
    task.add_done_callback(_discarding.discard)


async def _discard(process: asyncio.subprocess.Process) -> None:
    """Kill a spare child (it holds no task: nothing is lost) and reap it."""
    if process.returncode is None:
        kill_tree(process.pid)
    with contextlib.suppress(ProcessLookupError):
        await process.wait()
    guardian.release(process.pid)
    for pipe in (process.stdout, process.stderr):  # read to their end so that they close now
        if pipe is not None:
            with contextlib.suppress(ValueError, OSError):
                while await pipe.read(65536):
                    pass


async def start_spare(
    spec: ChildSpec, *, command: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> None:
    """Start a spare child now for calls like ``spec``'s (same command, folder and environment)."""
    argv = list(command or child_command())
    _replace_spare(_spare_key(argv, env, spec), argv, env, spec)


async def spare_ready(timeout: float = 30.0) -> bool:
    """Wait until this loop's spare child (if one is starting or waiting) has loaded; whether one is ready."""
    loop = asyncio.get_running_loop()
    starting = _starting.get(loop)
    if starting is not None:
        with contextlib.suppress(asyncio.CancelledError):
            await starting
    spare = _spares.get(loop)
    if spare is None:
        return False
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(spare.ready.wait(), timeout)
    return spare.ready.is_set()


async def discard_spares() -> None:
    """Kill this loop's spare child, if any (a conversation's end; also before a measure of a cold start)."""
    loop = asyncio.get_running_loop()
    starting = _starting.pop(loop, None)
    if starting is not None and not starting.done():
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await starting
    spare = _spares.pop(loop, None)
    if spare is not None:
        if spare.watcher is not None:
            spare.watcher.cancel()
        await _discard(spare.process)
    pending = list(_discarding)
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


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
