"""Compaction flows (§14) with real session files, the scripted provider, and a real captured error."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from maia.agent.conversation import Conversation
from maia.app.loadout import assemble
from maia.context.compaction import NO_TOOLS, SUMMARY_PROMPT, shrink_tool_results
from maia.context.tokens import TokenCounter
from maia.core.contracts import Message, TextBlock, ToolResultBlock
from maia.core.errors import ContextTooLong, ProviderError
from maia.core.settings import load_settings
from maia.provider.fake import ScriptedProvider, ScriptedTurn, text_turn, tool_turn
from maia.provider.litellm import LiteLLMProvider
from maia.sessions.codec import SavedSession
from maia.sessions.store import SessionManager, SessionStore
from maia.tools import builtin_tools
from tests.agent.helpers import RecordingUI
from tests.conftest import fixture_bytes

SUMMARY = (
    "## Project context\n- A parser\n## Current goal\n- Fix it\n## Relevant files\n- p.py\n"
    "## Decisions/Conclusions\n- none\n## Next steps\n- test"
)


def make(
    project: Path,
    home: Path,
    provider: object,
    *,
    name: str = "work",
    max_context: int | None = None,
    ui: RecordingUI | None = None,
) -> Conversation:
    (project / "MAIA.md").write_text("Project rule: use tabs.")
    return Conversation(
        launch=project,
        loadout=assemble(project, home, builtin_tools(), {}),
        provider=provider,
        ui=ui or RecordingUI(),  # type: ignore[arg-type]
        sessions=SessionManager(SessionStore.for_launch(project), name),
        counter=TokenCounter(),
        max_context=max_context,
    )


async def test_manual_compaction_keeps_the_old_file_and_starts_from_the_summary(project: Path, home: Path) -> None:
    provider = ScriptedProvider([text_turn("first answer"), text_turn(SUMMARY), text_turn("after")])
    conv = make(project, home, provider)
    await conv.send("hello")
    conv.agent.pending_context.append("$ ls\na.py")
    assert "use tabs" in conv.agent.system
    outcome = await conv.compact()
    assert outcome is not None and (outcome.previous, outcome.name, outcome.summary) == ("work", "work__1", SUMMARY)
    request = provider.requests[1]
    assert request.max_tokens == 4000 and request.system.endswith(NO_TOOLS)
    assert [t.name for t in request.tools] == [t.spec.name for t in conv.agent.tools.values()]
    assert request.messages[-1] == Message("user", [TextBlock(f"$ ls\na.py\n\n{SUMMARY_PROMPT}")])
    store = SessionStore.for_launch(project)
    old = store.load("work")
    assert [m.text for m in old.messages] == ["hello", "first answer"] and old.pending_context == ["$ ls\na.py"]
    new = store.load("work__1")
    assert new.start_context == SUMMARY and new.messages == []
    assert conv.agent.messages == [] and conv.agent.pending_context == []
    assert "use tabs" not in conv.agent.system and SUMMARY in conv.agent.system
    await conv.send("go on")
    conv.save()
    assert [m.text for m in store.load("work__1").messages] == ["go on", "after"]


async def test_nothing_to_compact(project: Path, home: Path) -> None:
    conv = make(project, home, ScriptedProvider([]))
    assert await conv.compact() is None


@pytest.mark.parametrize("failure", ["error", "empty", "cancel"])
async def test_a_failed_compaction_changes_nothing(project: Path, home: Path, failure: str) -> None:
    hold = asyncio.Event()

    async def wait() -> None:
        await hold.wait()

    summary_turn = {
        "error": ScriptedTurn([ProviderError("boom")]),
        "empty": text_turn("   "),
        "cancel": ScriptedTurn([wait]),
    }[failure]
    conv = make(project, home, ScriptedProvider([text_turn("answer"), summary_turn]))
    await conv.send("hello")
    before = (list(conv.agent.messages), conv.agent.system, conv.sessions.name)
    task = asyncio.create_task(conv.compact())
    if failure == "cancel":
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        with pytest.raises(ProviderError):
            await task
    assert (list(conv.agent.messages), conv.agent.system, conv.sessions.name) == before
    assert SessionStore.for_launch(project).names() == ["work"]


async def test_automatic_compaction_after_a_turn_that_crosses_the_threshold(project: Path, home: Path) -> None:
    provider = ScriptedProvider([text_turn("word " * 300), text_turn(SUMMARY), text_turn("fresh")])
    conv = make(project, home, provider)
    conv.max_context = conv.context_tokens() + 4500 + 150  # 150 tokens of room before compaction
    await conv.send("first")
    assert conv.sessions.name == "work__1"  # checked after the turn
    assert provider.requests[1].messages[-1].text.endswith(SUMMARY_PROMPT)
    await conv.send("second")
    assert [m.text for m in conv.agent.messages] == ["second", "fresh"]
    assert provider.remaining == 0


async def test_automatic_compaction_before_a_request(project: Path, home: Path) -> None:
    provider = ScriptedProvider([text_turn(SUMMARY), text_turn("answer")])
    conv = make(project, home, provider)
    conv.agent.pending_context.append("output " * 400)  # a big !command result waiting to be sent
    conv.max_context = conv.context_tokens() - 100 + 4500
    await conv.send("now")
    assert conv.sessions.name == "work__1"
    assert conv.agent.messages[0].text == "now"


async def test_no_automatic_compaction_without_a_known_maximum(project: Path, home: Path) -> None:
    conv = make(project, home, ScriptedProvider([text_turn("x" * 400), text_turn("ok")]), max_context=None)
    await conv.send("a")
    await conv.send("b")
    assert conv.sessions.name == "work"


async def test_cycle_after_1000_overwrites_the_first(project: Path, home: Path) -> None:
    store = SessionStore.for_launch(project)
    store.write(SavedSession("work__1", start_context="very old summary"))
    conv = make(project, home, ScriptedProvider([text_turn("a"), text_turn(SUMMARY)]), name="work__1000")
    await conv.send("hi")
    outcome = await conv.compact()
    assert outcome is not None and outcome.name == "work__1"
    assert store.load("work__1").start_context == SUMMARY


def test_shrink_tool_results() -> None:
    messages = [Message("user", [ToolResultBlock("c", "y" * 5000), TextBlock("t")])]
    shrunk = shrink_tool_results(messages, 1500)
    block = shrunk[0].content[0]
    assert isinstance(block, ToolResultBlock) and block.content.startswith("y" * 1500) and len(block.content) < 1600
    assert messages[0].content[0] == ToolResultBlock("c", "y" * 5000)  # the original is untouched


def _sse(text: str) -> bytes:
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": text}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


async def test_context_too_long_from_a_real_proxy_compacts_and_retries_once(
    project: Path, home: Path, httpserver: HTTPServer, write_settings: Callable[..., Path]
) -> None:
    chat = "/v1/chat/completions"
    httpserver.expect_ordered_request(chat).respond_with_data(
        fixture_bytes("scripted-anthropic-context-length.sse"), status=400, content_type="application/json"
    )
    httpserver.expect_ordered_request(chat).respond_with_data(_sse(SUMMARY), content_type="text/event-stream")
    httpserver.expect_ordered_request(chat).respond_with_data(
        _sse("done after compaction"), content_type="text/event-stream"
    )
    write_settings(httpserver.url_for(""))
    provider = LiteLLMProvider(load_settings(home, env={}), "scripted-anthropic")
    ui = RecordingUI()
    conv = make(project, home, provider, ui=ui)
    conv.agent.messages.extend(
        [
            Message("user", [TextBlock("earlier")]),
            Message("assistant", [TextBlock("reply")]),
            Message("user", [ToolResultBlock("c", "z" * 6000), TextBlock("more")]),
            Message("assistant", [TextBlock("ok")]),
        ]
    )
    try:
        assert await conv.send("the big request") == "done"
    finally:
        await provider.aclose()
    bodies = [json.loads(request.data) for request, _ in httpserver.log]
    summary_messages = bodies[1]["messages"]
    tool_message = next(m for m in summary_messages if m["role"] == "tool")
    assert len(tool_message["content"]) < 1600  # tool results shrunk to 1,500 characters
    assert summary_messages[-1]["content"].endswith(SUMMARY_PROMPT)
    assert bodies[2]["messages"][-1]["content"].endswith("the big request")
    assert any("too long" in e[1] for e in ui.of("warning"))
    assert conv.sessions.name == "work__1"
    assert conv.agent.messages[-1].text == "done after compaction"


async def test_context_too_long_when_compaction_fails_shows_the_original_error(project: Path, home: Path) -> None:
    original = ContextTooLong("prompt is too long")
    provider = ScriptedProvider([ScriptedTurn([original]), ScriptedTurn([ProviderError("summary failed")])])
    conv = make(project, home, provider)
    conv.agent.messages.extend([Message("user", [TextBlock("a")]), Message("assistant", [TextBlock("b")])])
    with pytest.raises(ContextTooLong) as info:
        await conv.send("c")
    assert info.value is original
    assert [m.text for m in conv.agent.messages] == ["a", "b"]


async def test_tool_turns_count_in_the_context(project: Path, home: Path) -> None:
    provider = ScriptedProvider([tool_turn(("TodoWrite", {"todos": []})), text_turn("done")])
    conv = make(project, home, provider)
    before = conv.context_tokens()
    await conv.send("plan")
    assert conv.context_tokens() > before


async def test_compaction_never_overwrites_another_sessions_continuation(project: Path, home: Path) -> None:
    store = SessionStore.for_launch(project)
    store.write(SavedSession("work__1", messages=[Message("user", [TextBlock("someone else's turn")])]))
    conv = make(project, home, ScriptedProvider([text_turn("a"), text_turn(SUMMARY)]))
    await conv.send("hi")
    outcome = await conv.compact()
    assert outcome is not None and outcome.name == "work__2"
    assert store.load("work__1").messages[0].text == "someone else's turn"


async def test_a_busy_continuation_name_leaves_the_conversation_as_it_was(project: Path, home: Path) -> None:
    from maia.sessions.store import SessionBusy, SessionLock

    conv = make(project, home, ScriptedProvider([text_turn("a"), text_turn(SUMMARY)]))
    await conv.send("hi")
    before = list(conv.agent.messages)
    holder = SessionLock(SessionStore.for_launch(project).folder, "work__1", "chat")
    script = "import sys,time;from pathlib import Path;from maia.sessions.store import SessionLock as L;"
    script += "l=L(Path(sys.argv[1]),'work__1','chat');l.acquire();print('held',flush=True);time.sleep(60)"
    import subprocess
    import sys

    other = subprocess.Popen([sys.executable, "-c", script, str(holder.folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        with pytest.raises(SessionBusy):
            await conv.compact()
        assert conv.agent.messages == before and conv.sessions.name == "work"
    finally:
        other.kill()
        other.wait()


async def test_a_request_far_from_the_threshold_never_waits_for_the_encoder(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Send first, count later: the compaction checks before a request decide from an upper bound while the
    encoder is not built (building it takes longer than a sub-agent's whole start)."""
    from maia.context import tokens

    def refuse() -> object:
        raise AssertionError("the encoder was built before the request")

    monkeypatch.setattr(tokens, "_encoding", None)
    monkeypatch.setattr(tokens, "encoding", refuse)
    provider = ScriptedProvider([text_turn("answer")])
    conv = make(project, home, provider, max_context=128_000)
    conv.agent.count_context = lambda session: 0  # as a sub-agent's child does: no context bar to feed
    await conv.send("hello")
    assert [m.text for m in conv.agent.messages] == ["hello", "answer"]


@pytest.mark.parametrize("text", ["plain English words", "日本語のテキスト", "emoji 🎉🎉 and ünïcödé", "x" * 5000, ""])
def test_the_bound_is_never_below_the_exact_count(text: str) -> None:
    """A token holds at least one UTF-8 byte: the bound the checks use is never below the count."""
    from maia.context import tokens

    counter = TokenCounter()
    messages = [Message("user", [TextBlock(text)]), Message("assistant", [TextBlock(text + " answer")])]
    exact = counter.count(text, messages, pending=[text])
    # surely_at_most answers only before the encoder is built: ask it with a counter of an unbuilt encoder
    built, tokens._encoding = tokens._encoding, None
    try:
        assert not TokenCounter().surely_at_most(exact - 1, text, messages, pending=[text])
    finally:
        tokens._encoding = built


# --- review (adversarial pass on the start-up laziness): a lone surrogate in the context ------------------
# A model's JSON, a tool or a server can hand MAIA a lone surrogate ("\ud800"); sessions keep it (codec.py).
# count_text counts it (tiktoken replaces it), but the byte bound encoded it strictly and raised
# UnicodeEncodeError, so the compaction check before a request crashed the turn.


def test_review_the_bound_takes_a_lone_surrogate() -> None:
    """The byte bound holds for a lone surrogate (tiktoken counts it as U+FFFD, three bytes) and never raises."""
    from maia.context import tokens

    text = "a\ud800b \udcff"
    messages = [Message("user", [TextBlock(text)])]
    exact = TokenCounter().count(text, messages, pending=[text])
    built, tokens._encoding = tokens._encoding, None
    try:
        assert TokenCounter().surely_at_most(10**6, text, messages, pending=[text])
        assert not TokenCounter().surely_at_most(exact - 1, text, messages, pending=[text])
    finally:
        tokens._encoding = built


async def test_review_a_lone_surrogate_in_a_prompt_is_sent(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn whose text holds a lone surrogate is sent (the compaction check before it does not raise)."""
    from maia.context import tokens

    monkeypatch.setattr(tokens, "_encoding", None)
    provider = ScriptedProvider([text_turn("answer")])
    conv = make(project, home, provider, max_context=128_000)
    conv.agent.count_context = lambda session: 0
    await conv.send("hello \ud800")
    assert [m.text for m in conv.agent.messages][-1] == "answer"
