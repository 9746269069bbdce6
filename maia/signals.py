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
