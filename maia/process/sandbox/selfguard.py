"""MAIA's own processes start clean and keep their memory to themselves.

``python_argv`` is how MAIA starts another MAIA process (a sub-agent, a detached workflow worker):
the interpreter's absolute path in isolated mode (``-I``: neither the current folder, nor
``PYTHONPATH``, nor the user's site folder is searched), so a ``maia/`` package in the launch
folder cannot stand in for MAIA. ``mark_non_dumpable`` keeps other processes of the same user
(outside the sandbox) from reading MAIA's memory and environment (the proxy's key) or attaching
a debugger to it.
"""

from __future__ import annotations

import os
import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


def python_argv() -> list[str]:
    """This interpreter, by absolute path, in isolated mode (a virtual environment's own path is kept)."""
    return [os.path.abspath(sys.executable) if sys.executable else "python3", "-I"]


def mark_non_dumpable() -> bool:
    """``prctl(PR_SET_DUMPABLE, 0)`` on Linux; False where it is not available (nothing else changes)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        zero = ctypes.c_ulong(0)
        return int(libc.prctl(ctypes.c_int(PR_SET_DUMPABLE), zero, zero, zero, zero)) == 0
    except (OSError, AttributeError):
        return False
