"""Running a command in its own process group (§11.2 ``runShell``): timeout, Ctrl+C, merged output.

``run_shell`` never raises for the command's own failures: the outcome is described by
:class:`ShellResult`. Cancellation (Ctrl+C) kills the whole process group, then propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from maia.i18n import _
from maia.process import guardian

if TYPE_CHECKING:
    from maia.process.sandbox.policy import SandboxPolicy

DEFAULT_TIMEOUT = 120.0
KILL_GRACE = 1.0
ShellState = Literal["exited", "timeout", "interrupted", "failed_to_start", "signal"]


@dataclass(frozen=True, slots=True)
class ShellResult:
    """What a command printed (stdout and stderr in arrival order) and how it ended."""

    output: str
    state: ShellState
    exit_code: int | None = None
    signal_number: int | None = None
    truncated: bool = False
    error: str | None = None
    stderr: str = ""  # only when run with separate_stderr
    note: str | None = None  # one line for the model, e.g. the sandbox refused a write

    def with_note(self, text: str) -> str:
        """``text`` followed by the note on its own line, when there is one."""
        if not self.note:
            return text
        return f"{text}{'' if not text or text.endswith(chr(10)) else chr(10)}{self.note}"

    def describe(self, timeout: float = DEFAULT_TIMEOUT) -> str:
        """The status line: exit code, timeout, interruption, signal or start failure."""
        if self.state == "exited":
            return _("[exit code: {code}]").format(code=self.exit_code)
        if self.state == "timeout":
            return _("[timed out ({seconds:g} s)]").format(seconds=timeout)
        if self.state == "interrupted":
            return _("[interrupted (Ctrl+C)]")
        if self.state == "signal":
            return _("[killed by signal {number}]").format(number=self.signal_number)
        return _("[the command could not be started: {error}]").format(error=self.error or "")


def cut_middle(text: str, limit: int) -> tuple[str, bool]:
    """Keep the head and the tail of ``text`` within ``limit`` characters, marking the cut."""
    if len(text) <= limit:
        return text, False
    marker = _("\n[… {count} characters cut …]\n").format(count=len(text) - limit)
    keep = max(0, limit - len(marker))
    head = keep // 2
    return text[:head] + marker + text[len(text) - (keep - head) :], True


def kill_group(process: asyncio.subprocess.Process, sig: int) -> None:
    """Send ``sig`` to the process's whole group (it leads its own session)."""
    if process.returncode is not None and sys.platform == "win32":
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform == "win32":
            process.kill()
        else:
            os.killpg(process.pid, sig)


async def terminate_group(process: asyncio.subprocess.Process, grace: float = KILL_GRACE) -> None:
    """SIGTERM to the group, then SIGKILL after ``grace`` seconds if the leader is still there."""
    kill_group(process, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), grace)
    # Children may outlive the leader: the group is killed either way.
    kill_group(process, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), grace)


class _HeadTail:
    """Keeps the first and the last ``limit`` bytes of a stream, counting what falls between."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, block: bytes) -> None:
        room = self.limit - len(self.head)
        if room > 0:
            self.head += block[:room]
            block = block[room:]
        if block:
            self.tail += block
            excess = len(self.tail) - self.limit
            if excess > 0:
                del self.tail[:excess]
                self.dropped += excess

    def text(self) -> str:
        if not self.dropped:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace")
        marker = _("\n[… {count} bytes cut …]\n").format(count=self.dropped)
        return bytes(self.head).decode("utf-8", "replace") + marker + bytes(self.tail).decode("utf-8", "replace")


# Secrets the commands MAIA runs for the model or the user never see in their environment.
SECRET_VARIABLES = frozenset({"LITELLM_API_KEY"})
_secret_values: set[str] = set()


def register_secret(value: str | None) -> None:
    """A secret (the proxy key from settings.json): any variable holding it is kept from commands."""
    if value and len(value) >= 6:  # too short to be a key: it would hide unrelated variables
        _secret_values.add(value)


def _without_own_venv(env: dict[str, str]) -> None:
    """Drop MAIA's own virtual environment from ``PATH`` (and ``VIRTUAL_ENV``) when MAIA runs from one.

    With it first on PATH, ``python`` and ``pip`` in the commands would be MAIA's, not the project's: the
    agent's ``python -m pytest`` would fail with "No module named pytest".
    """
    import sys

    if sys.prefix == sys.base_prefix:
        return
    own = os.path.realpath(sys.prefix)
    own_bin = os.path.join(own, "bin")
    if "PATH" in env:
        kept = [p for p in env["PATH"].split(os.pathsep) if os.path.realpath(p or ".") != own_bin]
        env["PATH"] = os.pathsep.join(kept)
    if env.get("VIRTUAL_ENV") and os.path.realpath(env["VIRTUAL_ENV"]) == own:
        del env["VIRTUAL_ENV"]


def tool_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the commands MAIA runs: its own minus its virtual environment, plus ``extra``,
    minus every secret."""
    own = dict(os.environ)
    _without_own_venv(own)
    merged = {**own, **(extra or {})}
    # a value holding a secret anywhere (a URL with the key in it…) goes too
    return {
        name: value
        for name, value in merged.items()
        if name not in SECRET_VARIABLES and not any(secret in value for secret in _secret_values)
    }


def shell_executable() -> str | None:
    """The system shell commands run in: bash when present (the dialect permissions analyse), else sh."""
    if sys.platform == "win32":
        return None
    return shutil.which("bash") or "/bin/sh"


async def _spawn(
    command: str | Sequence[str],
    cwd: Path,
    env: dict[str, str],
    separate_stderr: bool = False,
    pass_fds: tuple[int, ...] = (),
    stdin: bool = False,
) -> asyncio.subprocess.Process:
    options: dict[str, object] = {
        "cwd": cwd,
        "env": env,
        "stdin": asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.PIPE if separate_stderr else asyncio.subprocess.STDOUT,
        "start_new_session": True,
    }
    if isinstance(command, str):
        executable = shell_executable()
        if executable:
            options["executable"] = executable
        return await asyncio.create_subprocess_shell(command, **options)  # type: ignore[arg-type]
    if pass_fds:
        options["pass_fds"] = pass_fds
    return await asyncio.create_subprocess_exec(*command, **options)  # type: ignore[arg-type]


def _above_standard(fd: int) -> int:
    """``fd``, moved to 3 or above (MAIA started with a standard descriptor closed: keep clear of 0-2)."""
    if fd >= 3:
        return fd
    import fcntl

    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return moved


def _bwrap_args_file(argv: list[str]) -> tuple[list[str], int | None]:
    """bubblewrap reads its options from a memory file (``bwrap --args FD -- COMMAND…``): the sandbox's
    ``ps`` shows a short line for its first process, not every mount."""
    if not hasattr(os, "memfd_create") or "--" not in argv:
        return argv, None
    cut = argv.index("--")  # bubblewrap's own options never hold a bare "--" (its paths are absolute)
    fd = _above_standard(os.memfd_create("maia-bwrap-args", os.MFD_CLOEXEC))
    data = memoryview(b"".join(os.fsencode(word) + b"\0" for word in argv[1:cut]))
    while data:
        data = data[os.write(fd, data) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return [argv[0], "--args", str(fd), *argv[cut:]], fd


def _read_status(fd: int) -> str:
    """What the sandbox launcher wrote on its status pipe (nothing when the command started)."""
    chunks: list[bytes] = []
    os.set_blocking(fd, False)
    with contextlib.suppress(BlockingIOError):
        while data := os.read(fd, 65536):
            chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


def _launch_failure(status: str, sandbox: SandboxPolicy, output: str) -> ShellResult | None:
    """The result of a launcher that ran nothing: the sandbox refused, or the program did not start.

    The launcher writes ``ok`` right before it runs the command; an empty status means it never ran
    (bubblewrap could not set the sandbox up: its own message is in the output)."""
    if not status:
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        reason = lines[-1] if lines else _("the sandbox launcher did not start")
        return ShellResult("", "failed_to_start", error=sandbox.failure_message(reason))
    status = status.removeprefix("ok")
    kind, _sep, detail = status.partition("\t")
    if kind == "sandbox":
        return ShellResult("", "failed_to_start", error=sandbox.failure_message(detail))
    if kind == "exec":
        code, _sep, text = detail.partition("\t")
        return ShellResult("", "failed_to_start", error=os.strerror(int(code)) if code.isdigit() else text)
    return None


async def run_shell(
    command: str | Sequence[str],
    cwd: Path,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    max_chars: int = 1_000_000,
    separate_stderr: bool = False,
    sandbox: SandboxPolicy | None = None,
    on_output: Callable[[bytes], None] | None = None,
    input_data: bytes | None = None,
) -> ShellResult:
    """Run ``command`` (a shell line, or an argv run without shell) in its own process group.

    ``input_data`` (optional) is written to its standard input, which is then closed (a hook's JSON);
    without it standard input is ``/dev/null``.

    stdout and stderr are merged in arrival order, unless ``separate_stderr`` keeps stderr apart.
    ``on_output`` (optional) sees each block of output as it arrives (a front end's live view); a
    failing callback is ignored, it never changes what the command does or returns.
    With ``sandbox``, the command runs under the sandbox launcher (``maia.process.sandbox``), which confines
    it and its descendants, never MAIA; when the sandbox cannot be applied nothing runs and the
    result says why (``failed_to_start``).
    """
    full_env = tool_environment(env)
    status_fd: int | None = None
    status_write: int | None = None
    args_fd: int | None = None
    if sandbox is not None and sandbox.refusal is not None:
        return ShellResult("", "failed_to_start", error=sandbox.failure_message(sandbox.refusal))
    redirects = sandbox.git_redirects() if sandbox is not None else {}
    if sandbox is not None:
        full_env = sandbox.environment(full_env)
        words = [shell_executable() or "/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        status_fd, status_write = os.pipe()
        status_write = _above_standard(status_write)
        from maia.process.sandbox.policy import launcher_code_fd

        code_fd = launcher_code_fd()
        argv = sandbox.launcher_argv(words, status_write, code_fd)
        if sandbox.uses_namespaces:
            argv, args_fd = _bwrap_args_file(argv)
        fds = tuple(fd for fd in (status_write, args_fd, code_fd) if fd is not None)
        spawn = asyncio.ensure_future(_spawn(argv, cwd, full_env, separate_stderr, fds, stdin=input_data is not None))
    else:
        spawn = asyncio.ensure_future(_spawn(command, cwd, full_env, separate_stderr, stdin=input_data is not None))
    try:
        try:
            # shielded: a cancellation while the process starts must still kill its whole group
            process = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            with contextlib.suppress(OSError):
                await terminate_group(await spawn)
            raise
        except OSError as error:
            return ShellResult("", "failed_to_start", error=error.strerror or str(error))
        finally:
            if status_write is not None:
                os.close(status_write)  # the child holds its copy until exec (or exit)
            if args_fd is not None:
                os.close(args_fd)
        if input_data is not None and process.stdin is not None:
            feeding = asyncio.ensure_future(_feed(process.stdin, input_data))
            _feeding.add(feeding)
            feeding.add_done_callback(_feeding.discard)
        guardian.watch(process.pid)  # its group dies with this process, even by SIGKILL
        try:
            done = await _collect(process, timeout, max_chars, sandbox, status_fd, on_output)
            return undo_git_redirects(sandbox, redirects, done)
        finally:
            guardian.release(process.pid)
    finally:
        if status_fd is not None:
            os.close(status_fd)


_feeding: set[asyncio.Future[None]] = set()  # writers of standard input still running (kept referenced)


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    """Write ``data`` to a process's standard input and close it; a process that does not read is fine."""
    try:
        stdin.write(data)
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the program ended without reading all of it: its choice
    finally:
        with contextlib.suppress(OSError):
            stdin.close()


async def _collect(
    process: asyncio.subprocess.Process,
    timeout: float,
    max_chars: int,
    sandbox: SandboxPolicy | None,
    status_fd: int | None,
    on_output: Callable[[bytes], None] | None = None,
) -> ShellResult:
    """Read the output until the process ends (or the timeout kills its group) and describe the end."""
    capture = _HeadTail(max_chars * 4)  # bytes bound: a UTF-8 character is at most 4 bytes
    errors = _HeadTail(max_chars * 4)

    async def pump(stream: asyncio.StreamReader | None, sink: _HeadTail) -> None:
        if stream is not None:
            while block := await stream.read(65536):
                sink.add(block)
                if on_output is not None:
                    with contextlib.suppress(Exception):  # a live view is cosmetic: never the command's failure
                        on_output(block)

    async def read_all() -> None:
        await asyncio.gather(pump(process.stdout, capture), pump(process.stderr, errors))
        await process.wait()

    state: ShellState = "exited"
    try:
        await asyncio.wait_for(read_all(), timeout)
    except TimeoutError:
        state = "timeout"
        await terminate_group(process)
    except asyncio.CancelledError:
        await terminate_group(process)
        raise
    text, cut = cut_middle(capture.text(), max_chars)
    stderr, _cut = cut_middle(errors.text(), max_chars)
    truncated = cut or capture.dropped > 0
    if state == "timeout":
        return ShellResult(text, "timeout", truncated=truncated, stderr=stderr)
    if sandbox is not None and status_fd is not None:
        failure = _launch_failure(_read_status(status_fd), sandbox, f"{text}\n{stderr}")
        if failure is not None:
            return failure
    code = process.returncode
    if code is not None and code < 0:
        return ShellResult(text, "signal", signal_number=-code, truncated=truncated, stderr=stderr)
    # also after exit 0: a script may carry on after a refused write to a protected file
    note = sandbox.note_for(f"{text}\n{stderr}", code) if sandbox is not None else None
    return ShellResult(text, "exited", exit_code=code, truncated=truncated, stderr=stderr, note=note)


def undo_git_redirects(sandbox: SandboxPolicy | None, before: dict[Path, bool], result: ShellResult) -> ShellResult:
    """A sandboxed command that created ``.git/commondir`` or ``.git/config.worktree`` (which would make the
    user's own git run another repository's configuration and hooks): the file is removed and the model told."""
    if sandbox is None:
        return result
    removed: list[str] = []
    for path, existed in before.items():
        if not existed and os.path.lexists(path):
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed.append(path.name)
    if not removed:
        return result
    line = _(
        "MAIA sandbox: the command created .git/{names}, which would make git run another repository's "
        "configuration and hooks: removed."
    ).format(names=", .git/".join(removed))
    note = f"{result.note}\n{line}" if result.note else line
    return dataclasses.replace(result, note=note)
