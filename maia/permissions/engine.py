"""Deciding a tool call (§9.2-§9.4): deny, then ask, then allow; no applicable rule means ask."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from maia.globs import has_magic
from maia.i18n import _
from maia.permissions.bash import Analysis, Redirect, analyze
from maia.permissions.paths import path_matches
from maia.permissions.rules import Rule, RuleSet, Verdict, as_ruleset, bash_pattern, wildcard

PATH_TOOLS = frozenset({"Read", "Write", "Edit", "Glob", "Grep"})
# Writing to these is not writing a file.
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


@dataclass(frozen=True, slots=True)
class Decision:
    """A verdict, the rule that decided it (if any) and why, in words."""

    verdict: Verdict
    rule: str | None
    reason: str


def decide(
    tool_name: str, tool_input: Mapping[str, Any], rules: RuleSet | Mapping[str, Sequence[str]], cwd: Path
) -> Verdict:
    """The verdict for one tool call: ``allow``, ``ask`` or ``deny``."""
    return explain(tool_name, tool_input, rules, cwd).verdict


def explain(
    tool_name: str, tool_input: Mapping[str, Any], rules: RuleSet | Mapping[str, Sequence[str]], cwd: Path
) -> Decision:
    """The verdict for one tool call with the deciding rule and the reason."""
    ruleset = as_ruleset(rules)
    if tool_name == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return Decision(Verdict.ASK, None, _("no command to check"))
        return _bash(command, ruleset, cwd)
    for verdict in (Verdict.DENY, Verdict.ASK):
        for rule in ruleset.family(verdict.value):
            if _applies(rule, tool_name, tool_input, cwd, for_allow=False):
                return Decision(
                    verdict, rule.text, _("{family} rule {rule} matches").format(family=verdict.value, rule=rule.text)
                )
    for rule in ruleset.allow:
        if _applies(rule, tool_name, tool_input, cwd, for_allow=True):
            return Decision(Verdict.ALLOW, rule.text, _("allow rule {rule} matches").format(rule=rule.text))
    return Decision(Verdict.ASK, None, _("no rule applies to {tool}: ask").format(tool=tool_name))


# --- non-Bash tools ----------------------------------------------------------------------------


def _applies(rule: Rule, tool_name: str, tool_input: Mapping[str, Any], cwd: Path, *, for_allow: bool) -> bool:
    if rule.tool == "Mcp":
        return _mcp_applies(rule, tool_name)
    if rule.tool != tool_name:
        return False
    if rule.pattern is None:
        return True
    if tool_name in PATH_TOOLS:
        path = _target_path(tool_name, tool_input)
        return isinstance(path, str) and bool(path) and path_matches(rule.pattern, path, cwd, for_allow=for_allow)
    if tool_name == "WebFetch":
        return _domain_applies(rule.pattern, tool_input.get("url"))
    if tool_name == "Skill":
        name = tool_input.get("skill", tool_input.get("name"))
        return isinstance(name, str) and bool(wildcard(rule.pattern).fullmatch(name))
    if tool_name == "Agent":
        name = tool_input.get("agent")
        return isinstance(name, str) and bool(wildcard(rule.pattern).fullmatch(name))
    pattern = wildcard(rule.pattern)
    return any(pattern.fullmatch(value) for value in _text_values(tool_input))


def _target_path(tool_name: str, tool_input: Mapping[str, Any]) -> Any:
    """The path a call reaches: ``path``; for Glob and Grep the launch folder by default, and for Glob
    the fixed folders of a pattern that leaves it (``/etc/*.conf``, ``../other/**``)."""
    path = tool_input.get("path")
    if tool_name not in ("Glob", "Grep"):
        return path
    pattern = tool_input.get("pattern")
    if tool_name == "Glob" and isinstance(pattern, str) and pattern.startswith(("/", "~", "..")):
        fixed: list[str] = []
        for part in pattern.split("/"):
            if has_magic(part):
                break
            fixed.append(part)
        base = "/".join(fixed) or "/"
        return (
            f"{path.rstrip('/')}/{base}" if isinstance(path, str) and path and not base.startswith(("/", "~")) else base
        )
    return path if path else "."


def _text_values(tool_input: Mapping[str, Any]) -> list[str]:
    values = []
    for value in tool_input.values():
        if isinstance(value, str):
            values.append(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            values.append(format(value, "g") if isinstance(value, float) else str(value))
    return values


def _domain_applies(pattern: str, url: Any) -> bool:
    if not isinstance(url, str):
        return False
    if not pattern.startswith("domain:"):
        return bool(wildcard(pattern).fullmatch(url))
    try:
        host = (urlsplit(url.strip()).hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    wanted = pattern[len("domain:") :].strip().lower().rstrip(".")
    return bool(host) and bool(wildcard(wanted).fullmatch(host))


def _mcp_applies(rule: Rule, tool_name: str) -> bool:
    pieces = tool_name.split("__")
    if len(pieces) < 3 or pieces[0] != "mcp":
        return False
    server, tool = pieces[1], "__".join(pieces[2:])
    if rule.pattern is None:
        return True
    server_pattern, _sep, tool_pattern = rule.pattern.partition(",")
    return bool(wildcard(server_pattern.strip() or "*").fullmatch(server)) and bool(
        wildcard(tool_pattern.strip() or "*").fullmatch(tool)
    )


# --- Bash ----------------------------------------------------------------------------------------


def _show(text: str) -> str:
    return text.replace("\x00", "…")


def _part_matches(rule: Rule, texts: Sequence[str]) -> bool:
    if rule.pattern is None:
        return True
    pattern = bash_pattern(rule.pattern)
    return any(pattern.fullmatch(text) for text in texts)


@functools.lru_cache(maxsize=256)
def _family_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for a family's Bash patterns: a quick test before looking for the rule that matched."""
    return re.compile("|".join(f"(?:{bash_pattern(p).pattern})" for p in patterns), re.DOTALL)


def _first_rule(rules: Sequence[Rule], texts: Sequence[str]) -> Rule | None:
    bare = next((r for r in rules if r.pattern is None), None)
    if bare is not None:
        return bare
    patterns = tuple(r.pattern for r in rules if r.pattern is not None)
    if not patterns:
        return None
    quick = _family_regex(patterns)
    if not any(quick.fullmatch(text) for text in texts):
        return None
    return next((r for r in rules if _part_matches(r, texts)), None)


def _redirect_matches(rule: Rule, redirect: Redirect, cwd: Path, *, for_allow: bool) -> bool:
    if rule.pattern is None:
        return True
    if redirect.dynamic:
        return False
    return path_matches(rule.pattern, redirect.target, cwd, for_allow=for_allow)


def _file_redirects(redirects: Sequence[Redirect]) -> list[Redirect]:
    return list(dict.fromkeys(r for r in redirects if r.target not in _NOT_FILES))


def _bash(command: str, ruleset: RuleSet, cwd: Path) -> Decision:
    analysis = analyze(command)
    redirects = _file_redirects(analysis.redirects)
    suspects = {part: part.texts(for_allow=False) for part in [*analysis.parts, *analysis.fallback_parts]}
    suspect_redirects = _file_redirects([*redirects, *analysis.fallback_redirects])
    whole = " ".join(command.split())
    for verdict in (Verdict.DENY, Verdict.ASK):
        family = ruleset.family(verdict.value)
        bash_rules = [r for r in family if r.tool == "Bash"]
        if bash_rules:
            for texts in suspects.values():
                rule = _first_rule(bash_rules, texts)
                if rule is not None:
                    if rule.pattern is None:
                        reason = _("{family} rule {rule} covers every command")
                    else:
                        reason = _("{family} rule {rule} matches `{part}`")
                    return Decision(
                        verdict, rule.text, reason.format(family=verdict.value, rule=rule.text, part=_show(texts[0]))
                    )
            rule = _first_rule(bash_rules, [whole])
            if rule is not None:
                return Decision(
                    verdict,
                    rule.text,
                    _("{family} rule {rule} matches the whole command").format(family=verdict.value, rule=rule.text),
                )
        for rule in family:
            if rule.tool != "Redirect":
                continue
            for redirect in suspect_redirects:
                if _redirect_matches(rule, redirect, cwd, for_allow=False):
                    return Decision(
                        verdict,
                        rule.text,
                        _("{family} rule {rule} matches the redirection to {target}").format(
                            family=verdict.value, rule=rule.text, target=_show(redirect.target)
                        ),
                    )
    return _bash_allow(analysis, redirects, ruleset, cwd)


def _bash_allow(analysis: Analysis, redirects: list[Redirect], ruleset: RuleSet, cwd: Path) -> Decision:
    bash_rules = [r for r in ruleset.allow if r.tool == "Bash"]
    if not bash_rules:
        return Decision(Verdict.ASK, None, _("no rule applies to Bash: ask"))
    if analysis.uncertain:
        return Decision(
            Verdict.ASK, None, _("cannot prove the command safe ({why}): ask").format(why=analysis.uncertain[0])
        )
    if analysis.substitution:
        return Decision(
            Verdict.ASK,
            None,
            _("a command with a substitution ($(…), `…`, <(…), >(…)) is never allowed by a rule: ask"),
        )
    if not analysis.parts:
        return Decision(Verdict.ASK, None, _("empty command: ask"))
    used: list[str] = []
    for part in dict.fromkeys(analysis.parts):
        texts = part.texts(for_allow=True)
        if part.opaque:
            return Decision(
                Verdict.ASK,
                None,
                _("{wrapper} runs commands that cannot be checked: ask").format(wrapper=part.via or "a wrapper"),
            )
        if part.program_dynamic:
            return Decision(
                Verdict.ASK,
                None,
                _("the program of `{part}` is only known when it runs: ask").format(part=_show(texts[0])),
            )
        rule = _first_rule(bash_rules, texts)
        if rule is None:
            return Decision(Verdict.ASK, None, _("no allow rule covers `{part}`: ask").format(part=_show(texts[0])))
        if rule.text not in used:
            used.append(rule.text)
    redirect_rules = [r for r in ruleset.allow if r.tool == "Redirect"]
    for redirect in redirects:
        rule = next((r for r in redirect_rules if _redirect_matches(r, redirect, cwd, for_allow=True)), None)
        if rule is None:
            return Decision(
                Verdict.ASK,
                None,
                _("no Redirect rule allows writing to {target}: ask").format(target=_show(redirect.target)),
            )
        if rule.text not in used:
            used.append(rule.text)
    return Decision(
        Verdict.ALLOW, ", ".join(used), _("allowed: every part is covered by {rules}").format(rules=", ".join(used))
    )


def parts_of(command: str) -> list[str]:
    """The parts a command splits into, as text (for display and tests)."""
    return [_show(p.texts(for_allow=False)[0]) for p in analyze(command).parts]
