"""Fixtures of the terminal tests: ``maia chat`` started in a pseudo-terminal read through pyte."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.terminal import Terminal, chat_env

E2E_TIMEOUT = 120  # seconds a terminal test may take at most (they take 3 to 15 s on a loaded 2-core machine)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test of this folder fails with its traceback after ``E2E_TIMEOUT`` s (pytest-timeout), never hangs."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(E2E_TIMEOUT))


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


def idle(term: Terminal) -> str:
    """Wait until the turn has ended and the box is the prompt again: its last words show a moment before
    (until then Ctrl+D does nothing and Ctrl+C interrupts the turn)."""
    return term.wait_until(lambda: "Your request" in term.text(), "the prompt never came back")


def ready(term: Terminal) -> str:
    """Wait until the chat has finished starting: the context bar knows the model's maximum and counts
    exactly (no "~": the tokenizer, built once the chat is up, is ready)."""
    return term.wait_until(
        lambda: any("/ 128k" in line and "~" not in line for line in term.screen.display), "never ready"
    )
