"""Permission rules (§9): ``Tool`` or ``Tool(pattern)`` in allow / ask / deny lists."""

from __future__ import annotations

import enum
import functools
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from maia.core.registry import OWN_TOOL_NAMES
from maia.i18n import _
from maia.permissions.match import Wildcard
from maia.permissions.match import wildcard as _compile_wildcard

_RULE = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
FAMILIES = ("deny", "ask", "allow")
INERT_KEY = "inertVariables"  # permissions.inertVariables: NAME=value prefixes an allow may cover
# tool names a rule can use besides custom tools (loaded later) and mcp__server__tool
KNOWN_TOOLS = OWN_TOOL_NAMES | {"Redirect", "Mcp"}  # rule names besides the tools themselves


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
    inert: frozenset[str] = frozenset()  # variables added to the built-in inert list

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
    """Parse ``{"allow": [...], "ask": [...], "deny": [...], "inertVariables": [...]}``; bad entries
    become warnings."""
    lists: dict[str, list[Rule]] = {name: [] for name in FAMILIES}
    warnings: list[str] = []
    inert: set[str] = set()
    for key, value in mapping.items():
        if key == INERT_KEY:
            inert.update(_inert_names(value, f"{where}.{key}", warnings))
            continue
        if key not in FAMILIES:
            warnings.append(
                _('{where}: unknown list "{key}" ignored (use allow, ask, deny or {inert}).').format(
                    where=where, key=key, inert=INERT_KEY
                )
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
                rule = parse_rule(entry)
            except RuleSyntaxError as error:
                warnings.append(
                    _("{where}.{key}[{index}]: {error}; ignored.").format(
                        where=where, key=key, index=index, error=error
                    )
                )
                continue
            lists[key].append(rule)
            suggestion = misspelled_tool(rule.tool)
            if suggestion is not None:
                warnings.append(
                    _(
                        '{where}.{key}[{index}]: "{rule}": no tool is named "{tool}"; did you mean "{known}"? '
                        "(the rule is kept, for a custom tool of that name)"
                    ).format(where=where, key=key, index=index, rule=rule.text, tool=rule.tool, known=suggestion)
                )
    ruleset = RuleSet(tuple(lists["allow"]), tuple(lists["ask"]), tuple(lists["deny"]), frozenset(inert))
    return ParsedRules(ruleset, warnings)


def _inert_names(value: object, where: str, warnings: list[str]) -> list[str]:
    from maia.permissions.programs import dangerous_variable, valid_variable_name

    if not isinstance(value, list):
        warnings.append(_('{where}: expected a list of variable names such as ["FOO"]; ignored.').format(where=where))
        return []
    names = []
    for index, entry in enumerate(value):
        if not isinstance(entry, str) or not valid_variable_name(entry):
            warnings.append(
                _("{where}[{index}]: {value!r} is not a variable name; ignored.").format(
                    where=where, index=index, value=entry
                )
            )
        elif dangerous_variable(entry):
            warnings.append(
                _(
                    "{where}[{index}]: {name} can change what a command runs (like PATH, LD_*, BASH_ENV): "
                    "it is never inert; ignored."
                ).format(where=where, index=index, name=entry)
            )
        else:
            names.append(entry)
    return names


def misspelled_tool(name: str) -> str | None:
    """The known tool a rule's tool name looks like a slip for (``bash``, ``Reed``), or None.

    Unknown names that look like nothing known are left alone: they may be custom tools.
    """
    if name in KNOWN_TOOLS or name.startswith("mcp__"):
        return None
    lowered = name.lower()
    for known in sorted(KNOWN_TOOLS):
        if lowered == known.lower():
            return known
    if len(name) < 4:
        return None
    for known in sorted(KNOWN_TOOLS):
        if abs(len(known) - len(name)) <= 1 and _distance(lowered, known.lower()) <= (1 if len(known) <= 5 else 2):
            return known
    return None


def _distance(a: str, b: str) -> int:
    """Levenshtein distance (short names only)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def merge(rulesets: Iterable[RuleSet]) -> RuleSet:
    """Add up the lists of several sources."""
    allow: list[Rule] = []
    ask: list[Rule] = []
    deny: list[Rule] = []
    inert: set[str] = set()
    for ruleset in rulesets:
        allow.extend(ruleset.allow)
        ask.extend(ruleset.ask)
        deny.extend(ruleset.deny)
        inert.update(ruleset.inert)
    return RuleSet(tuple(allow), tuple(ask), tuple(deny), frozenset(inert))


def as_ruleset(rules: RuleSet | Mapping[str, Sequence[str]]) -> RuleSet:
    """Accept a :class:`RuleSet` or a mapping of rule strings (bad rules are skipped)."""
    if isinstance(rules, RuleSet):
        return rules
    try:
        return _cached_ruleset(tuple((k, tuple(v)) for k, v in rules.items()))
    except TypeError:  # an unhashable entry: parse without the cache (it becomes a warning)
        return parse_rules({k: list(v) for k, v in rules.items()}).ruleset


@functools.lru_cache(maxsize=64)
def _cached_ruleset(items: tuple[tuple[str, tuple[str, ...]], ...]) -> RuleSet:
    return parse_rules({k: list(v) for k, v in items}).ruleset


# --- pattern matching ------------------------------------------------------------------------


def wildcard(pattern: str) -> Wildcard:
    """``*`` = any sequence, everything else literal; a final `` *`` also matches nothing (linear time)."""
    return _compile_wildcard(pattern)


@dataclass(frozen=True, slots=True)
class BashPattern:
    """A Bash rule pattern: its quotes removed and spaces folded as bash would split it.

    Claude Code's ``cmd:*`` is accepted as a synonym of ``cmd *`` (the literal ``cmd:…`` still
    matches too, so ``npm run test:*`` keeps covering ``npm run test:unit``).
    """

    forms: tuple[Wildcard, ...]
    words: tuple[str, ...]  # the pattern's words (for "does the rule name this option")

    def fullmatch(self, text: str) -> bool:
        """Whether a command text matches."""
        if len(self.forms) == 1:  # most patterns (no generator on this hot path)
            return self.forms[0].fullmatch(text)
        return any(form.fullmatch(text) for form in self.forms)

    @property
    def literal_prefix(self) -> str:
        """The text every match starts with."""
        return min((f.literal_prefix for f in self.forms), key=len)


@functools.lru_cache(maxsize=4096)
def bash_pattern(pattern: str) -> BashPattern:
    """Compile a Bash rule pattern."""
    try:
        words = shlex.split(pattern, comments=False, posix=True)
    except ValueError:
        words = pattern.split()
    normal = " ".join(words)
    forms = [_compile_wildcard(normal)]
    if normal.endswith(":*"):
        forms.append(_compile_wildcard(normal[:-2].rstrip() + " *"))
    return BashPattern(tuple(forms), tuple(words))
