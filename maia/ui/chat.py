"""The interactive chat (§5.4-§5.6): start-up, the conversation loop, slash commands, rate-limit waits."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from maia.config import Settings
from maia.context.tokens import TokenCounter
from maia.context.window import resolve_context_size
from maia.conversation import Conversation
from maia.errors import MaiaError, ProviderError, RateLimited
from maia.i18n import _
from maia.provider.litellm import LiteLLMProvider
from maia.provider.models import ModelInfo, list_models
from maia.refs import resolve_references
from maia.sessions import SessionError, SessionManager, SessionStore, ensure_project_folders
from maia.signals import on_signal
from maia.skills import parse_invocation, resolve_invocation
from maia.ui.banner import banner_lines
from maia.ui.store import EndOfInput, History, Interrupt
from maia.ui.term import TerminalUI
from maia.user_shell import BANG_HELP, context_for, parse_bang, preview, run_bang

ASK_BEFORE_WAIT = 15 * 60
DEFAULT_WAITS = (5.0, 10.0, 20.0, 40.0, 60.0)


@dataclass(slots=True)
class ChatOptions:
    """What ``maia chat`` was started with."""

    launch: Path
    home: Path
    settings: Settings
    model: str | None
    resume: str | None = None
    continue_last: bool = False


Command = Callable[[str], Awaitable[None]]


class ChatApp:
    """One chat session in the terminal."""

    def __init__(self, options: ChatOptions, ui: TerminalUI) -> None:
        self.options = options
        self.ui = ui
        self.settings = options.settings
        self.conversation: Conversation | None = None
        self.store: SessionStore | None = None
        self.exiting = False
        self._current: asyncio.Task[Any] | None = None
        self.commands: dict[str, tuple[Command, str]] = {
            "help": (self.cmd_help, _("this help")),
            "permissions": (self.cmd_permissions, _("the permission rules loaded, per file")),
            "model": (self.cmd_model, _("choose another model (the conversation is kept)")),
            "models": (self.cmd_models, _("the models LiteLLM offers")),
            "clear": (self.cmd_clear, _("empty the conversation, reload MAIA.md, skills, tools, rules")),
            "compact": (self.cmd_compact, _("summarise the conversation and start again from the summary")),
            "rename": (self.cmd_rename, _("/rename NAME: rename this session")),
            "load": (self.cmd_load, _("/load [NAME]: carry on a saved session")),
            "delete": (self.cmd_delete, _("delete saved sessions")),
            "new": (self.cmd_new, _("save this session and start a new one")),
            "exit": (self.cmd_exit, _("save and quit")),
        }

    # --- start-up ---------------------------------------------------------------------------------

    async def _models(self) -> list[ModelInfo]:
        return await list_models(self.settings)

    async def choose_model(self) -> str | None:
        """The model from the options, else chosen in LiteLLM's list."""
        if self.options.model:
            return self.options.model
        self.ui.set_status(_("Loading the models"))
        try:
            models = await self._models()
        except ProviderError as error:
            self.ui.fail(_("{error}\nSettings: {path}").format(error=error.message, path=self.settings.path))
            return None
        finally:
            self.ui.set_status("")
        if not models:
            self.ui.fail(_("LiteLLM offers no model ({url}).").format(url=self.settings.models_url))
            return None
        chosen = await self.ui.select(_("Choose the model"), [m.name for m in models])
        return models[chosen.index].name if chosen.index is not None else None

    async def start(self) -> bool:
        """Banner, model, session folders, agent; False when the chat cannot start."""
        self.ui.print_lines(banner_lines(self.ui.width))
        self.ui.info(_("Working folder: {path}").format(path=self.options.launch))
        for warning in self.settings.warnings:
            self.ui.warn(warning)
        model = await self.choose_model()
        if model is None:
            return False
        folders_warning = ensure_project_folders(self.options.launch)
        if folders_warning:
            self.ui.warn(folders_warning)
        else:
            self.store = SessionStore.for_launch(self.options.launch)
        provider = LiteLLMProvider(self.settings, model)
        self.conversation = Conversation(
            launch=self.options.launch,
            home=self.options.home,
            provider=provider,
            ui=self.ui,
            sessions=SessionManager(self.store),
            counter=TokenCounter(),
            max_iterations=self.settings.max_iterations,
            list_models=self._models,
        )
        self.ui.info(_("Model: {model}").format(model=model))
        self.ui.session_name = lambda: self.conversation.sessions.name if self.conversation else None
        self._announce_setup()
        if self.options.resume or self.options.continue_last:
            await self._load_at_start()
        asyncio.get_running_loop().create_task(self._context_size())
        return True

    def _announce_setup(self) -> None:
        assert self.conversation is not None
        setup = self.conversation.setup
        for text in setup.infos:
            self.ui.info(text)
        for text in setup.notices + setup.warnings:
            self.ui.warn(text)

    async def _load_at_start(self) -> None:
        assert self.store is not None
        name = self.options.resume
        if name is None:
            name = next((i.name for i in self.store.listing() if i.error is None and i.agent is None), None)
            if name is None:
                self.ui.warn(_("No saved session to continue: a new session starts."))
                return
        await self.cmd_load(name)

    async def _context_size(self) -> None:
        assert self.conversation is not None
        size = await resolve_context_size(
            self.conversation.provider.model,
            list_models=self._models,
            setting=self.settings.max_context_tokens,
            provider=self.conversation.provider,
        )
        self.conversation.max_context = size.tokens
        if size.tokens:
            self.ui.info(
                _("Maximum context: {tokens} tokens ({source}).").format(tokens=f"{size.tokens:,}", source=size.source)
            )
        elif size.warning:
            self.ui.warn(size.warning)
        self.ui.set_context(maximum=size.tokens)

    async def recount(self) -> None:
        """Count the context off the event loop (the encoder loads on first use) and update the bar."""
        if self.conversation is not None:
            self.ui.set_context(await asyncio.to_thread(self.conversation.context_tokens))

    # --- loop -------------------------------------------------------------------------------------

    async def run(self) -> int:
        """The conversation loop until /exit, Ctrl+D, Ctrl+C at the prompt, SIGTERM or SIGHUP."""
        for sig in (signal.SIGTERM, signal.SIGHUP):
            on_signal(sig, self._on_signal)
        try:
            if not await self.start():
                return 1
            while not self.exiting:
                await self.recount()
                event = await self._cancellable(self.ui.read_input())
                if event is None or isinstance(event, Interrupt | EndOfInput):
                    break
                text = event.text
                if text.strip():
                    await self.handle(text)
            return 0
        finally:
            self.save(announce=True)
            if self.conversation is not None:
                aclose = getattr(self.conversation.provider, "aclose", None)
                if aclose is not None:
                    with contextlib.suppress(Exception):
                        await aclose()

    def _on_signal(self) -> None:
        self.exiting = True
        if self._current is not None:
            self._current.cancel()

    async def _cancellable(self, work: Awaitable[Any]) -> Any:
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
        if self.conversation is None:
            return
        try:
            name = self.conversation.save()
        except (SessionError, OSError) as error:
            self.ui.fail(_("The session could not be saved: {error}").format(error=error))
            return
        if announce and (name or self.conversation.sessions.current_file):
            self.ui.info(_("Session saved: {name}").format(name=name or self.conversation.sessions.current_file))

    async def handle(self, text: str) -> None:
        """``!``, ``§``, ``/``, then a prompt with ``@`` references (§5.5)."""
        assert self.conversation is not None
        bang = parse_bang(text)
        if bang is not None:
            await self.run_bang(bang.command, bang.error)
            return
        invocation = parse_invocation(text)
        if invocation is not None:
            skills = self.conversation.setup.skills
            if invocation.name is None:
                listing = "\n".join(f"- {s.name}: {s.description}" for s in skills.values())
                self.ui.info(listing or _("No skill is loaded (.maia/skills/<name>/SKILL.md)."))
                return
            try:
                prompt = resolve_invocation(invocation, skills)
            except MaiaError as error:
                self.ui.fail(error.message)
                return
            self.ui.show_user(text)
            await self.turn(prompt)
            return
        if text.startswith("/"):
            name, _sep, args = text[1:].partition(" ")
            command = self.commands.get(name.strip().lower())
            if command is None:
                self.ui.fail(_("Unknown command: /{name} (/help lists them).").format(name=name))
                return
            await command[0](args.strip())
            return
        self.ui.show_user(text)
        refs = resolve_references(text, self.options.launch)
        for warning in refs.warnings:
            self.ui.warn(warning)
        if refs.attached:
            self.ui.info(_("Attached: {paths}").format(paths=", ".join(refs.attached)))
        if refs.context:
            self.conversation.agent.pending_context.append(refs.context)
        await self.turn(text)

    async def run_bang(self, command: str | None, error: str | None) -> None:
        """Run a ``!`` command; its output joins the next request."""
        assert self.conversation is not None
        if error:
            self.ui.fail(error)
            return
        if command is None:
            self.ui.info(BANG_HELP)
            return
        self.ui.show_user(f"!{command}")
        self.ui.set_busy(True, _("Running {command}").format(command=command))
        try:
            result = await self._cancellable(run_bang(command, self.options.launch))
        finally:
            self.ui.set_busy(False)
        if result is None:
            self.ui.warn(_("Command interrupted."))
            return
        self.ui.show_output(preview(result), is_error=result.state != "exited" or result.exit_code != 0)
        self.conversation.agent.pending_context.append(context_for(command, result))

    async def _continue_series(self, limit: int) -> bool:
        return await self.ui.confirm(_("{count} iterations done. Continue?").format(count=limit))

    async def turn(self, text: str) -> None:
        """One request, with Ctrl+C rollback and rate-limit waits; errors are shown, the conversation kept."""
        assert self.conversation is not None
        conversation = self.conversation
        self.ui.set_busy(True, _("Thinking"))
        attempt = 0
        resume = False
        try:
            while True:
                work = (
                    conversation.resume(on_limit=self._continue_series)
                    if resume
                    else conversation.send(text, on_limit=self._continue_series)
                )
                try:
                    result = await self._cancellable(work)
                except RateLimited as error:
                    attempt += 1
                    if not await self.wait_rate_limit(error, attempt):
                        return
                    resume = conversation.agent.can_resume
                    continue
                except ProviderError as error:
                    self.ui.fail(error.message + (f"\n{error.hint}" if error.hint else ""))
                    return
                except MaiaError as error:
                    self.ui.fail(error.message)
                    return
                break
            if result is None:
                self.ui.store.live_text = ""
                self.ui.warn(_("Interrupted: the conversation is back as it was before this request."))
            elif result == "stopped":
                self.ui.info(_("Iteration stopped."))
            elif result == "max_iterations":
                self.ui.warn(_("Stopped: more than {count} iterations.").format(count=self.settings.max_iterations))
        finally:
            if self.ui.store.live_text:
                self.ui.on_text_end()
            self.ui.set_busy(False)
            self.save()

    async def wait_rate_limit(self, error: RateLimited, attempt: int) -> bool:
        """Count down to the retry time on the status line; False when the user cancels or declines."""
        delay = (
            error.retry_after
            if error.retry_after is not None
            else DEFAULT_WAITS[min(attempt - 1, len(DEFAULT_WAITS) - 1)]
        )
        at = datetime.now() + timedelta(seconds=delay)
        if delay > ASK_BEFORE_WAIT and not await self.ui.confirm(
            _("The server asks to wait until {time}. Wait?").format(time=at.strftime("%H:%M:%S"))
        ):
            self.ui.fail(error.message)
            return False

        async def countdown() -> bool:
            while (left := (at - datetime.now()).total_seconds()) > 0:
                self.ui.set_status(
                    _("Rate-limited, retrying at {time} ({seconds} s)").format(
                        time=at.strftime("%H:%M:%S"), seconds=int(left + 0.999)
                    )
                )
                await asyncio.sleep(min(1.0, left))
            return True

        done = await self._cancellable(countdown())
        self.ui.set_status(_("Thinking"))
        if done is None:
            self.ui.warn(_("Retry cancelled: the conversation is unchanged."))
            return False
        return True

    # --- slash commands ---------------------------------------------------------------------------

    async def cmd_help(self, args: str) -> None:
        """/help."""
        assert self.conversation is not None
        lines = [f"/{name}  {help_text}" for name, (_fn, help_text) in self.commands.items()]
        lines += [
            "!command  " + _("run a shell command"),
            "@path  " + _("attach a file or folder"),
            "§skill  " + _("run a skill"),
        ]
        skills = self.conversation.setup.skills
        if skills:
            lines.append(_("Skills: {names}").format(names=", ".join(sorted(skills))))
        lines.append(_("Keys: Enter send · Alt+Enter or Ctrl+J new line · ↑/↓ history · Ctrl+C interrupt or quit"))
        self.ui.info("\n".join(lines))

    async def cmd_permissions(self, args: str) -> None:
        """/permissions: rules per file with ALLOW / ASK / DENY."""
        assert self.conversation is not None
        rules = self.conversation.setup.rules
        if rules.ruleset.empty:
            self.ui.info(_("No permission rules defined: every tool use asks for confirmation."))
        for source in rules.sources:
            if source.ruleset.empty:
                continue
            lines = [str(source.path)]
            for family in ("allow", "ask", "deny"):
                entries = source.ruleset.family(family)
                if entries:
                    lines.append(f"{family.upper():<5}  " + "\n       ".join(r.text for r in entries))
            self.ui.info("\n".join(lines))

    async def cmd_models(self, args: str) -> None:
        """/models: the models LiteLLM offers (asked each time), the current one marked ●."""
        assert self.conversation is not None
        try:
            models = await self._models()
        except ProviderError as error:
            self.ui.fail(_("{error}\nSettings: {path}").format(error=error.message, path=self.settings.path))
            return
        current = self.conversation.provider.model
        lines = [_("Models from {url}:").format(url=self.settings.models_url)]
        lines += [f"{'●' if m.name == current else ' '} {m.name}" for m in models]
        self.ui.info("\n".join(lines))

    async def cmd_model(self, args: str) -> None:
        """/model: choose another model; the conversation is kept; the context size is asked again."""
        assert self.conversation is not None
        self.options.model = args or None
        model = await self.choose_model()
        if model is None:
            return
        provider = self.conversation.provider
        if isinstance(provider, LiteLLMProvider):
            provider.model = model
        self.ui.info(_("Model: {model}").format(model=model))
        await self._context_size()

    async def cmd_clear(self, args: str) -> None:
        """/clear."""
        assert self.conversation is not None
        self.conversation.clear()
        self.ui.info(_("Conversation cleared; instructions, skills, tools and rules reloaded."))
        self._announce_setup()

    async def cmd_compact(self, args: str) -> None:
        """/compact."""
        assert self.conversation is not None
        self.ui.set_busy(True, _("Compacting"))
        try:
            outcome = await self._cancellable(self.conversation.compact())
        except MaiaError as error:
            self.ui.fail(_("Compaction failed, nothing changed: {error}").format(error=error.message))
            return
        finally:
            self.ui.set_busy(False)
        if outcome is None:
            self.ui.info(_("Nothing to compact."))
            return
        self.ui.show_markdown(outcome.summary)
        if outcome.truncated:
            self.ui.warn(_("The summary may be incomplete (cut by the output limit)."))
        self.ui.info(
            _("Compacted: the conversation goes on as {name} (the previous one is kept as {old}).").format(
                name=outcome.name, old=outcome.previous or "-"
            )
        )

    async def cmd_rename(self, args: str) -> None:
        """/rename NAME."""
        assert self.conversation is not None
        try:
            name = self.conversation.sessions.rename(args)
        except MaiaError as error:
            self.ui.fail(error.message)
            return
        self.save()
        self.ui.info(_("This session is now called {name}.").format(name=name))

    async def cmd_load(self, args: str) -> None:
        """/load [NAME]: the current session is saved, the other one loaded (the model stays)."""
        assert self.conversation is not None
        if self.store is None:
            self.ui.fail(_("Sessions are off in this folder."))
            return
        name = args
        if not name:
            infos = [i for i in self.store.listing() if i.name != self.conversation.sessions.current_file]
            if not infos:
                self.ui.info(_("No other saved session."))
                return
            labels = [i.name + (_(" (unreadable)") if i.error else "") for i in infos]
            chosen = await self.ui.select(_("Load a session"), labels)
            if chosen.index is None:
                return
            name = infos[chosen.index].name
        try:
            saved = self.store.load(name)
        except MaiaError as error:
            self.ui.fail(error.message + (f"\n{error.hint}" if error.hint else ""))
            return
        previous = self.conversation.save()
        if previous:
            self.ui.warn(_("Session {name} saved.").format(name=previous))
        self.conversation.load(saved)
        self.ui.info(_("Session {name} loaded ({count} messages).").format(name=saved.name, count=len(saved.messages)))
        self._replay(saved.messages, saved.start_context)

    def _replay(self, messages: list[Any], start_context: str | None) -> None:
        from maia.contracts import TextBlock, ToolResultBlock, ToolUseBlock

        if start_context:
            self.ui.info(_("Starting context (summary):"))
            self.ui.show_markdown(start_context)
        for message in messages:
            for block in message.content:
                if isinstance(block, TextBlock) and block.text:
                    if message.role == "user":
                        self.ui.show_user(block.text[:1500] + ("…" if len(block.text) > 1500 else ""))
                    else:
                        self.ui.show_markdown(block.text)
                elif isinstance(block, ToolUseBlock):
                    self.ui.on_tool_call(block.name, str(block.input)[:200])
                elif isinstance(block, ToolResultBlock):
                    self.ui.on_tool_result("", block.content, block.is_error)

    async def cmd_delete(self, args: str) -> None:
        """/delete: several sessions, chosen with Space, confirmed with Delete (the current one excluded)."""
        assert self.conversation is not None
        if self.store is None:
            return
        infos = [i for i in self.store.listing() if i.name != self.conversation.sessions.current_file]
        if not infos:
            self.ui.info(_("No other saved session."))
            return
        chosen = await self.ui.select(
            _("Sessions to delete (Space: check · Delete: confirm)"), [i.name for i in infos], multi=True
        )
        if not chosen.indexes:
            return
        names = [infos[i].name for i in chosen.indexes]
        if not await self.ui.confirm(_("Delete {names}?").format(names=", ".join(names))):
            return
        for name, error in self.store.remove(names):
            if error:
                self.ui.fail(_("Cannot delete {name}: {error}").format(name=name, error=error))
            else:
                self.ui.info(_("Deleted {name}.").format(name=name))

    async def cmd_new(self, args: str) -> None:
        """/new: save, then a new agent and a new name."""
        assert self.conversation is not None
        saved = self.conversation.new_session()
        if saved:
            self.ui.warn(_("Session {name} saved.").format(name=saved))
        self.ui.info(_("New session: {name}").format(name=self.conversation.sessions.name))
        self._announce_setup()

    async def cmd_exit(self, args: str) -> None:
        """/exit."""
        self.exiting = True


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
