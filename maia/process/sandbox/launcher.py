"""The sandbox launcher: restrict this process with Landlock, then ``execvp`` the command.

Run as its own process (``python -I -S launcher.py …`` or ``python -m maia.process.sandbox …``)::

    launcher.py [--write ROOT]... [--read-only] [--no-network] [--best-effort] [--status-fd N] -- ARGV...

Only the command and its descendants are confined: Landlock restricts the calling thread and
everything it executes afterwards, so MAIA itself never calls ``landlock_restrict_self``.

This file imports nothing but the standard library (no ``maia`` module, no ``site``): it is started
for every sandboxed command and must cost a few milliseconds. Messages here are technical and
untranslated: MAIA reads them from the status pipe and words them for the user.

Fail closed: when the sandbox cannot be applied, the command is not run. With ``--status-fd N``
the reason goes to that pipe (``sandbox<TAB>reason``; ``exec<TAB>errno<TAB>text`` when the program
cannot be executed) and nothing is written to the command's output. Right before ``exec`` the
launcher writes ``ok`` there; the pipe is closed on exec. So ``ok`` alone means the command started,
and an empty pipe means the launcher never ran (bubblewrap around it failed): nothing ran either.

``--best-effort`` (used inside the namespace sandbox, which already bounds writes and the network):
apply what Landlock this kernel has, and run the command even without Landlock.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing would cost 2 ms on every command
if TYPE_CHECKING:
    from typing import Any

# Syscall numbers of the generic table (x86-64, arm64, arm, riscv, powerpc, s390, loongarch…).
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
PR_SET_NO_NEW_PRIVS = 38
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1

# File system rights (include/uapi/linux/landlock.h) and the ABI that introduced them.
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2: rename and link across folders
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

FS_ABI1 = (1 << 13) - 1  # EXECUTE … MAKE_SYM
FS_ALL = (1 << 16) - 1  # every right up to ABI 7 (masked by what the kernel handles)
# The rights a rule on a file (not a folder) may carry; the kernel refuses the others there.
FS_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
FS_READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
FS_DEVICE_RIGHTS = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV

# Writable whatever the policy: sinks, sources of bytes, terminals and POSIX shared memory.
# A missing one is skipped (fewer rules only ever means less access).
DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
)
# Folders among DEVICES where files may be created (tmpfs for shm_open and semaphores).
DEVICE_FOLDERS = ("/dev/shm",)

EXIT_SANDBOX = 125  # the sandbox could not be applied: nothing ran
EXIT_CANNOT_EXECUTE = 126
EXIT_NOT_FOUND = 127
EXIT_USAGE = 2

# Test hook: makes one step's real syscall fail (called with invalid flags), to prove that a
# failure runs nothing. Steps: probe, create, add_rule, restrict. Read by the launcher only, so it
# can only make the launcher refuse, never loosen the sandbox.
FAULT_VARIABLE = "MAIA_SANDBOX_FAULT"

USAGE = (
    "usage: python -m maia.process.sandbox [--write ROOT]... [--read-only] [--no-network] [--best-effort]"
    " [--status-fd N]"
    " -- ARGV...\n"
    "Runs ARGV with writes allowed only under the ROOTs (and /dev/null-like devices), via Landlock."
)


class SandboxError(Exception):
    """The sandbox cannot be applied; the message says why (technical, untranslated)."""


def fs_rights(abi: int) -> int:
    """The file system rights a kernel with Landlock ``abi`` knows."""
    if abi < 1:
        return 0
    rights = FS_ABI1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def net_rights(abi: int) -> int:
    """The network rights a kernel with Landlock ``abi`` knows (TCP bind and connect, ABI 4)."""
    return NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0


def scope_rights(abi: int) -> int:
    """The IPC scopes a kernel with Landlock ``abi`` knows (ABI 6)."""
    return SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0


class _Kernel:
    """The three Landlock syscalls and prctl, through ``_ctypes`` (the C module: importing the ``ctypes``
    package costs about 4 ms of CPU, on every sandboxed command)."""

    def __init__(self) -> None:
        _ctypes: Any = __import__("_ctypes")  # typed as Any: its base classes are used bare, as ctypes does

        class CLong(_ctypes._SimpleCData):  # type: ignore[misc]  # the C module's base classes
            _type_ = "l"

        class CULong(_ctypes._SimpleCData):  # type: ignore[misc]
            _type_ = "L"

        class CInt(_ctypes._SimpleCData):  # type: ignore[misc]
            _type_ = "i"

        flags = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO

        class LongFunction(_ctypes.CFuncPtr):  # type: ignore[misc]
            _flags_ = flags
            _restype_ = CLong

        class IntFunction(_ctypes.CFuncPtr):  # type: ignore[misc]
            _flags_ = flags
            _restype_ = CInt

        class Library:
            _handle = _ctypes.dlopen(None, 2)  # the program's own symbols (libc), RTLD_NOW

        self.c_long, self.c_ulong, self.c_int = CLong, CULong, CInt
        self.errors = _ctypes
        self._syscall = LongFunction(("syscall", Library))
        self._prctl = IntFunction(("prctl", Library))

    def syscall(self, number: int, *args: object) -> tuple[int, int]:
        self.errors.set_errno(0)
        # bytes go as a pointer to their (read-only) data: the kernel only reads these structures
        converted = [a if isinstance(a, bytes) else self.c_long(a) for a in args]
        result = self._syscall(self.c_long(number), *converted)
        return int(result), int(self.errors.get_errno())

    def prctl(self, option: int, value: int) -> tuple[int, int]:
        self.errors.set_errno(0)
        zero = self.c_ulong(0)
        result = self._prctl(self.c_int(option), self.c_ulong(value), zero, zero, zero)
        return int(result), int(self.errors.get_errno())

    def buffer(self, data: bytes) -> bytes:
        return data


def _errno_name(number: int) -> str:
    import errno

    return errno.errorcode.get(number, str(number))


def probe(extra_flags: int = 0) -> tuple[int, str]:
    """The kernel's Landlock ABI (0 when unavailable) and, when 0, why."""
    if not sys.platform.startswith("linux"):
        return 0, "Landlock exists only on Linux"
    try:
        kernel = _Kernel()
    except (OSError, AttributeError, ImportError) as error:
        return 0, f"cannot reach the C library: {error}"
    abi, err = kernel.syscall(SYS_LANDLOCK_CREATE_RULESET, 0, 0, LANDLOCK_CREATE_RULESET_VERSION | extra_flags)
    if abi >= 1:
        return abi, ""
    if err == 38:  # ENOSYS
        return 0, "this kernel has no Landlock (Linux 5.13 or later is needed)"
    if err == 95:  # EOPNOTSUPP
        return 0, "Landlock is built into this kernel but not enabled (add landlock to the lsm= boot option)"
    return 0, f"the Landlock version query failed ({_errno_name(err)})"


def _fault(step: str) -> int:
    """Invalid flags for ``step`` when the test hook asks for its failure, else 0."""
    return 1 << 30 if os.environ.get(FAULT_VARIABLE) == step else 0


def restrict(roots: list[str], *, read_only: bool, network: bool, best_effort: bool = False) -> int:
    """Confine this thread: reads everywhere, writes under ``roots`` and the devices; returns the ABI.

    ``best_effort``: the namespace sandbox around this process already bounds writes and the network,
    so a kernel without Landlock (or without its network rules) is not a reason to refuse."""
    abi, reason = probe(_fault("probe"))  # the fault only ever here, never in MAIA's own probe
    if abi < 1:
        if best_effort and not os.environ.get(FAULT_VARIABLE):
            return 0
        raise SandboxError(reason)
    if not network and abi < 4:
        if not best_effort:
            raise SandboxError(f"turning the network off needs Landlock ABI 4 (Linux 6.7); this kernel has ABI {abi}")
        network = True  # bubblewrap's --unshare-net took the network away
    kernel = _Kernel()
    handled_fs = fs_rights(abi)
    handled_net = 0 if network else net_rights(abi)
    # Signals to processes outside the sandbox and abstract UNIX sockets they listen on (X11, a session
    # bus: a way to the user's desktop) are refused (ABI 6), whatever the network setting. Both are
    # simply absent on older kernels.
    scoped = scope_rights(abi)
    import struct

    attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset, err = kernel.syscall(SYS_LANDLOCK_CREATE_RULESET, kernel.buffer(attr[:size]), size, _fault("create"))
    if ruleset < 0:
        raise SandboxError(f"landlock_create_ruleset failed ({_errno_name(err)})")
    try:
        rules: list[tuple[str, int, bool]] = [("/", FS_READ_RIGHTS, True)]
        rules += [(d, FS_ALL if d in DEVICE_FOLDERS else FS_DEVICE_RIGHTS, False) for d in DEVICES]
        if not read_only:
            rules += [(root, FS_ALL, True) for root in roots]
        for path, rights, required in rules:
            _add_rule(kernel, ruleset, path, rights & handled_fs, required)
        done, err = kernel.prctl(PR_SET_NO_NEW_PRIVS, 1)
        if done != 0:
            raise SandboxError(f"prctl(PR_SET_NO_NEW_PRIVS) failed ({_errno_name(err)})")
        done, err = kernel.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, _fault("restrict"))
        if done != 0:
            raise SandboxError(f"landlock_restrict_self failed ({_errno_name(err)})")
    finally:
        os.close(ruleset)
    return abi


def _add_rule(kernel: _Kernel, ruleset: int, path: str, rights: int, required: bool) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError as error:
        if not required:
            return
        raise SandboxError(f"cannot open the writable folder {path}: {error.strerror}") from None
    try:
        import stat

        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FS_FILE_RIGHTS
        import struct

        attr = struct.pack("=Qi", rights, fd)
        done, err = kernel.syscall(
            SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, kernel.buffer(attr), _fault("add_rule")
        )
        if done != 0:
            raise SandboxError(f"landlock_add_rule failed for {path} ({_errno_name(err)})")
    finally:
        os.close(fd)


def _parse(args: list[str]) -> tuple[list[str], bool, bool, bool, int | None, list[str]]:
    roots: list[str] = []
    read_only = False
    network = True
    best_effort = False
    status_fd: int | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return roots, read_only, network, best_effort, status_fd, args[i + 1 :]
        if arg in ("--write", "--status-fd"):
            if i + 1 >= len(args):
                raise ValueError(f"{arg} needs a value")
            value = args[i + 1]
            i += 2
        elif arg.startswith(("--write=", "--status-fd=")):
            arg, value = arg.split("=", 1)
            i += 1
        elif arg == "--read-only":
            read_only = True
            i += 1
            continue
        elif arg == "--no-network":
            network = False
            i += 1
            continue
        elif arg == "--best-effort":
            best_effort = True
            i += 1
            continue
        else:
            raise ValueError(f"unknown option {arg!r}")
        if arg == "--write":
            if not value:
                raise ValueError("--write needs a folder")
            roots.append(value)
        else:
            if not value.isdigit():
                raise ValueError("--status-fd needs a file descriptor number")
            status_fd = int(value)
    raise ValueError("missing -- before the command")


def _report(status_fd: int | None, kind: str, text: str, code: int = 0) -> None:
    """The reason nothing ran: on the status pipe for MAIA, else on stderr for a person."""
    if status_fd is not None:
        message = f"exec\t{code}\t{text}" if kind == "exec" else f"{kind}\t{text}"
        try:
            os.write(status_fd, message.encode("utf-8", "replace"))
            return
        except OSError:
            pass
    os.write(2, f"maia sandbox: {text}\n".encode("utf-8", "replace"))


def main(argv: list[str] | None = None) -> int:
    """Parse, confine, exec; returns an exit status only when the command could not be run."""
    args = sys.argv[1:] if argv is None else argv
    try:
        roots, read_only, network, best_effort, status_fd, command = _parse(args)
        if not command:
            raise ValueError("no command after --")
        if read_only and roots:
            raise ValueError("--read-only and --write exclude each other")
    except ValueError as error:
        os.write(2, f"maia sandbox: {error}\n{USAGE}\n".encode())
        return EXIT_USAGE
    try:
        restrict(roots, read_only=read_only, network=network, best_effort=best_effort)
    except SandboxError as error:
        _report(status_fd, "sandbox", str(error))
        return EXIT_SANDBOX
    except OSError as error:  # anything unexpected still runs nothing
        _report(status_fd, "sandbox", f"unexpected error: {error}")
        return EXIT_SANDBOX
    _signal = __import__("_signal")  # the C module: ``signal`` would import enum (3 ms)

    # Python ignores these at start-up and an ignored signal survives exec: give the command the
    # defaults a shell would (``yes | head`` must end by SIGPIPE, not loop on write errors).
    for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ"):
        number = getattr(_signal, name, None)
        if number is not None:
            _signal.signal(number, _signal.SIG_DFL)
    if status_fd is not None:
        os.set_inheritable(status_fd, False)  # closed by exec: "ok" alone means "started"
        try:  # noqa: SIM105  (contextlib would cost an import on every command)
            os.write(status_fd, b"ok")
        except OSError:
            pass
    try:
        os.execvp(command[0], command)
    except OSError as error:
        _report(status_fd, "exec", f"{command[0]}: {error.strerror}", error.errno or 0)
        return EXIT_NOT_FOUND if isinstance(error, FileNotFoundError) else EXIT_CANNOT_EXECUTE
    return EXIT_CANNOT_EXECUTE  # not reached: execvp replaces the process


if __name__ == "__main__":
    sys.exit(main())
