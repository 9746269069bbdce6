"""The UI without a terminal: key decoding, the store's editing and questions, frames, banner variants."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from maia.ui.banner import FULL_WIDTH, banner_lines, image_rows, title_lines
from maia.ui.keys import Key, KeyDecoder
from maia.ui.render import BAR_COLOURS, badge, bar_line, fit, frame, result_lines, visible_width, wrap
from maia.ui.store import Answer, Chosen, EndOfInput, History, Interrupt, Selection, Submit, UIStore

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def plain(text: str) -> str:
    return ANSI.sub("", text)


@pytest.mark.parametrize(
    ("data", "names"),
    [
        ("\r", ["enter"]),
        ("\n", ["newline"]),
        ("\x1b\r", ["newline"]),
        ("\x1b[13;2u", ["newline"]),
        ("\x1bOM", ["newline"]),
        ("\x1b[A\x1b[B\x1b[C\x1b[D", ["up", "down", "right", "left"]),
        ("\x1b[H\x1b[F\x1b[1~\x1b[4~", ["home", "end", "home", "end"]),
        ("\x01\x05\x15\x17", ["ctrl_a", "ctrl_e", "ctrl_u", "ctrl_w"]),
        ("\x03\x04", ["ctrl_c", "ctrl_d"]),
        ("\x7f\x1b[3~", ["backspace", "delete"]),
        ("\x1b[99;5u", ["ctrl_c"]),
        ("\x1b[27u", ["escape"]),
        ("\x1b[1;5C", ["right"]),
        ("é", ["char"]),
    ],
)
def test_key_decoding(data: str, names: list[str]) -> None:
    assert [k.name for k in KeyDecoder().feed(data)] == names


def test_paste_split_across_reads_keeps_newlines() -> None:
    decoder = KeyDecoder()
    assert decoder.feed("\x1b[200~first\r\nsec") == []
    assert decoder.feed("ond\x1b[20") == []
    assert decoder.feed("1~!") == [Key("paste", "first\nsecond"), Key("char", "!")]


def test_lone_escape_waits_for_a_pause() -> None:
    decoder = KeyDecoder()
    assert decoder.feed("\x1b") == [] and decoder.pending
    assert decoder.flush() == [Key("escape")]


def type_text(store: UIStore, text: str) -> None:
    for char in text:
        store.handle(Key("char", char))


def test_editing_keys() -> None:
    store = UIStore()
    type_text(store, "hello world")
    store.handle(Key("ctrl_w"))
    assert (store.input.text, store.input.cursor) == ("hello ", 6)
    store.handle(Key("home"))
    type_text(store, ">")
    store.handle(Key("end"))
    store.handle(Key("newline"))
    type_text(store, "x")
    store.handle(Key("left"))
    store.handle(Key("backspace"))
    assert store.input.text == ">hello x"
    store.handle(Key("ctrl_e"))
    store.handle(Key("ctrl_u"))
    assert store.input.text == ""
    store.handle(Key("paste", "a\nb"))
    assert store.handle(Key("enter")) == Submit("a\nb") and store.input.text == ""


def test_ctrl_d_and_ctrl_c() -> None:
    store = UIStore()
    assert store.handle(Key("ctrl_d")) == EndOfInput()
    type_text(store, "ab")
    store.handle(Key("home"))
    assert store.handle(Key("ctrl_d")) is None and store.input.text == "b"
    assert store.handle(Key("ctrl_c")) == Interrupt()


def test_history_across_runs(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    store = UIStore(history=History.load(path))
    for text in ("one", "two", "two"):
        type_text(store, text)
        store.handle(Key("enter"))
    reloaded = UIStore(history=History.load(path))
    assert reloaded.history.entries == ["one", "two"]
    type_text(reloaded, "draft")
    reloaded.handle(Key("up"))
    assert reloaded.input.text == "two"
    reloaded.handle(Key("up"))
    reloaded.handle(Key("up"))
    assert reloaded.input.text == "one"
    reloaded.handle(Key("down"))
    reloaded.handle(Key("down"))
    assert reloaded.input.text == "draft"
    path.write_text("{broken")
    assert History.load(path).entries == []


@pytest.mark.parametrize(
    ("key", "answer"),
    [
        (Key("char", "y"), "yes"),
        (Key("char", "o"), "yes"),
        (Key("char", "n"), "no"),
        (Key("escape"), "no"),
        (Key("char", "s"), "stop"),
    ],
)
def test_questions(key: Key, answer: str) -> None:
    store = UIStore(mode="ask", stop_allowed=True)
    assert store.handle(key) == Answer(answer)  # type: ignore[arg-type]


def test_enter_alone_is_ignored_and_stop_only_when_offered() -> None:
    store = UIStore(mode="confirm")
    assert store.handle(Key("enter")) is None
    assert store.handle(Key("char", "s")) is None


def test_list_window_and_multiselect() -> None:
    store = UIStore(mode="select", selection=Selection("pick", [f"c{n}" for n in range(25)]))
    for _ in range(12):
        store.handle(Key("char", "j"))
    assert store.selection is not None and store.selection.index == 12
    assert [i for i, _c in store.selection.visible()] == list(range(3, 13))
    store.handle(Key("up"))
    assert store.handle(Key("enter")) == Chosen(11)
    multi = UIStore(mode="multiselect", selection=Selection("del", ["a", "b", "c"]))
    assert multi.handle(Key("delete")) is None  # nothing checked yet
    multi.handle(Key("char", " "))
    multi.handle(Key("down"))
    multi.handle(Key("down"))
    multi.handle(Key("char", " "))
    assert multi.handle(Key("delete")) == Chosen(indexes=(0, 2))
    assert multi.handle(Key("escape")) == Chosen()


def test_widths_and_fitting() -> None:
    assert visible_width("\x1b[31mab\x1b[0m") == 2
    assert visible_width("日本") == 4
    assert visible_width(fit("\x1b[32m" + "x" * 50, 10)) == 10
    assert wrap("aaa bbb ccc", 7) == ["aaa bbb", "ccc"]
    assert wrap("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert wrap("日本語", 4) == ["日本", "語"]


def test_badges_colours_and_indent() -> None:
    info = badge("info", "first line\nsecond", 40)
    assert plain(info[0]) == " INFO  first line" and plain(info[1]) == "       second"
    assert "\x1b[38;2;126;200;255m" in info[0]  # light blue text
    assert "\x1b[38;2;220;138;221m" in badge("fail", "x", 40)[0]  # #DC8ADD error text
    assert plain(badge("warn", "w", 40)[0]).startswith(" WARN ")


def test_result_preview_is_600_characters() -> None:
    lines = result_lines("x" * 1000, False, 200)
    text = plain("".join(lines))
    assert text.count("x") == 600 and "[400 more characters]" in text


@pytest.mark.parametrize(("tokens", "level"), [(10_000, "green"), (130_000, "yellow"), (180_000, "red")])
def test_bar_line_colours(tokens: int, level: str) -> None:
    line = bar_line(tokens, 200_000, 80)
    assert BAR_COLOURS[level] in line and visible_width(line) <= 79
    assert plain(line).rstrip().endswith(f"/ 200k · {round(tokens / 2000)}%")


def test_frame_layout() -> None:
    store = UIStore(context_tokens=1500, context_max=128_000)
    lines = frame(store, 60, 24, 0)
    text = [plain(line) for line in lines.lines]
    assert text[0] == ""  # the status line is always reserved
    assert set(text[1]) == {"┈"} and set(text[3]) == {"┈"}
    assert "Your request — /help: help" in text[2]
    assert text[4].rstrip().endswith("1.5k / 128k · 1%")
    assert lines.cursor == (2, 6)
    store.mode = "busy"
    store.status = "Thinking"
    busy = frame(store, 60, 24, 3)
    assert "Thinking" in plain(busy.lines[0]) and "\x1b[90m┈" in busy.lines[1] and busy.cursor is None
    store.mode = "ask"
    store.stop_allowed = True
    store.question = "Allow Bash: ls?"
    assert "ASK  Allow Bash: ls? (y/n/s=stop)" in plain("".join(frame(store, 60, 24, 0).lines))


def test_frame_shows_the_tail_of_a_streaming_answer() -> None:
    store = UIStore(live_text="\n".join(f"l{n}" for n in range(100)))
    text = [plain(line) for line in frame(store, 40, 20, 0).lines]
    assert text[0] == "l88" and "l99" in text


def test_banner_variants() -> None:
    assert len(image_rows()) == 32 and all(len(row) == 32 for row in image_rows())
    full = banner_lines(80)
    assert len([line for line in full if "▀" in line or "▄" in line]) >= 12
    assert max(visible_width(line) for line in full[:16]) <= FULL_WIDTH
    assert "One agent, many models" in plain("\n".join(full))
    medium = banner_lines(40)
    assert not any("▀" in line for line in medium) and len(title_lines()) == 8
    assert all(visible_width(line) <= 40 for line in medium)
    narrow = banner_lines(20)
    assert plain(narrow[1]) == "║       Maia       ║" and plain(narrow[0]).startswith("╔")


def test_title_rainbow_and_shadow() -> None:
    title = title_lines()
    colours = set(re.findall(r"\x1b\[38;2;(\d+;\d+;\d+)m█", "".join(title)))
    assert len(colours) > 8  # a gradient, not one colour
    assert "70;70;90" in colours  # the shadow


def test_type_ahead_while_busy() -> None:
    store = UIStore(mode="busy")
    type_text(store, "next")
    assert store.handle(Key("enter")) is None and store.input.text == "next"
    assert store.handle(Key("ctrl_c")) == Interrupt()
    assert "next" in plain("".join(frame(store, 60, 24, 0).lines))


def test_markdown_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    from maia.ui.fastmd import render_fast
    from maia.ui.markdown import render_markdown

    rendered = render_markdown("# Title\n\nSome **bold**.", 60)
    assert "**" not in rendered and "bold" in plain(rendered)
    long = "\n".join(f"- **item {n}**" for n in range(400))
    assert render_markdown(long, 60) == render_fast(long)
    assert plain(render_fast(long)).splitlines()[0] == "• item 0"
    monkeypatch.setenv("MAIA_NO_MARKDOWN", "1")
    assert render_markdown("# raw **text**", 60) == "# raw **text**"


def test_fast_markdown_constructs() -> None:
    from maia.ui.fastmd import render_fast

    text = plain(render_fast("## Head\nA `x` and [site](https://e.org) _it_\n> q\n```\ncode **not bold**\n```"))
    assert text.splitlines() == [
        "Head",
        "A x and site (https://e.org) it",
        "▌ q",
        "─" * 40,
        "  code **not bold**",
        "─" * 40,
    ]
