"""``maia mcp``: the declared MCP servers, a connection test, and safe edits of the declarations."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from maia.core.inert import inert_line
from maia.i18n import _, ngettext

from . import CONTEXT_SETTINGS
from .complete import complete_mcp_servers
from .setup import Env, environment, warn

if TYPE_CHECKING:
    from maia.mcp.source import Plan, ProbeOutcome


def _plan(env: Env) -> Plan:
    from maia.mcp.source import McpSource

    return McpSource(env.home, env.launch).plan()


@click.group(context_settings=CONTEXT_SETTINGS)
def mcp() -> None:
    """MCP servers: list what is declared and enabled, test connections, add and remove servers.

    Servers are declared in ~/.maia/mcp.json (and the project's ./.mcp.json); a server runs only
    when an allow rule "Mcp(NAME)" in settings.json enables it. See docs/mcp.md.
    """


@mcp.command("list", context_settings=CONTEXT_SETTINGS, short_help=_("Declared servers and whether rules enable them."))
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
def list_servers(as_json: bool) -> None:
    """List the declared servers, their transport, and whether this folder's rules enable them."""
    import json

    env = environment()
    plan = _plan(env)
    if as_json:
        payload: dict[str, Any] = {
            "servers": [
                {
                    "name": s.name,
                    "origin": s.server.origin,
                    "file": str(s.server.file),
                    "transport": s.server.transport,
                    "target": s.server.target,
                    "headers": sorted(s.server.headers),
                    "timeout": s.server.timeout,
                    "description": s.server.description,
                    "enabled": s.enabled,
                    "reason": s.reason,
                    "rule": s.rule,
                }
                for s in plan.selections
            ],
            "warnings": plan.warnings,
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    for message in plan.warnings:
        warn(message)
    if not plan.selections:
        click.echo(_("No MCP server declared. Add one with: maia mcp add NAME URL (or: maia mcp add NAME -- COMMAND)"))
        return
    width = max(len(s.name) for s in plan.selections)
    for selection in plan.selections:
        server = selection.server
        if selection.enabled:
            badge = click.style(f"{_('enabled'):<7}", fg="green", bold=True)
        else:
            badge = click.style(f"{_('off'):<7}", fg="yellow", bold=True)
        origin = "" if server.origin == "user" else _(" (project)")
        # names, targets and descriptions come from settings files: never obeyed by the terminal
        name, target = inert_line(server.name), inert_line(server.target)
        click.echo(f"{name:<{width}}  {badge}  {server.transport:<5}  {target}{origin}")
        click.echo(" " * (width + 2) + click.style(inert_line(selection.reason), dim=True))
        if server.description:
            click.echo(" " * (width + 2) + click.style(inert_line(server.description), dim=True))


@mcp.command("test", context_settings=CONTEXT_SETTINGS, short_help=_("Connect and list tools, with timings."))
@click.argument("server", required=False, shell_complete=complete_mcp_servers)
@click.pass_context
def test_servers(ctx: click.Context, server: str | None) -> None:
    """Connect, list the tools and print the timings (exit 1 if a server fails).

    Without SERVER, the servers this folder's rules enable are tested; SERVER is tested even when no
    rule enables it yet, except a server declared by the project, which needs your own
    "Mcp(SERVER)" rule in ~/.maia/settings.json first.
    """
    import asyncio

    from maia.core.errors import NotFoundError
    from maia.mcp.rules import user_trusts

    env = environment()
    plan = _plan(env)
    for message in plan.warnings:
        warn(message)
    if server is not None:
        selection = next((s for s in plan.selections if s.name == server), None)
        if selection is None:
            raise NotFoundError(
                _("No MCP server is declared as {name}.").format(name=server),
                hint=_("maia mcp list shows the declared servers."),
            )
        if not user_trusts(selection.server, plan.user_rules):
            click.echo(
                _(
                    "{name} is declared by the project ({file}). Before MAIA starts or contacts it, allow it in your "
                    'own {settings}: {{"permissions": {{"allow": ["Mcp({name})"]}}}}'
                ).format(name=server, file=selection.server.file, settings=env.home / "settings.json"),
                err=True,
            )
            ctx.exit(1)
        if not selection.enabled:
            click.echo(click.style(_("note: not enabled here: {reason}").format(reason=selection.reason), dim=True))
        targets = [selection]
    else:
        targets = [s for s in plan.selections if s.enabled]
        if not targets:
            click.echo(_("No MCP server is enabled by the rules of this folder (maia mcp list says why)."))
            return
    outcomes = asyncio.run(_probe_all([t.server for t in targets], env, plan))
    failed = False
    for selection, outcome in zip(targets, outcomes, strict=True):
        failed |= _show(selection.server.transport, selection.server.target, outcome)
    if failed:
        ctx.exit(1)


async def _probe_all(servers: list[Any], env: Env, plan: Plan) -> list[ProbeOutcome]:
    import asyncio

    from maia.mcp.source import probe_server

    return list(await asyncio.gather(*(probe_server(s, env.home, plan.rules) for s in servers)))


def _show(transport: str, target: str, outcome: ProbeOutcome) -> bool:
    status = outcome.status
    click.echo(f"{click.style(inert_line(status.name), bold=True)} ({transport}, {inert_line(target)})")
    for message in outcome.warnings:
        warn(message)
    if status.state != "ok":
        after = _("after {seconds:.2f} s").format(seconds=outcome.seconds)
        click.echo("  " + click.style("FAIL", fg="red", bold=True) + f"  {inert_line(status.cause or '')} ({after})")
        return True
    server = " ".join(filter(None, [status.server_name]))
    details = _("connected in {connect:.2f} s (protocol {protocol}{server}), {tools} listed in {list:.2f} s").format(
        connect=status.connect_seconds or 0.0,
        protocol=status.protocol_version or "?",
        server=f", {server}" if server else "",
        tools=ngettext("{count} tool", "{count} tools", status.tools).format(count=status.tools),
        list=status.list_seconds or 0.0,
    )
    if status.hidden_tools:
        details += _(", {count} hidden (includeTools, excludeTools, deny rules)").format(count=status.hidden_tools)
    if status.prompts or status.resources:
        details += ", " + ngettext("{count} prompt", "{count} prompts", status.prompts).format(count=status.prompts)
        details += ", " + ngettext("{count} resource", "{count} resources", status.resources).format(
            count=status.resources
        )
    click.echo("  " + click.style("OK", fg="green", bold=True) + f"  {inert_line(details)}")  # the server's words
    if outcome.tools:
        click.echo("  " + click.style(inert_line(", ".join(outcome.tools)), dim=True))
    return False


@mcp.command(
    "add", context_settings=CONTEXT_SETTINGS, short_help=_("Declare a remote (URL) or local (command) server.")
)
@click.argument("name")
@click.argument("target", nargs=-1, required=True)
@click.option(
    "--type", "transport", type=click.Choice(["http", "sse", "stdio"]), help=_("Transport (default: from TARGET).")
)
@click.option("--header", "-H", "headers", multiple=True, help=_('HTTP header "Name: value" (repeatable).'))
@click.option("--env", "-e", "env_vars", multiple=True, help=_("Variable NAME=value for a local server (repeatable)."))
@click.option("--cwd", help=_("Working folder of a local server (relative to the launch folder)."))
@click.option("--timeout", type=float, help=_("Seconds for connecting and for each call (default 30)."))
@click.option(
    "--project", is_flag=True, help=_("Write ./.mcp.json (shared with the project) instead of ~/.maia/mcp.json.")
)
def add(
    name: str,
    target: tuple[str, ...],
    transport: str | None,
    headers: tuple[str, ...],
    env_vars: tuple[str, ...],
    cwd: str | None,
    timeout: float | None,
    project: bool,
) -> None:
    """Declare a server: NAME URL for a remote one, NAME -- COMMAND ARGS… for a local one.

    \b
    Examples:
      maia mcp add docs https://docs.example.com/mcp
      maia mcp add github https://api.githubcopilot.com/mcp/ -H "Authorization: Bearer ${GITHUB_TOKEN}"
      maia mcp add legacy https://old.example.com/sse --type sse
      maia mcp add files -e ROOT=/data -- npx -y @modelcontextprotocol/server-filesystem /data

    ${VAR} is kept as written and replaced from the environment when MAIA connects.
    """
    from maia.core.errors import UsageError
    from maia.mcp.config import project_config_path, user_config_path
    from maia.mcp.edit import add_server, local_entry, remote_entry

    env = environment()
    looks_remote = "://" in target[0]  # a URL (a command is a program name or path)
    if transport in ("http", "sse") or (transport is None and looks_remote):
        if len(target) != 1:
            raise UsageError(_("A remote server takes one URL: maia mcp add NAME URL [--type http|sse]"))
        if env_vars or cwd:
            raise UsageError(_("--env and --cwd are for local servers (maia mcp add NAME -- COMMAND ARGS…)"))
        entry = remote_entry(target[0], transport or "http", headers, timeout)
    else:
        if headers:
            raise UsageError(_("--header is for remote servers (maia mcp add NAME URL)"))
        entry = local_entry(target, env_vars, cwd, timeout)
    path = project_config_path(env.launch) if project else user_config_path(env.home)
    add_server(env.home, path, name, entry)
    click.echo(_("Added {name} to {path}.").format(name=name, path=path))
    if "url" not in entry and _unknown_program(target[0], env.launch, cwd):
        # `maia mcp add docs docs.example.com/mcp`: a URL without its scheme reads as a local command
        warn(
            _(
                "{program} is not a program on PATH nor a file: for a remote server, write its URL with "
                "https:// (maia mcp add {name} https://…)."
            ).format(program=target[0], name=name)
        )
    from maia.core.paths import settings_path
    from maia.core.settings import enable_mcp_server

    # you declared it yourself: it is enabled in your own settings (a project's say-so never does that)
    enabled = enable_mcp_server(env.home, name)
    if enabled is not None:
        click.echo(
            _("Enabled: Mcp({name}) is in the allow list of {path}; check with: maia mcp test {name}").format(
                name=name, path=enabled
            )
        )
    else:
        message = _('It starts only when {path} allows it: {{"permissions": {{"allow": ["Mcp({name})"]}}}}.')
        click.echo(message.format(name=name, path=settings_path(env.home)))


def _unknown_program(program: str, launch: Path, cwd: str | None) -> bool:
    """Whether a local server's command names no program on PATH and no file (${VAR} aside)."""
    import shutil

    if "${" in program or shutil.which(program) is not None:
        return False
    folder = launch / cwd if cwd else launch
    return not (folder / program).expanduser().exists()


@mcp.command("remove", context_settings=CONTEXT_SETTINGS, short_help=_("Remove a server's declaration."))
@click.argument("name", shell_complete=complete_mcp_servers)
@click.option("--project", is_flag=True, help=_("Remove from ./.mcp.json instead of ~/.maia/mcp.json."))
def remove(name: str, project: bool) -> None:
    """Remove a server's declaration (the other servers and keys stay as they are)."""
    from maia.core.errors import NotFoundError
    from maia.mcp.config import project_config_path, user_config_path
    from maia.mcp.edit import remove_server

    env = environment()
    path = project_config_path(env.launch) if project else user_config_path(env.home)
    if remove_server(env.home, path, name):
        click.echo(_("Removed {name} from {path}.").format(name=name, path=path))
        if not any(s.name == name for s in _plan(env).config.servers):  # declared nowhere else now
            from maia.core.paths import settings_path
            from maia.core.settings import forget_mcp_server

            removed = forget_mcp_server(env.home, name)
            if removed:
                click.echo(
                    _("Removed its rules from {path}: {rules}.").format(
                        path=settings_path(env.home), rules=", ".join(removed)
                    )
                )
        return
    other = user_config_path(env.home) if project else project_config_path(env.launch)
    hint = None
    if any(s.name == name and s.file == other for s in _plan(env).config.servers):
        hint = _("It is declared in {path}: use {option}.").format(
            path=other, option="maia mcp remove {name}{flag}".format(name=name, flag="" if project else " --project")
        )
    raise NotFoundError(_("No server named {name} in {path}.").format(name=name, path=path), hint=hint)
