"""``maia run``: start an autonomous workflow, in this terminal or detached (§23); ``maia resume``: carry one on."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from maia.i18n import _

from . import CONTEXT_SETTINGS
from .complete import complete_workflows
from .setup import environment, warn
from .workflow_common import find, registry, styler, warn_all

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    Echo = Callable[[str, str], None]


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("agent_file", type=click.Path(path_type=Path))
@click.argument("task", required=False)
@click.option("--model", "-m", metavar="NAME", help=_("Model (exact name or part of one); default: the agent's."))
@click.option("--detach", "-d", is_flag=True, help=_("Print the workflow's id and go on in the background."))
@click.option("--quiet", "-q", is_flag=True, help=_("Print only the result (and errors)."))
@click.option("--timeout", metavar="DURATION", help=_("Time limit: 90s, 30m, 2h, 1d (a bare number is minutes)."))
@click.option(
    "--permission-mode",
    type=click.Choice(["wait", "deny", "allow"]),
    help=_("Questions: wait for maia approve (default), or refuse / allow them at once."),
)
@click.option(
    "--queue",
    metavar="URL",
    help=_("Put the workflow on this Redis queue for maia worker (default: MAIA_QUEUE, Workflows.queue)."),
)
@click.option(
    "--git",
    "git",
    metavar="URL[@REF]",
    help=_("On a queue: the worker works in a clone of this repository (maia result ID --patch)."),
)
@click.option(
    "--branch",
    metavar="NAME",
    help=_("With --git: the changes become one commit on this branch, given as a patch (nothing is pushed)."),
)
@click.option("--workflow-id", hidden=True)
def run(
    agent_file: Path,
    task: str | None,
    model: str | None,
    detach: bool,
    quiet: bool,
    timeout: str | None,
    permission_mode: str | None,
    queue: str | None,
    git: str | None,
    branch: str | None,
    workflow_id: str | None,
) -> None:
    """Run the workflow whose parent agent is AGENT_FILE (an AGENT.md, or its folder) on TASK.

    The parent orchestrates the sub-agents in the folders beside its own (and ~/.maia/agents).
    Besides the usual AGENT.md keys it may set timeout: (30m, 2h…) and permissionMode: (wait,
    deny, allow). With wait, a question is written in the registry and the workflow waits for
    maia approve (or maia reply for the parent's questions). Follow it with maia workflow ID
    --watch and maia logs ID -f; stop it with maia stop ID. TASK - reads the task from stdin.

    With a queue (--queue URL, MAIA_QUEUE or Workflows.queue in settings.json) the workflow is put
    on the queue and its id printed at once: a maia worker runs it, in the launch folder's path on
    its machine or in a clone of --git URL[@REF].

    Exit codes: 0 done, 1 error or time limit, 2 bad usage (file, model, option), 130 stopped.
    """
    import re
    import sys

    from maia.core.errors import UsageError
    from maia.workflows.duration import DurationError, parse_duration

    if workflow_id:
        _run_worker(workflow_id)
        return
    seconds = None
    if timeout is not None:
        try:
            seconds = parse_duration(timeout)
        except DurationError as error:
            raise UsageError(_("--timeout: {error}").format(error=error)) from None
    if task == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError(_("TASK is -: pipe the task on stdin."))
        task = sys.stdin.read()
    from .workflow_common import queue_url

    url = queue_url(queue)
    if url is None and git:
        raise UsageError(_("--git needs a queue: give --queue URL (or set MAIA_QUEUE)."))
    if branch is not None and not git:
        raise UsageError(_("--branch names the commit of a --git workflow: give --git URL too."))
    if branch is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}", branch):
        raise UsageError(_("--branch: {name!r} is not a branch name (letters, digits, . _ / -).").format(name=branch))
    _start(agent_file, task, model, detach, quiet, seconds, permission_mode, url, git, branch)


def _start(
    agent_file: Path,
    task: str | None,
    model: str | None,
    detach: bool,
    quiet: bool,
    timeout: float | None,
    permission_mode: str | None,
    queue: str | None = None,
    git: str | None = None,
    branch: str | None = None,
) -> None:

    from maia.workflows.orchestrator import AgentFileError
    from maia.workflows.orchestrator import agent_file as find_agent_file
    from maia.workflows.worker import RunOptions, check_agent_file, new_record, run_workflow

    env = environment()
    path = agent_file.expanduser()
    # a path that names no AGENT.md is a usage error: nothing is recorded (a file that is there but
    # broken is, as a failed workflow, with its log)
    find_agent_file(path if path.is_absolute() else env.launch / path)
    options = RunOptions(
        home=env.home,
        launch=env.launch,
        agent_file=path if path.is_absolute() else env.launch / path,
        task=task,
        model=model,
        timeout=timeout,
        permission_mode=permission_mode,  # type: ignore[arg-type]  # click.Choice
        detached=detach or queue is not None,
    )
    if queue is not None:
        _enqueue(options, queue, git, branch, quiet)
        return
    workflow = registry().create(new_record(options))
    try:
        orchestrator = check_agent_file(workflow, options)
    except AgentFileError:
        warn(_("The workflow {id} is recorded as failed.").format(id=workflow.id))
        raise
    if detach:
        from maia.workflows.detach import spawn_worker

        warn_all(orchestrator.warnings)  # the worker logs them too, in run.log
        spawn_worker(workflow, options)
        _detached(workflow.id, quiet)
        return
    _in_foreground(workflow.id, quiet, lambda echo: run_workflow(workflow, options, echo))


def _enqueue(options: object, url: str, git: str | None, branch: str | None, quiet: bool) -> None:
    """``maia run --queue``: record the workflow and its job in the queue's registry, print its id."""
    from maia.workflows.orchestrator import AgentFileError
    from maia.workflows.queue import connect, enqueue, job_for
    from maia.workflows.worker import RunOptions, check_agent_file, new_record

    assert isinstance(options, RunOptions)
    context = connect(url, options.home)
    workflow = context.registry.create(new_record(options))
    try:
        orchestrator = check_agent_file(workflow, options)
    except AgentFileError:
        warn(_("The workflow {id} is recorded as failed.").format(id=workflow.id))
        raise
    warn_all(orchestrator.warnings)
    workflow.write_job(job_for(orchestrator, options, orchestrator.layout.launch, git, branch))
    enqueue(context, workflow)
    click.echo(workflow.id)
    if not quiet:
        click.echo(
            _("Queued: maia worker runs it. Follow it: maia workflow {id} --watch · maia logs {id} -f").format(
                id=workflow.id
            ),
            err=True,
        )


def _run_worker(workflow_id: str) -> None:
    """The detached process: run the workflow the record describes, immune to the terminal's hangup."""
    import asyncio
    import signal

    from maia.core.errors import NotFoundError, UsageError
    from maia.workflows.worker import options_from_record, run_workflow

    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    env = environment()
    workflow = registry().get(workflow_id)
    if workflow is None:
        raise NotFoundError(_("No workflow {id}.").format(id=workflow_id))
    record = workflow.read()
    if record.get("state") != "pending":
        raise UsageError(_("The workflow {id} has already started.").format(id=workflow_id))
    options = options_from_record(record, env.home, env.launch)
    outcome = asyncio.run(run_workflow(workflow, options, None))
    _finish(outcome.result, None, outcome.exit_code)  # the error is in run.log already


def _finish(result: str | None, error: str | None, code: int) -> None:
    import sys

    from maia.workflows.text import inert

    if result is not None:
        click.echo(inert(result.rstrip("\n")) if sys.stdout.isatty() else result.rstrip("\n"))
    if error:
        click.echo(_("Error: {message}").format(message=error), err=True)
    if code:
        raise SystemExit(code)


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("ref", shell_complete=complete_workflows)
@click.option("--detach", "-d", is_flag=True, help=_("Print the workflow's id and go on in the background."))
@click.option("--quiet", "-q", is_flag=True, help=_("Print only the result (and errors)."))
def resume(ref: str, detach: bool, quiet: bool) -> None:
    """Carry on a workflow that ended in error (its process was killed, the machine restarted, the proxy
    was down, or it was stopped) from its saved conversation and sub-agents' states.

    The parent is told it was interrupted; a call that was running may have partly run. A workflow
    never runs twice at once: one still running is refused. maia workflows marks the workflows that
    can be resumed.

    Exit codes: as maia run (0 done, 1 error, 2 not resumable or bad usage, 130 stopped).
    """

    from maia.workflows.resume import resume_detached, resume_here

    from .workflow_common import queue_url

    env = environment()
    url = queue_url()
    if url is not None:
        from maia.workflows.queue import connect, enqueue
        from maia.workflows.redis_store import RedisWorkflow
        from maia.workflows.resume import prepare_resume

        context = connect(url, env.home)
        queued = context.registry.find(ref)
        assert isinstance(queued, RedisWorkflow)
        prepare_resume(queued)
        enqueue(context, queued)
        click.echo(queued.id)
        if not quiet:
            click.echo(_("Queued again: a maia worker carries it on."), err=True)
        return
    target = find(ref)
    if detach:
        resume_detached(target, env.home, env.launch)
        _detached(target.id, quiet)
        return
    _in_foreground(target.id, quiet, lambda echo: resume_here(target, env.home, env.launch, echo))


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--queue", metavar="URL", help=_("The Redis queue (default: MAIA_QUEUE, Workflows.queue)."))
@click.option("--concurrency", "-c", type=click.IntRange(1, 64), default=1, help=_("Workflows run at once."))
@click.option("--burst", is_flag=True, help=_("Stop when the queue is empty."))
@click.option("--name", metavar="NAME", help=_("The worker's name (default: host name and process id)."))
@click.option("--trust-jobs", is_flag=True, help=_("Trust the permission rules the jobs' agents bring."))
def worker(queue: str | None, concurrency: int, burst: bool, name: str | None, trust_jobs: bool) -> None:
    """Run the workflows put on the queue by maia run --queue, with this machine's settings, trust
    and sandbox.

    A job brings its agents' AGENT.md files, its task and where to work, never settings or keys.
    A worker killed mid-job leaves its workflow in error (worker lost) once its heartbeat expires;
    maia resume ID queues it again. SIGTERM stops the worker: its workflow ends in error, resumable.
    """
    import os
    import signal
    import socket
    import subprocess
    import sys

    from maia.core.errors import UsageError
    from maia.workflows.queue import WorkerSetup, require_packages, work

    from .workflow_common import queue_url

    require_packages()
    env = environment()
    url = queue_url(queue)
    if url is None:
        raise UsageError(_("No queue: give --queue URL, set MAIA_QUEUE, or Workflows.queue in settings.json."))
    base = name or f"{socket.gethostname()}-{os.getpid()}"
    if concurrency == 1:
        work(WorkerSetup(env.home, url, base, trust_jobs), burst)
        return
    # one process per workflow at once: a killed one loses only its own workflow
    children = []
    for number in range(1, concurrency + 1):
        command = [sys.executable, "-m", "maia", "worker", "--name", f"{base}-{number}"]
        command += ["--burst"] if burst else []
        command += ["--trust-jobs"] if trust_jobs else []
        # the URL (and its password) in the environment, off the process list
        child_env = {**os.environ, "MAIA_QUEUE": url, "MAIA_HOME": str(env.home)}
        children.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, env=child_env))

    def forward(sig: int, _frame: object) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(sig)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    codes = [child.wait() for child in children]
    if any(codes):
        raise SystemExit(max(codes))


def _detached(workflow_id: str, quiet: bool) -> None:
    """A workflow started in the background: its id on stdout, how to follow it on stderr."""
    click.echo(workflow_id)
    if not quiet:
        click.echo(
            _("Follow it: maia workflow {id} --watch · maia logs {id} -f · stop it: maia stop {id}").format(
                id=workflow_id
            ),
            err=True,
        )


def _in_foreground(workflow_id: str, quiet: bool, start: Callable[[Echo | None], Coroutine[Any, Any, Any]]) -> None:
    """Run a workflow here, its log on stderr (unless ``quiet``), and end as it ended."""
    import asyncio
    import sys

    style = styler(sys.stderr)

    def echo(kind: str, line: str) -> None:
        click.echo(style(kind, line), err=True)

    if not quiet:
        click.echo(style("title", _("Workflow {id}").format(id=workflow_id)), err=True)
    outcome = asyncio.run(start(None if quiet else echo))
    _finish(outcome.result, outcome.error if quiet else None, outcome.exit_code)  # the log showed it
