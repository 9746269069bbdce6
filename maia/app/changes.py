"""What the agent changed with Write and Edit, turn by turn: the snapshots behind ``/undo`` and ``/diff``.

Before a Write or Edit replaces a file, the tool hands the old content (or its absence) to the
recorder; after, the new content's digest. ``/undo`` restores the files of the last turns in reverse
order, refusing a file that changed since the agent wrote it (someone else's change is never thrown
away). Changes made by Bash commands are not seen here: the user is told so.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from maia.core.diffs import unified_diff
from maia.core.storage import write_atomic
from maia.i18n import _

MAX_SNAPSHOT = 5 * 1024 * 1024  # bigger files are recorded as changed, not kept for undo


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


@dataclass(slots=True)
class FileChange:
    """One file a turn changed: its content before the turn's first change, and its digest after the last."""

    path: Path
    before: bytes | None  # None: the file did not exist
    too_big: bool = False
    mode: int | None = None
    after_digest: str | None = None


@dataclass(slots=True)
class Turn:
    """The files one request changed, and the conversation state to rewind to."""

    number: int
    files: dict[Path, FileChange] = field(default_factory=dict)
    rewind: object | None = None  # the application's checkpoint of the conversation before the request


@dataclass(frozen=True, slots=True)
class UndoResult:
    """What ``/undo`` did: files restored or removed, files left alone (and why)."""

    restored: list[Path]
    removed: list[Path]
    skipped: list[tuple[Path, str]]
    turns: int


class ChangeRecorder:
    """The snapshots of one conversation (in memory: they do not outlive the process)."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self._count = 0

    def start_turn(self, rewind: object | None = None) -> None:
        """A new request begins."""
        self._count += 1
        self.turns.append(Turn(self._count, rewind=rewind))

    def discard_empty_turn(self) -> None:
        """The request left the conversation as it was and changed no file: it is not a turn to undo."""
        if self.turns and not self.turns[-1].files:
            self.turns.pop()

    def before_write(self, path: Path) -> None:
        """Called by Write/Edit before replacing ``path``: keep what was there (the first time in a turn)."""
        if not self.turns:
            self.start_turn()
        turn = self.turns[-1]
        key = Path(os.path.realpath(path))
        if key in turn.files:
            return
        try:
            size = key.stat().st_size
            mode = key.stat().st_mode & 0o7777
        except FileNotFoundError:
            turn.files[key] = FileChange(key, None)
            return
        if size > MAX_SNAPSHOT:
            turn.files[key] = FileChange(key, None, too_big=True, mode=mode)
            return
        turn.files[key] = FileChange(key, _read(key), mode=mode)

    def after_write(self, path: Path) -> None:
        """Called once the file is written: remember what the agent left there."""
        if not self.turns:
            return
        change = self.turns[-1].files.get(Path(os.path.realpath(path)))
        if change is not None:
            change.after_digest = _digest(_read(change.path))

    @property
    def changed_files(self) -> list[Path]:
        """Every file changed in this conversation, in first-change order."""
        seen: dict[Path, None] = {}
        for turn in self.turns:
            for path in turn.files:
                seen.setdefault(path, None)
        return list(seen)

    def undoable(self) -> int:
        """How many turns can be undone."""
        return len(self.turns)

    def undo(self, count: int = 1) -> tuple[UndoResult, object | None]:
        """Revert the files of the last ``count`` turns; returns what was done and the rewind point."""
        count = max(1, min(count, len(self.turns)))
        undone = self.turns[-count:]
        del self.turns[-count:]
        restored: list[Path] = []
        removed: list[Path] = []
        skipped: list[tuple[Path, str]] = []
        for turn in reversed(undone):
            for change in turn.files.values():
                current = _read(change.path)
                if change.after_digest is None:
                    # the write failed or was interrupted: revert only a file still as it was before
                    if current != change.before:
                        skipped.append((change.path, _("its write did not finish as recorded; left as it is")))
                    continue
                if _digest(current) != change.after_digest:
                    skipped.append((change.path, _("changed since the agent wrote it; left as it is")))
                    continue
                if change.too_big:
                    skipped.append((change.path, _("larger than 5 MB: no copy was kept")))
                    continue
                try:
                    if change.before is None:
                        change.path.unlink(missing_ok=True)
                        removed.append(change.path)
                    else:
                        write_atomic(change.path, change.before, mode=change.mode)
                        restored.append(change.path)
                except OSError as error:
                    skipped.append((change.path, error.strerror or str(error)))
        return UndoResult(restored, removed, skipped, len(undone)), undone[0].rewind

    def diff(self, launch: Path) -> list[tuple[Path, str]]:
        """A unified diff per changed file: from before its first change to now."""
        firsts: dict[Path, FileChange] = {}
        for turn in self.turns:
            for path, change in turn.files.items():
                firsts.setdefault(path, change)
        out: list[tuple[Path, str]] = []
        for path, change in firsts.items():
            name = os.path.relpath(path, launch) if path.is_relative_to(launch) else str(path)
            if change.too_big:
                out.append((path, _("{name}: larger than 5 MB, no diff kept").format(name=name)))
                continue
            now = _read(path)
            out.append((path, unified_diff(change.before, now, name)))
        return out


# Repository configuration can name programs git runs: a sandboxed command may have written them
# into .git/config (or a cloned repository may ship them through .gitattributes). MAIA's own git
# runs outside the sandbox, so each of them is switched off on the command line, which wins over
# every configuration file.
SAFE_GIT_OPTIONS = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.sshCommand=false",
    "core.askPass=",
    "core.editor=false",
    "credential.helper=",
    "diff.external=",
    "protocol.allow=never",
    "core.quotepath=off",
)


def _git_environment() -> dict[str, str]:
    """The user's environment, with no program git could be told to run through it."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_EDITOR")
    }
    return {**env, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}


def safe_git_argv(git: str, root: Path, timeout: float = 10.0) -> list[str]:
    """``git`` with every program the repository's configuration could name switched off.

    Filter drivers (``filter.NAME.clean``/``smudge``/``process``, chosen by .gitattributes) have
    free names: they are listed (reading configuration runs nothing) and each one emptied."""
    import subprocess

    argv = [git, "--no-pager"]
    for option in SAFE_GIT_OPTIONS:
        argv += ["-c", option]
    try:
        listed = subprocess.run(
            [*argv, "config", "-z", "--name-only", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$"],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=_git_environment(),
        )
        names = listed.stdout.decode("utf-8", "replace").split("\0")
    except (OSError, subprocess.SubprocessError):
        names = []
    for name in dict.fromkeys(n.rsplit(".", 1)[0] for n in names if n.startswith("filter.")):
        for key in ("clean", "smudge", "process"):
            argv += ["-c", f"{name}.{key}="]
    return argv


def git_diff(launch: Path, paths: Sequence[Path], timeout: float = 10.0) -> str | None:
    """``git diff HEAD`` of ``paths`` (those inside the launch folder), changes made by commands included;
    None when the folder is not in a git work tree with a commit, or git is missing or fails. Blocking.

    Only git itself runs: no pager, hook, fsmonitor, external diff, textconv or filter program, even
    when the repository's configuration names one (see ``safe_git_argv``)."""
    import shutil
    import subprocess

    git = shutil.which("git")
    root = Path(os.path.realpath(launch))
    inside = [str(p) for p in paths if p.is_relative_to(root)]
    if git is None or not inside:
        return None
    command = [*safe_git_argv(git, root, timeout), "diff", "--no-color", "--no-ext-diff", "--no-textconv"]
    try:
        done = subprocess.run(
            [*command, "HEAD", "--", *inside],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=_git_environment(),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace")


def summarize(paths: Sequence[Path], launch: Path) -> str:
    """Paths relative to the launch folder, comma-separated."""
    return ", ".join(os.path.relpath(p, launch) if p.is_relative_to(launch) else str(p) for p in paths)
