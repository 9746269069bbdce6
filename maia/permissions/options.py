"""Reading a program's options as the program itself does: clusters (``-nu root``), attached values
(``-S'…'``, ``-oL``), ``--name=value``, ``--`` ending the options."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """What a program's options look like.

    ``short_value``: letters whose value is the rest of the word or the next word (``-u root``,
    ``-uroot``); ``short_optional``: letters whose value, if any, is attached (``-i.bak``);
    ``short_flags``: the other known letters (None: any letter is a flag); ``long_value`` /
    ``long_flags``: the same for ``--name`` (None: any long option is a flag unless written
    ``--name=value``); ``stop``: letters or long names after which the rest is not options
    (``python -c``, ``-m``).
    """

    short_value: str = ""
    short_optional: str = ""
    short_flags: str | None = None
    long_value: frozenset[str] = frozenset()
    long_flags: frozenset[str] | None = None
    stop: frozenset[str] = frozenset()
    single_dash_long: frozenset[str] = frozenset()  # -chdir=x, -name value (find-like words)
    numeric_flags: bool = False  # -10 is an option (nice, head)


@dataclass(slots=True)
class Scan:
    """A program's options as read, and where its operands start."""

    options: list[tuple[str, str | None]] = field(default_factory=list)  # ("-u", "root"), ("--debug", None)
    rest: list[str] = field(default_factory=list)  # the operands (first one included)
    certain: bool = True  # False when an unknown option may have taken the next word
    ended_by: str | None = None  # the option after which parsing stopped (``-c`` of python)


def scan_options(args: Sequence[str], spec: OptionSpec, *, stop_at_operand: bool = True) -> Scan:
    """Read leading options of ``args`` with ``spec``; stop at the first operand (or ``--``)."""
    result = Scan()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in spec.single_dash_long or arg.split("=", 1)[0] in spec.single_dash_long:
            name, eq, value = arg.partition("=")
            if eq:
                result.options.append((name, value))
                i += 1
            else:
                result.options.append((name, args[i + 1] if i + 1 < len(args) else None))
                i += 2
            continue
        if arg.startswith("--") and len(arg) > 2:
            name, eq, value = arg.partition("=")
            if eq:
                result.options.append((name, value))
                i += 1
            elif name in spec.long_value:
                result.options.append((name, args[i + 1] if i + 1 < len(args) else None))
                i += 2
            else:
                if spec.long_flags is not None and name not in spec.long_flags:
                    result.certain = False
                result.options.append((name, None))
                i += 1
            if name in spec.stop:
                result.ended_by = name
                break
            continue
        if arg.startswith("-") and len(arg) > 1:
            if spec.numeric_flags and arg[1:].isdigit():
                result.options.append((arg, None))
                i += 1
                continue
            i += 1
            j = 1
            while j < len(arg):
                letter = arg[j]
                name = "-" + letter
                if letter in spec.short_value:
                    if j + 1 < len(arg):
                        result.options.append((name, arg[j + 1 :]))
                    else:
                        result.options.append((name, args[i] if i < len(args) else None))
                        i += 1
                    break
                if letter in spec.short_optional:
                    result.options.append((name, arg[j + 1 :] or None))
                    break
                if spec.short_flags is not None and letter not in spec.short_flags:
                    result.certain = False
                result.options.append((name, None))
                j += 1
            if result.options and result.options[-1][0] in spec.stop:
                result.ended_by = result.options[-1][0]
                break
            continue
        if stop_at_operand:
            break
        result.rest.append(arg)
        i += 1
    result.rest.extend(args[i:])
    return result


def option_names(scan: Scan) -> set[str]:
    """The option names read (``-u``, ``--signal``…)."""
    return {name for name, _value in scan.options}


def operand_suffixes(args: Sequence[str], limit: int = 16) -> list[list[str]]:
    """Every tail of ``args`` that starts with a word that is not an option: what a program with
    options we cannot read might run (deny rules look at each)."""
    found: list[list[str]] = []
    for k, arg in enumerate(args):
        if arg and not arg.startswith("-"):
            found.append(list(args[k:]))
            if len(found) >= limit:
                break
    return found
