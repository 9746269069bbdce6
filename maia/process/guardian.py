"""No orphans: the commands an agent starts die with it, even when it is killed by SIGKILL.

Every command runs in a process group of its own (``maia.process.shell``). A killed process runs no code,
so the clean-up cannot be its own: the first command a MAIA process starts also starts a small
*guardian* (a bare Python in a session of its own) that reads the process groups to watch on a pipe.
Only the MAIA process holds the pipe's write end (close-on-exec, closed in forked children), so the
guardian reads end-of-file exactly when that process is gone, however it ended, and then kills every
group still watched with SIGKILL. A command's group stays watched while any member of it lives (a
``server &`` left behind by a finished command dies with the agent too).

Sub-agent children are watched the same way by their parent, and each child has its own guardian for
its commands: killing a worker takes its sub-agents, which take their commands. A command that leaves
its group (``setsid``) escapes this scheme; the sandbox (bubblewrap's ``--die-with-parent``)
complements it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

# The guardian itself: a few lines of Python with no site packages and no MAIA (fast, ~8 MB).
_GUARDIAN = r"""
import os, signal, sys
if os.fork():  # the guardian is no child of MAIA's: nothing waits for it, no tree walk meets it
    os._exit(0)
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
groups = set()
for line in sys.stdin.buffer:
    word = line.strip()
    if word[:1] == b"+":
        groups.add(int(word[1:]))
    elif word[:1] == b"-":
        groups.discard(int(word[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_pipe: int | None = None  # the write end, in the process that started the guardian
_owner: int | None = None  # that process's pid (a forked child starts its own guardian)
_starter: subprocess.Popen[bytes] | None = None  # the short-lived process that forks the guardian
_lingering: set[int] = set()  # groups left running by a command that ended (watched until they end)


def _forget_in_child() -> None:
    """A forked child does not hold its parent's pipe: the parent's guardian must still see its end."""
    global _pipe, _owner, _starter
    if _pipe is not None:
        with contextlib.suppress(OSError):
            os.close(_pipe)
    _pipe, _owner, _starter = None, None, None
    _lingering.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def _start() -> int | None:
    """Start the guardian; the pipe's write end (None when it cannot be started: nothing is watched)."""
    global _pipe, _owner, _starter
    read, write = os.pipe()  # both close-on-exec: no command inherits the write end
    try:
        _starter = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _GUARDIAN],
            stdin=read,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl+C in the terminal never reaches it
            close_fds=True,
        )
    except OSError:
        os.close(write)
        return None
    finally:
        os.close(read)
    _pipe, _owner = write, os.getpid()
    return write


def _send(line: bytes) -> None:
    global _pipe, _starter
    if sys.platform == "win32":
        return
    with _lock:
        if _starter is not None and _starter.poll() is not None:  # reaped once it has forked the guardian
            _starter = None
        for _attempt in range(2):
            pipe = _pipe if _owner == os.getpid() else None
            if pipe is None:
                pipe = _start()
                if pipe is None:
                    return
            try:
                os.write(pipe, line)
                return
            except OSError:  # the guardian died (killed by hand): start another
                with contextlib.suppress(OSError):
                    os.close(pipe)
                _pipe = None


def watch(group: int) -> None:
    """Kill process group ``group`` when this process ends, however it ends."""
    if group > 1:
        _send(b"+%d\n" % group)


def unwatch(group: int) -> None:
    """The group is gone (or killed already): nothing to do for it any more."""
    if group > 1:
        _send(b"-%d\n" % group)


def group_alive(group: int) -> bool:
    """Whether any process of the group still exists."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def release(group: int) -> None:
    """A command ended: stop watching its group unless something it started still runs in it.

    Groups left running are checked again at each release: once gone, they are forgotten, so a later
    process that happens to get the same number is never killed."""
    if group > 1:
        _lingering.add(group)
    for old in list(_lingering):
        if not group_alive(old):
            _lingering.discard(old)
            unwatch(old)
