"""Keys through blessed: names for every key of §15.5, timing of Esc and pastes, late query replies."""

from __future__ import annotations

import pytest

from maia.frontends.terminal.keys import PASTE, Key, KeyReader, text_key
from maia.frontends.terminal.metrics import headless_terminal


@pytest.fixture
def reader() -> KeyReader:
    term = headless_terminal()
    return KeyReader(term)


@pytest.mark.parametrize(
    ("data", "names"),
    [
        ("\r", ["KEY_ENTER"]),
        ("\n", ["KEY_CTRL_J"]),  # Ctrl+J: a new line, not Enter
        ("\x1b\r", ["KEY_ALT_ENTER"]),
        ("\x1b[13;2u", ["KEY_SHIFT_ENTER"]),  # kitty keyboard protocol
        ("\x1bOM", ["KEY_KP_ENTER"]),  # ESC O M: a new line (§15.5)
        ("\x1b[A\x1b[B\x1b[C\x1b[D", ["KEY_UP", "KEY_DOWN", "KEY_RIGHT", "KEY_LEFT"]),
        ("\x1b[H\x1b[F\x1b[1~\x1b[4~", ["KEY_HOME", "KEY_END", "KEY_HOME", "KEY_END"]),
        ("\x01\x05\x15\x17", ["KEY_CTRL_A", "KEY_CTRL_E", "KEY_CTRL_U", "KEY_CTRL_W"]),
        ("\x03\x04", ["KEY_CTRL_C", "KEY_CTRL_D"]),
        ("\x7f\x1b[3~", ["KEY_BACKSPACE", "KEY_DELETE"]),
        ("\x1b[99;5u", ["KEY_CTRL_C"]),
        ("\x1b[27u", ["KEY_ESCAPE"]),
        ("\x1b[1;5C", ["KEY_CTRL_RIGHT"]),
        ("\x1b\x7f", ["KEY_ALT_BACKSPACE"]),
    ],
)
def test_blessed_names(reader: KeyReader, data: str, names: list[str]) -> None:
    assert [k.name for k in reader.feed(data)] == names


def test_typed_text_arrives_as_one_key(reader: KeyReader) -> None:
    assert reader.feed("héllo 👨‍👩‍👧") == [text_key("héllo 👨‍👩‍👧")]
    assert reader.feed("ab\rcd") == [text_key("ab"), Key("KEY_ENTER"), text_key("cd")]


def test_utf8_split_across_reads(reader: KeyReader) -> None:
    data = "é".encode()
    assert reader.feed(data[:1]) == []
    assert reader.feed(data[1:]) == [text_key("é")]


def test_paste_split_across_reads_keeps_newlines(reader: KeyReader) -> None:
    assert reader.feed("\x1b[200~first\r\nsec") == []
    assert reader.feed("ond\x1b[20") == []
    assert reader.feed("1~!") == [Key(PASTE, "first\nsecond"), text_key("!")]


def test_a_paste_without_its_end_marker_ends_after_a_pause(reader: KeyReader) -> None:
    assert reader.feed("\x1b[200~half a paste") == []
    assert reader.delay == reader.paste_timeout
    assert reader.flush() == [Key(PASTE, "half a paste")]
    assert reader.feed("typed") == [text_key("typed")]  # later input is not swallowed


def test_lone_escape_waits_for_the_escape_delay(reader: KeyReader) -> None:
    assert reader.feed("\x1b") == [] and reader.delay == reader.esc_delay
    assert reader.flush() == [Key("KEY_ESCAPE")]


def test_a_slow_arrow_is_one_key(reader: KeyReader) -> None:
    assert reader.feed("\x1b") == []
    assert reader.feed("[") == []
    assert reader.feed("D") == [Key("KEY_LEFT")]


def test_an_incomplete_sequence_never_swallows_the_next_key(reader: KeyReader) -> None:
    assert reader.feed("\x1b[") == []
    assert reader.flush() == []  # the pause ended it: dropped
    assert reader.feed("x") == [text_key("x")]


def test_late_query_replies_are_not_typed(reader: KeyReader) -> None:
    replies = (
        "\x1b[12;1R\x1b[?2026;2$y\x1b[?1u\x1b[?997;1n"  # cursor position, DEC mode, kitty flags, colour scheme
        "\x1bP1+r544e=78\x1b\\\x1bP>|XTerm(390)\x1b\\\x1b]11;rgb:0/0/0\x07"  # capability, version, colour
    )
    assert reader.feed(replies + "ok") == [text_key("ok")]


def test_focus_events(reader: KeyReader) -> None:
    reader.term._dec_mode_cache[1004] = 1  # focus events enabled, as TerminalUI does through blessed
    assert [k.name for k in reader.feed("\x1b[O\x1b[I")] == ["FOCUS_OUT", "FOCUS_IN"]
