"""``maia hooks``: the hooks in force (``list``) and a dry run of one event's hooks on a sample (``test``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from maia.i18n import _

from . import CONTEXT_SETTINGS
from .setup import environment, warn

if TYPE_CHECKING:
    from maia.app.hooks import HookConfig

    from .setup import Env


@click.group(context_settings=CONTEXT_SETTINGS, invoke_without_command=True)
@click.pass_context
def hooks(ctx: click.Context) -> None:
    """Hooks: programs run on MAIA's events (PreToolUse, PostToolUse, UserPromptSubmit, Stop…).

    They are declared under "hooks" in ~/.maia/settings.json, or in a trusted project's
    .maia/settings.json (docs/hooks.md). Without a subcommand, lists them.
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_hooks)


def _config(env: Env) -> tuple[HookConfig, bool]:
    from maia.app.hooks import load_hooks
    from maia.core.paths import settings_path
    from maia.core.trust import folder_trusted

    trusted = folder_trusted(env.launch, env.home)
    config = load_hooks(settings_path(env.home), env.launch, trusted=trusted)
    for message in config.warnings:
        warn(message)
    return config, trusted


@hooks.command("list", context_settings=CONTEXT_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
def list_hooks(as_json: bool) -> None:
    """List the hooks in force with their source, and a project's ignored ones (untrusted folder)."""
    import json
    import sys

    from maia.app.hooks import describe_hooks, hook_lines
    from maia.core.inert import for_terminal

    env = environment()
    config, trusted = _config(env)
    if as_json:
        click.echo(json.dumps({"trusted": trusted, "hooks": describe_hooks(config)}, indent=2, ensure_ascii=False))
        return
    lines = hook_lines(config)
    if not lines:
        click.echo(_('No hook is configured ("hooks" in settings.json: see docs/hooks.md).'))
        return
    for line in lines:
        click.echo(for_terminal(line, sys.stdout))  # a project's file wrote these: never obeyed by the terminal
    if config.ignored:
        click.echo(_("Ignored hooks run once you trust this folder: maia trust"))


@hooks.command(context_settings=CONTEXT_SETTINGS)
@click.argument("event")
@click.option(
    "--input", "sample", default="{}", help=_("The JSON object the hooks get (tool_name, tool_input, prompt…).")
)
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
def test(event: str, sample: str, as_json: bool) -> None:
    """Run the hooks of EVENT on a sample input and show what they decided.

    The hooks really run (under the sandbox, as in a session): test them on harmless samples.
    Exit status: 0, or 1 when a hook blocked or denied.
    """
    import asyncio
    import json
    import sys

    from maia.app.hooks import EVENTS, TOOL_EVENTS, HookRunner
    from maia.core.errors import UsageError
    from maia.core.inert import for_terminal
    from maia.core.paths import settings_path
    from maia.core.settings import load_settings
    from maia.process.sandbox.policy import policy_from_settings

    if event not in EVENTS:
        raise UsageError(_("Unknown event {event} (known: {events}).").format(event=event, events=", ".join(EVENTS)))
    try:
        payload: Any = json.loads(sample)
    except ValueError as error:
        raise UsageError(_("--input is not JSON: {error}").format(error=error)) from None
    if not isinstance(payload, dict):
        raise UsageError(_('--input must be a JSON object, such as {"tool_name": "Bash", "tool_input": {}}.'))
    tool = payload.get("tool_name") if event in TOOL_EVENTS else None
    if event in TOOL_EVENTS and not isinstance(tool, str):
        raise UsageError(_("{event} needs a tool_name in --input.").format(event=event))
    env = environment()
    config, _trusted = _config(env)
    settings = load_settings(env.home) if settings_path(env.home).exists() else None
    policy = policy_from_settings(settings, env.launch, settings_file=settings_path(env.home))
    warnings: list[str] = []
    runner = HookRunner(
        config, env.launch, sandbox=lambda: policy, session=lambda: None, warn=warnings.append, origin="test"
    )
    result = asyncio.run(runner.run(event, payload, tool=tool if isinstance(tool, str) else None))
    refused = result.blocked or result.decision == "deny"
    if as_json:
        data = {
            "event": event,
            "ran": result.ran,
            "decision": result.decision,
            "blocked": result.blocked,
            "stop": result.stop,
            "reason": result.reason,
            "context": result.context,
            "warnings": result.warnings,
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        if not result.ran:
            click.echo(_("No hook matches {event}.").format(event=event))
        for line in result.ran:
            click.echo(for_terminal(line, sys.stdout))
        if result.decision or result.blocked:
            click.echo(_("Decision: {decision}").format(decision="block" if result.blocked else result.decision))
        if result.reason:
            click.echo(for_terminal(_("Reason: {reason}").format(reason=result.reason), sys.stdout))
        for context in result.context:
            click.echo(for_terminal(_("Context: {text}").format(text=context), sys.stdout))
    if refused:
        sys.exit(1)
