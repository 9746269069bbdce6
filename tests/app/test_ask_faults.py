"""The faults found when ``maia ask`` ran against a real LiteLLM proxy, each reproduced with real processes
and a real HTTP server, then fixed (issue 10)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.app.helpers import CHAT, chat_bodies, maia, session_files, spawn, user_texts, wait_until
from tests.conftest import fixture_bytes
from tests.streams import sse, text_stream, tool_stream


def answer(server: HTTPServer, body: bytes, status: int = 200, **headers: str) -> None:
    """Queue one answer of the chat endpoint."""
    server.expect_oneshot_request(CHAT, method="POST").respond_with_data(
        body, status=status, headers=headers, content_type="text/event-stream" if status == 200 else "application/json"
    )


def last_user_content(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return str(next(m["content"] for m in reversed(messages) if m["role"] == "user"))


def held_answer(server: HTTPServer, text: str) -> threading.Event:
    """Queue an answer that streams ``text`` and then waits until the returned event is set."""
    release = threading.Event()

    def held(_request: Request) -> Response:
        def body() -> Iterator[bytes]:
            chunk = {"choices": [{"index": 0, "delta": {"content": text}}]}
            yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
            release.wait(60)
            yield b"data: [DONE]\n\n"

        return Response(body(), content_type="text/event-stream")

    server.expect_oneshot_request(CHAT).respond_with_handler(held)
    return release


# 1. a 429 after a run that left unanswered tool results must not lose the new prompt


def test_continue_after_unanswered_tool_results_keeps_the_new_prompt_through_a_429(
    server: HTTPServer, project: Path
) -> None:
    answer(server, tool_stream("TodoWrite", {"todos": []}))
    answer(server, b'{"error": {"message": "upstream exploded"}}', status=500)
    first = maia("ask", "-m", "m", "--allow", "TodoWrite", "--no-wait", "plan the work")
    assert first.returncode == 1, first.stderr
    (saved,) = session_files(project).values()
    assert saved["messages"][-1]["content"][0]["type"] == "tool_result"  # the run left tool results unanswered

    answer(server, b'{"error": {"message": "slow down"}}', status=429, **{"retry-after": "0"})
    answer(server, text_stream("Done, as asked.", (10, 3)))
    second = maia("ask", "-m", "m", "--continue", "now write the summary")
    assert second.returncode == 0, second.stderr
    assert second.stdout == "Done, as asked.\n"
    bodies = chat_bodies(server)
    assert last_user_content(bodies[-2]) == "now write the summary"  # the request that met the 429
    assert last_user_content(bodies[-1]) == "now write the summary"  # and its retry
    (saved,) = session_files(project).values()
    assert "now write the summary" in user_texts(saved)[-1]


# 2. two `maia ask --continue` on one session at once: no lost turn


def test_a_session_in_use_is_locked_and_no_turn_is_lost(server: HTTPServer, project: Path) -> None:
    answer(server, text_stream("first answer"))
    assert maia("ask", "-m", "m", "start").returncode == 0
    release = held_answer(server, "from A")
    a = spawn("ask", "-m", "m", "--continue", "turn A")
    try:
        wait_until(lambda: len(chat_bodies(server)) == 2, what="A's request")
        b = maia("ask", "-m", "m", "--continue", "turn B", timeout=60)
        assert b.returncode == 1, b.stderr
        assert f"in use by another MAIA (ask, process {a.pid})" in b.stderr
        assert "Traceback" not in b.stderr
    finally:
        release.set()
    _out, err = a.communicate(timeout=60)
    assert a.returncode == 0, err
    answer(server, text_stream("answer B"))
    again = maia("ask", "-m", "m", "--continue", "turn B")
    assert again.returncode == 0, again.stderr
    (saved,) = session_files(project).values()
    assert user_texts(saved) == ["start", "turn A", "turn B"]  # every turn kept, none lost


# 3. SIGHUP while a Bash tool runs: the turn is cancelled, the tool's processes killed, the session saved


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT])
def test_a_terminating_signal_kills_the_tool_processes_and_saves(
    server: HTTPServer, project: Path, sig: signal.Signals
) -> None:
    pid_file = project / "pid"
    answer(server, tool_stream("Bash", {"command": f"sleep 300 & echo $! > {pid_file}; wait"}))
    process = spawn("ask", "-m", "m", "--yes", "-o", "json", "run the long job")
    wait_until(lambda: pid_file.exists() and pid_file.read_text().strip() != "", what="the tool's process")
    grandchild = int(pid_file.read_text())
    process.send_signal(sig)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert json.loads(out)["status"] == "interrupted"
    assert "Traceback" not in err

    def gone() -> bool:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            return True
        return False

    wait_until(gone, timeout=20, what="the tool's process to be killed")
    (saved,) = session_files(project).values()
    last = saved["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and last[0]["isError"]  # the call is kept, marked interrupted
    assert "Interrupted by the user" in last[0]["content"]


# 4. disk full (here: a file-size limit) during the save: the answer is printed, one clear line, exit 1


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, 16_000))


def test_a_failed_save_prints_the_answer_and_one_clear_line(server: HTTPServer, project: Path, home: Path) -> None:
    answer(server, text_stream("short"))
    assert maia("ask", "-m", "m", "hello").returncode == 0
    (name,) = session_files(project)
    path = project / ".maia" / ".sessions" / f"{name}.json"
    before = path.read_bytes()
    big = "word " * 8000
    answer(server, text_stream(big))
    result = maia("ask", "-m", "m", "-o", "json", "--continue", "say a lot", preexec=_limit_file_size)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["answer"] == big and report["status"] == "error"  # answered, but not saved
    assert "could not be saved" in report["error"] and "File too large" in report["error"]
    assert "Traceback" not in result.stderr
    assert path.read_bytes() == before  # the old file is intact
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


# 5. asyncio's "aclose(): asynchronous generator is already running" never reaches stderr


def test_no_asyncio_noise_on_stderr(server: HTTPServer) -> None:
    answer(server, tool_stream("TodoWrite", {"todos": []}))
    answer(server, text_stream("ok"))
    result = maia("ask", "-m", "m", "--allow", "TodoWrite", "--no-save", "plan")
    assert result.returncode == 0, result.stderr
    assert "aclose" not in result.stderr and "asynchronous generator" not in result.stderr
    assert "Task was destroyed" not in result.stderr and "Unclosed" not in result.stderr


# 6. a tool call cut by the output limit: the model is told, the transcript keeps what arrived


def test_a_cut_tool_call_is_explained_to_the_model(server: HTTPServer, project: Path) -> None:
    answer(server, fixture_bytes("scripted-openai-truncated-tool-call.sse"))
    answer(server, text_stream("I will split it."))
    result = maia("ask", "-m", "scripted-openai", "--allow", "Write", "write the big file")
    assert result.returncode == 0, result.stderr
    second = chat_bodies(server)[1]["messages"]
    call = next(m for m in second if m["role"] == "assistant")["tool_calls"][0]
    arguments = json.loads(call["function"]["arguments"])  # valid JSON, never an empty call
    assert arguments["received_characters"] > 0 and arguments["truncated_arguments"]
    tool = next(m for m in second if m["role"] == "tool")
    assert f"cut off after {arguments['received_characters']} characters" in tool["content"]
    assert "split" in tool["content"] and "Parameters received" not in tool["content"]
    (saved,) = session_files(project).values()
    block = next(b for m in saved["messages"] for b in m["content"] if b["type"] == "tool_use")
    assert len(block["rawArguments"]) == arguments["received_characters"]


# 7. new files get 0666 & ~umask; sessions stay private


def test_new_files_get_the_usual_mode_and_sessions_stay_private(server: HTTPServer, project: Path) -> None:
    answer(server, tool_stream("Write", {"path": "made.txt", "content": "hi\n"}))
    answer(server, text_stream("written"))
    result = maia("ask", "-m", "m", "--allow", "Write", "make a file", preexec=lambda: os.umask(0o027) and None)
    assert result.returncode == 0, result.stderr
    assert (project / "made.txt").stat().st_mode & 0o777 == 0o640
    (name,) = session_files(project)
    assert (project / ".maia" / ".sessions" / f"{name}.json").stat().st_mode & 0o777 == 0o600


# 9, 18. a key the proxy refuses: say so, name the setting and the file actually used


def test_a_refused_key_names_the_setting_and_the_file(server: HTTPServer, home: Path) -> None:
    answer(server, fixture_bytes("proxy-auth-wrong.json"), status=400)
    result = maia("ask", "-m", "m", "--no-save", "hi")
    assert result.returncode == 1
    assert "did not accept the API key" in result.stderr
    assert f"LiteLLM_API_Key in {home / 'settings.json'}" in result.stderr


# 10. a transient server failure is retried with backoff, in every front end


def test_an_overloaded_server_is_retried(server: HTTPServer, quick_retries: float) -> None:
    answer(server, b'{"error": {"message": "Service Unavailable"}}', status=503, **{"retry-after": "0"})
    answer(server, fixture_bytes("scripted-openai-overloaded.sse"), status=529)
    answer(server, text_stream("finally"))
    result = maia("ask", "-m", "scripted-openai", "--no-save", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "finally\n"
    assert result.stderr.count("The server is overloaded") == 2
    assert len(chat_bodies(server)) == 3
    assert result.stderr.count("(0 s)") == 2  # Retry-After: 0, then MAIA's own 2 s made a thousandth (quick_retries)


def test_a_bad_retry_scale_is_a_clear_error_before_any_request(
    server: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAIA_RETRY_SCALE", "fast")
    result = maia("ask", "-m", "scripted-openai", "--no-save", "hi")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "MAIA_RETRY_SCALE must be a number, 0 or more (it multiplies the waits before a retry): 'fast'." in (
        result.stderr
    )
    assert chat_bodies(server) == []


# 11, 16. --continue: the newest session of its own kind, a broken newer one reported, the choice said


def test_continue_picks_its_own_kind_and_reports_a_broken_newer_session(server: HTTPServer, project: Path) -> None:
    answer(server, text_stream("one"))
    assert maia("ask", "-m", "m", "first ask session").returncode == 0
    (ask_name,) = session_files(project)
    folder = project / ".maia" / ".sessions"
    time.sleep(1.1)  # session times have a one-second resolution
    (folder / "chat_session.json").write_text(
        json.dumps({"origin": "chat", "updatedAt": "2999-01-01T00:00:00+00:00", "messages": []})
    )
    (folder / "broken.json").write_text("{ not json")
    os.utime(folder / "broken.json", (time.time() + 60, time.time() + 60))
    answer(server, text_stream("two"))
    result = maia("ask", "-m", "m", "--continue", "more")
    assert result.returncode == 0, result.stderr
    assert "The newer session broken cannot be read" in result.stderr
    assert f"Continuing maia ask session {ask_name}" in result.stderr
    assert [m["content"] for m in chat_bodies(server)[-1]["messages"] if m["role"] == "user"] == [
        "first ask session",
        "more",
    ]


# 12. a hung proxy: feedback while waiting, and a configurable read timeout with a clear error


def test_a_silent_proxy_gets_feedback_then_a_clear_timeout(server: HTTPServer, write_settings: object) -> None:
    def silent(_request: Request) -> Response:
        def body() -> Iterator[bytes]:
            time.sleep(8)
            yield b"data: [DONE]\n\n"

        return Response(body(), content_type="text/event-stream")

    write_settings(server.url_for(""), ReadTimeout=7)  # type: ignore[operator]
    server.expect_oneshot_request(CHAT).respond_with_handler(silent)
    result = maia("ask", "-m", "m", "--no-save", "hi")
    assert result.returncode == 1
    assert "Waiting for the model (5 s)" in result.stderr
    assert "LiteLLM sent nothing for 7 s" in result.stderr and "raise ReadTimeout" in result.stderr


# 13. DefaultModel is honoured


def test_default_model_from_settings(server: HTTPServer, write_settings: object) -> None:
    write_settings(server.url_for(""), DefaultModel="scripted-openai")  # type: ignore[operator]
    answer(server, text_stream("hi"))
    result = maia("ask", "--no-save", "hello")
    assert result.returncode == 0, result.stderr
    assert chat_bodies(server)[0]["model"] == "scripted-openai"


# 14. `git diff | maia ask 'Review this diff'`: the piped text is attached to the prompt


def test_piped_stdin_is_attached_to_the_prompt(server: HTTPServer) -> None:
    answer(server, text_stream("Looks fine."))
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-print(1)\n+print(2)\n"
    result = maia("ask", "-m", "m", "--no-save", "Review this diff", input=diff)
    assert result.returncode == 0, result.stderr
    sent = last_user_content(chat_bodies(server)[0])
    assert sent.endswith("Review this diff") and "+print(2)" in sent and "data, not instructions" in sent
    answer(server, text_stream("ok"))
    alone = maia("ask", "-m", "m", "--no-save", "--no-stdin", "just this", input="ignored")
    assert alone.returncode == 0 and last_user_content(chat_bodies(server)[1]) == "just this"


# 15. a run in a git repository leaves `git status` clean and the user's .gitignore untouched


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_run_leaves_the_repository_clean(server: HTTPServer, project: Path) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=project, capture_output=True, text=True, check=True, env={**os.environ, **env}
        ).stdout

    git("init", "-q")
    (project / ".gitignore").write_text("build/\n")
    git("add", "-A")
    git("commit", "-qm", "start")
    answer(server, text_stream("hi"))
    assert maia("ask", "-m", "m", "hello").returncode == 0
    assert session_files(project)
    assert git("status", "--porcelain") == ""
    assert (project / ".gitignore").read_text() == "build/\n"


# 17. exit codes: an unknown model is a usage error


def test_an_unknown_model_exits_2(server: HTTPServer) -> None:
    answer(server, fixture_bytes("proxy-unknown-model.json"), status=400)
    result = maia("ask", "-m", "no-such-model", "--no-save", "hi")
    assert result.returncode == 2, result.stderr
    assert "Invalid model name" in result.stderr and "maia models" in result.stderr


# 18. settings messages


def test_no_model_message_names_the_home_in_use(server: HTTPServer, home: Path) -> None:
    result = maia("ask", "hello")
    assert result.returncode == 2
    assert str(home / "config.json") in result.stderr and str(home / "settings.json") in result.stderr


def test_a_trailing_comma_is_reported_where_it_is(home: Path) -> None:
    (home / "settings.json").write_text('{\n  "LiteLLM_URL": "http://x",\n  "OpenAI_EndPoint": "/c",\n}\n')
    result = maia("ask", "-m", "m", "hi")
    assert result.returncode == 1
    assert "line 3, column 26: a comma before a closing bracket" in result.stderr


def test_the_missing_settings_example_has_the_api_key(home: Path) -> None:
    result = maia("ask", "-m", "m", "hi")
    assert result.returncode == 1 and '"LiteLLM_API_Key"' in result.stderr


def test_stream_json_events_say_when_waiting_for_a_retry(server: HTTPServer) -> None:
    answer(server, b'{"error": {"message": "slow down"}}', status=429, **{"retry-after": "0"})
    answer(server, sse({"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}))
    result = maia("ask", "-m", "m", "-o", "stream-json", "--no-save", "hi")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert "rate_limited" in kinds and kinds[-1] == "final" and events[-1]["answer"] == "ok"


# issue 19: a long run that crosses the context maximum still reports every call and the answer


def test_the_report_survives_compactions_in_the_middle_of_a_run(
    server: HTTPServer, project: Path, write_settings: object
) -> None:
    from maia.context.compaction import SUMMARY_PROMPT

    write_settings(server.url_for(""), MaxContextTokens=6000)  # type: ignore[operator]
    calls = {"tools": 0, "summaries": 0}

    def model(request: Request) -> Response:
        body = json.loads(request.data)
        last = body["messages"][-1]
        if last["role"] == "user" and SUMMARY_PROMPT in str(last["content"]):
            calls["summaries"] += 1
            return Response(
                text_stream("## Project context\n- notes\n## Next steps\n- go on"), mimetype="text/event-stream"
            )
        if calls["tools"] < 50:
            calls["tools"] += 1
            todo = {"todos": [{"content": f"step {calls['tools']} " + "x" * 400, "status": "pending"}]}
            return Response(tool_stream("TodoWrite", todo, f"call_{calls['tools']}"), mimetype="text/event-stream")
        return Response(text_stream("All fifty steps are planned."), mimetype="text/event-stream")

    server.expect_request(CHAT).respond_with_handler(model)
    result = maia("ask", "-m", "m", "-o", "json", "--allow", "TodoWrite", "--max-iterations", "60", "plan 50 steps")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert calls["summaries"] >= 1  # the run did cross the maximum
    assert report["answer"] == "All fifty steps are planned."
    assert [c["id"] for c in report["tool_calls"]] == [f"call_{n}" for n in range(1, 51)]
    assert all(c["output"] is not None for c in report["tool_calls"])


# issue 11: --yes answers "no rule applies", never a question that comes from doubt about a deny rule


def test_yes_refuses_an_ask_that_comes_from_doubt(server: HTTPServer, project: Path, write_settings: object) -> None:
    write_settings(server.url_for(""), permissions={"deny": ["Bash(rm *)"]})  # type: ignore[operator]
    marker = project / "ran"
    answer(server, tool_stream("Bash", {"command": f'X="touch {marker}"; eval "$X"'}, "call_doubt"))
    answer(server, tool_stream("Bash", {"command": f"touch {project / 'plain'}"}, "call_plain"))
    answer(server, text_stream("done"))
    result = maia("ask", "-m", "m", "--yes", "-o", "json", "--no-save", "go")
    assert result.returncode == 0, result.stderr
    calls = {c["id"]: c for c in json.loads(result.stdout)["tool_calls"]}
    assert calls["call_doubt"]["is_error"] and "comes from doubt" in calls["call_doubt"]["output"]
    assert not marker.exists()
    assert not calls["call_plain"]["is_error"] and (project / "plain").exists()


# review: a settings file whose rules cannot be read never makes MAIA act as if it had none


def test_unreadable_rules_stop_a_script_and_make_the_chat_ask(server: HTTPServer, project: Path, home: Path) -> None:
    from maia.app.loadout import assemble
    from maia.tools import builtin_tools

    (project / ".maia").mkdir()
    (project / ".maia" / "settings.json").write_text('{"permissions": {"deny": ["Bash(rm *)"],}}')
    victim = project / "victim.txt"
    victim.write_text("keep me")
    answer(server, tool_stream("Bash", {"command": f"rm {victim}"}))
    result = maia("ask", "-m", "m", "--yes", "--no-save", "clean up")
    assert result.returncode == 1 and "cannot be read" in result.stderr
    assert victim.exists() and not chat_bodies(server)  # nothing was sent, nothing ran
    (project / ".maia" / "settings.json").write_text('{"permissions": {"deny": ["Bash(rm *"]}}')  # a bad entry
    loadout = assemble(project, home, builtin_tools(), {}, extra_allow=["Bash(ls *)"])
    decision = loadout.permission_check()("Bash", {"command": "ls"})
    assert decision.verdict == "ask" and decision.doubt and "cannot be read" in decision.reason


def test_a_session_freed_while_waiting_is_read_again(server: HTTPServer, project: Path) -> None:
    answer(server, text_stream("first answer"))
    assert maia("ask", "-m", "m", "start").returncode == 0
    release = held_answer(server, "from A")
    answer(server, text_stream("answer B"))
    a = spawn("ask", "-m", "m", "--continue", "turn A")
    b: subprocess.Popen[str] | None = None
    try:
        wait_until(lambda: len(chat_bodies(server)) == 2, what="A's request")
        b = spawn("ask", "-m", "m", "--continue", "turn B")
        assert b.stderr is not None
        line = b.stderr.readline()  # B chose the session (and now waits for A to let it go)
        assert "Continuing maia ask session" in line
    finally:
        release.set()
    assert a.wait(timeout=60) == 0
    _out, err = b.communicate(timeout=60)
    assert b.returncode == 0, err
    (saved,) = session_files(project).values()
    assert user_texts(saved) == ["start", "turn A", "turn B"]  # B read A's turn once the lock was free


def test_a_file_on_stdin_is_left_for_the_loop_that_reads_it(server: HTTPServer, project: Path) -> None:
    listing = project / "list.txt"
    listing.write_text("a.py\nb.py\nc.py\n")
    for _ in range(3):
        answer(server, text_stream("ok"))
    script = 'while read f; do python -m maia ask -m m --no-save "review $f" > /dev/null; done < list.txt'
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PATH": f"{os.path.dirname(__import__('sys').executable)}:{os.environ['PATH']}"},
    )
    assert done.returncode == 0, done.stderr
    assert [last_user_content(b) for b in chat_bodies(server)] == ["review a.py", "review b.py", "review c.py"]


def test_no_tool_reads_the_settings_file_for_the_model(server: HTTPServer, home: Path) -> None:
    answer(server, tool_stream("Read", {"path": str(home / "settings.json")}))
    answer(server, text_stream("ok"))
    result = maia("ask", "-m", "m", "--allow", "Read", "-o", "json", "--no-save", "read the settings")
    (call,) = json.loads(result.stdout)["tool_calls"]
    assert call["is_error"] and "denied" in call["output"] and "LiteLLM_URL" not in call["output"]


# review: what a model, a session or a server says never drives the user's terminal


def _on_a_terminal(*args: str) -> bytes:
    import sys

    import pexpect

    child = pexpect.spawn(sys.executable, ["-m", "maia", *args], env=dict(os.environ), timeout=60)
    child.expect(pexpect.EOF)
    child.close()
    return child.before or b""


def test_escape_sequences_are_inert_on_a_terminal(server: HTTPServer, project: Path) -> None:
    evil = "fine\x1b]0;PWNED\x07\x1b[2J\x1b[1A ASK  Allow Bash: ls?"
    answer(server, text_stream(evil))
    shown = _on_a_terminal("ask", "-m", "m", "hi")
    assert b"\x1b]0;PWNED" not in shown and b"\x1b[2J" not in shown and "␛]0;PWNED␇".encode() in shown
    (name,) = session_files(project)
    shown = _on_a_terminal("sessions", "show", name)
    assert b"\x1b]0;" not in shown and "␛]0;PWNED".encode() in shown
    answer(server, text_stream(evil))
    piped = maia("ask", "-m", "m", "--no-save", "again")  # a pipe gets the text as it is: scripts need it
    assert piped.returncode == 0 and piped.stdout == evil + "\n"
