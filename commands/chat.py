"""``maia chat`` (and bare ``maia``): the interactive agent in the terminal."""

from __future__ import annotations

import click

from maia.i18n import _

from . import CONTEXT_SETTINGS
from .complete import complete_models, complete_sessions
from .setup import environment


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("prompt", required=False)
@click.option(
    "--model",
    "-m",
    metavar="SPEC",
    shell_complete=complete_models,
    help=_("Model (litellm:NAME or NAME); else MAIA_MODEL, ./.maia/config.json, ~/.maia/config.json, or a list."),
)
@click.option("--resume", metavar="NAME", shell_complete=complete_sessions, help=_("Carry on a saved session."))
@click.option("--continue", "continue_last", is_flag=True, help=_("Carry on the most recent session."))
def chat(prompt: str | None, model: str | None, resume: str | None, continue_last: bool) -> None:
    """Talk with the agent in this terminal (the default command); PROMPT is sent as the first request.

    Type a request and Enter; Alt+Enter or Ctrl+J for a new line; /help lists the commands;
    !command runs a shell command; @path attaches a file; §skill runs a skill. Ctrl+C interrupts
    a request (what the model said and did so far is kept, /undo reverts file changes) or, twice
    at the prompt, quits. The model chosen in the start-up list is remembered in ./.maia/config.json.

    Exit codes: 0 done, 1 error, 2 unknown session (--resume) or bad usage.
    """
    import asyncio
    import sys

    from maia.core.errors import MaiaError, UsageError
    from maia.core.settings import load_settings, resolve_model

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise MaiaError(_("maia chat needs a terminal (TTY). For scripts and pipes use `maia ask`."))
    if resume and continue_last:
        raise UsageError(_("Use --resume NAME or --continue, not both."))
    env = environment()
    if resume:
        from maia.sessions.store import SessionStore

        store = SessionStore.for_launch(env.launch)
        if store.find(resume) is None:  # said before the screen is taken, not after the banner
            raise store.not_found(resume)
    from maia.core.paths import settings_path

    if not settings_path(env.home).exists():
        # a first `maia`: offer the guided set-up rather than a JSON sample to copy by hand
        from .configure import run_setup

        click.echo(_("MAIA is not set up yet ({path} does not exist).").format(path=settings_path(env.home)))
        if not click.confirm(_("Set it up now?"), default=True):
            click.echo(_("Run `maia setup` when you are ready."))
            raise SystemExit(1)
        if not run_setup():
            raise SystemExit(1)
        click.echo()
    settings = load_settings(env.home)
    choice = resolve_model(model, env.launch, env.home, settings=settings)
    from maia.frontends.chat.app import ChatOptions, run_chat

    options = ChatOptions(
        launch=env.launch,
        home=env.home,
        settings=settings,
        model=choice.name if choice else None,
        resume=resume,
        continue_last=continue_last,
        prompt=prompt,
    )
    code = asyncio.run(run_chat(options))
    if code:
        raise SystemExit(code)
