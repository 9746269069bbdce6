"""The question about a tool call: the exact command, the diff a Write or Edit would make, the engine's
reason when it asked out of doubt, and the narrowest rule(s) "always" would add (none when no rule
can be both narrow and safe)."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from maia.contracts import Approval, Tool
from maia.i18n import _
from maia.permissions.engine import Decision

# programs whose first word after the program names what they do (git push, npm test…)
SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "podman", "kubectl", "helm", "terraform",
        "make", "pip", "pip3", "uv", "poetry", "dotnet", "gradle", "mvn", "rustup", "brew", "apt", "gh", "aws",
        "deno", "mix", "bundle", "rake", "composer", "nx", "just", "task", "tox", "nox", "hatch", "pdm",
    }
)  # fmt: skip
# programs a prefix rule would make too broad: "always" allows only the exact command
EXACT_ONLY = frozenset(
    {
        "rm", "rmdir", "mv", "cp", "dd", "chmod", "chown", "chgrp", "ln", "truncate", "shred", "kill", "pkill",
        "killall", "curl", "wget", "ssh", "scp", "rsync", "sudo", "doas", "su", "python", "python3", "node",
        "ruby", "perl", "php", "bash", "sh", "zsh", "env", "xargs", "eval", "exec", "source", "tee", "sed", "awk",
        "find", "install", "mkfs", "mount", "umount", "systemctl", "reboot", "shutdown", "crontab",
    }
)  # fmt: skip
# tools that neither write nor run anything
READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "WebFetch", "TodoWrite", "CurrentModel", "ListModels", "Skill"})
WRITE_TOOLS = frozenset({"Write", "Edit"})
DETAIL_LINES = 400  # a new file's preview: its first lines
MAX_DIFF_BYTES = 1_000_000
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def relative_to_launch(path: str, launch: Path) -> tuple[Path, str | None]:
    """The absolute path, and its form relative to the launch folder (None when outside)."""
    from maia.paths import resolve_user_path

    absolute = resolve_user_path(path, launch)
    try:
        return absolute, absolute.relative_to(launch).as_posix()
    except ValueError:
        return absolute, None


def write_detail(tool: str, tool_input: Mapping[str, Any], launch: Path) -> str | None:
    """The diff a Write or Edit would make (a new file: its first lines as an addition)."""
    from maia.app.changes import text_diff

    raw = tool_input.get("path")
    if not isinstance(raw, str) or not raw.strip():
        return None
    absolute, relative = relative_to_launch(raw, launch)
    name = relative or str(absolute)
    try:
        if absolute.is_file() and absolute.stat().st_size > MAX_DIFF_BYTES:
            return None  # a diff of a huge file would take long and show nothing useful
        before: str | None = absolute.read_text(encoding="utf-8", errors="replace") if absolute.is_file() else None
    except OSError:
        before = None
    if tool == "Edit":
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        if before is None or not isinstance(old, str) or not isinstance(new, str) or before.count(old) != 1:
            return None  # the call will fail: the tool says why
        return text_diff(before, before.replace(old, new, 1), name)
    from maia.tools.write import content_of

    try:
        after = content_of(tool_input)
    except Exception:  # the call will fail: the tool says why
        return None
    if before is None:
        lines = after.splitlines(keepends=True)
        shown = "".join(lines[:DETAIL_LINES])
        diff = text_diff(None, shown, name)
        if len(lines) > DETAIL_LINES:
            diff += _("… and {count} more lines\n").format(count=len(lines) - DETAIL_LINES)
        return diff
    return text_diff(before, after, name)


def suggest_rules(tool: str, tool_input: Mapping[str, Any], launch: Path, *, inert: Sequence[str] = ()) -> list[str]:
    """The narrowest rules that would allow this call from now on; [] when none is both narrow and safe."""
    if tool == "Bash":
        command = tool_input.get("command")
        return _bash_rules(command, launch, inert) if isinstance(command, str) else []
    if tool in WRITE_TOOLS:
        return _write_rules(tool_input, launch)
    if tool == "WebFetch":
        from urllib.parse import urlsplit

        url = tool_input.get("url")
        host = urlsplit(url).hostname if isinstance(url, str) else None
        return [f"WebFetch(domain:{host.lower()})"] if host else []
    if tool == "Agent":
        name = tool_input.get("agent")
        return [f"Agent({name})"] if isinstance(name, str) and _safe_pattern(name) else []
    if tool.startswith("mcp__"):
        pieces = tool.split("__")
        return [f"Mcp({pieces[1]},{'__'.join(pieces[2:])})"] if len(pieces) >= 3 else []
    if tool == "Skill":
        name = tool_input.get("skill", tool_input.get("name"))
        return [f"Skill({name})"] if isinstance(name, str) and _safe_pattern(name) else []
    return [tool]


def _safe_pattern(text: str) -> bool:
    """Text that means itself inside a rule (no wildcard, no parenthesis, no line break)."""
    return bool(text) and not any(c in text for c in "*()\n\r") and text == text.strip()


def _bash_rules(command: str, launch: Path, inert: Sequence[str]) -> list[str]:
    from maia.permissions import programs
    from maia.permissions.plain import NotPlain, parse_plain

    try:
        script = parse_plain(command, inert or programs.DEFAULT_INERT, launch=launch)
    except NotPlain:
        return []  # only a plain command can ever be allowed by a rule
    if any(r.target not in _NOT_FILES for r in script.redirects):
        return []  # a redirection to a file needs its own (Write) rule: ask each time
    rules: list[str] = []
    for part in script.parts:
        if part.opaque or part.via is not None or part.open_words or part.folder_moved or not part.words:
            return []
        words = list(part.words)
        forms = programs.subcommand_forms(part.words, for_allow=True, launch=launch)
        if forms:
            words = list(forms[0])
        name = programs.program_name(words[0])
        if name != words[0] and posixpath.dirname(words[0]) not in ("/bin", "/usr/bin", "/usr/local/bin"):
            return []  # ./script or a path the user owns: no rule for it
        if any(not _safe_pattern(w) or " " in w for w in words):
            return []
        prefix = " ".join(part.assignments)
        head = f"{prefix} {name}".strip()
        if name in EXACT_ONLY:
            rule = f"Bash({head} {' '.join(words[1:])})".replace(" )", ")")
        elif name in SUBCOMMAND_PROGRAMS and len(words) > 1 and not words[1].startswith("-"):
            rule = f"Bash({head} {words[1]} *)"
        else:
            rule = f"Bash({head} *)"
        if rule not in rules:
            rules.append(rule)
    return rules


def _write_rules(tool_input: Mapping[str, Any], launch: Path) -> list[str]:
    from maia.permissions.paths import protected

    raw = tool_input.get("path")
    if not isinstance(raw, str) or not raw.strip():
        return []
    absolute, relative = relative_to_launch(raw, launch)
    if relative is None or protected(str(absolute), launch) is not None or not _safe_pattern(relative):
        return []  # outside the launch folder, or MAIA's and git's own files: ask each time
    folder = posixpath.dirname(relative)
    return [f"Edit({folder}/**)" if folder else f"Edit({relative})"]


def approval_for(
    tool: Tool | None, name: str, tool_input: Mapping[str, Any], summary: str, decision: Decision, launch: Path
) -> Approval:
    """What the question about one call shows, and what "always" would add."""
    detail: str | None = None
    kind: Literal["command", "diff", "text"] | None = None
    if name == "Bash" and isinstance(tool_input.get("command"), str):
        detail, kind = str(tool_input["command"]), "command"
    elif name in WRITE_TOOLS:
        detail = write_detail(name, tool_input, launch)
        kind = "diff" if detail is not None else None
    elif tool_input and tool is not None and name not in READ_ONLY_TOOLS:
        detail, kind = json.dumps(dict(tool_input), indent=2, ensure_ascii=False)[:4000], "text"
    reason = decision.reason if getattr(decision, "doubt", False) else None
    rules = [] if getattr(decision, "doubt", False) else suggest_rules(name, tool_input, launch)
    return Approval(name, summary, detail, kind, reason, tuple(rules))
