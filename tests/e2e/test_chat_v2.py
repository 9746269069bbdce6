"""The chat v2 (issue 13) in a real pseudo-terminal read through pyte: approvals, modes, keys, the queue,
completion, /status and /copy, live command output, reasoning, start-up, and the review's findings."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pexpect
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.e2e.conftest import idle, ready
from tests.e2e.terminal import Terminal, chat_env
from tests.streams import sse, text_stream, tool_stream

CHAT = "/v1/chat/completions"


def reply(server: HTTPServer, body: bytes, headers: dict[str, str] | None = None) -> None:
    server.expect_oneshot_request(CHAT).respond_with_data(body, content_type="text/event-stream", headers=headers)


def bodies(server: HTTPServer) -> list[dict[str, Any]]:
    return [json.loads(r.data) for r, _ in server.log if r.path == CHAT]


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else json.dumps(content)


def box(term: Terminal) -> list[str]:
    """The rows between the input box's borders."""
    lines = [line.rstrip() for line in term.screen.display]
    borders = [n for n, line in enumerate(lines) if line and set(line) == {"┈"}]
    assert len(borders) == 2, "\n".join(lines)
    return lines[borders[0] + 1 : borders[1]]


def draft(term: Terminal) -> str:
    """The text in the box (the spinner column removed)."""
    return "\n".join(row[6:] for row in box(term)).strip()


def slow(pieces: list[bytes], delay: float | list[float]) -> Callable[[Request], Response]:
    """A streamed answer: each piece after ``delay`` seconds (or its own delay, from a list)."""
    delays = delay if isinstance(delay, list) else [delay] * len(pieces)

    def handler(_request: Request) -> Response:
        def body() -> Iterator[bytes]:
            for piece, wait in zip(pieces, delays, strict=True):
                time.sleep(wait)
                yield piece

        return Response(body(), content_type="text/event-stream")

    return handler


def delta(**fields: Any) -> bytes:
    return b"data: " + json.dumps({"choices": [{"index": 0, "delta": fields}]}).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def lock_is_free(project: Path) -> bool:
    """Every session lock in the launch folder can be taken (no process holds one)."""
    for path in (project / ".maia" / ".sessions").glob(".*.lock"):
        with path.open("a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            fcntl.flock(handle, fcntl.LOCK_UN)
    return True


def wait_gone(pid: int, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return  # a zombie: it has ended, its parent has not collected it yet
        time.sleep(0.1)
    raise AssertionError(f"process {pid} still runs")


# --- approvals -----------------------------------------------------------------------------------------


def test_always_in_this_project_saves_the_rule_and_the_same_call_is_not_asked_again(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    reply(server, tool_stream("Bash", {"command": "echo first run"}, "call_1"))
    reply(server, tool_stream("Bash", {"command": "echo second run"}, "call_2"))
    reply(server, text_stream("Both ran."))
    term = start()
    ready(term)
    term.send("run it twice\r")
    term.wait_for("Allow Bash: echo first run? (y/n/a/s=stop)")
    assert "│ echo first run" in term.text()  # the exact command, in the question
    term.answer("a")
    screen = term.wait_for("Always allow Bash(echo *)")
    assert "p: in this project" in screen and "t: this session only" in screen
    term.send("p")
    screen = term.wait_for("Both ran.")
    assert "yes, always in this project (Bash(echo *))" in screen
    assert "second run" in screen and "Allow Bash: echo second run" not in term.everything()  # not asked again
    local = json.loads((project / ".maia" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == ["Bash(echo *)"]
    assert "second run" in bodies(server)[2]["messages"][-1]["content"]


def test_always_for_this_session_is_not_written_anywhere(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    reply(server, tool_stream("Bash", {"command": "echo one"}, "call_1"))
    reply(server, tool_stream("Bash", {"command": "echo two"}, "call_2"))
    reply(server, text_stream("Done twice."))
    term = start()
    ready(term)
    term.send("go\r")
    term.wait_for("Allow Bash: echo one?")
    term.answer("a")
    term.wait_for("Always allow Bash(echo *)")
    term.send("t")  # this session (s, stop one step earlier, means nothing here)
    screen = term.wait_for("Done twice.")
    assert "yes, always in this session" in screen and "Allow Bash: echo two" not in term.everything()
    assert not (project / ".maia" / "settings.local.json").exists()


def test_permissions_lists_this_sessions_rule_and_remove_makes_the_call_ask_again(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    reply(server, tool_stream("Bash", {"command": "echo one"}, "call_1"))
    reply(server, text_stream("Ran once."))
    reply(server, tool_stream("Bash", {"command": "echo two"}, "call_2"))
    reply(server, text_stream("Not run."))
    term = start()
    ready(term)
    term.send("go\r")
    term.wait_for("Allow Bash: echo one?")
    term.answer("a")
    term.wait_for("Always allow Bash(echo *)")
    term.send("t")
    term.wait_for("Ran once.")
    term.send("/permissions\r")
    # three messages, three frames: wait for the last one too, on a settled screen
    listed = ("ALLOW  Bash(echo *)", "/permissions remove [RULE] removes")
    term.wait_settled(lambda: all(text in term.everything() for text in listed), "no whole /permissions")
    term.send("/permissions remove\r")
    term.wait_for("Rule to remove")
    term.send("\r")
    term.wait_for("Removed for this session: Bash(echo *)")
    term.send("again\r")
    term.wait_for("Allow Bash: echo two?")  # asked again: the rule no longer holds
    term.answer("n")
    term.wait_for("Not run.")


def test_diff_is_whole_and_in_a_repository_adds_git_diff(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    old = "".join(f"line {n}\n" for n in range(40))
    (project / "f.txt").write_text(old)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "f.txt"], ["commit", "-qm", "start"]):
        subprocess.run([*git, *args], cwd=project, check=True, capture_output=True)
    new = old.replace("line 0\n", "first\n").replace("line 39\n", "last\n")
    reply(server, tool_stream("Write", {"path": "f.txt", "content": new}))
    reply(server, text_stream("Written."))
    term = start(100, 60)
    ready(term)
    term.send("/mode edits\r")
    term.send("rewrite f.txt\r")
    term.wait_for("Written.")
    term.send("/diff\r")
    term.wait_settled(lambda: "diff --git a/f.txt b/f.txt" in term.everything(), "no git diff")
    screen = term.everything()
    screen = screen[screen.rindex("❯ /diff") :]  # the edit's own diff, shown when it was made, is above
    # the whole diff: both ends of the file, well past a preview's few lines, in MAIA's diff and in git's
    assert screen.count("+first") == 2 and screen.count("+last") == 2 and "git diff HEAD of these files" in screen


def test_a_long_diff_scrolls_inside_the_question(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    (project / "big.txt").write_text("".join(f"old line {n}\n" for n in range(60)))
    new = "".join(f"new line {n}\n" for n in range(60))
    reply(server, tool_stream("Write", {"path": "big.txt", "content": new}))
    reply(server, text_stream("Not written then."))
    term = start(100, 30)
    ready(term)
    term.send("rewrite big.txt\r")
    term.wait_for("Allow Write: big.txt?")
    screen = term.text()
    assert "-old line 0" in screen and "+new line 59" not in screen and " of 12" in screen  # 120 rows + header
    term.answer("\x1b[6~")  # PgDn
    term.wait_until(lambda: "-old line 0" not in term.text(), "PgDn did not scroll")
    term.send("\x1b[F")  # End
    term.wait_until(lambda: "+new line 59" in term.text(), "End did not reach the last line")
    term.send("n")
    term.wait_for("Not written then.")
    assert (project / "big.txt").read_text().startswith("old line 0")


def test_ctrl_c_at_a_question_refuses_and_stops_the_turn(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    reply(server, tool_stream("Write", {"path": "x.txt", "content": "x"}))
    term = start()
    ready(term)
    term.send("write x\r")
    term.wait_for("Allow Write: x.txt?")
    term.answer("\x03")
    term.wait_for("Iteration stopped.")
    assert not (project / "x.txt").exists()
    assert len(bodies(server)) == 1  # the model was not called again
    assert term.child.isalive()


def test_keys_typed_ahead_never_answer_a_question(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    server.expect_oneshot_request(CHAT).respond_with_handler(
        slow([tool_stream("Write", {"path": "x.txt", "content": "x"})], 1.5)
    )
    reply(server, text_stream("Refused, fine."))
    term = start()
    ready(term)
    term.send("write x\r")
    sentence = "yes sure, stop asking and say no"
    appeared_at: int | None = None
    for n, char in enumerate(sentence):  # typed steadily while the question appears
        if appeared_at is None and n == len(sentence) - 8:
            # a loaded machine can be slower than the typist: the last keys are typed once it is up
            term.wait_for("Allow Write: x.txt?")
        term.send(char)
        term.pump(0.06)
        if appeared_at is None and "Allow Write: x.txt?" in term.text():
            appeared_at = n
    # keys were typed both before the question (the model takes 1.5 s) and while it was on screen
    assert appeared_at is not None and 0 < appeared_at < len(sentence) - 3
    term.pump(0.6)
    assert "Allow Write: x.txt?" in term.text()  # still asked: nothing answered it
    assert not (project / "x.txt").exists() and "stopped" not in term.everything()
    term.answer("n")
    term.wait_for("Refused, fine.")
    assert draft(term) == sentence  # every key went to the draft


# --- modes ---------------------------------------------------------------------------------------------


def test_shift_tab_cycles_the_modes_shown_on_the_bar(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    reply(server, tool_stream("Write", {"path": "notes.txt", "content": "edited without asking\n"}))
    reply(server, text_stream("Written."))
    term = start()
    ready(term)
    assert "edits allowed" not in term.text() and "plan mode" not in term.text()
    term.send("\x1b[Z")
    term.wait_until(lambda: "edits allowed" in term.screen.display[-1], "no edits mode on the bar")
    term.send("write the notes\r")
    term.wait_for("Written.")
    assert (project / "notes.txt").read_text() == "edited without asking\n"  # not asked in edits mode
    term.send("\x1b[Z")
    term.wait_until(lambda: "auto:" in term.screen.display[-1], "no auto mode on the bar")
    term.send("\x1b[Z")
    term.wait_until(lambda: "plan mode" in term.screen.display[-1], "no plan mode on the bar")
    term.send("\x1b[Z")
    term.wait_until(lambda: "plan mode" not in term.screen.display[-1] and "edits" not in term.screen.display[-1])
    assert "Mode ask: calls that no rule allows ask first." in term.everything()


# --- keys ----------------------------------------------------------------------------------------------


def test_esc_interrupts_a_running_turn(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    server.expect_oneshot_request(CHAT).respond_with_handler(slow([delta(content="partial"), DONE], 0.2))
    term = start()
    ready(term)
    server.expect_oneshot_request(CHAT).respond_with_handler(slow([delta(content=" more"), DONE], 6))
    term.send("first\r")
    term.wait_for("partial")
    term.send("again\r")  # a second request, slow: Esc interrupts it
    term.wait_for("❯ again")
    term.send("\x1b")
    term.wait_for("Interrupted")
    assert term.child.isalive()


def test_ctrl_c_clears_a_draft_and_a_second_ctrl_c_after_an_interruption_does_not_quit(
    server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    term = start()
    ready(term)
    term.send("some draft")
    term.wait_until(lambda: draft(term) == "some draft")
    term.send("\x03")
    term.wait_until(lambda: "Your request" in draft(term), "Ctrl+C did not clear the draft")
    assert term.child.isalive()
    server.expect_oneshot_request(CHAT).respond_with_handler(slow([delta(content="begun"), DONE], [0, 8]))
    term.send("long one\r")
    term.wait_for("begun")
    term.send("\x03\x03")  # a panicked double Ctrl+C
    term.wait_for("Interrupted")
    term.pump(0.5)
    assert term.child.isalive() and "Your request" in draft(term)
    time.sleep(1.6)
    term.send("\x03")  # later, at the empty prompt: says how to quit, and does not yet
    term.wait_for("Press Ctrl+C again to quit")
    assert term.child.isalive()
    term.send("\x03")  # the second one within 2 s quits
    term.child.expect(pexpect.EOF, timeout=20)


def test_readline_keys_in_the_terminal(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    term = start()
    ready(term)
    term.send("alpha beta gamma")
    term.wait_until(lambda: draft(term) == "alpha beta gamma")
    term.send("\x1bb\x1bb\x0b")  # Alt+B twice, Ctrl+K
    term.wait_until(lambda: draft(term) == "alpha", "Alt+B / Ctrl+K")
    term.send("\x01\x19")  # Ctrl+A, Ctrl+Y
    term.wait_until(lambda: draft(term) == "beta gammaalpha", "Ctrl+Y")
    term.send("\x1b[1;5C\x1b\x7f")  # Ctrl+→ then Alt+Backspace
    term.wait_until(lambda: draft(term) == "beta", "Ctrl+→ / Alt+Backspace")
    term.send("\x1bf\n two\x1b[A")  # Alt+F, Ctrl+J, text, ↑: moves up a line, not into the history
    term.wait_until(lambda: draft(term) == "beta\n two")
    term.send("X")
    term.wait_until(lambda: draft(term) == "betaX\n two", "↑ did not move to the first line")


def test_ctrl_r_finds_an_earlier_request(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    reply(server, text_stream("One."))
    reply(server, text_stream("Two."))
    reply(server, text_stream("Again."))
    term = start()
    ready(term)
    term.send("run the migration\r")
    term.wait_for("One.")
    term.send("something else\r")
    term.wait_for("Two.")
    term.send("\x12migr")
    term.wait_until(lambda: "history search: migr" in term.text() and "run the migration" in draft(term))
    term.send("\r\r")  # taken into the box, then sent
    term.wait_for("Again.")
    assert last_user_text(bodies(server)[2]) == "run the migration"


def test_ctrl_l_redraws_the_box(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    term = start()
    ready(term)
    term.settle()
    term.stream.feed(b"\x1b[2J\x1b[Hgarbage from another program")  # the screen is messed up under MAIA
    assert "Your request" not in term.text()
    term.send("\x0c")
    term.wait_until(lambda: "Your request" in term.text() and "/ 128k" in term.text(), "Ctrl+L did not redraw")


def test_ctrl_z_suspends_and_fg_brings_the_chat_back(home: Path, project: Path, server: HTTPServer) -> None:
    env = {**chat_env(home, project), "PS1": "shell$ ", "HISTFILE": "/dev/null"}
    term = Terminal([], project, env, 100, 30, program=["bash", "--norc", "--noprofile", "-i"])
    try:
        term.wait_for("shell$")
        term.send(f"{sys.executable} -m maia chat -m scripted-openai\r")
        ready(term)
        term.send("\x1a")  # Ctrl+Z
        term.wait_for("Stopped")
        term.wait_until(lambda: "Your request" not in term.text(), "the box was left on the screen")
        term.send("fg\r")
        term.wait_until(lambda: "Your request" in term.text(), "fg did not bring the box back")
        term.send("typed after fg")
        term.wait_until(lambda: draft(term) == "typed after fg", "keys are not read in raw mode after fg")
        term.send("\x15\x04")  # Ctrl+U, Ctrl+D: quit
        term.wait_for("shell$ ", timeout=20)
    finally:
        term.close()


# --- the queue -----------------------------------------------------------------------------------------


def test_enter_during_a_turn_queues_the_message_and_sends_it_after(
    server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    server.expect_oneshot_request(CHAT).respond_with_handler(slow([delta(content="first answer"), DONE], 2.5))
    reply(server, text_stream("Second answer."))
    term = start()
    ready(term)
    term.send("first\r")
    term.wait_for("❯ first")
    term.send("dropped one\r")
    term.wait_for("queued: dropped one")
    term.send("\x1b")  # Esc drops the queued message; the turn goes on
    term.wait_until(lambda: "queued: dropped one" not in term.text())
    term.send("second\r")
    term.wait_for("queued: second")
    term.send("\x1b[A")  # ↑: back into the box, to edit
    term.wait_until(lambda: "queued:" not in term.text() and "second" in draft(term))
    term.send(" please\r")
    term.wait_for("queued: second please")
    term.wait_for("Second answer.")
    assert [last_user_text(b) for b in bodies(server)] == ["first", "second please"]
    assert "Interrupted" not in term.everything()


# --- completion ------------------------------------------------------------------------------------------


def test_slash_menu_runs_a_command_and_skills_run_as_slash_names(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    skill = project / ".maia" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: Say hello nicely\n---\nGreet $ARGUMENTS warmly.\n")
    reply(server, text_stream("Hello Bob!"))
    term = start()
    ready(term)
    term.send("/mo")
    term.wait_until(lambda: "❯ /model [NAME]" in term.text() and "/mode [MODE]" in term.text(), "no menu")
    term.send("de")  # filtered: the exact name first
    term.wait_until(lambda: "❯ /mode [MODE]" in term.text() and "/help" not in term.text(), "not filtered")
    term.send("\r")  # Enter runs it
    term.wait_for("Approval mode: ask.")
    term.send("/gr")
    term.wait_until(lambda: "/greet" in term.text() and "skill: Say hello nicely" in term.text(), "no skill")
    term.send("\t")
    term.wait_until(lambda: draft(term) == "/greet")
    term.send("Bob\r")
    term.wait_for("Hello Bob!")
    assert "Greet Bob warmly." in last_user_text(bodies(server)[0])


def test_at_opens_a_file_picker_and_tab_completes_the_path(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    (project / "src").mkdir()
    (project / "src" / "parser.py").write_text("def parse(): return 42\n")
    (project / "build").mkdir()
    (project / "build" / "parser.py").write_text("generated\n")
    (project / ".gitignore").write_text("build/\n")
    reply(server, text_stream("It returns 42."))
    term = start()
    ready(term)
    term.send("explain @pars")
    term.wait_until(lambda: "❯ src/parser.py" in term.text(), "no file picker")
    menu = term.text()
    assert menu.index("src/parser.py") < menu.index("build/parser.py")  # git-ignored files last
    term.send("\t")
    term.wait_until(lambda: draft(term) == "explain @src/parser.py")
    term.send("\r")
    term.wait_for("It returns 42.")
    assert "def parse(): return 42" in json.dumps(bodies(server)[0]["messages"])


# --- /status, /copy, lists ---------------------------------------------------------------------------------


def test_status_shows_model_context_session_mode_and_cost(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    reply(server, text_stream("Priced.", usage=(1200, 30)), headers={"x-litellm-response-cost": "0.0042"})
    term = start()
    ready(term)
    term.send("hello\r")
    term.wait_for("Priced.")
    term.send("/status\r")
    # the whole block, settled: while the answer's Markdown is still rendering, the chat previews what follows
    # it in its live area, cut at the top (a read then saw "Cost so far" without "Model:")
    whole = ("Model:", "Context:", "Session:", "Mode:", "Cost so far:  $0.0042", "No permission rules defined")
    screen = term.wait_settled(lambda: all(row in term.everything() for row in whole), "no whole /status")
    rows = {line.split(":")[0].split()[-1]: line.split(":", 1)[1].strip() for line in screen.split("\n") if ":" in line}
    assert rows["Model"] == "scripted-openai" and rows["Mode"] == "ask" and rows["Session"].startswith("session_")
    assert "/ 128,000 tokens" in screen and "Maximum context: 128,000 tokens" in screen
    assert "No permission rules defined" in screen  # the start-up details live here


def test_copy_puts_the_answer_or_a_code_block_on_the_clipboard(
    server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    reply(server, text_stream("Run this:\n\n```sh\nmake test\n```\n"))
    term = start()
    ready(term)
    term.send("how?\r")
    term.wait_for("make test")
    term.send("/copy 1\r")
    term.wait_for("Copied 9 characters to the clipboard.")
    assert f"52;c;{base64.b64encode(b'make test').decode()}" in term.filter.osc
    term.send("/copy 2\r")
    term.wait_for("The last answer has no code block 2.")


def test_model_chooser_starts_on_the_current_model(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    term = start(100, 30, "-m", "mock-litellm")
    term.wait_for("/status for details")
    term.send("/model\r")
    term.wait_for("Choose the model")
    assert "❯ mock-litellm" in term.text()
    term.send("\x1b")


def test_load_filters_as_you_type_and_delete_confirms_with_enter(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    for prompt in ("fix the parser", "write the docs"):
        reply(server, text_stream("Done."))
        term = start()
        ready(term)
        term.send(prompt + "\r")
        term.wait_for("Done.")
        idle(term)
        term.send("\x04")
        term.child.expect(pexpect.EOF, timeout=20)
    term = start()
    ready(term)
    term.send("/load\r")
    term.wait_for("Load a session")
    term.send("docs")
    term.wait_until(lambda: "write the docs" in term.text() and "fix the parser" not in term.text(), "no filter")
    term.send("\x1b")
    term.wait_until(lambda: "Load a session" not in term.text(), "Esc did not close the list")
    term.send("/delete\r")
    term.wait_for("Sessions to delete")
    term.send("\r")  # Enter confirms the highlighted session
    term.wait_for("Delete ")
    term.send("y")  # a question the user asked for (no turn runs): answered at once
    term.wait_for("Deleted ")
    assert len(list((project / ".maia" / ".sessions").glob("*.json"))) == 1


# --- live command output, reasoning, waiting --------------------------------------------------------------


def test_a_long_command_shows_its_time_and_last_lines_while_it_runs(
    server: HTTPServer, start: Callable[..., Terminal]
) -> None:
    command = "for i in 1 2 3 4 5 6 7 8; do echo step $i; sleep 0.5; done"
    reply(server, tool_stream("Bash", {"command": command}))
    reply(server, text_stream("Finished."))
    term = start()
    ready(term)
    term.send("count\r")
    term.wait_for("Allow Bash:")
    term.answer("y")
    term.wait_until(lambda: "│ step 3" in term.text() and " s)" in term.text(), "no live output")
    assert "for i in 1 2 3" in term.text()
    term.wait_for("Finished.")
    assert "│ step" not in term.text()  # the live view is gone once the command ended
    term.send("!for i in 1 2 3 4 5 6; do echo bang $i; sleep 0.5; done\r")
    term.wait_until(lambda: "│ bang 2" in term.text(), "no live output for !")
    term.wait_for("bang 6")


def test_ctrl_o_shows_the_reasoning_dim(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    reasoning = [delta(reasoning_content="Let me think about the tests.\n"), delta(reasoning_content="Done thinking.")]
    reply(server, sse(*[json.loads(p[6:]) for p in reasoning], {"choices": [{"index": 0, "delta": {"content": "A."}}]}))
    reply(server, sse(*[json.loads(p[6:]) for p in reasoning], {"choices": [{"index": 0, "delta": {"content": "B."}}]}))
    term = start()
    ready(term)
    term.send("first\r")
    term.wait_for("A.")
    assert "Let me think" not in term.everything()  # hidden by default
    term.send("\x0f")
    term.wait_for("Reasoning shown")
    term.send("second\r")
    term.wait_for("B.")
    screen = term.everything()
    assert "Let me think about the tests." in screen and "Done thinking." in screen
    row = next(n for n, line in enumerate(term.screen.display) if "Let me think" in line)
    column = term.screen.display[row].index("Let me")
    assert term.screen.buffer[row][column].fg != "default"  # dim


def test_a_silent_model_is_said_to_be_waited_for(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    server.expect_oneshot_request(CHAT).respond_with_handler(slow([delta(content="At last."), DONE], 7))
    term = start()
    ready(term)
    term.send("hello\r")
    term.wait_for("Waiting for the model (5 s)", timeout=30)
    term.wait_until(lambda: any("waiting for the model" in t for t in term.filter.titles), "no title")
    term.wait_for("At last.", timeout=30)
    term.wait_until(lambda: "Waiting for the model" not in term.text())


# --- start-up ----------------------------------------------------------------------------------------------


def test_start_up_fits_one_80x24_screen(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    term = start(80, 24)
    ready(term)
    term.settle()
    assert term.history() == []  # nothing scrolled away
    screen = term.text()
    assert "One agent, many models" in screen and "▀" in screen and "/status for details" in screen
    assert "No permission rules defined" not in screen  # details: /status


def test_an_mcp_server_down_is_marked_on_the_bar(
    server: HTTPServer, start: Callable[..., Terminal], home: Path, write_settings: Callable[..., Path]
) -> None:
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"docs": {"url": "http://127.0.0.1:9/mcp"}}}))
    write_settings(server.url_for(""), permissions={"allow": ["Mcp(docs)"]})
    term = start()
    ready(term)
    term.wait_until(lambda: "MCP down: docs" in term.screen.display[-1], "no MCP mark on the bar")


AGENT_MD = """---
name: rev
description: Reviews code.
---
# Instructions system
You review.
# Missions
Review what you are given.
# Output
A verdict.
"""


def test_an_agent_run_with_ampersand_says_so_once_and_its_answer_joins_the_next_request(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    (project / ".maia" / "agents" / "rev").mkdir(parents=True)
    (project / ".maia" / "agents" / "rev" / "AGENT.md").write_text(AGENT_MD)
    reply(server, text_stream("Verdict: all fine."))  # the sub-agent's only model call (a child process)
    reply(server, text_stream("Noted."))
    term = start()
    ready(term)
    term.send("&rev check main.py\r")
    # the summary is Markdown, rendered on a worker thread: until it is, the chat previews the line after it
    # ("Its answer joins…") alone in its live area; the test waits for both, on a settled screen
    ends = ("Verdict: all fine.", "Its answer joins your next request.")
    screen = term.wait_settled(lambda: all(text in term.everything() for text in ends), "no summary")
    assert "· 1 sub-agent ·" in screen  # the start-up line, in the singular
    assert screen.count("Verdict: all fine.") == 1 and screen.count('Sub-agent "rev" finished in') == 1, screen
    assert screen.index('Sub-agent "rev" finished in') < screen.index("Verdict: all fine.")
    assert screen.index("Verdict: all fine.") < screen.index("Its answer joins your next request.")
    term.send("thanks\r")
    term.wait_for("Noted.")
    sent = json.dumps(bodies(server)[-1]["messages"])
    assert "Verdict: all fine." in sent and "thanks" in sent


def test_a_request_typed_as_soon_as_the_box_shows_is_sent(server: HTTPServer, start: Callable[..., Terminal]) -> None:
    reply(server, text_stream("Handled."))
    term = start()
    term.wait_for("Your request")
    term.send("typed at once\r")  # as soon as the box is there: the application may still be starting
    term.wait_for("Handled.")
    assert last_user_text(bodies(server)[0]) == "typed at once"


# --- the terminal going away -------------------------------------------------------------------------------


def test_closing_the_terminal_at_a_question_ends_the_chat_and_frees_the_session(
    server: HTTPServer, start: Callable[..., Terminal], project: Path
) -> None:
    reply(server, text_stream("Saved first."))
    reply(server, tool_stream("Write", {"path": "x.txt", "content": "x"}))
    term = start()
    ready(term)
    term.send("one\r")
    term.wait_for("Saved first.")
    term.send("two\r")
    term.wait_for("Allow Write: x.txt?")
    assert not lock_is_free(project)
    pid = term.child.pid
    term.hang_up()  # the terminal window closes
    wait_gone(pid)
    assert lock_is_free(project) and not (project / "x.txt").exists()
    saved = next((project / ".maia" / ".sessions").glob("*.json")).read_text()
    assert "two" in saved


def test_sigterm_at_a_list_ends_the_chat(server: HTTPServer, start: Callable[..., Terminal], project: Path) -> None:
    reply(server, text_stream("Saved."))
    term = start()
    ready(term)
    term.send("one\r")
    term.wait_for("Saved.")
    term.send("/new\r")
    term.wait_for("New session")
    term.send("/delete\r")
    term.wait_for("Sessions to delete")
    term.child.kill(signal.SIGTERM)
    term.child.expect(pexpect.EOF, timeout=20)
    term.child.wait()
    assert term.child.exitstatus == 0 and lock_is_free(project)


def test_killing_the_terminal_program_at_the_start_up_chooser_ends_the_chat(
    server: HTTPServer, home: Path, project: Path
) -> None:
    # a "terminal program" holding the pseudo-terminal, with the chat inside it (no model: the chooser)
    parent = (
        "import fcntl, os, pty, struct, sys, termios, time\n"
        "pid, fd = pty.fork()\n"
        "if pid == 0:\n"
        "    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', 30, 100, 0, 0))\n"
        "    os.execvp(sys.executable, [sys.executable, '-m', 'maia', 'chat'])\n"
        "print(pid, flush=True)\n"
        "seen = b''\n"
        "while b'Choose the model' not in seen:\n"
        "    seen += os.read(fd, 65536)\n"
        "print('chooser', flush=True)\n"
        "time.sleep(600)\n"
    )
    holder = pexpect.spawn(
        sys.executable, ["-c", parent], cwd=str(project), env=chat_env(home, project), encoding="utf-8", timeout=30
    )
    try:
        holder.expect(r"(\d+)\r?\n")
        chat = int(holder.match.group(1))
        holder.expect("chooser")
        os.kill(holder.pid, signal.SIGKILL)  # the terminal program dies: its pseudo-terminal closes
        wait_gone(chat)
    finally:
        holder.close(force=True)
