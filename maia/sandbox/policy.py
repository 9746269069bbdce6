"""The sandbox policy: built from settings, turned into launcher arguments, described to the user.

``SandboxPolicy`` is what a tool context carries (``None`` = no sandbox). ``run_shell`` calls its
``launcher_argv`` to wrap a command, ``failure_message`` when the launcher refused (fail closed) and
``note_for`` to add one line for the model when a sandboxed command was denied a write.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from maia.i18n import _
from maia.sandbox import launcher

if TYPE_CHECKING:
    from maia.config import Settings

SandboxMode: TypeAlias = Literal["off", "workspace-write", "read-only"]
ActiveMode: TypeAlias = Literal["workspace-write", "read-only"]
DEFAULT_SETTINGS_FILE = "~/.maia/settings.json"

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


@functools.cache
def _launcher_source() -> str:
    # Read once: the launcher runs from this copy (``python -c``), so a sandboxed command that
    # rewrites launcher.py (MAIA's own repository as the launch folder) cannot unsandbox the next one.
    return Path(launcher.__file__).read_text(encoding="utf-8")


@functools.cache
def _interpreter() -> str:
    # The real binary, not a virtual environment's link that may sit inside the writable launch folder.
    return os.path.realpath(sys.executable) if sys.executable else "python3"


@functools.cache
def landlock_abi() -> tuple[int, str]:
    """This kernel's Landlock ABI version (0 when unavailable) and, when 0, the reason."""
    return launcher.probe()


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """Where sandboxed commands may write, and whether they may open TCP connections."""

    mode: ActiveMode
    launch: Path
    temp_dirs: tuple[Path, ...] = ()
    extra_roots: tuple[Path, ...] = ()
    network: bool = True
    settings_file: str = DEFAULT_SETTINGS_FILE

    @property
    def uses_namespaces(self) -> bool:
        """Whether commands run under the namespace sandbox (bubblewrap), which the ``auto`` mode needs."""
        return False  # replaced by the namespace sandbox

    @property
    def writable_roots(self) -> tuple[Path, ...]:
        """The folders writable as a whole (none in read-only mode), without duplicates."""
        if self.mode == "read-only":
            return ()
        return tuple(dict.fromkeys((self.launch, *self.temp_dirs, *self.extra_roots)))

    def launcher_argv(self, command: Sequence[str], status_fd: int | None = None) -> list[str]:
        """The argv that runs ``command`` inside the sandbox (``-I -S``: a few ms, no site, no PYTHON*)."""
        argv = [_interpreter(), "-I", "-S", "-c", _launcher_source()]
        if status_fd is not None:
            argv += ["--status-fd", str(status_fd)]
        for root in self.writable_roots:
            argv += ["--write", str(root)]
        if self.mode == "read-only":
            argv.append("--read-only")
        if not self.network:
            argv.append("--no-network")
        return [*argv, "--", *command]

    def failure_message(self, reason: str) -> str:
        """Why nothing ran, and how to turn the sandbox off."""
        return _(
            "the sandbox could not be applied: {reason}. Nothing was run. To run commands without "
            'the sandbox, set "Sandbox": "off" in {settings}.'
        ).format(reason=reason, settings=self.settings_file)

    def blocked_note(self) -> str:
        """The one line the model reads after a denied write: what is allowed, and to ask the user."""
        if self.mode == "read-only":
            where = _("this command ran in a read-only sandbox (writes only to /dev/null-like devices)")
        else:
            where = _(
                "this command ran in a sandbox: writes are allowed only under {roots} and /dev/null-like devices"
            ).format(roots=", ".join(str(r) for r in self.writable_roots))
        network = "" if self.network else _("; TCP connections are refused")
        return _(
            "MAIA sandbox: {where}{network}. If the command needs more, ask the user before retrying "
            "(they can add folders to SandboxWritableRoots or turn the sandbox off)."
        ).format(where=where, network=network)

    def note_for(self, output: str) -> str | None:
        """``blocked_note`` when the output of a failed sandboxed run shows a denial, else None."""
        if _DENIAL.search(output) or (not self.network and _NET_DENIAL.search(output)):
            return self.blocked_note()
        return None


# --- settings → policy --------------------------------------------------------------------------


def system_temp_dirs() -> tuple[Path, ...]:
    """The system temporary folder (``TMPDIR`` or ``/tmp``), and ``/tmp`` itself on POSIX."""
    found = [Path(tempfile.gettempdir()).resolve()]
    if os.name == "posix" and os.path.isdir("/tmp"):
        found.append(Path("/tmp").resolve())
    return tuple(dict.fromkeys(found))


def sandbox_mode(settings: Settings | None, abi: int | None = None) -> tuple[SandboxMode, bool]:
    """The mode and whether the user chose it (else: workspace-write where Landlock exists)."""
    chosen = settings.sandbox if settings is not None else None
    if chosen in ("off", "workspace-write", "read-only"):
        return chosen, True  # type: ignore[return-value]  # checked just above
    level = landlock_abi()[0] if abi is None else abi
    return ("workspace-write" if level >= 1 else "off"), False


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
) -> SandboxPolicy | None:
    """The policy for commands launched from ``launch``; None when the sandbox is off.

    A sandbox the user asked for is returned even when the kernel cannot apply it: the launcher
    then refuses to run each command (fail closed). Missing ``SandboxWritableRoots`` are dropped
    (``startup_notices`` reports them). ``settings_file`` names the file in messages when there are
    no settings (default ``~/.maia/settings.json``).
    """
    level = landlock_abi()[0] if abi is None else abi
    mode, _chosen = sandbox_mode(settings, level)
    if mode == "off":
        return None
    roots, _missing = _user_roots(settings, launch)
    return SandboxPolicy(
        mode=mode,
        launch=launch.resolve(),
        temp_dirs=tuple(system_temp_dirs() if temp_dirs is None else (p.resolve() for p in temp_dirs)),
        extra_roots=tuple(roots),
        network=(settings.sandbox_network if settings is not None else None) != "off",
        settings_file=_file(settings, settings_file),
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
) -> list[Notice]:
    """What to tell the user at start-up: the INFO line when the sandbox defaults to off, warnings else.

    Nothing when the sandbox is on and complete.
    """
    level, why = landlock_abi() if abi is None else (abi, reason or _("this kernel has no Landlock"))
    mode, chosen = sandbox_mode(settings, level)
    file = _file(settings, settings_file)
    notices: list[Notice] = []
    if mode == "off":
        if not chosen:
            notices.append(
                Notice("info", _("Sandbox off: {reason}; commands run with your own rights.").format(reason=why))
            )
        return notices
    if level < 1:
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
    roots, missing = _user_roots(settings, launch)
    home = Path(file).expanduser().parent.resolve()
    if mode == "workspace-write" and any(_contains(r, home) for r in (launch.resolve(), *roots)):
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
        "enforced": policy is not None and level >= 1 and (policy.network or level >= 4),
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
            "not_covered": ["reads", "UDP", "UNIX sockets"],
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
    lines = [_("Sandbox: {mode}{origin}").format(mode=policy.mode, origin=origin), kernel]
    if level < 1 or (not policy.network and level < 4):
        lines.append(
            _('Not enforceable on this kernel: shell commands will not run. Set "Sandbox": "off" in {file}.').format(
                file=policy.settings_file
            )
        )
    lines.append(_("Writes allowed under:"))
    for root in policy.writable_roots:
        if root == policy.launch:
            label = _("launch folder, .git included")
        elif root in policy.extra_roots:
            label = _("SandboxWritableRoots")
        else:
            label = _("temporary folder")
        lines.append(f"  {root}  ({label})")
    lines.append(f"  {', '.join(launcher.DEVICES)}  ({_('devices')})")
    lines.append(_("Reads: everywhere (the sandbox bounds writes, not reads)"))
    if policy.network:
        lines.append(_("Network: on (not restricted)"))
    else:
        lines.append(_("Network: off: TCP connect and bind are refused; UDP and UNIX sockets are not covered"))
    if level >= 6:
        lines.append(_("Signals: refused to processes outside the sandbox"))
    if 1 <= level < 3:
        lines.append(_("Note: this kernel (ABI < 3) cannot refuse truncate() of files outside the writable folders"))
    home = Path(policy.settings_file).expanduser().parent
    if any(_contains(root, home.resolve()) for root in policy.writable_roots):
        lines.append(
            _("Warning: {home} is inside a writable folder: sandboxed commands can change MAIA's settings").format(
                home=home
            )
        )
    lines.append(_("Applies to: Bash, custom tools and ! commands. Settings: {file}").format(file=policy.settings_file))
    return lines
