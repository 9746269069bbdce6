"""``maia sessions``: list, show, rename and delete the sessions saved in the launch folder."""

from __future__ import annotations

from typing import Any

import click

from maia.core.inert import inert_line
from maia.i18n import _

from . import CONTEXT_SETTINGS
from .complete import complete_sessions
from .setup import environment

RESULT_PREVIEW = 600


def _store() -> Any:
    from maia.sessions.store import SessionStore

    env = environment()
    return SessionStore.for_launch(env.launch, env.home)


complete_names = complete_sessions  # kept under its old name for the tests that import it


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


@click.group(context_settings=CONTEXT_SETTINGS)
def sessions() -> None:
    """The sessions saved in ./.maia/.sessions of the launch folder."""


@sessions.command("list", context_settings=CONTEXT_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
def list_sessions(as_json: bool) -> None:
    """List the sessions, most recent first: name, last update, messages, model, size.

    Sessions made by maia ask, sub-agent traces, sessions left by /clear and compacted sessions
    (name__N) are marked; unreadable files are listed with the reason.
    """
    import json

    infos = _store().listing()
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "name": i.name,
                        "updated": i.updated_at or None,
                        "messages": i.messages,
                        "model": i.model or None,
                        "size": i.size,
                        "agent": i.agent,
                        "origin": i.origin,
                        "cleared": i.cleared,
                        "first_prompt": i.first_prompt or None,
                        "compacted": i.compacted,
                        "error": i.error,
                        "foreign": i.foreign,
                    }
                    for i in infos
                ],
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    if not infos:
        click.echo(_("No saved session in this folder."))
        return
    width = max(len(i.name) for i in infos)
    lines = []  # echoed at once: one echo per line costs more than reading the files' heads
    for info in infos:
        if info.error:
            lines.append(inert_line(f"{info.name:<{width}}  " + _("unreadable: {error}").format(error=info.error)))
            continue
        marks = []
        if info.agent:
            marks.append(_("sub-agent {name}").format(name=info.agent))
        elif info.origin != "chat":
            marks.append({"ask": _("maia ask"), "workflow": _("workflow"), "subagent": _("sub-agent")}[info.origin])
        if info.cleared:
            marks.append(_("cleared"))
        if info.compacted:
            marks.append(_("compacted"))
        if info.foreign:
            marks.append(_("not written by your MAIA here: `maia trust` to accept"))
        updated = info.updated_at[:19].replace("T", " ") if info.updated_at else "-"
        line = f"{info.name:<{width}}  {updated:<19}  {info.messages:>4} msg  {_size(info.size):>8}  {info.model}"
        if marks:
            line += f"  ({', '.join(marks)})"
        lines.append(inert_line(line.rstrip()))  # a session file's model name and agent are untrusted
    click.echo("\n".join(lines))


@sessions.command(context_settings=CONTEXT_SETTINGS)
@click.argument("name", shell_complete=complete_names)
@click.option("--json", "as_json", is_flag=True, help=_("Print the session file's JSON."))
def show(name: str, as_json: bool) -> None:
    """Print a session's conversation (tool results cut at 600 characters)."""
    import json
    import sys

    from maia.core.contracts import TextBlock, ToolResultBlock, ToolUseBlock
    from maia.core.inert import for_terminal
    from maia.sessions.codec import typed_text

    def shown(text: str) -> str:  # what the session holds is untrusted: inert on a terminal
        return for_terminal(text, sys.stdout)

    store = _store()
    session = store.load(name)
    if not store.is_own(session):  # said first: what follows may be turns nobody typed
        click.echo(
            _("Not written by your MAIA in this folder (a repository may have planted it): `maia trust` accepts it."),
            err=True,
        )
    if as_json:
        click.echo(json.dumps(session.to_json(), indent=2, ensure_ascii=False))
        return
    click.echo(
        _("Session {name} · model {model} · {count} messages · updated {updated}").format(
            name=session.name,
            model=session.model or "-",
            count=len(session.messages),
            updated=session.updated_at or "-",
        )
    )
    if session.start_context:
        click.echo(
            "\n" + _("Starting context (summary of an earlier conversation):") + "\n" + shown(session.start_context)
        )
    for message in session.messages:
        click.echo("\n" + (_("You:") if message.role == "user" else _("MAIA:")))
        for block in message.content:
            if isinstance(block, TextBlock) and message.role == "user":
                words = typed_text(block)
                click.echo(shown(words))
                if len(block.text) > len(words):  # files, piped input or a command's output went with it
                    click.echo(
                        _("  [with {count} characters attached; --json shows them]").format(
                            count=len(block.text) - len(words)
                        )
                    )
            elif isinstance(block, TextBlock):
                click.echo(shown(block.text))
            elif isinstance(block, ToolUseBlock):
                click.echo(shown(f"  → {block.name} {json.dumps(block.input, ensure_ascii=False)}"))
            elif isinstance(block, ToolResultBlock):
                text = block.content
                if len(text) > RESULT_PREVIEW:
                    text = text[:RESULT_PREVIEW] + _("… [{count} more characters]").format(
                        count=len(block.content) - RESULT_PREVIEW
                    )
                mark = _("error") if block.is_error else _("result")
                click.echo(shown(f"  ← {mark}: " + text.replace("\n", "\n    ")))
    if session.pending_context:
        click.echo(
            "\n" + _("Pending context (not sent yet): {count} item(s)").format(count=len(session.pending_context))
        )


@sessions.command(context_settings=CONTEXT_SETTINGS)
@click.argument("old", shell_complete=complete_names)
@click.argument("new")
def rename(old: str, new: str) -> None:
    """Rename a saved session."""
    name = _store().rename(old, new)
    click.echo(_("Renamed {old} to {new}.").format(old=old, new=name))


@sessions.command(context_settings=CONTEXT_SETTINGS)
@click.argument("names", nargs=-1, required=True, shell_complete=complete_names)
@click.option("--yes", "-y", is_flag=True, help=_("Delete without asking (required without a terminal)."))
def delete(names: tuple[str, ...], yes: bool) -> None:
    """Delete saved sessions (sub-agent traces and compacted sessions are not deleted with them)."""
    import sys

    from maia.core.errors import UsageError

    store = _store()
    found = []
    for name in names:
        match = store.find(name)
        if match is None:
            raise store.not_found(name)
        found.append(match)
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(_("Refusing to delete without confirmation: pass --yes."))
        if not click.confirm(_("Delete {names}?").format(names=", ".join(found)), default=False):
            click.echo(_("Nothing deleted."))
            return
    failed = False
    for name, error in store.remove(found):
        if error:
            failed = True
            click.echo(_("Cannot delete {name}: {error}").format(name=name, error=error), err=True)
        else:
            click.echo(_("Deleted {name}.").format(name=name))
    if failed:
        raise SystemExit(1)
