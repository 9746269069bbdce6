"""Usage and rate limits, understood and waited out (issue 27, item 1; findings 3 and 4).

Real ``maia ask`` processes and real sub-agent processes against a loopback LiteLLM-format server. The
clock the product reads is the real one; the tests only choose the time zone (``TZ``) the processes run
in, so that "resets at HH:MM" falls a few seconds ahead instead of up to a minute.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from maia.subagents.definitions import load_agents
from maia.subagents.launcher import launch_subagent
from maia.subagents.protocol import ChildSpec
from tests.app.helpers import CHAT, chat_bodies, maia
from tests.e2e.terminal import Terminal, chat_env
from tests.streams import text_stream
from tests.subagents.conftest import ScriptedLiteLLM, agent_md
from tests.workflows.conftest import PARENT_BODY, WorkflowLiteLLM, detach, show
from tests.workflows.conftest import wait_for as wf_wait_for

UTC_ENV = {"TZ": "UTC"}


def limited(server: HTTPServer, message: str, status: int = 429, **headers: str) -> None:
    """Queue one answer: a limit whose only clue is its text (no retry-after unless given)."""
    body = json.dumps({"error": {"message": message}})
    server.expect_oneshot_request(CHAT, method="POST").respond_with_data(
        body, status=status, headers=headers, content_type="application/json"
    )


def answer(server: HTTPServer, text: str) -> None:
    server.expect_oneshot_request(CHAT, method="POST").respond_with_data(
        text_stream(text), content_type="text/event-stream"
    )


def until_in(stderr: str) -> str:
    """The time of the first "Limited until TIME" line."""
    match = re.search(r"Limited until (\d\d:\d\d(?::\d\d)?)", stderr)
    assert match is not None, stderr
    return match.group(1)


# --- each phrasing of a reset time is understood (the wait is refused by --max-wait: nothing is slept) ---


def _clock_in(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Your usage limit has been reached; it resets at 3pm", lambda: "15:00"),
        ("Usage limit reached, resets at 15:00 UTC.", lambda: "15:00"),
        ("Quota exceeded. Your quota resets at 2031-01-01T07:30:00Z.", lambda: "07:30"),
        ("Rate limit reached for requests. Please try again in 4h 12m.", lambda: _clock_in(4 * 3600 + 12 * 60)),
        ("You exceeded your current quota, please retry in 3 hours and 5 minutes.", lambda: _clock_in(11100)),
        (
            "Claude AI usage limit reached|{epoch}",
            lambda: datetime.fromtimestamp(int(time.time() // 60 * 60) + 7200, UTC).strftime("%H:%M"),
        ),
    ],
)
def test_a_429_with_each_reset_phrasing_names_its_reset(
    server: HTTPServer, message: str, expected: Callable[[], str | datetime]
) -> None:
    epoch = int(time.time() // 60 * 60) + 7200
    limited(server, message.format(epoch=epoch))
    result = maia("ask", "-m", "m", "--no-save", "--max-wait", "1m", "hi", env=UTC_ENV)
    assert result.returncode == 1, result.stderr
    assert "longer than --max-wait (1 min 00 s) allows, giving up" in result.stderr
    assert "Traceback" not in result.stderr
    shown = until_in(result.stderr)
    want = expected()
    if isinstance(want, datetime):  # a duration from now: the time shown is within a minute of it
        # HH:MM:SS, or HH:MM when the reset falls on a whole minute (1 run in 60: clock() shows no ":00")
        got = datetime.strptime(shown, "%H:%M:%S" if len(shown) == 8 else "%H:%M").time()
        delta = abs((datetime.combine(want.date(), got, UTC) - want).total_seconds()) % 86400
        assert min(delta, 86400 - delta) < 60, (shown, want)
    else:
        assert shown == want
    assert len(chat_bodies(server)) == 1  # no blind retries at 5/10/20 s


def test_a_gateway_phrasing_is_read_with_the_users_pattern(server: HTTPServer, write_settings: Any) -> None:
    write_settings(server.url_for(""), RateLimitPatterns=[r"cooldown=(?P<time>\d+)s"])
    limited(server, "gateway busy (cooldown=1s)")
    answer(server, "after the cooldown")
    result = maia("ask", "-m", "m", "--no-save", "hi", env=UTC_ENV)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "after the cooldown\n"
    assert "resuming then (1 s)" in result.stderr


def test_an_invalid_pattern_is_a_clear_error(server: HTTPServer, write_settings: Any) -> None:
    write_settings(server.url_for(""), RateLimitPatterns=["resets at (\\d+"])
    result = maia("ask", "-m", "m", "--no-save", "hi")
    assert result.returncode != 0
    assert '"RateLimitPatterns" holds an invalid regular expression' in result.stderr
    assert "Traceback" not in result.stderr
    write_settings(server.url_for(""), RateLimitPatterns=["resets at \\d+"])
    result = maia("ask", "-m", "m", "--no-save", "hi")
    assert "no group named (?P<time>…)" in result.stderr and "Traceback" not in result.stderr


def test_a_quota_answered_with_403_and_a_reset_time_is_a_limit_not_a_bad_key(server: HTTPServer) -> None:
    limited(server, "Quota exceeded for this key; it resets at 2031-01-01T07:30:00Z", status=403)
    result = maia("ask", "-m", "m", "--no-save", "--max-wait", "10m", "hi", env=UTC_ENV)
    assert result.returncode == 1
    assert until_in(result.stderr) == "07:30" and "API key" not in result.stderr


# --- the done-when of issue 27: "usage limit reached, resets at HH:MM" is waited for, then finished ---


def _zone_just_before_a_minute(lead: float) -> tuple[str, int]:
    """A POSIX ``TZ`` whose local time is ``lead`` seconds before a whole minute, and its UTC offset."""
    now = time.time()
    offset = int(60 - lead - now % 60) % 60
    return f"XXX-0:0:{offset:02d}", offset


def test_ask_waits_until_the_reset_time_then_finishes(server: HTTPServer) -> None:
    zone, offset = _zone_just_before_a_minute(lead=12)
    arrivals: list[float] = []
    reset: dict[str, Any] = {}

    def at_the_reset(_request: Request) -> Response:
        arrivals.append(time.time())
        if len(arrivals) == 1:
            # the next whole minute of the process's zone, at least 2 s ahead (a slow start only waits longer)
            reset["utc"] = (arrivals[0] + 2 + offset + 59) // 60 * 60 - offset
            reset["local"] = datetime.fromtimestamp(reset["utc"] + offset, UTC).strftime("%H:%M")
            body = {"error": {"message": f"usage limit reached, resets at {reset['local']}"}}
            return Response(json.dumps(body), status=429, content_type="application/json")
        return Response(text_stream("Finished after the reset."), content_type="text/event-stream")

    server.expect_request(CHAT, method="POST").respond_with_handler(at_the_reset)
    result = maia("ask", "-m", "m", "--no-save", "hi", env={"TZ": zone}, timeout=150)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Finished after the reset.\n"
    assert f"Limited until {reset['local']}" in result.stderr and "resuming then" in result.stderr
    assert len(arrivals) == 2
    assert arrivals[1] >= reset["utc"] - 0.05, (arrivals, reset)  # never before the reset it was told


def test_a_429_without_a_time_backs_off_growing_and_says_so(server: HTTPServer, write_settings: Any) -> None:
    write_settings(server.url_for(""), RateLimitBackoff=[0.1, 0.2, 0.4])
    for _ in range(4):
        limited(server, "Too many requests")
    answer(server, "at last")
    result = maia("ask", "-m", "m", "--no-save", "hi")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "no time given" in line]
    assert len(lines) == 4, result.stderr
    assert [re.search(r"attempt (\d+)", line).group(1) for line in lines] == ["1", "2", "3", "4"]  # type: ignore[union-attr]


def test_max_wait_bounds_the_waiting(server: HTTPServer) -> None:
    limited(server, "Usage limit reached. Try again in 2h.")
    started = time.monotonic()
    result = maia("ask", "-m", "m", "--no-save", "--max-wait", "90s", "hi")
    assert result.returncode == 1
    assert "longer than --max-wait (1 min 30 s) allows" in result.stderr
    assert time.monotonic() - started < 60  # it did not wait


def test_max_wait_must_be_a_duration(server: HTTPServer) -> None:
    result = maia("ask", "-m", "m", "--no-save", "--max-wait", "soon", "hi")
    assert result.returncode == 2 and "--max-wait: 'soon' is not a duration" in result.stderr
    assert "Traceback" not in result.stderr


# --- sub-agents: their wait is the parent's, never failed early, never a wrong "try again in 2s" ---


@pytest.fixture
def scripted(server: HTTPServer) -> ScriptedLiteLLM:
    return ScriptedLiteLLM(server)


def _spec(home: Path, project: Path, name: str) -> ChildSpec:
    folder = project / ".maia" / "agents" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "AGENT.md").write_text(agent_md(name), encoding="utf-8")
    loaded = load_agents(home, project)
    return ChildSpec(
        definition=loaded.agents[name],
        task="t",
        launch=project,
        home=home,
        model="scripted-openai",
        parent_session="parent",
    )


def _limit(message: str, **headers: str) -> Response:
    return Response(json.dumps({"error": {"message": message}}), status=429, headers=headers)


async def test_a_sub_agent_waits_out_a_limit_visibly_then_finishes(
    scripted: ScriptedLiteLLM, home: Path, project: Path
) -> None:
    scripted.add("rev", _limit("usage limit reached, try again in 2s"), text_stream("reviewed"))
    logs: list[tuple[str, str]] = []
    waits: list[tuple[str | None, str | None]] = []
    result = await launch_subagent(
        _spec(home, project, "rev"),
        on_log=lambda *log: logs.append(log),
        on_wait=lambda reason, until: waits.append((reason, until)),
        env={**os.environ, **UTC_ENV},
    )
    assert result.ok and result.summary == "reviewed", result.error
    assert waits[0][0] == "rate_limited" and waits[0][1] is not None and waits[-1] == (None, None)
    assert any("Limited until" in message and "resuming then" in message for _level, message in logs)


async def test_a_sub_agents_long_wait_counts_against_the_parents_limit_and_says_the_truth(
    scripted: ScriptedLiteLLM, home: Path, project: Path
) -> None:
    # the finding: a wait over 5 minutes failed at once and the parent model read "try again in 2s"
    scripted.add("rev", _limit("Rate limit reached. Please try again in 2s.", **{"retry-after": "900"}))
    waits: list[tuple[str | None, str | None]] = []
    seen = threading.Event()

    def on_wait(reason: str | None, until: str | None) -> None:
        waits.append((reason, until))
        seen.set()

    started = datetime.now(UTC)
    result = await launch_subagent(
        _spec(home, project, "rev"), on_wait=on_wait, timeout=20, kill_grace=2, env={**os.environ, **UTC_ENV}
    )
    assert seen.is_set() and waits[0][0] == "rate_limited"
    until = datetime.fromisoformat(str(waits[0][1]))
    assert abs((until - started).total_seconds() - 900) < 30  # the real reset, shown to the parent
    assert result.timed_out and not result.ok  # ended by the parent's limit, not given up by the child
    assert result.error is not None and "2s" not in result.error
    assert "while it waited for the server (rate_limited) until" in result.error
    assert until.astimezone().strftime("%H:%M:%S") in result.error


# --- workflows: ``waiting`` with the reset time in ``maia workflow`` ------------------------------


def test_a_workflow_waits_for_a_usage_limit_named_in_its_text(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "UTC")  # inherited by the worker
    script = WorkflowLiteLLM(server)
    parent = tmp_path / "flows" / "boss" / "AGENT.md"
    parent.parent.mkdir(parents=True)
    parent.write_text(agent_md("boss", "", PARENT_BODY.format(agents="rev"), "Runs reviews."), encoding="utf-8")
    reset = (datetime.now(UTC) + timedelta(hours=2)).strftime("%H:%M")
    message = {"error": {"message": f"Your usage limit has been reached; it resets at {reset}"}}
    script.add("parent", Response(json.dumps(message), status=429, content_type="application/json"))
    workflow_id = detach(parent)
    waiting = wf_wait_for(workflow_id, lambda s: s["state"] == "waiting", "the limited state")
    assert waiting["label"] == f"rate-limited until {reset}:00"
    assert f"{workflow_id}  rate-limited until {reset}:00\n" in maia("workflow", workflow_id).stdout
    stopped = maia("stop", workflow_id)
    assert stopped.returncode == 0
    assert show(workflow_id)["state"] == "error"
    assert script.seen("parent") == 1  # waited for the reset: no blind retries


# --- the chat: a known reset is asked when long, counted down with its time, and Esc cancels it -------


def test_the_chat_waits_for_a_named_reset_and_esc_cancels(server: HTTPServer, home: Path, project: Path) -> None:
    reset = (datetime.now(UTC) + timedelta(hours=2)).strftime("%H:%M")
    limited(server, f"Your usage limit has been reached; it resets at {reset}")
    term = Terminal(["chat", "-m", "scripted-openai"], project, {**chat_env(home, project), **UTC_ENV}, 100, 30)
    try:
        term.wait_for("Your request")
        term.send("hello\r")
        term.wait_for(f"Limited until {reset}. Wait, and resume then?")
        term.answer("y")
        term.wait_for(f"Limited until {reset}, resuming then (")
        term.wait_for("Esc to cancel")
        term.send("\x1b")
        term.wait_for("Interrupted")
        assert len(chat_bodies(server)) == 1  # waited for the reset: no blind retries meanwhile
        assert term.child.isalive()
    finally:
        term.close()


def test_the_chat_asks_when_a_429_without_a_time_keeps_coming(
    server: HTTPServer, write_settings: Any, home: Path, project: Path
) -> None:
    write_settings(server.url_for(""), RateLimitBackoff=[0.2])
    for _ in range(3):
        limited(server, "Too many requests")
    term = Terminal(["chat", "-m", "scripted-openai"], project, chat_env(home, project), 100, 30)
    try:
        term.wait_for("Your request")
        term.send("hello\r")
        term.wait_for("The server keeps refusing (HTTP 429) without saying until when (3 times). Keep trying?")
        term.answer("n")
        term.wait_for("LiteLLM answered HTTP 429: Too many requests")
        assert len(chat_bodies(server)) == 3  # no fourth try once the user said no
    finally:
        term.close()
