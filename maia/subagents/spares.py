"""Spare sub-agent children: loaded children waiting for the next calls of a conversation.

A child spends most of its start loading Python modules (a few hundred: about twice what a bare import
of its own module takes), before its first request. Once a conversation has run a sub-agent, the next
one is likely: as a run ends, a spare child is started; it loads its modules, says ``ready`` and waits
for its ``start``. A conversation that offers the Agent tool starts one before its first call too: when
the model is still at work a moment after a request was sent (its answer takes longer than a child's
load), or when the model names the tool; an answer that names it several times (a job fanned out to
several sub-agents at once) gets one spare per call, up to ``MAX_SPARES``. A spare that cannot start (it
ends by itself, or writes anything else, before it says ``ready``) stops the spares of its event loop:
each call then starts its own child, and says what went wrong. The task, the definition, the settings,
the rules and the folder's trust reach a spare only with its ``start``, and are read from disk as for any
child, so a spare holds nothing that could go stale.

The next call started exactly as the spare was (same command, same environment, the same folder: same
path, same real path, same file) takes it, even before it has said ``ready``; any other call discards it
and starts its own child. There are at most ``MAX_SPARES`` per event loop (one conversation), the oldest
taken first, all killed when the conversation's agent source closes, and, like every child, by the guardian
if MAIA dies. A spare an answer asked for but no call took (a call refused) waits for a later call.
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

# spares of one conversation at a time: a model fanning a job out to this many sub-agents in one answer finds
# each child loaded (each ~30 MB once loaded; the tool runner runs 8 calls at a time)
MAX_SPARES = 4


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
    settled: asyncio.Event = field(default_factory=asyncio.Event)  # its watcher is done: ready, dead or taken
    watcher: asyncio.Task[None] | None = None

    async def stop_watching(self) -> None:
        """Stop reading its ``ready`` line, and wait until the reader is gone (the run then reads the pipe;
        a line still unread reaches the run, which ignores ``ready``)."""
        watcher, self.watcher = self.watcher, None
        self.settled.set()  # (a watcher cancelled before it ran never gets to say so)
        if watcher is not None and not watcher.done():
            watcher.cancel()
            await asyncio.wait({watcher})

    def unwatch(self) -> None:
        """Stop reading its ``ready`` line now (it is being discarded)."""
        self.settled.set()
        if self.watcher is not None:
            self.watcher.cancel()


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
    """The spare children of one event loop (one conversation)."""

    def __init__(self) -> None:
        self.spares: list[_Spare] = []  # started, loading or loaded, in the order they were started
        self.starting: dict[asyncio.Task[None], Launch] = {}  # spawns under way (a few milliseconds each)
        self.wanted: Launch | None = None  # how the last spares asked for start: others are stale
        self.generation = 0  # moved on by close(): a run that ends after it starts no spare
        self.failed = False  # a spare could not start (see _watch): no more spares on this loop
        self._discarding: set[asyncio.Task[None]] = set()

    @property
    def spare(self) -> _Spare | None:
        """The spare the next call takes, if any."""
        return self.spares[0] if self.spares else None

    def _pending(self, launch: Launch | None = None) -> list[asyncio.Task[None]]:
        """Spawns under way (for ``launch`` only, if given)."""
        return [task for task, how in self.starting.items() if not task.done() and launch in (None, how)]

    async def take(self, launch: Launch) -> asyncio.subprocess.Process | None:
        """A spare started as ``launch`` that still runs (it is then no spare any more), the oldest first. One
        being started (announced a moment ago) is waited for: a spawn takes milliseconds, a start of its own
        more. Spares started otherwise are discarded: the calls now start differently."""
        while True:
            while self.spares:
                spare = self.spares.pop(0)
                try:
                    await spare.stop_watching()
                except asyncio.CancelledError:
                    self._discard_later(spare.process)
                    raise
                stdout = spare.process.stdout
                if spare.launch != launch or spare.process.returncode is not None or stdout is None or stdout.at_eof():
                    self._discard_later(spare.process)
                    continue
                return spare.process
            pending = self._pending()
            if not pending:
                return None
            await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)

    def replace(self, launch: Launch, generation: int, count: int = 1) -> None:
        """Have ``count`` spares for ``launch`` (at most MAX_SPARES) waiting or starting: the missing ones start
        in the background, unless the pool was closed since ``generation`` was read, or a spare could not
        start (``failed``)."""
        if generation != self.generation or self.failed:
            return
        self.wanted = launch
        alive = sum(1 for spare in self.spares if spare.launch == launch and spare.process.returncode is None)
        missing = min(count, MAX_SPARES) - alive - len(self._pending(launch))
        loop = asyncio.get_running_loop()
        for _new in range(missing):
            task = loop.create_task(self._start(launch, generation))
            self.starting[task] = launch
            task.add_done_callback(self._started)

    def _started(self, task: asyncio.Task[None]) -> None:
        self.starting.pop(task, None)  # close() may have let go of it first

    async def _start(self, launch: Launch, generation: int) -> None:
        try:
            process = await launch.spawn()
        except OSError:
            return  # the next call starts its own child and says why if it cannot
        if generation != self.generation or launch != self.wanted:  # closed meanwhile, or stale already
            self._discard_later(process)
            return
        # no await from here on: a close at any moment finds the new spare in place and the stale ones discarded
        spare = _Spare(launch, process)
        spare.watcher = asyncio.get_running_loop().create_task(self._watch(spare))
        stale = [old for old in self.spares if old.launch != launch]
        self.spares = [old for old in self.spares if old.launch == launch]
        self.spares.append(spare)
        for old in stale:  # started for calls made otherwise (another folder, command or environment)
            old.unwatch()  # it reads the old stdout, which the discard drains once it has run
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
            spare.settled.set()
            return
        if line == b"":  # its end (never one MAIA caused: the watcher is cancelled before MAIA kills a spare)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(spare.process.wait(), 5.0)
        code = spare.process.returncode
        spare.watcher = None  # done: nothing to stop
        if spare in self.spares:
            self.spares.remove(spare)
        if code is None or code >= 0:
            # it ended by itself, or wrote something else: it cannot start, and another would not either (a
            # signal from elsewhere, the OOM killer or a user's kill, says nothing of the next one)
            self.failed = True
        self._discard_later(spare.process)
        spare.settled.set()

    def _discard_later(self, process: asyncio.subprocess.Process) -> None:
        task = asyncio.get_running_loop().create_task(_discard(process))
        self._discarding.add(task)
        task.add_done_callback(self._discarding.discard)

    async def ready(self, timeout: float = 30.0) -> bool:
        """Wait (``timeout`` at most) until every spare starting or waiting has loaded, died or been taken;
        whether one is ready and waiting."""
        pending = self._pending()
        if pending:
            await asyncio.wait(pending)
        spares = list(self.spares)
        waits = [asyncio.ensure_future(spare.settled.wait()) for spare in spares if not spare.settled.is_set()]
        if waits:
            try:
                await asyncio.wait(waits, timeout=timeout)
            finally:
                for wait in waits:
                    wait.cancel()
        return any(spare.ready.is_set() and spare.process.returncode is None for spare in self.spares)

    async def close(self) -> None:
        """Kill the spares (and those starting), and reap every child this pool discarded."""
        self.generation += 1
        starting, self.starting = self._pending(), {}
        for task in starting:
            task.cancel()  # a child being started is killed by asyncio's own clean-up; one started, here
        spares, self.spares = self.spares, []
        for spare in spares:
            if spare.process.returncode is None:
                kill_tree(spare.process.pid)  # at once, whatever happens to this coroutine
            spare.unwatch()
            self._discard_later(spare.process)  # a task of its own: reaped and released even if this is cancelled
        if starting:
            await asyncio.wait(starting)
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


def expect_child(
    folder: Path, command: Sequence[str] | None = None, env: Mapping[str, str] | None = None, count: int = 1
) -> None:
    """``count`` calls are coming (the model is streaming them): spare children for calls in ``folder`` with
    this command and environment start now (from the running event loop), up to ``count`` waiting or starting
    (at most MAX_SPARES)."""
    spares = pool()
    spares.replace(Launch.of(list(command or child_command()), folder, env), spares.generation, count)


async def spare_ready(timeout: float = 30.0) -> bool:
    """Wait until this conversation's spare (if one is starting or waiting) has loaded; whether one is ready."""
    return await pool().ready(timeout)


async def discard_spares() -> None:
    """Kill this conversation's spare child, if any (its end; also before a measure of a cold start)."""
    await pool().close()
