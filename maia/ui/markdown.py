"""Answers shown as Markdown once complete (§15.3), with rich; ``MAIA_NO_MARKDOWN=1`` or a failure gives raw text."""

from __future__ import annotations

import io
import os


def markdown_enabled() -> bool:
    """Off when ``MAIA_NO_MARKDOWN`` is set to anything but 0/empty."""
    return os.environ.get("MAIA_NO_MARKDOWN", "").strip() in ("", "0")


RICH_MAX_LINES = 300  # longer answers use the fast renderer: rich takes about 0.2 ms a line


def render_markdown(text: str, width: int) -> str:
    """The answer as ANSI text for ``width`` columns; the raw text when rendering is off or fails."""
    if not markdown_enabled():
        return text
    if text.count("\n") > RICH_MAX_LINES:
        from maia.ui.fastmd import render_fast

        return render_fast(text)
    try:
        from rich.console import Console
        from rich.markdown import Markdown

        buffer = io.StringIO()
        console = Console(
            file=buffer,
            width=max(20, width),
            force_terminal=True,
            color_system="truecolor",
            legacy_windows=False,
            soft_wrap=False,
            emoji=False,
            highlight=False,
        )
        console.print(Markdown(text, code_theme="monokai", hyperlinks=False))
        return buffer.getvalue().rstrip("\n")
    except Exception:  # any rendering failure falls back to the raw text (§15.3)
        return text
