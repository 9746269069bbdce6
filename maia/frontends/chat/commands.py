"""The chat's core slash commands (§5.6), registered in the application's slash registry.

Each command is a function of the chat and its argument text; capabilities register theirs the
same way (see :func:`core_commands`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from maia.app.slash import SlashCommand, SlashRegistry
from maia.core.errors import MaiaError, ProviderError
from maia.frontends.chat.complete import FileIndex, Item, fuzzy, quote_path
from maia.i18n import _, ngettext

if TYPE_CHECKING:
    from maia.frontends.chat.app import ChatApp

ChatRegistry = SlashRegistry["ChatApp"]


def _columns(rows: list[tuple[str, str]]) -> list[str]:
    width = max((len(left) for left, _right in rows), default=0)
    return [f"{left.ljust(width)}  {right}" for left, right in rows]


async def cmd_help(chat: ChatApp, args: str) -> None:
    """/help: every command, the input prefixes, the keys, the skills."""
    rows = chat.registry.help_rows()
    rows += [
        ("!command", _("run a shell command; its output joins your next request")),
        ("@path", _("attach a file or folder")),
        ("§skill, /skill", _("run a skill")),
        ("&agent task", _("run a sub-agent now; its answer joins your next request")),
    ]
    from maia.inputs.commands import help_rows as custom_rows

    rows += custom_rows(chat.app.commands)
    lines = _columns(rows)
    skills = chat.app.skills
    if skills:
        lines.append(_("Skills: {names}").format(names=", ".join(sorted(skills))))
    lines.append(_("Keys:"))
    lines.extend(
        "  " + line
        for line in _columns(
            [
                (_("Enter"), _("send (while a turn runs: queue, sent when it ends; ↑ edits it, Esc drops it)")),
                (_("Alt+Enter, Ctrl+J"), _("new line")),
                (
                    _("Esc, Ctrl+C"),
                    _("interrupt the turn; Ctrl+C also clears the input, or, twice when it is empty, quits"),
                ),
                (_("Ctrl+D"), _("quit (on an empty input)")),
                (_("Shift+Tab"), _("approval mode: ask → edits → plan")),
                (_("/ and @ , Tab"), _("complete a command, a skill, a file")),
                (_("↑/↓, Ctrl+R"), _("history (by line in a text of several lines), search it")),
                (
                    _("Ctrl+K, Ctrl+U, Ctrl+W"),
                    _("delete to the end, to the start, the word before; Ctrl+Y puts it back"),
                ),
                (_("Alt+B/F, Ctrl+←/→"), _("move by word; Alt+Backspace deletes a word")),
                (_("Ctrl+O"), _("show or hide the model's reasoning")),
                (_("Ctrl+L, Ctrl+Z"), _("redraw; suspend (fg to come back)")),
                (_("at a question"), _("y yes · n no · a always (project or session) · s stop · PgUp/PgDn scroll")),
            ]
        )
    )
    chat.ui.info("\n".join(lines))


async def cmd_permissions(chat: ChatApp, args: str) -> None:
    """/permissions: rules per file with ALLOW / ASK / DENY, and this session's; ``remove [RULE]`` removes one
    that MAIA wrote (an "always" answer)."""
    words = args.split(None, 1)
    if words and words[0] == "remove":
        await _remove_rule(chat, words[1].strip() if len(words) > 1 else "")
        return
    if words:
        chat.ui.fail(_("Usage: /permissions, or /permissions remove [RULE]."))
        return
    rules = chat.app.conversation.loadout.rules
    session = chat.app.session_rules
    if rules.ruleset.empty and not session:
        chat.ui.info(
            _(
                "No permission rules defined: reading and searching inside the launch folder is allowed "
                "(secret-looking files excepted); every other tool use asks for confirmation."
            )
        )
    scopes = {"user": _("user"), "project": _("project"), "local": _("local")}
    ignored = _("ignored (untrusted)")
    for source in rules.sources:
        if source.ruleset.empty and source.ignored.empty and not source.ignored.inert:
            continue
        lines = [f"{scopes.get(source.scope, source.scope)}: {source.path}"]
        for family in ("allow", "ask", "deny"):
            entries = source.ruleset.family(family)
            if entries:
                lines.append(f"{family.upper():<5}  " + "\n       ".join(r.text for r in entries))
        lines.extend(f"ALLOW  {r.text}  {ignored}" for r in source.ignored.allow)
        if source.ignored.inert:
            lines.append(f"INERT  {', '.join(sorted(source.ignored.inert))}  {ignored}")
        chat.ui.info("\n".join(lines))
    if session:
        chat.ui.info(_("session") + "\n" + "ALLOW  " + "\n       ".join(session))
    if session or any(s.scope == "local" and not s.ruleset.empty for s in rules.sources):
        chat.ui.info(_("/permissions remove [RULE] removes one of this session's or of settings.local.json."))


async def _remove_rule(chat: ChatApp, rule: str) -> None:
    """``/permissions remove [RULE]``: without RULE, a list of the rules MAIA wrote to choose from."""
    if not rule:
        local = [s for s in chat.app.conversation.loadout.rules.sources if s.scope == "local"]
        written = [r.text for s in local for f in ("allow", "ask", "deny") for r in s.ruleset.family(f)]
        choices = list(dict.fromkeys([*chat.app.session_rules, *written]))
        if not choices:
            chat.ui.info(_('No rule to remove: MAIA removes only the rules it wrote (answers "always").'))
            return
        chosen = await chat.ui.select(_("Rule to remove"), choices, filterable=True)
        if chosen.index is None:
            return
        rule = choices[chosen.index]
    try:
        chat.ui.info(chat.app.forget(rule))
    except MaiaError as error:
        chat.ui.fail(error.message)


async def cmd_models(chat: ChatApp, args: str) -> None:
    """/models: the models LiteLLM offers (asked each time), the current one marked ●."""
    try:
        models = await chat.app.list_models()
    except ProviderError as error:
        chat.ui.fail(_("{error}\nSettings: {path}").format(error=error.message, path=chat.settings.path))
        return
    current = chat.app.model
    lines = [_("Models from {url}:").format(url=chat.settings.models_url)]
    lines += [f"{'●' if m.name == current else ' '} {m.name}" for m in models]
    chat.ui.info("\n".join(lines))


async def cmd_model(chat: ChatApp, args: str) -> None:
    """/model [NAME]: another model (one the proxy lists); the conversation is kept."""
    name = args.strip() or await chat.choose_model(current=chat.app.model)
    if not name:
        return
    try:
        await chat.app.set_model(name)
    except MaiaError as error:
        chat.ui.fail(error.message + (f"\n{error.hint}" if error.hint else ""))
        return
    chat.ui.info(_("Model: {model}").format(model=name))
    await chat.announce_context_size()


async def cmd_clear(chat: ChatApp, args: str) -> None:
    """/clear: the cleared conversation stays loadable under its own name; rules, instructions, custom
    tools and skills are read again."""
    try:
        kept = await asyncio.to_thread(chat.app.clear)  # a slow disk never freezes the screen
    except MaiaError as error:
        chat.ui.fail(_("The conversation was not cleared: {error}").format(error=error.message))
        return
    report = await chat.app.reload()
    chat.ui.info(
        _("Conversation cleared; instructions, rules, custom tools and skills read again.")
        + ("\n" + _("The previous conversation is kept as {name} (/load).").format(name=kept) if kept else "")
    )
    chat.announce(report)


async def cmd_compact(chat: ChatApp, args: str) -> None:
    """/compact [FOCUS]: summarise the conversation (keeping FOCUS in particular) and start from the summary."""
    chat.ui.set_busy(True, _("Compacting"))
    try:
        outcome = await chat.cancellable(chat.app.conversation.compact(focus=args or None))
    except MaiaError as error:
        chat.ui.fail(_("Compaction failed, nothing changed: {error}").format(error=error.message))
        return
    finally:
        chat.ui.set_busy(False)
    if outcome is None:
        chat.ui.info(_("Nothing to compact."))


async def cmd_rename(chat: ChatApp, args: str) -> None:
    """/rename NAME."""
    if not args.strip():
        chat.ui.fail(_("Give the new name: /rename NAME."))
        return
    try:
        chat.app.sessions.rename(args)
        name = chat.app.save() or chat.app.sessions.name
    except MaiaError as error:
        chat.ui.fail(error.message)
        return
    chat.ui.info(_("This session is now called {name}.").format(name=name))


async def cmd_load(chat: ChatApp, args: str) -> None:
    """/load [NAME]: the current session is saved, the other one loaded (the model stays)."""
    store = chat.app.store
    if store is None:
        chat.ui.fail(_("Sessions are off in this folder."))
        return
    name = args.strip()
    current = chat.app.sessions.current_file
    if not name:
        infos = [i for i in store.listing() if i.name != current]
        if not infos:
            chat.ui.info(_("No other saved session."))
            return
        labels = [chat.session_label(i) for i in infos]
        chosen = await chat.ui.select(_("Load a session (type to filter)"), labels, filterable=True)
        if chosen.index is None:
            return
        name = infos[chosen.index].name
    try:
        saved = store.load(name)
        previous = chat.app.save()
    except MaiaError as error:
        chat.ui.fail(error.message + (f"\n{error.hint}" if error.hint else ""))
        return
    if previous:
        chat.ui.info(_("Session {name} saved.").format(name=previous))
    count = len(saved.messages)
    if await chat.open_session(saved):
        chat.ui.info(_("Session {name} loaded ({count} messages).").format(name=saved.name, count=count))


async def cmd_delete(chat: ChatApp, args: str) -> None:
    """/delete: several sessions, chosen with Space, confirmed (the current one excluded)."""
    store = chat.app.store
    if store is None:
        chat.ui.fail(_("Sessions are off in this folder."))
        return
    current = chat.app.sessions.current_file
    infos = [i for i in store.listing() if i.name != current]
    if not infos:
        chat.ui.info(_("No other saved session."))
        return
    chosen = await chat.ui.select(
        _("Sessions to delete (Space: check · Enter: confirm)"),
        [chat.session_label(i) for i in infos],
        multi=True,
    )
    if not chosen.indexes:
        return
    names = [infos[i].name for i in chosen.indexes]
    if not await chat.ui.confirm(_("Delete {names}?").format(names=", ".join(names))):
        return
    for name, error in store.remove(names):
        if error:
            chat.ui.fail(_("Cannot delete {name}: {error}").format(name=name, error=error))
        else:
            chat.ui.info(_("Deleted {name}.").format(name=name))


async def cmd_new(chat: ChatApp, args: str) -> None:
    """/new: save, then an empty conversation under a new name (nothing is read again)."""
    try:
        saved = await asyncio.to_thread(chat.app.conversation.new_session)
    except MaiaError as error:
        chat.ui.fail(_("No new session: this one could not be saved ({error}).").format(error=error.message))
        return
    if saved:
        chat.ui.info(_("Session {name} saved.").format(name=saved))
    chat.ui.info(_("New session: {name}").format(name=chat.app.sessions.name))


async def cmd_sandbox(chat: ChatApp, args: str) -> None:
    """/sandbox: the OS sandbox under the commands MAIA runs."""
    from maia.process.sandbox.policy import sandbox_mode, status_lines

    chosen = sandbox_mode(chat.settings)[1]
    chat.ui.info("\n".join(status_lines(chat.app.sandbox, chosen=chosen)))


async def cmd_undo(chat: ChatApp, args: str) -> None:
    """/undo [N]: revert the files the last N requests changed (Write/Edit) and rewind the conversation."""
    from maia.app.changes import summarize

    try:
        count = int(args) if args.strip() else 1
    except ValueError:
        chat.ui.fail(_("Give a number of requests: /undo 2."))
        return
    if count < 1:
        chat.ui.fail(_("Give a number of requests of at least 1."))
        return
    outcome = chat.app.undo(count)
    if outcome is None:
        chat.ui.info(_("Nothing to undo in this conversation."))
        return
    result, rewound = outcome
    launch = chat.options.launch
    lines = [
        ngettext("Undone: the last request.", "Undone: the last {count} requests.", result.turns).format(
            count=result.turns
        )
    ]
    if result.restored:
        lines.append(_("Restored: {files}").format(files=summarize(result.restored, launch)))
    if result.removed:
        lines.append(_("Removed (they did not exist before): {files}").format(files=summarize(result.removed, launch)))
    if not result.restored and not result.removed and not result.skipped:
        lines.append(_("No file had been changed with Write or Edit."))
    lines.append(
        _("The conversation is back to before that request.")
        if rewound
        else _("The conversation was replaced since (compaction, /load, /clear): it is kept as it is.")
    )
    lines.append(_("Changes made by shell commands (Bash, !) and by sub-agents are not tracked and were not undone."))
    chat.ui.info("\n".join(lines))
    for path, why in result.skipped:
        chat.ui.warn(_("{file} not restored: {why}").format(file=summarize([path], launch), why=why))


async def cmd_diff(chat: ChatApp, args: str) -> None:
    """/diff: what the agent changed with Write and Edit in this conversation, and in a git repository
    ``git diff HEAD`` of those files (what commands changed in them too)."""
    from maia.app.changes import git_diff

    changes = chat.app.changes
    diffs = changes.diff(chat.options.launch)
    if not diffs:
        chat.ui.info(_("The agent changed no file with Write or Edit in this conversation."))
        return
    for _path, text in diffs:
        chat.ui.show_diff(text)
    chat.ui.info(_("Changes made by shell commands (Bash, !) and by sub-agents are not tracked here."))
    against_head = await asyncio.to_thread(git_diff, chat.options.launch, changes.changed_files)
    if against_head and against_head.strip():
        chat.ui.info(_("git diff HEAD of these files (changes made by commands included):"))
        chat.ui.show_diff(against_head)


async def cmd_agents(chat: ChatApp, args: str) -> None:
    """/agents: the sub-agents this folder offers."""
    from maia.subagents.tool import agents_listing

    chat.ui.info(agents_listing(chat.app.agents))


async def cmd_create_agent(chat: ChatApp, args: str) -> None:
    """/createAgent NAME: a new AGENT.md from the commented template, in the project or for every project."""
    from maia.subagents.create import agents_folder, create_agent, validate_agent_name

    name = args.strip()
    if not name:
        chat.ui.fail(_("Give the new agent's name: /createAgent NAME (letters, digits, _ . -)."))
        return
    try:
        name = validate_agent_name(name)
    except MaiaError as error:
        chat.ui.fail(error.message)
        return
    chosen = await chat.ui.select(
        _("Where should the agent {name} live?").format(name=name),
        [_("Project (./.maia/agents)"), _("Global (~/.maia/agents, every project)")],
    )
    if chosen.index is None:
        return
    folder = agents_folder("project" if chosen.index == 0 else "user", chat.options.launch, chat.options.home)
    try:
        path = create_agent(folder, name)
    except MaiaError as error:
        chat.ui.fail(error.message)
        return
    chat.ui.info(_("Created {path}: fill in its sections; it is loaded at the next start or /clear.").format(path=path))


async def cmd_mcp(chat: ChatApp, args: str) -> None:
    """/mcp [reconnect [NAME]]: the MCP servers, OK / FAIL with the cause, their tools, prompts, resources."""
    source = chat.app.mcp
    words = args.split()
    if source is None:
        chat.ui.info(_("No MCP server: declare one with `maia mcp add` (see docs/mcp.md)."))
        return
    if words[:1] == ["reconnect"]:
        chat.ui.set_busy(True, _("Reconnecting"))
        try:
            report = await chat.cancellable(source.reconnect(words[1] if len(words) > 1 else None))
        finally:
            chat.ui.set_busy(False)
        if report is not None:
            chat.app.refresh_tools()
            chat.announce_source(report)
    elif words:
        chat.ui.fail(_("Unknown /mcp argument: {arg} (try /mcp or /mcp reconnect [NAME]).").format(arg=words[0]))
        return
    servers = source.servers()
    if not servers:
        chat.ui.info(
            _("No MCP server is declared ({mcp}, ./.mcp.json): `maia mcp add` declares one.").format(
                mcp=chat.options.home / "mcp.json"
            )
        )
        return
    for status in servers:
        kind = {"ok": "ok", "fail": "fail"}.get(status.state, "info")
        line = _("{name} ({transport}, {origin}) {target}").format(
            name=status.name, transport=status.transport, origin=status.origin, target=status.target
        )
        if status.state == "ok":
            line += " · " + _("{count} tools").format(count=status.tools)
        elif status.state == "fail":
            line += "\n" + _("cause: {cause}").format(cause=status.cause or "?")
        else:
            line += "\n" + _("{state}: {reason}").format(state=status.state, reason=status.reason)
        chat.ui.message(kind, line)
    prompts = source.prompts()
    if prompts:
        chat.ui.info(
            _("MCP prompts (run them as slash commands):")
            + "".join(f"\n/{p.command}  {p.description}".rstrip() for p in prompts)
        )
    resources = source.resources()
    if resources:
        chat.ui.info(
            _("MCP resources (attach them with @server:uri):")
            + "".join(f"\n@{r.server}:{r.uri}  {r.name}".rstrip() for r in resources[:50])
        )


async def cmd_mode(chat: ChatApp, args: str) -> None:
    """/mode [ask|edits|auto|plan]: how tool calls are approved (Shift+Tab cycles)."""
    from maia.app.approvals import MODES

    wanted = args.strip().lower()
    if wanted and wanted not in MODES:
        chat.ui.fail(_("Unknown mode {mode!r}: ask, edits, auto or plan.").format(mode=wanted))
        return
    if wanted:
        chat.set_mode(wanted)
        return
    chat.ui.info(
        _("Approval mode: {mode}.").format(mode=chat.app.mode)
        + "\n"
        + _(
            "ask: every call that no rule allows asks · edits: file edits inside the launch folder are made "
            "without asking (not .maia/, .git/…), commands still ask · auto: edits, and commands that run in the "
            "namespace sandbox, without asking · plan: nothing is written or run, the model plans. Deny rules "
            "always win."
        )
    )


def _permission_summary(chat: ChatApp) -> str:
    """One line: the rule files in force and how many rules each holds, and this session's rules."""
    rules = chat.app.conversation.loadout.rules
    session = chat.app.session_rules
    counts = [
        f"{s.path} ({len(s.ruleset.allow) + len(s.ruleset.ask) + len(s.ruleset.deny)})"
        for s in rules.sources
        if s.exists and not s.ruleset.empty
    ]
    if session:
        counts.append(_("this session ({count})").format(count=len(session)))
    if not counts:
        return _(
            "No permission rules defined: reading and searching inside the launch folder is allowed "
            "(secret-looking files excepted); every other tool use asks for confirmation."
        )
    return _("Permission rules loaded: {files}.").format(files=", ".join(counts))


async def cmd_status(chat: ChatApp, args: str) -> None:
    """/status: model, context, session, mode, cost; what start-up loaded; MCP servers' health."""
    app = chat.app
    store = chat.ui.store
    cost = chat.cost()
    used = _("{tokens} tokens").format(tokens=f"{store.context_tokens:,}")
    if store.context_max:
        used = _("{tokens} / {maximum} tokens ({percent}%)").format(
            tokens=f"{store.context_tokens:,}",
            maximum=f"{store.context_max:,}",
            percent=round(100 * store.context_tokens / store.context_max),
        )
    rows = [
        (_("Model:"), app.model),
        (_("Context:"), used + (" " + _("(estimated)") if store.context_estimated else "")),
        (_("Session:"), app.sessions.current_file or app.sessions.name or _("not saved")),
        (_("Mode:"), app.mode),
        (_("Cost so far:"), f"${cost:.4f}" if cost is not None else _("unknown (the proxy sends no cost)")),
        (_("Folder:"), str(chat.options.launch)),
    ]
    lines = _columns(rows)
    if chat.details.context:
        lines.append(chat.details.context)
    # the rules as they are now ("always" answers add some after start-up), not as start-up found them
    none = _("No permission rules defined: {rest}").split("{rest}")[0]
    loaded = _("Permission rules loaded: {files}.").split("{files}")[0]
    lines.extend(line for line in chat.details.lines if not line.startswith((none, loaded)))
    lines.append(_permission_summary(chat))
    source = app.mcp
    for status in source.servers() if source is not None else []:
        state = {"ok": _("OK, {count} tools").format(count=status.tools)}.get(status.state, status.state)
        cause = f" ({status.cause})" if status.state == "fail" and status.cause else ""
        lines.append(_("MCP server {name}: {state}{cause}").format(name=status.name, state=state, cause=cause))
    from maia.process.sandbox.policy import sandbox_mode, status_lines

    lines.extend(status_lines(app.sandbox, chosen=sandbox_mode(chat.settings)[1])[:1])
    chat.ui.info("\n".join(lines))


async def cmd_copy(chat: ChatApp, args: str) -> None:
    """/copy [N]: the last answer, or its Nth code block, to the clipboard (OSC 52)."""
    block: int | None = None
    if args.strip():
        try:
            block = int(args)
        except ValueError:
            chat.ui.fail(_("Give the number of a code block: /copy 2."))
            return
    copied = chat.ui.copy_answer(block)
    if copied is None:
        if not chat.ui.last_answer:
            chat.ui.fail(_("No answer to copy yet."))
        elif block is not None:
            chat.ui.fail(_("The last answer has no code block {number}.").format(number=block))
        else:
            chat.ui.fail(_("This terminal does not take text for the clipboard."))
        return
    text, removed = copied
    report = chat.ui.copy_report
    if report is not None and (report.failed or len(report.reached) > 1):
        # tmux, or several ways: say which reached the text, which did not, and how to fix it
        lines = [
            ngettext(
                "Copied {count} character to: {places}.", "Copied {count} characters to: {places}.", len(text)
            ).format(count=len(text), places="; ".join(report.reached))
        ]
        if report.failed:
            lines.append(_("Not reached: {places}.").format(places="; ".join(report.failed)))
        if report.advice:
            lines.append(report.advice)
        chat.ui.info("\n".join(lines))
    else:
        chat.ui.info(
            ngettext(
                "Copied {count} character to the clipboard.", "Copied {count} characters to the clipboard.", len(text)
            ).format(count=len(text))
        )
    if removed:
        chat.ui.warn(
            ngettext(
                "{count} control character was left out: pasted, it could drive a terminal or a shell.",
                "{count} control characters were left out: pasted, they could drive a terminal or a shell.",
                removed,
            ).format(count=removed)
        )


async def cmd_hooks(chat: ChatApp, args: str) -> None:
    """/hooks: the hooks in force with their source, and a project's ignored ones; custom commands too."""
    from maia.app.hooks import hook_lines

    config = chat.app.hooks.config
    lines = hook_lines(config)  # ui.info makes the text inert
    if not lines:
        lines = [_('No hook is configured ("hooks" in settings.json: see docs/hooks.md).')]
    commands = chat.app.commands
    if commands.commands or commands.ignored:
        lines.append(_("Custom commands:"))
        for name, command in sorted(commands.commands.items()):
            lines.append(f"  /{name}  ({command.source}: {command.path})")
        for command, why in commands.ignored:
            lines.append(f"  /{command.name}  {why}  ({command.path})")
    chat.ui.info("\n".join(lines))


async def cmd_exit(chat: ChatApp, args: str) -> None:
    """/exit."""
    chat.exiting = True


def core_commands() -> list[SlashCommand[ChatApp]]:
    """The commands of spec §5.6, in the order ``/help`` lists them."""
    return [
        SlashCommand("help", _("this help"), cmd_help),
        SlashCommand(
            "permissions", _("the permission rules loaded, per file; remove one"), cmd_permissions, "[remove [RULE]]"
        ),
        SlashCommand("model", _("choose another model (the conversation is kept)"), cmd_model, "[NAME]"),
        SlashCommand("models", _("the models LiteLLM offers"), cmd_models),
        SlashCommand(
            "clear", _("start afresh (the old conversation stays loadable); reread rules, tools, skills"), cmd_clear
        ),
        SlashCommand(
            "compact", _("summarise the conversation and start again from the summary"), cmd_compact, "[FOCUS]"
        ),
        SlashCommand("rename", _("rename this session"), cmd_rename, "NAME"),
        SlashCommand("load", _("carry on a saved session"), cmd_load, "[NAME]"),
        SlashCommand("delete", _("delete saved sessions"), cmd_delete),
        SlashCommand("new", _("save this session and start a new one"), cmd_new),
        SlashCommand(
            "mode", _("how tool calls are approved: ask, edits, auto or plan (Shift+Tab)"), cmd_mode, "[MODE]"
        ),
        SlashCommand("undo", _("revert the files the last request(s) changed, and the conversation"), cmd_undo, "[N]"),
        SlashCommand(
            "diff", _("what the agent changed with Write and Edit (and git diff HEAD of those files)"), cmd_diff
        ),
        SlashCommand("agents", _("the sub-agents this folder offers (&NAME TASK runs one)"), cmd_agents),
        SlashCommand("createAgent", _("create a sub-agent from the commented template"), cmd_create_agent, "NAME"),
        SlashCommand("mcp", _("the MCP servers (OK/FAIL), their prompts and resources"), cmd_mcp, "[reconnect [NAME]]"),
        SlashCommand("sandbox", _("the OS sandbox under shell commands: policy, writable folders"), cmd_sandbox),
        SlashCommand("status", _("model, context, session, mode, cost, what was loaded, MCP health"), cmd_status),
        SlashCommand("copy", _("copy the last answer (or its Nth code block) to the clipboard"), cmd_copy, "[N]"),
        SlashCommand("hooks", _("the hooks and custom commands in force, and those ignored"), cmd_hooks),
        SlashCommand("exit", _("save and quit"), cmd_exit, aliases=("quit",)),
    ]


def default_registry() -> ChatRegistry:
    """The registry the chat starts with: the core commands, then each capability's."""
    registry: ChatRegistry = SlashRegistry()
    for command in core_commands():
        registry.add(command)
    return registry


class ChatCompleter:
    """What ``/`` and ``@`` offer in the chat: commands, skills and MCP prompts; the launch folder's files."""

    def __init__(self, chat: ChatApp) -> None:
        self.chat = chat
        self.index = FileIndex(chat.options.launch, on_ready=self._files_ready)

    def _files_ready(self) -> None:
        store = self.chat.ui.store
        store.refresh_menu(force=True)
        self.chat.ui.redraw()

    def slash(self, prefix: str) -> list[Item]:
        """Commands (an exact name first), then skills, then MCP prompts, whose name starts with ``prefix``."""
        lowered = prefix.lower()
        commands = sorted(self.chat.registry.matching(prefix), key=lambda c: c.name.lower() != lowered)
        items = [
            Item(
                f"/{c.name}" + (f" {c.usage}" if c.usage else ""),
                f"/{c.name}" + (" " if c.usage else ""),
                c.summary,
                submit=not c.usage or c.usage.startswith("["),
            )
            for c in commands
        ]
        app = self.chat._app
        if app is None:
            return items
        for name, custom in sorted(app.commands.commands.items()):
            if name.startswith(lowered):
                hint = f" {custom.argument_hint}" if custom.argument_hint else ""
                items.append(Item(f"/{name}{hint}", f"/{name} ", custom.description or _("custom command")))
        for name, skill in sorted(app.skills.items()):
            if name.lower().startswith(lowered) and self.chat.registry.get(name) is None:
                items.append(Item(f"/{name}", f"/{name} ", _("skill: {text}").format(text=skill.description)))
        source = app.mcp
        for prompt in source.prompts() if source is not None else []:
            if prompt.command.lower().startswith(lowered):
                items.append(Item(f"/{prompt.command}", f"/{prompt.command} ", prompt.description))
        return items

    def files(self, query: str) -> tuple[list[Item], str]:
        """Files and folders of the launch folder matching ``query`` (fuzzy); a note while they are listed."""
        listing = self.index.get()
        if listing is None:
            return [], _("listing files…")
        items = []
        for path in fuzzy(listing, query):
            folder = path.endswith("/")
            items.append(Item(path, "@" + quote_path(path) + ("" if folder else " "), _("folder") if folder else ""))
        return items, "" if items else _("no file matches")
