"""The chat's keys without a terminal: readline editing, history search, the queue, questions, lists, menus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from wcwidth import strip_sequences

from maia.frontends.chat.complete import Item, Listing, context, fuzzy, list_launch_folder, quote_path
from maia.frontends.chat.render import bar_line, frame
from maia.frontends.chat.store import (
    Action,
    Answer,
    Chosen,
    History,
    Interrupt,
    Question,
    Selection,
    Submit,
    UIStore,
)
from maia.frontends.terminal.keys import Key, text_key
from maia.frontends.terminal.metrics import headless_terminal, use_terminal
from maia.frontends.terminal.style import reset_palette


@pytest.fixture(autouse=True)
def default_palette() -> Iterator[None]:
    reset_palette()
    use_terminal(headless_terminal())
    yield
    reset_palette()


def plain(lines: list[str]) -> str:
    return "\n".join(strip_sequences(line) for line in lines)


def typed(store: UIStore, text: str) -> None:
    store.handle(text_key(text))


def keys(store: UIStore, *names: str) -> list[object]:
    return [store.handle(Key(name)) for name in names]


# --- readline ------------------------------------------------------------------------------------------


def test_kill_and_yank() -> None:
    store = UIStore()
    typed(store, "one two three")
    keys(store, "KEY_ALT_B", "KEY_ALT_B")
    assert store.input.cursor == len("one ")
    keys(store, "KEY_CTRL_K")
    assert store.input.text == "one " and store.killed == "two three"
    keys(store, "KEY_CTRL_A", "KEY_CTRL_Y")
    assert store.input.text == "two threeone " and store.input.cursor == len("two three")
    keys(store, "KEY_ALT_BACKSPACE")
    assert store.input.text == "two one " and store.killed == "three"
    keys(store, "KEY_CTRL_RIGHT", "KEY_CTRL_U")
    assert store.input.text == " " and store.killed == "two one"
    keys(store, "KEY_HOME", "KEY_CTRL_Y", "KEY_HOME", "KEY_ALT_F")
    assert store.input.cursor == len("two")
    keys(store, "KEY_HOME", "KEY_ALT_D")
    assert store.input.text == " one " and store.killed == "two"


def test_up_and_down_move_between_lines_before_browsing_history() -> None:
    store = UIStore(history=History(["older", "newest"]))
    typed(store, "first line")
    keys(store, "KEY_CTRL_J")
    typed(store, "second")
    keys(store, "KEY_UP")
    assert store.input.text == "first line\nsecond" and store.input.cursor == len("second")  # same column
    keys(store, "KEY_DOWN")
    assert store.input.cursor == len(store.input.text)
    keys(store, "KEY_UP", "KEY_UP")  # from the first line: the history
    assert store.input.text == "newest"
    keys(store, "KEY_UP")
    assert store.input.text == "older"
    keys(store, "KEY_DOWN", "KEY_DOWN")
    assert store.input.text == "first line\nsecond"  # the draft is back


def test_ctrl_r_searches_the_history() -> None:
    store = UIStore(history=History(["git status", "run the tests", "git push", "make"]))
    typed(store, "draft")
    keys(store, "KEY_CTRL_R")
    typed(store, "gi")
    assert store.input.text == "git push" and store.search is not None
    assert "history search: gi" in plain(frame(store, 60, 24, 0).lines)
    keys(store, "KEY_CTRL_R")
    assert store.input.text == "git status"
    keys(store, "KEY_CTRL_R")  # nothing older: the last match stays, marked
    assert store.input.text == "git status" and store.search.failed
    keys(store, "KEY_ESCAPE")
    assert store.input.text == "draft" and store.search is None
    keys(store, "KEY_CTRL_R")
    typed(store, "tests")
    assert store.handle(Key("KEY_ENTER")) is None  # Enter takes the entry into the box; it is not sent
    assert store.input.text == "run the tests" and store.search is None
    assert store.handle(Key("KEY_ENTER")) == Submit("run the tests")


def test_ctrl_c_clears_a_draft_and_quits_only_an_empty_prompt() -> None:
    store = UIStore()
    typed(store, "half written")
    assert store.handle(Key("KEY_CTRL_C")) is None and store.input.text == ""
    assert store.handle(Key("KEY_CTRL_C")) == Interrupt()


@pytest.mark.parametrize(
    ("name", "action"),
    [
        ("KEY_BTAB", "mode"),
        ("KEY_SHIFT_TAB", "mode"),
        ("KEY_CTRL_O", "reasoning"),
        ("KEY_CTRL_L", "redraw"),
        ("KEY_CTRL_Z", "suspend"),
    ],
)
@pytest.mark.parametrize("mode", ["input", "busy"])
def test_keys_the_interface_acts_on(name: str, action: str, mode: str) -> None:
    store = UIStore(mode=mode)  # type: ignore[arg-type]
    assert store.handle(Key(name)) == Action(action)  # type: ignore[arg-type]


# --- while a turn runs: type-ahead and the queue ---------------------------------------------------------


def test_enter_during_a_turn_queues_and_the_queue_can_be_edited_or_dropped() -> None:
    store = UIStore(mode="busy")
    typed(store, "then fix the docs")
    assert store.handle(Key("KEY_ENTER")) is None
    assert store.queued == ["then fix the docs"] and store.input.text == ""
    text = plain(frame(store, 60, 24, 0).lines)
    assert "⏎ queued: then fix the docs" in text
    keys(store, "KEY_UP")  # back into the box
    assert store.queued == [] and store.input.text == "then fix the docs"
    typed(store, " too")
    keys(store, "KEY_ENTER")
    assert store.queued == ["then fix the docs too"]
    assert store.handle(Key("KEY_ESCAPE")) is None and store.queued == []  # Esc drops the queued message…
    assert store.handle(Key("KEY_ESCAPE")) == Interrupt()  # …then interrupts the turn


# --- questions -----------------------------------------------------------------------------------------


def approval_store(rows: int = 60, rules: tuple[str, ...] = ("Bash(npm test *)",)) -> UIStore:
    question = Question(
        "Allow Bash: npm test?",
        stop_allowed=True,
        detail=[f"  │ line {n}" for n in range(rows)],
        reason="the engine could not read the redirection",
        rules=rules,
    )
    return UIStore(mode="ask", question=question)


def test_a_question_scrolls_its_detail_and_shows_the_doubt() -> None:
    store = approval_store()
    shown = frame(store, 80, 24, 0)
    text = plain(shown.lines)
    assert "Allow Bash: npm test? (y/n/a/s=stop)" in text and "the engine could not read" in text
    assert "line 0" in text and "line 59" not in text and f"1-{shown.detail_room} of 60" in text
    assert store.question is not None
    store.question.room = shown.detail_room
    keys(store, "KEY_PGDOWN")
    text = plain(frame(store, 80, 24, 0).lines)
    assert "line 0" not in text and f"line {shown.detail_room}" in text
    keys(store, "KEY_END")
    assert "line 59" in plain(frame(store, 80, 24, 0).lines)
    keys(store, "KEY_HOME", "KEY_UP")
    assert store.question.offset == 0


def test_a_asks_where_to_keep_the_rule() -> None:
    store = approval_store(3)
    assert store.handle(text_key("a")) is None
    text = plain(frame(store, 80, 24, 0).lines)
    assert "Always allow Bash(npm test *)" in text and "p: in this project" in text and "t: this session only" in text
    assert store.handle(Key("KEY_ESCAPE")) is None and store.question is not None  # back, nothing answered
    assert store.question.stage == "answer"
    store.handle(text_key("a"))
    assert store.handle(text_key("p")) == Answer("always")
    store.question.stage = "answer"
    store.handle(text_key("a"))
    assert store.handle(text_key("s")) is None  # s stops at the question, never means "this session"
    assert store.handle(text_key("t")) == Answer("always-session")


def test_a_is_not_offered_without_rules_and_ctrl_c_stops() -> None:
    store = approval_store(3, rules=())
    assert "(y/n/s=stop)" in plain(frame(store, 80, 24, 0).lines)
    assert store.handle(text_key("a")) is None and store.question is not None and store.question.stage == "answer"
    assert store.handle(Key("KEY_CTRL_C")) == Answer("stop")
    confirm = UIStore(mode="confirm", question=Question("Continue?"))
    assert confirm.handle(Key("KEY_CTRL_C")) == Answer("no")


def test_type_ahead_goes_to_the_draft() -> None:
    store = approval_store(3)
    store.type_ahead(text_key("yes stop"))
    assert store.input.text == "yes stop" and store.question is not None


# --- lists ---------------------------------------------------------------------------------------------


def test_a_list_starts_on_the_current_choice_and_filters_as_one_types() -> None:
    selection = Selection(
        "Load", ["alpha · fix tests", "beta · write docs", "gamma · fix docs"], index=2, filterable=True
    )
    store = UIStore(mode="select", selection=selection)
    assert selection.current == 2
    typed(store, "fix")
    assert selection.shown == [0, 2] and selection.current == 2  # the highlighted one is kept
    assert "Filter: fix" in plain(frame(store, 60, 24, 0).lines)
    typed(store, " te")
    assert selection.shown == [0]
    keys(store, "KEY_BACKSPACE", "KEY_BACKSPACE", "KEY_BACKSPACE")
    assert selection.shown == [0, 2]
    typed(store, "j")  # a letter filters, it does not move
    assert selection.shown == []
    assert store.handle(Key("KEY_ENTER")) is None  # nothing to choose
    keys(store, "KEY_BACKSPACE")
    keys(store, "KEY_DOWN")
    assert store.handle(Key("KEY_ENTER")) == Chosen(2)


# --- completion ------------------------------------------------------------------------------------------


class Offer:
    """A completer over fixed lists."""

    def __init__(self) -> None:
        self.commands = [
            Item("/model [NAME]", "/model ", "another model", submit=True),
            Item("/mode [MODE]", "/mode ", "approval mode", submit=True),
            Item("/rename NAME", "/rename ", "rename"),
            Item("/help", "/help", "this help", submit=True),
        ]
        self.listing = Listing(["src/", "src/app.py", "src/apple.txt", "my dir/", "my dir/a b.txt"], 5)

    def slash(self, prefix: str) -> list[Item]:
        return [i for i in self.commands if i.label[1:].startswith(prefix)]

    def files(self, query: str) -> tuple[list[Item], str]:
        paths = fuzzy(self.listing, query)
        return [Item(p, "@" + quote_path(p) + ("" if p.endswith("/") else " ")) for p in paths], ""


def test_slash_opens_a_filtered_menu_and_enter_runs_the_choice() -> None:
    store = UIStore(completer=Offer())
    typed(store, "/mo")
    assert store.menu is not None and [i.label for i in store.menu.items] == ["/model [NAME]", "/mode [MODE]"]
    assert "❯ /model [NAME]" in plain(frame(store, 60, 24, 0).lines)
    keys(store, "KEY_DOWN")
    assert store.handle(Key("KEY_ENTER")) == Submit("/mode ")
    typed(store, "/ren")
    assert store.handle(Key("KEY_ENTER")) is None  # a command that needs its argument is only completed
    assert store.input.text == "/rename " and store.menu is None
    keys(store, "KEY_CTRL_U")
    typed(store, "/he")
    keys(store, "KEY_ESCAPE")
    assert store.menu is None and store.input.text == "/he"  # Esc closes the menu, the text stays
    typed(store, "l")
    assert store.menu is not None  # it opens again as soon as the text changes
    keys(store, "KEY_TAB")
    assert store.input.text == "/help"


def test_at_opens_the_file_picker_and_tab_completes() -> None:
    store = UIStore(completer=Offer())
    typed(store, "look at @apl")
    assert store.menu is not None and store.menu.items[0].label == "src/apple.txt"  # in the name first
    keys(store, "KEY_TAB")
    assert store.input.text == "look at @src/apple.txt " and store.menu is None
    typed(store, "and @my")
    assert store.menu is not None and store.menu.items[0].label == "my dir/"
    keys(store, "KEY_TAB")  # a folder, quoted (it has a space)
    assert store.input.text.endswith("@'my dir/'")
    keys(store, "KEY_CTRL_W", "KEY_CTRL_W")
    typed(store, "@sr")
    keys(store, "KEY_TAB")  # a folder: the picker stays open inside it
    assert store.input.text.endswith("@src/") and store.menu is not None
    assert [item.label for item in store.menu.items][:2] == ["src/app.py", "src/apple.txt"]
    typed(store, "app")
    assert store.handle(Key("KEY_ENTER")) is None  # Enter completes a file; it does not send
    assert store.input.text.endswith("@src/app.py ")
    assert store.handle(Key("KEY_ENTER")) == Submit("look at @src/apple.txt and @src/app.py ")


def test_names_and_descriptions_in_menus_are_shown_inert_and_never_reach_the_box_raw() -> None:
    offer = Offer()
    offer.listing = Listing(["c\x9b2J.txt", "invoice\u202etxt.exe", "s\x1b[5;31mblink.txt"], 3)
    offer.commands = [Item("/review", "/review ", "skill: \x1b]8;;http://x\x07click\x1b]8;;\x07")]
    store = UIStore(completer=offer)
    typed(store, "@")
    shown = "\n".join(frame(store, 80, 24, 0).lines)
    for raw in ("\x9b", "\u202e", "\x1b[5;31m"):
        assert raw not in shown
    assert "⟨U+202E⟩" in shown and "␛[5;31m" in shown
    keys(store, "KEY_DOWN", "KEY_DOWN", "KEY_TAB")  # the blinking one: what the box holds is clean too
    assert store.input.text == "@s[5;31mblink.txt "
    keys(store, "KEY_CTRL_U")
    typed(store, "/rev")
    shown = "\n".join(frame(store, 80, 24, 0).lines)
    assert "\x1b]8;;" not in shown and "␛]8;;http://x␇click" in shown


def test_history_entries_enter_the_box_clean() -> None:
    history = History()
    history.entries = ["echo \u202eevil\x1b[2J"]
    store = UIStore(history=history)
    keys(store, "KEY_UP")
    assert store.input.text == "echo evil[2J"
    keys(store, "KEY_CTRL_U", "KEY_CTRL_R")
    typed(store, "ev")
    assert store.input.text == "echo evil[2J"


def test_the_completion_context() -> None:
    assert context("/mo", 3) == ("slash", 0, 3, "mo")
    assert context("/model gpt", 10) is None  # the argument is not completed
    assert context("fix @sr please", 7) == ("file", 4, 7, "sr")
    assert context("mail me@host", 12) is None
    assert context("@server:uri", 11) is None  # an MCP resource
    assert context("//not a command", 3) is None


def test_fuzzy_ranks_names_then_paths_then_subsequences_ignored_last() -> None:
    names = ["docs/setup.md", "maia/frontends/chat/store.py", "store/readme.md", "tests/sto_re.py", "build/store.py"]
    listing = Listing(names, 4)
    assert fuzzy(listing, "store") == [names[1], "store/readme.md", "tests/sto_re.py", "build/store.py"]
    assert fuzzy(listing, "")[0] == "docs/setup.md"


def test_the_launch_folder_listing_puts_ignored_files_last(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.bin").write_text("")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("")
    (tmp_path / ".maia" / ".sessions").mkdir(parents=True)
    (tmp_path / ".maia" / ".sessions" / "s.json").write_text("{}")
    (tmp_path / ".maia" / ".sessions" / ".lock").write_text("")
    (tmp_path / ".maia" / ".gitignore").write_text(".sessions/\nsettings.local.json\n.gitignore\n")
    (tmp_path / ".maia" / "settings.json").write_text("{}")
    listing = list_launch_folder(tmp_path)
    # of MAIA's folder, only what a user writes: its sessions, their lock, its .gitignore are its own state
    assert listing.paths[: listing.ignored_from] == [
        ".gitignore",
        ".maia/",
        ".maia/settings.json",
        "src/",
        "src/main.py",
    ]
    assert listing.paths[listing.ignored_from :] == ["build/", "build/out.bin"]  # .git never


# --- the bar ---------------------------------------------------------------------------------------------


def test_the_bar_shows_the_mode_the_marks_and_an_estimate() -> None:
    assert "edits allowed" in strip_sequences(bar_line(1500, 128_000, 80, "⏵⏵ edits allowed"))
    store = UIStore(context_tokens=1500, context_max=128_000, approval_mode="plan", marks="MCP down: docs")
    store.context_estimated = True
    last = strip_sequences(frame(store, 80, 24, 0).lines[-1])
    assert "plan mode" in last and "MCP down: docs" in last and last.rstrip().endswith("~1.5k / 128k · 1%")
    assert "mode" not in strip_sequences(frame(UIStore(), 80, 24, 0).lines[-1])  # ask: nothing shown


def test_the_file_picker_stays_fast_on_a_long_name_that_almost_matches() -> None:
    # a subsequence search by regex (a.*?a.*?…z) backtracked for a minute on this one name
    listing = Listing(["docs/" + "a" * 40 + ".md", "src/alpha_zulu.py"], 2)
    assert fuzzy(listing, "a" * 9 + "z") == []
    assert fuzzy(listing, "azu") == ["src/alpha_zulu.py"]
    assert fuzzy(listing, "dcmd") == ["docs/" + "a" * 40 + ".md"]
