"""``maia sandbox status``: the kernel's Landlock ABI, the active policy, the writable folders, the network."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from maia.i18n import _

from . import CONTEXT_SETTINGS
from .setup import Env, environment, warn

if TYPE_CHECKING:
    from maia.core.settings import Settings


@click.group(context_settings=CONTEXT_SETTINGS, invoke_without_command=True)
@click.pass_context
def sandbox(ctx: click.Context) -> None:
    """The OS sandbox under Bash, custom tools, ! commands and local MCP servers (bubblewrap and Landlock).

    Settings in ~/.maia/settings.json: "Sandbox" ("workspace-write", "read-only", "strict" or "off"),
    "SandboxWritableRoots" (extra folders), "SandboxHiddenPaths" (hidden from commands) and
    "SandboxNetwork" ("on" or "off").
    Without a subcommand, prints the status.
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(status)


def _settings(env: Env) -> Settings | None:
    """The user's settings, or None when there is no settings file yet (the sandbox's defaults apply)."""
    from maia.core.paths import settings_path
    from maia.core.settings import load_settings

    if not settings_path(env.home).exists():
        return None
    settings = load_settings(env.home)
    for message in settings.warnings:
        warn(message)
    return settings


@sandbox.command(context_settings=CONTEXT_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
def status(as_json: bool) -> None:
    """Print the kernel's Landlock ABI, the namespace sandbox, the policy, the writable, protected and hidden
    paths and the network state."""
    import json

    from maia.core.paths import settings_path
    from maia.process.sandbox.policy import (
        policy_from_settings,
        sandbox_mode,
        startup_notices,
        status_data,
        status_lines,
    )

    env = environment()
    settings = _settings(env)
    file = settings_path(env.home)
    policy = policy_from_settings(settings, env.launch, settings_file=file)
    notices = startup_notices(settings, env.launch, settings_file=file)
    _mode, chosen = sandbox_mode(settings)
    if as_json:
        data = status_data(policy)
        data["mode_source"] = "settings" if chosen else "default"
        data["notices"] = [{"level": n.level, "text": n.text} for n in notices]
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    for notice in notices:
        if notice.level == "warning":
            warn(notice.text)
    for line in status_lines(policy, chosen=chosen):
        click.echo(line)
