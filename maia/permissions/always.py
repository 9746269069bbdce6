"""How wide a rule "always" may offer for a command, from the program tables' ``always`` field.

A prefix rule (``Bash(git log *)``) is offered only where every command it covers does the same kind
of thing; the approval (``maia.agent.approval``) builds the rule from :func:`prefix_length` and checks
it with the engine before offering it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from maia.permissions import tables
from maia.permissions.tables import Level


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TARGETS = Level(targets=True)  # make, just, mvn… and programs MAIA does not know
_READ_VERBS = _names(
    "list ls view show status describe get logs log diff inspect history top version help info search ps images "
    "explain checks df events tree outdated why stats port whoami can-i"
)
_READ_VERB_PREFIXES = ("list-", "describe-", "get-", "show-")
# a subcommand, or one of its pieces (apps:destroy, force-push), that changes or removes things
_DESTRUCTIVE = _names(
    "push reset clean checkout restore switch config delete del rm remove rmi uninstall publish unpublish apply "
    "destroy drop prune purge rebase merge pull deploy release revert kill down terminate wipe erase truncate "
    "force nuke install add upgrade update set unset edit patch scale create replace import move mv cp copy "
    "sync upload send reboot shutdown stop restart"
)
# subcommands that run what they are given: uv run X, npm exec X, docker run IMAGE CMD, kubectl exec
_RUNNER_WORDS = _names("run exec x dlx shell sh bash eval execute spawn attach debug console repl ssh")
# credentials: reading one is not reading every other
_SENSITIVE = _names(
    "secret secrets secretsmanager password passwd token tokens credential credentials login logout decrypt"
)
_RISKY_PIECES = _DESTRUCTIVE | _RUNNER_WORDS | _SENSITIVE
_INTERPRETER = re.compile(r"(python|pypy|perl|ruby|node|nodejs|php|lua|luajit|julia|Rscript|osascript)[0-9.]*")
_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_:][A-Za-z0-9]+)*")  # what a subcommand looks like
_MAX_DEPTH = 5  # gcloud beta compute instances list


def kind(name: str) -> tables.Always | None:
    """The ``always`` of the table of the program named ``name`` (None: project targets, the default)."""
    table = tables.BY_NAME.get(name)
    if table is None:
        return None
    always = table.always
    if isinstance(always, Mapping):
        return always.get(name)
    return always


def _risky(top: Level, word: str) -> bool:
    """A subcommand that destroys, runs what it is given, or names a credential."""
    if word in top.nouns:
        return False
    if word in top.risky:
        return True
    pieces = {word.lower(), *re.split(r"[-_:]", word.lower())}
    return bool(pieces & _RISKY_PIECES)


def _read_verb(word: str) -> bool:
    return word in _READ_VERBS or word.startswith(_READ_VERB_PREFIXES)


def subcommand_word(word: str) -> bool:
    """What a subcommand or a script name looks like."""
    return bool(_SUBCOMMAND.fullmatch(word))


def prefix_length(words: Sequence[str]) -> int | None:
    """How many leading words a prefix rule keeps (``git log -3`` → 2: ``Bash(git log *)``); None when
    only the exact command may be allowed. ``words[0]`` is the program's bare name."""
    name = words[0]
    always = kind(name)
    if always == "word":
        return 1
    if (
        always in ("exact", "reader", "never")
        or name in tables.SHELLS
        or name in tables.OTHER_SHELLS
        or _INTERPRETER.fullmatch(name)
    ):
        return None
    top = always if isinstance(always, Level) else _TARGETS
    level = top
    for index in range(1, min(len(words), _MAX_DEPTH)):
        word = words[index]
        if not _SUBCOMMAND.fullmatch(word):
            return None  # an option left in front (git -c …, cargo +nightly, npm --prefix), a path, a value
        if word in level.scripts:
            script = words[index + 1] if index + 1 < len(words) else ""
            return index + 2 if _SUBCOMMAND.fullmatch(script) and not _risky(top, script) else None
        if word in level.safe:
            return index + 1
        if _risky(top, word):
            return None
        if level.targets or (level.read_verbs and _read_verb(word)):
            return index + 1
        nested = level.groups.get(word, level.any_group)
        if nested is None:
            return None
        level = nested
    return None  # the program alone, or a group without its verb: `git`, `gh pr`, `make`


def rule_for(words: Sequence[str]) -> str | None:
    """The rule's words "always" offers for ``words`` by the tables alone (no file looked at): the
    prefix rule, or the exact command; None when the table says none (a reader is judged as reading
    no file of the project)."""
    always = kind(words[0])
    if always in ("never", "reader"):
        return None
    depth = prefix_length(words)
    return " ".join(words) if depth is None else " ".join([*words[:depth], "*"])


def check_examples() -> list[str]:
    """Every table's ``always_examples``, checked: the failures, in words."""
    return [failure for table in tables.TABLES for failure in check_table(table)]


def check_table(table: tables.Table) -> list[str]:
    """One table's ``always_examples``: the failures, in words."""
    import shlex

    failures: list[str] = []
    for command, expected in table.always_examples:
        words = shlex.split(command)
        if words[0] not in table.names:
            failures.append(f"{table.names[0]}: always example {command!r} runs another program")
            continue
        got = rule_for(words)
        if got != expected:
            failures.append(f"{table.names[0]}: always offers {got!r} for {command!r}, not {expected!r}")
    return failures
