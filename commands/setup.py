"""What every subcommand needs first: the launch folder, the MAIA home, the settings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from maia.core.paths import launch_dir, maia_home
from maia.i18n import _

if TYPE_CHECKING:
    from maia.core.settings import Settings


@dataclass(frozen=True, slots=True)
class Env:
    """The folders a command works with."""

    launch: Path
    home: Path


def environment() -> Env:
    """The launch folder (MAIA_CWD > INIT_CWD > cwd) and MAIA home (MAIA_HOME > ~/.maia)."""
    return Env(launch=launch_dir(), home=maia_home())


def warn(message: str) -> None:
    """Print a warning on stderr."""
    from maia.core.inert import inert

    # a warning quotes files' text (a malformed rule, an agent's header): never obeyed by the terminal
    click.echo(inert(_("Warning: {message}").format(message=message)), err=True)


def settings_for(env: Env) -> Settings:
    """Load the user's settings, printing their warnings on stderr."""
    from maia.core.settings import load_settings

    settings = load_settings(env.home)
    for message in settings.warnings:
        warn(message)
    return settings
