"""Answers shown as Markdown (§15.3), with rich; ``MAIA_NO_MARKDOWN=1`` or a failure gives raw text.

The text given here is already inert (:mod:`maia.frontends.terminal.inert`), so the only escape sequences in the
result are rich's own. rich measures characters with its own tables; a line it makes that the
terminal would draw wider than ``width`` is wrapped again with blessed, so nothing overflows.
Rendering is CPU work (about 0.2 ms a line): the chat runs it off the event loop.
"""

from __future__ import annotations

import io
import os
import re

from maia.frontends.terminal.metrics import length, wrap
from maia.frontends.terminal.style import LIGHT_CODE, palette


def markdown_enabled() -> bool:
    """Off when ``MAIA_NO_MARKDOWN`` is set to anything but 0/empty."""
    return os.environ.get("MAIA_NO_MARKDOWN", "").strip() in ("", "0")


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(.*?)^ {0,3}\1[`~]*[ \t]*$", re.MULTILINE | re.DOTALL)


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of a Markdown text, in order: their content without the fences (``/copy N``)."""
    return [match.group(2).rstrip("\n") for match in _FENCE.finditer(text)]


RICH_MAX_LINES = 300  # longer answers use the fast renderer: rich takes about 0.2 ms a line
_COLOR_SYSTEMS = {1 << 24: "truecolor", 256: "256", 16: "standard", 8: "standard"}


_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _blank(line: str) -> bool:
    """Nothing visible: no character, and no background colour (a code block's empty line keeps its box)."""
    if _SGR.sub("", line).strip():
        return False
    for params in _SGR.findall(line):
        codes = params.split(";")
        if any(c.isdigit() and (40 <= int(c) <= 49 or 100 <= int(c) <= 107) for c in codes if c):
            return False
    return True


def _airless(rendered: str) -> str:
    """One blank line between blocks: rich adds its own around code blocks and tables (issue 28)."""
    out: list[str] = []
    for line in rendered.split("\n"):
        if _blank(line):
            if out and out[-1] == "":
                continue
            line = ""
        out.append(line)
    while out and out[0] == "":
        out.pop(0)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out)


def _rich(text: str, width: int) -> str:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.markdown import CodeBlock, Markdown
    from rich.syntax import Syntax
    from rich.theme import Theme

    class Code(CodeBlock):
        """A fenced block without rich's blank padding rows above and below (one column each side)."""

        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            yield Syntax(str(self.text).rstrip(), self.lexer_name, theme=self.theme, word_wrap=True, padding=(0, 1))

    class Answer(Markdown):
        elements = {**Markdown.elements, "fence": Code, "code_block": Code}

    p = palette()
    styles = {}
    if p.theme == "light":  # rich's inline code is cyan on black: unreadable on a light background
        red, green, blue = LIGHT_CODE
        styles["markdown.code"] = f"bold #{red:02x}{green:02x}{blue:02x}"
    buffer = io.StringIO()
    console = Console(
        theme=Theme(styles),
        file=buffer,
        width=max(20, width),
        force_terminal=p.styled,
        color_system=_COLOR_SYSTEMS.get(p.colors) if p.colors else None,  # type: ignore[arg-type]
        no_color=not p.colors,
        legacy_windows=False,
        soft_wrap=False,
        emoji=False,
        highlight=False,
    )
    theme = "friendly" if p.theme == "light" else "monokai"
    console.print(Answer(text, code_theme=theme, hyperlinks=False))
    return _airless(buffer.getvalue())


def render_markdown(text: str, width: int) -> str:
    """The answer as styled text for ``width`` columns; the raw text when rendering is off or fails."""
    if not markdown_enabled():
        return "\n".join(wrap(text, width))
    if text.count("\n") > RICH_MAX_LINES:
        from maia.frontends.chat.fastmd import render_fast

        rendered = render_fast(text)
    else:
        try:
            rendered = _rich(text, width)
        except Exception:  # any rendering failure falls back to the raw text (§15.3)
            return "\n".join(wrap(text, width))
    lines: list[str] = []
    for line in rendered.split("\n"):
        line = line.rstrip()
        lines.extend(wrap(line, width) if length(line) > width else [line])
    return "\n".join(lines)
