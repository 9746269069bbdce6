"""What else ``/copy`` tries besides OSC 52, and how it says what reached where (tmux, system tools).

Inside tmux, an application's OSC 52 reaches the outer terminal only when tmux's ``set-clipboard`` is
``on``: with the default (``external``) it is dropped silently. So in tmux the text also goes to tmux's
paste buffer, and the message says which of the two the user can count on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from maia.i18n import _

_TIMEOUT = 2.0


@dataclass(slots=True)
class CopyReport:
    """Where the text went: each way tried, whether it worked, and what the user should know."""

    reached: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    advice: str = ""


def _run(argv: list[str], text: str, env: Mapping[str, str]) -> bool:
    try:
        done = subprocess.run(
            argv, input=text.encode("utf-8"), capture_output=True, timeout=_TIMEOUT, env=dict(env), check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _tmux_option(env: Mapping[str, str]) -> str:
    try:
        done = subprocess.run(
            ["tmux", "show-options", "-gv", "set-clipboard"],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            env=dict(env),
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def system_tool(env: Mapping[str, str]) -> list[str] | None:
    """The system clipboard program for this session (pbcopy, wl-copy, xclip, xsel), when there is one."""
    candidates: list[list[str]] = [["pbcopy"]]
    if env.get("WAYLAND_DISPLAY"):
        candidates.append(["wl-copy"])
    if env.get("DISPLAY"):
        candidates += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    for argv in candidates:
        if shutil.which(argv[0], path=env.get("PATH")):
            return argv
    return None


def copy_elsewhere(text: str, osc52_sent: bool, env: Mapping[str, str] | None = None) -> CopyReport:
    """After OSC 52 (sent or not): tmux's paste buffer inside tmux, and the system clipboard program."""
    env = os.environ if env is None else env
    report = CopyReport()
    in_tmux = bool(env.get("TMUX")) and shutil.which("tmux", path=env.get("PATH")) is not None
    if in_tmux:
        setting = _tmux_option(env)
        if osc52_sent and setting == "on":
            report.reached.append(_("the terminal's clipboard (OSC 52, passed on by tmux)"))
        elif osc52_sent:
            report.failed.append(_("the terminal's clipboard (OSC 52: tmux drops it)"))
            report.advice = _(
                "tmux passes OSC 52 on to your terminal only with `set -g set-clipboard on` in ~/.tmux.conf "
                "(now: {setting})."
            ).format(setting=setting or "?")
        if _run(["tmux", "load-buffer", "-"], text, env):
            report.reached.append(_("tmux's paste buffer (prefix + ] pastes it)"))
        else:
            report.failed.append(_("tmux's paste buffer"))
    elif osc52_sent:
        report.reached.append(_("the terminal's clipboard (OSC 52; a terminal may refuse it without saying)"))
    tool = system_tool(env)
    if tool is not None:
        if _run(tool, text, env):
            report.reached.append(_("the system clipboard ({tool})").format(tool=tool[0]))
        else:
            report.failed.append(_("the system clipboard ({tool})").format(tool=tool[0]))
    return report
