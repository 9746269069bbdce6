"""The question about a tool call: the exact command, the diff a Write or Edit would make, the engine's
reason when it asked out of doubt, and the narrowest rule(s) "always" would add (none when no rule
can be both narrow and safe).

"Always" must never allow, without asking, something materially more dangerous than what the user
just saw. So a prefix rule (``Bash(git log *)``) is offered only where every command it covers does
the same kind of thing; programs that run what they are given (``uv run``, ``npx``, ``docker run``),
destroy (``git push``, ``kubectl delete``), read any file (``cat``, ``grep``) or unpack archives get
the exact command (``Bash(git push origin main)``) or nothing: each program's table says which
(``maia.permissions.tables``, field ``always``). Every suggestion is checked with the
permission engine before it is offered: it must allow the call the user saw.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from maia.core.contracts import Approval, Tool
from maia.core.registry import traits_of
from maia.i18n import _
from maia.permissions.parts import Part
from maia.permissions.paths import inside_launch
from maia.permissions.subject import CommandSubject, McpSubject, NameSubject, PathSubject, UrlSubject, subject_of

if TYPE_CHECKING:
    from maia.permissions.engine import Decision

DETAIL_LINES = 400  # a new file's preview: its first lines
MAX_DIFF_BYTES = 1_000_000
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_GLOB_CHARACTERS = frozenset("*?[]{}\\")  # a path rule is a glob: a file named with these is no rule's


def relative_to_launch(path: str, launch: Path) -> tuple[Path, str | None]:
    """The absolute path, and its form relative to the launch folder (None when outside)."""
    from maia.core.paths import resolve_user_path

    absolute = resolve_user_path(path, launch)
    try:
        return absolute, absolute.relative_to(launch).as_posix()
    except ValueError:
        return absolute, None


def write_detail(tool: str, tool_input: Mapping[str, Any], launch: Path) -> str | None:
    """The diff a Write or Edit would make (a new file: its first lines as an addition)."""
    from maia.core.diffs import text_diff

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


def suggest_rules(
    tool: str,
    tool_input: Mapping[str, Any],
    launch: Path,
    *,
    inert: Sequence[str] = (),
    tool_object: Tool | None = None,
) -> list[str]:
    """The narrowest rules that would allow this call from now on; [] when none is both narrow and safe.

    Decided by the call's subject (what rules match), never by the tool's name.
    """
    subject = subject_of(tool, tool_input, tool_object)
    if isinstance(subject, CommandSubject):
        return _bash_rules(subject.command, launch, inert) if isinstance(subject.command, str) else []
    if isinstance(subject, PathSubject) and subject.access == "write":
        return _checked(tool, tool_input, _write_rules(subject.path, launch), launch, tool_object)
    if isinstance(subject, UrlSubject):
        from urllib.parse import urlsplit

        try:
            host = urlsplit(subject.url).hostname if isinstance(subject.url, str) else None
        except ValueError:
            return []
        if not host or not _safe_pattern(host) or "," in host:
            return []
        return _checked(tool, tool_input, [f"{tool}(domain:{host.lower()})"], launch, tool_object)
    if isinstance(subject, McpSubject):
        if not all(_safe_pattern(p) and "," not in p for p in (subject.server, subject.tool)):
            return []
        return [f"Mcp({subject.server},{subject.tool})"]
    if isinstance(subject, NameSubject):
        name = subject.name
        return [f"{tool}({name})"] if isinstance(name, str) and _safe_pattern(name) else []
    return [tool]


def _safe_pattern(text: str) -> bool:
    """Text that means itself inside a rule (no wildcard, no parenthesis, no line break)."""
    return bool(text) and not any(c in text for c in "*()\n\r") and text == text.strip()


def _checked(
    tool: str, tool_input: Mapping[str, Any], rules: list[str], launch: Path, tool_object: Tool | None = None
) -> list[str]:
    """``rules`` when, alone, they allow the call (a rule that would not is no answer to "always")."""
    from maia.permissions.engine import explain
    from maia.permissions.rules import Verdict

    if rules and explain(tool, tool_input, {"allow": rules}, launch, tool=tool_object).verdict == Verdict.ALLOW:
        return rules
    return []


def _write_rules(raw: str | None, launch: Path) -> list[str]:
    from maia.permissions.paths import protected

    if not isinstance(raw, str) or not raw.strip():
        return []
    absolute, relative = relative_to_launch(raw, launch)
    if relative is None or relative == "." or protected(str(absolute), launch) is not None:
        return []  # outside the launch folder, or MAIA's and git's own files: ask each time
    if not _safe_pattern(relative) or relative.startswith("~") or any(c in _GLOB_CHARACTERS for c in relative):
        return []  # the rule would be a glob (a folder named `[ab]` or `?`) or a home folder (~user)
    folder = posixpath.dirname(relative)
    return [f"Edit({folder}/**)" if folder else f"Edit({relative})"]


# --- Bash: which commands a prefix rule may cover ----------------------------------------------------


# which commands a prefix rule may cover is program knowledge: the tables' ``always`` field
# (maia.permissions.tables), read by maia.permissions.always

# their first operand is a pattern or a program, not a file
_PATTERN_FIRST = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "gsed", "awk", "gawk", "mawk", "nawk", "jq", "yq"}
    | {"zgrep", "look"}
)
# options whose value is the pattern or the program, not a file to read
_SCRIPT_OPTIONS = frozenset({"-e", "-f", "--regexp", "--file", "--expression", "--from-file"})
_SYSTEM_DIRS = ("/bin", "/usr/bin", "/usr/local/bin")


def _plain_word(word: str) -> bool:
    """A word a rule can hold as itself: no wildcard, quote, backslash, parenthesis or white space."""
    return bool(word) and word.isprintable() and not any(c in "*()'\"\\" or c.isspace() for c in word)


def _reads_a_project_file(name: str, words: Sequence[str], launch: Path) -> bool:
    """Whether a reader is given a file of the project to read (so it ignores its input: the engine
    does not judge ``< file``, and ``Bash(head -20)`` would allow ``head -20 < ~/.ssh/id_rsa``)."""
    if any(w == "-" or w.startswith(("/dev/", "/proc/")) for w in words[1:]):
        return False
    operands = [
        word
        for index, word in enumerate(words[1:], start=1)
        if not word.startswith("-") and words[index - 1] not in _SCRIPT_OPTIONS  # grep -f patterns.txt
    ]
    if name in _PATTERN_FIRST and not any(w.split("=", 1)[0] in _SCRIPT_OPTIONS for w in words[1:]):
        operands = operands[1:]  # the pattern (grep foo FILE), unless given by -e or -f
    for word in operands:
        # where the program really opens it: the kernel reads `lnk/..` as the link target's parent
        real = os.path.realpath(os.path.join(launch, os.path.expanduser(word)))
        if inside_launch(word, launch) and inside_launch(real, launch) and os.path.exists(real):
            return True
    return False


def _part_rules(part: Part, launch: Path) -> tuple[str | None, str | None] | None:
    """(the prefix rule, the exact rule) for one part of a plain command; None when it can have none."""
    from maia.permissions import always, programs

    words = list(part.words)
    name = programs.program_name(words[0])
    if name != words[0] and posixpath.dirname(words[0]) not in _SYSTEM_DIRS:
        return None  # ./script or a path the user owns: no rule for it
    assignments = list(part.assignments)
    if not all(_plain_word(a) for a in assignments):
        return None
    kind = always.kind(name)
    if kind == "never" or (kind == "reader" and not _reads_a_project_file(name, words, launch)):
        return None
    exact_words = [*assignments, name, *words[1:]]
    exact = None
    if not part.open_words and all(_plain_word(w) for w in exact_words):
        exact = f"Bash({' '.join(exact_words)})"
    # a prefix rule looks past harmless global options (git -C . status → git status)
    forms = programs.subcommand_forms(words, for_allow=True, launch=launch)
    base = [name, *(forms[0][1:] if forms else words[1:])]
    depth = always.prefix_length(base)
    prefix = None
    if depth is not None:
        kept = [*assignments, *base[:depth]]
        if all(_plain_word(w) and not any(c in w for c in "?[]{}") for w in kept):
            prefix = f"Bash({' '.join(kept)} *)"
    if prefix is None and exact is None:
        return None
    return prefix, exact


def _reads_back(rule: str) -> bool:
    """The rule's own reading (quotes removed, words split) gives back exactly what was written."""
    from maia.permissions.rules import bash_pattern, parse_rule

    pattern = parse_rule(rule).pattern
    return pattern is not None and " ".join(bash_pattern(pattern).words) == rule[len("Bash(") : -1]


def _bash_rules(command: str, launch: Path, inert: Sequence[str]) -> list[str]:
    from maia.permissions import programs
    from maia.permissions.engine import explain
    from maia.permissions.plain import NotPlain, parse_plain
    from maia.permissions.rules import Verdict, parse_rules

    try:
        script = parse_plain(command, inert or programs.DEFAULT_INERT, launch=launch)
    except NotPlain:
        return []  # only a plain command can ever be allowed by a rule
    if not script.parts or any(r.target not in _NOT_FILES for r in script.redirects):
        return []  # a redirection to a file needs its own (Write) rule: ask each time
    widest: list[str] = []
    exact: list[str] | None = []
    for part in script.parts:
        if part.opaque or part.via is not None or part.folder_moved or not part.words:
            return []
        rules = _part_rules(part, launch)
        if rules is None:
            return []
        prefix_rule, exact_rule = rules
        chosen = prefix_rule or exact_rule
        assert chosen is not None
        if chosen not in widest:
            widest.append(chosen)
        if exact is not None and exact_rule is not None:
            if exact_rule not in exact:
                exact.append(exact_rule)
        else:
            exact = None
    ruleset_inert = list(inert)
    for candidate in (widest, exact):
        if not candidate or not all(_reads_back(r) for r in candidate):
            continue
        ruleset = parse_rules({"allow": candidate, "inertVariables": ruleset_inert}).ruleset
        if explain("Bash", {"command": command}, ruleset, launch).verdict == Verdict.ALLOW:
            return candidate
    return []


def approval_for(
    tool: Tool | None, name: str, tool_input: Mapping[str, Any], summary: str, decision: Decision, launch: Path
) -> Approval:
    """What the question about one call shows, and what "always" would add."""
    detail: str | None = None
    kind: Literal["command", "diff", "text"] | None = None
    traits = traits_of(name, tool)
    subject = subject_of(name, tool_input, tool)
    if isinstance(subject, CommandSubject) and isinstance(subject.command, str):
        detail, kind = subject.command, "command"
    elif traits.writes_file is not None:
        detail = write_detail(name, tool_input, launch)
        kind = "diff" if detail is not None else None
    elif tool_input and tool is not None and not traits.read_only:
        detail, kind = json.dumps(dict(tool_input), indent=2, ensure_ascii=False)[:4000], "text"
    reason = decision.reason if decision.doubt else None
    rules = [] if decision.doubt else suggest_rules(name, tool_input, launch, tool_object=tool)
    return Approval(name, summary, detail, kind, reason, tuple(rules))
