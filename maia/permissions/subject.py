"""What permission rules are matched against: each tool declares it (its *subject*).

A tool has a ``subject(tool_input)`` method returning one of the small values below; the engine
judges the value, never the tool's name. Adding a tool therefore touches one file: the tool's.
Tools without the method (someone else's) fall back to :func:`subject_of`'s defaults: an
``mcp__server__tool`` name gives an :class:`McpSubject`, ``Agent`` a :class:`NameSubject` of its
``agent`` input, anything else a :class:`ValuesSubject` of the input's text and number values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

Access: TypeAlias = Literal["read", "write", "search"]


@dataclass(frozen=True, slots=True)
class PathSubject:
    """A file or folder the call reads, writes or searches, as given (normalised by the engine).

    Rules of the family apply: ``Read`` for read, ``Write`` and ``Edit`` (one family) for write,
    the tool's own name for search (``Glob``, ``Grep``), where ``Read`` deny and ask rules apply too.
    """

    path: str | None
    access: Access


@dataclass(frozen=True, slots=True)
class CommandSubject:
    """A shell command (Bash rules, and Redirect / Write / Edit rules for the files it writes)."""

    command: str | None


@dataclass(frozen=True, slots=True)
class UrlSubject:
    """An address the tool fetches (``domain:host`` rules, judged as the HTTP client connects)."""

    url: str | None


@dataclass(frozen=True, slots=True)
class NameSubject:
    """A name rules match with ``*`` (a skill, a sub-agent)."""

    name: str | None


@dataclass(frozen=True, slots=True)
class ValuesSubject:
    """Values any of which a rule's pattern may match (custom tools: declared parameters, defaults in)."""

    values: tuple[str, ...]
    refused: str | None = None  # why the call cannot be judged (undeclared parameters…): deny


@dataclass(frozen=True, slots=True)
class McpSubject:
    """An MCP tool: ``Mcp(server)`` / ``Mcp(server,tool)`` rules, and rules named after the tool."""

    server: str
    tool: str
    values: tuple[str, ...] = ()


Subject: TypeAlias = PathSubject | CommandSubject | UrlSubject | NameSubject | ValuesSubject | McpSubject


@runtime_checkable
class HasSubject(Protocol):
    """A tool that declares what rules match against."""

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """The subject of one call."""
        ...


def text_values(tool_input: Mapping[str, Any]) -> tuple[str, ...]:
    """The input's text and number values, as text."""
    values = []
    for value in tool_input.values():
        if isinstance(value, str):
            values.append(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            values.append(format(value, "g") if isinstance(value, float) else str(value))
    return tuple(values)


def mcp_name(tool_name: str) -> tuple[str, str] | None:
    """``mcp__server__tool`` → (server, tool); None for other names."""
    pieces = tool_name.split("__")
    if len(pieces) < 3 or pieces[0] != "mcp":
        return None
    return pieces[1], "__".join(pieces[2:])


def subject_of(tool_name: str, tool_input: Mapping[str, Any], tool: object | None = None) -> Subject:
    """The subject of a call: the tool's own declaration, else the defaults described above."""
    if tool is None:
        from maia.core.registry import builtin_tool

        tool = builtin_tool(tool_name)
    if isinstance(tool, HasSubject):
        return tool.subject(tool_input)
    return default_subject(tool_name, tool_input)


def default_subject(tool_name: str, tool_input: Mapping[str, Any]) -> Subject:
    """The subject of a tool that declares none: by its name for MCP tools and ``Agent``, else values."""
    mcp = mcp_name(tool_name)
    if mcp is not None:
        return McpSubject(mcp[0], mcp[1], text_values(tool_input))
    if tool_name == "Agent":
        name = tool_input.get("agent")
        return NameSubject(name if isinstance(name, str) else None)
    return ValuesSubject(text_values(tool_input))
