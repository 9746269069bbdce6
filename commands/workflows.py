"""``maia run``: start an autonomous workflow, in this terminal or detached (§23); ``maia resume``: carry one on."""

from __future__ import annotations

from pathlib import Path

import click

from maia.i18n import _

from . import CONTEXT_SETTINGS
from .complete import complete_workflows
from .setup import environment, warn
from .workflow_common import find, registry, styler, warn_all


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
@click.option("--workflow-id", hidden=True)
def run(
    agent_file: Path,
    task: str | None,
    model: str | None,
    detach: bool,
    quiet: bool,
    timeout: str | None,
    permission_mode: str | None,
    workflow_id: str | None,
) -> None:
    """Run the workflow whose parent agent is AGENT_FILE (an AGENT.md, or its folder) on TASK.

    The parent orchestrates the sub-agents in the folders beside its own (and ~/.maia/agents).
    Besides the usual AGENT.md keys it may set timeout: (30m, 2h…) and permissionMode: (wait,
    deny, allow). With wait, a question is written in the registry and the workflow waits for
    maia approve (or maia reply for the parent's questions). Follow it with maia workflow ID
    --watch and maia logs ID -f; stop it with maia stop ID. TASK - reads the task from stdin.

    Exit codes: 0 done, 1 error or time limit, 2 bad usage (file, model, option), 130 stopped.
    """
    import sys

    from maia.errors import UsageError
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
    _start(agent_file, task, model, detach, quiet, seconds, permission_mode)


def _start(
    agent_file: Path,
    task: str | None,
    model: str | None,
    detach: bool,
    quiet: bool,
    timeout: float | None,
    permission_mode: str | None,
) -> None:
    import asyncio
    import sys

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
        detached=detach,
    )
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
        click.echo(workflow.id)
        if not quiet:
            click.echo(
                _("Follow it: maia workflow {id} --watch · maia logs {id} -f · stop it: maia stop {id}").format(
                    id=workflow.id
                ),
                err=True,
            )
        return
    style = styler(sys.stderr)

    def echo(kind: str, line: str) -> None:
        click.echo(style(kind, line), err=True)

    if not quiet:
        click.echo(style("title", _("Workflow {id}").format(id=workflow.id)), err=True)
    outcome = asyncio.run(run_workflow(workflow, options, None if quiet else echo))
    _finish(outcome.result, outcome.error if quiet else None, outcome.exit_code)  # the log showed it


def _run_worker(workflow_id: str) -> None:
    """The detached process: run the workflow the record describes, immune to the terminal's hangup."""
    import asyncio
    import signal

    from maia.errors import NotFoundError, UsageError
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
    import asyncio
    import sys

    from maia.workflows.resume import resume_detached, resume_here

    env = environment()
    target = find(ref)
    if detach:
        resume_detached(target, env.home, env.launch)
        click.echo(target.id)
        if not quiet:
            click.echo(
                _("Follow it: maia workflow {id} --watch · maia logs {id} -f · stop it: maia stop {id}").format(
                    id=target.id
                ),
                err=True,
            )
        return
    style = styler(sys.stderr)

    def echo(kind: str, line: str) -> None:
        click.echo(style(kind, line), err=True)

    if not quiet:
        click.echo(style("title", _("Workflow {id}").format(id=target.id)), err=True)
    outcome = asyncio.run(resume_here(target, env.home, env.launch, None if quiet else echo))
    _finish(outcome.result, outcome.error if quiet else None, outcome.exit_code)
