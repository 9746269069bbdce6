"""``maia approve``, ``maia reply``, ``maia stop``: steering a workflow from any terminal (§23)."""

from __future__ import annotations

import click

from maia.i18n import _

from . import CONTEXT_SETTINGS
from .complete import complete_workflows
from .workflow_common import find

STOP_WAIT = 30.0


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("ref", shell_complete=complete_workflows)
@click.argument("request", required=False)
@click.option("--deny", is_flag=True, help=_("Refuse instead of allowing."))
@click.option(
    "--show", is_flag=True, help=_("Show what the request would allow (its command or diff); answer nothing.")
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help=_("Print the request as JSON (its command or diff included); answer nothing."),
)
def approve(ref: str, request: str | None, deny: bool, show: bool, as_json: bool) -> None:
    """Allow (or --deny) what a workflow waits for: REQUEST (r1, r2…), or the one request waiting.

    Each request is answered once; an answered request cannot be changed. --show prints the request
    whole (the exact command, or the diff of the edit) without answering it.
    """
    from maia.workflows.steer import approve as answer

    target = find(ref)
    if show or as_json:
        import json

        from maia.workflows.steer import pick_request
        from maia.workflows.text import inert
        from maia.workflows.view import detail_rows, snapshot

        chosen = pick_request(snapshot(target), "permission", request)
        if as_json:
            click.echo(json.dumps(chosen.to_json(), indent=2, ensure_ascii=False))
            return
        click.echo(f"{chosen.id}  {inert(chosen.agent)}: {inert(chosen.message)}")
        for line in detail_rows(chosen, target.id, limit=None):
            click.echo(line)
        click.echo("  " + _("maia approve {id} {request}   (or --deny)").format(id=target.id, request=chosen.id))
        return
    answered = answer(target, request, not deny)
    message = _("Approved {request} of {id}.") if not deny else _("Denied {request} of {id}.")
    click.echo(message.format(request=answered.id, id=target.id))


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("ref", shell_complete=complete_workflows)
@click.argument("text")
def reply(ref: str, text: str) -> None:
    """Answer the question a workflow's parent asked (RequestIntervention) with TEXT (- reads stdin)."""
    import sys

    from maia.core.errors import UsageError
    from maia.workflows.steer import reply as answer

    if text == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError(_("TEXT is -: pipe the answer on stdin."))
        text = sys.stdin.read()
    target = find(ref)
    answered = answer(target, text)
    click.echo(_("Answered {request} of {id}.").format(request=answered.id, id=target.id))


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("ref", shell_complete=complete_workflows)
def stop(ref: str) -> None:
    """Stop a workflow: its turn and its sub-agents are cancelled (it ends in error, exit code 130).

    Waits up to 30 seconds for it to end.
    """
    import time

    from maia.workflows.steer import stop as request_stop
    from maia.workflows.view import snapshot

    target = find(ref)
    request_stop(target)
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline:
        snap = snapshot(target)
        if snap.final:
            click.echo(_("Stopped {id} ({label}).").format(id=target.id, label=snap.label()))
            return
        time.sleep(0.25)
    click.echo(_("Stop requested: {id} has not ended yet; maia workflow {id} shows when it does.").format(id=target.id))
