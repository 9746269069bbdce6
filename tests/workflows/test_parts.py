"""The workflow's parts on their own: durations, layout, mentioned agents, the book, the registry's files."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from maia.core.errors import UsageError
from maia.workflows.book import AgentBook
from maia.workflows.duration import DurationError, format_duration, parse_duration
from maia.workflows.orchestrator import load_orchestrator, orchestrator_layout
from maia.workflows.registry import WorkflowFileError, WorkflowRegistry
from maia.workflows.text import inert
from maia.workflows.view import derive_state
from tests.subagents.conftest import agent_md


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("1500ms", 1.5),
        ("30m", 1800),
        ("2 min", 120),
        ("1.5h", 5400),
        ("1d", 86400),
        ("45", 2700),
        (3, 180),
    ],
)
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "10 weeks", "-5m", "0", True, None, "1h30m"])
def test_bad_durations(text: object) -> None:
    with pytest.raises(DurationError):
        parse_duration(text)


def test_duration_display() -> None:
    assert [format_duration(s) for s in (1.5, 59, 600, 3600, 3660, 90000)] == [
        "1.5 s",
        "59 s",
        "10 min",
        "1 h",
        "1 h 1 min",
        "1 d 1 h",
    ]


def test_layout(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    inside = project / ".maia" / "agents" / "boss" / "AGENT.md"
    assert orchestrator_layout(inside, tmp_path / "elsewhere") == orchestrator_layout(inside, tmp_path)
    assert orchestrator_layout(inside, tmp_path).launch == project
    outside = tmp_path / "flows" / "boss" / "AGENT.md"
    layout = orchestrator_layout(outside, tmp_path / "launch")
    assert (layout.agents_dir, layout.launch) == (tmp_path / "flows", tmp_path / "launch")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_parent_its_agents_and_the_mentioned_ones(tmp_path: Path, home: Path) -> None:
    from maia.core import trust

    flows = tmp_path / "flows"
    body = "# Instructions system\nUse rev-2 then Doc.\n# Missions\nx\n# Output\nNot reviewer.\n"
    parent = write(
        flows / "boss" / "AGENT.md", agent_md("boss", "tools: Read, Agent\ntimeout: 2h\npermissionMode: Allow", body)
    )
    for name in ("rev-2", "doc", "reviewer_x", "rev"):
        write(flows / name / "AGENT.md", agent_md(name))
    write(home / "agents" / "doc" / "AGENT.md", agent_md("doc", description="The user's doc."))
    write(home / "agents" / "mine" / "AGENT.md", agent_md("mine"))
    loaded = load_orchestrator(parent, home, tmp_path)
    # its folder (flows) is not trusted: its permissionMode: allow is ignored, and said so (issue 25)
    assert len(loaded.warnings) == 1 and f"{flows} is not trusted" in loaded.warnings[0]
    assert loaded.agent_warnings == []
    assert loaded.definition.tools == ("Read", "Agent")  # a parent keeps Agent in its tools
    assert (loaded.timeout, loaded.permission_mode) == (7200.0, None)
    trust.trust_folder(flows, home)
    loaded = load_orchestrator(parent, home, tmp_path)
    assert loaded.warnings == [] and (loaded.timeout, loaded.permission_mode) == (7200.0, "allow")
    assert sorted(loaded.agents) == ["doc", "mine", "rev", "rev-2", "reviewer_x"]  # the parent left out
    assert loaded.agents["doc"].description == "Reviews things."  # the parent's folder wins over ~/.maia/agents
    assert loaded.mentioned == ["doc", "rev-2"]  # whole names only: not rev, not reviewer_x


def test_permission_mode_allow_counts_only_in_a_trusted_folder_or_maias_home(tmp_path: Path, home: Path) -> None:
    from maia.core import trust

    project = tmp_path / "clone"
    body = "# Instructions system\nGo.\n# Missions\nx\n# Output\ny\n"
    text = agent_md("boss", "permissionMode: allow\npermissions:\n  allow: [Bash]\n  deny: [Bash(rm *)]", body)
    parent = write(project / ".maia" / "agents" / "boss" / "AGENT.md", text)
    loaded = load_orchestrator(parent, home, project)
    assert loaded.permission_mode is None and loaded.definition.permissions == {"deny": ("Bash(rm *)",)}
    assert "is not trusted" in loaded.warnings[0] and "maia trust" in loaded.warnings[0]
    assert "permissionMode: allow" in trust.check(project, home).summary()
    trust.trust_folder(project, home)
    loaded = load_orchestrator(parent, home, project)
    assert loaded.permission_mode == "allow" and loaded.definition.permissions["allow"] == ("Bash",)
    assert loaded.warnings == []
    mine = write(home / "agents" / "boss" / "AGENT.md", text)  # the user's own workflow
    assert load_orchestrator(mine, home, tmp_path / "elsewhere").permission_mode == "allow"


def test_unknown_keys_still_warn(tmp_path: Path, home: Path) -> None:
    parent = write(tmp_path / "flows" / "boss" / "AGENT.md", agent_md("boss", "timout: 3m"))
    loaded = load_orchestrator(parent, home, tmp_path)
    assert loaded.warnings == [f'{parent}: unknown key "timout" ignored (did you mean "timeout"?).']


def test_the_book_follows_runs_and_waits() -> None:
    saved: list[list[dict[str, Any]]] = []
    book = AgentBook(["a", "b"], saved.append)
    states = lambda: {r["name"]: r["state"] for r in saved[-1]}  # noqa: E731
    book.save()
    assert states() == {"a": "pending", "b": "pending"}
    book.start("a")
    book.start("a")  # the same agent twice in parallel
    book.wait("a", +1)
    assert states()["a"] == "waiting"
    book.wait("a", -1)
    book.finish("a", False, "boom")
    assert states()["a"] == "running"  # one run still active
    book.finish("a", True)
    assert states()["a"] == "done" and saved[-1][0]["runs"] == 2
    book.start("c")  # an agent the parent did not mention
    book.wait("boss", +1)  # the parent's own question: not an agent of the book
    book.close()
    assert states() == {"a": "done", "b": "pending", "c": "error"}
    assert saved[-1][2]["error"] == "the workflow ended while it was running"


def test_derived_states() -> None:
    import os

    me = {"pid": os.getpid(), "state": "running"}
    assert derive_state({"state": "pending"}, [], []) == ("pending", False)
    assert derive_state({**me, "state": "done", "pid": 999999999}, [], []) == ("done", False)
    assert derive_state(me, [], []) == ("running", False)
    assert derive_state({**me, "waiting": {"until": "x"}}, [], []) == ("waiting", False)
    assert derive_state(me, [{"name": "a", "state": "waiting"}], []) == ("waiting", False)
    assert derive_state({**me, "processStart": "1"}, [], []) == ("error", True)  # a recycled pid is not ours
    assert derive_state({**me, "pid": 999999999}, [], []) == ("error", True)


def test_one_answer_per_request_even_when_two_processes_race(home: Path) -> None:
    workflow = WorkflowRegistry(home).create({"agent": "boss", "state": "running"})
    request = workflow.add_request("permission", "rev", "Allow Write: x?")
    assert request.id == "r1" and workflow.add_request("intervention", "boss", "Which?").id == "r2"
    results: list[str] = []
    barrier = threading.Barrier(8)

    def answer(approved: bool) -> None:
        barrier.wait()
        try:
            workflow.answer("r1", {"approved": approved}, still_open=lambda: None)
            results.append(f"ok {approved}")
        except UsageError as error:
            results.append(error.message)

    threads = [threading.Thread(target=answer, args=(i % 2 == 0,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len([r for r in results if r.startswith("ok")]) == 1
    assert results.count("The request r1 was already answered.") == 7
    stored = json.loads(workflow.answer_path("r1").read_text())
    assert f"ok {stored['approved']}" in results
    assert [p.name for p in workflow.requests_dir.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_a_withdrawn_or_broken_request(home: Path) -> None:
    workflow = WorkflowRegistry(home).create({"agent": "boss", "state": "running"})
    workflow.add_request("permission", "rev", "Allow?")
    workflow.close_request("r1", "withdrawn")
    with pytest.raises(UsageError, match="withdrawn"):
        workflow.answer("r1", {"approved": True}, still_open=lambda: None)
    (workflow.requests_dir / "r2.json").write_text("[1]")
    write(workflow.requests_dir / "r3.answer.json", "{")
    requests, warnings = workflow.requests()
    assert [(r.id, r.state) for r in requests] == [("r1", "withdrawn")]
    assert warnings == [f'{workflow.requests_dir / "r2.json"}: "kind" must be permission or intervention; skipped.']
    write(workflow.requests_dir / "r4.json", json.dumps({"kind": "intervention", "agent": "boss", "message": "?"}))
    write(workflow.answer_path("r4"), "not json")
    with pytest.raises(WorkflowFileError, match=r"r4\.answer\.json: the answer is not valid JSON"):
        workflow.read_answer("r4")


def test_control_characters_are_made_inert() -> None:
    assert inert("a\x1b[2Jb\tc\nd\x07\x9b") == "a␛[2Jb  c\nd␇\\x9b"  # tabs expanded to the next stop


def test_ids_sort_by_creation(home: Path) -> None:
    registry = WorkflowRegistry(home)
    made = [registry.create({"agent": "boss", "state": "pending"}).id for _ in range(3)]
    assert [w.id for w in registry.all()] == made
    assert registry.find("last").id == made[-1]


def test_an_answer_planted_before_its_request_is_never_used(home: Path) -> None:
    workflow = WorkflowRegistry(home).create({"agent": "boss", "state": "running"})
    write(workflow.answer_path("r1"), '{"approved": true}')
    request = workflow.add_request("permission", "rev", "Allow Bash: rm -rf x?")
    assert request.id == "r2" and len(request.nonce) == 32
    assert workflow.read_answer("r2") is None


def test_a_hand_edited_record_is_shown_without_failing(home: Path) -> None:
    from maia.workflows.view import detail_lines, snapshot

    workflow = WorkflowRegistry(home).create(
        {"agent": "boss", "state": "bogus", "pid": "abc", "started": 5, "timeout": "x", "waiting": "soon"}
    )
    workflow.write_agents([{"name": "rev", "state": "odd", "runs": "many", "waiting": 3}])
    snap = snapshot(workflow)
    assert (snap.state, snap.label()) == ("pending", "pending")
    lines = detail_lines(snap)
    assert lines[0] == f"{workflow.id}  pending" and "  rev                  error" in lines
    data = snap.to_json()
    assert data["agents"] == [
        {
            "name": "rev",
            "state": "error",
            "runs": 0,
            "active": 0,
            "started": None,
            "ended": None,
            "error": None,
            "waiting": None,
        }
    ]


def test_workflow_permissions() -> None:
    from types import SimpleNamespace

    from maia.permissions.engine import Decision
    from maia.permissions.rules import Verdict
    from maia.workflows.asking import workflow_permissions

    def rules(verdict: Verdict, doubt: bool = False) -> Any:
        return lambda _name, _input: SimpleNamespace(verdict=verdict, rule="R", reason="an opaque command", doubt=doubt)

    ask, deny, allow = Verdict.ASK, Verdict.DENY, Verdict.ALLOW
    assert workflow_permissions(rules(deny), "allow")("RequestIntervention", {}).verdict == allow  # always allowed
    assert workflow_permissions(rules(deny), "allow")("Bash", {}).verdict == deny  # a deny stays a deny
    assert workflow_permissions(rules(ask), "allow")("Bash", {}).verdict == allow
    assert workflow_permissions(rules(ask), "wait")("Bash", {}).verdict == ask  # a person answers
    refused = workflow_permissions(rules(ask), "deny")("Bash", {})
    assert (refused.verdict, refused.rule) == (deny, None) and "permission mode deny" in refused.reason
    doubtful = workflow_permissions(rules(ask, doubt=True), "allow")("Bash", {})
    assert isinstance(doubtful, Decision) and doubtful.verdict == deny and "an opaque command" in doubtful.reason


async def test_allow_mode_refuses_a_sub_agents_question_out_of_doubt(home: Path) -> None:
    from maia.workflows.asking import Asker

    workflow = WorkflowRegistry(home).create({"agent": "boss", "state": "running"})
    lines: list[tuple[str, str]] = []
    asker = Asker(workflow, "allow", lambda level, text: lines.append((level, text)), lambda agent, n: None)
    assert await asker.permission("rev", "[sub-agent rev] Allow Bash: ls?") is True
    assert await asker.permission("rev", "[sub-agent rev] Allow Bash: eval $X?", doubt="not plain") is False
    assert "comes from doubt: not plain" in lines[-1][1]
