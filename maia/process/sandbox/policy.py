"""The sandbox policy: built from settings, turned into launcher arguments, described to the user.

``SandboxPolicy`` is what a tool context carries (``None`` = no sandbox). ``run_shell`` calls its
``launcher_argv`` to wrap a command, ``failure_message`` when the launcher refused (fail closed) and
``note_for`` to add one line for the model when a sandboxed command was denied a write.
"""

from __future__ import annotations

import functools
import marshal
import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from maia.i18n import _
from maia.process.sandbox import launcher, namespaces

if TYPE_CHECKING:
    from maia.core.settings import Settings

SandboxMode: TypeAlias = Literal["off", "workspace-write", "read-only", "strict"]
ActiveMode: TypeAlias = Literal["workspace-write", "read-only"]
DEFAULT_SETTINGS_FILE = "~/.maia/settings.json"
# files a command could add to .git so that the user's next git runs code of its choosing (a new
# "common" repository with core.fsmonitor and hooks; per-worktree config): removed when one appears
GIT_REDIRECTS = ("commondir", "config.worktree")

# What a denied write, connection or signal prints, whatever the program (bash, coreutils,
# Python's PermissionError, Node's EACCES…). Only looked for when a sandboxed run failed.
_DENIAL = re.compile(
    r"permission denied|operation not permitted|read-only file system|\bEACCES\b|\bEPERM\b|\bEROFS\b",
    re.IGNORECASE,
)
# With the network off, clients often word a refused connect their own way (curl: "Couldn't connect").
_NET_DENIAL = re.compile(
    r"couldn'?t connect|could not connect|failed to connect|unable to connect|connection refused|"
    r"network is unreachable|\bECONNREFUSED\b|\bENETUNREACH\b",
    re.IGNORECASE,
)


# The launcher runs from bytecode MAIA compiled once, in memory, from the source it read at the first
# command: nothing is compiled per call and no .pyc is written or read (PYTHONDONTWRITEBYTECODE, a
# read-only install and a launch folder that holds MAIA's own source all behave the same). A sandboxed
# command that rewrites launcher.py cannot unsandbox the next one. The interpreter decodes the hex
# argument with built-ins only (``bytes.fromhex``, ``marshal``): no import, a few microseconds.
BOOTSTRAP = "import sys,marshal;exec(marshal.loads(bytes.fromhex(sys.argv.pop(1))))"
# run_shell hands the same bytecode through an inherited memory file instead: the command line stays
# short (``ps`` inside the sandbox shows no bytecode). ``pread``: one file serves concurrent commands.
BOOTSTRAP_FD = "import os,sys,marshal;f=int(sys.argv.pop(1));c=os.pread(f,1<<24,0);os.close(f);exec(marshal.loads(c))"


@functools.cache
def _launcher_bytes() -> bytes:
    source = Path(launcher.__file__).read_text(encoding="utf-8")
    return marshal.dumps(compile(source, "<maia sandbox launcher>", "exec", dont_inherit=True, optimize=2))


@functools.cache
def _launcher_code() -> str:
    return _launcher_bytes().hex()


@functools.cache
def launcher_code_fd() -> int | None:
    """A memory file holding the launcher's bytecode, open for this process's life (None: no memfd here)."""
    if not hasattr(os, "memfd_create"):
        return None
    fd = os.memfd_create("maia-sandbox-launcher", os.MFD_CLOEXEC)
    if fd < 3:  # MAIA started with a standard descriptor closed: keep clear of 0-2
        import fcntl

        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
        os.close(fd)
        fd = moved
    data = memoryview(_launcher_bytes())
    while data:
        data = data[os.write(fd, data) :]
    return fd


@functools.cache
def _interpreter() -> str:
    # The real binary, not a virtual environment's link that may sit inside the writable launch folder.
    return os.path.realpath(sys.executable) if sys.executable else "python3"


@functools.cache
def landlock_abi() -> tuple[int, str]:
    """This kernel's Landlock ABI version (0 when unavailable) and, when 0, the reason."""
    return launcher.probe()


def install_hint() -> str:
    """How to get the namespace sandbox."""
    return _("install bubblewrap (Debian, Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)")


def namespace_support() -> tuple[bool, str]:
    """Whether bubblewrap works here and, when not, why."""
    program, reason = namespaces.probe()
    return program is not None, reason


PathKind: TypeAlias = Literal["protected", "hidden", "outside"]


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """Where sandboxed commands may write, what they cannot see, and whether they reach the network.

    ``namespaces``: commands run under bubblewrap (new namespaces, read-only root, private /tmp,
    protected paths read-only, ``hidden`` paths covered), Landlock inside where the kernel has it;
    else under Landlock alone. ``refusal``: why every command is refused (``"Sandbox": "strict"``
    without bubblewrap), None when commands may run.
    """

    mode: ActiveMode
    launch: Path
    temp_dirs: tuple[Path, ...] = ()
    extra_roots: tuple[Path, ...] = ()
    network: bool = True
    settings_file: str = DEFAULT_SETTINGS_FILE
    namespaces: bool = False
    hidden: tuple[Path, ...] = ()
    strict: bool = False
    refusal: str | None = None
    revealed: tuple[Path, ...] = ()  # inside hidden paths, shown read-only: the user's tools, skills, hooks, commands

    def git_redirects(self) -> dict[Path, bool]:
        """The launch repository's files that would make the user's own git read another repository's
        configuration and hooks (``commondir``, ``config.worktree``), and whether each exists now."""
        git = self.launch / ".git"
        return {git / name: os.path.lexists(git / name) for name in GIT_REDIRECTS} if git.is_dir() else {}

    @property
    def uses_namespaces(self) -> bool:
        """Commands run under the namespace sandbox (bubblewrap): protected files, hidden home, private /tmp."""
        return self.namespaces and self.refusal is None

    @property
    def writable_roots(self) -> tuple[Path, ...]:
        """The folders writable as a whole (none in read-only mode), without duplicates."""
        if self.mode == "read-only":
            return ()
        if self.namespaces:
            return tuple(dict.fromkeys((self.launch, *self.extra_roots, namespaces.private_tmp())))
        return tuple(dict.fromkeys((self.launch, *self.temp_dirs, *self.extra_roots)))

    def protected_paths(self) -> list[Path]:
        """The protected paths that exist now (bound read-only under the namespace sandbox)."""
        return namespaces.protected_paths(self.launch)

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` for a sandboxed command: no handle to a daemon outside; TMPDIR the private /tmp."""
        clean = {k: v for k, v in env.items() if k not in namespaces.DAEMON_VARIABLES}
        if self.namespaces:
            clean["TMPDIR"] = "/tmp"
            for name in ("TMP", "TEMP"):
                if name in clean:
                    clean[name] = "/tmp"
        return clean

    def launcher_argv(
        self, command: Sequence[str], status_fd: int | None = None, code_fd: int | None = None
    ) -> list[str]:
        """The argv that runs ``command`` inside the sandbox (``-I -S``: no site, no PYTHON*, no launch folder).

        ``code_fd``: the launcher's bytecode is read from that inherited descriptor (``launcher_code_fd``)
        rather than carried on the command line."""
        if code_fd is None:
            argv = [_interpreter(), "-I", "-S", "-c", BOOTSTRAP, _launcher_code()]
        else:
            argv = [_interpreter(), "-I", "-S", "-c", BOOTSTRAP_FD, str(code_fd)]
        if status_fd is not None:
            argv += ["--status-fd", str(status_fd)]
        if self.namespaces:
            argv.append("--best-effort")
            roots: tuple[Path, ...] = () if self.mode == "read-only" else (self.launch, *self.extra_roots, Path("/tmp"))
        else:
            roots = self.writable_roots
        for root in dict.fromkeys(roots):
            argv += ["--write", str(root)]
        if self.mode == "read-only":
            argv.append("--read-only")
        if not self.network:
            argv.append("--no-network")
        argv = [*argv, "--", *command]
        if not self.namespaces:
            return argv
        program = namespaces.probe()[0] or "bwrap"  # absent: bwrap fails to start, nothing runs
        folders = (self.launch, *self.extra_roots)
        wrap = namespaces.bwrap_args(
            writable=folders if self.mode != "read-only" else (),
            read_only_binds=folders if self.mode == "read-only" else (),
            protected=self.protected_paths(),
            anchors=namespaces.git_dirs(self.launch),
            hidden=self.hidden,
            network=self.network,
            tmp=namespaces.private_tmp(),
            revealed=self.revealed,
        )
        return [program, *wrap, "--", *argv]

    def failure_message(self, reason: str) -> str:
        """Why nothing ran, and how to turn the sandbox off."""
        return _(
            "the sandbox could not be applied: {reason}. Nothing was run. To run commands without "
            'the sandbox, set "Sandbox": "off" in {settings}.'
        ).format(reason=reason, settings=self.settings_file)

    def name(self) -> str:
        """Which sandbox runs commands, for the model and the user."""
        if self.namespaces:
            return _("the namespace sandbox (bubblewrap, with Landlock inside)")
        return _("the Landlock sandbox")

    def blocked_note(self) -> str:
        """The one line the model reads after a denied write: what is allowed, and to ask the user."""
        if self.mode == "read-only":
            where = _("this command ran in a read-only sandbox (writes only to /dev/null-like devices)")
        elif self.namespaces:
            where = _(
                "this command ran in {sandbox}: writes are allowed only under {roots} (/tmp is private) "
                "and /dev/null-like devices"
            ).format(sandbox=self.name(), roots=", ".join(str(r) for r in (self.launch, *self.extra_roots, "/tmp")))
        else:
            where = _(
                "this command ran in a sandbox: writes are allowed only under {roots} and /dev/null-like devices"
            ).format(roots=", ".join(str(r) for r in self.writable_roots))
        if self.network:
            network = ""
        elif self.namespaces:
            network = _("; there is no network (loopback included)")
        else:
            network = _("; TCP connections are refused")
        return _(
            "MAIA sandbox: {where}{network}. If the command needs more, ask the user before retrying "
            "(they can add folders to SandboxWritableRoots or turn the sandbox off)."
        ).format(where=where, network=network)

    def kind_of(self, path: Path) -> PathKind | None:
        """Why the sandbox refuses ``path``: protected, hidden, outside the writable folders (None: none of these)."""
        hidden = any(_contains(h, path) for h in self.hidden)
        if self.namespaces and hidden and not any(_contains(r, path) for r in self.revealed):
            return "hidden"
        if any(_contains(p, path) for p in self._protected_candidates()):
            return "protected"
        roots = (self.launch, *self.extra_roots, Path("/tmp")) if self.namespaces else self.writable_roots
        if self.mode != "read-only" and any(_contains(r, path) for r in roots):
            return None
        return "outside"

    def _protected_candidates(self) -> list[Path]:
        names = [self.launch / name for name in namespaces.PROTECTED_NAMES]
        for git in namespaces.git_dirs(self.launch):
            names += [git / name for name in namespaces.PROTECTED_GIT]
        return names

    def path_note(self, path: str, kind: PathKind) -> str:
        """The line for a refusal on a protected or hidden path."""
        if kind == "protected":
            return _(
                "MAIA sandbox: {path} is protected in {sandbox}: commands cannot change MAIA's, the agents' or "
                "git's configuration (.maia/, .mcp.json, .agents/, MAIA.md, CLAUDE.md, AGENTS.md, .git/config, "
                ".git/hooks, .git/info). Use the Write or Edit tool, which asks the user."
            ).format(path=path, sandbox=self.name())
        return _(
            "MAIA sandbox: {path} is hidden from commands in {sandbox} (MAIA's home and SandboxHiddenPaths look "
            "empty). Do not try to reach it another way; ask the user if the task needs it."
        ).format(path=path, sandbox=self.name())

    def note_for(self, output: str, exit_code: int | None = 1) -> str | None:
        """One line for the model when the output shows a refusal from the sandbox, else None.

        Protected and hidden paths are named whatever the exit code (a script may carry on after a
        refused write); otherwise a denial counts only when the command failed."""
        failed = exit_code != 0
        for line in output.splitlines():
            refused = bool(_DENIAL.search(line) or _BUSY.search(line))
            missing = bool(self.namespaces and _MISSING.search(line))  # a hidden path looks empty
            if not refused and not missing:
                continue
            for raw in _paths_in(line):
                expanded = os.path.expanduser(raw)
                path = Path(os.path.normpath(expanded if os.path.isabs(expanded) else self.launch / expanded))
                kind = self.kind_of(path)
                if kind == "hidden" or (kind == "protected" and refused):
                    return self.path_note(raw, kind)
        if failed and (_DENIAL.search(output) or (not self.network and _NET_DENIAL.search(output))):
            return self.blocked_note()
        if not failed and _EROFS.search(output):
            return self.blocked_note()
        return None


_MISSING = re.compile(r"no such file or directory|\bENOENT\b", re.IGNORECASE)
_BUSY = re.compile(r"device or resource busy|\bEBUSY\b", re.IGNORECASE)  # a protected mount point
_EROFS = re.compile(r"read-only file system|\bEROFS\b", re.IGNORECASE)
# Paths in an error line: quoted ('x', "x", ‘x’, `x'), or the word before ": Permission denied".
_QUOTED = re.compile(r"['\"‘`]([^'\"’\n]{1,4096})['\"’]")
_BEFORE = re.compile(
    r"(?:^|\s)([^\s:'\"]+):\s*(?:cannot [^:]*:\s*)?"
    r"(?:permission denied|read-only file system|operation not permitted|device or resource busy|"
    r"no such file or directory)",
    re.IGNORECASE,
)


def _paths_in(line: str) -> list[str]:
    found = [m.group(1) for m in _BEFORE.finditer(line)] + [m.group(1) for m in _QUOTED.finditer(line)]
    return [
        p for p in found if p and not p.startswith("[") and ("/" in p or "." in p or p in namespaces.PROTECTED_NAMES)
    ]


# --- settings → policy --------------------------------------------------------------------------


def system_temp_dirs() -> tuple[Path, ...]:
    """The system temporary folder (``TMPDIR`` or ``/tmp``), and ``/tmp`` itself on POSIX."""
    found = [Path(tempfile.gettempdir()).resolve()]
    if os.name == "posix" and os.path.isdir("/tmp"):
        found.append(Path("/tmp").resolve())
    return tuple(dict.fromkeys(found))


def sandbox_mode(settings: Settings | None, abi: int | None = None) -> tuple[SandboxMode, bool]:
    """The mode and whether the user chose it (else: workspace-write where Landlock or bubblewrap works).

    ``"strict"`` is workspace-write that refuses commands without the namespace sandbox."""
    chosen = settings.sandbox if settings is not None else None
    if chosen in ("off", "workspace-write", "read-only", "strict"):
        return chosen, True  # type: ignore[return-value]  # checked just above
    level = landlock_abi()[0] if abi is None else abi
    return _mode(settings, level, namespace_support()[0])


def _hidden(settings: Settings | None, launch: Path, home: Path) -> tuple[Path, ...]:
    """MAIA's home, the user's SandboxHiddenPaths and the session's runtime folder (daemons' sockets)."""
    found = [home]
    for raw in settings.sandbox_hidden_paths if settings is not None else []:
        expanded = Path(os.path.expanduser(raw))
        found.append((expanded if expanded.is_absolute() else launch / expanded).resolve())
    runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}" if hasattr(os, "getuid") else ""
    if runtime and os.path.isdir(runtime):
        found.append(Path(runtime).resolve())
    return tuple(dict.fromkeys(found))


def _user_roots(settings: Settings | None, launch: Path) -> tuple[list[Path], list[str]]:
    roots: list[Path] = []
    missing: list[str] = []
    for raw in settings.sandbox_writable_roots if settings is not None else []:
        expanded = Path(os.path.expanduser(raw))
        path = (expanded if expanded.is_absolute() else launch / expanded).resolve()
        if path.is_dir():
            roots.append(path)
        else:
            missing.append(raw)
    return roots, missing


def policy_from_settings(
    settings: Settings | None,
    launch: Path,
    *,
    abi: int | None = None,
    temp_dirs: Sequence[Path] | None = None,
    settings_file: Path | None = None,
    use_namespaces: bool | None = None,
) -> SandboxPolicy | None:
    """The policy for commands launched from ``launch``; None when the sandbox is off.

    A sandbox the user asked for is returned even when the kernel cannot apply it: the launcher
    then refuses to run each command (fail closed). Missing ``SandboxWritableRoots`` are dropped
    (``startup_notices`` reports them). ``settings_file`` names the file in messages when there are
    no settings (default ``~/.maia/settings.json``). ``use_namespaces`` None: bubblewrap when it works.
    """
    level = landlock_abi()[0] if abi is None else abi
    usable, why = namespace_support() if use_namespaces is None else (use_namespaces, "")
    mode, _chosen = _mode(settings, level, usable)
    if mode == "off":
        return None
    roots, _missing = _user_roots(settings, launch)
    file = _file(settings, settings_file)
    home = Path(file).expanduser().parent.resolve()
    refusal = None
    if mode == "strict" and not usable:
        refusal = _('"Sandbox": "strict" needs the namespace sandbox, which is not available: {reason}; {hint}').format(
            reason=why or _("bubblewrap is not available"), hint=install_hint()
        )
    return SandboxPolicy(
        mode="workspace-write" if mode == "strict" else mode,
        launch=launch.resolve(),
        temp_dirs=tuple(system_temp_dirs() if temp_dirs is None else (p.resolve() for p in temp_dirs)),
        extra_roots=tuple(roots),
        network=(settings.sandbox_network if settings is not None else None) != "off",
        settings_file=file,
        namespaces=usable,
        hidden=_hidden(settings, launch, home) if usable else (),
        # inside the hidden home, what the user runs on purpose: tools, skills, hooks, slash commands
        revealed=(home / "tools", home / "skills", home / "hooks", home / "commands") if usable else (),
        strict=mode == "strict",
        refusal=refusal,
    )


def _file(settings: Settings | None, settings_file: Path | None) -> str:
    if settings is not None:
        return str(settings.path)
    return str(settings_file) if settings_file is not None else DEFAULT_SETTINGS_FILE


@dataclass(frozen=True, slots=True)
class Notice:
    """One start-up message about the sandbox."""

    level: Literal["info", "warning"]
    text: str


def startup_notices(
    settings: Settings | None,
    launch: Path,
    *,
    abi: int | None = None,
    reason: str | None = None,
    settings_file: Path | None = None,
    use_namespaces: bool | None = None,
) -> list[Notice]:
    """What to tell the user at start-up: the INFO line when the sandbox defaults to off or lacks
    namespaces, warnings when it cannot be applied as set. Nothing when the sandbox is on and complete.
    """
    level, why = landlock_abi() if abi is None else (abi, reason or _("this kernel has no Landlock"))
    usable, ns_why = namespace_support() if use_namespaces is None else (use_namespaces, "")
    ns_why = ns_why or _("bubblewrap is not available")
    mode, chosen = sandbox_mode(settings, level) if use_namespaces is None else _mode(settings, level, usable)
    file = _file(settings, settings_file)
    notices: list[Notice] = []
    if mode == "off":
        if not chosen:
            notices.append(
                Notice("info", _("Sandbox off: {reason}; commands run with your own rights.").format(reason=why))
            )
        return notices
    if usable:
        pass  # bubblewrap bounds writes and the network; Landlock inside only where the kernel has it
    elif mode == "strict":
        notices.append(
            Notice(
                "warning",
                _(
                    '"Sandbox": "strict" is set in {file} but the namespace sandbox is not available ({reason}): '
                    "shell commands will not run. To get it: {hint}."
                ).format(file=file, reason=ns_why, hint=install_hint()),
            )
        )
    elif level < 1:
        notices.append(
            Notice(
                "warning",
                _(
                    'Sandbox "{mode}" is set in {file} but cannot be applied: {reason}. Shell commands will '
                    'not run; set "Sandbox": "off" to run them without the sandbox.'
                ).format(mode=mode, file=file, reason=why),
            )
        )
    elif settings is not None and settings.sandbox_network == "off" and level < 4:
        notices.append(
            Notice(
                "warning",
                _(
                    '"SandboxNetwork": "off" needs Landlock ABI 4 (Linux 6.7); this kernel has ABI {abi}. '
                    'Shell commands will not run; set "SandboxNetwork": "on" or "Sandbox": "off" in {file}.'
                ).format(abi=level, file=file),
            )
        )
    else:
        notices.append(Notice("info", missing_protections(ns_why)))
    roots, missing = _user_roots(settings, launch)
    home = Path(file).expanduser().parent.resolve()
    exposed = (
        _contains(home, launch.resolve()) if usable else any(_contains(r, home) for r in (launch.resolve(), *roots))
    )
    if mode in ("workspace-write", "strict") and exposed:
        notices.append(
            Notice(
                "warning",
                _(
                    "{home} is inside a folder sandboxed commands may write to: they can change MAIA's "
                    "settings. Start MAIA from a project folder instead."
                ).format(home=home),
            )
        )
    notices.extend(
        Notice(
            "warning",
            _("{file}: SandboxWritableRoots: {root} is not an existing folder; ignored.").format(file=file, root=raw),
        )
        for raw in missing
    )
    return notices


def missing_protections(reason: str) -> str:
    """What commands get without bubblewrap, and how to get it."""
    return _(
        "Sandbox: Landlock only ({reason}). Missing: protected files (.maia/, .mcp.json, .git/config, hooks), "
        "MAIA's home hidden from commands, a private /tmp, commands kept off your terminal and other "
        "processes. To get them: {hint}."
    ).format(reason=reason, hint=install_hint())


def _mode(settings: Settings | None, level: int, usable: bool) -> tuple[SandboxMode, bool]:
    chosen = settings.sandbox if settings is not None else None
    if chosen in ("off", "workspace-write", "read-only", "strict"):
        return chosen, True  # type: ignore[return-value]  # checked just above
    return ("workspace-write" if level >= 1 or usable else "off"), False


# --- status ---------------------------------------------------------------------------------------


def _contains(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def status_data(policy: SandboxPolicy | None, *, abi: int | None = None, reason: str | None = None) -> dict[str, Any]:
    """The sandbox state as JSON-ready data (``maia sandbox status --json``)."""
    level, why = landlock_abi() if abi is None else (abi, reason or "")
    data: dict[str, Any] = {
        "landlock_abi": level,
        "landlock_unavailable_reason": why or None,
        "mode": policy.mode if policy is not None else "off",
        "enforced": policy is not None
        and policy.refusal is None
        and (policy.namespaces or (level >= 1 and (policy.network or level >= 4))),
        "namespaces": policy is not None and policy.uses_namespaces,
        "namespaces_unavailable_reason": None if namespace_support()[0] else namespace_support()[1],
        "strict": policy is not None and policy.strict,
        "refusal": policy.refusal if policy is not None else None,
    }
    if policy is None:
        return data
    data.update(
        {
            "launch_folder": str(policy.launch),
            "writable_roots": [str(r) for r in policy.writable_roots],
            "temp_dirs": [str(r) for r in policy.temp_dirs] if policy.mode != "read-only" else [],
            "extra_roots": [str(r) for r in policy.extra_roots] if policy.mode != "read-only" else [],
            "devices": list(launcher.DEVICES),
            "network": "on" if policy.network else "off",
            "private_tmp": str(namespaces.private_tmp()) if policy.namespaces else None,
            "protected_paths": [str(p) for p in policy.protected_paths()] if policy.namespaces else [],
            "hidden_paths": [str(p) for p in namespaces.visible_paths(policy.hidden)] if policy.namespaces else [],
            "not_covered": (
                ["reads outside hidden paths", "protected paths that do not exist yet"]
                if policy.namespaces
                else ["reads", "UDP", "UNIX sockets", "protected files", "hidden paths", "private /tmp", "terminal"]
            ),
            "signals_scoped": level >= 6,
            "settings_file": policy.settings_file,
        }
    )
    return data


def status_lines(
    policy: SandboxPolicy | None, *, abi: int | None = None, reason: str | None = None, chosen: bool | None = None
) -> list[str]:
    """The sandbox state in a few lines: ``maia sandbox status`` and the ``/sandbox`` chat command.

    ``chosen`` says whether the mode comes from the settings (True) or is the system's default (False).
    """
    level, why = landlock_abi() if abi is None else (abi, reason or _("this kernel has no Landlock"))
    kernel = (
        _("Kernel: Landlock ABI {abi}").format(abi=level)
        if level >= 1
        else _("Kernel: no Landlock ({reason})").format(reason=why)
    )
    origin = {True: _(" (from the settings)"), False: _(" (the default on this system)"), None: ""}[chosen]
    if policy is None:
        return [_("Sandbox: off{origin}: commands run with your own rights").format(origin=origin), kernel]
    mode = "strict" if policy.strict else policy.mode
    lines = [_("Sandbox: {mode}{origin}").format(mode=mode, origin=origin), kernel]
    if policy.refusal is not None:
        lines.append(_("Shell commands will not run: {reason}").format(reason=policy.refusal))
    elif policy.namespaces:
        lines.append(
            _(
                "Namespaces: bubblewrap (new mount, PID and IPC namespaces{net}; fresh /proc and /dev, no host "
                "terminal; root read-only); Landlock inside: {landlock}"
            ).format(
                net=_(", network") if not policy.network else "",
                landlock=_("yes") if level >= 1 else _("no"),
            )
        )
    else:
        lines.append(missing_protections(namespace_support()[1] or _("bubblewrap is not available")))
    if not policy.namespaces and (level < 1 or (not policy.network and level < 4)):
        lines.append(
            _('Not enforceable on this kernel: shell commands will not run. Set "Sandbox": "off" in {file}.').format(
                file=policy.settings_file
            )
        )
    lines.append(_("Writes allowed under:"))
    for root in policy.writable_roots:
        if root == policy.launch:
            label = _("launch folder") if policy.namespaces else _("launch folder, .git included")
        elif root in policy.extra_roots:
            label = _("SandboxWritableRoots")
        elif policy.namespaces:
            label = _("private temporary folder, /tmp and TMPDIR inside")
        else:
            label = _("temporary folder")
        lines.append(f"  {root}  ({label})")
    lines.append(f"  {', '.join(launcher.DEVICES)}  ({_('devices')})")
    if policy.namespaces:
        protected = policy.protected_paths()
        lines.append(_("Read-only inside the writable folders (protected):"))
        lines.extend(f"  {p}" for p in protected)
        if not protected:
            lines.append("  " + _("(none of the protected paths exists yet)"))
        lines.append(_("Hidden (an empty folder or file in their place):"))
        lines.extend(f"  {p}" for p in namespaces.visible_paths(policy.hidden))
        lines.append(_("Reads: everywhere except the hidden paths"))
    else:
        lines.append(_("Reads: everywhere (the sandbox bounds writes, not reads)"))
    if policy.network:
        lines.append(_("Network: on (not restricted)"))
    elif policy.namespaces:
        lines.append(_("Network: off: no network at all inside (loopback included)"))
    else:
        lines.append(_("Network: off: TCP connect and bind are refused; UDP and UNIX sockets are not covered"))
    if level >= 6:
        lines.append(_("Signals: refused to processes outside the sandbox"))
    if 1 <= level < 3:
        lines.append(_("Note: this kernel (ABI < 3) cannot refuse truncate() of files outside the writable folders"))
    home = Path(policy.settings_file).expanduser().parent
    if not policy.namespaces and any(_contains(root, home.resolve()) for root in policy.writable_roots):
        lines.append(
            _("Warning: {home} is inside a writable folder: sandboxed commands can change MAIA's settings").format(
                home=home
            )
        )
    lines.append(
        _(
            "Applies to: Bash, custom tools, ! commands, sub-agents' and workflows' tools, local MCP servers. "
            "Settings: {file}"
        ).format(file=policy.settings_file)
    )
    return lines
