"""Fixtures of the terminal tests: ``maia chat`` started in a pseudo-terminal read through pyte."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.terminal import Terminal, chat_env


@pytest.fixture
def start(home: Path, project: Path) -> Iterator[Callable[..., Terminal]]:
    """Start ``maia chat -m scripted-openai`` (columns, rows, extra arguments; options of :class:`Terminal`)."""
    terminals: list[Terminal] = []

    def launch(
        columns: int = 100, rows: int = 30, *args: str, env: dict[str, str] | None = None, **options: Any
    ) -> Terminal:
        environment = {**chat_env(home, project), **(env or {})}
        terminal = Terminal(["chat", "-m", "scripted-openai", *args], project, environment, columns, rows, **options)
        terminals.append(terminal)
        return terminal

    yield launch
    for terminal in terminals:
        terminal.close()


def ready(term: Terminal) -> str:
    """Wait until the chat has finished starting (the context bar knows the model's maximum)."""
    return term.wait_for("/ 128k")
