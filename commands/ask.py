"""``maia ask``: one request without a terminal, for scripts, CI and editors."""

from __future__ import annotations

import click

from maia.i18n import _

from . import CONTEXT_SETTINGS
from .complete import complete_models, complete_sessions
from .setup import environment, settings_for


def _piped(stream: object) -> bool:
    """stdin is a pipe or a socket (``git diff | maia ask …``): never a terminal, a file or /dev/null, so
    ``while read f; do maia ask "… $f"; done < list`` does not eat the list."""
    import os
    import stat

    try:
        mode = os.fstat(stream.fileno()).st_mode  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("prompt", required=False)
@click.option(
    "--model",
    "-m",
    metavar="NAME",
    shell_complete=complete_models,
    help=_("Model (litellm:NAME or NAME); default as for the chat."),
)
@click.option(
    "--output",
    "-o",
    type=click.Choice(["text", "json", "stream-json"]),
    default="text",
    show_default=True,
    help=_("text: the answer on stdout; json: one object at the end; stream-json: one event per line."),
)
@click.option("--json", "as_json", is_flag=True, help=_("The same as --output json."))
@click.option(
    "--allow",
    "allow",
    multiple=True,
    metavar="RULE",
    help=_("Allow calls matching RULE without asking (settings.json syntax, repeatable)."),
)
@click.option("--yes", "-y", is_flag=True, help=_("Allow every call that would ask (a deny still denies)."))
@click.option(
    "--mode",
    type=click.Choice(["ask", "edits", "auto", "plan"]),
    help=_(
        "Approval mode: edits makes file edits in the launch folder without asking, auto also runs commands "
        "in the namespace sandbox, plan writes and runs nothing (default: the Mode setting, else ask)."
    ),
)
@click.option("--max-iterations", type=click.IntRange(min=1), help=_("Model calls before stopping (exit 3)."))
@click.option(
    "--resume", "resume", metavar="NAME", shell_complete=complete_sessions, help=_("Carry on a saved session.")
)
@click.option("--continue", "continue_last", is_flag=True, help=_("Carry on the most recent session."))
@click.option("--no-save", is_flag=True, help=_("Do not save the session."))
@click.option(
    "--no-wait", is_flag=True, help=_("Fail at once when rate-limited, overloaded or unreachable instead of waiting.")
)
@click.option(
    "--max-wait",
    metavar="DURATION",
    help=_("Give up when waiting for the server would take longer than this in all (90s, 30m, 2h; default: wait)."),
)
@click.option(
    "--no-stdin", is_flag=True, help=_("Do not read piped standard input (by default it is attached to PROMPT).")
)
def ask(
    prompt: str | None,
    model: str | None,
    output: str,
    as_json: bool,
    allow: tuple[str, ...],
    yes: bool,
    mode: str | None,
    max_iterations: int | None,
    resume: str | None,
    continue_last: bool,
    no_save: bool,
    no_wait: bool,
    max_wait: str | None,
    no_stdin: bool,
) -> None:
    """Send PROMPT to the agent and print the answer; read the prompt from stdin when PROMPT is - or absent.

    When PROMPT is given and stdin is a pipe, the piped text is attached to the prompt as data
    (git diff | maia ask 'Review this diff'); a file redirected to stdin is left alone, and
    --no-stdin leaves a pipe alone too (in a `cat list | while read …` loop, say).

    The agent has the chat's tools, custom tools and skills, under the same permission rules. A call
    that would ask for confirmation is refused (the model is told why) unless --allow covers it or
    --yes is given. @file references and §skill work as in the chat; !command and /commands do not.
    Usage and rate limits are waited for until they reset (the time the server gives, or a growing
    backoff), failing servers and outages of the proxy for a while (see --max-wait, --no-wait).
    --continue carries on the
    newest session made by maia ask (chat sessions are left to maia chat).

    Exit codes: 0 done, 1 error, 2 bad usage or unknown model/session, 3 stopped by the iteration
    limit, 130 interrupted (Ctrl+C, SIGTERM, SIGHUP).
    """
    import asyncio
    import json
    import sys

    from maia.core.errors import UsageError
    from maia.core.inert import for_terminal
    from maia.core.settings import no_model_message, resolve_model
    from maia.frontends.ask import AskOptions, HeadlessUI, run_ask

    if resume and continue_last:
        raise UsageError(_("Use --resume NAME or --continue, not both."))
    wait_limit = None
    if max_wait is not None:
        from maia.workflows.duration import DurationError, parse_duration

        try:
            wait_limit = parse_duration(max_wait)
        except DurationError as error:
            raise UsageError(_("--max-wait: {error}").format(error=error)) from None
    if as_json:
        if output not in ("text", "json"):
            raise UsageError(_("Use --json or --output {output}, not both.").format(output=output))
        output = "json"
    piped = None
    if prompt is None or prompt == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError(_("Give a prompt: maia ask 'your request', or pipe it on stdin."))
        prompt = sys.stdin.read()
    elif sys.stdin is not None and not no_stdin and _piped(sys.stdin):
        piped = sys.stdin.read()  # `git diff | maia ask 'Review this diff'`: the diff is data for the prompt
    if not prompt.strip():
        raise UsageError(_("The prompt is empty."))
    env = environment()
    settings = settings_for(env)
    choice = resolve_model(model, env.launch, env.home, settings=settings)
    if choice is None:
        raise UsageError(no_model_message(env.home))
    ui = HeadlessUI(output, sys.stdout, sys.stderr)  # type: ignore[arg-type]
    options = AskOptions(
        prompt=prompt,
        model=choice.name,
        launch=env.launch,
        home=env.home,
        settings=settings,
        allow=allow,
        yes=yes,
        max_iterations=max_iterations,
        resume=resume,
        continue_last=continue_last,
        save=not no_save,
        wait=not no_wait,
        max_wait=wait_limit,
        stdin=piped,
        mode=mode,
    )
    try:
        report, code = asyncio.run(run_ask(options, ui))
    except KeyboardInterrupt:
        click.echo(_("Interrupted."), err=True)
        raise SystemExit(130) from None
    if output == "json":
        click.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    elif output == "stream-json":
        ui.emit({"type": "final", **report.to_json()})
    elif report.answer:
        # inert on a terminal; the exact text for a pipe (click would strip some escape sequences)
        click.echo(for_terminal(report.answer, sys.stdout), color=True)
    if report.error and output == "text":
        click.echo(for_terminal(_("Error: {message}").format(message=report.error), sys.stderr), err=True)
    if code:
        raise SystemExit(code)
