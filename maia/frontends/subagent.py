"""The sub-agent process (§20.3): ``python -m maia --subagent``, driven by its parent over stdin/stdout.

The protocol pipes are moved off file descriptors 0 and 1 at start: stdin becomes /dev/null and stdout
goes to stderr, so nothing a library or a tool prints can corrupt the protocol. Losing the parent (end
of stdin) or an ``abort`` cancels the run: its tools' process groups are killed on the way out.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from maia.agent.loop import AgentSession, final_text, resume_turn, run_turn
from maia.app.summary import request_final_summary, retrying
from maia.core.contracts import Approval, AskAnswer, Message, ToolsProgress, ToolUseBlock
from maia.core.errors import MaiaError
from maia.i18n import _
from maia.subagents import protocol
from maia.subagents.protocol import ChildSpec, ProtocolError

if TYPE_CHECKING:
    from maia.app.retry import RetryPolicy
    from maia.provider.litellm import Poster
    from maia.subagents.relay import ParentRelay

T = TypeVar("T")


class ChannelClosed(Exception):
    """The parent is gone: its end of a pipe is closed."""


class Channel:
    """The child's end of the protocol: lines read by a thread, written directly."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._queue: asyncio.Queue[bytes | None] | None = None

    def start(self) -> None:
        """Start reading (call from the running event loop)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._queue = queue

        def read() -> None:
            def post(item: bytes | None) -> None:
                with contextlib.suppress(RuntimeError):  # the loop is already closed: the child is ending
                    loop.call_soon_threadsafe(queue.put_nowait, item)

            try:
                with os.fdopen(self._read_fd, "rb") as stream:
                    for line in stream:
                        post(line)
            except (OSError, ValueError):
                pass
            post(None)

        threading.Thread(target=read, name="maia-subagent-channel", daemon=True).start()

    async def receive(self) -> dict[str, Any] | None:
        """The next message from the parent; None when the pipe is closed."""
        assert self._queue is not None, "call start() first"
        while True:
            line = await self._queue.get()
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                return protocol.decode(line)
            except ProtocolError as error:
                print(f"maia sub-agent: ignored a line from the parent ({error})", file=sys.stderr)

    def send(self, message: dict[str, Any]) -> None:
        """Write one message; ChannelClosed when the parent is gone."""
        data = memoryview(protocol.encode(message))
        try:
            while data:
                written = os.write(self._write_fd, data)
                data = data[written:]
        except OSError as error:  # BrokenPipeError and friends
            raise ChannelClosed(str(error)) from None


class ChildUI:
    """Shows nothing; warnings go to the parent as logs, questions are asked through the parent."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.closed = False  # aborted or parent gone: every question is refused
        self.lost = False  # the parent is gone: nothing can be sent any more
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[bool]] = {}
        self.refusals: dict[int, str] = {}  # questions no person answered, and why
        self.always: dict[int, str] = {}  # questions answered "always", "always-session" or "stop" in the parent's box
        self.refusal: str | None = None  # why the last question was answered no, when no person did

    def send(self, message: dict[str, Any]) -> bool:
        """Send to the parent unless it is gone; False when it could not be sent."""
        if self.lost:
            return False
        try:
            self.channel.send(message)
        except ChannelClosed:
            self.lost = True
            return False
        return True

    def log(self, level: str, message: str) -> None:
        """A line for the parent's interface."""
        self.send(protocol.log(level, message))

    def info(self, text: str) -> None:
        """An INFO line for the parent's interface (a rule an "always" answer added…)."""
        self.log("info", text)

    def waiting(self, reason: str | None, until: str | None) -> None:
        """Tell the parent the sub-agent waits for the server until ``until`` (None: no longer)."""
        self.send(protocol.waiting(reason, until))

    def answer(self, request_id: Any, ok: bool, reason: str | None = None, always: str | None = None) -> None:
        """The parent's answer to a question (``reason``: why no person answered; ``always``: the user
        chose "always" or "always-session" in the relayed box)."""
        if isinstance(request_id, int) and reason:
            self.refusals[request_id] = reason
        if isinstance(request_id, int) and (
            (ok and always in protocol.ALWAYS_ANSWERS) or (not ok and always == "stop")
        ):
            self.always[request_id] = always
        future = self._pending.get(request_id) if isinstance(request_id, int) else None
        if future is not None and not future.done():
            future.set_result(ok)

    def refuse_all(self) -> None:
        """Abort or lost parent: every open and future question is answered no."""
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_result(False)

    async def confirm(self, message: str, doubt: str | None = None) -> bool:
        """Ask the parent's user; no when the run is being stopped."""
        return await self._relay(message, doubt, None) not in ("no", "stop")

    async def _relay(self, message: str, doubt: str | None, approval: Approval | None) -> AskAnswer:
        if self.closed:
            return "no"
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            if not self.send(protocol.confirm(request_id, message, doubt, approval)):
                return "no"
            ok = await future
            self.refusal = None if ok else self.refusals.pop(request_id, None)
            always = self.always.pop(request_id, None)
            if ok and always == "always":
                return "always"
            if ok and always == "always-session":
                return "always-session"
            if not ok and always == "stop":
                return "stop"
            return "yes" if ok else "no"
        finally:
            self._pending.pop(request_id, None)

    async def ask(self, message: str, approval: Approval | None = None) -> AskAnswer:
        """A tool call question, relayed with its box (command or diff, doubt, the rules "always" would add):
        yes, no, always, or stop (this sub-agent's iteration ends, as the parent's would); an ask out of doubt
        says so (the approval's reason), so that no one allows it blindly. The runner remembers an "always" as the
        parent's would be: the project's ``./.maia/settings.local.json``, or this sub-agent's run."""
        doubt = approval.reason if approval is not None else None
        answer = await self._relay(message, doubt, approval)
        if answer in protocol.ALWAYS_ANSWERS and (approval is None or not approval.rules):
            return "yes"  # nothing to remember: the parent's answer is a plain yes
        return answer

    def on_warning(self, message: str) -> None:
        """Warnings reach the parent's interface."""
        self.log("warn", message)

    def on_thinking(self, thinking: bool) -> None:
        """Nothing to show."""

    def on_text(self, text: str) -> None:
        """Nothing to show."""

    def on_text_end(self) -> None:
        """Nothing to show."""

    def on_reasoning(self, text: str) -> None:
        """Nothing to show."""

    def on_tool_call(self, name: str, summary: str) -> None:
        """The parent shows each call nested under its Agent call."""
        self.send(protocol.tool_event("call", name, summary))

    def on_tool_result(self, name: str, output: str, is_error: bool) -> None:
        """The parent hears how each call ended (its first line)."""
        self.send(protocol.tool_event("result", name, output, is_error))

    def on_subagent_tool(self, agent: str, phase: str, name: str, summary: str, is_error: bool) -> None:
        """Never called: a sub-agent launches no sub-agent (its Agent tool is taken away)."""

    def on_context_usage(self, tokens: int) -> None:
        """Nothing to show."""

    def on_tools_running(self, progress: ToolsProgress | None) -> None:
        """Nothing to show."""


@dataclass(slots=True)
class ChildSession:
    """The sub-agent's conversation, how to close it, the definition's own warnings, the last messages seen."""

    agent: AgentSession
    closer: Callable[[], Awaitable[None]]
    warnings: list[str] = field(default_factory=list)
    latest: list[Message] = field(default_factory=list)
    policy: RetryPolicy | None = None  # the user's waits (RateLimitBackoff, OutageRetrySeconds)

    async def aclose(self) -> None:
        """Release the provider (and whatever the conversation holds)."""
        await self.closer()

    def snapshot(self, session: AgentSession) -> int:
        """Keep the conversation as it grows: a cancelled turn rolls it back, a trace still wants it."""
        self.latest = list(session.messages)
        return 0

    def messages(self) -> list[Message]:
        """The fullest view of the conversation (after a rollback, the snapshot)."""
        current = self.agent.messages
        return list(current) if len(current) >= len(self.latest) else list(self.latest)


async def build_child_session(spec: ChildSpec, ui: ChildUI, poster: Poster | None = None) -> ChildSession:
    """The sub-agent's conversation, opened by the application layer (the one place the child builds it).

    Built-in tools, custom tools, skills and permission rules are reloaded from disk, then the
    definition applies: its tool and skill filters, its rules added to the inherited ones (a deny
    or ask is never lifted), MAIA.md unless ``omitMd``; no session file, no nesting (depth 1).
    """
    from maia.app.application import Application, AppOptions
    from maia.app.equipment import Equipment
    from maia.app.loadout import Loadout
    from maia.core.settings import load_settings
    from maia.subagents.prompt import build_subagent_prompt

    definition = spec.definition
    equipment = Equipment(definition, never=frozenset({"Agent"}))  # no nesting

    def prompt(loadout: Loadout, start_context: str | None) -> str:
        skills = equipment.prompt_skills(loadout)
        return build_subagent_prompt(
            definition, spec.launch, context=loadout.context_file, skills=skills, start_context=start_context
        )

    options = AppOptions(
        launch=spec.launch,
        home=spec.home,
        settings=load_settings(spec.home),
        model=spec.model,
        origin="subagent",
        save=False,
        allow=spec.extra_allow,
        deny=spec.extra_deny,
        max_iterations=definition.max_iterations,
        depth=1,
        tool_filter=equipment.keep_tool,
        skill_filter=equipment.keep_skill,
        extra_rules=equipment.rules,
        omit_context=definition.omit_md,
        system_prompt=prompt,
        sandbox_at_first_use=True,  # a task that runs no command never needs the policy (start-up cost)
        model_poster=poster,
    )
    app = await Application.open(options, ui)
    agent = app.agent
    warnings = [*equipment.warnings, *equipment.missing(app)]
    from maia.app.retry import RetryPolicy

    child = ChildSession(agent, app.aclose, warnings, policy=RetryPolicy.from_settings(app.settings))
    agent.count_context = child.snapshot
    return child


async def run_child_turn(child: ChildSession, task: str, ui: ChildUI) -> str:
    """Run the task within the effort's budget; the final summary (asked for when missing)."""
    session = child.agent

    async def turn(attempt: int) -> str:
        if attempt and session.can_resume:
            return await resume_turn(session, max_iterations=session.max_iterations)
        return await run_turn(session, task, max_iterations=session.max_iterations)

    result = await retrying(ui, turn, child.policy)
    summary = final_text(session).strip() if result == "done" else ""
    if not summary:
        summary = await request_final_summary(session, ui, policy=child.policy)
    return summary


def count_tool_calls(messages: list[Message]) -> int:
    """How many tools the sub-agent called."""
    return sum(1 for m in messages for b in m.content if isinstance(b, ToolUseBlock))


async def _work(spec: ChildSpec, ui: ChildUI, relay: ParentRelay | None = None) -> int:
    child: ChildSession | None = None

    def finish(ok: bool, summary: str = "", error: str | None = None) -> None:
        messages = child.messages() if child is not None else []
        ui.send(
            protocol.done(
                ok=ok,
                summary=summary,
                error=error,
                messages=messages if spec.definition.trace or spec.transcript else (),
                tool_calls=count_tool_calls(messages),
                model=spec.model,
            )
        )

    try:
        child = await build_child_session(spec, ui, relay.poster() if relay is not None else None)
        for warning in child.warnings:
            ui.log("warn", warning)
        summary = await run_child_turn(child, spec.task, ui)
        if not summary:
            finish(False, error=_("The sub-agent finished without writing a final answer."))
            return 1
        finish(True, summary)
        return 0
    except asyncio.CancelledError:
        finish(False, error=_("Interrupted: the sub-agent was stopped before the end of its task."))
        return 130
    except MaiaError as error:
        finish(False, error=f"{error.message}\n{error.hint}" if error.hint else error.message)
        return 1
    except Exception as error:  # a bug: the parent gets the message, stderr the traceback
        traceback.print_exc()
        finish(False, error=_("Internal error in the sub-agent: {error}").format(error=error or type(error).__name__))
        return 1
    finally:
        if child is not None:
            with contextlib.suppress(Exception):
                await child.aclose()


async def _listen(channel: Channel, ui: ChildUI, work: asyncio.Task[int], relay: ParentRelay | None = None) -> None:
    while True:
        message = await channel.receive()
        if message is None:  # the parent is gone: stop everything
            ui.lost = True
            ui.refuse_all()
            if relay is not None:
                relay.lose()
            work.cancel()
            return
        kind = message.get("type")
        if kind in ("http-head", "http-data", "http-end", "http-error"):
            if relay is not None:
                relay.dispatch(message)
        elif kind == "confirm-result":
            reason, always = message.get("reason"), message.get("answer")
            ui.answer(
                message.get("id"),
                message.get("ok") is True,
                reason if isinstance(reason, str) else None,
                always if isinstance(always, str) else None,
            )
        elif kind == "abort":
            ui.refuse_all()
            work.cancel()
            return


def warm_up() -> None:
    """Load what every run needs before its first request, so that a spare child waits with it loaded.

    A child started for a call would load the same modules a moment later (the application, the built-in
    tools it equips); a spare (see ``launcher``) loads them before its task comes. Code only: nothing read
    here depends on the task, the settings or the folder. Not httpx: the parent makes the model requests
    (``maia.subagents.relay``); a tool that connects loads it when it does.
    """
    import concurrent.futures.thread  # noqa: F401  (asyncio's executor: to_thread)
    import encodings.utf_8_sig  # noqa: F401  (the codec the settings are read with)

    import maia.app.application
    import maia.app.equipment
    import maia.app.retry
    import maia.app.waits
    import maia.core.trust
    import maia.mcp.config
    import maia.subagents.prompt
    import maia.subagents.relay  # noqa: F401
    from maia.core.registry import BUILTIN, tool_class

    for name in BUILTIN.keys() - {"Agent", "RequestIntervention"}:  # a child has neither (no nesting)
        with contextlib.suppress(Exception):  # (the run says what is wrong with a tool that cannot load)
            tool_class(name)


async def serve(channel: Channel) -> int:
    """Load, say ``ready``, wait for ``start``, run the task, send ``done``; the exit status."""
    channel.start()
    with contextlib.suppress(Exception):  # a broken install: the run says so in its done message, as ever
        warm_up()
    gc.freeze()  # the code just loaded (gc off meanwhile: maia.__main__) is never scanned by a collection
    gc.enable()
    try:
        channel.send(protocol.ready())
    except ChannelClosed:
        return 1
    first = await channel.receive()
    if first is None:
        return 1
    ui = ChildUI(channel)
    if first.get("type") == "start":
        # before anything is done with the task: a parent that hears nothing after handing it to a spare
        # child may give it to another (the spare was dead); one that hears this never does
        ui.send(protocol.started())
    else:
        ui.send(protocol.done(ok=False, error=f"expected a start message, got {first.get('type')!r}"))
        return 2
    try:
        spec = ChildSpec.from_json(first.get("spec"))
    except ProtocolError as error:
        ui.send(protocol.done(ok=False, error=str(error)))
        return 2
    relay: ParentRelay | None = None
    if first.get("relay") is True:  # the parent makes the model requests
        from maia.subagents.relay import ParentRelay

        relay = ParentRelay(ui.send)
    work = asyncio.create_task(_work(spec, ui, relay))
    listener = asyncio.create_task(_listen(channel, ui, work, relay))
    try:
        return await work
    finally:
        listener.cancel()


def main() -> int:
    """Entry point of ``python -m maia --subagent``."""
    from maia.process.sandbox.selfguard import mark_non_dumpable

    mark_non_dumpable()  # the child holds the key too
    if os.isatty(0):
        print("This is the process MAIA starts for a sub-agent; run `maia` instead.", file=sys.stderr)
        return 2
    read_fd, write_fd = os.dup(0), os.dup(1)  # not inherited by the tools' processes (PEP 446)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # stray prints go to stderr, never into the protocol
    try:
        return asyncio.run(serve(Channel(read_fd, write_fd)))
    except KeyboardInterrupt:
        return 130
