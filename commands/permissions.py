"""``maia permissions``: the rules loaded, per file and family, and a checker for a tool call."""

from __future__ import annotations

from typing import Any

import click

from maia.core.inert import inert_line
from maia.i18n import _

from . import CONTEXT_SETTINGS
from .setup import environment, warn


@click.group(context_settings=CONTEXT_SETTINGS, invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
@click.pass_context
def permissions(ctx: click.Context, as_json: bool) -> None:
    """Show the permission rules loaded from ~/.maia/settings.json and ./.maia/settings.json.

    Rules are listed per file and per family (ALLOW, ASK, DENY), followed by the warnings about
    rules that were ignored. Use `maia permissions check` to test a tool call against them.
    """
    if ctx.invoked_subcommand is not None:
        return
    import json

    from maia.permissions.sources import load_rules

    env = environment()
    loaded = load_rules(env.home, env.launch)
    if as_json:
        payload = {
            "sources": [
                {
                    "scope": s.scope,
                    "path": str(s.path),
                    "exists": s.exists,
                    **{f: [r.text for r in s.ruleset.family(f)] for f in ("allow", "ask", "deny")},
                    "inertVariables": sorted(s.ruleset.inert),
                    **(
                        {
                            "ignored": {
                                "allow": [r.text for r in s.ignored.allow],
                                "inertVariables": sorted(s.ignored.inert),
                            }
                        }
                        if not s.ignored.empty or s.ignored.inert
                        else {}
                    ),
                }
                for s in loaded.sources
            ],
            "trusted": loaded.trusted,
            "warnings": loaded.warnings,
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    for message in loaded.warnings:
        warn(message)
    if loaded.ruleset.empty:
        click.echo(
            _(
                "No permission rules defined: reading and searching inside the launch folder is allowed "
                "(secret-looking files excepted); every other tool use asks for confirmation."
            )
        )
    for source in loaded.sources:
        label = {"user": _("User settings"), "project": _("Project settings"), "local": _("Local settings")}.get(
            source.scope, source.scope
        )
        state = "" if source.exists else _(" (no file)")
        click.echo(inert_line(_("{label}: {path}{state}").format(label=label, path=source.path, state=state)))
        for family, colour in (("allow", "green"), ("ask", "yellow"), ("deny", "red")):
            rules = source.ruleset.family(family)
            for index, rule in enumerate(rules):
                badge = click.style(f"{family.upper():<5}", fg=colour, bold=True) if index == 0 else " " * 5
                click.echo(f"  {badge}  {inert_line(rule.text)}")  # a rule's text comes from a file
        if source.ruleset.inert:
            badge = click.style("INERT", bold=True)
            click.echo(f"  {badge}  {inert_line(', '.join(sorted(source.ruleset.inert)))}")
        ignored = _("ignored (untrusted)")
        for rule in source.ignored.allow:
            text = inert_line(rule.text)
            click.echo(f"  {click.style('ALLOW', dim=True)}  {text}  {click.style(ignored, fg='yellow')}")
        if source.ignored.inert:
            names = ", ".join(sorted(source.ignored.inert))
            click.echo(f"  {click.style('INERT', dim=True)}  {inert_line(names)}  {click.style(ignored, fg='yellow')}")
    if not loaded.ignored.empty or loaded.ignored.inert:
        click.echo(
            _("This folder is not trusted: what its files grant is ignored. Review and trust it with `maia trust`.")
        )


def _tool_input(tool: str, text: str) -> dict[str, Any]:
    import json

    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except ValueError as error:
            raise click.BadParameter(_("INPUT looks like JSON but is not valid: {error}").format(error=error)) from None
        if isinstance(value, dict):
            return value
    from maia.core.registry import traits_of

    return {traits_of(tool).main_input or "value": text}


_EXIT = {"allow": 0, "ask": 1, "deny": 2}


@permissions.command(context_settings=CONTEXT_SETTINGS)
@click.argument("tool")
@click.argument("tool_input", metavar="INPUT")
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
@click.pass_context
def check(ctx: click.Context, tool: str, tool_input: str, as_json: bool) -> None:
    """Print the verdict (allow, ask or deny) for a call of TOOL with INPUT, and the deciding rule.

    INPUT is the command for Bash, the path for Read/Write/Edit/Glob/Grep, the URL for WebFetch,
    the name for Skill and Agent, or a JSON object holding the whole tool input.

    \b
    Exit status: 0 allow, 1 ask, 2 deny. A usage error also exits 2 and a
    broken settings file 1, with a message on stderr and nothing on stdout:
    scripts that must tell them apart read stdout (or --json).

    Example: maia permissions check Bash 'git status && rm -rf build'
    """
    import json

    from maia.permissions import explain
    from maia.permissions.sources import load_rules
    from maia.tools.custom import load_custom_tools

    env = environment()
    loaded = load_rules(env.home, env.launch)
    for message in loaded.warnings:
        warn(message)
    custom = {t.spec.name: t for t in load_custom_tools(env.launch, env.home).tools}
    from maia.permissions.defaults import safe_default

    call = _tool_input(tool, tool_input)
    decision = explain(tool, call, loaded.ruleset, env.launch, tool=custom.get(tool))
    decision = safe_default(tool, call, decision, env.launch, custom.get(tool))
    if as_json:
        click.echo(
            json.dumps(
                {
                    "verdict": decision.verdict.value,
                    "rule": decision.rule,
                    "reason": decision.reason,
                    "doubt": decision.doubt,
                },
                ensure_ascii=False,
            )
        )
    else:
        colour = {"allow": "green", "ask": "yellow", "deny": "red"}[decision.verdict.value]
        badge = click.style(decision.verdict.value.upper(), fg=colour, bold=True)
        click.echo(badge + f"  {inert_line(decision.reason)}")
    ctx.exit(_EXIT[decision.verdict.value])
