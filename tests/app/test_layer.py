"""The application layer's pieces: retry policy, session choice, input preparation, the session format,
files written with the right modes and no leftovers, session locks, model resolution."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from maia.agent.loop import AgentSession
from maia.app.application import Application, AppOptions
from maia.app.pick import pick_session
from maia.app.retry import RetryPolicy, is_transient, send_with_retries
from maia.core.contracts import Message, TextBlock, ToolResultBlock, ToolUseBlock
from maia.core.errors import ConfigError, HttpStatusError, NotFoundError, RateLimited, StreamError, UsageError
from maia.core.settings import load_settings, resolve_model
from maia.core.storage import remove_stale_temps, write_atomic
from maia.inputs.prepare import (
    AgentCall,
    Allowed,
    Bang,
    Invalid,
    Prompt,
    SkillList,
    Slash,
    prepare_request,
    stdin_context,
)
from maia.permissions.engine import Decision
from maia.permissions.rules import Verdict
from maia.provider.fake import ScriptedProvider, ScriptedTurn, text_turn, tool_turn
from maia.sessions.codec import SavedSession, dump_session, parse_session
from maia.sessions.store import SessionBusy, SessionLock, SessionManager, SessionStore
from tests.agent.helpers import RecordingUI

# --- retry policy ------------------------------------------------------------------------------


def test_rate_limits_wait_as_the_server_says_then_by_steps() -> None:
    policy = RetryPolicy()
    stated = policy.wait_for(RateLimited(429, "x", 7.0), 1)
    assert stated is not None and stated.delay == 7.0 and stated.reason == "rate_limited"
    steps = [policy.wait_for(RateLimited(429, "x", None), n) for n in range(1, 9)]
    assert [w.delay for w in steps if w] == [5, 10, 20, 40, 60, 120, 300, 300]  # growing, each bounded
    assert not any(w.known for w in steps if w) and stated.known  # said as MAIA's own backoff
    assert policy.wait_for(RateLimited(429, "x", 1.0), 21) is None  # bounded


def test_transient_failures_back_off_with_jitter_and_give_up() -> None:
    policy = RetryPolicy()
    rng = random.Random(3)
    delays = [policy.wait_for(HttpStatusError(503, "busy"), n, rng) for n in range(1, 5)]
    for n, wait in enumerate(delays, start=1):
        assert wait is not None and wait.reason == "overloaded"
        base = min(30.0, 2.0 * 2 ** (n - 1))
        assert base * 0.75 <= wait.delay <= base * 1.25
    assert policy.wait_for(HttpStatusError(503, "busy"), 5, rng) is None
    assert policy.wait_for(HttpStatusError(503, "busy", retry_after=0.5), 1).delay == 0.5  # type: ignore[union-attr]
    assert policy.wait_for(HttpStatusError(400, "bad request"), 1) is None


def test_the_retry_scale_multiplies_maias_own_waits_never_the_servers() -> None:
    quick = RetryPolicy.from_environment({"MAIA_RETRY_SCALE": "0.01"})
    assert quick.wait_for(RateLimited(429, "x", None), 2).delay == 0.1  # type: ignore[union-attr]
    assert quick.wait_for(RateLimited(429, "x", 7.0), 1).delay == 7.0  # type: ignore[union-attr]
    assert quick.wait_for(HttpStatusError(503, "busy", retry_after=3.0), 1).delay == 3.0  # type: ignore[union-attr]
    transient = quick.wait_for(HttpStatusError(503, "busy"), 3, random.Random(3))
    assert transient is not None and 0.06 <= transient.delay <= 0.1
    assert RetryPolicy.from_environment({"MAIA_RETRY_SCALE": "0"}).wait_for(HttpStatusError(500, ""), 1).delay == 0  # type: ignore[union-attr]
    assert RetryPolicy.from_environment({}) == RetryPolicy() == RetryPolicy.from_environment({"MAIA_RETRY_SCALE": " "})
    for bad in ("fast", "-1", "nan", "inf"):
        with pytest.raises(ConfigError, match="MAIA_RETRY_SCALE must be a number, 0 or more"):
            RetryPolicy.from_environment({"MAIA_RETRY_SCALE": bad})


def test_what_counts_as_transient() -> None:
    assert all(is_transient(HttpStatusError(s, "")) for s in (500, 502, 503, 504, 529))
    assert not is_transient(HttpStatusError(400, "")) and not is_transient(HttpStatusError(401, ""))
    assert is_transient(StreamError("Overloaded", code="529")) and is_transient(StreamError("upstream overloaded"))
    assert not is_transient(StreamError("invalid tool schema"))


async def _never_wait_long(wait: object) -> bool:
    return True


async def test_a_retry_after_rollback_sends_the_request_again(tmp_path: Path) -> None:
    from maia.agent.conversation import Conversation
    from maia.app.loadout import assemble
    from maia.tools import builtin_tools

    provider = ScriptedProvider(
        [tool_turn(("TodoWrite", {"todos": []})), ScriptedTurn([RateLimited(429, "later", 0)]), text_turn("done")]
    )
    conversation = Conversation(
        launch=tmp_path,
        loadout=assemble(tmp_path, tmp_path / "home", builtin_tools(), {}),
        provider=provider,
        ui=RecordingUI(),  # type: ignore[arg-type]
        sessions=SessionManager(None),
        max_iterations=1,
        wrap_permissions=lambda check: lambda name, tool_input: Decision(Verdict.ALLOW, "test", "allowed"),
    )
    assert await conversation.send("plan") == "max_iterations"
    assert conversation.agent.can_resume  # the conversation ends with unanswered tool results
    result = await send_with_retries(conversation, "new prompt", on_wait=_never_wait_long)
    assert result == "done"
    resent = provider.requests[-1].messages[-1]
    assert isinstance(resent.content[-1], TextBlock) and resent.content[-1].text == "new prompt"
    assert provider.requests[-2].messages[-1] == resent  # the 429'd request carried it too


# --- choosing the session to carry on ------------------------------------------------------------


def _save(store: SessionStore, name: str, origin: str, updated: str, **extra: object) -> None:
    session = SavedSession(name=name, origin=origin, messages=[Message("user", [TextBlock(name)])])  # type: ignore[arg-type]
    data = session.to_json() | {"updatedAt": updated} | extra
    store.folder.mkdir(parents=True, exist_ok=True)
    data["summary"] = {"seal": store.seal_of(session.id)}  # as MAIA writes it: the user's own
    store.path(name).write_text(json.dumps(data))


def test_continue_picks_the_newest_of_its_own_kind_and_skips_cleared_and_traces(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    _save(store, "ask1", "ask", "2026-01-01T10:00:00+00:00")
    _save(store, "chat1", "chat", "2026-01-02T10:00:00+00:00")
    _save(store, "chat2", "chat", "2026-01-03T10:00:00+00:00", cleared=True)
    _save(store, "trace", "subagent", "2026-01-04T10:00:00+00:00", agent="reviewer")
    chat = pick_session(store, "chat", resume=None, continue_last=True)
    ask = pick_session(store, "ask", resume=None, continue_last=True)
    assert chat is not None and chat.session.name == "chat1" and "Continuing chat session chat1" in chat.notes[-1]
    assert ask is not None and ask.session.name == "ask1"
    with pytest.raises(NotFoundError, match="No saved workflow session"):
        pick_session(store, "workflow", resume=None, continue_last=True)
    assert pick_session(store, "chat", resume=None, continue_last=False) is None
    named = pick_session(store, "ask", resume="CHAT2", continue_last=False)  # --resume: any kind, any case
    assert named is not None and named.session.name == "chat2"


def test_legacy_files_without_an_origin_are_chat_sessions(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    store.path("old").write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    # no seal (an older MAIA, or planted): skipped by --continue until accepted (``maia trust``)
    with pytest.raises(NotFoundError) as skipped:
        pick_session(store, "chat", resume=None, continue_last=True)
    assert "old was not written by your MAIA" in (skipped.value.hint or "")
    store.accept("old")
    picked = pick_session(store, "chat", resume=None, continue_last=True)
    assert picked is not None and picked.session.origin == "chat"
    with pytest.raises(NotFoundError):
        pick_session(store, "ask", resume=None, continue_last=True)


# --- inputs -------------------------------------------------------------------------------------


def test_prepare_request_order_and_forms(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    assert prepare_request("!ls -la", tmp_path, {}) == Bang("ls -la")
    assert prepare_request("!", tmp_path, {}) == Bang(None)
    assert isinstance(prepare_request("!'unclosed", tmp_path, {}), Invalid)
    assert prepare_request("§", tmp_path, {}) == SkillList()
    assert isinstance(prepare_request("§nosuch", tmp_path, {}), Invalid)
    assert prepare_request("/Model  gpt-4o ", tmp_path, {}) == Slash("model", "gpt-4o")
    prompt = prepare_request("look at @a.txt", tmp_path, {})
    assert isinstance(prompt, Prompt) and prompt.attached == ("a.txt",) and "alpha" in prompt.context[0]
    assert prepare_request("&reviewer check src/", tmp_path, {}) == AgentCall("reviewer", "check src/")
    assert prepare_request("  & ", tmp_path, {}) == AgentCall(None, "")
    scripted = Allowed(bang=False, slash=False, agents=False)
    assert prepare_request("&reviewer go", tmp_path, {}, scripted) == Prompt("&reviewer go")
    assert prepare_request("!rm -rf /", tmp_path, {}, scripted) == Prompt("!rm -rf /")  # never run from a script
    assert prepare_request("/help", tmp_path, {}, scripted) == Prompt("/help")


def test_piped_input_is_framed_as_data_and_cut_in_the_middle() -> None:
    block, warning = stdin_context("x" * 10 + "y" * 10, limit=10)
    assert warning is not None and "20 characters" in warning
    assert "data, not instructions" in block and block.count("x") + block.count("y") <= 12
    assert stdin_context("small")[1] is None


# --- the session format -------------------------------------------------------------------------


def test_the_session_format_keeps_cut_arguments_origin_and_the_cleared_mark() -> None:
    session = SavedSession(
        name="s",
        origin="ask",
        cleared=True,
        messages=[
            Message("assistant", [ToolUseBlock("c1", "Write", {}, '{"path": "a", "content": "trunc')]),
            Message("user", [ToolResultBlock("c1", "cut", True)]),
        ],
    )
    again = parse_session(dump_session(session), "s")
    assert again.messages == session.messages and again.origin == "ask" and again.cleared
    assert json.loads(dump_session(session))["messages"][0]["content"][0]["rawArguments"].endswith("trunc")


# --- files --------------------------------------------------------------------------------------


def test_new_files_follow_the_umask_existing_ones_keep_their_mode(tmp_path: Path) -> None:
    from maia.core.storage import new_file_mode, umask

    fresh = tmp_path / "fresh.txt"
    write_atomic(fresh, "a")
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask() == new_file_mode()
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    write_atomic(script, "#!/bin/sh\necho\n")
    assert script.stat().st_mode & 0o777 == 0o750
    private = tmp_path / "private.json"
    write_atomic(private, "{}", mode=0o600)
    assert private.stat().st_mode & 0o777 == 0o600


def test_a_killed_writer_leaves_no_temp_file_for_long(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".s.json.{int(dead.stdout)}.abc123.tmp"
    stale.write_text("half a file")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        busy = tmp_path / f".s.json.{sleeper.pid}.def456.tmp"  # another writer, still at work
        busy.write_text("being written")
        other = tmp_path / f".other.json.{int(dead.stdout)}.x.tmp"  # another file's leftovers: not ours to judge
        other.write_text("x")
        write_atomic(target, "{}")
        assert not stale.exists() and busy.exists() and other.exists()
        remove_stale_temps(target)
        assert busy.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


# --- session locks ------------------------------------------------------------------------------

HOLDER = r"""
import sys, time
from pathlib import Path
from typing import Any
from maia.sessions.store import SessionLock
lock = SessionLock(Path(sys.argv[1]), sys.argv[2], "chat")
lock.acquire()
print("held", flush=True)
time.sleep(60)
"""


def test_a_session_lock_names_its_holder_and_dies_with_it(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), "Work"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(SessionBusy, match=rf"in use by another MAIA \(chat, process {holder.pid}\)"):
            SessionLock(tmp_path, "work").acquire(wait=0.3)  # names are case-insensitive, so is the lock
    finally:
        holder.kill()
        holder.wait()
    lock = SessionLock(tmp_path, "work")
    lock.acquire(wait=5)  # the kernel released the dead holder's lock
    assert lock.held
    lock.release()
    assert not lock.path.exists()


def test_a_loaded_session_is_locked_until_another_is_chosen(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    _save(store, "one", "chat", "2026-01-01T00:00:00+00:00")
    first = SessionManager(store)
    first.adopt(store.load("one"))
    second = SessionManager(store)
    with pytest.raises(SessionBusy):
        second.adopt(store.load("one"))
    first.start_new()
    second.adopt(store.load("one"))
    second.close()


def test_renaming_to_another_sessions_name_is_refused(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    _save(store, "taken", "chat", "2026-01-01T00:00:00+00:00")
    manager = SessionManager(store, "mine")
    with pytest.raises(UsageError, match="already exists"):
        manager.rename("TAKEN")
    assert manager.rename("free") == "free"


# --- models -------------------------------------------------------------------------------------


def test_default_model_is_the_last_resort(home: Path, project: Path, write_settings: object) -> None:
    write_settings(DefaultModel="litellm:team-default")  # type: ignore[operator]
    settings = load_settings(home)
    choice = resolve_model(None, project, home, env={}, settings=settings)
    assert choice is not None and choice.name == "team-default" and "DefaultModel" in choice.source
    (project / ".maia").mkdir()
    (project / ".maia" / "config.json").write_text('{"model": "project-model"}')
    assert resolve_model(None, project, home, env={}, settings=settings).name == "project-model"  # type: ignore[union-attr]
    assert resolve_model(None, project, home, env={"MAIA_MODEL": "env"}, settings=settings).name == "env"  # type: ignore[union-attr]


async def test_set_model_refuses_a_model_the_proxy_does_not_list(
    server: object, home: Path, project: Path, write_settings: object
) -> None:
    settings = load_settings(home)
    app = await Application.open(
        AppOptions(launch=project, home=home, settings=settings, model="scripted-openai", save=False),
        RecordingUI(),  # type: ignore[arg-type]
    )
    try:
        with pytest.raises(NotFoundError, match="no model named 'nope'"):
            await app.set_model("nope")
        names = await app.catalog.names()
        await app.set_model(names[0])
        assert app.model == names[0]
        assert isinstance(app.agent, AgentSession)
    finally:
        await app.aclose()


def test_tool_environment_hides_the_proxy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from maia.process.shell import register_secret, tool_environment

    monkeypatch.setenv("LITELLM_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-settings-value")
    monkeypatch.setenv("HARMLESS", "1")
    monkeypatch.setenv("PROXY_URL", "http://user:sk-settings-value@proxy:4000")
    register_secret("sk-settings-value")
    env = tool_environment({"EXTRA": "2"})
    assert "LITELLM_API_KEY" not in env and "OPENAI_API_KEY" not in env and "PROXY_URL" not in env
    assert env["HARMLESS"] == "1" and env["EXTRA"] == "2" and env["PATH"] == os.environ["PATH"]


async def test_clear_reads_the_settings_again(server: Any, home: Path, project: Path, write_settings: Any) -> None:
    from tests.streams import text_stream

    settings = load_settings(home)
    app = await Application.open(
        AppOptions(launch=project, home=home, settings=settings, model="m", save=False),
        RecordingUI(),  # type: ignore[arg-type]
    )
    try:
        write_settings(server.url_for("/moved"), MaxIterations=7)
        server.expect_oneshot_request("/moved/v1/chat/completions").respond_with_data(
            text_stream("from the new address"), content_type="text/event-stream"
        )
        report = await app.reload()
        assert any("Settings read again" in line for line in report.infos)
        assert await app.send("hi", on_wait=_never_wait_long) == "done"
        assert app.agent.messages[-1].text == "from the new address" and app.agent.max_iterations == 7
        (home / "settings.json").write_text("{ broken")
        report = await app.reload()
        assert any("previous settings stay in use" in w for w in report.warnings)
    finally:
        await app.aclose()


def test_at_references_honour_read_denies_and_never_open_pipes_or_devices(tmp_path: Path) -> None:
    import os

    (tmp_path / "secret.txt").write_text("the key")
    (tmp_path / "fine.txt").write_text("fine content")
    os.mkfifo(tmp_path / "pipe")
    readable = lambda path: path.name != "secret.txt"  # noqa: E731
    prompt = prepare_request("see @secret.txt @fine.txt @pipe @/dev/zero", tmp_path, {}, readable=readable)
    assert isinstance(prompt, Prompt)
    assert prompt.attached == ("fine.txt",) and "the key" not in "".join(prompt.context)
    warnings = "\n".join(prompt.warnings)
    assert "@secret.txt: a Read deny rule covers it" in warnings
    assert "@pipe: not a regular file" in warnings and "@/dev/zero: not a regular file" in warnings


def test_what_the_first_tool_call_loads_can_be_loaded_beforehand() -> None:
    """``warm_tools`` (run in a thread when the model starts streaming a tool call) loads the input
    validator and the permission engine, which a fresh process has not loaded yet."""
    code = (
        "import sys\n"
        "from maia.app.application import warm_tools\n"
        "before = {'jsonschema', 'maia.permissions.engine'} & set(sys.modules)\n"
        "warm_tools()\n"
        "after = {'jsonschema', 'maia.permissions.engine'} & set(sys.modules)\n"
        "print(sorted(before), sorted(after))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] ['jsonschema', 'maia.permissions.engine']"


def test_the_tools_are_warmed_once_per_application(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each tool call the model names reaches the sources, with its rank among the answer's calls to that tool,
    unless a bare deny rule covers the tool; the loads start in a thread at the first only."""
    import maia.app.application as application

    threads: list[object] = []

    class Recorder:
        def __init__(self, *, target: object, name: str, daemon: bool) -> None:
            threads.append((target, name, daemon))

        def start(self) -> None:
            pass

    named: list[tuple[str, int]] = []

    class Source:
        def expect_call(self, name: str, count: int, may_run: object) -> None:
            named.append((name, count))

    class Broken:
        def expect_call(self, name: str, count: int, may_run: object) -> None:
            raise RuntimeError("a source's bug")

    monkeypatch.setattr(application.threading, "Thread", Recorder)
    app = application.Application.__new__(application.Application)
    app._tools_warming = False
    app._shutting_down = False
    app._named = {}
    app.sources = [Broken(), Source()]  # type: ignore[list-item]
    from types import SimpleNamespace

    from maia.permissions.rules import as_ruleset

    denies = as_ruleset({"deny": ["Bash", "Read(./secret.txt)"]})  # a bare deny: Bash never runs; Read may
    app._conversation = SimpleNamespace(loadout=SimpleNamespace(ruleset=denies))  # type: ignore[assignment]
    app._tool_starting("Read")
    app._tool_starting("Agent")
    app._tool_starting("Bash")  # never runs: nothing is started for it
    app._tool_starting("Agent")  # the answer's second call to it
    assert threads == [(application.warm_tools, "maia-warm-tools", True)]
    assert named == [("Read", 1), ("Agent", 1), ("Agent", 2)]  # a source that fails does not stop the others


async def test_a_request_still_under_way_a_moment_later_gets_the_head_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A request sent: a moment later (if the application has not closed), the first tool call's loads start
    (once per application) and the sources hear which tools the request offers, less those a bare deny rule
    covers (a broken source stops none);
    one timer at a time; a tool call named first warms at once; nothing after the close begins."""
    import asyncio
    from types import SimpleNamespace

    import maia.app.application as application

    threads: list[object] = []

    class Recorder:
        def __init__(self, *, target: object, name: str, daemon: bool) -> None:
            threads.append(target)

        def start(self) -> None:
            pass

    offered: list[frozenset[str]] = []

    class Source:
        def expect_request(self, tools: frozenset[str], may_run: object) -> None:
            offered.append(tools)

    class Broken:
        def expect_request(self, tools: frozenset[str], may_run: object) -> None:
            raise RuntimeError("a source's bug")

    monkeypatch.setattr(application.threading, "Thread", Recorder)
    monkeypatch.setattr(application, "HEAD_START_AFTER", 0.05)
    app = application.Application.__new__(application.Application)
    app._tools_warming = False
    app._head_start_timer = None
    app._named = {}
    app._shutting_down = False
    app.sources = [Broken(), Source()]  # type: ignore[list-item]
    from maia.permissions.rules import as_ruleset

    denies = as_ruleset({"deny": ["Bash", "Read(./secret.txt)"]})  # a bare deny: Bash never runs; Read may
    app._conversation = SimpleNamespace(  # type: ignore[assignment]
        agent=SimpleNamespace(tools={"Read": None, "Agent": None, "Bash": None}),
        loadout=SimpleNamespace(ruleset=denies),
    )
    app._request_sent()
    app._request_sent()  # a second request before the moment: still one timer
    assert threads == [] and offered == []  # not yet: a quick answer never pays for it
    await asyncio.sleep(0.2)
    assert threads == [application.warm_tools]
    assert offered == [frozenset({"Read", "Agent"})]
    app._request_sent()
    await asyncio.sleep(0.2)
    assert threads == [application.warm_tools]  # loaded once per application
    assert len(offered) == 2  # the sources hear each request (theirs to start nothing twice)

    app._tools_warming = False
    threads.clear()
    app._tool_starting("Read")  # a call named: at once
    assert threads == [application.warm_tools]

    app._shutting_down = True  # aclose has begun
    app._request_sent()
    app._tool_starting("Agent")
    await asyncio.sleep(0.2)
    assert app._head_start_timer is None and len(offered) == 2 and threads == [application.warm_tools]
