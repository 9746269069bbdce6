"""Running a workflow (§23): one more front end of the application layer, without a terminal.

The worker opens the parent's conversation through :class:`~maia.app.application.Application` (its
tools, skills, rules and sub-agents narrowed by the parent's AGENT.md, plus ``RequestIntervention``),
sends the task with the shared retry policy, and keeps the registry up to date: states, requests,
events, traces, the result. It never raises for a workflow's failure: the outcome says it, and so
does the registry. ``maia stop`` and the time limit cancel the turn (the sub-agents are stopped by
their launcher); a rate limit puts the workflow in ``waiting`` until the time the server gave.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maia.core.errors import ExitStatus, MaiaError, NotFoundError, UsageError
from maia.core.storage import describe_storage_error, disk_full, storage_error
from maia.i18n import _
from maia.workflows.asking import Asker, Log
from maia.workflows.book import AgentBook
from maia.workflows.duration import format_duration
from maia.workflows.orchestrator import (
    DEFAULT_PERMISSION_MODE,
    AgentFileError,
    Orchestrator,
    PermissionMode,
    load_orchestrator,
)
from maia.workflows.registry import Workflow, WorkflowFileError, now_iso, process_identity
from maia.workflows.ui import WorkflowLog, WorkflowUI

if TYPE_CHECKING:
    from maia.app.application import Application
    from maia.app.catalog import ModelCatalog
    from maia.app.retry import Wait
    from maia.core.settings import Settings


LOCK_ATTEMPTS = 20  # tries to take a workflow's run lock, 0.1 s apart


@dataclass(slots=True)
class RunOptions:
    """What ``maia run`` was asked (the command line wins over the AGENT.md)."""

    home: Path
    launch: Path
    agent_file: Path
    task: str | None = None
    model: str | None = None
    timeout: float | None = None
    permission_mode: PermissionMode | None = None
    detached: bool = False
    resume: bool = False  # carry on from the saved conversation (maia resume)

    def to_json(self) -> dict[str, Any]:
        """Kept in the record: a detached worker reads them back."""
        return {
            "model": self.model,
            "timeout": self.timeout,
            "permissionMode": self.permission_mode,
            "task": self.task,
        }


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a workflow ended."""

    workflow: str
    state: str  # done | error
    exit_code: int
    result: str | None = None
    error: str | None = None


def new_record(options: RunOptions) -> dict[str, Any]:
    """The record ``maia run`` creates before anything can fail."""
    path = options.agent_file
    guess = path.name if path.is_dir() else path.parent.name
    return {
        "agent": guess,
        "agentFile": str(path),
        "task": options.task,
        "model": None,
        "cwd": None,
        "permissionMode": options.permission_mode,
        "timeout": options.timeout,
        "detached": options.detached,
        "pid": None,
        "processStart": None,
        "state": "pending",
        "started": now_iso(),
        "ended": None,
        "exitCode": None,
        "error": None,
        "waiting": None,
        "options": options.to_json(),
        "launch": str(options.launch),
    }


def options_from_record(record: dict[str, Any], home: Path, launch: Path) -> RunOptions:
    """A detached worker's options, read back from the record ``maia run --detach`` wrote."""
    saved = record.get("options") if isinstance(record.get("options"), dict) else {}
    assert isinstance(saved, dict)
    timeout = saved.get("timeout")
    mode = saved.get("permissionMode")
    return RunOptions(
        home=home,
        launch=launch,
        agent_file=Path(str(record.get("agentFile") or "")),
        task=str(saved["task"]) if isinstance(saved.get("task"), str) else None,
        model=str(saved["model"]) if isinstance(saved.get("model"), str) else None,
        timeout=float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None,
        permission_mode=mode if mode in ("wait", "deny", "allow") else None,
        detached=True,
        resume=record.get("resuming") is True,
    )


def described(error: MaiaError) -> str:
    """An error's message and, on the next line, its hint."""
    return f"{error.message}\n{error.hint}" if error.hint else error.message


def end_record(workflow: Workflow, state: str, exit_code: int, error: str | None) -> None:
    """Write how the workflow ended (its state becomes final)."""

    def change(data: dict[str, Any]) -> None:
        data.update(state=state, ended=now_iso(), exitCode=exit_code, error=error, waiting=None)

    workflow.update(change)
    workflow.append_event("ended", state=state, exitCode=exit_code, error=error)


def check_agent_file(workflow: Workflow, options: RunOptions) -> Orchestrator:
    """Load the parent before anything runs; a broken file ends the workflow in error (and is raised)."""
    try:
        return load_orchestrator(options.agent_file, options.home, options.launch)
    except AgentFileError as error:
        WorkflowLog(workflow.log_path, None, workflow.append_log)("error", error.message)
        end_record(workflow, "error", int(error.exit_status), error.message)
        raise


async def resolve_workflow_model(
    cli: str | None, agent_model: str | None, settings: Settings, catalog: ModelCatalog
) -> tuple[str, list[str]]:
    """``--model`` > the agent's ``model`` > ``DefaultModel`` > LiteLLM's first model; a fragment picks the
    first model containing it. The model and warnings."""
    from maia.core.settings import parse_model_spec
    from maia.subagents.models import pick_model

    candidates = [(cli, "--model"), (agent_model, _("the agent's model")), (settings.default_model, "DefaultModel")]
    wanted, source = next(((parse_model_spec(v), s) for v, s in candidates if v and v.strip()), (None, ""))
    try:
        names = await catalog.names()
    except MaiaError as error:
        if wanted is not None:
            return wanted, [
                _("The LiteLLM model list could not be loaded ({error}); {model} is used as written.").format(
                    error=error.message, model=wanted
                )
            ]
        raise MaiaError(
            _("No model for the workflow: the LiteLLM model list could not be loaded ({error}).").format(
                error=error.message
            ),
            hint=_("Give one with --model, model: in the AGENT.md, or DefaultModel in settings.json."),
        ) from None
    if wanted is None:
        if not names:
            raise UsageError(_("The LiteLLM server offers no model."))
        return names[0], []
    found = pick_model(wanted, names)
    if found is None:
        raise NotFoundError(
            _("No LiteLLM model matches {model!r} ({source}).").format(model=wanted, source=source),
            hint=_("maia models lists them."),
        )
    return found, []


class Worker:
    """One workflow's run."""

    def __init__(
        self, workflow: Workflow, options: RunOptions, log: WorkflowLog, before_end: Callable[[], None] | None = None
    ) -> None:
        self.before_end = before_end  # runs before the end is recorded (a queue's worker saves its patch)
        self.workflow = workflow
        self.options = options
        self.log = log
        self.book: AgentBook | None = None
        self.reason: str | None = None  # why the turn was cancelled: stopped, timeout, interrupted
        self.timeout: float | None = None
        self.began = 0.0  # the event loop's clock when the run began: the time limit counts from there
        self.app: Application | None = None
        self._saved_marker: tuple[int, int] | None = None  # the parent's conversation as last saved

    # --- the record -------------------------------------------------------------------------

    def _save(self, write: Callable[[], None]) -> OSError | None:
        """Write; on a full disk give the workflow's reserve back and try once more. The storage error
        (full, read-only, not writable) when it still fails; any other error is raised."""
        try:
            write()
            return None
        except OSError as error:
            if not storage_error(error):
                raise
            if not (disk_full(error) and self.workflow.free_reserve()):
                return error
        try:
            write()
            return None
        except OSError as again:
            if not storage_error(again):
                raise
            return again

    def _end(self, state: str, code: int, error: str | None = None, result: str | None = None) -> Outcome:
        if self.book is not None:
            with contextlib.suppress(OSError, MaiaError):
                self.book.close()
        if self.before_end is not None:
            try:
                self.before_end()
            except Exception as failed:  # never keeps the end from being recorded
                self.log("error", _("Internal error: {error}").format(error=failed))
        try:
            failure = self._save(lambda: end_record(self.workflow, state, code, error))
        except (OSError, MaiaError) as broken:
            failure = None
            self.log("error", _("The workflow's record could not be written: {error}").format(error=broken))
        if failure is not None:
            self.log(
                "error",
                _("The workflow's record could not be written: {error}").format(error=describe_storage_error(failure)),
            )
        if state == "done":
            self.log("done", _("Workflow {id} done.").format(id=self.workflow.id))
        else:
            self.log("error", _("Workflow {id} ended in error: {error}").format(id=self.workflow.id, error=error))
        return Outcome(self.workflow.id, state, code, result, error)

    def _start_record(self, orchestrator: Orchestrator, model: str, mode: PermissionMode, task: str) -> None:
        def change(data: dict[str, Any]) -> None:
            data.update(
                state="running",
                agent=orchestrator.name,
                agentFile=str(orchestrator.definition.path),
                model=model,
                cwd=str(orchestrator.layout.launch),
                permissionMode=mode,
                timeout=self.timeout,
                task=task,
                resuming=False,
            )

        self.workflow.update(change)
        self.workflow.append_event("started", agent=orchestrator.name, model=model, task=task)

    def _claim(self) -> None:
        """This process runs the workflow: its pid (and start time) tell the others whether it still lives."""
        pid = os.getpid()
        identity = process_identity(pid)
        with contextlib.suppress(WorkflowFileError, OSError):
            record = self.workflow.read()
            if record.get("pid") == pid and record.get("processStart") == identity:
                return  # `maia run -d` recorded this process when it started it: no second write before the request

        def change(data: dict[str, Any]) -> None:
            data.update(pid=pid, processStart=identity)

        self.workflow.update(change)

    # --- the run ----------------------------------------------------------------------------

    async def run(self, orchestrator: Orchestrator | None = None) -> Outcome:
        """The whole workflow; a signal that cancels it ends it as interrupted."""
        try:
            return await self._run(orchestrator)
        except asyncio.CancelledError:
            return self._end("error", int(ExitStatus.INTERRUPTED), _("Interrupted by a signal."))
        except MaiaError as error:
            return self._end("error", int(error.exit_status), described(error))
        except OSError as error:
            if not storage_error(error):
                self.log("error", traceback.format_exc().rstrip())
                return self._end("error", int(ExitStatus.ERROR), _("Internal error: {error}").format(error=error))
            return self._end("error", int(ExitStatus.ERROR), describe_storage_error(error))
        except Exception as error:  # a bug: the registry says so, run.log has the traceback
            self.log("error", traceback.format_exc().rstrip())
            return self._end("error", int(ExitStatus.ERROR), _("Internal error: {error}").format(error=error))

    async def _run(self, orchestrator: Orchestrator | None) -> Outcome:
        from maia.app.catalog import ModelCatalog
        from maia.core.settings import load_settings
        from maia.subagents.tool import DEFAULT_AGENT_TASK

        self.began = asyncio.get_running_loop().time()
        self._claim()
        if self.workflow.stop_requested():
            return self._end("error", int(ExitStatus.INTERRUPTED), _("Stopped by maia stop before it started."))
        try:
            orchestrator = orchestrator or load_orchestrator(
                self.options.agent_file, self.options.home, self.options.launch
            )
        except AgentFileError as error:
            return self._end("error", int(error.exit_status), described(error))
        for warning in orchestrator.warnings:
            self.log("warn", warning)
        settings = load_settings(self.options.home)
        for warning in settings.warnings:
            self.log("warn", warning)
        mode = self.options.permission_mode or orchestrator.permission_mode or DEFAULT_PERMISSION_MODE
        self.timeout = self.options.timeout or orchestrator.timeout
        catalog = ModelCatalog(settings)
        try:
            model, warnings = await resolve_workflow_model(
                self.options.model, orchestrator.definition.model, settings, catalog
            )
        except MaiaError as error:
            return self._end("error", int(error.exit_status), described(error))
        for warning in warnings:
            self.log("warn", warning)
        task = (self.options.task or "").strip() or DEFAULT_AGENT_TASK
        self._start_record(orchestrator, model, mode, task)
        self.book = AgentBook(orchestrator.mentioned, self.workflow.write_agents)
        if self.options.resume:
            self.book.carry_over(self._previous_agents())
        self.book.save()
        self.log(
            "info",
            _("Workflow {id}: {agent} with {model} in {folder} (permissions: {mode}{limit}).").format(
                id=self.workflow.id,
                agent=orchestrator.name,
                model=model,
                folder=orchestrator.layout.launch,
                mode=mode,
                limit=_(", time limit {limit}").format(limit=format_duration(self.timeout)) if self.timeout else "",
            ),
        )
        asker = Asker(self.workflow, mode, self.log, self.book.wait)
        ui = WorkflowUI(self.workflow, self.book, asker, self.log, orchestrator.name)
        app = await self._open(orchestrator, settings, model, mode, catalog, ui)
        self.app = app
        try:
            return await self._converse(app, ui, self._restore(app, task))
        finally:
            self._checkpoint()
            self._save_parent_trace(app, orchestrator, model)
            await app.aclose()

    async def _open(
        self,
        orchestrator: Orchestrator,
        settings: Settings,
        model: str,
        mode: PermissionMode,
        catalog: ModelCatalog,
        ui: WorkflowUI,
    ) -> Application:
        from maia.workflows.equip import open_parent

        app = await open_parent(orchestrator, self.options.home, settings, model, mode, catalog, ui)
        # the workflow's UI shows no context bar: counting for it would build the tokenizer before the first
        # request (compaction still counts when it must: Conversation checks a bound first)
        app.agent.count_context = None
        for warning in app.report.warnings:
            self.log("warn", warning)
        with contextlib.suppress(MaiaError):
            await app.context_size()
        return app

    def _previous_agents(self) -> list[dict[str, Any]]:
        with contextlib.suppress(WorkflowFileError, OSError):
            return self.workflow.read_agents()
        return []

    def _restore(self, app: Application, task: str) -> str:
        """On a resume, put the saved conversation back: the request to send is then the resume note."""
        from maia.workflows.runstate import RESUME_REQUEST, continue_from, load_parent

        if not self.options.resume:
            return task
        messages = continue_from(load_parent(self.workflow))
        if not messages:
            return task
        app.agent.messages[:] = messages
        app.agent.merge_next = messages[-1].role == "user"  # the note joins the last user message
        self._saved_marker = (len(messages), id(messages[-1]))
        cause = str(self.workflow.record.get("interruption") or "")
        self.log(
            "info",
            _("Resuming the workflow from its saved conversation ({count} messages).").format(count=len(messages)),
        )
        return RESUME_REQUEST.format(cause=cause.splitlines()[0] if cause else "its process ended")

    def _checkpoint(self) -> None:
        """Save the parent's conversation when it changed (what ``maia resume`` carries on from)."""
        from maia.workflows.runstate import save_parent

        app = self.app
        if app is None or app._conversation is None:
            return
        messages = app.agent.messages
        marker = (len(messages), id(messages[-1])) if messages else None
        if marker is None or marker == self._saved_marker:
            return
        try:
            save_parent(self.workflow, list(messages))
        except OSError as error:
            if not storage_error(error):
                raise
            return  # a full disk: tried again at the next change
        self._saved_marker = marker

    async def _converse(self, app: Application, ui: WorkflowUI, task: str) -> Outcome:
        turn = asyncio.create_task(self._turn(app, ui, task))
        try:
            self.reason = await self._watch(turn)
        except asyncio.CancelledError:
            self.reason = "interrupted"
        if self.reason is not None:
            turn.cancel()
        try:
            text = await turn
        except asyncio.CancelledError:
            return self._cancelled()
        except MaiaError as error:
            return self._end("error", int(error.exit_status), described(error))
        except OSError as error:
            if not storage_error(error):
                self.log("error", traceback.format_exc().rstrip())
                return self._end("error", int(ExitStatus.ERROR), _("Internal error: {error}").format(error=error))
            return self._end("error", int(ExitStatus.ERROR), describe_storage_error(error))
        except Exception as error:  # a bug: the registry says so, run.log has the traceback
            self.log("error", traceback.format_exc().rstrip())
            return self._end("error", int(ExitStatus.ERROR), _("Internal error: {error}").format(error=error))
        failure = self._save(lambda: self.workflow.write_result(text))
        if failure is not None:  # the answer is not lost: maia run prints it (run.log for a detached one)
            return self._end(
                "error",
                int(ExitStatus.ERROR),
                _("The final answer could not be saved ({error}); it was printed on the standard output.").format(
                    error=describe_storage_error(failure)
                ),
                result=text,
            )
        return self._end("done", int(ExitStatus.OK), result=text)

    def _cancelled(self) -> Outcome:
        if self.reason == "stopped":
            return self._end("error", int(ExitStatus.INTERRUPTED), _("Stopped by maia stop."))
        if self.reason == "timeout":
            limit = format_duration(self.timeout or 0.0)
            return self._end(
                "error",
                int(ExitStatus.ERROR),
                _("Stopped: the workflow ran longer than its time limit ({limit}).").format(limit=limit),
            )
        return self._end("error", int(ExitStatus.INTERRUPTED), _("Interrupted by a signal."))

    async def _watch(self, turn: asyncio.Task[str]) -> str | None:
        """Until the turn ends: look for ``stop`` every second, and end at the time limit."""
        loop = asyncio.get_running_loop()
        deadline = self.began + self.timeout if self.timeout else None
        poll = 1.0
        while not turn.done():
            if self.workflow.stop_requested():
                self.log("warn", _("Stop requested (maia stop): stopping the turn and the sub-agents."))
                return "stopped"
            wait = poll
            if deadline is not None:
                left = deadline - loop.time()
                if left <= 0:
                    self.log("warn", _("Time limit reached: stopping the turn and the sub-agents."))
                    return "timeout"
                wait = min(poll, left)
            await asyncio.wait({turn}, timeout=wait)
            self._checkpoint()
        return None

    async def _turn(self, app: Application, ui: WorkflowUI, task: str) -> str:
        from maia.agent.loop import final_text
        from maia.app.retry import RetryPolicy
        from maia.app.summary import request_final_summary
        from maia.workflows.orchestrator import FINAL_RESULT_REQUEST

        result = await app.send(task, on_wait=self._on_wait)
        text = final_text(app.agent).strip() if result == "done" else ""
        if result == "max_iterations":
            self.log("warn", _("The parent agent used all its steps: asking it for its result."))
        if not text:
            policy = RetryPolicy.from_settings(app.settings)
            text = (await request_final_summary(app.agent, ui, FINAL_RESULT_REQUEST, policy)).strip()
        if not text:
            raise MaiaError(_("The workflow ended without a result: the parent agent wrote no final answer."))
        return text

    async def _on_wait(self, wait: Wait) -> bool:
        """A limit, a failing server or an outage: ``waiting`` until the time given (or MAIA's backoff), then
        carry on."""
        from maia.app.waits import wait_line

        until = wait.until.astimezone().isoformat(timespec="seconds")
        waiting = {"reason": wait.reason, "until": until, "attempt": wait.attempt, "known": wait.known}
        self.workflow.update(lambda data: data.update(waiting=waiting))
        self.workflow.append_event("waiting", **waiting, error=wait.error.message)
        self.log("wait", wait_line(wait))
        try:
            await asyncio.sleep(wait.delay)  # a stop or the time limit cancels the turn, and this sleep
        finally:
            with contextlib.suppress(OSError, MaiaError):
                self.workflow.update(lambda data: data.update(waiting=None))
        self.workflow.append_event("resumed")
        self.log("info", _("Resuming."))
        return True

    def _save_parent_trace(self, app: Application, orchestrator: Orchestrator, model: str) -> None:
        from maia.sessions.codec import SavedSession

        if app._conversation is None or not app.agent.messages:
            return
        session = SavedSession(
            name=f"{self.workflow.id}-{orchestrator.name}",
            model=model,
            launch=str(orchestrator.layout.launch),
            messages=list(app.agent.messages),
            agent=orchestrator.name,
            origin="workflow",
        )
        with contextlib.suppress(OSError):
            self.workflow.write_trace(orchestrator.name, session.to_json())


async def run_workflow(
    workflow: Workflow, options: RunOptions, log: Log | None = None, before_end: Callable[[], None] | None = None
) -> Outcome:
    """Run a created workflow to its end in this process (SIGTERM, SIGQUIT and, unless detached, SIGHUP
    interrupt it); the outcome is also in the registry."""
    from maia.core.signals import TERMINATING, forget_signal, on_signal

    writer = WorkflowLog(workflow.log_path, log, workflow.append_log)
    task = asyncio.current_task()
    wanted = [s for s in TERMINATING if not (options.detached and s == getattr(signal, "SIGHUP", None))]
    installed = [s for s in wanted if task is not None and on_signal(s, task.cancel)]
    try:
        lock = None
        for _attempt in range(LOCK_ATTEMPTS):  # a reader probing the lock holds it for an instant only
            lock = workflow.try_run_lock()
            if lock is not None:
                break
            await asyncio.sleep(0.1)
        try:
            # under the lock, the record must still wait for a worker: one that ran (and ended) while this
            # process was starting is never run a second time
            if lock is None or workflow.read().get("state") != "pending":
                message = (
                    _("The workflow {id} is already running in another process.")
                    if lock is None
                    else _("The workflow {id} has already started.")
                ).format(id=workflow.id)
                writer("error", message)
                return Outcome(workflow.id, "error", int(ExitStatus.ERROR), error=message)
            return await Worker(workflow, options, writer, before_end).run()
        finally:
            if lock is not None:
                lock()  # releases it
    except (OSError, WorkflowFileError) as error:  # the registry itself failed: say it where we can
        writer("error", str(error))
        return Outcome(workflow.id, "error", int(ExitStatus.ERROR), error=str(error))
    finally:
        for sig in installed:
            forget_signal(sig)
