"""The only class that talks to the terminal: keys in, frames out, on the normal screen buffer, through blessed.

:class:`TerminalUI` is the chat's screen and keyboard and its :class:`~maia.core.contracts.AgentUI`. It is
the sum of layers, one concern and one module each, every layer built on the ones below it:

1. :mod:`~maia.frontends.chat.display` — the log (the scrollback) and the bottom area, drawn in frames;
   Markdown rendered off the event loop; the messages (INFO, WARN, FAIL…); it holds
   :mod:`~maia.frontends.chat.commandout`, the live output of running commands.
2. :mod:`~maia.frontends.chat.status` — the status line, the context bar, the busy state, the window
   title, desktop notifications, the clipboard, the spinner's timer.
3. :mod:`~maia.frontends.chat.agentview` — the AgentUI callbacks (``on_text``, ``on_tool_call``…): the
   answer as it streams, reasoning, tool calls, sub-agents' nested calls.
4. :mod:`~maia.frontends.chat.inputbox` — keys, the draft, history, pastes and completion (through the
   pure :mod:`~maia.frontends.chat.store`), ``read_input``, questions and lists.
5. :mod:`~maia.frontends.chat.termsession` — the terminal taken and given back: ``start``, ``stop``,
   Ctrl+Z, signals, resize.

All text given to it from outside (the model, tools, files, servers, session files, the user) is made inert
first (:func:`maia.frontends.terminal.inert.inert`); only :meth:`TerminalUI.print_lines` takes lines MAIA
rendered itself.
"""

from __future__ import annotations

from typing import TextIO

from maia.frontends.chat.inputbox import ANSWER_GUARD
from maia.frontends.chat.store import History
from maia.frontends.chat.termsession import TerminalSession

__all__ = ["ANSWER_GUARD", "TerminalUI"]


class TerminalUI(TerminalSession):
    """The chat's screen and keyboard; implements the AgentUI contract."""

    def __init__(
        self,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        history: History | None = None,
        theme: str = "auto",
    ) -> None:
        super().__init__(stdin=stdin, stdout=stdout, history=history, theme=theme)
