"""What the workflow commands share: the registry, colours, reading a workflow by reference."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

import click

from .setup import environment, warn

if TYPE_CHECKING:
    from maia.workflows.registry import Workflow, WorkflowRegistry

COLOURS: dict[str, dict[str, Any]] = {
    "pending": {"dim": True},
    "running": {"fg": "cyan"},
    "waiting": {"fg": "yellow", "bold": True},
    "done": {"fg": "green"},
    "error": {"fg": "red"},
    "title": {"bold": True},
    "request": {"fg": "yellow", "bold": True},
    "tool": {"dim": True},
    "text": {},
    "agent": {"fg": "cyan"},
    "wait": {"fg": "yellow"},
    "warn": {"fg": "yellow"},
    "info": {},
}


def colour_wanted(stream: IO[str] | None = None) -> bool:
    """Colours on a terminal, unless NO_COLOR is set (to anything but an empty string)."""
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


def styler(stream: IO[str] | None = None) -> Callable[[str, str], str]:
    """``style(role, text)``: coloured for a terminal, as is otherwise."""
    if not colour_wanted(stream):
        return lambda _role, text: text

    def style(role: str, text: str) -> str:
        return click.style(text, **COLOURS.get(role, {}))

    return style


def registry(queue: str | None = None) -> WorkflowRegistry:
    """The one place the backend is chosen: the queue's registry on Redis when a queue is given (``--queue``,
    ``MAIA_QUEUE`` or ``Workflows.queue`` in settings.json), else ``~/.maia/workflows`` of this MAIA home."""
    from maia.workflows.registry import WorkflowRegistry

    home = environment().home
    url = queue_url(queue)
    if url is not None:
        from maia.workflows.queue import connect

        return connect(url, home).registry
    return WorkflowRegistry(home)


def queue_url(queue: str | None = None) -> str | None:
    """The queue's URL, None when no queue is configured."""
    from maia.workflows.queue import queue_url as resolve

    return resolve(queue, environment().home)


def find(ref: str) -> Workflow:
    """The workflow REF names (exact id, last, a unique part of an id, an agent's name → its newest)."""
    return registry().find(ref)


def warn_all(messages: list[str]) -> None:
    """Each problem on stderr."""
    for message in messages:
        warn(message)
