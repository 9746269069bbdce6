"""The workflow commands' answers to bad input: files, options, references, broken registry files."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from pytest_httpserver import HTTPServer

from tests.app.helpers import maia
from tests.conftest import trust_project
from tests.streams import text_stream, tool_stream
from tests.workflows.conftest import MODEL, WorkflowLiteLLM, detach, only_workflow, show, wait_ended, wait_for

REPO = Path(__file__).resolve().parents[2]


def test_a_broken_agent_file_names_the_file_and_the_field_and_is_recorded(
    make_parent: Callable[..., Path], home: Path
) -> None:
    parent = make_parent(text="---\nname: boss\n---\n# Instructions system\nx\n# Missions\ny\n# Output\nz\n")
    done = maia("run", str(parent), "go")
    assert done.returncode == 2
    workflow_id = only_workflow(home)
    assert done.stderr == (
        f"Warning: The workflow {workflow_id} is recorded as failed.\n"
        f'Error: {parent}: "description" is required; add it: say what the agent does and when to use it, '
        "e.g. description: Reviews code for security problems\n"
    )
    recorded = show(workflow_id)
    assert (recorded["state"], recorded["exitCode"], recorded["agent"]) == ("error", 2, "boss")
    assert recorded["error"].startswith(f'{parent}: "description" is required')


def test_bad_workflow_keys_are_errors(make_parent: Callable[..., Path]) -> None:
    parent = make_parent(header="timeout: soon")
    done = maia("run", str(parent), "--detach")
    assert done.returncode == 2 and done.stdout == ""
    assert (
        f"""Error: {parent}: "timeout": 'soon' is not a duration (90s, 30m, 2h, 1d; a bare number is minutes); """
        "e.g. timeout: 30m" in done.stderr
    )
    parent = make_parent(header="permissionMode: sometimes")
    done = maia("run", str(parent))
    assert done.returncode == 2
    assert f"""Error: {parent}: "permissionMode" must be wait, deny or allow, not 'sometimes'""" in done.stderr
    parent = make_parent(header="timeout: 10 weeks")
    done = maia("run", str(parent))
    assert done.returncode == 2 and "unknown unit 'weeks'" in done.stderr


def test_bad_arguments(tmp_path: Path, make_parent: Callable[..., Path]) -> None:
    missing = tmp_path / "nowhere" / "AGENT.md"
    done = maia("run", str(missing))
    assert (
        done.returncode == 2
        and f"Error: {missing}: no such file. Give the path of a workflow's AGENT.md." in done.stderr
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    done = maia("run", str(empty))
    assert done.returncode == 2 and f"Error: {empty}: no AGENT.md in this folder." in done.stderr
    listed = maia("workflows", "--all")  # a path naming no AGENT.md is bad usage: nothing was recorded
    assert "wf_" not in listed.stdout and "recorded as failed" not in done.stderr
    done = maia("run", str(make_parent()), "--timeout", "0")
    assert done.returncode == 2 and "Error: --timeout: '0': a time limit must be longer than zero" in done.stderr
    done = maia("run", str(make_parent()), "--permission-mode", "maybe")
    assert done.returncode == 2 and "'maybe' is not one of 'wait', 'deny', 'allow'" in done.stderr


def test_references(make_parent: Callable[..., Path], home: Path) -> None:
    none = maia("workflow", "last")
    assert none.returncode == 2 and "No workflow yet: start one with maia run AGENT_FILE." in none.stderr
    broken = "---\nname: {name}\n---\n"  # recorded as failed: workflows without a server
    ids = []
    for name in ("alpha", "beta", "beta"):
        assert maia("run", str(make_parent(name, text=broken.format(name=name)))).returncode == 2
        ids.append(sorted(p.name for p in (home / "workflows").iterdir() if p.name not in ids)[-1])
    assert show("last")["id"] == ids[2]
    assert show("beta")["id"] == ids[2]  # an agent's name: its newest workflow
    assert show("ALPHA")["id"] == ids[0]
    assert show(ids[1][-6:])["id"] == ids[1]  # a unique part of an id
    ambiguous = maia("workflow", "wf_")
    assert ambiguous.returncode == 2
    assert (
        ambiguous.stderr
        == f"Error: 'wf_' matches several workflows: {ids[2]}, {ids[1]}, {ids[0]}. Give more of the id.\n"
    )
    unknown = maia("logs", "gamma")
    assert unknown.returncode == 2
    assert unknown.stderr == (
        "Error: No workflow matches 'gamma' (an id, a part of one, last, or an agent's name).\n"
        "maia workflows --all lists them.\n"
    )
    for command in (["result", "gamma"], ["approve", "gamma"], ["reply", "gamma", "x"], ["stop", "gamma"]):
        assert maia(*command).returncode == 2, command


def test_result_and_logs(script: WorkflowLiteLLM, make_parent: Callable[..., Path], home: Path) -> None:
    parent = make_parent()
    script.add("parent", tool_stream("Write", {"path": "a.txt", "content": "x"}), text_stream("The end."))
    workflow_id = detach(parent)
    wait_for(workflow_id, lambda s: bool(s["requests"]), "the question")
    early = maia("result", workflow_id)
    assert early.returncode == 2
    assert early.stderr == (
        f"Error: The workflow {workflow_id} has not ended (waiting for an answer (r1)): "
        f"maia workflow {workflow_id} --watch follows it.\n"
    )
    follow = maia_follow(workflow_id)
    assert maia("approve", workflow_id).returncode == 0
    out, _err = follow.communicate(timeout=90)
    assert follow.returncode == 0
    lines = out.splitlines()
    assert lines[0].endswith(
        f"Workflow {workflow_id}: boss with {MODEL} in {home.parent / 'project'} (permissions: wait)."
    )
    assert any(line.endswith("Request r1 approved.") for line in lines)
    assert lines[-2].endswith(f"Workflow {workflow_id} done.") and lines[-1] == "The end."
    assert maia("logs", workflow_id).stdout == out
    assert maia("result", workflow_id).stdout == "The end.\n"
    watched = maia("workflow", workflow_id, "--watch", "--json")
    assert watched.returncode == 0 and [json.loads(line)["state"] for line in watched.stdout.splitlines()] == ["done"]


def maia_follow(workflow_id: str) -> object:
    import os
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "maia", "logs", workflow_id, "-f"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )


def test_an_unknown_model_ends_a_detached_workflow_in_error(
    server: HTTPServer, make_parent: Callable[..., Path]
) -> None:
    done = maia("run", str(make_parent()), "go", "--model", "no-such-model", "--detach")
    assert done.returncode == 0
    ended = wait_ended(done.stdout.strip())
    assert (ended["state"], ended["exitCode"]) == ("error", 2)
    assert ended["error"] == "No LiteLLM model matches 'no-such-model' (--model).\nmaia models lists them."
    failed = maia("result", ended["id"])
    assert failed.returncode == 1 and "ended in error without a result: No LiteLLM model matches" in failed.stderr


def test_broken_registry_files_are_named_and_the_rest_goes_on(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], home: Path
) -> None:
    parent = make_parent()
    script.add("parent", text_stream("One."))
    first = detach(parent)
    wait_ended(first)
    script.add("parent", text_stream("Two."))
    second = detach(parent)
    wait_ended(second)
    folder = home / "workflows"
    (folder / first / "workflow.json").write_text("{oops")
    (folder / second / "agents.json").write_text('{"agents": 3}')
    with open(folder / second / "events.jsonl", "a") as handle:
        handle.write("not json\n")
    listed = maia("workflows", "--json")
    assert listed.returncode == 0
    assert [w["id"] for w in json.loads(listed.stdout)] == [second]
    assert f"Warning: {folder / first / 'workflow.json'}: the workflow's record is not valid JSON" in listed.stderr
    assert (
        f'Warning: {folder / second / "agents.json"}: "agents" must be a list of objects with a "name"' in listed.stderr
    )
    broken = maia("workflow", first)
    assert broken.returncode == 1 and "the workflow's record is not valid JSON" in broken.stderr
    assert show(second)["agents"] == []
    shutil.rmtree(folder / first)
    assert maia("workflows").stdout.startswith(f"{second}  done")


def test_the_example_workflow_loads(home: Path, project: Path) -> None:
    from maia.workflows.orchestrator import load_orchestrator

    example = REPO / "examples" / "workflows" / "release_notes"
    untrusted = load_orchestrator(example, home, project)
    assert "maia trust" in untrusted.warnings[0] and "Agent)" in untrusted.warnings[0]
    trust_project(example.parent)  # as the example's header says: the user trusts its folder first
    loaded = load_orchestrator(example, home, project)
    assert loaded.warnings == [] and loaded.agent_warnings == []
    assert (loaded.name, loaded.timeout, loaded.permission_mode) == ("release_notes", 1800.0, "wait")
    assert loaded.layout.agents_dir == example.parent and loaded.layout.launch == project
    assert sorted(loaded.agents) == ["changes_collector", "docs_auditor"]
    assert loaded.mentioned == ["changes_collector", "docs_auditor"]


def test_colours_only_on_a_terminal_and_never_with_no_color(make_parent: Callable[..., Path], home: Path) -> None:
    import os
    import sys

    import pexpect

    assert maia("run", str(make_parent(text="---\nname: boss\n---\n"))).returncode == 2
    workflow_id = only_workflow(home)
    piped = maia("workflows")
    assert piped.stdout.startswith(f"{workflow_id}  error ") and "\x1b[" not in piped.stdout

    def on_terminal(**extra: str) -> str:
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        child = pexpect.spawn(sys.executable, ["-m", "maia", "workflows"], env={**env, **extra}, encoding="utf-8")
        child.expect(pexpect.EOF, timeout=60)
        child.close()
        return str(child.before)

    assert f"{workflow_id}  \x1b[31merror" in on_terminal()
    plain = on_terminal(NO_COLOR="1")
    assert f"{workflow_id}  error " in plain and "\x1b[" not in plain
