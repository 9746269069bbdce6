"""The pure renderers' exact output at several widths, compared with snapshots (syrupy).

The PTY tests check the layout a person sees; these pin every row the renderers give for a width, so a
change to the banner, the bar, the bottom area, a log message or the live answer shows up as a diff of
``__snapshots__/test_snapshots.ambr``. After a change made on purpose, look at the diff and accept it
with ``.venv/bin/python -m pytest tests/ui/test_snapshots.py --snapshot-update``.

Rows are shown as a person sees them (escape sequences taken out) and end with ``|`` so that trailing
spaces show; where colour carries meaning (the bar, badges, diffs) the styled text is pinned too, its
escape character shown as ``␛``. The palette is the default one (true colour, dark) and the terminal a
headless xterm, as in the other tests of the pure UI.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from syrupy.assertion import SnapshotAssertion
from wcwidth import strip_sequences

from maia.frontends.chat.banner import banner_lines
from maia.frontends.chat.complete import Item, Menu
from maia.frontends.chat.live import Block, LiveAnswer, Output
from maia.frontends.chat.render import (
    approval_lines,
    badge,
    bar_left,
    bar_line,
    frame,
    result_lines,
    tool_call_lines,
    user_lines,
)
from maia.frontends.chat.store import LineInput, Question, Selection, UIStore
from maia.frontends.terminal.metrics import headless_terminal, use_terminal
from maia.frontends.terminal.style import reset_palette

WIDTHS = (40, 80, 120)


@pytest.fixture(autouse=True)
def default_palette() -> Iterator[None]:
    """The default palette (true colour, dark) and a headless xterm, whatever the developer's terminal."""
    reset_palette()
    use_terminal(headless_terminal())
    yield
    reset_palette()


def seen(lines: list[str]) -> str:
    """The rows as a person sees them, each ended by ``|`` (trailing spaces visible)."""
    return "\n".join(strip_sequences(line) + "|" for line in lines)


def styled(lines: list[str]) -> str:
    """The rows with their escape sequences, ESC shown as ``␛``."""
    return "\n".join(line.replace("\x1b", "␛") + "|" for line in lines)


# --- the banner ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", (20, *WIDTHS))
def test_banner(width: int, snapshot: SnapshotAssertion) -> None:
    assert seen(banner_lines(width)) == snapshot


def test_banner_on_a_short_screen(snapshot: SnapshotAssertion) -> None:
    assert seen(banner_lines(100, 12)) == snapshot


# --- the context bar -----------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_bar(width: int, snapshot: SnapshotAssertion) -> None:
    bars = [
        bar_line(0, None, width),
        bar_line(1_500, 128_000, width, estimated=True),
        bar_line(96_000, 128_000, width, bar_left("edits", "")),
        bar_line(190_000, 200_000, width, bar_left("plan", "MCP down: docs")),
    ]
    assert seen(bars) == snapshot(name="seen")
    assert styled(bars) == snapshot(name="styled")


# --- log lines -----------------------------------------------------------------------------------------

LONG = "The proxy answered after three attempts; the session is saved and the next request goes on as usual."
DIFF = "--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n-old = 1\n+new = 2\n context line that is long enough to wrap at forty"


@pytest.mark.parametrize("width", WIDTHS)
def test_log_lines(width: int, snapshot: SnapshotAssertion) -> None:
    lines = [
        *badge("info", LONG, width),
        *badge("warn", "short", width),
        *badge("fail", "first line\nsecond line", width),
        *user_lines("explain " + LONG, width),
        *tool_call_lines("Bash", "for f in *.py; do ruff check $f; done && pytest -q tests/ui", width),
        *result_lines("  indented\n" + "\n".join(f"line {n}" for n in range(12)), False, width),
        *result_lines("", True, width),
    ]
    assert seen(lines) == snapshot(name="seen")
    assert styled(badge("info", "x", width) + approval_lines(DIFF, "diff", width)) == snapshot(name="styled")


# --- the bottom area -----------------------------------------------------------------------------------


def stores() -> dict[str, UIStore]:
    """The bottom area's states, each as the chat would have it."""
    typed = UIStore(input=LineInput(LONG + " " + LONG, 40), context_tokens=1500, context_max=128_000)
    busy = UIStore(
        mode="busy",
        status="Thinking",
        queued=["run the tests", "then fix what fails\nwith care"],
        live_rows=["Streaming the first line", "and the second"],
        context_tokens=64_000,
        context_max=128_000,
    )
    question = Question(
        "Allow Bash: rm -rf build?",
        stop_allowed=True,
        detail=approval_lines("rm -rf build\n" + "\n".join(f"# step {n}" for n in range(30)), None, 60),
        reason="No rule allows Bash(rm *).",
    )
    asking = UIStore(mode="ask", question=question, context_tokens=2000, context_max=128_000)
    selecting = UIStore(
        mode="select",
        selection=Selection("Choose the model", [f"model-{n}" for n in range(20)], index=3),
        context_tokens=2000,
        context_max=128_000,
    )
    items = [
        Item("/model [NAME]", "/model", "choose the model"),
        Item("/mode [MODE]", "/mode", "how calls are approved"),
    ]
    menu = UIStore(input=LineInput("/mo", 3), menu=Menu("slash", 0, 3, items), context_tokens=2000, context_max=None)
    return {
        "idle": UIStore(context_tokens=1500, context_max=128_000),
        "typed": typed,
        "busy": busy,
        "asking": asking,
        "selecting": selecting,
        "menu": menu,
    }


@pytest.mark.parametrize("state", ["idle", "typed", "busy", "asking", "selecting", "menu"])
@pytest.mark.parametrize("width", WIDTHS)
def test_bottom_area(state: str, width: int, snapshot: SnapshotAssertion) -> None:
    shown = frame(stores()[state], width, 24, 2)
    assert seen(shown.lines) + f"\ncursor {shown.cursor}" == snapshot


# --- the live answer -----------------------------------------------------------------------------------

ANSWER = (
    "# Plan\n\nFirst we read the **parser** and its tests; then we change `parse()` so that an empty "
    "header is an error.\n\n```python\ndef parse(text):\n    return text.split()\n```\n\n- one\n- two "
    "items that are long enough to wrap on a narrow screen\n\nDone."
)


@pytest.mark.parametrize("width", WIDTHS)
def test_live_answer(width: int, snapshot: SnapshotAssertion) -> None:
    """What streaming ``ANSWER`` in 7-character pieces gives: blocks for the log (their source and what the
    live area showed of them), plain lines, and the live rows after each piece that changed them."""
    live = LiveAnswer(width - 1, 6)
    events: list[str] = []
    rows: list[str] = []

    def record(outputs: list[Output]) -> None:
        for output in outputs:
            if isinstance(output, Block):
                events.append(f"block {output.source!r}\n  shown {[strip_sequences(r) for r in output.shown]!r}")
            else:
                events.append(f"lines {[strip_sequences(r) for r in output.lines]!r}")

    for start in range(0, len(ANSWER), 7):
        record(live.feed(ANSWER[start : start + 7]))
        if live.rows() != rows:
            rows = live.rows()
            events.append("live " + " / ".join(strip_sequences(r) for r in rows))
    record(live.finish())
    assert "\n".join(events) + f"\nanswer {live.answer!r}" == snapshot
