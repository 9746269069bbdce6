"""A process and everything below it (Linux ``/proc``): found, and killed whatever groups they made."""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import sys


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux ``/proc``; empty elsewhere)."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children[int(fields[1])].append(int(entry))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL a child and everything it started, whatever process group its tools made for themselves."""
    if sys.platform == "win32":  # no process groups: the child alone
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
        return
    below = descendants(pid)
    for target in (pid, *below):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(target, signal.SIGKILL)  # a group led by it (the child's, each tool's)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)
