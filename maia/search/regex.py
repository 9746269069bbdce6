"""The Grep tool's patterns are JavaScript regular expressions (§8): translated here for each engine."""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

from maia.core.errors import MaiaError
from maia.i18n import _

# re's own parser (public as sre_parse before 3.11, deprecated since): to find required literals
sre_parse: Any = importlib.import_module("re._parser")
sre_constants: Any = importlib.import_module("re._constants")


class PatternError(MaiaError):
    """A search pattern that no engine can use."""


_JS_NAMED_GROUP = re.compile(r"\(\?<(?![=!])([A-Za-z_][A-Za-z0-9_]*)>")
_JS_NAMED_REF = re.compile(r"\\k<([A-Za-z_][A-Za-z0-9_]*)>")
_NEEDS_PCRE = re.compile(r"\(\?<?[=!]|\\[1-9]|\\k<")


def to_python(pattern: str) -> str:
    """JavaScript syntax → Python ``re``: named groups and references, ``\\d`` kept, ``\\/`` kept."""
    text = _JS_NAMED_GROUP.sub(r"(?P<\1>", pattern)
    text = _JS_NAMED_REF.sub(r"(?P=\1)", text)
    return text.replace("\\u{", "\\x{") if "\\u{" in text else text


def needs_pcre(pattern: str) -> bool:
    """Look-arounds and back-references: ripgrep's default engine lacks them, PCRE2 has them."""
    return bool(_NEEDS_PCRE.search(pattern))


@functools.lru_cache(maxsize=256)
def compile_python(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """Compile a JavaScript pattern for Python; a bad pattern is a clear error naming the problem."""
    try:
        return re.compile(to_python(pattern), re.MULTILINE | (re.IGNORECASE if ignore_case else 0))
    except re.error as error:
        raise PatternError(
            _("Invalid regular expression {pattern!r}: {error} (position {pos}).").format(
                pattern=pattern, error=error.msg, pos=error.pos
            )
        ) from None


def required_literal(pattern: str) -> str | None:
    """The longest text every match must contain, if the pattern has one (a cheap pre-check)."""
    try:
        parsed = sre_parse.parse(to_python(pattern))
    except (re.error, sre_constants.error, OverflowError, RecursionError):
        return None
    if parsed.state.flags & (sre_constants.SRE_FLAG_IGNORECASE | sre_constants.SRE_FLAG_VERBOSE):
        return None
    best = ""
    run: list[str] = []
    for op, value in list(parsed.data):
        if op is sre_constants.LITERAL:
            run.append(chr(value))
            continue
        if "".join(run) and len(run) > len(best):
            best = "".join(run)
        run = []
    if len(run) > len(best):
        best = "".join(run)
    return best or None
