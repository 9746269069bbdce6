"""The frame engine on a pyte screen: what it writes brings the screen exactly to the new frame, and no more."""

from __future__ import annotations

import pyte
import pytest
from wcwidth import strip_sequences

from maia.frontends.terminal.metrics import headless_terminal, use_terminal
from maia.frontends.terminal.screen import Caps, Screen, cells


@pytest.fixture(autouse=True)
def xterm() -> None:
    use_terminal(headless_terminal())


class Display:
    """A pyte screen the frame is drawn on, below some log text."""

    def __init__(self, columns: int = 40, rows: int = 12) -> None:
        self.pyte = pyte.HistoryScreen(columns, rows, history=1000, ratio=0.5)
        self.stream = pyte.Stream(self.pyte)
        self.screen = Screen(caps=Caps.of(headless_terminal()))
        self.written: list[str] = []
        self.stream.feed("log one\r\nlog two\r\n")

    def draw(self, lines: list[str], cursor: tuple[int, int] | None = None, log: list[str] | None = None) -> str:
        out = self.screen.draw(lines, cursor, log)
        self.written.append(out)
        self.stream.feed(out)
        return out

    def rows(self) -> list[str]:
        return [line.rstrip() for line in self.pyte.display]


def test_first_frame_then_only_changes() -> None:
    display = Display()
    frame = ["", "┈" * 39, "▹▹▹▹▹ Your request", "┈" * 39, "1.5k / 128k"]
    display.draw(frame, (2, 6))
    assert display.rows()[:7] == ["log one", "log two", *frame]
    assert (display.pyte.cursor.y, display.pyte.cursor.x) == (4, 6)
    tick = ["", "┈" * 39, "▸▹▹▹▹ Your request", "┈" * 39, "1.5k / 128k"]
    out = display.draw(tick, (2, 6))
    assert display.rows()[:7] == ["log one", "log two", *tick]
    assert len(out) < 30 and "Your request" not in out  # one changed cell, not the whole box
    assert display.draw(tick, (2, 6)) == ""  # nothing changed: nothing written


def test_styles_are_kept_and_only_the_changed_run_is_written() -> None:
    display = Display()
    display.draw(["\x1b[92mgreen\x1b[m plain", "bar"], None)
    out = display.draw(["\x1b[92mgreen\x1b[m PLAIN", "bar"], None)
    assert "green" not in out and "PLAIN" in out
    row = display.pyte.buffer[2]
    assert row[0].fg == "brightgreen" and row[6].fg == "default"


def test_growing_and_shrinking_frames() -> None:
    display = Display()
    display.draw(["a", "b"], (1, 1))
    display.draw(["a", "b", "c", "d"], (3, 0))
    assert display.rows()[:6] == ["log one", "log two", "a", "b", "c", "d"]
    display.draw(["a"], (0, 1))
    assert display.rows()[:4] == ["log one", "log two", "a", ""]


def test_log_lines_go_above_the_frame_and_into_the_scrollback() -> None:
    display = Display(rows=6)
    display.draw(["status", "input", "bar"], (1, 0))
    display.draw(["status", "input", "bar"], (1, 0), log=[f"line {n}" for n in range(10)])
    history = [
        strip_sequences("".join(c.data for _x, c in sorted(line.items()))).rstrip() for line in display.pyte.history.top
    ]
    assert display.rows()[-3:] == ["status", "input", "bar"]
    assert [h for h in history if h.startswith("line")] == [f"line {n}" for n in range(7)]
    assert not any(h in ("status", "input", "bar") for h in history)  # the frame never scrolled away


def test_never_erases_from_the_top_left_corner() -> None:
    display = Display()
    display.screen = Screen(caps=Caps.of(headless_terminal()))
    display.pyte.reset()
    display.draw(["status", "input", "bar"], (1, 0))  # the frame at the very top of the screen
    display.draw(["status", "input", "bar"], (1, 0), log=["banner"])
    for out in display.written:  # ED only ever after something was written on the first row
        assert not out.startswith(("\x1b[J", "\r\x1b[J"))
        assert "\x1b[1A\r\x1b[J" not in out and "\x1b[H" not in out


def test_wide_characters_and_hyperlinks_are_cells() -> None:
    row = cells("a日👨‍👩‍👧\x1b]8;;file:///x\x1b\\link\x1b]8;;\x1b\\")
    assert [c.text for c in row][:3] == ["a", "日", "👨‍👩‍👧"]
    assert row[1].width == 2 and row[3].style.startswith("\x1b]8;;file:///x")
    assert row[-1].style == row[3].style


def test_after_a_resize_every_row_is_drawn_again() -> None:
    display = Display()
    display.draw(["one", "two", "three"], (1, 0))
    display.screen.forget(1)
    out = display.draw(["one", "two", "three"], (1, 0))
    assert "one" in out and "three" in out
    assert display.rows()[2:5] == ["one", "two", "three"]


def test_erase_removes_the_frame_row_by_row() -> None:
    display = Display()
    display.draw(["one", "two", "three"], (1, 0))
    display.stream.feed(display.screen.erase())
    assert display.rows()[:5] == ["log one", "log two", "", "", ""]
    assert (display.pyte.cursor.y, display.pyte.cursor.x) == (2, 0)


def test_a_hidden_cursor_waits_on_the_frames_first_row() -> None:
    """While an answer streams (no cursor shown) the cursor is parked on the frame's first row, column 0: a resize
    cannot move the frame's top away from it (issue 28, item 12)."""
    display = Display()
    display.draw(["live one", "live two", "⠋ Thinking", "┈" * 39, "bar"], None)
    assert (display.pyte.cursor.y, display.pyte.cursor.x) == (2, 0)
    display.draw(["live one", "live two", "live three", "⠙ Thinking", "┈" * 39, "bar"], None)
    assert (display.pyte.cursor.y, display.pyte.cursor.x) == (2, 0)
    assert display.rows()[2:8] == ["live one", "live two", "live three", "⠙ Thinking", "┈" * 39, "bar"]
    display.draw(["", "┈" * 39, "▹ Your request", "┈" * 39, "bar"], (2, 2))  # the prompt again: its cursor
    assert (display.pyte.cursor.y, display.pyte.cursor.x) == (4, 2)


def test_a_frame_still_on_its_way_when_the_window_narrows_is_cut_not_wrapped() -> None:
    """A frame written for 40 columns reaching a terminal that is now 20 wide: its rows are cut at the edge
    (auto-wrap is off while it is drawn), so its moves still land on its rows and the cursor on its first row."""
    display = Display()
    display.draw(["live one", "⠋ Thinking", "┈" * 39, "bar"], None)
    display.pyte.resize(12, 20)
    display.draw(["live one", "live two " + "x" * 30, "⠙ Thinking", "┈" * 39, "bar"], None)
    assert (display.pyte.cursor.y, display.pyte.cursor.x) == (2, 0)
    assert display.rows()[2:7] == ["live one", "live two " + "x" * 11, "⠙ Thinking", "┈" * 20, "bar"]
    assert pyte.modes.DECAWM in display.pyte.mode  # wrapping is on again for what follows


def test_the_first_frame_after_a_resize_erases_each_row_from_its_start() -> None:
    """Rows a terminal wrapped again on a resize keep a "wrapped" mark (tmux) that would join them with the next
    row when the window widens: the first frame after a resize erases each row from column 0 before drawing it."""
    display = Display()
    display.draw(["one", "two", "three"], None)
    display.screen.forget(0)
    out = display.draw(["one", "two", "three"], None, ["a log line"])
    assert all(f"\x1b[K{text}" in out for text in ("a log line", "one", "two", "three"))
    assert display.rows()[2:6] == ["a log line", "one", "two", "three"]
    assert "\x1b[Kone" not in display.draw(["one", "two", "three"], None, ["next"])  # only after a resize
