"""Approving tool calls without friction: remembering "always" answers, and approval modes.

(The question's content and the rule "always" would add: :mod:`maia.agent.approval`.)

- :func:`remember_rules` writes such rules into ``./.maia/settings.local.json`` (git-ignored, read
  after ``./.maia/settings.json``), atomically, under a lock, other keys kept.
- :class:`ApprovalMode` (``ask`` | ``edits`` | ``auto`` | ``plan``) narrows or widens what asks; a deny
  always wins. ``auto`` is ``edits`` plus Bash commands without a question, only when they run under the
  namespace sandbox (:func:`auto_unavailable` says why not otherwise).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from maia.core.contracts import PermissionCheck, Tool
from maia.core.errors import ConfigError
from maia.core.registry import traits_of
from maia.core.storage import write_atomic
from maia.i18n import _
from maia.permissions.paths import inside_launch
from maia.permissions.rules import Verdict

if TYPE_CHECKING:
    from maia.permissions.engine import Decision
    from maia.process.sandbox.policy import SandboxPolicy

ApprovalMode = Literal["ask", "edits", "auto", "plan"]
MODES: tuple[ApprovalMode, ...] = ("ask", "edits", "auto", "plan")
ModeSource = Callable[[], ApprovalMode]
AUTO_RULE = "mode: auto"  # Decision.rule of a command the auto mode let run in the sandbox


def auto_unavailable(policy: SandboxPolicy | None) -> str | None:
    """Why ``auto`` cannot run commands without asking here (it then acts as ``edits``), or None."""
    if policy is None:
        return _("the sandbox is off, so auto acts as edits: commands still ask")
    if not policy.uses_namespaces:
        return _(
            "commands run under Landlock only (no namespace sandbox: bubblewrap is missing or cannot run), "
            "so auto acts as edits: commands still ask"
        )
    return None


# --- remembering ---------------------------------------------------------------------------------


def _settings_lock(home: Path, path: Path) -> Any:
    """The lock every writer of one settings file takes (two MAIAs answering "always" at once)."""
    import hashlib

    from filelock import FileLock

    digest = hashlib.sha1(str(path).encode()).hexdigest()[:16]
    lock = home / "locks" / f"settings-{digest}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(lock), timeout=30)


def _permissions_of(path: Path, data: Any) -> dict[str, Any]:
    """The ``permissions`` object of a settings file's data (created); ConfigError when the file is not
    shaped as MAIA writes it: a broken file is never rewritten."""
    if not isinstance(data, dict):
        raise ConfigError(_("{path} is not a JSON object: fix it first, it was not changed.").format(path=path))
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise ConfigError(_('{path}: "permissions" is not an object: fix it first.').format(path=path))
    return permissions


def remember_rules(home: Path, launch: Path, rules: Sequence[str]) -> Path:
    """Add ``rules`` to ``permissions.allow`` of ``./.maia/settings.local.json`` (created, other keys
    kept, atomic, locked); a broken file is never rewritten (ConfigError)."""
    from maia.core.settings import read_json
    from maia.permissions.sources import local_settings_path

    path = local_settings_path(launch)
    with _settings_lock(home, path):
        try:
            data: Any = read_json(path)
        except FileNotFoundError:
            data = {}
        permissions = _permissions_of(path, data)
        allow = permissions.setdefault("allow", [])
        if not isinstance(allow, list):
            raise ConfigError(_('{path}: "permissions.allow" is not a list: fix it first.').format(path=path))
        for rule in rules:
            if rule not in allow:
                allow.append(rule)
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    from maia.core.trust import note_written

    # the user's own answer, not a grant of the folder: a trusted folder stays trusted
    note_written(launch, home, rules)
    return path


def forget_rule(home: Path, launch: Path, rule: str) -> list[str]:
    """Remove ``rule`` from the lists of ``./.maia/settings.local.json`` (the file MAIA writes; atomic,
    locked, other keys kept); the families it was in (empty: it was not there). ConfigError for a broken
    file, which is left alone."""
    from maia.core.settings import read_json
    from maia.permissions.sources import local_settings_path

    path = local_settings_path(launch)
    with _settings_lock(home, path):
        try:
            data: Any = read_json(path)
        except FileNotFoundError:
            return []
        permissions = _permissions_of(path, data)
        families = [
            f for f in ("allow", "ask", "deny") if isinstance(permissions.get(f), list) and rule in permissions[f]
        ]
        for family in families:
            permissions[family] = [r for r in permissions[family] if r != rule]
        if families:
            write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return families


# --- approval modes ---------------------------------------------------------------------------------


def _unseen(tool_input: Mapping[str, Any], launch: Path) -> bool:
    """Whether a command touches nothing the engine must ask about whatever the rules (a redirection to a
    protected path, an uncertain target): judged as a bare ``Bash`` allow would judge it."""
    from maia.permissions.engine import explain

    return explain("Bash", tool_input, {"allow": ["Bash"]}, launch).verdict == Verdict.ALLOW


def with_mode(
    check: PermissionCheck,
    mode: ModeSource,
    launch: Path,
    tools: Callable[[], Mapping[str, Tool]],
    sandbox: Callable[[], SandboxPolicy | None] = lambda: None,
) -> PermissionCheck:
    """``check`` seen through the approval mode: ``plan`` refuses every tool that writes or runs;
    ``edits`` lets Write/Edit inside the launch folder through without asking, judged on the normalised
    path and on its real path (links resolved), both inside the launch folder's real path (protected
    paths and doubt still ask); ``auto`` does the same and lets a Bash command run without asking when
    it runs under the namespace sandbox and no ask rule matched it (nor doubt); ``ask`` changes
    nothing. A deny always stays a deny."""

    def decide(name: str, tool_input: Mapping[str, Any]) -> Decision:
        from maia.permissions.engine import Decision  # loaded by the first tool call, not at start-up

        decision = check(name, tool_input)
        current = mode()
        if decision.verdict == Verdict.DENY or current == "ask":
            return decision
        traits = traits_of(name, tools().get(name))
        if current == "plan":
            if not traits.read_only:
                return Decision(
                    Verdict.DENY,
                    None,
                    _(
                        "Not run: the user chose plan mode, where nothing is written or run. Describe the plan; "
                        "the user switches the mode when it should be carried out."
                    ),
                )
            return decision
        plain_ask = decision.verdict == Verdict.ASK and not decision.doubt and decision.rule is None
        if (
            current == "auto"
            and plain_ask
            and name == "Bash"
            and auto_unavailable(sandbox()) is None
            and _unseen(tool_input, launch)
        ):
            # the sandbox bounds what the command can write and reach; whatever it refuses stays refused
            return Decision(Verdict.ALLOW, AUTO_RULE, _("allowed by the auto mode: the command runs in the sandbox"))
        if current in ("edits", "auto") and plain_ask and traits.writes_file is not None:
            raw = tool_input.get(traits.writes_file)
            # the path as the tool opens it and where its links lead: a link inside the project that
            # points outside (`ln -s /tmp lnk`, then lnk/x) is no edit of the project
            if isinstance(raw, str) and raw.strip() and inside_launch(raw, launch):
                return Decision(Verdict.ALLOW, "mode: edits", _("allowed by the edits mode"))
        return decision

    return decide
