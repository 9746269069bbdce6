"""A streamed answer: blocks to the log as they finish, the rest live, wrapping incremental, widths exact."""

from __future__ import annotations

import pytest

from maia.frontends.chat.live import Block, Lines, LiveAnswer
from maia.frontends.terminal import metrics
from maia.frontends.terminal.metrics import headless_terminal, layout, use_terminal


@pytest.fixture(autouse=True)
def xterm() -> None:
    use_terminal(headless_terminal())


def feed_all(live: LiveAnswer, text: str, piece: int = 3) -> list[Block | Lines]:
    out: list[Block | Lines] = []
    for n in range(0, len(text), piece):
        out.extend(live.feed(text[n : n + piece]))
    return out


def test_blocks_go_to_the_log_as_they_finish() -> None:
    live = LiveAnswer(40, 20)
    out = feed_all(live, "# Title\n\nFirst paragraph\nstill first.\n\nSecond")
    first = Block("First paragraph\nstill first.", ["First paragraph", "still first."])
    assert out == [Block("# Title", ["# Title"]), first]
    assert live.rows() == ["Second"]
    assert live.finish() == [Block("Second", ["Second"])]


def test_a_code_fence_is_one_block_even_with_blank_lines() -> None:
    live = LiveAnswer(40, 20)
    out = feed_all(live, "Intro\n```python\nx = 1\n\ny = 2\n```\nAfter")
    assert [o.source for o in out if isinstance(o, Block)] == ["Intro", "```python\nx = 1\n\ny = 2\n```"]
    assert live.rows() == ["After"]


def test_a_block_taller_than_the_live_area_spills_into_the_log_line_by_line() -> None:
    live = LiveAnswer(40, 5)
    out = feed_all(live, "".join(f"- item {n}\n" for n in range(30)))
    spilled = [line for o in out if isinstance(o, Lines) for line in o.lines]
    assert spilled[0].endswith("item 0") and len(live.rows()) <= 5
    out += live.finish()
    everything = [line for o in out if isinstance(o, Lines) for line in o.lines]
    assert [line for line in everything if "item" in line][-1].endswith("item 29")
    assert all("item" in line for line in everything if line)  # each item once, in order
    assert len([line for line in everything if "item" in line]) == 30


def test_one_endless_line_spills_its_finished_rows() -> None:
    live = LiveAnswer(20, 3)
    out = feed_all(live, "word " * 100, piece=7)
    rows = [line for o in out if isinstance(o, Lines) for line in o.lines]
    assert rows and len(live.rows()) <= 3
    assert " ".join(rows + live.rows()).split() == ["word"] * 100


def test_carriage_returns_and_tabs() -> None:
    live = LiveAnswer(40, 10)
    out = live.feed("a\r") + live.feed("\nb\tc\n\n") + live.feed("50%\r100%\n")
    assert out[0] == Block("a\nb       c", ["a", "b       c"])  # CR LF split across pieces is a line end
    assert live.rows() == ["50%␍100%"]  # a lone CR is shown, it never moves the cursor
    assert live.finish() == [Block("50%␍100%", ["50%␍100%"])]


def test_escapes_are_inert_before_anything() -> None:
    live = LiveAnswer(40, 10)
    live.feed("x\x1b[2J\x1b]0;t\x07y")
    assert live.rows() == ["x␛[2J␛]0;t␇y"]


def test_wrapping_is_incremental_and_equals_wrapping_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "日本語 👨‍👩‍👧 emoji ❤️ and words of varying length " * 40
    live = LiveAnswer(30, 10_000)
    calls: list[int] = []
    real = metrics.layout

    def counting(text: str, width: int, start: int = 0) -> list[tuple[int, int]]:
        calls.append(len(text) - start)
        return real(text, width, start)

    monkeypatch.setattr("maia.frontends.chat.live.layout", counting)
    feed_all(live, text, piece=5)
    expected = [text[s:e] for s, e in layout(text, 30)]
    assert live.rows() == expected
    assert max(calls) <= 30 + 5 + 8  # each piece re-wraps only the last row, whatever the answer's length


def test_layout_never_splits_a_grapheme_and_breaks_at_spaces() -> None:
    text = "a👨‍👩‍👧b e\u0301e\u0301 日本語日本語 supercalifragilistic"
    for width in range(8, 20):  # the family emoji is 6 columns in xterm
        rows = [text[s:e] for s, e in layout(text, width)]
        assert "".join(rows) == text
        for row in rows:
            assert metrics.length(row.rstrip(" ")) <= width
            assert not row.startswith(("\u200d", "\u0301"))  # no row starts inside a cluster
    short = "alpha beta gamma"
    assert [short[s:e] for s, e in layout(short, 11)] == ["alpha beta ", "gamma"]
