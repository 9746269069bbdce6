"""Safe defaults: what no rule decided but needs no question (issue 25).

With no rule deciding a call, Read, Glob and Grep inside the launch folder and TodoWrite are
allowed, so a first ``maia ask "summarise src/app.py"`` works out of the box. Protected paths
(``.maia/``, ``.git/``, MAIA's home, project instructions) and secret-looking files (``.env*``,
``*.pem``, ``*.key``, ``id_*``, ``.netrc``, ``.npmrc``, ``.pypirc``) still ask; anything outside the
launch folder asks; a deny or ask rule always decides first.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maia.i18n import _
from maia.permissions.engine import Decision
from maia.permissions.rules import Verdict
from maia.permissions.subject import PathSubject, subject_of

READING_TOOLS = frozenset({"Read", "Glob", "Grep"})
ALWAYS_SAFE = frozenset({"TodoWrite"})
SECRET_NAMES = (".env*", "*.pem", "*.key", "id_*", ".netrc", ".npmrc", ".pypirc")
DEFAULT_RULE = "default"  # Decision.rule of a call the defaults allowed


def secret_looking(path: str | Path) -> bool:
    """Whether a file's name looks like it holds a secret (``.env.local``, ``server.key``, ``id_ed25519``)."""
    name = os.path.basename(os.path.normpath(str(path)))
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SECRET_NAMES)


def _reaches_secret(path: str, launch: Path) -> bool:
    """The path, as written or where its links lead, names a secret-looking file."""
    from maia.permissions.paths import locations

    lexical, real = locations(path, launch)
    return secret_looking(lexical) or secret_looking(real)


def safe_default(
    name: str, tool_input: Mapping[str, Any], decision: Decision, launch: Path, tool: object = None
) -> Decision:
    """``decision`` with the safe defaults applied: only a plain "no rule applies" ask can become an allow."""
    if decision.verdict != Verdict.ASK or decision.rule is not None or decision.doubt:
        return decision
    if name in ALWAYS_SAFE:
        return Decision(
            Verdict.ALLOW, DEFAULT_RULE, _("allowed by default: {tool} only keeps a list").format(tool=name)
        )
    if name not in READING_TOOLS:
        return decision
    from maia.permissions.paths import inside_launch, protected

    subject = subject_of(name, tool_input, tool)
    path = subject.path if isinstance(subject, PathSubject) else None
    if not isinstance(path, str) or not path.strip():
        return decision
    if not inside_launch(path, launch):
        return Decision(Verdict.ASK, None, _("{path} is outside the launch folder: ask").format(path=path))
    if protected(path, launch) is not None:
        return Decision(
            Verdict.ASK,
            None,
            _("{path} is protected (MAIA's settings, git's configuration, project instructions): ask").format(
                path=path
            ),
        )
    if _reaches_secret(path, launch):
        return Decision(Verdict.ASK, None, _("{path} looks like it holds a secret: ask").format(path=path))
    return Decision(
        Verdict.ALLOW, DEFAULT_RULE, _("allowed by default: {tool} inside the launch folder").format(tool=name)
    )
