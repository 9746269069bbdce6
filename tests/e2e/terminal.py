"""Driving ``maia chat`` in a real pseudo-terminal and reading the screen as a person sees it (pyte)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pexpect
import pyte


class Terminal:
    """A child process in a PTY, its output fed to a pyte screen with scrollback history."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str], columns: int = 100, rows: int = 30) -> None:
        self.screen = pyte.HistoryScreen(columns, rows, history=5000, ratio=0.5)
        self.stream = pyte.ByteStream(self.screen)
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "maia", *args],
            cwd=str(cwd),
            env=env,
            dimensions=(rows, columns),
            encoding=None,
            timeout=10,
        )
        self.raw = b""

    def pump(self, duration: float = 0.05) -> None:
        """Read what the child printed for a moment."""
        end = time.monotonic() + duration
        while time.monotonic() < end:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.02)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                return
            self.raw += data
            self.stream.feed(data)

    def text(self) -> str:
        """The visible screen."""
        return "\n".join(line.rstrip() for line in self.screen.display)

    def history(self) -> list[str]:
        """Lines scrolled off the top, oldest first."""
        return ["".join(char.data for _col, char in sorted(line.items())).rstrip() for line in self.screen.history.top]

    def everything(self) -> str:
        """Scrollback and screen."""
        return "\n".join([*self.history(), self.text()])

    def wait_for(self, needle: str, timeout: float = 15.0) -> str:
        """Pump until ``needle`` is on the screen (or in the scrollback)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.pump(0.05)
            if needle in self.everything():
                return self.everything()
        raise AssertionError(f"{needle!r} never appeared; screen:\n{self.text()}")

    def send(self, data: str) -> None:
        """Type."""
        self.child.send(data.encode())

    def close(self) -> None:
        """End the child."""
        if self.child.isalive():
            self.child.terminate(force=True)


def chat_env(home: Path, project: Path) -> dict[str, str]:
    """The environment of a chat under test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAIA_")}
    env.update({"MAIA_HOME": str(home), "MAIA_CWD": str(project), "TERM": "xterm-256color", "COLUMNS": "", "LINES": ""})
    env.pop("COLUMNS")
    env.pop("LINES")
    return env
