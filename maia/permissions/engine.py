"""Deciding a tool call (§9.2-§9.4): deny, then ask, then allow; no applicable rule means ask.

The engine judges a call's *subject* (what the tool declares rules match against, see
:mod:`maia.permissions.subject`), never the tool's name. An allow must be proven: for Bash, every
part of a *plain* command (:mod:`maia.permissions.plain`) covered and no dangerous option left
unnamed; deny and ask rules look everywhere (the plain reading, tree-sitter, a lexical fallback).

A :class:`Decision` says whether an ``ask`` comes from doubt (``doubt=True``: something the engine
could not see or prove while a deny or ask rule might have applied, a protected path, a private
address) or simply from no rule covering the call.
"""

from __future__ import annotations

import functools
import gc
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maia.core.globs import has_magic
from maia.core.paths import resolve_user_path
from maia.i18n import _
from maia.permissions import programs, tables
from maia.permissions.bash import analyze
from maia.permissions.parts import DYN, Part, Redirect
from maia.permissions.paths import Folders, ProtectedAreas, locations, names_area, path_matches, protected
from maia.permissions.plain import NotPlain, PlainScript, parse_plain
from maia.permissions.rules import BashPattern, Rule, RuleSet, Verdict, as_ruleset, bash_pattern, wildcard
from maia.permissions.subject import (
    CommandSubject,
    McpSubject,
    NameSubject,
    PathSubject,
    Subject,
    UrlSubject,
    subject_of,
)

# Writing to these is not writing a file.
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
MAX_COMMAND = 1_000_000  # longer commands are not read at all: ask
TREE_READING_LIMIT = 20_000  # plain commands up to this size are also read by tree-sitter, for deny
_WRITE_RULES = frozenset({"Write", "Edit"})
_LONG_COMMAND = 8192  # from this size on, a Bash decision runs without the cycle collector


@dataclass(frozen=True, slots=True)
class Decision:
    """A verdict, the rule that decided it (if any), why, in words, and whether an ask comes from doubt.

    ``doubt`` is True for an ``ask`` the engine could not resolve while it matters: an opaque
    program, unreadable or non-plain text, a time budget, a depth limit, an uncertain redirection
    target — each while a deny or ask rule exists that it could hide — and always for a protected
    path or a private network address. ``rule`` is None when no rule decided (no rule applies, or
    doubt). So: ask + rule → an ask rule matched; ask + doubt → refuse without a human; ask with
    neither → no rule covers the call.
    """

    verdict: Verdict
    rule: str | None
    reason: str
    doubt: bool = False
    # the engine could not read what would run (text that is not plain, too long to check): only a
    # person may allow it, never a program answering for the user (a hook)
    unreadable: bool = False


def decide(
    tool_name: str,
    tool_input: Mapping[str, Any],
    rules: RuleSet | Mapping[str, Sequence[str]],
    launch: Path,
    *,
    tool: object | None = None,
) -> Verdict:
    """The verdict for one tool call: ``allow``, ``ask`` or ``deny``."""
    return explain(tool_name, tool_input, rules, launch, tool=tool).verdict


def explain(
    tool_name: str,
    tool_input: Mapping[str, Any],
    rules: RuleSet | Mapping[str, Sequence[str]],
    launch: Path,
    *,
    tool: object | None = None,
) -> Decision:
    """The verdict for one tool call with the deciding rule and the reason.

    ``tool`` is the tool object when the caller has it: its ``subject(tool_input)`` says what the
    rules match against (custom tools: declared parameters with defaults). Without it, built-in
    tools are looked up by name.
    """
    ruleset = as_ruleset(rules)
    subject = subject_of(tool_name, tool_input, tool)
    return judge(tool_name, subject, ruleset, launch)


def judge(tool_name: str, subject: Subject, ruleset: RuleSet, launch: Path) -> Decision:
    """Decide a call from its subject."""
    if isinstance(subject, CommandSubject):
        if not isinstance(subject.command, str):
            return Decision(Verdict.ASK, None, _("no command to check"))
        if len(subject.command) < _LONG_COMMAND or not gc.isenabled():
            return _bare_bash(_bash(subject.command, ruleset, launch), ruleset)
        # a long command makes tens of thousands of small objects, all freed when the decision is
        # made (no cycles): the cycle collector would only walk them again and again, and promote
        # them, making the next full collection of the whole process longer
        gc.disable()
        try:
            return _bare_bash(_bash(subject.command, ruleset, launch), ruleset)
        finally:
            gc.enable()
    if isinstance(subject, PathSubject):
        return _path(tool_name, subject, ruleset, launch)
    if isinstance(subject, UrlSubject):
        return _url(tool_name, subject, ruleset)
    if isinstance(subject, McpSubject):
        return _simple(tool_name, ruleset, lambda rule, _allow: _mcp_applies(rule, tool_name, subject))
    if isinstance(subject, NameSubject):
        name = subject.name
        return _simple(
            tool_name,
            ruleset,
            lambda rule, _allow: (
                rule.tool == tool_name
                and (rule.pattern is None or (isinstance(name, str) and wildcard(rule.pattern).fullmatch(name)))
            ),
        )
    if subject.refused:
        return Decision(Verdict.DENY, None, subject.refused)
    values = subject.values
    return _simple(
        tool_name,
        ruleset,
        lambda rule, _allow: (
            rule.tool == tool_name
            and (rule.pattern is None or any(wildcard(rule.pattern).fullmatch(v) for v in values))
        ),
    )


def _matched(verdict: Verdict, rule: Rule) -> Decision:
    return Decision(verdict, rule.text, _("{family} rule {rule} matches").format(family=verdict.value, rule=rule.text))


def _simple(tool_name: str, ruleset: RuleSet, applies: Any) -> Decision:
    for verdict in (Verdict.DENY, Verdict.ASK):
        for rule in ruleset.family(verdict.value):
            if applies(rule, False):
                return _matched(verdict, rule)
    for rule in ruleset.allow:
        if applies(rule, True):
            return _matched(Verdict.ALLOW, rule)
    return Decision(Verdict.ASK, None, _("no rule applies to {tool}: ask").format(tool=tool_name))


def _mcp_applies(rule: Rule, tool_name: str, subject: McpSubject) -> bool:
    if rule.tool == tool_name:
        return rule.pattern is None or any(wildcard(rule.pattern).fullmatch(v) for v in subject.values)
    if rule.tool != "Mcp":
        return False
    if rule.pattern is None:
        return True
    server_pattern, _sep, tool_pattern = rule.pattern.partition(",")
    return wildcard(server_pattern.strip() or "*").fullmatch(subject.server) and wildcard(
        tool_pattern.strip() or "*"
    ).fullmatch(subject.tool)


# --- paths ----------------------------------------------------------------------------------------


def _path(tool_name: str, subject: PathSubject, ruleset: RuleSet, launch: Path) -> Decision:
    if subject.access == "read":
        names: frozenset[str] = frozenset({"Read"})
    elif subject.access == "write":
        names = _WRITE_RULES
    else:
        names = frozenset({tool_name})
    watched = names | {"Read"} if subject.access == "search" else names
    path = subject.path if isinstance(subject.path, str) and subject.path.strip() else None
    if path is not None and "\x00" in path:
        return Decision(Verdict.DENY, None, _("the path holds a NUL character: no file has such a name"))

    def matches(rule: Rule, *, for_allow: bool) -> bool:
        if rule.pattern is None:
            return True
        return path is not None and path_matches(rule.pattern, path, launch, for_allow=for_allow)

    for verdict in (Verdict.DENY, Verdict.ASK):
        for rule in ruleset.family(verdict.value):
            if rule.tool in watched and matches(rule, for_allow=False):
                return _matched(verdict, rule)
    if path is not None and "Read" in watched:
        same = _same_file_as_denied(path, ruleset, launch)
        if same is not None:
            return same
    if path is not None and subject.access == "write":
        same = _hard_link_hit([path], ruleset, launch)
        if same is not None:
            return same
    if path is not None and through_proc(str(resolve_user_path(path, launch))):
        return Decision(
            Verdict.ASK,
            None,
            _("{path} goes through /proc or /dev/fd (what it names depends on the process): ask").format(path=path),
            doubt=True,
        )
    allowing = [r for r in ruleset.allow if r.tool in names]
    if subject.access == "write" and path is not None and os.path.isdir(resolve_user_path(path, launch)):
        return Decision(
            Verdict.ASK, None, _("{path} is a folder, not a file to write: ask").format(path=path), doubt=True
        )
    if subject.access == "write" and path is not None:
        area = protected(path, launch)
        if area is not None:
            for rule in allowing:
                if (
                    rule.pattern is not None
                    and names_area(rule.pattern, area, launch)
                    and matches(rule, for_allow=True)
                ):
                    return _matched(Verdict.ALLOW, rule)
            return Decision(
                Verdict.ASK,
                None,
                _("{path} is protected (MAIA's settings, git's configuration, project instructions): ask").format(
                    path=path
                ),
                doubt=True,
            )
    for rule in allowing:
        if matches(rule, for_allow=True):
            return _matched(Verdict.ALLOW, rule)
    return Decision(Verdict.ASK, None, _("no rule applies to {tool}: ask").format(tool=tool_name))


def _hard_link_hit(paths: Sequence[str], ruleset: RuleSet, launch: Path) -> Decision | None:
    """A file written under another name (a hard link made earlier) is the file a Write deny or ask
    rule names: judged by device and inode."""
    for verdict in (Verdict.DENY, Verdict.ASK):
        rules = [
            r
            for r in ruleset.family(verdict.value)
            if r.tool in _WRITE_RULES and r.pattern is not None and not has_magic(r.pattern)
        ]
        if not rules:
            continue
        named: dict[tuple[int, int], Rule] = {}
        for rule in rules:
            try:
                info = os.stat(resolve_user_path(str(rule.pattern), launch))
            except (OSError, ValueError):
                continue
            named.setdefault((info.st_dev, info.st_ino), rule)
        if not named:
            continue
        for path in paths:
            if DYN in path:
                continue
            try:
                info = os.stat(resolve_user_path(path, launch))
            except (OSError, ValueError):
                continue
            hit = named.get((info.st_dev, info.st_ino))
            if hit is not None:
                return Decision(
                    verdict,
                    hit.text,
                    _("{path} is the same file as {denied}, which {family} rule {rule} covers").format(
                        path=_show(path), denied=hit.pattern, family=verdict.value, rule=hit.text
                    ),
                )
    return None


def _same_file_as_denied(path: str, ruleset: RuleSet, launch: Path) -> Decision | None:
    """A file that is the same file (device and inode) as one a Read deny names is denied: a hard
    link (``ln .env notes.txt``) is the file itself."""
    target = resolve_user_path(path, launch)
    try:
        info = os.stat(target)
    except (OSError, ValueError):
        return None
    for rule in ruleset.deny:
        if rule.tool != "Read" or rule.pattern is None:
            continue
        if has_magic(rule.pattern):
            if info.st_nlink > 1 and not os.path.isdir(target):
                # another name of this file may be the one the rule names: cannot be told apart
                return Decision(
                    Verdict.ASK,
                    None,
                    _("{path} has other names (hard links) and deny rule {rule} may name one of them: ask").format(
                        path=path, rule=rule.text
                    ),
                    doubt=True,
                )
            continue
        try:
            denied = os.stat(resolve_user_path(rule.pattern, launch))
        except (OSError, ValueError):
            continue
        if (denied.st_dev, denied.st_ino) == (info.st_dev, info.st_ino):
            return Decision(
                Verdict.DENY,
                rule.text,
                _("{path} is the same file as {denied}, which deny rule {rule} covers").format(
                    path=path, denied=rule.pattern, rule=rule.text
                ),
            )
    return None


# --- web ------------------------------------------------------------------------------------------


def _url(tool_name: str, subject: UrlSubject, ruleset: RuleSet) -> Decision:
    from maia.permissions.web import (
        domain_matches,
        host_of,
        judged_addresses,
        names_host,
        resolve,
        special_address,
    )

    url = subject.url
    host = host_of(url) if isinstance(url, str) else None

    def matches(rule: Rule) -> bool:
        if rule.tool != tool_name:
            return False
        if rule.pattern is None:
            return True
        if not isinstance(url, str):
            return False
        if not rule.pattern.startswith("domain:"):
            return wildcard(rule.pattern).fullmatch(url)
        return host is not None and domain_matches(rule.pattern[len("domain:") :], host)

    for verdict in (Verdict.DENY, Verdict.ASK):
        for rule in ruleset.family(verdict.value):
            if matches(rule):
                return _matched(verdict, rule)
    local: str | None = host.name if host is not None and host.special else None
    if host is not None and local is None and host.address is None:
        # a name is judged by every address it resolves to (the fetch connects to these very ones)
        addresses = judged_addresses(host.name)
        if addresses is None:
            addresses = resolve(host.name, host.port)
        local = next((f"{host.name} ({a})" for a in addresses if special_address(a)), None)
    if host is not None and local is not None:
        for rule in ruleset.allow:
            if (
                matches(rule)
                and rule.pattern is not None
                and rule.pattern.startswith("domain:")
                and names_host(rule.pattern[len("domain:") :], host)
            ):
                return _matched(Verdict.ALLOW, rule)
        return Decision(
            Verdict.ASK,
            None,
            _("{host} is a local or private address: ask unless a rule names it").format(host=local),
            doubt=True,
        )
    for rule in ruleset.allow:
        if matches(rule):
            return _matched(Verdict.ALLOW, rule)
    return Decision(Verdict.ASK, None, _("no rule applies to {tool}: ask").format(tool=tool_name))


# --- Bash -------------------------------------------------------------------------------------------


def _show(text: str, limit: int = 200) -> str:
    text = text.replace(DYN, "…")
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(slots=True)
class _Index:
    """A family's Bash rules by the first word of their pattern, so a part only meets its own rules."""

    bare: Rule | None = None
    by_word: dict[str, list[tuple[Rule, BashPattern]]] = field(default_factory=dict)
    wild: list[tuple[Rule, BashPattern]] = field(default_factory=list)
    memo: dict[str, Rule | None] = field(default_factory=dict)
    heads: dict[str, bool] = field(default_factory=dict)  # may_match of a part without assignments, by program

    @classmethod
    def of(cls, rules: Iterable[Rule]) -> _Index:
        index = cls()
        for rule in rules:
            if rule.pattern is None or bash_pattern(rule.pattern).words in ((), ("*",)):
                index.bare = index.bare or rule
                continue
            pattern = bash_pattern(rule.pattern)
            first = pattern.words[0]
            if "*" in first:
                index.wild.append((rule, pattern))
            else:
                word = first.split(":", 1)[0] if first.endswith(":*") else first
                index.by_word.setdefault(word, []).append((rule, pattern))
        return index

    def __bool__(self) -> bool:
        return self.bare is not None or bool(self.by_word) or bool(self.wild)

    def may_match(self, part: Part) -> bool:
        """False when no rule can match any text of the part (its first words have no rule)."""
        if self.bare is not None or self.wild or not part.words:
            return True
        program = part.words[0]
        by_word = self.by_word
        known = self.heads.get(program)
        if known is None:
            known = self.heads[program] = (
                program.partition(" ")[0] in by_word or programs.program_name(program).partition(" ")[0] in by_word
            )
        return known or (bool(part.assignments) and part.assignments[0].partition(" ")[0] in by_word)

    def may_match_all(self, parts: Iterable[Part]) -> list[Part]:
        """The parts :meth:`may_match` keeps, in order (one call for thousands of parts)."""
        if self.bare is not None or self.wild:
            return list(parts)
        by_word = self.by_word
        heads = self.heads
        kept: list[Part] = []
        for part in parts:
            words = part.words
            if not words:
                kept.append(part)
                continue
            program = words[0]
            known = heads.get(program)
            if known is None:
                known = heads[program] = (
                    program.partition(" ")[0] in by_word or programs.program_name(program).partition(" ")[0] in by_word
                )
            if known or (part.assignments and part.assignments[0].partition(" ")[0] in by_word):
                kept.append(part)
        return kept

    def first(self, texts: Sequence[str]) -> Rule | None:
        if self.bare is not None:
            return self.bare
        memo = self.memo
        for text in texts:
            if text in memo:
                found = memo[text]
            else:
                found = None
                for candidates in (self.by_word.get(text.partition(" ")[0], ()), self.wild):
                    for rule, pattern in candidates:
                        if pattern.fullmatch(text):
                            found = rule
                            break
                    if found is not None:
                        break
                memo[text] = found
            if found is not None:
                return found
        return None


_HEAD_WORDS = 16


def _whole_may_match(index: _Index, command: str) -> bool:
    """False when no rule of ``index`` can match the command on one line (``index.first([whole])``),
    judged from its first words: a long command is not joined for nothing."""
    if index.bare is not None or index.wild:
        return True
    words = command.split(None, _HEAD_WORDS)
    candidates = index.by_word.get(words[0] if words else "")
    if not candidates:
        return False
    more = len(words) > _HEAD_WORDS  # then the start below is followed by a blank and more words
    start = " ".join(words[:_HEAD_WORDS])
    for _rule, pattern in candidates:
        for form in pattern.forms:
            # every match starts with the text before the first * of the pattern, or of the pattern
            # without its final " *" (which also matches)
            for fixed in (form.pieces[0],) if form.head is None else (form.pieces[0], form.head[0]):
                if start.startswith(fixed) or (more and fixed.startswith(start)):
                    return True
    return False


def _text(words: Sequence[str], assignments: Sequence[str] = ()) -> str:
    return " ".join([*assignments, *words])


def deny_forms(part: Part) -> list[str]:
    """Every text a deny or ask rule is matched against: ``/usr/bin/rm`` also as ``rm``, with and
    without the ``NAME=value`` prefix, and past global options (``git -C x push`` → ``git push``)."""
    words = list(part.words)
    if not words:
        return [_text((), part.assignments)]
    variants = [tuple(words)]
    base = programs.program_name(words[0])
    if base and base != words[0]:
        variants.append((base, *words[1:]))
    for variant in list(variants):
        variants.extend(programs.subcommand_forms(variant, for_allow=False))
    forms: list[str] = []
    for variant in variants:
        if part.assignments:
            forms.append(_text(variant, part.assignments))
        forms.append(_text(variant))
    return list(dict.fromkeys(forms))


def allow_forms(part: Part, launch: Path) -> list[str]:
    """The texts an allow rule may cover: the part as written, the bare name for a program in a
    system folder, without its inert prefix, and past harmless global options."""
    words = list(part.words)
    if "/" not in words[0] and (len(words) < 2 or not words[1].startswith("-")):
        # no folder to drop and no global option to skip (subcommand_forms finds none): the part
        # as written, and with its prefix
        text = " ".join(words)
        return [text, " ".join([*part.assignments, *words])] if part.assignments else [text]
    variants = [tuple(words)]
    directory, _slash, base = words[0].rpartition("/")
    if directory and base and directory.rstrip("/") in programs.SYSTEM_DIRS:
        variants.append((base, *words[1:]))
    for variant in list(variants):
        variants.extend(programs.subcommand_forms(variant, for_allow=True, launch=launch))
    if len(variants) == 1:  # (ls -la…: what the fast path above gives)
        text = " ".join(words)
        return [text, " ".join([*part.assignments, *words])] if part.assignments else [text]
    forms: list[str] = []
    for variant in variants:
        forms.append(_text(variant))
        if part.assignments:
            forms.append(_text(variant, part.assignments))
    return list(dict.fromkeys(forms))


def _redirect_rules(family: Sequence[Rule]) -> list[Rule]:
    return [r for r in family if r.tool == "Redirect" or r.tool in _WRITE_RULES]


def _redirect_matches(
    rule: Rule,
    redirect: Redirect,
    launch: Path,
    *,
    for_allow: bool,
    where: tuple[str, str] | None = None,
    dynamic: bool | None = None,  # redirect.dynamic, when the caller has it
) -> bool:
    if rule.pattern is None:
        return True
    if redirect.dynamic if dynamic is None else dynamic:
        return False
    return path_matches(rule.pattern, redirect.target, launch, for_allow=for_allow, where=where)


def _file_redirects(redirects: Iterable[Redirect]) -> list[Redirect]:
    seen: dict[tuple[str, bool, str | None], Redirect] = {}
    for redirect in redirects:
        if redirect.target not in _NOT_FILES:
            seen.setdefault((redirect.target, redirect.certain, redirect.base), redirect)
    return list(seen.values())


def _watching(ruleset: RuleSet) -> bool:
    """Whether a deny or ask rule could apply to a Bash command (so doubt matters)."""
    # Read rules are not watched here: they apply to files a plain command reads through `<` (judged
    # exactly); MAIA's own Read deny on settings.json would otherwise make every non-plain command doubtful
    return any(r.tool in ("Bash", "Redirect", *_WRITE_RULES) for r in (*ruleset.deny, *ruleset.ask))


def _ask(reason: str, *, doubt: bool, unreadable: bool = False) -> Decision:
    return Decision(Verdict.ASK, None, reason, doubt=doubt, unreadable=unreadable)


def _bash(command: str, ruleset: RuleSet, launch: Path) -> Decision:
    watching = _watching(ruleset)
    if len(command) > MAX_COMMAND:
        return _ask(
            _("the command is too long to check ({size} characters): ask").format(size=len(command)),
            doubt=watching,
            unreadable=True,
        )
    plain: PlainScript | None
    try:
        plain = parse_plain(command, programs.DEFAULT_INERT | ruleset.inert, launch=launch)
        not_plain = None
    except NotPlain as error:
        plain, not_plain = None, error.reason
    parts: list[Part] = []
    redirects: list[Redirect] = []
    uncertain: list[str] = []
    if plain is not None:
        parts.extend(plain.parts)
        redirects.extend(plain.redirects)
        hidden = list(plain.hidden_texts)
        if len(command) <= TREE_READING_LIMIT:
            hidden.append(command)  # a second reading, for deny and ask only
        for text in hidden if watching else ():
            reading = analyze(text)
            parts.extend([*reading.parts, *reading.fallback_parts])
            redirects.extend([*reading.redirects, *reading.fallback_redirects])
    elif watching:  # without deny or ask rules there is nothing to look for
        reading = analyze(command)
        parts.extend([*reading.parts, *reading.fallback_parts])
        redirects.extend([*reading.redirects, *reading.fallback_redirects])
        uncertain = reading.uncertain
    # where each redirection target is (as written, links resolved), resolved once for this decision
    found_at: dict[str, tuple[str, str]] = {}
    # the files each part writes, read once for this decision (deny and ask, then allow)
    known_writes: dict[tuple[str, ...], list[tables.Target]] = {}
    found = _deny_or_ask(command, parts, redirects, ruleset, launch, found_at, known_writes) if watching else None
    if found is None and plain is not None and plain.inputs:
        found = _inputs_deny_or_ask(plain.inputs, ruleset, launch)
    if found is None and ruleset.deny:
        found = _deny_words(command, ruleset)
    if found is not None:
        return found
    if plain is None:
        budget = next((u for u in uncertain if "time budget" in u), None)
        why = budget or not_plain or "?"
        return _ask(
            _("the command is not plain ({why}): only a person can allow it").format(why=why),
            doubt=watching,
            unreadable=True,
        )
    # (the deny reading, when there was one, read the written files of all its parts: the plain ones too)
    return _bash_allow(plain, ruleset, launch, watching, found_at, known_writes, writes_complete=watching)


def _bare_bash(decision: Decision, ruleset: RuleSet) -> Decision:
    """A bare ``Bash`` allow with no deny or ask rule a command could hide from covers every command,
    plain or not (``$VAR``, ``eval``…): there is nothing the engine must look for. Doubt (a protected
    path, an uncertain redirection) still asks."""
    if decision.verdict != Verdict.ASK or decision.doubt or decision.rule is not None or _watching(ruleset):
        return decision
    bare = next((r for r in ruleset.allow if r.tool == "Bash" and r.pattern in (None, "*")), None)
    if bare is None:
        return decision
    reason = _("allow rule {rule} covers every command (no deny or ask rule)").format(rule=bare.text)
    return Decision(Verdict.ALLOW, bare.text, reason)


def _deny_or_ask(
    command: str,
    parts: list[Part],
    redirects: list[Redirect],
    ruleset: RuleSet,
    launch: Path,
    found_at: dict[str, tuple[str, str]] | None = None,
    known_writes: dict[tuple[str, ...], list[tables.Target]] | None = None,
) -> Decision | None:
    keys: dict[tuple[Any, ...], Part] = {}
    for part in parts:
        # most parts have words only: the words are the key (a tuple of strings never equals a key())
        keys.setdefault(part.words if not part.assignments and not part.opaque else part.key(), part)
    file_redirects = _file_redirects(redirects)
    dynamics = [redirect.dynamic for redirect in file_redirects]  # (a pattern search each: once)
    if found_at is None:
        found_at = {}  # each target's locations, resolved once per decision
    folders: dict[str, str] = Folders()
    whole: str | None = None  # the command on one line (a rule may name a whole compound command)
    writes = _writes(keys.values(), launch, known_writes)
    for verdict in (Verdict.DENY, Verdict.ASK):
        family = ruleset.family(verdict.value)
        index = _Index.of(r for r in family if r.tool == "Bash")
        if index:
            for part in index.may_match_all(keys.values()):
                texts = deny_forms(part)
                rule = index.first(texts)
                if rule is not None:
                    if rule.pattern is None:
                        reason = _("{family} rule {rule} covers every command")
                    else:
                        reason = _("{family} rule {rule} matches `{part}`")
                    return Decision(
                        verdict, rule.text, reason.format(family=verdict.value, rule=rule.text, part=_show(texts[0]))
                    )
            rule = None
            if _whole_may_match(index, command):
                if whole is None:
                    whole = " ".join(command.split())
                rule = index.first([whole])
            if rule is not None:
                return Decision(
                    verdict,
                    rule.text,
                    _("{family} rule {rule} matches the whole command").format(family=verdict.value, rule=rule.text),
                )
        for rule in (r for r in family if r.tool in _WRITE_RULES):
            for part, target in writes:
                if target.tree or DYN in target.path:
                    continue
                if rule.pattern is None or path_matches(rule.pattern, target.path, launch, for_allow=False):
                    return Decision(
                        verdict,
                        rule.text,
                        _("{family} rule {rule} matches {target}, which `{part}` writes").format(
                            family=verdict.value,
                            rule=rule.text,
                            target=_show(target.path),
                            part=_show(_text(part.words)),
                        ),
                    )
        for rule in _redirect_rules(family):
            for redirect, dynamic in zip(file_redirects, dynamics, strict=True):
                where = None
                if not dynamic:
                    where = found_at.get(redirect.target) or locations(redirect.target, launch, folders)
                    found_at[redirect.target] = where
                moved = redirect.base is not None and not redirect.target.startswith(("/", "~"))
                if _redirect_matches(rule, redirect, launch, for_allow=False, where=where, dynamic=dynamic) or (
                    moved
                    and _redirect_matches(
                        rule,
                        redirect,
                        launch,
                        for_allow=False,
                        where=locations(f"{redirect.base}/{redirect.target}", launch),
                        dynamic=dynamic,
                    )
                ):
                    return Decision(
                        verdict,
                        rule.text,
                        _("{family} rule {rule} matches the redirection to {target}").format(
                            family=verdict.value, rule=rule.text, target=_show(redirect.target)
                        ),
                    )
    linked = _hard_link_hit(
        [*(t.path for _p, t in writes if not t.tree), *(r.target for r in file_redirects)], ruleset, launch
    )
    if linked is not None:
        return linked
    if any(r.tool in _WRITE_RULES or r.tool == "Redirect" for r in (*ruleset.deny, *ruleset.ask)):
        # a file whose name is unknown, or reached through another process's view, could be any file
        for part, target in writes:
            if target.tree or DYN in target.path or through_proc(target.path):
                return _ask(
                    _("`{part}` writes {target}, which a Write rule might cover but cannot be checked: ask").format(
                        part=_show(_text(part.words)), target=_show(target.path + ("/…" if target.tree else ""))
                    ),
                    doubt=True,
                )
        for redirect in file_redirects:
            if through_proc(redirect.target):
                return _ask(
                    _("the redirection to {target} goes through /proc or /dev/fd: ask").format(
                        target=_show(redirect.target)
                    ),
                    doubt=True,
                )
    return None


_PROC = ("/proc/", "/dev/fd/", "/dev/tcp/", "/dev/udp/")


def through_proc(path: str) -> bool:
    """A path through /proc/self, /proc/thread-self, /proc/PID or /dev/fd: what it names depends on the
    process that opens it (its folder, its descriptors), not on MAIA's."""
    if "proc" not in path and "fd" not in path and "/dev/" not in path:
        return False
    normal = os.path.normpath(path) + "/"
    return normal.startswith(_PROC) or normal in ("/proc/", "/dev/fd/")


def _writes(
    parts: Iterable[Part], launch: Path, known: dict[tuple[str, ...], list[tables.Target]] | None = None
) -> list[tuple[Part, tables.Target]]:
    """The files the parts write through their operands and options (cp's destination, tee's files…);
    ``known``: the targets already read for the same words, in this decision."""
    found: list[tuple[Part, tables.Target]] = []
    by_name = tables.BY_NAME
    if known is None:
        known = {}  # many parts repeat the same words
    writers: dict[str, bool] = {}  # by program word: whether its table says what it writes
    for part in parts:
        words = part.words
        if not words:
            continue
        writes = writers.get(words[0])
        if writes is None:
            table = by_name.get(words[0].rpartition("/")[2])  # (program_name, inlined)
            writes = writers[words[0]] = table is not None and table.writes is not None
        if not writes or part.opaque:
            continue
        targets = known.get(part.words)
        if targets is None:
            targets = known[part.words] = tables.written(part.words, launch)
        found.extend((part, target) for target in targets)
    return found


_WORD_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _has_word(text: str, word: str) -> bool:
    """Whether ``word`` appears in ``text`` with no letter, digit, ``_``, ``.`` or ``-`` glued to it."""
    at = text.find(word)
    size = len(word)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + size] if at + size < len(text) else " "
        if before not in _WORD_CHARACTERS and after not in _WORD_CHARACTERS:
            return True
        at = text.find(word, at + 1)
    return False


_PROGRAM_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def _deny_words(command: str, ruleset: RuleSet) -> Decision | None:
    """A deny rule naming a program reads the whole text: the name as a word anywhere (an awk or
    python script, a quoted string, a git alias) asks, from doubt."""
    bare = None
    for rule in ruleset.deny:
        if rule.tool != "Bash" or rule.pattern is None:
            continue
        literal: list[str] = []
        for word in _rule_words(rule.pattern):
            if word.endswith(":*") and "*" not in word[:-2]:
                literal.append(word[:-2])  # Claude Code's `rm:*`
            if "*" in word:
                break
            literal.append(word)
        if not literal:
            continue
        literal[0] = programs.program_name(literal[0])
        if not _PROGRAM_WORD.fullmatch(literal[0]):
            continue
        if bare is None:
            # r''m, "r"m, \rm: the word as quotes and backslashes are removed
            bare = (
                command.replace("'", "").replace('"', "").replace("\\", "")
                if "'" in command or '"' in command or "\\" in command
                else command
            )
        if literal[0] not in command and literal[0] not in bare:
            continue
        if all(_has_word(command, w) or _has_word(bare, w) for w in literal if w):
            return _ask(
                _("the command contains the word `{word}`, which deny rule {rule} names: ask").format(
                    word=" ".join(literal), rule=rule.text
                ),
                doubt=True,
            )
    return None


def _inputs_deny_or_ask(inputs: list[Redirect], ruleset: RuleSet, launch: Path) -> Decision | None:
    """``cmd < file`` reads the file: Read deny and ask rules apply to it, as to the Read tool."""
    for verdict in (Verdict.DENY, Verdict.ASK):
        for rule in (r for r in ruleset.family(verdict.value) if r.tool == "Read"):
            for source in _file_redirects(inputs):
                if rule.pattern is None or (
                    not source.dynamic and path_matches(rule.pattern, source.target, launch, for_allow=False)
                ):
                    return Decision(
                        verdict,
                        rule.text,
                        _("{family} rule {rule} matches the file read from {target}").format(
                            family=verdict.value, rule=rule.text, target=_show(source.target)
                        ),
                    )
    return None


def _inputs_allowed(inputs: list[Redirect], launch: Path) -> Decision | None:
    """A file read through ``<`` outside the launch folder (or only known when it runs) asks: a rule on
    the program says nothing of which files it may read (``cat < ~/.ssh/id_rsa``)."""
    for source in _file_redirects(inputs):
        if not source.certain or source.dynamic:
            return _ask(
                _("the file read from {target} is only known when it runs: ask").format(target=_show(source.target)),
                doubt=False,
            )
        where = (
            source.target
            if source.base is None or source.target.startswith(("/", "~"))
            else (f"{source.base}/{source.target}")
        )
        if not programs.inside(where, launch):
            return _ask(
                _("the command reads {target}, outside the working folder: ask").format(target=_show(source.target)),
                doubt=False,
            )
    return None


@functools.lru_cache(maxsize=1024)
def _rule_words(pattern: str) -> tuple[str, ...]:
    return bash_pattern(pattern).words


def _bash_allow(
    plain: PlainScript,
    ruleset: RuleSet,
    launch: Path,
    watching: bool,
    found_at: dict[str, tuple[str, str]] | None = None,
    known_writes: dict[tuple[str, ...], list[tables.Target]] | None = None,
    *,
    writes_complete: bool = False,  # known_writes holds the targets of every part of plain that has any
) -> Decision:
    index = _Index.of(r for r in ruleset.allow if r.tool == "Bash")
    if not index:
        return _ask(_("no rule applies to Bash: ask"), doubt=watching and any(p.opaque for p in plain.parts))
    if not plain.parts:
        return _ask(_("empty command: ask"), doubt=False)
    used: list[str] = []
    seen: set[tuple[Any, ...]] = set()
    plain_programs: set[str] = set()  # program words known to be neither dynamic nor blank
    for part in plain.parts:
        # most parts have words only: the words are the key (a tuple of strings never equals the long key)
        if part.assignments or part.opaque or part.folder_moved or part.open_words:
            key: tuple[Any, ...] = (*part.key(), part.folder_moved, part.open_words)
        else:
            key = part.words
        count = len(seen)
        seen.add(key)  # (one hash of the key, not two: it is a tuple)
        if len(seen) == count:
            continue
        if part.opaque:
            return _ask(
                _("{why}: what runs cannot be checked, ask").format(why=part.why or part.via or "?"), doubt=watching
            )
        if part.program not in plain_programs:  # a long command names a few programs many times
            if part.program_dynamic:
                return _ask(
                    _("the program of `{part}` is only known when it runs: ask").format(part=_show(_text(part.words))),
                    doubt=watching,
                )
            if any(c.isspace() for c in part.program):
                # 'git status' quoted is one word: a program of that name, which no rule's words can name
                return _ask(
                    _("the program `{program}` has a blank in its name: no rule covers it, ask").format(
                        program=_show(part.program)
                    ),
                    doubt=watching,
                )
            plain_programs.add(part.program)
        texts = allow_forms(part, launch)
        rule = index.first(texts)
        if rule is None:
            risks = programs.dangers(part, launch)
            if risks:
                # a writer or an executor in disguise: say so, it is what a person must judge
                return _ask(
                    _("no allow rule covers `{part}`, which uses `{option}` ({why}): ask").format(
                        part=_show(texts[0]), option=_show(risks[0].token), why=risks[0].why
                    ),
                    doubt=watching,
                )
            return _ask(_("no allow rule covers `{part}`: ask").format(part=_show(texts[0])), doubt=False)
        words = _rule_words(rule.pattern) if rule.pattern is not None else ("*",)
        if words != ("*",):
            for danger in programs.dangers(part, launch):
                if not programs.names_option(words, danger):
                    return _ask(
                        _("{rule} does not name `{option}` in `{part}` ({why}): ask").format(
                            rule=rule.text, option=_show(danger.token), part=_show(texts[0]), why=danger.why
                        ),
                        doubt=watching,
                    )
        if rule.text not in used:
            used.append(rule.text)
    reading = _inputs_allowed(plain.inputs, launch)
    if reading is not None:
        return reading
    allowing = _redirect_rules(ruleset.allow)
    folders: dict[str, str] = Folders()  # resolved folders, for this decision only
    if found_at is None:
        found_at = {}
    areas = ProtectedAreas(launch)  # read once for this decision
    if writes_complete and known_writes is not None and not any(known_writes.values()):
        # the deny reading read the files every part writes (its parts hold the plain ones): none
        written: list[tuple[Part, tables.Target]] = []
    else:
        written = _writes(plain.parts, launch, known_writes)
    if written:
        refused = _writes_allowed(plain, written, allowing, areas, launch, watching, folders, used)
        if refused is not None:
            return refused
    for redirect in _file_redirects(plain.redirects):
        if through_proc(redirect.target):
            return _ask(
                _("the redirection to {target} goes through /proc or /dev/fd: ask").format(
                    target=_show(redirect.target)
                ),
                doubt=True,
            )
        if not redirect.certain:
            return _ask(
                _("the redirection to {target} is uncertain ({why}): ask").format(
                    target=_show(redirect.target), why=redirect.why
                ),
                doubt=True,
            )
        where = found_at.get(redirect.target) or locations(redirect.target, launch, folders)
        found_at[redirect.target] = where
        area = areas.reached(*where)
        dynamic = redirect.dynamic
        candidates = [
            r for r in allowing if _redirect_matches(r, redirect, launch, for_allow=True, where=where, dynamic=dynamic)
        ]
        if area is not None:
            candidates = [r for r in candidates if r.pattern is not None and names_area(r.pattern, area, launch)]
            if not candidates:
                return _ask(
                    _("{target} is protected (MAIA's settings, git's configuration, project instructions): ask").format(
                        target=redirect.target
                    ),
                    doubt=True,
                )
        if not candidates:
            return _ask(
                _("no Redirect or Write rule allows writing to {target}: ask").format(target=_show(redirect.target)),
                doubt=False,
            )
        if candidates[0].text not in used:
            used.append(candidates[0].text)
    return Decision(
        Verdict.ALLOW, ", ".join(used), _("allowed: every part is covered by {rules}").format(rules=", ".join(used))
    )


_GLOB = re.compile(r"[*?\[\]{}$`]")


def _writes_allowed(
    plain: PlainScript,
    written: list[tuple[Part, tables.Target]],
    allowing: list[Rule],
    areas: ProtectedAreas,
    launch: Path,
    watching: bool,
    folders: dict[str, str],
    used: list[str],
) -> Decision | None:
    """A file a covered part writes is judged like a redirection's target: it must not be protected,
    and outside the launch folder a Redirect or Write rule must allow it."""
    moved_at = min((p.position for p in plain.parts if programs.changes_folder(p)), default=None)
    links_at = min((p.position for p in plain.parts if programs.makes_links(p)), default=None)
    for part, target in written:
        path = target.path
        shown = _show(_text(part.words))
        if target.tree and not _tree_allowed(path, launch, areas, moved_at is not None and moved_at < part.position):
            return _ask(
                _("`{part}` writes files whose names are only known when it runs (in {target}): ask").format(
                    part=shown, target=_show(path)
                ),
                doubt=watching,
            )
        if target.tree:
            continue
        if DYN in path or _GLOB.search(path) or "\x00" in path:
            return _ask(
                _("`{part}` writes {target}, only known when it runs: ask").format(part=shown, target=_show(path)),
                doubt=watching,
            )
        if through_proc(path):
            return _ask(
                _("`{part}` writes {target}, through /proc or /dev/fd: ask").format(part=shown, target=_show(path)),
                doubt=True,
            )
        if path in _NOT_FILES:
            continue
        relative = not path.startswith(("/", "~"))
        if (moved_at is not None and relative and moved_at < part.position) or (
            links_at is not None and links_at < part.position
        ):
            return _ask(
                _("`{part}` writes {target} after a folder change or new links: where is uncertain, ask").format(
                    part=shown, target=_show(path)
                ),
                doubt=watching,
            )
        where = locations(path, launch, folders)
        area = areas.reached(*where)
        candidates = [r for r in allowing if r.tool in _WRITE_RULES or r.tool == "Redirect"]
        candidates = [
            r
            for r in candidates
            if r.pattern is None or path_matches(r.pattern, path, launch, for_allow=True, where=where)
        ]
        if area is not None:
            if not [r for r in candidates if r.pattern is not None and names_area(r.pattern, area, launch)]:
                return _ask(
                    _(
                        "`{part}` writes {target}, which is protected (MAIA's settings, git's configuration, "
                        "project instructions): ask"
                    ).format(part=shown, target=_show(path)),
                    doubt=True,
                )
            continue
        if not programs.inside(path, launch):
            if not candidates:
                return _ask(
                    _("`{part}` writes {target}, outside the launch folder, and no Write rule allows it: ask").format(
                        part=shown, target=_show(path)
                    ),
                    doubt=False,
                )
            if candidates[0].text not in used:
                used.append(candidates[0].text)
    return None


def _tree_allowed(folder: str, launch: Path, areas: ProtectedAreas, moved: bool) -> bool:
    """Whether files of unknown names written below ``folder`` (an archive unpacked, a tree copied)
    stay clear of every protected path: a folder inside the launch folder (not the launch folder
    itself, where .maia/ and .git/ live) holding no git directory and inside no protected area."""
    if moved or DYN in folder or _GLOB.search(folder) or not programs.inside(folder, launch):
        return False
    lexical, real = locations(folder, launch)
    if real.rstrip("/") == os.path.realpath(launch).rstrip("/") or areas.reached(lexical, real + "/x") is not None:
        return False
    if not os.path.isdir(real):
        return True  # made by the command: empty
    seen = 0
    for root, folders, files in os.walk(real):
        seen += len(folders) + len(files)
        if seen > 5000 or ".git" in folders or ".git" in files or programs.is_git_dir(root):
            return False
    return True


def parts_of(command: str) -> list[str]:
    """The parts a command splits into, as text (for display and tests)."""
    try:
        parts = parse_plain(command).parts
    except NotPlain:
        parts = analyze(command).parts
    return [_show(_text(p.words, p.assignments)) for p in parts]
