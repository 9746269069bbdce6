"""The slash-command registry (§5.6): commands are registered by name, listed by ``/help``.

The registry is generic over the front end it serves (the chat passes itself to each command), so the
core commands, and those each capability adds (sub-agents, MCP, the sandbox…), live in their own
modules and only meet here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class SlashCommand(Generic[C]):
    """One command: ``/name args`` calls ``run(front_end, args)``."""

    name: str
    summary: str
    run: Callable[[C, str], Awaitable[None]]
    usage: str = ""  # e.g. "NAME" for /rename NAME
    aliases: tuple[str, ...] = ()


class SlashRegistry(Generic[C]):
    """Commands by name (case-insensitive), in registration order."""

    def __init__(self) -> None:
        self._commands: dict[str, SlashCommand[C]] = {}
        self._aliases: dict[str, str] = {}

    def add(self, command: SlashCommand[C]) -> None:
        """Register a command (a later registration of the same name replaces it)."""
        self._commands[command.name.lower()] = command
        for alias in command.aliases:
            self._aliases[alias.lower()] = command.name.lower()

    def get(self, name: str) -> SlashCommand[C] | None:
        """The command called ``name`` (or one of its aliases)."""
        key = name.lower()
        return self._commands.get(key) or self._commands.get(self._aliases.get(key, ""))

    def __iter__(self) -> Iterator[SlashCommand[C]]:
        return iter(self._commands.values())

    def names(self) -> list[str]:
        """Every command name, in registration order."""
        return [c.name for c in self._commands.values()]

    def matching(self, prefix: str) -> list[SlashCommand[C]]:
        """The commands whose name starts with ``prefix`` (for completion menus)."""
        lowered = prefix.lower()
        return [c for c in self._commands.values() if c.name.lower().startswith(lowered)]

    def help_rows(self) -> list[tuple[str, str]]:
        """``(/name USAGE, summary)`` rows for ``/help``."""
        return [(f"/{c.name}" + (f" {c.usage}" if c.usage else ""), c.summary) for c in self._commands.values()]
