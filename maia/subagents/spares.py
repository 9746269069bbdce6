"""Spare sub-agent children: one loaded child waiting for the next call of a conversation.

A child spends most of its start loading Python modules (a few hundred: about twice what a bare import
of its own module takes), before its first request. Once a conversation has run a sub-agent, the next
one is likely: as a run ends, a spare child is started; it loads its modules, says ``ready`` and waits
for its ``start``. A conversation that offers the Agent tool starts one before its first call too: when
the model is still at work a moment after a request was sent (its answer takes longer than a child's
load), or when the model names the tool. A spare that cannot start (it ends by itself, or writes anything
else, before it says ``ready``) stops the spares of its event loop: each call then starts its own child,
and says what went wrong. The task, the definition, the settings, the rules and the folder's trust reach
a spare only with its ``start``, and are read from disk as for any child, so a spare holds nothing that
could go stale.

The next call started exactly as the spare was (same command, same environment, the same folder: same
path, same real path, same file) takes it, even before it has said ``ready``; any other call discards it
and starts its own child. There is at most one spare per event loop (one conversation), killed when the
conversation's agent source closes, and, like every child, by the guardian if MAIA dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from maia.process import guardian
from maia.process.tree import kill_tree
from maia.subagents import protocol
from maia.subagents.protocol import ProtocolError


def child_command() -> list[str]:
    """How a sub-agent process is started: this Python in isolated mode (nothing imported from the launch
    folder, PYTHONPATH or the user's site), MAIA's hidden mode."""
    from maia.process.sandbox.selfguard import python_argv

    return [*python_argv(), "-m", "maia", protocol.SUBAGENT_FLAG]


@dataclass(frozen=True, slots=True)
class Launch:
    """How a child is started: its command, its folder (and which folder that is), its environment."""

    argv: tuple[str, ...]
    folder: Path
    environment: tuple[tuple[str, str], ...]
    folder_id: tuple[str, int, int]  # real path, device, inode: a folder replaced since is another folder

    @classmethod
    def of(cls, argv: Sequence[str], folder: Path, env: Mapping[str, str] | None) -> Launch:
        """The launch of a child: ``env`` None is this process's environment, as it is now."""
        environment = dict(env) if env is not None else dict(os.environ)
        try:
            status = os.stat(folder)
            folder_id = (os.path.realpath(folder), status.st_dev, status.st_ino)
        except OSError:  # the start will fail and say why
            folder_id = (str(folder), -1, -1)
        return cls(tuple(argv), folder, tuple(sorted(environment.items())), folder_id)

    async def spawn(self) -> asyncio.subprocess.Process:
        """Start the child in a session of its own (the terminal's Ctrl+C is the parent's), watched by the
        guardian (its group dies with this process, even by SIGKILL); OSError when it cannot start."""
        process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self.folder,
            env=dict(self.environment),
            start_new_session=True,
            limit=protocol.MAX_LINE,
        )
        guardian.watch(process.pid)
        return process


@dataclass(eq=False, slots=True)
class _Spare:
    launch: Launch
    process: asyncio.subprocess.Process
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    watcher: asyncio.Task[None] | None = None

    async def stop_watching(self) -> None:
        """Stop reading its ``ready`` line, and wait until the reader is gone (the run then reads the pipe;
        a line still unread reaches the run, which ignores ``ready``)."""
        watcher, self.watcher = self.watcher, None
        if watcher is not None and not watcher.done():
            watcher.cancel()
            await asyncio.wait({watcher})


async def _discard(process: asyncio.subprocess.Process) -> None:
    """Kill a spare child (it holds no task: nothing is lost) and reap it."""
    if process.returncode is None:
        kill_tree(process.pid)
    try:
        with contextlib.suppress(ProcessLookupError):
            await process.wait()
        for pipe in (process.stdout, process.stderr):  # read to their end so that they close now
            if pipe is not None:
                with contextlib.suppress(ValueError, OSError):
                    while await pipe.read(65536):
                        pass
        await close_stdin(process)
    finally:
        guardian.release(process.pid)  # even if cancelled: a later group with this number is never killed


async def close_stdin(process: asyncio.subprocess.Process) -> None:
    """Close the pipe to a child that has ended, and wait until it is closed: then its transport is too
    (left open, it would be closed by the garbage collector, on a loop that may be gone)."""
    if process.stdin is not None and not process.stdin.is_closing():
        process.stdin.close()
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(process.stdin.wait_closed(), 5.0)


class SparePool:
    """The spare child of one event loop (one conversation)."""

    def __init__(self) -> None:
        self.spare: _Spare | None = None
        self.starting: asyncio.Task[None] | None = None
        self.generation = 0  # moved on by close(): a run that ends after it starts no spare
        self.failed = False  # a spare could not start (see _watch): no more spares on this loop
        self._discarding: set[asyncio.Task[None]] = set()

    async def take(self, launch: Launch) -> asyncio.subprocess.Process | None:
        """The spare if it was started as ``launch`` and still runs (it is then no spare any more). One being
        started (announced a moment ago) is waited for: a spawn takes milliseconds, a start of its own more."""
        starting = self.starting
        if starting is not None and not starting.done():
            await asyncio.wait({starting})
        spare, self.spare = self.spare, None
        if spare is None:
            return None
        try:
            await spare.stop_watching()
        except asyncio.CancelledError:
            self._discard_later(spare.process)
            raise
        stdout = spare.process.stdout
        if spare.launch != launch or spare.process.returncode is not None or stdout is None or stdout.at_eof():
            self._discard_later(spare.process)
            return None
        return spare.process

    def replace(self, launch: Launch, generation: int) -> None:
        """Start a spare for ``launch`` in the background, unless one is there or starting, the pool was
        closed since ``generation`` was read, or a spare could not start (``failed``)."""
        if generation != self.generation or self.failed:
            return
        current = self.spare
        if current is not None and current.launch == launch and current.process.returncode is None:
            return
        if self.starting is not None and not self.starting.done():
            return
        self.starting = asyncio.get_running_loop().create_task(self._start(launch, generation))

    async def _start(self, launch: Launch, generation: int) -> None:
        try:
            process = await launch.spawn()
        except OSError:
            return  # the next call starts its own child and says why if it cannot
        if generation != self.generation:  # closed meanwhile
            self._discard_later(process)
            return
        # no await from here on: a close at any moment finds the new spare in place and the old one discarded
        spare = _Spare(launch, process)
        spare.watcher = asyncio.get_running_loop().create_task(self._watch(spare))
        old, self.spare = self.spare, spare
        if old is not None:
            if old.watcher is not None:
                old.watcher.cancel()  # it reads the old stdout, which the discard drains once it has run
            self._discard_later(old.process)

    async def _watch(self, spare: _Spare) -> None:
        """Read the spare's ``ready`` line; anything else, or its end, and it is no spare: discarded."""
        stdout = spare.process.stdout
        assert stdout is not None
        line: bytes | None = None
        try:
            line = await stdout.readline()
            ok = protocol.decode(line).get("type") == "ready"
        except (ValueError, OSError, ProtocolError):
            ok = False
        if ok:
            spare.ready.set()
            return
        if line == b"":  # its end (never one MAIA caused: the watcher is cancelled before MAIA kills a spare)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(spare.process.wait(), 5.0)
        code = spare.process.returncode
        spare.watcher = None  # done: nothing to stop
        if self.spare is spare:
            self.spare = None
        if code is None or code >= 0:
            # it ended by itself, or wrote something else: it cannot start, and another would not either (a
            # signal from elsewhere, the OOM killer or a user's kill, says nothing of the next one)
            self.failed = True
        self._discard_later(spare.process)

    def _discard_later(self, process: asyncio.subprocess.Process) -> None:
        task = asyncio.get_running_loop().create_task(_discard(process))
        self._discarding.add(task)
        task.add_done_callback(self._discarding.discard)

    async def ready(self, timeout: float = 30.0) -> bool:
        """Wait until the spare (if one is starting or waiting) has loaded; whether one is ready."""
        starting = self.starting
        if starting is not None:
            await asyncio.wait({starting})
        spare = self.spare
        if spare is None:
            return False
        said = asyncio.ensure_future(spare.ready.wait())
        watcher = spare.watcher  # done when the spare said "ready", or died without it
        try:
            await asyncio.wait(
                {said} if watcher is None else {said, watcher}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            said.cancel()
        return spare.ready.is_set() and spare.process.returncode is None

    async def close(self) -> None:
        """Kill the spare (and one starting), and reap every child this pool discarded."""
        self.generation += 1
        starting, self.starting = self.starting, None
        if starting is not None and not starting.done():
            starting.cancel()  # a child being started is killed by asyncio's own clean-up; one started, here
        spare, self.spare = self.spare, None
        if spare is not None:
            if spare.process.returncode is None:
                kill_tree(spare.process.pid)  # at once, whatever happens to this coroutine
            if spare.watcher is not None:
                spare.watcher.cancel()
            self._discard_later(spare.process)  # a task of its own: reaped and released even if this is cancelled
        if starting is not None:
            await asyncio.wait({starting})
        if self._discarding:
            await asyncio.wait(set(self._discarding))


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SparePool] = weakref.WeakKeyDictionary()


def pool() -> SparePool:
    """The running event loop's pool."""
    loop = asyncio.get_running_loop()
    found = _pools.get(loop)
    if found is None:
        found = _pools[loop] = SparePool()
    return found


async def start_spare(
    folder: Path, *, command: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> None:
    """Start a spare child now for calls in ``folder`` with this command and environment."""
    expect_child(folder, command, env)


def expect_child(folder: Path, command: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> None:
    """A call is coming (the model is streaming it): a spare child for calls in ``folder`` with this command
    and environment starts now (from the running event loop), unless one is waiting or starting."""
    spares = pool()
    spares.replace(Launch.of(list(command or child_command()), folder, env), spares.generation)


async def spare_ready(timeout: float = 30.0) -> bool:
    """Wait until this conversation's spare (if one is starting or waiting) has loaded; whether one is ready."""
    return await pool().ready(timeout)


async def discard_spares() -> None:
    """Kill this conversation's spare child, if any (its end; also before a measure of a cold start)."""
    await pool().close()
