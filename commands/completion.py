"""``maia completion bash|zsh|fish``: the shell completion script (Click's own mechanism underneath)."""

from __future__ import annotations

import click

from maia.i18n import _

from . import CONTEXT_SETTINGS


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the completion script for SHELL: commands, options, and values such as session names,
    agents, workflow ids, MCP servers and models (from the list `maia models` last fetched).

    \b
    bash:  echo 'eval "$(maia completion bash)"' >> ~/.bashrc
    zsh:   echo 'eval "$(maia completion zsh)"' >> ~/.zshrc
    fish:  maia completion fish > ~/.config/fish/completions/maia.fish
    """
    from click.shell_completion import get_completion_class

    from . import cli

    kind = get_completion_class(shell)
    if kind is None:  # click knows every shell the choice offers; a newer click might not
        raise click.UsageError(_("No completion for {shell}.").format(shell=shell))
    click.echo(kind(cli, {}, "maia", "_MAIA_COMPLETE").source())
