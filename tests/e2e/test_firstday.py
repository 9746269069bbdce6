"""A newcomer's first day (issue 28), in a real pseudo-terminal: set-up, keys, the bar, pastes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pytest_httpserver import HTTPServer

from tests.commands.test_setup import serve
from tests.e2e.conftest import ready
from tests.e2e.terminal import Terminal, chat_env

CHAT = "/v1/chat/completions"


def test_first_maia_offers_the_set_up_then_chats(httpserver: HTTPServer, home: Path, project: Path) -> None:
    serve(httpserver)
    term = Terminal([], project, chat_env(home, project), 100, 30)
    try:
        term.wait_for("MAIA is not set up yet")
        term.wait_for("Set it up now? [Y/n]")
        term.send("\r")
        term.wait_for("Proxy address [http://localhost:4000]:")
        term.send(httpserver.url_for("") + "\r")
        term.wait_for("Proxy key (hidden; Enter for none):")
        term.send("sk-good\r")
        term.wait_for("offers 3 models")
        term.wait_for("Default model (number or name) [alpha]:")
        term.send("2\r")
        term.wait_for("Saved ")
        # then the chat starts, with the model chosen
        term.wait_for("beta")
        term.wait_until(lambda: "┈┈┈" in term.text(), "the input box never appeared")
        assert "sk-good" not in term.everything()  # the key is never echoed
        saved = json.loads((home / "settings.json").read_text())
        assert saved == {"LiteLLM_URL": httpserver.url_for(""), "LiteLLM_API_Key": "sk-good", "DefaultModel": "beta"}
    finally:
        term.close()


def test_first_maia_declined_says_how(home: Path, project: Path) -> None:
    term = Terminal([], project, chat_env(home, project), 100, 30)
    try:
        term.wait_for("Set it up now? [Y/n]")
        term.send("n\r")
        term.wait_exit()
        assert "maia setup" in term.everything()
        term.child.close()
        assert term.child.exitstatus == 1
    finally:
        term.close()


def test_resume_and_load_show_what_was_typed(server: HTTPServer, start: Callable[..., Terminal], project: Path) -> None:
    from tests.app.helpers import maia as run_maia
    from tests.streams import text_stream

    (project / "big.txt").write_text("FILE-BODY-LINE\n" * 40)
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Read it."), content_type="text/event-stream")
    done = run_maia("ask", "-m", "scripted-openai", "look at @big.txt")
    assert done.returncode == 0, done.stderr
    (name,) = [p.stem for p in (project / ".maia" / ".sessions").glob("*.json")]
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Hi."), content_type="text/event-stream")
    assert run_maia("ask", "-m", "scripted-openai", "another one").returncode == 0
    (other,) = [p.stem for p in (project / ".maia" / ".sessions").glob("*.json") if p.stem != name]
    term = start(100, 40, "--resume", other)
    ready(term)
    term.wait_for("another one")
    term.send("/load\r")
    term.wait_for("· look at @big.txt")  # the list shows what was typed
    term.answer("\r")
    term.wait_for("loaded (2 messages)")
    assert "❯ look at @big.txt" in term.everything()
    assert "FILE-BODY-LINE" not in term.everything()
    assert "The user attached" not in term.everything()


def test_resume_of_an_unknown_session_fails_before_the_banner(server: HTTPServer, home: Path, project: Path) -> None:
    term = Terminal(["chat", "-m", "scripted-openai", "--resume", "nope"], project, chat_env(home, project), 100, 30)
    try:
        term.wait_exit()
        screen = term.everything()
        assert "No session named 'nope'" in screen
        assert "Command-line AI assistant" not in screen and "▀▀▀" not in screen
        term.child.close()
        assert term.child.exitstatus == 2
    finally:
        term.close()


def test_a_wrong_proxy_address_is_said_at_start(write_settings: Callable[..., Path], home: Path, project: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write_settings(f"http://127.0.0.1:{port}")
    term = Terminal(["chat", "-m", "some-model"], project, chat_env(home, project), 100, 30)
    try:
        screen = term.wait_for("maia setup")
        assert f"LiteLLM is unreachable (http://127.0.0.1:{port}/v1/models)" in screen
        assert "context size is unknown" not in screen
    finally:
        term.close()


def test_status_counts_an_always_rule_saved_in_the_chat(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    from tests.streams import text_stream, tool_stream

    server.expect_oneshot_request(CHAT).respond_with_data(
        tool_stream("Bash", {"command": "echo hi"}, "call_1"), content_type="text/event-stream"
    )
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Ran."), content_type="text/event-stream")
    term = start(250, 40)
    ready(term)
    term.send("/status\r")
    term.wait_for("No permission rules defined")
    term.send("run it\r")
    term.wait_for("Allow Bash: echo hi?")
    term.answer("a")
    term.wait_for("t: this session only")
    term.send("p")
    term.wait_for("Ran.")
    term.send("/status\r")
    local = project / ".maia" / "settings.local.json"
    screen = term.wait_for(f"Permission rules loaded: {local} (1)")
    after = screen[screen.rindex("❯ /status") :]
    assert "No permission rules defined" not in after


def test_plan_mode_says_not_run_once(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    from tests.streams import text_stream, tool_stream

    server.expect_oneshot_request(CHAT).respond_with_data(
        tool_stream("Bash", {"command": "echo hi"}, "call_1"), content_type="text/event-stream"
    )
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Planned."), content_type="text/event-stream")
    term = start(160, 30)
    ready(term)
    term.send("/mode plan\r")
    term.wait_until(lambda: "plan mode" in term.screen.display[-1], "no plan mode on the bar")
    term.send("do it\r")
    screen = term.wait_for("Planned.")
    assert "Not run: the user chose plan mode" in screen
    assert "Not run: Not run" not in screen


def test_copy_inside_tmux_says_what_reached_the_clipboard(
    server: HTTPServer, start: Callable[..., Terminal], tmp_path: Path
) -> None:
    """tmux drops an application's OSC 52 unless set-clipboard is on: /copy says so, and fills tmux's buffer."""
    import os

    from tests.streams import text_stream

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    buffer = tmp_path / "tmux-buffer"
    fake = bin_dir / "tmux"  # a stand-in for tmux: answers the option, keeps what load-buffer reads
    fake.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        "  show-options) echo external ;;\n"
        f"  load-buffer) cat > {buffer} ;;\n"
        "  *) exit 1 ;;\n"
        "esac\n"
    )
    fake.chmod(0o755)
    server.expect_oneshot_request(CHAT).respond_with_data(
        text_stream("Run this:\n\n```sh\nmake test\n```\n"), content_type="text/event-stream"
    )
    env = {"TMUX": "/tmp/tmux-0/default,1,0", "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("DISPLAY", None)
    term = start(200, 40, env={**env, "DISPLAY": "", "WAYLAND_DISPLAY": ""})
    ready(term)
    term.send("how?\r")
    term.wait_for("make test")
    term.send("/copy 1\r")
    screen = term.wait_for("Copied 9 characters to: tmux's paste buffer")
    assert "Not reached: the terminal's clipboard (OSC 52: tmux drops it)" in screen
    assert "set -g set-clipboard on" in screen and "(now: external)" in screen
    assert buffer.read_text() == "make test"


def test_ctrl_o_shows_the_reasoning_of_earlier_answers(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    from tests.streams import sse

    thinking = {"choices": [{"index": 0, "delta": {"reasoning_content": "Weighing option B first.\nThen A."}}]}
    answer = {"choices": [{"index": 0, "delta": {"content": "Take A."}}]}
    server.expect_oneshot_request(CHAT).respond_with_data(sse(thinking, answer), content_type="text/event-stream")
    term = start()
    ready(term)
    term.send("which one?\r")
    term.wait_for("Take A.")
    assert "Weighing option B" not in term.everything()  # hidden while it streamed
    term.send("\x0f")
    screen = term.wait_for("Weighing option B first.")
    assert "Earlier reasoning:" in screen and "Then A." in screen


def _rows_between(screen: str, first: str, second: str) -> list[str]:
    lines = screen.split("\n")
    start = max(n for n, line in enumerate(lines) if first in line)
    end = next(n for n in range(start + 1, len(lines)) if second in lines[n])
    return [line.strip() for line in lines[start + 1 : end]]


def test_code_blocks_and_tables_have_one_blank_line_around(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    from tests.streams import text_stream

    answer = (
        "Intro paragraph.\n\n```python\nprint(1)\n```\n\nAfter the code.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter the table."
    )
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream(answer), content_type="text/event-stream")
    term = start(100, 40)
    ready(term)
    term.send("show me\r")
    screen = term.wait_for("After the table.")
    term.settle()
    screen = term.everything()
    assert _rows_between(screen, "Intro paragraph.", "print(1)") == [""]
    assert _rows_between(screen, "print(1)", "After the code.") == [""]
    assert _rows_between(screen, "After the code.", "a  b") == [""]
    assert _rows_between(screen, "1  2", "After the table.") == [""]


def test_inline_code_is_readable_with_the_light_theme(
    server: HTTPServer, start: Callable[..., Terminal], write_settings: Callable[..., Path]
) -> None:
    from tests.streams import text_stream

    write_settings(server.url_for(""), Theme="light")
    server.expect_oneshot_request(CHAT).respond_with_data(
        text_stream("Run `make test` now."), content_type="text/event-stream"
    )
    term = start(100, 30, scheme="light")
    ready(term)
    term.send("how?\r")
    term.wait_for("Run make test now.")
    term.settle()
    row = next(n for n, line in enumerate(term.screen.display) if "Run make test now." in line)
    column = term.screen.display[row].index("make test")
    cell = term.screen.buffer[row][column]
    assert cell.bg == "default" and cell.fg not in ("cyan", "brightcyan")


def test_theme_auto_follows_the_background_where_the_scheme_query_gets_no_answer(
    server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    """tmux does not answer the colour-scheme query but answers OSC 11 with the terminal's background."""
    from tests.streams import text_stream

    server.expect_oneshot_request(CHAT).respond_with_data(
        text_stream("Run `make test` now."), content_type="text/event-stream"
    )
    term = start(100, 30, scheme=None, background="rgb:ffff/ffff/f0f0")
    ready(term)
    term.send("how?\r")
    term.wait_for("Run make test now.")
    term.settle()
    row = next(n for n, line in enumerate(term.screen.display) if "Run make test now." in line)
    cell = term.screen.buffer[row][term.screen.display[row].index("make test")]
    assert cell.bg == "default" and cell.fg in ("806000", "875f00")  # the light theme's code colour (or its 256)


def test_the_bar_shows_model_and_session_and_the_idle_marker_is_still(
    server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    from tests.streams import text_stream

    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Hi."), content_type="text/event-stream")
    term = start(120, 30)
    ready(term)
    term.send("hello\r")
    term.wait_for("Hi.")
    term.wait_until(lambda: "session_" in term.screen.display[-1], "no session on the bar")
    bar = term.screen.display[-1]
    assert "scripted-openai · session_" in bar
    assert "■■■■■■■■■■ " in bar and "■■■■■■■■■■■" not in bar  # a 10-square gauge for a 128k model
    # idle: the marker does not move, so nothing is redrawn
    term.settle()
    before = len(term.raw)
    term.pump(1.5)
    assert len(term.raw) == before
    # a narrow window keeps the gauge and drops what does not fit
    term.resize(30, 60)
    term.settle()
    bar = [line for line in term.screen.display if "/ 128k" in line][-1]
    assert "■■■■■■■■■■ " in bar
    assert "session_" not in bar  # no room for it: dropped, the gauge kept


def test_edits_mode_shows_the_diff_of_what_it_changed(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    from tests.streams import text_stream, tool_stream

    (project / "app.py").write_text("def greet():\n    return 'hello'\n")
    edit = {"path": "app.py", "old_string": "return 'hello'", "new_string": "return 'bonjour'"}
    server.expect_oneshot_request(CHAT).respond_with_data(tool_stream("Edit", edit), content_type="text/event-stream")
    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Changed."), content_type="text/event-stream")
    term = start(100, 40)
    ready(term)
    term.send("\x1b[Z")
    term.wait_for("edits allowed (Shift+Tab)")
    term.send("say it in French\r")
    screen = term.wait_for("Changed.")
    assert "Allow Edit" not in screen  # not asked
    assert "│ -    return 'hello'" in screen and "│ +    return 'bonjour'" in screen
    assert (project / "app.py").read_text() == "def greet():\n    return 'bonjour'\n"


def test_a_big_paste_is_one_token_sent_whole(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    from tests.streams import text_stream

    server.expect_oneshot_request(CHAT).respond_with_data(text_stream("Got it."), content_type="text/event-stream")
    term = start(100, 30)
    ready(term)
    pasted = "\n".join(f"log line {n}" for n in range(60))
    term.send("look at this: ")
    term.send("\x1b[200~" + pasted + "\x1b[201~")
    term.wait_for("look at this: [Pasted text #1 +60 lines]")
    assert "log line 5" not in term.text()
    term.send("\r")
    screen = term.wait_for("Got it.")
    assert "❯ look at this: [Pasted text #1 +60 lines]" in screen  # the transcript shows the token
    assert "log line 30" not in term.everything()
    body = next(json.loads(r.data) for r, _ in server.log if r.path == CHAT)
    assert body["messages"][-1]["content"] == "look at this: " + pasted  # sent whole
