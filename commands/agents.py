"""``maia agents``: list, show and create sub-agents (``AGENT.md`` definitions)."""

from __future__ import annotations

import click

from maia.core.inert import inert, inert_line
from maia.i18n import _

from . import CONTEXT_SETTINGS
from .complete import complete_agents
from .setup import environment, warn


@click.group(context_settings=CONTEXT_SETTINGS)
def agents() -> None:
    """List, show and create sub-agents.

    A sub-agent is a folder with an AGENT.md file, in ./.maia/agents (this project) or
    ~/.maia/agents (every project); the project's wins on a name clash. The main agent hands
    tasks to them with its Agent tool; in the chat, &NAME TASK launches one yourself.
    """


@agents.command("list", context_settings=CONTEXT_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
def list_agents(as_json: bool) -> None:
    """The sub-agents that load, with their origin and description; problems on stderr."""
    import json

    from maia.subagents.definitions import agent_lines, load_agents

    env = environment()
    loaded = load_agents(env.home, env.launch)
    if as_json:
        payload = {"agents": [a.to_json() for a in loaded.agents.values()], "warnings": loaded.warnings}
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    for message in loaded.warnings:
        warn(message)
    if not loaded.agents:
        click.echo(_("No sub-agent. Create one with `maia agents create NAME`."))
        return
    for line in agent_lines(loaded.agents):
        click.echo(inert_line(line))  # names and descriptions come from files: never obeyed by the terminal


@agents.command("show", context_settings=CONTEXT_SETTINGS)
@click.argument("name", shell_complete=complete_agents)
def show_agent(name: str) -> None:
    """Everything about one sub-agent: file, settings and sections."""
    from maia.core.errors import NotFoundError, UsageError
    from maia.subagents.definitions import load_agents

    env = environment()
    loaded = load_agents(env.home, env.launch)
    agent = loaded.find(name)
    if agent is None:
        reason = next((text for folder, text in loaded.skipped.items() if folder.lower() == name.lower()), None)
        if reason is not None:
            raise UsageError(_("The sub-agent {name!r} does not load: {reason}").format(name=name, reason=reason))
        names = ", ".join(loaded.agents) or _("none")
        raise NotFoundError(_("No sub-agent named {name!r}. Sub-agents: {names}.").format(name=name, names=names))
    every = _("all")
    rows = [
        (_("File"), str(agent.path)),
        (_("Origin"), _("project") if agent.scope == "project" else _("user")),
        (_("Description"), agent.description),
        (_("Model"), agent.model or _("the main agent's")),
        (_("Tools"), ", ".join(agent.tools) if agent.tools is not None else every),
        (_("Skills"), (", ".join(agent.skills) or _("none")) if agent.skills is not None else every),
        (_("Effort"), _("{effort} (at most {count} steps)").format(effort=agent.effort, count=agent.max_iterations)),
        (_("Project instructions"), _("left out (omitMd)") if agent.omit_md else _("included")),
        (_("Trace"), _("saved") if agent.trace else _("not saved")),
    ]
    for family in ("allow", "ask", "deny"):
        if agent.permissions.get(family):
            rows.append((_("Rules ({family})").format(family=family), ", ".join(agent.permissions[family])))
    width = max(len(label) for label, _value in rows)
    click.echo(inert_line(agent.name))
    for label, value in rows:
        click.echo(inert_line(f"  {label:<{width}}  {value}"))
    sections = [
        ("Instructions system", agent.instructions),
        ("Missions", agent.missions),
        ("Constraints", agent.constraints),
        ("Output", agent.output),
    ]
    for title, text in sections:
        if text:
            click.echo(inert(f"\n# {title}\n{text}"))


@agents.command("create", context_settings=CONTEXT_SETTINGS)
@click.argument("name")
@click.option("--global", "is_global", is_flag=True, help=_("In ~/.maia/agents (every project), not ./.maia/agents."))
def create(name: str, is_global: bool) -> None:
    """Create NAME/AGENT.md from the commented template (an existing agent is never overwritten).

    NAME: letters, digits, _ . and -, at most 64 characters, not starting with a dot.
    """
    from maia.subagents.create import agents_folder, create_agent

    env = environment()
    path = create_agent(agents_folder("user" if is_global else "project", env.launch, env.home), name)
    click.echo(_("Created {path}").format(path=path))
    click.echo(_("Edit its description and sections; it loads at the next start of the chat, /clear or /new."))
