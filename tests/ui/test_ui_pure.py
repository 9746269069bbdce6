"""The UI without a terminal: key decoding, the store's editing and questions, frames, banner variants."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from wcwidth import strip_sequences

from maia.frontends.chat.banner import FULL_WIDTH, banner_lines, image_rows, title_lines
from maia.frontends.chat.render import badge, bar_line, fit, frame, result_lines, visible_width
from maia.frontends.chat.store import (
    Answer,
    Chosen,
    EndOfInput,
    History,
    Interrupt,
    Question,
    Selection,
    Submit,
    UIStore,
)
from maia.frontends.terminal.keys import Key, text_key
from maia.frontends.terminal.metrics import headless_terminal, use_terminal, wrap
from maia.frontends.terminal.style import palette, reset_palette


@pytest.fixture(autouse=True)
def default_palette() -> Iterator[None]:
    """Every test starts from the default palette (true colour, dark) and a headless xterm."""
    reset_palette()
    use_terminal(headless_terminal())
    yield
    reset_palette()


def plain(text: str) -> str:
    return strip_sequences(text)


def type_text(store: UIStore, text: str) -> None:
    for char in text:
        store.handle(text_key(char))


def test_editing_keys() -> None:
    store = UIStore()
    type_text(store, "hello world")
    store.handle(Key("KEY_CTRL_W"))
    assert (store.input.text, store.input.cursor) == ("hello ", 6)
    store.handle(Key("KEY_HOME"))
    type_text(store, ">")
    store.handle(Key("KEY_END"))
    store.handle(Key("KEY_CTRL_J"))
    type_text(store, "x")
    store.handle(Key("KEY_LEFT"))
    store.handle(Key("KEY_BACKSPACE"))
    assert store.input.text == ">hello x"
    store.handle(Key("KEY_CTRL_E"))
    store.handle(Key("KEY_CTRL_U"))
    assert store.input.text == ""
    store.handle(Key("BRACKETED_PASTE", "a\nb"))
    assert store.handle(Key("KEY_ENTER")) == Submit("a\nb") and store.input.text == ""


def test_ctrl_d_and_ctrl_c() -> None:
    store = UIStore()
    assert store.handle(Key("KEY_CTRL_D")) == EndOfInput()
    type_text(store, "ab")
    store.handle(Key("KEY_HOME"))
    assert store.handle(Key("KEY_CTRL_D")) is None and store.input.text == "b"
    assert store.handle(Key("KEY_CTRL_C")) is None and store.input.text == ""  # a draft: Ctrl+C clears it
    assert store.handle(Key("KEY_CTRL_C")) == Interrupt()  # an empty input: Ctrl+C quits


def test_history_across_runs(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    store = UIStore(history=History.load(path))
    for text in ("one", "two", "two"):
        type_text(store, text)
        store.handle(Key("KEY_ENTER"))
    reloaded = UIStore(history=History.load(path))
    assert reloaded.history.entries == ["one", "two"]
    type_text(reloaded, "draft")
    reloaded.handle(Key("KEY_UP"))
    assert reloaded.input.text == "two"
    reloaded.handle(Key("KEY_UP"))
    reloaded.handle(Key("KEY_UP"))
    assert reloaded.input.text == "one"
    reloaded.handle(Key("KEY_DOWN"))
    reloaded.handle(Key("KEY_DOWN"))
    assert reloaded.input.text == "draft"
    path.write_text("{broken")
    assert History.load(path).entries == []


@pytest.mark.parametrize(
    ("key", "answer"),
    [
        (text_key("y"), "yes"),
        (text_key("o"), "yes"),
        (text_key("n"), "no"),
        (Key("KEY_ESCAPE"), "no"),
        (text_key("s"), "stop"),
    ],
)
def test_questions(key: Key, answer: str) -> None:
    store = UIStore(mode="ask", question=Question("Allow?", stop_allowed=True))
    assert store.handle(key) == Answer(answer)  # type: ignore[arg-type]


def test_enter_alone_is_ignored_and_stop_only_when_offered() -> None:
    store = UIStore(mode="confirm", question=Question("Sure?"))
    assert store.handle(Key("KEY_ENTER")) is None
    assert store.handle(text_key("s")) is None


def test_list_window_and_multiselect() -> None:
    store = UIStore(mode="select", selection=Selection("pick", [f"c{n}" for n in range(25)]))
    for _ in range(12):
        store.handle(text_key("j"))
    assert store.selection is not None and store.selection.index == 12
    assert [i for i, _c in store.selection.visible()] == list(range(3, 13))
    store.handle(Key("KEY_UP"))
    assert store.handle(Key("KEY_ENTER")) == Chosen(11)
    multi = UIStore(mode="multiselect", selection=Selection("del", ["a", "b", "c"]))
    assert multi.handle(Key("KEY_ENTER")) == Chosen(indexes=(0,))  # nothing checked: Enter takes the current one
    multi.handle(text_key(" "))
    multi.handle(Key("KEY_DOWN"))
    multi.handle(Key("KEY_DOWN"))
    multi.handle(text_key(" "))
    assert multi.handle(Key("KEY_DELETE")) == Chosen(indexes=(0, 2))
    assert multi.handle(Key("KEY_ESCAPE")) == Chosen()


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
    assert palette().bar[level] in line and visible_width(line) <= 79
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
    store.question = Question("Allow Bash: ls?", stop_allowed=True)
    assert "ASK  Allow Bash: ls? (y/n/s=stop)" in plain("".join(frame(store, 60, 24, 0).lines))


def test_frame_shows_the_tail_of_the_live_rows() -> None:
    store = UIStore(live_rows=[f"l{n}" for n in range(100)])
    text = [plain(line) for line in frame(store, 40, 20, 0).lines]
    assert len(text) <= 19  # never taller than the terminal minus one line
    assert text[0] == "l86" and text[text.index("") - 1] == "l99"


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
    assert "next" in plain("".join(frame(store, 60, 24, 0).lines))
    assert store.handle(Key("KEY_CTRL_C")) == Interrupt()
    assert store.input.text == "next"  # Ctrl+C during a turn interrupts it; the draft stays


def test_markdown_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    from maia.frontends.chat.fastmd import render_fast
    from maia.frontends.chat.markdown import render_markdown

    rendered = render_markdown("# Title\n\nSome **bold**.", 60)
    assert "**" not in rendered and "bold" in plain(rendered)
    long = "\n".join(f"- **item {n}**" for n in range(400))
    assert render_markdown(long, 60) == render_fast(long)
    assert plain(render_fast(long)).splitlines()[0] == "• item 0"
    monkeypatch.setenv("MAIA_NO_MARKDOWN", "1")
    assert render_markdown("# raw **text**", 60) == "# raw **text**"


def test_fast_markdown_constructs() -> None:
    from maia.frontends.chat.fastmd import render_fast

    text = plain(render_fast("## Head\nA `x` and [site](https://e.org) _it_\n> q\n```\ncode **not bold**\n```"))
    assert text.splitlines() == [
        "Head",
        "A x and site (https://e.org) it",
        "▌ q",
        "─" * 40,
        "  code **not bold**",
        "─" * 40,
    ]
