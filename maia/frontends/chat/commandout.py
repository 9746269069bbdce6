"""Live command output: while a Bash or ``!`` command runs, a spinner, its elapsed time and its last lines.

The chat's bottom area shows these rows above the status line; ``run_shell`` feeds each block of output
through the function :meth:`CommandOutput.watch` yields. The rows are inert: a command's output is
untrusted text.
"""

from __future__ import annotations

import codecs
import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from maia.frontends.chat import render
from maia.frontends.terminal import style
from maia.frontends.terminal.inert import inert_line
from maia.i18n import _

PROGRESS_AFTER = 0.5  # a command shows its progress once it has run this long
PROGRESS_LINES = 4  # last lines of a running command's output shown


@dataclass(slots=True)
class _Watch:
    """A command running: its text, when it started, the end of its output."""

    command: str
    started: float
    tail: str = ""
    decoder: codecs.IncrementalDecoder = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace"))

    def feed(self, data: bytes) -> None:
        """Keep the last few kilobytes of output."""
        self.tail = (self.tail + self.decoder.decode(data))[-4096:]

    def last_lines(self, count: int) -> list[str]:
        """The last ``count`` non-empty lines (a progress bar's carriage returns: its last state)."""
        lines = [line.rsplit("\r", 1)[-1] for line in self.tail.split("\n")]
        return [line for line in lines if line.strip()][-count:]


class CommandOutput:
    """The commands running now, and the rows that show them."""

    def __init__(self, on_output: Callable[[], None], on_end: Callable[[], None]) -> None:
        self._on_output = on_output  # some output arrived: redraw soon
        self._on_end = on_end  # a command ended: redraw now
        self._watches: list[_Watch] = []

    @property
    def running(self) -> bool:
        """A command runs (the spinner turns)."""
        return bool(self._watches)

    @contextlib.contextmanager
    def watch(self, command: str) -> Iterator[Callable[[bytes], None]]:
        """Follow ``command`` while the block runs; yields the function that takes each block of its output."""
        watch = _Watch(command, time.monotonic())
        self._watches.append(watch)

        def feed(data: bytes) -> None:
            watch.feed(data)
            self._on_output()

        try:
            yield feed
        finally:
            self._watches.remove(watch)
            self._on_end()

    def rows(self, inner: int, tick: int) -> list[str]:
        """The rows above the status line, ``inner`` columns wide; ``tick`` turns the spinner."""
        p = style.palette()
        now = time.monotonic()
        rows: list[str] = []
        for watch in self._watches:
            elapsed = now - watch.started
            if elapsed < PROGRESS_AFTER:
                continue
            command = inert_line(watch.command.strip().split("\n")[0])
            spinner = render.DOTS10[tick % len(render.DOTS10)]
            seconds = _("{seconds} s").format(seconds=int(elapsed))
            rows.append(
                render.fit(
                    f"{p.yellow}{spinner}{p.reset} {p.bold}{command}{p.reset} {p.dim}({seconds}){p.reset}", inner
                )
            )
            for line in watch.last_lines(PROGRESS_LINES):
                rows.append(render.fit(f"  {p.dim}│ {inert_line(line)}{p.reset}", inner))
        return rows
