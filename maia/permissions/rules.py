"""Permission rules (§9): ``Tool`` or ``Tool(pattern)`` in allow / ask / deny lists."""

from __future__ import annotations

import enum
import functools
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from maia.i18n import _

_RULE = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
FAMILIES = ("deny", "ask", "allow")


class Verdict(enum.StrEnum):
    """What happens to a tool call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class RuleSyntaxError(ValueError):
    """A rule that is not ``Tool`` or ``Tool(pattern)``."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One parsed rule."""

    tool: str
    pattern: str | None
    text: str

    def __str__(self) -> str:
        return self.text


@functools.lru_cache(maxsize=4096)
def parse_rule(text: str) -> Rule:
    """Parse ``Tool`` or ``Tool(pattern)``; raise :class:`RuleSyntaxError` otherwise."""
    match = _RULE.match(text)
    if not match:
        raise RuleSyntaxError(
            _('"{rule}" is not a rule: write Tool or Tool(pattern), Tool made of letters, digits, _ . -').format(
                rule=text
            )
        )
    tool, pattern = match.group(1), match.group(2)
    if pattern is not None and not pattern.strip():
        raise RuleSyntaxError(_('"{rule}" has an empty pattern: write {tool} alone').format(rule=text, tool=tool))
    return Rule(tool, None if pattern is None else pattern.strip(), text.strip())


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The rules of every source, added up per family."""

    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    def family(self, name: str) -> tuple[Rule, ...]:
        """The rules of one family: ``allow``, ``ask`` or ``deny``."""
        rules: tuple[Rule, ...] = getattr(self, name)
        return rules

    @property
    def empty(self) -> bool:
        """Whether there is no rule at all."""
        return not (self.allow or self.ask or self.deny)


@dataclass(slots=True)
class ParsedRules:
    """Rules read from one mapping, with a warning per rejected entry."""

    ruleset: RuleSet
    warnings: list[str] = field(default_factory=list)


def parse_rules(mapping: Mapping[str, object], where: str = "permissions") -> ParsedRules:
    """Parse ``{"allow": [...], "ask": [...], "deny": [...]}``; bad entries become warnings."""
    lists: dict[str, list[Rule]] = {name: [] for name in FAMILIES}
    warnings: list[str] = []
    for key, value in mapping.items():
        if key not in FAMILIES:
            warnings.append(
                _('{where}: unknown list "{key}" ignored (use allow, ask or deny).').format(where=where, key=key)
            )
            continue
        if not isinstance(value, list):
            warnings.append(_("{where}.{key}: expected a list of rules; ignored.").format(where=where, key=key))
            continue
        for index, entry in enumerate(value):
            if not isinstance(entry, str):
                warnings.append(
                    _("{where}.{key}[{index}]: a rule must be a string, not {value!r}; ignored.").format(
                        where=where, key=key, index=index, value=entry
                    )
                )
                continue
            try:
                lists[key].append(parse_rule(entry))
            except RuleSyntaxError as error:
                warnings.append(
                    _("{where}.{key}[{index}]: {error}; ignored.").format(
                        where=where, key=key, index=index, error=error
                    )
                )
    ruleset = RuleSet(tuple(lists["allow"]), tuple(lists["ask"]), tuple(lists["deny"]))
    return ParsedRules(ruleset, warnings)


def merge(rulesets: Iterable[RuleSet]) -> RuleSet:
    """Add up the lists of several sources."""
    allow: list[Rule] = []
    ask: list[Rule] = []
    deny: list[Rule] = []
    for ruleset in rulesets:
        allow.extend(ruleset.allow)
        ask.extend(ruleset.ask)
        deny.extend(ruleset.deny)
    return RuleSet(tuple(allow), tuple(ask), tuple(deny))


def as_ruleset(rules: RuleSet | Mapping[str, Sequence[str]]) -> RuleSet:
    """Accept a :class:`RuleSet` or a mapping of rule strings (bad rules are skipped)."""
    if isinstance(rules, RuleSet):
        return rules
    return parse_rules({k: list(v) for k, v in rules.items()}).ruleset


# --- pattern matching ------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def wildcard(pattern: str) -> re.Pattern[str]:
    """``*`` = any sequence (DOTALL), everything else literal; a final `` *`` also matches nothing."""
    if pattern.endswith(" *"):
        head = pattern[:-2]
        return re.compile(_star_regex(head) + r"(?: .*)?", re.DOTALL)
    return re.compile(_star_regex(pattern), re.DOTALL)


def _star_regex(pattern: str) -> str:
    return ".*".join(re.escape(piece) for piece in pattern.split("*"))


@functools.lru_cache(maxsize=4096)
def bash_pattern(pattern: str) -> re.Pattern[str]:
    """A Bash rule pattern, its quotes removed and spaces folded as bash would split it."""
    try:
        words = shlex.split(pattern, comments=False, posix=True)
        normal = " ".join(words)
    except ValueError:
        normal = " ".join(pattern.split())
    return wildcard(normal)
