"""The interactive chat (§5.4-§5.6): a thin front end of the application layer in the terminal.

Start-up (banner, model, application), the conversation loop, the slash-command registry, the
countdown before a retry. Everything the conversation does is the application's.

The banner and the input box are drawn before the application's stack is imported, and the stack is
imported in a thread: keys typed meanwhile show in the box at once. The tokenizer is built in the
background once the chat is up (the bar shows an estimate until it is ready), so neither the first
keys nor the first request wait for it.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maia.core.errors import MaiaError, ProviderError
from maia.core.settings import Settings
from maia.core.signals import on_terminating_signals
from maia.frontends.chat.banner import banner_lines
from maia.frontends.chat.commands import ChatCompleter, ChatRegistry, default_registry
from maia.frontends.chat.store import EndOfInput, History, Interrupt
from maia.frontends.chat.term import TerminalUI
from maia.i18n import _, ngettext

if TYPE_CHECKING:
    from maia.agent.conversation import Compaction
    from maia.app.application import Application, StartReport
    from maia.app.approvals import ApprovalMode
    from maia.app.retry import Wait
    from maia.core.contracts import Message
    from maia.inputs.commands import Expanded
    from maia.inputs.prepare import AgentCall
    from maia.sessions.codec import SavedSession
    from maia.sessions.store import SessionInfo

ASK_BEFORE_WAIT = 15 * 60
MODE_CYCLE: dict[str, ApprovalMode] = {"ask": "edits", "edits": "auto", "auto": "plan", "plan": "ask"}


@dataclass(slots=True)
class ChatOptions:
    """What ``maia chat`` was started with."""

    launch: Path
    home: Path
    settings: Settings
    model: str | None
    resume: str | None = None
    continue_last: bool = False
    prompt: str | None = None  # the first request (`maia "fix the test"`)


@dataclass(slots=True)
class StartDetails:
    """What start-up found, kept for ``/status`` (the screen shows one summary line)."""

    lines: list[str] = field(default_factory=list)
    context: str = ""  # the maximum context and where it came from


PRELOAD_AFTER = 0.3  # seconds after the start before the tokenizer is built (a typed-ahead request is sent)


def _warm_up() -> None:
    """In the background once the chat is up: the tokenizer, and the modules of the Markdown renderer (rich,
    pygments), so that the first answer is neither counted nor drawn after an import."""
    import threading

    from maia.context import tokens

    tokens.preload_in_background()
    modules = ("rich.console", "rich.markdown", "rich.syntax", "rich.theme")
    threading.Thread(target=lambda: [importlib.import_module(m) for m in modules], daemon=True).start()


class ChatApp:
    """One chat in the terminal."""

    def __init__(self, options: ChatOptions, ui: TerminalUI, registry: ChatRegistry | None = None) -> None:
        self.options = options
        self.ui = ui
        self.registry = registry or default_registry()
        self._app: Application | None = None
        self.exiting = False
        self.exit_code = 0
        self._chooser_cancelled = False
        self._current: asyncio.Task[Any] | None = None
        self.details = StartDetails()
        self._counting: asyncio.Task[None] | None = None
        self.trust_mark = ""  # on the bar while the folder's grants are ignored

    @property
    def settings(self) -> Settings:
        """The settings in use (read again by /clear)."""
        return self._app.settings if self._app is not None else self.options.settings

    @property
    def app(self) -> Application:
        """The application (after start-up)."""
        assert self._app is not None
        return self._app

    # --- start-up ---------------------------------------------------------------------------------

    async def choose_model(self, current: str | None = None) -> str | None:
        """A model chosen in LiteLLM's list (the current one highlighted, type to filter); None when cancelled."""
        from maia.provider.models import list_models

        self.ui.set_status(_("Loading the models"))
        try:
            models = await (self._app.list_models() if self._app else list_models(self.settings))
        except ProviderError as error:
            self.ui.fail(_("{error}\nSettings: {path}").format(error=error.message, path=self.settings.path))
            return None
        finally:
            self.ui.set_status("")
        if not models:
            self.ui.fail(_("LiteLLM offers no model ({url}).").format(url=self.settings.models_url))
            return None
        names = [m.name for m in models]
        initial = names.index(current) if current in names else 0
        chosen = await self.ui.select(_("Choose the model"), names, initial=initial, filterable=True)
        if chosen.index is None:
            self._chooser_cancelled = True
            return None
        return names[chosen.index]

    async def start(self) -> bool:
        """Banner, model, application, the session to carry on; False when the chat cannot start."""
        self.ui.print_lines(banner_lines(self.ui.width, self.ui.height))
        for warning in self.settings.warnings:
            self.ui.warn(warning)
        self.ui.redraw()
        await asyncio.sleep(0)  # the banner and the box are on screen before the stack is imported
        # imported off the event loop: keys typed meanwhile are read and shown in the box at once
        await asyncio.to_thread(importlib.import_module, "maia.app.application")
        from maia.context import tokens

        if not await self.ask_trust():
            return False
        model = self.options.model
        if model is None:
            model = await self.choose_model()
            if model is None:
                if self._chooser_cancelled and not self.ui.closed:
                    self.ui.info(_("No model chosen: nothing to do."))
                else:
                    self.exit_code = 1
                return False
            self.remember_model(model)
        from maia.app.application import Application, AppOptions
        from maia.context.tokens import TokenCounter

        self._app = Application(
            AppOptions(
                launch=self.options.launch,
                home=self.options.home,
                settings=self.settings,
                model=model,
                origin="chat",
                reserved_commands=self.reserved_commands(),
                mcp_in_background=True,
            ),
            self.ui,
            counter=TokenCounter(ready=tokens.ready),
        )
        await self._app.start()
        self._app.conversation.on_compacted = self.on_compacted
        self.ui.session_name = lambda: self.app.sessions.name if self._app is not None else None
        self.ui.model_name = lambda: self.app.model if self._app is not None else None
        self.ui.on_cycle_mode = self.cycle_mode
        if self.settings.mode != "ask":
            self.set_mode(self.settings.mode, quiet=True)  # type: ignore[arg-type]  # checked by the schema
        self.ui.store.completer = ChatCompleter(self)
        self._app.on_source_report = self.announce_source
        self.announce(self._app.report, startup=True)
        self.ui.info(self.summary())
        self.watch_mcp()
        if self.options.resume or self.options.continue_last:
            try:
                picked = self._app.pick_session(resume=self.options.resume, continue_last=self.options.continue_last)
            except MaiaError as error:
                if self.options.resume:  # a name that does not exist: nothing to chat about (exit 2)
                    self.ui.fail(error.message + (f"\n{error.hint}" if error.hint else ""))
                    self.exit_code = int(error.exit_status)
                    return False
                self.ui.warn(
                    _("{error} A new session starts.").format(error=error.message)
                    + (f"\n{error.hint}" if error.hint else "")  # e.g. a session skipped as planted
                )
                picked = None
            if picked is not None:
                for warning in picked.warnings:
                    self.ui.warn(warning)
                for note in picked.notes:
                    self.ui.info(note)
                if not await self.open_session(picked.session):
                    self.exit_code = 1
                    return False
        asyncio.get_running_loop().create_task(self.announce_context_size(quiet=True))
        # the encoder is built once the chat is up, a moment after: its build holds the interpreter (tiktoken's
        # constructor keeps the GIL), which at start-up held the first keys back, and a request typed during
        # the start goes out first; the bar estimates meanwhile, with "~" (issue 29, item 2)
        asyncio.get_running_loop().call_later(PRELOAD_AFTER, _warm_up)
        return True

    async def ask_trust(self) -> bool:
        """Before anything runs: when the folder's files grant something and it is not trusted, show exactly
        what (or what changed since it was trusted) and ask; False when the terminal closed meanwhile."""
        from maia.core.trust import check, trust_folder

        state = check(self.options.launch, self.options.home)
        if not state.needs_question:
            return True
        if state.recorded:
            lines = [_("The files of {folder} grant more than when you trusted it:").format(folder=state.folder)]
            lines += [f"  + {line}" for line in state.added] + [f"  - {line}" for line in state.removed]
            lines.append(_("It now grants:"))
        else:
            lines = [_("{folder} is not a trusted folder. Its files grant:").format(folder=state.folder)]
        lines += [f"  {line}" for line in state.lines()]
        from maia.sessions.store import SessionStore

        sessions = SessionStore.for_launch(self.options.launch, self.options.home)
        foreign = sessions.foreign()  # history your MAIA did not write: carried on only once accepted
        if foreign:
            lines.append(_("Saved sessions your MAIA did not write here (trusted, they are accepted as yours):"))
            lines += [f"  {sessions.foreign_line(info)}" for info in foreign]
        lines.append(
            _(
                "Trusted, these apply (commands they allow run without asking); not trusted, they are ignored. "
                "Deny and ask rules apply either way."
            )
        )
        self.ui.warn("\n".join(lines))
        trusted = await self.ui.confirm(_("Trust this folder?"))
        if self.ui.closed:
            return False
        if trusted:
            try:
                trust_folder(self.options.launch, self.options.home, shown=state.grants)
            except (OSError, MaiaError) as error:
                self.ui.warn(
                    _("The trust could not be recorded ({error}); the grants stay ignored.").format(error=error)
                )
            else:
                for info in foreign:  # the ones shown, and only those
                    try:
                        sessions.accept(info.name)
                    except (OSError, MaiaError) as error:
                        self.ui.warn(str(error))
                self.ui.info(_("Trusted: {folder} (`maia trust --revoke` to undo).").format(folder=state.folder))
                return True
        self.trust_mark = _("untrusted: project grants ignored")
        self.ui.set_marks(self.trust_mark)
        self.ui.info(
            _("Not trusted: what {folder} grants is ignored (`maia trust` to trust it later).").format(
                folder=state.folder
            )
        )
        return True

    def summary(self) -> str:
        """The one start-up line: model, folder, what was loaded (details on /status)."""
        app = self.app
        loadout = app.conversation.loadout
        parts = [app.model, str(self.options.launch)]
        parts.append(self.grants_summary())
        if loadout.context_file is not None:
            parts.append(loadout.context_file.path.name)
        if app.skills:
            count = len(app.skills)
            parts.append(ngettext("{count} skill", "{count} skills", count).format(count=count))
        if app.agents:
            count = len(app.agents)
            parts.append(ngettext("{count} sub-agent", "{count} sub-agents", count).format(count=count))
        mcp = app.mcp
        if mcp is not None and mcp.servers():
            servers = mcp.servers()
            ok = sum(1 for s in servers if s.state == "ok")
            parts.append(_("MCP {ok}/{total}").format(ok=ok, total=len(servers)))
        return " · ".join(parts) + " · " + _("/status for details")

    def grants_summary(self) -> str:
        """What the project grants, named ("project: allows Bash, Write(**); 1 MCP server; 2 tools"), or that
        it is ignored (untrusted), or that it grants nothing."""
        from maia.core.trust import check

        state = check(self.options.launch, self.options.home)
        if not state.grants:
            return _("project grants nothing")
        if not state.trusted:
            return _("project: {grants} (ignored: untrusted)").format(grants=state.summary())
        return _("project: {grants}").format(grants=state.summary())

    def watch_mcp(self) -> None:
        """A short mark on the bar while an MCP server is down."""
        source = self.app.mcp
        if source is None:
            return

        def refresh() -> None:
            failing = source.failing()
            down = _("MCP down: {names}").format(names=", ".join(failing)) if failing else ""
            self.ui.set_marks(" · ".join(m for m in (self.trust_mark, down) if m))

        source.subscribe(refresh)
        refresh()

    def remember_model(self, model: str) -> None:
        """The model chosen in the list is kept in ./.maia/config.json (its other keys kept)."""
        import json

        from maia.core.storage import write_atomic

        path = self.options.launch / ".maia" / "config.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
            if not isinstance(data, dict):
                raise ValueError("not an object")
            data["model"] = model
            write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        except (OSError, ValueError) as error:
            self.ui.warn(_("The model choice could not be kept in {path}: {error}").format(path=path, error=error))
            return
        self.ui.info(
            _("Model {model} remembered in {path} (--model or /model to change).").format(model=model, path=path)
        )

    async def open_session(self, saved: SavedSession) -> bool:
        """Load a session; when another MAIA has it open, offer to carry on a copy instead."""
        from maia.sessions.store import SessionBusy

        if saved.name == self.app.sessions.current_file:
            self.ui.info(_("The session {name} is the one open here.").format(name=saved.name))
            return False
        try:
            saved = self.app.load(saved)
        except SessionBusy as busy:
            if not await self.ui.confirm(busy.message + " " + _("Carry on a copy of it here?")):
                self.ui.fail(busy.message)
                return False
            self.app.load_copy(saved)
            self.ui.info(_("Working on a copy: it will be saved under a new name."))
        except MaiaError as error:
            self.ui.fail(error.message + (f"\n{error.hint}" if error.hint else ""))
            return False
        self.replay(saved.messages, saved.start_context)
        return True

    def set_mode(self, mode: ApprovalMode, quiet: bool = False) -> None:
        """Switch the approval mode, show it on the bar and say what it means (``quiet``: the bar only)."""
        why = self.app.set_mode(mode)
        self.ui.set_approval_mode(mode)
        text = {
            "ask": _("Mode ask: calls that no rule allows ask first."),
            "edits": _("Mode edits: file edits inside the launch folder are made without asking; commands still ask."),
            "auto": _(
                "Mode auto: file edits inside the launch folder, and commands that run in the namespace sandbox, "
                "are made without asking; ask rules and what the sandbox refuses still ask."
            ),
            "plan": _("Mode plan: nothing is written or run; the model plans."),
        }[mode]
        if not quiet:
            self.ui.info(text)
        if why:
            self.ui.warn(_("Mode auto: {why}.").format(why=why))

    def cycle_mode(self) -> None:
        """Shift+Tab: ask → edits → auto → plan → ask."""
        if self._app is not None:
            self.set_mode(MODE_CYCLE.get(self.app.mode, "ask"))

    def announce(self, report: StartReport, startup: bool = False) -> None:
        """Show what starting (or reloading) found; at start-up the details wait for /status."""
        if startup:
            self.details.lines = [*report.infos, *report.notices]
        else:
            for text in report.infos:
                self.ui.info(text)
        for text in report.warnings if startup else report.notices + report.warnings:
            self.ui.warn(text)

    async def announce_context_size(self, quiet: bool = False) -> None:
        """Ask the current model's context size and show it on the bar (and in the log unless ``quiet``)."""
        size = await self.app.context_size()
        if size.tokens:
            text = _("Maximum context: {tokens} tokens ({source}).").format(
                tokens=f"{size.tokens:,}", source=size.source
            )
            self.details.context = text
            if not quiet:
                self.ui.info(text)
        if size.warning:  # an unknown size, or a proxy that cannot be reached at all
            self.details.context = size.warning if not size.tokens else f"{self.details.context}\n{size.warning}"
            self.ui.warn(size.warning)
        self.ui.set_context(maximum=size.tokens)

    def on_compacted(self, outcome: Compaction) -> None:
        """Say when and what a compaction did (automatic ones included)."""
        if outcome.reason == "auto":
            self.ui.warn(
                _(
                    "The context reached the compaction threshold ({tokens} tokens): the conversation was summarised."
                ).format(tokens=f"{outcome.tokens_before:,}" if outcome.tokens_before else "?")
            )
        elif outcome.reason == "midturn":
            self.ui.warn(_("The conversation was summarised in the middle of the turn; the turn carries on."))
        self.ui.show_markdown(outcome.summary)
        if outcome.truncated:
            self.ui.warn(_("The summary may be incomplete (cut by the output limit)."))
        self.ui.info(
            _("Compacted: the conversation goes on as {name}; the previous one is kept as {old}.").format(
                name=outcome.name, old=outcome.previous or _("(never saved: it was empty)")
            )
        )

    async def recount(self) -> None:
        """Count the context off the event loop and update the bar; while the tokenizer loads, an estimate,
        and the exact count follows as soon as it is ready."""
        if self._app is None:
            return
        conversation = self.app.conversation
        tokens = await asyncio.to_thread(conversation.context_tokens)
        estimated = conversation.counter is not None and conversation.counter.estimated
        self.ui.set_context(tokens, estimated=estimated)
        if estimated and self._counting is None:
            self._counting = asyncio.get_running_loop().create_task(self._count_when_ready())

    async def _count_when_ready(self) -> None:
        from maia.context import tokens

        await asyncio.to_thread(tokens.encoding)
        self._counting = None
        await self.recount()

    def cost(self) -> float | None:
        """What the requests of this chat cost so far (LiteLLM's ``x-litellm-response-cost``), if known."""
        costs = [u.cost for u in self.app.agent.usage if u.cost is not None] if self._app is not None else []
        return sum(costs) if costs else None

    # --- loop -------------------------------------------------------------------------------------

    async def run(self) -> int:
        """The conversation loop until /exit, Ctrl+D, Ctrl+C at the prompt, a terminating signal or the
        terminal closing."""
        remove_handlers = on_terminating_signals(self._on_signal)
        try:
            if not await self.start():
                return self.exit_code
            if self.options.prompt and self.options.prompt.strip():
                await self.guarded(self.options.prompt)
            while not self.exiting and not self.ui.closed:
                await self.recount()
                event = await self.cancellable(self.ui.read_input())
                if event is None or isinstance(event, Interrupt | EndOfInput):
                    break
                text = event.text
                if text.strip():
                    await self.guarded(text)
            return self.exit_code
        finally:
            remove_handlers()
            self.save(announce=True)
            if self._app is not None:
                await self._app.aclose()

    def _on_signal(self) -> None:
        self.exiting = True
        self.ui.close_input()  # a question or a list open now is cancelled
        if self._current is not None:
            self._current.cancel()

    async def cancellable(self, work: Awaitable[Any]) -> Any:
        """Run something that Ctrl+C (during a turn) or a signal may cancel; None when cancelled."""
        task = asyncio.ensure_future(work)
        if self.exiting:  # a signal arrived while nothing could be cancelled: do not start waiting
            task.cancel()
        self._current = task

        def interrupt() -> None:
            task.cancel()

        self.ui.on_interrupt = interrupt
        try:
            return await self._current
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            return None
        finally:
            self._current = None
            self.ui.on_interrupt = None

    def save(self, announce: bool = False) -> None:
        """Save the session (only when it changed, never an empty one)."""
        from maia.sessions.store import SessionError

        if self._app is None:
            return
        try:
            name = self.app.save()
        except (SessionError, OSError) as error:
            self.ui.fail(_("The session could not be saved: {error}").format(error=error))
            return
        current = name or self.app.sessions.current_file
        if announce and current:
            self.ui.info(_("Session saved: {name} (maia chat --resume {name} to carry on).").format(name=current))

    async def save_off_loop(self) -> None:
        """Save after a turn in a thread: a long session's serialisation never freezes the screen."""
        from maia.sessions.store import SessionError

        if self._app is None:
            return
        try:
            await asyncio.to_thread(self.app.save)
        except (SessionError, OSError) as error:
            self.ui.fail(_("The session could not be saved: {error}").format(error=error))

    def reserved_commands(self) -> tuple[str, ...]:
        """The chat's own command names and aliases: a custom command may not shadow them."""
        names: list[str] = []
        for command in self.registry:
            names.extend([command.name, *command.aliases])
        return tuple(names)

    async def run_custom_command(self, text: str, name: str, args: str) -> None:
        """``/name args`` of a Markdown command: its prompt filled in (``!`` lines run), sent with the
        command's model and allowed-tools for that turn."""
        self.ui.show_user(text)
        self.ui.set_busy(True, _("Preparing /{name}").format(name=name))
        try:
            with self.ui.watch_command("/" + name) as on_output:
                expanded = await self.cancellable(self.app.run_command(name, args, on_output))
        finally:
            self.ui.set_busy(False)
        if expanded is None:
            self.ui.warn(_("Command interrupted."))
            return
        prepared = self.app.prepare(expanded.prompt)
        from maia.inputs.prepare import Prompt

        if isinstance(prepared, Prompt):  # the body's @file references, read as in any prompt
            for warning in prepared.warnings:
                self.ui.warn(warning)
            if prepared.attached:
                self.ui.info(_("Attached: {paths}").format(paths=", ".join(prepared.attached)))
            for context in prepared.context:
                self.app.attach(context)
        await self.turn(expanded.prompt, command=expanded)

    def skill_named(self, name: str) -> str | None:
        """The loaded skill called ``name`` (case-insensitive): skills also run as ``/name``."""
        lowered = name.lower()
        return next((n for n in self.app.skills if n.lower() == lowered), None)

    async def guarded(self, text: str) -> None:
        """Handle one input; whatever goes wrong is said in one line and the chat goes on (the session kept).

        An unexpected error (a bug) has its traceback logged in MAIA's home rather than ending the chat.
        """
        try:
            await self.handle(text)
        except MaiaError as error:
            self.ui.fail(error.message + (f"\n{error.hint}" if error.hint else ""))
        except Exception as error:  # the front end's guard: a bug in one request must not end the chat
            from maia.core.errors import unexpected_message

            self.ui.fail(unexpected_message(error, self.options.home))
            if self.ui.store.live_text:
                self.ui.on_text_end()
            self.ui.set_busy(False)
            await self.save_off_loop()

    async def handle(self, text: str) -> None:
        """``!``, ``§``, ``/``, then a prompt with ``@`` references (§5.5)."""
        from maia.inputs.prepare import AgentCall, Bang, Invalid, Prompt, SkillList, Slash

        prepared = self.app.prepare(text)
        if isinstance(prepared, Bang):
            await self.run_bang(prepared.command)
        elif isinstance(prepared, Invalid):
            self.ui.fail(prepared.message)
        elif isinstance(prepared, SkillList):
            listing = "\n".join(f"- {s.name}: {s.description}" for s in self.app.skills.values())
            self.ui.info(listing or _("No skill is loaded (.maia/skills/<name>/SKILL.md)."))
        elif isinstance(prepared, Slash):
            command = self.registry.get(prepared.name)
            if command is None and prepared.name.startswith("mcp__"):
                await self.run_mcp_prompt(text, prepared.name, prepared.args)
                return
            if command is None and prepared.name in self.app.commands.commands:
                await self.run_custom_command(text, prepared.name, prepared.args)
                return
            skill = self.skill_named(prepared.name) if command is None else None
            if skill is not None:  # "/name args" runs the skill, as "§name args" does
                await self.handle(f"§{skill} {prepared.args}".rstrip())
                return
            if command is None:
                self.ui.fail(_("Unknown command: /{name} (/help lists them).").format(name=prepared.name))
                return
            self.ui.show_user(text)
            await command.run(self, prepared.args)
        elif isinstance(prepared, AgentCall):
            await self.run_agent(text, prepared)
        else:
            assert isinstance(prepared, Prompt)
            self.ui.show_user(text)
            for warning in prepared.warnings:
                self.ui.warn(warning)
            if prepared.attached:
                self.ui.info(_("Attached: {paths}").format(paths=", ".join(prepared.attached)))
            for context in prepared.context:
                self.app.attach(context)
            for error in await self.app.attach_resources(prepared.text):
                self.ui.warn(error)
            await self.turn(prepared.text, typed=text)

    async def run_bang(self, command: str | None) -> None:
        """Run a ``!`` command (its output shown live while it runs); its output joins the next request."""
        from maia.inputs.shell import BANG_HELP, preview

        if command is None:
            self.ui.info(BANG_HELP)
            return
        self.ui.show_user(f"!{command}")
        self.ui.set_busy(True, _("Running {command}").format(command=command))
        try:
            with self.ui.watch_command(command) as on_output:
                result = await self.cancellable(self.app.run_bang(command, on_output))
        finally:
            self.ui.set_busy(False)
        if result is None:
            self.ui.warn(_("Command interrupted."))
            return
        self.ui.show_output(preview(result), is_error=result.state != "exited" or result.exit_code != 0)

    async def run_mcp_prompt(self, text: str, name: str, args: str) -> None:
        """``/mcp__server__prompt args``: the server's prompt, filled in, sent as the request."""
        from maia.mcp.source import ToolFailure, parse_prompt_arguments

        source = self.app.mcp
        info = source.find_prompt("/" + name) if source is not None else None
        if source is None or info is None:
            self.ui.fail(_("Unknown command: /{name} (/mcp lists the MCP prompts).").format(name=name))
            return
        try:
            arguments = parse_prompt_arguments(info, args)
            messages = await source.get_prompt(info.server, info.name, arguments)
        except (ValueError, ToolFailure) as error:
            self.ui.fail(str(error))
            return
        prompt = "\n\n".join(text for _role, text in messages if text.strip())
        if not prompt:
            self.ui.fail(_("The MCP prompt {name} returned nothing to send.").format(name=name))
            return
        self.ui.show_user(text)
        await self.turn(prompt)

    def announce_source(self, report: Any) -> None:
        """What a source said when (re)started."""
        for text in report.infos:
            self.ui.info(text)
        for text in report.warnings:
            self.ui.warn(text)

    async def run_agent(self, text: str, call: AgentCall) -> None:
        """``&name task``: a sub-agent at once; its summary is shown and joins the next request."""
        from maia.subagents.launcher import failure_message
        from maia.subagents.tool import agents_listing

        if call.name is None:
            self.ui.info(agents_listing(self.app.agents))
            return
        if self.app.mode == "plan":
            self.ui.fail(_("Plan mode: sub-agents write and run things. Switch the mode (/mode) to run one."))
            return
        self.ui.show_user(text)
        self.ui.set_busy(True, _("Sub-agent {name} at work").format(name=call.name))
        try:
            result = await self.cancellable(self.app.run_agent_directly(call.name, call.task))
        except MaiaError as error:
            self.ui.fail(error.message)
            return
        finally:
            self.ui.set_busy(False)
        if result is None:
            self.ui.warn(_("Sub-agent interrupted."))
            return
        if not result.ok:
            self.ui.fail(failure_message(result))
            return
        self.ui.show_markdown(result.summary)
        self.ui.info(_("Its answer joins your next request."))  # "finished in N s" was said as it ended

    async def _continue_series(self, limit: int) -> bool:
        return await self.ui.confirm(_("{count} iterations done. Continue?").format(count=limit))

    async def turn(self, text: str, typed: str | None = None, command: Expanded | None = None) -> None:
        """One request with Ctrl+C rollback and the shared retry policy; errors are shown, the conversation kept.
        ``typed``: the line as the user typed it, when ``text`` is not that (a skill's prompt…)."""
        self.ui.set_busy(True, _("Thinking"))
        before = self.app.conversation.marker()
        try:
            try:
                result = await self.cancellable(
                    self.app.send(
                        text,
                        on_wait=self.wait_before_retry,
                        on_limit=self._continue_series,
                        typed=typed,
                        command=command,
                    )
                )
            except MaiaError as error:
                if self.ui.store.live_text:
                    self.ui.on_text_end()  # the partial answer stays above the error that ended it
                self.ui.fail(
                    error.message + (f"\n{error.hint}" if isinstance(error, ProviderError) and error.hint else "")
                )
                return
            if result is None:
                if self.ui.store.live_text:
                    self.ui.on_text_end()  # what the user saw stays on screen
                self.ui.requeue()  # messages queued for after this turn come back into the box, unsent
                if self.app.conversation.marker() != before:  # judged by what the conversation holds now
                    self.ui.warn(
                        _("Interrupted: what the model said and the tool calls it finished are kept; it is told.")
                    )
                else:
                    self.ui.warn(
                        _("Interrupted: the conversation is back as it was before this request, which is in the input.")
                    )
                    draft = self.ui.store.input.text
                    if text not in draft:  # nothing lost: the request can be sent again
                        self.ui.store.input.set(text + ("\n" + draft if draft.strip() else ""))
            elif result == "stopped":
                self.ui.info(_("Iteration stopped."))
            elif result == "max_iterations":
                self.ui.warn(_("Stopped: more than {count} iterations.").format(count=self.settings.max_iterations))
        finally:
            if self.ui.store.live_text:
                self.ui.on_text_end()
            self.ui.set_busy(False)
            await self.save_off_loop()

    async def wait_before_retry(self, wait: Wait) -> bool:
        """Count down to the retry on the status line (one line, whatever the cause); False when the user
        cancels (Esc) or declines a long wait, or a 429 that keeps coming with no time given."""
        from maia.app.waits import clock, wait_line

        if self.ui.store.live_text:
            self.ui.on_text_end()  # an answer cut by the failure stays as it was seen; the retry starts afresh
        at = wait.until
        if wait.delay > ASK_BEFORE_WAIT and not await self.ui.confirm(
            _("Limited until {time}. Wait, and resume then?").format(time=clock(at, wait.delay))
        ):
            return False
        if wait.persistent and not await self.ui.confirm(
            _("The server keeps refusing (HTTP 429) without saying until when ({count} times). Keep trying?").format(
                count=wait.attempt
            )
        ):
            return False

        async def countdown() -> bool:
            from datetime import datetime

            while (left := (at - datetime.now()).total_seconds()) > 0:
                self.ui.set_status(_("{line}: Esc to cancel").format(line=wait_line(wait, left)))
                await asyncio.sleep(min(1.0, left))
            return True

        done = await countdown()
        self.ui.set_status(_("Thinking"))
        return done

    # --- sessions on screen -----------------------------------------------------------------------

    def session_label(self, info: SessionInfo) -> str:
        """A session in a list: name, date, size, first prompt."""
        if info.error:
            return info.name + _(" (unreadable)")
        when = info.updated_at[:16].replace("T", " ") if info.updated_at else ""
        kind = _(" · sub-agent {name}").format(name=info.agent) if info.agent else ""
        if info.foreign:  # /load refuses it: said in the list already
            kind += _(" · not written by your MAIA here")
        prompt = f" · {info.first_prompt}" if info.first_prompt else ""
        return _("{name} · {when} · {count} messages{kind}{prompt}").format(
            name=info.name, when=when, count=info.messages, kind=kind, prompt=prompt
        )

    def replay(self, messages: list[Message], start_context: str | None) -> None:
        """Show a loaded conversation as it was shown live: summaries of calls, results in call order."""
        from maia.core.contracts import TextBlock, ToolResultBlock, ToolUseBlock
        from maia.sessions.codec import typed_text

        if start_context:
            self.ui.info(_("Starting context (summary):"))
            self.ui.show_markdown(start_context)
        tools = self.app.conversation.agent.tools
        calls: dict[str, ToolUseBlock] = {}
        for message in messages:
            for block in message.content:
                if isinstance(block, TextBlock) and block.text:
                    if message.role == "user":
                        words = typed_text(block)  # what the user typed, not the files attached to it
                        if words.strip():
                            self.ui.show_user(words[:1500] + ("…" if len(words) > 1500 else ""))
                    else:
                        self.ui.show_markdown(block.text)
                elif isinstance(block, ToolUseBlock):
                    calls[block.id] = block
                elif isinstance(block, ToolResultBlock):
                    call = calls.get(block.tool_use_id)
                    name = call.name if call else "?"
                    tool = tools.get(name)
                    summary = ""
                    if call is not None and tool is not None:
                        try:
                            summary = tool.describe(call.input)
                        except Exception:  # a summary is cosmetic
                            summary = ""
                    self.ui.on_tool_call(name, summary)
                    self.ui.on_tool_result(name, block.content, block.is_error)


def history_path(home: Path, launch: Path) -> Path:
    """Input history is kept per launch folder, across runs."""
    digest = hashlib.sha1(str(launch).encode()).hexdigest()[:16]
    return home / "history" / f"{digest}.json"


async def run_chat(options: ChatOptions) -> int:
    """Start the terminal UI and the chat; the terminal is always given back."""
    ui = TerminalUI(history=History.load(history_path(options.home, options.launch)), theme=options.settings.theme)
    ui.launch = options.launch
    ui.start()
    try:
        return await ChatApp(options, ui).run()
    finally:
        ui.stop()
