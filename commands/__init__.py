"""The ``maia`` command: a Click group whose subcommands are imported only when used."""

from __future__ import annotations

import contextlib
import importlib
import inspect
from typing import Any, NoReturn

import click

from maia import __version__
from maia.core.errors import Interrupted, MaiaError
from maia.i18n import N_, _, use_for_libraries

use_for_libraries()  # Click's own words ("Usage:", "Options"…) come from MAIA's catalog too

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# name → (module:attribute, one-line help). The help is here so `maia --help` imports no subcommand.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "agents": ("maia.commands.agents:agents", N_("List, show and create sub-agents (AGENT.md).")),
    "approve": ("maia.commands.workflow_steer:approve", N_("Allow (or deny) what a workflow waits for.")),
    "ask": ("maia.commands.ask:ask", N_("Send one request without a terminal (scripts, CI, editors).")),
    "chat": ("maia.commands.chat:chat", N_("Talk with the agent in this terminal (the default command).")),
    "completion": ("maia.commands.completion:completion", N_("Print the shell completion script (bash, zsh, fish).")),
    "hooks": ("maia.commands.hooks:hooks", N_("List the hooks in force and test one event's hooks on a sample.")),
    "logs": ("maia.commands.workflow_view:logs", N_("Print a workflow's log (-f: follow it).")),
    "mcp": ("maia.commands.mcp:mcp", N_("MCP servers: list, test, add and remove (tools from other programs).")),
    "models": ("maia.commands.models:models", N_("List the models your LiteLLM server offers.")),
    "permissions": ("maia.commands.permissions:permissions", N_("Show the permission rules and test a tool call.")),
    "reply": ("maia.commands.workflow_steer:reply", N_("Answer the question a workflow asked.")),
    "result": ("maia.commands.workflow_view:result", N_("Print a workflow's final answer.")),
    "resume": ("maia.commands.workflows:resume", N_("Carry on a workflow that ended in error.")),
    "run": ("maia.commands.workflows:run", N_("Run an autonomous workflow (a parent agent and its sub-agents).")),
    "sandbox": ("maia.commands.sandbox:sandbox", N_("Show the OS sandbox under shell commands (Linux Landlock).")),
    "sessions": ("maia.commands.sessions:sessions", N_("List, show, rename and delete saved sessions.")),
    "setup": (
        "maia.commands.configure:setup",
        N_("Set up MAIA: your proxy's address and key, tested, and a default model."),
    ),
    "stop": ("maia.commands.workflow_steer:stop", N_("Stop a running workflow.")),
    "trust": ("maia.commands.trust:trust", N_("Show what a folder grants and trust it (--list, --revoke).")),
    "worker": ("maia.commands.workflows:worker", N_("Run queued workflows on this machine (Redis Queue).")),
    "workflow": (
        "maia.commands.workflow_view:workflow",
        N_("Show one workflow: state, sub-agents, requests (--watch)."),
    ),
    "workflows": ("maia.commands.workflow_view:workflows", N_("List the workflows and their states.")),
}


class ReportedError(click.ClickException):
    """A :class:`MaiaError` on its way out: shown without a traceback, with its own exit status."""

    def __init__(self, error: MaiaError) -> None:
        super().__init__(error.message)
        self.exit_code = int(error.exit_status)  # type: ignore[misc]  # click sets it per instance too
        self.hint = error.hint

    def show(self, file: Any = None) -> None:
        import sys

        from maia.core.inert import for_terminal

        # an error may quote a server's or a file's text: never obeyed by the terminal
        click.echo(for_terminal(_("Error: {message}").format(message=self.message), sys.stderr), err=True)
        if self.hint:
            click.echo(for_terminal(self.hint, sys.stderr), err=True)


_TRANSLATED: set[str] = set()


def _translate_help(command: click.Command) -> None:
    """Put the translation of each docstring help (``maia.i18n.tool`` extracts them) in place.

    Click keeps a command's docstring as its help; the catalog holds it cleaned as ``inspect.cleandoc``
    does. The help is replaced only when a translation exists, so English help stays byte for byte.
    """
    if command.help:
        english = inspect.cleandoc(command.help)
        translated = _(english)
        if translated != english:
            command.help = translated
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _translate_help(sub)


PIPE_CLOSED = 141  # the status of a Unix tool ended by SIGPIPE (128 + 13), as shells report it


def _reader_gone() -> bool:
    """Whether standard output is a pipe whose reader went away (a broken pipe elsewhere, a socket or a
    child's stdin, stays an error)."""
    import select
    import sys

    if not hasattr(select, "poll"):
        return True
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _fd, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def _end_quietly() -> NoReturn:
    """Standard output's reader went away: what is left to print goes nowhere, and MAIA ends without a word
    as a Unix tool ended by SIGPIPE does (status 141)."""
    import os
    import sys

    with contextlib.suppress(AttributeError, OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the exit-time flush of what is buffered goes nowhere
        os.close(devnull)
    raise click.exceptions.Exit(PIPE_CLOSED)


class LazyGroup(click.Group):
    """A group that imports each subcommand's module on first use and maps errors to exit codes."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:  # `maia --help | head -1`: the help is printed while the arguments are parsed
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError:
            if _reader_gone():
                _end_quietly()
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MaiaError as error:
            raise ReportedError(error) from None
        except KeyboardInterrupt:
            raise ReportedError(Interrupted()) from None
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except OSError as error:  # a full disk or a read-only home is the machine's state, not a bug
            if isinstance(error, BrokenPipeError) and _reader_gone():
                _end_quietly()  # `maia sessions list | head`: the reader had what it wanted
            from maia.core.errors import unexpected_message
            from maia.core.paths import maia_home
            from maia.core.storage import describe_storage_error, storage_error

            if storage_error(error):
                raise ReportedError(MaiaError(describe_storage_error(error))) from None
            raise ReportedError(MaiaError(unexpected_message(error, maia_home()))) from None
        except Exception as error:  # the last guard: a bug is one line, its traceback logged in MAIA's home
            from maia.core.errors import unexpected_message
            from maia.core.paths import maia_home

            raise ReportedError(MaiaError(unexpected_message(error, maia_home()))) from None

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """``maia "fix the failing test"`` starts the chat with that first request; a mistyped command
        name (``maia sesions``) is still an error with a suggestion, never sent to the model."""
        import difflib

        name = args[0] if args else ""
        if name in SUBCOMMANDS or name.startswith("-") or ctx.resilient_parsing:
            return super().resolve_command(ctx, args)
        close = difflib.get_close_matches(name.lower(), list(SUBCOMMANDS), n=1, cutoff=0.75)
        if close and " " not in name.strip():
            raise click.UsageError(
                _("No such command {name!r}. Did you mean {close!r}? (To ask the agent: maia chat {name})").format(
                    name=name, close=close[0]
                ),
                ctx,
            )
        chat = self.get_command(ctx, "chat")
        return "chat", chat, list(args)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """``maia --model NAME``, ``maia --continue``: an option the group does not know is the chat's (bare
        ``maia`` is the chat), so it is parsed as ``maia chat …`` rather than refused."""
        own = {"--version", *ctx.help_option_names}
        if args and args[0].startswith("-") and args[0] not in own and not ctx.resilient_parsing:
            args = ["chat", *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = SUBCOMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr = entry[0].split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        if entry[0] not in _TRANSLATED:
            _TRANSLATED.add(entry[0])
            _translate_help(command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _(SUBCOMMANDS[name][1])) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section(_("Commands")):
                formatter.write_dl(rows)


@click.group(
    name="maia",
    cls=LazyGroup,
    context_settings=CONTEXT_SETTINGS,
    invoke_without_command=True,
    help=_(
        "MAIA: a command-line AI coding assistant for any model behind your LiteLLM proxy.\n\n"
        'Without a command, maia starts the chat; maia "REQUEST" starts it with a first request, and the '
        "chat's options work here too (maia --model NAME, maia --continue). "
        "Settings live in ~/.maia/settings.json (MAIA_HOME overrides the folder)."
    ),
)
@click.version_option(__version__, "--version", prog_name="maia", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Root group; bare ``maia`` starts the chat."""
    if ctx.invoked_subcommand is None:
        command = ctx.command.get_command(ctx, "chat") if isinstance(ctx.command, click.Group) else None
        if command is not None:
            ctx.invoke(command)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``maia`` console script."""
    from maia.process.sandbox.selfguard import mark_non_dumpable

    mark_non_dumpable()  # same-user processes outside the sandbox cannot read MAIA's memory or environment
    try:
        cli.main(args=argv, prog_name="maia")
    finally:
        import sys

        try:  # what is still buffered is written now, while a closed pipe can still be told apart
            sys.stdout.flush()
        except BrokenPipeError:
            with contextlib.suppress(click.exceptions.Exit):
                _end_quietly()
            sys.exit(PIPE_CLOSED)  # a closed pipe at the end replaces the status
