"""The one reader of YAML front matter (the ``---`` header of SKILL.md and AGENT.md files).

A file starts with a line ``---``, key: value lines, and a line ``---``; the rest is the body. An
empty header (``---`` then ``---``) is an empty mapping, for every kind of file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from maia.i18n import _


class FrontMatterError(ValueError):
    """A header that cannot be read; the message says what is wrong and how to fix it."""


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """A file's header (a mapping, keys as written), its body, and how many lines come before the body."""

    header: dict[Any, Any]
    body: str
    body_line: int


def read_front_matter(text: str, keys: str) -> FrontMatter:
    """Split and read a file's YAML header; ``keys`` names what it holds, for the messages
    (``"name:, description: …"``). Raises :class:`FrontMatterError`."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError(
            _("no YAML header: the file must start with a line ---, the header ({keys}), and ---").format(keys=keys)
        )
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            header = _load("".join(lines[1:index]), keys)
            return FrontMatter(header, "".join(lines[index + 1 :]), index + 1)
    raise FrontMatterError(_("the YAML header is never closed: add a line --- after it"))


# A header of plain ``key: text`` lines only, where YAML could only read each text as that string: it starts
# with an ASCII letter (no indicator, number or date), holds no ``:``, ``#``, bracket, brace or tab, and is
# not a word YAML 1.1 reads as a boolean or null. Anything else is yaml's to read.
_PLAIN_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*): ([A-Za-z][A-Za-z0-9 _.,;!?()/'\"+=*&%$@-]*)")
_YAML_WORDS = frozenset({"yes", "no", "on", "off", "true", "false", "null", "y", "n"})


def _plain(header: str) -> dict[Any, Any] | None:
    """The mapping of a header of plain lines (what ``yaml.safe_load`` gives), None when in any doubt."""
    data: dict[Any, Any] = {}
    for line in header.splitlines():
        found = _PLAIN_LINE.fullmatch(line)
        if found is None:
            return None
        key, value = found.groups()
        if value != value.rstrip() or value.lower() in _YAML_WORDS or key.lower() in _YAML_WORDS or key in data:
            return None
        data[key] = value
    return data


def _load(header: str, keys: str) -> dict[Any, Any]:
    plain = _plain(header) if header.strip() else None
    if plain is not None:
        return plain  # an AGENT.md or SKILL.md of plain lines costs no yaml import (a workflow's start-up)
    import yaml  # only when a file with a header is read: not on the start-up path

    try:
        data = yaml.safe_load(header) if header.strip() else {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = str(getattr(error, "problem", None) or error)
        fix = _("check the indentation; put a value in quotes when it contains ': ' or ' #'")
        if mark is not None:
            raise FrontMatterError(
                _("invalid YAML header at line {line}: {problem}; fix: {fix}").format(
                    line=mark.line + 2, problem=problem, fix=fix
                )
            ) from None
        raise FrontMatterError(
            _("invalid YAML header: {problem}; fix: {fix}").format(problem=problem, fix=fix)
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError(_("the header must be key: value lines ({keys})").format(keys=keys))
    return data
