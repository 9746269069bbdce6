"""Path globs shared by permission rules and the Glob tool: ``**`` any depth, ``*``/``?`` in one
segment, ``[…]`` classes, ``{a,b}`` alternatives."""

from __future__ import annotations

import functools
import re


@functools.lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a path glob to a regex to be used with ``fullmatch``."""
    return re.compile(_translate(pattern), re.DOTALL)


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    depth = 0  # inside {…}
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
        elif ch == "{" and "}" in pattern[i:]:
            out.append("(?:")
            depth += 1
            i += 1
        elif ch == "," and depth:
            out.append("|")
            i += 1
        elif ch == "}" and depth:
            out.append(")")
            depth -= 1
            i += 1
        elif ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(ch))
            i += 1
    out.extend(")" * depth)
    return "".join(out)


def has_magic(text: str) -> bool:
    """Whether a path segment contains glob syntax."""
    return any(c in text for c in "*?[{")
