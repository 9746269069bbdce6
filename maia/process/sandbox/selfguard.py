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
from typing import Any

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
        # the C module, not the ctypes package: importing the package costs ~5 ms on every start
        _ctypes: Any = __import__("_ctypes")  # typed as Any: its base classes are used bare, as ctypes does

        class CULong(_ctypes._SimpleCData):  # type: ignore[misc]  # the C module's base classes
            _type_ = "L"

        class CInt(_ctypes._SimpleCData):  # type: ignore[misc]
            _type_ = "i"

        class IntFunction(_ctypes.CFuncPtr):  # type: ignore[misc]
            _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
            _restype_ = CInt

        class Library:
            _handle = _ctypes.dlopen(None, 2)  # the program's own symbols (libc), RTLD_NOW

        prctl = IntFunction(("prctl", Library))
        zero = CULong(0)
        return int(prctl(CInt(PR_SET_DUMPABLE), zero, zero, zero, zero)) == 0
    except (OSError, AttributeError, ImportError):
        return False
