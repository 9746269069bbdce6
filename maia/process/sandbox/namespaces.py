"""The namespace sandbox (bubblewrap) around each command: what is mounted, hidden, read-only.

bubblewrap (``bwrap``) gives the command new mount, PID and IPC namespaces (and a network
namespace when the network is off), a read-only view of the root file system, a fresh ``/proc``
and a minimal ``/dev``, a private ``/tmp``, the writable folders bound read-write, the protected
paths inside them bound read-only and the hidden paths covered by empty ones. The Landlock
launcher still runs inside it (two layers).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

# Opt-out for the user's environment (a container where user namespaces misbehave): MAIA then runs
# commands under Landlock alone, says so at start-up, and "Sandbox": "strict" refuses them.
DISABLE_VARIABLE = "MAIA_SANDBOX_NAMESPACES"

# Files and folders of the launch folder that steer MAIA, its agents or git: read-only inside.
PROTECTED_NAMES = (".maia", ".mcp.json", ".agents", "MAIA.md", "CLAUDE.md", "AGENTS.md")
PROTECTED_GIT = ("config", "config.worktree", "hooks", "info")

# Handles to daemons outside the sandbox: a command given them could ask the daemon to run
# something for it (tmux new-window, a D-Bus activation, a terminal's remote control…).
DAEMON_VARIABLES = frozenset(
    {
        "TMUX",
        "TMUX_PANE",
        "STY",
        "DBUS_SESSION_BUS_ADDRESS",
        "DBUS_SYSTEM_BUS_ADDRESS",
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "GPG_AGENT_INFO",
        "KITTY_LISTEN_ON",
        "KITTY_WINDOW_ID",
        "WEZTERM_UNIX_SOCKET",
        "WEZTERM_PANE",
        "ZELLIJ",
        "ZELLIJ_SESSION_NAME",
        "NVIM",
        "NVIM_LISTEN_ADDRESS",
        "VSCODE_IPC_HOOK_CLI",
        "GNOME_KEYRING_CONTROL",
        "XDG_ACTIVATION_TOKEN",
    }
)


@functools.cache
def probe() -> tuple[str | None, str]:
    """The bwrap program when it works here (None otherwise) and, when None, why (once per process)."""
    return check()


def check(*, remember: bool = True) -> tuple[str | None, str]:
    """``probe`` without the per-process cache; ``remember`` False: no file written in MAIA's home."""
    if os.environ.get(DISABLE_VARIABLE, "").lower() in ("off", "0", "no", "false"):
        return None, f"namespaces turned off by {DISABLE_VARIABLE}"
    found = shutil.which("bwrap")
    if found is None:
        return None, "bubblewrap (bwrap) is not installed"
    program = os.path.realpath(found)
    key = _probe_key(program)
    if key is not None and _cached(key):
        return program, ""
    import subprocess

    try:
        done = subprocess.run(
            [program, *base_args(network=True), "--", "/bin/sh", "-c", ":"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"bwrap cannot be run: {error}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"bwrap cannot create namespaces here ({detail[-1] if detail else done.returncode})"
    if key is not None and remember:
        _remember(key)
    return program, ""


# A working bwrap is remembered until the program, the kernel, the user or the boot changes: MAIA's start
# spares a process. Only success is kept: a stale entry can only make bwrap fail later, which runs nothing.
def _probe_key(program: str) -> str | None:
    try:
        info = os.stat(program)
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            boot = handle.read().strip()
    except OSError:
        return None
    uid = os.getuid() if hasattr(os, "getuid") else -1
    return f"{program}|{info.st_size}|{info.st_mtime_ns}|{os.uname().release}|{uid}|{boot}"


def _cache_file() -> Path:
    from maia.core.paths import maia_home

    return maia_home() / "cache" / "bwrap-works"


def _cached(key: str) -> bool:
    try:
        return _cache_file().read_text(encoding="utf-8") == key
    except (OSError, UnicodeDecodeError):
        return False


def _remember(key: str) -> None:
    from maia.core.storage import write_atomic

    try:
        path = _cache_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, key)
    except OSError:
        pass  # a read-only home: probe again next time


def base_args(*, network: bool) -> list[str]:
    """New namespaces, own session, tied to MAIA's life, read-only root, fresh /proc and /dev."""
    args = ["--new-session", "--die-with-parent", "--unshare-pid", "--unshare-ipc"]
    if not network:
        args.append("--unshare-net")
    return [*args, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]


@functools.cache
def private_tmp() -> Path:
    """This MAIA process's temporary folder, mounted as /tmp for its commands; removed at exit."""
    path = Path(tempfile.mkdtemp(prefix="maia-tmp-")).resolve()
    atexit.register(shutil.rmtree, path, True)
    return path


def git_dirs(launch: Path) -> list[Path]:
    """The git folders of the repository holding ``launch`` (a worktree's own and the common one)."""
    for folder in (launch, *launch.parents):
        dotgit = folder / ".git"
        if dotgit.is_dir():
            return [dotgit]
        if dotgit.is_file():
            try:
                text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return []
            if not text.startswith("gitdir:"):
                return []
            own = (folder / text[len("gitdir:") :].strip()).resolve()
            found = [own]
            try:
                common = (own / (own / "commondir").read_text(encoding="utf-8").strip()).resolve()
                found.append(common)
            except OSError:
                pass
            return found
    return []


def protected_paths(launch: Path) -> list[Path]:
    """The protected paths that exist now: MAIA's and the agents' files, the repository's config and hooks."""
    candidates = [launch / name for name in PROTECTED_NAMES]
    for git in git_dirs(launch):
        candidates += [git / name for name in PROTECTED_GIT]
    for folder in (launch, *launch.parents):
        dotgit = folder / ".git"
        if os.path.lexists(dotgit):
            if dotgit.is_file():  # a linked worktree's pointer: rewritten, it would lead git to other hooks
                candidates.append(dotgit)
            break
    return [p for p in candidates if os.path.lexists(p)]


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def bwrap_args(
    *,
    writable: Sequence[Path],
    read_only_binds: Sequence[Path],
    protected: Sequence[Path],
    anchors: Sequence[Path] = (),
    hidden: Sequence[Path],
    network: bool,
    tmp: Path,
    revealed: Sequence[Path] = (),
) -> list[str]:
    """Everything between ``bwrap`` and ``--``: later mounts cover earlier ones."""
    args = base_args(network=network)
    args += ["--bind", str(tmp), "/tmp"]
    # MAIA's own files (its interpreter's environment, its package's folder) stay visible, read-only,
    # where they live under the host's /tmp, which the private /tmp covers: hooks, tools and servers
    # started with MAIA's Python still find it (bound first: the writable folders come over them)
    for path in own_files():
        args += ["--ro-bind", str(path), str(path)]
    bound = [*writable, *read_only_binds]
    for root in writable:
        args += ["--bind", str(root), str(root)]
    for root in read_only_binds:
        args += ["--ro-bind", str(root), str(root)]
    # A folder bound onto itself is a mount point: it stays writable but cannot be renamed or
    # removed, so ``mv .git .git-old`` cannot swap the protected config and hooks for new ones.
    for path in anchors:
        if _under(path, writable) and path.is_dir():
            args += ["--bind", str(path), str(path)]
    for path in protected:
        if _under(path, writable):  # elsewhere the root's read-only view already protects it
            args += ["--ro-bind", str(path), str(path)]
    slash_tmp = Path("/tmp")
    for path in hidden:
        if any(path == root or path in root.parents for root in bound):
            continue  # hiding it would hide the launch folder: start-up warns instead
        if _under(path, [slash_tmp]) and not _under(path, bound):
            continue  # the shared /tmp is not visible inside anyway
        if path.is_dir():
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    # inside a hidden folder, what commands need to run (the user's custom tools and skills), read-only
    for path in revealed:
        if path.is_dir() and _under(path, hidden):
            args += ["--ro-bind", str(path), str(path)]
    return args


def own_files() -> list[Path]:
    """MAIA's interpreter environment and package folder, where they lie under the host's /tmp."""
    import maia

    places = {Path(sys.prefix), Path(os.path.realpath(sys.executable)).parent, Path(maia.__file__).resolve().parents[1]}
    found = [p for p in places if p.is_dir() and _under(p, [Path("/tmp")]) and p != Path("/tmp")]
    # a folder inside another one already bound is covered by it
    return sorted(p for p in found if not any(q != p and q in p.parents for q in found))


def visible_paths(paths: Iterable[Path]) -> list[Path]:
    """``paths`` that exist (hidden paths that are absent need no cover)."""
    return [p for p in paths if os.path.lexists(p)]
