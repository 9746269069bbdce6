"""What every built-in tool shares: its spec, default permission, summary and input helpers."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from maia.core.contracts import Permission, ToolContext, ToolSpec, ToolTraits
from maia.core.paths import resolve_user_path
from maia.i18n import _
from maia.permissions.subject import Subject, default_subject

_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_TYPES.get(type(value), type(value).__name__)


def received(tool_input: Mapping[str, Any]) -> str:
    """``path (string), limit (integer)``: what the model sent, for error messages."""
    return ", ".join(f"{k} ({_json_type(v)})" for k, v in tool_input.items()) or "(none)"


class ToolError(Exception):
    """A tool failure the model should read (the runner turns it into an error result)."""


class BuiltinTool:
    """Base of the built-in tools: subclasses set the class attributes and ``execute``."""

    name: ClassVar[str]
    description: ClassVar[str]
    schema: ClassVar[dict[str, Any]]
    default_permission: ClassVar[Permission] = "auto"
    summary_key: ClassVar[str | None] = None
    traits: ToolTraits = ToolTraits()  # each tool declares its own (read-only, the file it writes…)

    @property
    def spec(self) -> ToolSpec:
        """Name, description and input schema."""
        return ToolSpec(self.name, self.description, self.schema)

    @property
    def permission(self) -> Permission:
        """The default permission when no rule applies."""
        return self.default_permission

    def describe(self, tool_input: Mapping[str, Any]) -> str:
        """A short summary: the main parameter's value."""
        key = self.summary_key
        value = tool_input.get(key) if key else None
        return str(value) if value is not None else ""

    def lock_key(self, tool_input: Mapping[str, Any], launch: Path) -> str | None:
        """No mutual exclusion by default."""
        return None

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """What permission rules match against: by default, any text or number value of the input
        (an ``mcp__server__tool`` or ``Agent`` tool is judged by its name: override to declare more)."""
        return default_subject(self.spec.name, tool_input)

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Run the tool."""
        raise ToolError(_("{name} cannot run.").format(name=self.name))


def require_str(tool_input: Mapping[str, Any], key: str, hint: str = "") -> str:
    """A required string parameter, or the §8 error naming it and listing what was received."""
    value = tool_input.get(key)
    if isinstance(value, str) and value:
        return value
    detail = hint or _("a non-empty string is expected")
    raise ToolError(
        _('Parameter "{name}" missing or invalid ({detail}). Parameters received: {received}.').format(
            name=key, detail=detail, received=received(tool_input)
        )
    )


def optional_int(tool_input: Mapping[str, Any], key: str, default: int, minimum: int = 0) -> int:
    """An optional whole number parameter (numbers sent as text are accepted)."""
    value = tool_input.get(key, default)
    if value is None:
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ToolError(
            _('Parameter "{name}" must be a whole number. Parameters received: {received}.').format(
                name=key, received=received(tool_input)
            )
        ) from None
    if number < minimum:
        raise ToolError(_('Parameter "{name}" must be at least {minimum}.').format(name=key, minimum=minimum))
    return number


def readable(ctx: ToolContext, path: Path) -> bool:
    """False when a Read deny rule covers ``path``, or when it looks like a secret (``.env``, ``*.pem``…)
    and nothing allows reading it (Grep and Glob leave such files out).

    Only a deny that a rule made counts: a question turned into a refusal because nobody can
    answer (``maia ask``) has no rule and does not hide files.
    """
    if ctx.permissions is None:
        return True
    from maia.permissions.defaults import secret_looking
    from maia.permissions.rules import Verdict

    decision = ctx.permissions("Read", {"path": str(path)})
    if decision.verdict == Verdict.DENY and decision.rule is not None:
        return False
    if decision.verdict == Verdict.ASK and decision.doubt and decision.rule is None:
        # another name of a file a Read deny may cover (a hard link): left out as the file itself would be
        try:
            if os.stat(path).st_nlink >= 2:
                return False
        except OSError:
            return False
    # a secret-looking file (.env, *.pem…) that no rule lets be read is not shown by a wide search either
    return decision.verdict == Verdict.ALLOW or not secret_looking(path)


def file_key(tool_input: Mapping[str, Any], launch: Path) -> str | None:
    """``file:<absolute path>``: calls on the same file run one after the other."""
    value = tool_input.get("path")
    if not isinstance(value, str) or not value:
        return None
    return "file:" + os.path.realpath(resolve_user_path(value, launch))


def opened_path(fd: int, fallback: Path) -> str:
    """Where an open descriptor really leads (Linux: /proc/self/fd), else the path's real path."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(fallback)


def judge_opened(ctx: ToolContext, tool: str, raw: str, real: str) -> None:
    """The file a tool opened, judged again: the rules were checked on a path that a command may have
    turned into a link since (a race). A deny refuses; a question nobody was asked refuses too (ToolError)."""
    if ctx.permissions is None:
        return
    from maia.core.contracts import CALL_ASKED
    from maia.permissions.rules import Verdict

    decision = ctx.permissions(tool, {"path": real})
    if decision.verdict == Verdict.DENY:
        raise ToolError(_("{path} leads to {real}, which the rules deny: not done.").format(path=raw, real=real))
    if decision.verdict == Verdict.ASK and not CALL_ASKED.get():
        raise ToolError(
            _(
                "{path} now leads to {real}, which needs the user's approval: it changed after it was checked "
                "(a link). Not done; ask the user if this is intended."
            ).format(path=raw, real=real)
        )


def open_folder_of(ctx: ToolContext, tool: str, raw: str, path: Path) -> tuple[int, str]:
    """Open the folder ``path`` is in, judge where it really is (with the file's name), and return the
    folder's descriptor (the caller closes it) and the name to write inside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        real = os.path.join(opened_path(fd, path.parent), path.name)
        judge_opened(ctx, tool, raw, real)
    except BaseException:
        os.close(fd)
        raise
    return fd, path.name


def open_search_root(ctx: ToolContext, tool: str, raw: str, path: Path) -> tuple[int, Path]:
    """Open the folder or file a search starts from (Grep, Glob), judge where it really is, and return
    its descriptor (the caller closes it) and that real path, which the search then walks: a link
    swapped in after the call was judged leads nowhere the rules did not see."""
    # O_PATH: nothing is read through it, and a FIFO swapped in does not block the open
    fd = os.open(path, getattr(os, "O_PATH", os.O_RDONLY) | os.O_CLOEXEC)
    try:
        real = opened_path(fd, path)
        judge_opened(ctx, tool, raw, real)
    except BaseException:
        os.close(fd)
        raise
    return fd, Path(real)


def still_opened(fd: int, real: Path, raw: str) -> None:
    """After a search: ``real`` must still be the folder or file opened and judged (ToolError if a link
    was swapped in while the search ran; what it found is then not returned)."""
    try:
        before, now = os.fstat(fd), os.stat(real)
        same = (before.st_dev, before.st_ino) == (now.st_dev, now.st_ino)
    except OSError:
        same = False
    if not same:
        raise ToolError(
            _("{path} changed while it was searched (a link swapped in): nothing is returned.").format(path=raw)
        )
