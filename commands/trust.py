"""``maia trust``: what a folder's files grant, trusting it, the trusted folders, revoking."""

from __future__ import annotations

from pathlib import Path

import click

from maia.i18n import _

from . import CONTEXT_SETTINGS
from .setup import environment


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--list", "as_list", is_flag=True, help=_("List the trusted folders."))
@click.option("--revoke", "revoke", metavar="PATH", type=click.Path(path_type=Path), help=_("Stop trusting PATH."))
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
def trust(path: Path | None, as_list: bool, revoke: Path | None, as_json: bool) -> None:
    """Show what the folder PATH (default: the launch folder) grants, then trust it.

    A folder's own files grant power: allow rules and inertVariables in .maia/settings.json and
    .maia/settings.local.json, .mcp.json servers, custom tools (.maia/tools), the allow rules and
    permissionMode of its AGENT.md files. They apply only once the folder is trusted; deny and
    ask rules always apply. Trust is kept in ~/.maia/trust.json with a digest of what was granted:
    when that changes, MAIA asks again (maia ask and maia run ignore the grants until then).
    Saved sessions in .maia/.sessions that your MAIA did not write (planted by the repository, or
    written by an older MAIA) are listed and accepted as yours: --continue and --resume skip or
    refuse them until then.

    Exit codes: 0 done, 1 PATH was not trusted (--revoke), 2 bad usage.
    """
    import json

    from maia.core import trust as store
    from maia.core.errors import UsageError

    env = environment()
    if sum(bool(x) for x in (path is not None, as_list, revoke is not None)) > 1:
        raise UsageError(_("Give PATH, --list or --revoke PATH, one at a time."))
    if as_list:
        folders = store.trusted_folders(env.home)
        if as_json:
            click.echo(json.dumps({"folders": folders}, indent=2, ensure_ascii=False))
        elif not folders:
            click.echo(_("No folder is trusted."))
        for record in folders if not as_json else ():
            click.echo(_("{path}  (trusted {when})").format(path=record["path"], when=record["trusted"]))
            for line in record["grants"]:
                click.echo(f"  {line}")
        return
    if revoke is not None:
        done = store.revoke(revoke, env.home)
        if as_json:
            click.echo(json.dumps({"path": str(revoke.resolve()), "revoked": done}, ensure_ascii=False))
        elif done:
            click.echo(_("{path} is no longer trusted.").format(path=revoke.resolve()))
        else:
            click.echo(_("{path} was not trusted.").format(path=revoke.resolve()), err=True)
        if not done:
            raise SystemExit(1)
        return
    folder = (path if path is not None else env.launch).expanduser()
    if not folder.is_dir():
        raise UsageError(_("{path}: no such folder.").format(path=folder))
    before = store.check(folder, env.home)
    state = store.trust_folder(folder, env.home, shown=before.grants)
    accepted = _accept_sessions(folder, env.home)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "path": str(state.folder),
                    "trusted": True,
                    "grants": state.lines(),
                    "added": before.added,
                    "sessions": accepted,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    import sys

    from maia.core.inert import for_terminal

    if state.grants:
        click.echo(_("{path} grants:").format(path=state.folder))
        new = set(before.added) if before.recorded else set()
        for line in state.lines():  # the repository's own text: inert on a terminal
            mark = _(" (new)") if line in new else ""
            click.echo(for_terminal(f"  {line}{mark}", sys.stdout))
    else:
        click.echo(
            _("{path} grants nothing (no allow rule, MCP server, custom tool or agent mode).").format(path=state.folder)
        )
    if accepted:
        click.echo(_("Saved sessions it holds that your MAIA did not write, now accepted as yours:"))
        for line in accepted:
            click.echo(for_terminal(f"  {line}", sys.stdout))
    click.echo(_("Trusted: {path}").format(path=state.folder))


def _accept_sessions(folder: Path, home: Path) -> list[str]:
    """Seal the folder's foreign sessions (planted, copied, or written by a MAIA older than seals): trusting
    the folder accepts its saved history as the user's own. One line each."""
    from maia.sessions.store import SessionStore

    sessions = SessionStore.for_launch(folder, home)
    lines = []
    for info in sessions.foreign():
        sessions.accept(info.name)
        lines.append(sessions.foreign_line(info))
    return lines
