"""Where MAIA works: the launch folder (§5.2) and the user's MAIA home (``~/.maia``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from maia.core.errors import ConfigError
from maia.i18n import _


def launch_dir(env: Mapping[str, str] | None = None) -> Path:
    """The base of every relative path: ``MAIA_CWD`` > ``INIT_CWD`` > the current directory."""
    env = os.environ if env is None else env
    for var in ("MAIA_CWD", "INIT_CWD"):
        value = env.get(var, "").strip()
        if value:
            path = Path(value).expanduser()
            if not path.is_dir():
                raise ConfigError(_("{var} points to a folder that does not exist: {path}").format(var=var, path=path))
            return path.resolve()
    return Path.cwd().resolve()


def maia_home(env: Mapping[str, str] | None = None) -> Path:
    """The user's MAIA folder: ``MAIA_HOME`` when set, else ``~/.maia``."""
    env = os.environ if env is None else env
    value = env.get("MAIA_HOME", "").strip()
    if value:
        return Path(value).expanduser().resolve()
    return Path.home() / ".maia"


def home_path(name: str, env: Mapping[str, str] | None = None) -> str:
    """A file of MAIA's home as messages name it: ``~/.maia/NAME``, or its real path when ``MAIA_HOME`` moves
    the home (a message must point at the file MAIA actually reads)."""
    env = os.environ if env is None else env
    if env.get("MAIA_HOME", "").strip():
        return str(maia_home(env) / name)
    return f"~/.maia/{name}"


def settings_path(home: Path) -> Path:
    """The user's settings file (§7.3)."""
    return home / "settings.json"


def resolve_user_path(value: str, launch: Path) -> Path:
    """A path given by the model or the user: ``~`` expanded, relative to the launch folder, normalised.

    This is the one normaliser: the tools open what it returns and the permission engine judges
    the same path (white space stripped, ``~``, ``..``), then also where its links lead.
    """
    return Path(normalise_user_path(value, str(launch)))


def normalise_user_path(value: str, launch: str) -> str:
    """:func:`resolve_user_path` on strings (the permission engine's fast path)."""
    expanded = os.path.expanduser(value.strip())
    return os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(launch, expanded))
