"""Hooks: programs the user's settings (or a trusted project's) run on MAIA's events (docs/hooks.md).

A hook is ``{"matcher": "Bash|Write", "command": "…", "timeout": 30}`` under an event name in the
``hooks`` object of a settings file. It gets one JSON object on standard input, runs in the launch
folder under the same sandbox and environment rules as the Bash tool (no proxy key), and answers by
its exit status: 0 goes on (standard output, when it is a JSON object, may carry a decision or extra
context), 2 blocks (standard error is the reason), anything else is a warning and the turn goes on.

Hooks never widen what the rules allow: a hook's ``allow`` only spares a question a rule asked for
(never a deny, never a doubt the permission engine could not resolve); a hook's ``deny`` always wins.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from maia.core.contracts import HookVerdict
from maia.i18n import _

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "PreCompact",
    "Notification",
)
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
BLOCK_EXIT = 2
_RANK = {"allow": 0, "ask": 1, "deny": 2}
MAX_OUTPUT = 20_000  # characters of a hook's output kept (a reason, extra context)

Source = Literal["user", "project", "local"]
Sandbox = Any  # maia.process.sandbox.policy.SandboxPolicy (kept loose: hooks sit below the sandbox's users)


@dataclass(frozen=True, slots=True)
class Hook:
    """One configured hook."""

    event: str
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT
    source: Source = "user"
    file: Path | None = None

    def matches(self, tool: str | None) -> bool:
        """Whether the hook applies to a call of ``tool`` (events without a tool always match)."""
        if tool is None or self.matcher in ("", "*"):
            return True
        try:
            return re.fullmatch(self.matcher, tool) is not None
        except re.error:
            return False  # reported when the file is read; a broken pattern matches nothing


@dataclass(slots=True)
class HookConfig:
    """The hooks in force, those ignored (an untrusted project's), and what was wrong in the files."""

    hooks: list[Hook] = field(default_factory=list)
    ignored: list[Hook] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def for_event(self, event: str, tool: str | None = None) -> list[Hook]:
        """The hooks to run for ``event`` (and ``tool``), in the order they were declared."""
        return [h for h in self.hooks if h.event == event and h.matches(tool)]


@dataclass(slots=True)
class HookResult:
    """What the hooks of one event decided, together."""

    decision: Literal["allow", "deny", "ask"] | None = None
    blocked: bool = False  # exit 2, or "decision": "block"/"deny"
    reason: str = ""
    context: list[str] = field(default_factory=list)  # extra context for the model
    stop: bool = False  # "continue": false
    warnings: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)  # one line per hook run: what it decided


def _problem(file: Path, where: str, message: str) -> str:
    return _("{file}: hooks: {where}: {message}").format(file=file, where=where, message=message)


def parse_hooks(data: object, file: Path, source: Source) -> tuple[list[Hook], list[str]]:
    """The hooks of one settings file's ``hooks`` value, and a warning per entry that cannot be used."""
    warnings: list[str] = []
    hooks: list[Hook] = []
    if data is None:
        return hooks, warnings
    if not isinstance(data, Mapping):
        return hooks, [_problem(file, "hooks", _('an object such as {"PreToolUse": [{"command": "…"}]}'))]
    for event, entries in data.items():
        if event not in EVENTS:
            warnings.append(
                _problem(file, str(event), _("unknown event (known: {events})").format(events=", ".join(EVENTS)))
            )
            continue
        if not isinstance(entries, list):
            warnings.append(_problem(file, event, _("a list of hooks")))
            continue
        for index, entry in enumerate(entries):
            where = f"{event}[{index}]"
            if not isinstance(entry, Mapping):
                warnings.append(_problem(file, where, _('an object such as {"command": "…"}')))
                continue
            command = entry.get("command")
            if not isinstance(command, str) or not command.strip():
                warnings.append(_problem(file, where, _('"command" must be a non-empty string')))
                continue
            matcher = entry.get("matcher", "")
            if not isinstance(matcher, str):
                warnings.append(_problem(file, where, _('"matcher" must be a string such as "Bash|Write"')))
                continue
            try:
                re.compile(matcher)
            except re.error as error:
                message = _('"matcher" is not a valid pattern ({error})').format(error=error)
                warnings.append(_problem(file, where, message))
                continue
            timeout = entry.get("timeout", DEFAULT_TIMEOUT)
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MAX_TIMEOUT:
                warnings.append(
                    _problem(file, where, _('"timeout" must be seconds from 1 to {most}').format(most=int(MAX_TIMEOUT)))
                )
                continue
            unknown = sorted(set(entry) - {"command", "matcher", "timeout", "type"})
            if unknown:
                message = _("unknown keys ignored: {keys}").format(keys=", ".join(unknown))
                warnings.append(_problem(file, where, message))
            hooks.append(Hook(event, command, matcher, float(timeout), source, file))
    return hooks, warnings


def _read(path: Path) -> object:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # a missing or broken settings file is reported by the settings and rules readers
    return data.get("hooks") if isinstance(data, dict) else None


def load_hooks(user_settings: Path, launch: Path, *, trusted: bool | Callable[[], bool]) -> HookConfig:
    """The user's hooks, then the project's (``.maia/settings.json``, ``.maia/settings.local.json``):
    a project's only in a trusted folder; otherwise they are listed as ignored. ``trusted`` may be a
    function: asked only when the project declares a hook (the trust check reads the project's files)."""
    config = HookConfig()
    files: list[tuple[Source, Path]] = [
        ("user", user_settings),
        ("project", launch / ".maia" / "settings.json"),
        ("local", launch / ".maia" / "settings.local.json"),
    ]
    seen: set[Path] = set()
    for source, path in files:
        with contextlib.suppress(OSError):
            real = path.resolve()
            if real in seen:
                continue  # the home folder launched as a project: its settings are the user's
            seen.add(real)
        hooks, warnings = parse_hooks(_read(path), path, source)
        config.warnings.extend(warnings)
        if source == "user" or (hooks and (trusted() if callable(trusted) else trusted)):
            config.hooks.extend(hooks)
        else:
            config.ignored.extend(hooks)
    return config


def project_hooks(launch: Path, home: Path) -> list[Hook]:
    """The hooks a launch folder's own settings files declare (what folder trust shows and digests)."""
    from maia.core.paths import settings_path

    user = settings_path(home)
    hooks: list[Hook] = []
    files: list[tuple[Source, Path]] = [
        ("project", launch / ".maia" / "settings.json"),
        ("local", launch / ".maia" / "settings.local.json"),
    ]
    for source, path in files:
        with contextlib.suppress(OSError):
            if path.exists() and user.exists() and path.samefile(user):
                continue  # launched from the folder holding MAIA's home: the user's own settings
        found, _warnings = parse_hooks(_read(path), path, source)
        hooks.extend(found)
    return hooks


def _parse_output(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    with contextlib.suppress(ValueError):
        value = json.loads(text)
        if isinstance(value, dict):
            return value
    return None


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + "…"


class HookRunner:
    """Runs the hooks of a :class:`HookConfig` for one application (the chat, ``maia ask``, a
    sub-agent's child, a workflow worker)."""

    def __init__(
        self,
        config: HookConfig,
        launch: Path,
        *,
        sandbox: Callable[[], Sandbox | None],
        session: Callable[[], str | None],
        warn: Callable[[str], None],
        origin: str = "chat",
    ) -> None:
        self.config = config
        self.launch = launch
        self._sandbox = sandbox
        self._session = session
        self._warn = warn
        self.origin = origin
        self._background: set[asyncio.Future[HookResult]] = set()

    def active(self, event: str, tool: str | None = None) -> bool:
        """Whether any hook would run for ``event``."""
        return bool(self.config.for_event(event, tool))

    async def run(self, event: str, payload: Mapping[str, Any], tool: str | None = None) -> HookResult:
        """Run the matching hooks one after the other; the first that blocks or denies ends the series."""
        from maia.process.shell import run_shell

        result = HookResult()
        hooks = self.config.for_event(event, tool)
        if not hooks:
            return result
        body = {
            "event": event,
            "hook_event_name": event,
            "session_id": self._session(),
            "cwd": str(self.launch),
            "origin": self.origin,
            **payload,
        }
        data = (json.dumps(body, ensure_ascii=False, default=str) + "\n").encode()
        for hook in hooks:
            done = await run_shell(
                hook.command,
                self.launch,
                timeout=hook.timeout,
                separate_stderr=True,
                sandbox=self._sandbox(),
                input_data=data,
                env={"MAIA_HOOK_EVENT": event, "MAIA_PROJECT_DIR": str(self.launch)},
            )
            shown = hook.command if len(hook.command) <= 60 else hook.command[:59] + "…"
            label = _("{event} hook `{command}`").format(event=event, command=shown)
            if done.state == "timeout":
                warning = _("{hook} did not finish within {seconds} s: stopped; the turn goes on.").format(
                    hook=label, seconds=f"{hook.timeout:g}"
                )
                result.warnings.append(warning)
                self._warn(warning)
                result.ran.append(f"{label}: timeout")
                continue
            if done.state != "exited":
                warning = _("{hook} failed: {status}; the turn goes on.").format(hook=label, status=done.describe())
                result.warnings.append(warning)
                self._warn(warning)
                result.ran.append(f"{label}: {done.describe()}")
                continue
            if done.exit_code == BLOCK_EXIT:
                result.blocked = True
                result.decision = "deny"
                result.reason = _clip(done.stderr) or _("blocked by {hook}").format(hook=label)
                result.ran.append(f"{label}: exit 2 (block)")
                return result
            if done.exit_code != 0:
                detail = _clip(done.stderr or done.output)
                warning = _("{hook} exited with status {code}{detail}; the turn goes on.").format(
                    hook=label, code=done.exit_code, detail=f": {detail}" if detail else ""
                )
                result.warnings.append(warning)
                self._warn(warning)
                result.ran.append(f"{label}: exit {done.exit_code}")
                continue
            self._absorb(event, label, done.output, result)
            if result.blocked or result.stop or result.decision == "deny":
                return result
        return result

    def _absorb(self, event: str, label: str, stdout: str, result: HookResult) -> None:
        """Fold one successful hook's standard output into ``result``."""
        answer = _parse_output(stdout)
        if answer is None:
            if event in ("UserPromptSubmit", "SessionStart") and stdout.strip():
                result.context.append(_clip(stdout))  # plain output of these events is context
            result.ran.append(f"{label}: ok")
            return
        reason = answer.get("reason")
        reason = _clip(reason) if isinstance(reason, str) else ""
        if answer.get("continue") is False:
            result.stop = True
            result.reason = reason or _clip(str(answer.get("stopReason", ""))) or result.reason
        decision = answer.get("decision")
        # deny > ask > allow: a later hook never softens an earlier one's answer
        softer = _RANK.get(str(decision), -1) < _RANK.get(result.decision or "", -1)
        if decision in ("allow", "deny", "ask") and not softer:
            result.decision = decision
            result.reason = reason or result.reason
        elif decision == "block":
            result.blocked = True
            result.decision = "deny"
            result.reason = reason or _("blocked by {hook}").format(hook=label)
        extra = answer.get("additionalContext")
        if isinstance(extra, str) and extra.strip():
            result.context.append(_clip(extra))
        result.ran.append(f"{label}: {decision or ('stop' if result.stop else 'ok')}")

    # --- the agent loop's view (maia.core.contracts.ToolHooks) ----------------------------------------

    async def before_tool(self, name: str, tool_input: Mapping[str, Any]) -> HookVerdict | None:
        """PreToolUse: the hooks' answer for one call, None when none has an opinion."""
        if not self.active("PreToolUse", name):
            return None
        result = await self.run("PreToolUse", {"tool_name": name, "tool_input": dict(tool_input)}, tool=name)
        if result.blocked or result.decision == "deny" or result.stop:
            return HookVerdict("deny", result.reason or _("refused by a hook"), stop=result.stop)
        if result.decision is None:
            return None
        return HookVerdict(result.decision, result.reason)

    async def after_tool(self, name: str, tool_input: Mapping[str, Any], output: str, is_error: bool) -> str | None:
        """PostToolUse: text for the model after the tool's result (a blocking hook's reason, extra context)."""
        if not self.active("PostToolUse", name):
            return None
        result = await self.run(
            "PostToolUse",
            {
                "tool_name": name,
                "tool_input": dict(tool_input),
                "tool_response": {"output": output, "is_error": is_error},
            },
            tool=name,
        )
        notes = list(result.context)
        if result.blocked or result.decision == "deny":
            notes.insert(0, _("A PostToolUse hook objected: {reason}").format(reason=result.reason))
        return "\n".join(notes) or None

    def notify(self, message: str) -> None:
        """Notification hooks, in the background: a question waits for the user meanwhile."""
        if not self.active("Notification"):
            return
        task = asyncio.ensure_future(self.run("Notification", {"message": message}))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def aclose(self) -> None:
        """Wait a little for background hooks (a notification) and stop those that do not finish."""
        pending = list(self._background)
        if pending:
            _done, late = await asyncio.wait(pending, timeout=2)
            for task in late:
                task.cancel()


def describe_hooks(config: HookConfig) -> list[dict[str, Any]]:
    """Each hook with its source, for ``/hooks`` and ``maia hooks list --json``."""
    rows: list[dict[str, Any]] = []
    for hook, state in [*((h, "active") for h in config.hooks), *((h, "ignored") for h in config.ignored)]:
        rows.append(
            {
                "event": hook.event,
                "matcher": hook.matcher or "*",
                "command": hook.command,
                "timeout": hook.timeout,
                "source": hook.source,
                "file": str(hook.file) if hook.file else None,
                "state": state,
            }
        )
    return rows


def hook_lines(config: HookConfig, inert: Callable[[str], str] = str) -> list[str]:
    """``/hooks``: one line per hook (``ignored (untrusted)`` for a project's in an untrusted folder)."""
    lines: list[str] = []
    for row in describe_hooks(config):
        state = "" if row["state"] == "active" else "  " + _("ignored (untrusted)")
        lines.append(
            f"{row['event']:<16} {inert(row['matcher']):<14} {inert(row['command'])}  "
            f"({row['source']}, {row['timeout']:g} s){state}"
        )
    return lines
