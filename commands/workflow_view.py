"""``maia workflows``, ``maia workflow``, ``maia logs``, ``maia result``: watching workflows (§23)."""

from __future__ import annotations

import click

from maia.i18n import _

from . import CONTEXT_SETTINGS
from .complete import complete_workflows
from .workflow_common import find, registry, styler, warn_all

RECENT_HOURS = 24


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help=_("Print a JSON list for scripts."))
@click.option("--all", "show_all", is_flag=True, help=_("Every workflow, not only the recent and unfinished ones."))
def workflows(as_json: bool, show_all: bool) -> None:
    """The workflows that have not ended and those of the last 24 hours (--all: every one), oldest first.

    States: pending, running, waiting (for an answer, or rate-limited), done, error.
    """
    import json
    from datetime import datetime, timedelta

    from maia.workflows.registry import WorkflowFileError
    from maia.workflows.view import list_line, snapshot

    since = datetime.now().astimezone() - timedelta(hours=RECENT_HOURS)
    shown = []
    problems: list[str] = []
    for workflow in registry().all():
        try:
            snap = snapshot(workflow)
        except WorkflowFileError as error:
            problems.append(_("{error}; skipped.").format(error=error.message))
            continue
        if not show_all and snap.final and not _ended_after(snap.record.get("ended"), since):
            continue
        problems.extend(snap.warnings)
        shown.append(snap)
    warn_all(problems)
    if as_json:
        click.echo(json.dumps([s.to_json() for s in shown], indent=2, ensure_ascii=False))
        return
    if not shown:
        click.echo(_("No workflow.") if show_all else _("No recent workflow (--all shows every one)."))
        return
    style = styler()
    for snap in shown:
        click.echo(list_line(snap, style))


def _ended_after(value: object, since: object) -> bool:
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(value)) >= since  # type: ignore[operator]
    except (ValueError, TypeError):
        return True  # an unreadable end: better shown than hidden


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("ref", shell_complete=complete_workflows)
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
@click.option("--watch", "-w", is_flag=True, help=_("Refresh every 2 seconds until the workflow ends."))
def workflow(ref: str, as_json: bool, watch: bool) -> None:
    """Everything about one workflow: state, sub-agents, requests waiting for you, result or error.

    REF: the workflow's id, a unique part of it, last, or its agent's name (its newest workflow).
    With --json --watch, one JSON object per line each time something changes.
    """
    import json
    import sys
    import time

    from maia.workflows.view import detail_lines, snapshot

    target = find(ref)
    style = styler()
    clear = watch and not as_json and sys.stdout.isatty()
    previous = None
    while True:
        snap = snapshot(target)
        if as_json:
            data = snap.to_json()
            text = json.dumps(data, ensure_ascii=False) if watch else json.dumps(data, indent=2, ensure_ascii=False)
        else:
            text = "\n".join(detail_lines(snap, style))
        if text != previous:
            warn_all(snap.warnings)
            if clear:
                click.echo("\x1b[H\x1b[2J", nl=False)
            elif previous is not None and not as_json:
                click.echo()
            click.echo(text)
            previous = text
        if not watch or snap.final:
            return
        time.sleep(2)


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("ref", shell_complete=complete_workflows)
@click.option("--follow", "-f", is_flag=True, help=_("Keep printing what is added until the workflow ends."))
def logs(ref: str, follow: bool) -> None:
    """The workflow's log (run.log): what it did, when, and what it asked."""
    import sys
    import time

    from maia.workflows.text import inert
    from maia.workflows.view import snapshot

    target = find(ref)
    tty = sys.stdout.isatty()
    offset = 0

    def show_new() -> None:
        nonlocal offset
        text, offset = target.log_since(offset)
        if text:
            click.echo(inert(text) if tty else text, nl=False)

    show_new()
    while follow:
        final = snapshot(target).final
        time.sleep(1)
        show_new()
        if final:
            return


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("ref", shell_complete=complete_workflows)
@click.option("--patch", is_flag=True, help=_("The changes of a --git workflow, as a patch for git apply."))
def result(ref: str, patch: bool) -> None:
    """The workflow's final answer (result.md): exit 1 when it ended in error, 2 while it runs."""
    import sys

    from maia.core.errors import MaiaError, UsageError
    from maia.workflows.text import inert
    from maia.workflows.view import snapshot

    snap = snapshot(find(ref))
    if patch:
        from maia.workflows.queue import PATCH_STATE

        changes = snap.workflow.load_state(PATCH_STATE) if snap.final else None
        if changes is None:
            raise UsageError(
                _("The workflow {id} has no patch: only a finished workflow run with --git has one.").format(
                    id=snap.workflow.id
                )
            )
        click.echo(changes, nl=False)
        return
    if not snap.final:
        raise UsageError(
            _("The workflow {id} has not ended ({label}): maia workflow {id} --watch follows it.").format(
                id=snap.workflow.id, label=snap.label()
            )
        )
    text = snap.workflow.read_result()
    if snap.state == "error" or text is None:
        raise MaiaError(
            _("The workflow {id} ended in error without a result: {error}").format(
                id=snap.workflow.id, error=snap.error or _("unknown error")
            )
        )
    click.echo(inert(text) if sys.stdout.isatty() else text, nl=not text.endswith("\n"))
