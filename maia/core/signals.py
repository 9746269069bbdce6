"""Signal handlers on the event loop, where the platform has them (asyncio has none on Windows)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable


def on_signal(sig: signal.Signals, callback: Callable[[], object]) -> bool:
    """Call ``callback`` on the running loop when ``sig`` arrives; False where this is not possible."""
    if sys.platform == "win32":
        return False
    try:
        asyncio.get_running_loop().add_signal_handler(sig, callback)
    except (RuntimeError, ValueError):  # not in the main thread, or not a valid signal here
        return False
    return True


def forget_signal(sig: signal.Signals) -> None:
    """Remove a handler set by :func:`on_signal` (if any)."""
    if sys.platform != "win32":
        with contextlib.suppress(RuntimeError, ValueError):
            asyncio.get_running_loop().remove_signal_handler(sig)


# Signals that end a process by default and that a user or a system sends to stop MAIA: each one
# cancels the running work (child process groups are killed) and lets the session be saved.
TERMINATING: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name)
)


def on_terminating_signals(callback: Callable[[], object]) -> Callable[[], None]:
    """Call ``callback`` on SIGTERM, SIGHUP and SIGQUIT; returns the function that removes the handlers."""
    installed = [sig for sig in TERMINATING if on_signal(sig, callback)]

    def remove() -> None:
        for sig in installed:
            forget_signal(sig)

    return remove
