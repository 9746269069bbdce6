"""Workflows on Redis Queue with a real redis-server: submit from one MAIA home, run on a worker with another,
approve from a third; a worker killed mid-job and ``maia resume``; a folder the worker lacks; ``--git``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.app.helpers import maia, wait_until
from tests.streams import text_stream, tool_stream
from tests.workflows.conftest import MODEL, WAIT, Gate, WorkflowLiteLLM, agent_calls

CI = os.environ.get("CI") == "true"


def _missing(what: str) -> None:
    if CI:
        pytest.fail(f"{what} is missing: .ci/run installs it")
    pytest.skip(f"{what} is missing")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A redis-server of the test's own on a free loopback port (nothing saved to disk)."""
    binary = shutil.which("redis-server")
    if binary is None:
        _missing("redis-server")
    try:
        import redis
        import rq  # noqa: F401
    except ImportError:
        _missing("the queue extra (rq, redis)")
    port = _free_port()
    data = tmp_path / "redis"
    data.mkdir()
    process = subprocess.Popen(
        [
            str(binary),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(data),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)

    def up() -> bool:
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False

    try:
        wait_until(up, timeout=WAIT, what="redis-server to answer")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def homes(tmp_path: Path, home: Path, server: object) -> dict[str, Path]:
    """The client's home (the test's), a worker's and an approver's; the worker has the same LiteLLM."""
    worker = tmp_path / "worker-home"
    approver = tmp_path / "approver-home"
    worker.mkdir()
    approver.mkdir()
    shutil.copy(home / "settings.json", worker / "settings.json")
    return {"client": home, "worker": worker, "approver": approver}


def as_home(home: Path, url: str) -> dict[str, str]:
    """The environment of a command run from ``home`` against the queue."""
    return {"MAIA_HOME": str(home), "MAIA_QUEUE": url}


def submit(agent: Path, task: str, url: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = maia("run", str(agent), task, "--model", MODEL, "--queue", url, *args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def start_worker(home: Path, url: str, name: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "maia", "worker", "--name", name, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            **os.environ,
            **as_home(home, url),
            "MAIA_QUEUE_HEARTBEAT": "2",
            "MAIA_JOBS_DIR": str(home.parent / "jobs"),
        },
        start_new_session=True,
    )


def show(ref: str, home: Path, url: str) -> dict[str, object]:
    done = maia("workflow", ref, "--json", env=as_home(home, url))
    assert done.returncode == 0, done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return data


def wait_for(
    ref: str, home: Path, url: str, condition: Callable[[dict[str, object]], bool], what: str
) -> dict[str, object]:
    seen: dict[str, object] = {}

    def check() -> bool:
        seen.clear()
        seen.update(show(ref, home, url))
        return condition(seen)

    try:
        wait_until(check, timeout=WAIT, what=what)
    except AssertionError:
        raise AssertionError(f"{what}; last seen: {json.dumps(seen, indent=1)}") from None
    return dict(seen)


def stop_worker(process: subprocess.Popen[str]) -> str:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    _out, err = process.communicate(timeout=WAIT)
    return err


def test_submitted_from_one_home_run_on_a_worker_approved_from_a_third_read_from_the_first(
    redis_url: str,
    homes: dict[str, Path],
    script: WorkflowLiteLLM,
    make_parent: Callable[..., Path],
    make_sub: Callable[..., Path],
    project: Path,
) -> None:
    make_sub("rev")
    parent = make_parent(header="permissions:\n  allow: [Agent]")
    script.add("parent", agent_calls(("rev", "write the file")))
    script.add("rev", tool_stream("Write", {"path": "out.txt", "content": "hi"}), text_stream("Written."))
    script.add("parent", text_stream("Done on the worker."))
    workflow_id = submit(parent, "write it", redis_url)
    queued = show(workflow_id, homes["approver"], redis_url)
    assert queued["state"] == "pending"
    worker = start_worker(homes["worker"], redis_url, "w1", "--burst", "--trust-jobs")
    try:
        waiting = wait_for(
            workflow_id, homes["approver"], redis_url, lambda s: bool(s["requests"]), "the worker's question"
        )
        assert waiting["label"] == "waiting for an answer (r1)"
        assert waiting["cwd"] == str(project)
        # two approvers at once: exactly one answer wins
        approvers = [
            subprocess.Popen(
                [sys.executable, "-m", "maia", "approve", workflow_id, "r1"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, **as_home(homes["approver"], redis_url)},
            )
            for _ in range(2)
        ]
        results = [(p.wait(timeout=WAIT), p.stderr.read() if p.stderr else "") for p in approvers]
        assert sorted(code for code, _err in results) == [0, 2], results
        assert any("already answered" in err for _code, err in results), results
        ended = wait_for(workflow_id, homes["client"], redis_url, lambda s: s["state"] in ("done", "error"), "the end")
        assert ended["state"] == "done", ended
    finally:
        stop_worker(worker)
    assert (project / "out.txt").read_text() == "hi"
    done = maia("result", workflow_id, env=as_home(homes["client"], redis_url))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Done on the worker.\n"
    logs = maia("logs", workflow_id, env=as_home(homes["approver"], redis_url))
    assert "Request r1 approved." in logs.stdout
    listed = maia("workflows", "--json", env=as_home(homes["approver"], redis_url))
    assert [w["id"] for w in json.loads(listed.stdout)] == [workflow_id]
    # nothing of it under the client's or the approver's home: the registry is the queue's
    assert not (homes["client"] / "workflows").exists()


def test_a_worker_killed_mid_job_shows_worker_lost_and_maia_resume_queues_it_again(
    redis_url: str,
    homes: dict[str, Path],
    script: WorkflowLiteLLM,
    make_parent: Callable[..., Path],
    make_sub: Callable[..., Path],
) -> None:
    import redis

    make_sub("rev")
    parent = make_parent()
    held = Gate()
    script.add("parent", agent_calls(("rev", "look at the code")), text_stream("Done after the resume."))
    script.add("rev", held.hold(text_stream("never seen")))
    workflow_id = submit(parent, "review", redis_url, "--permission-mode", "allow")
    worker = start_worker(homes["worker"], redis_url, "doomed")
    client = redis.Redis.from_url(redis_url)
    try:
        assert held.reached.wait(WAIT), "the sub-agent never asked the model"
        wait_until(
            lambda: client.hexists(f"maia:wf:{workflow_id}:state", "parent.json"),
            timeout=WAIT,
            what="the parent's conversation to be saved in the queue's registry",
        )
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=WAIT)
        lost = wait_for(workflow_id, homes["client"], redis_url, lambda s: s["resumable"] is True, "the worker's loss")
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        held.open()
    assert lost["state"] == "error"
    assert lost["label"] == "error (worker lost)"
    assert "worker (doomed) is gone" in str(lost["error"])
    listed = maia("workflows", env=as_home(homes["client"], redis_url))
    assert f"(resumable: maia resume {workflow_id})" in listed.stdout
    resumed = maia("resume", workflow_id, env=as_home(homes["client"], redis_url))
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == workflow_id
    again = start_worker(homes["worker"], redis_url, "second", "--burst")
    try:
        ended = wait_for(workflow_id, homes["client"], redis_url, lambda s: s["state"] in ("done", "error"), "the end")
    finally:
        stop_worker(again)
    assert ended["state"] == "done", ended
    assert ended["resumes"] == 1
    done = maia("result", workflow_id, env=as_home(homes["client"], redis_url))
    assert done.stdout == "Done after the resume.\n"
    body = script.requests["parent"][-1]
    assert "has just been resumed" in json.dumps(body["messages"][-1])


def test_a_job_for_a_folder_the_worker_lacks_fails_with_a_clear_error(
    redis_url: str,
    homes: dict[str, Path],
    script: WorkflowLiteLLM,
    make_parent: Callable[..., Path],
    make_sub: Callable[..., Path],
    tmp_path: Path,
) -> None:
    make_sub("rev")
    parent = make_parent()
    elsewhere = tmp_path / "only-on-the-client"
    elsewhere.mkdir()
    workflow_id = submit(parent, "review", redis_url, env={"MAIA_CWD": str(elsewhere)})
    elsewhere.rmdir()  # the worker's machine has no such folder
    worker = start_worker(homes["worker"], redis_url, "w1", "--burst")
    try:
        ended = wait_for(workflow_id, homes["client"], redis_url, lambda s: s["state"] in ("done", "error"), "the end")
    finally:
        stop_worker(worker)
    assert ended["state"] == "error"
    assert f"The folder {elsewhere} does not exist on the worker w1" in str(ended["error"])
    assert script.seen("parent") == 0


def test_git_workflow_works_in_a_clone_and_gives_its_changes_as_a_patch(
    redis_url: str,
    homes: dict[str, Path],
    script: WorkflowLiteLLM,
    make_parent: Callable[..., Path],
    make_sub: Callable[..., Path],
    tmp_path: Path,
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    (source / "README").write_text("hello\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for command in (["init", "-q", "-b", "main"], ["add", "README"], ["commit", "-q", "-m", "first"]):
        subprocess.run([*git, "-C", str(source), *command], check=True)
    bare = tmp_path / "repo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(bare)], check=True)
    make_sub("rev")
    parent = make_parent(header="permissions:\n  allow: [Agent]")
    script.add("parent", agent_calls(("rev", "write the file")))
    script.add("rev", tool_stream("Write", {"path": "out.txt", "content": "from the worker\n"}), text_stream("Ok."))
    script.add("parent", text_stream("Patched."))
    workflow_id = submit(parent, "add a file", redis_url, "--git", f"file://{bare}@main", "--permission-mode", "allow")
    worker = start_worker(homes["worker"], redis_url, "w1", "--burst", "--trust-jobs")
    try:
        ended = wait_for(workflow_id, homes["client"], redis_url, lambda s: s["state"] in ("done", "error"), "the end")
    finally:
        stop_worker(worker)
    assert ended["state"] == "done", ended
    patch = maia("result", workflow_id, "--patch", env=as_home(homes["client"], redis_url))
    assert patch.returncode == 0, patch.stderr
    logs = maia("logs", workflow_id, env=as_home(homes["client"], redis_url)).stdout
    assert "+++ b/out.txt" in patch.stdout, logs
    assert "+from the worker" in patch.stdout
    applied = subprocess.run(["git", "-C", str(source), "apply"], input=patch.stdout, text=True)
    assert applied.returncode == 0
    assert (source / "out.txt").read_text() == "from the worker\n"


def test_git_workflow_with_a_branch_gives_one_commit_for_git_am(
    redis_url: str,
    homes: dict[str, Path],
    script: WorkflowLiteLLM,
    make_parent: Callable[..., Path],
    make_sub: Callable[..., Path],
    tmp_path: Path,
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    (source / "README").write_text("hello\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for command in (["init", "-q", "-b", "main"], ["add", "README"], ["commit", "-q", "-m", "first"]):
        subprocess.run([*git, "-C", str(source), *command], check=True)
    bare = tmp_path / "repo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(bare)], check=True)
    make_sub("rev")
    parent = make_parent(header="permissions:\n  allow: [Agent]")
    script.add("parent", agent_calls(("rev", "write the file")))
    script.add("rev", tool_stream("Write", {"path": "out.txt", "content": "from the worker\n"}), text_stream("Ok."))
    script.add("parent", text_stream("Patched."))
    workflow_id = submit(
        parent, "add a file", redis_url, "--git", f"file://{bare}@main", "--permission-mode", "allow",
        "--branch", "maia/add-file",
    )  # fmt: skip
    worker = start_worker(homes["worker"], redis_url, "w1", "--burst", "--trust-jobs")
    try:
        ended = wait_for(workflow_id, homes["client"], redis_url, lambda s: s["state"] in ("done", "error"), "the end")
    finally:
        stop_worker(worker)
    assert ended["state"] == "done", ended
    patch = maia("result", workflow_id, "--patch", env=as_home(homes["client"], redis_url))
    assert patch.returncode == 0, patch.stderr
    logs = maia("logs", workflow_id, env=as_home(homes["client"], redis_url)).stdout
    assert "+++ b/out.txt" in patch.stdout, logs
    assert "+from the worker" in patch.stdout
    assert "Subject: [PATCH] add a file" in patch.stdout
    assert "maia/add-file" in patch.stdout
    applied = subprocess.run([*git, "-C", str(source), "am", "-q"], input=patch.stdout, text=True)
    assert applied.returncode == 0
    assert (source / "out.txt").read_text() == "from the worker\n"
    subject = subprocess.run(["git", "-C", str(source), "log", "-1", "--format=%s %an"], capture_output=True, text=True)
    assert subject.stdout.strip() == "add a file MAIA"
    assert (
        "maia/add-file" not in subprocess.run(["git", "-C", str(bare), "branch"], capture_output=True, text=True).stdout
    )


def test_without_the_queue_extra_the_command_says_how_to_install_it(tmp_path: Path) -> None:
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "rq.py").write_text("raise ImportError('blocked for the test')\n")
    done = maia("worker", "--queue", "redis://127.0.0.1:9/0", env={"PYTHONPATH": str(blocker)})
    assert done.returncode != 0
    assert "pip install 'maia-cli[queue]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_queue_url_that_is_not_redis_is_refused(tmp_path: Path) -> None:
    done = maia("workflows", env={"MAIA_QUEUE": "http://example.invalid"})
    assert done.returncode == 2
    assert "MAIA_QUEUE: 'http://example.invalid' is not a Redis URL" in done.stderr


def test_sigterm_stops_the_worker_and_leaves_its_workflow_resumable(
    redis_url: str,
    homes: dict[str, Path],
    script: WorkflowLiteLLM,
    make_parent: Callable[..., Path],
    make_sub: Callable[..., Path],
) -> None:
    import redis

    make_sub("rev")
    parent = make_parent()
    held = Gate()
    script.add("parent", agent_calls(("rev", "look at the code")))
    script.add("rev", held.hold(text_stream("never seen")))
    workflow_id = submit(parent, "review", redis_url, "--permission-mode", "allow")
    worker = start_worker(homes["worker"], redis_url, "polite")
    client = redis.Redis.from_url(redis_url)
    try:
        assert held.reached.wait(WAIT), "the sub-agent never asked the model"
        wait_until(
            lambda: client.hexists(f"maia:wf:{workflow_id}:state", "parent.json"),
            timeout=WAIT,
            what="the parent's conversation to be saved",
        )
        worker.send_signal(signal.SIGTERM)
        worker.communicate(timeout=WAIT)  # the worker ends: it takes no other job
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        held.open()
    ended = show(workflow_id, homes["client"], redis_url)
    assert ended["state"] == "error"
    assert ended["error"] == "Interrupted by a signal."
    assert ended["resumable"] is True


def test_a_job_brings_no_permission_rules_unless_the_worker_trusts_jobs(
    redis_url: str,
    homes: dict[str, Path],
    script: WorkflowLiteLLM,
    make_parent: Callable[..., Path],
    make_sub: Callable[..., Path],
) -> None:
    make_sub("rev")
    parent = make_parent(header="permissions:\n  allow: [Agent]")
    script.add("parent", agent_calls(("rev", "look")))
    script.add("rev", text_stream("Looked."))
    script.add("parent", text_stream("Reviewed."))
    workflow_id = submit(parent, "review", redis_url)
    worker = start_worker(homes["worker"], redis_url, "careful", "--burst")
    try:
        waiting = wait_for(
            workflow_id, homes["client"], redis_url, lambda s: bool(s["requests"]), "the question for Agent"
        )
        # without --trust-jobs the parent's "allow: [Agent]" is not the worker's rule: the launch asks
        assert "Agent" in str(waiting["requests"]), waiting
        approved = maia("approve", workflow_id, env=as_home(homes["approver"], redis_url))
        assert approved.returncode == 0, approved.stderr
        ended = wait_for(workflow_id, homes["client"], redis_url, lambda s: s["state"] in ("done", "error"), "the end")
    finally:
        stop_worker(worker)
    assert ended["state"] == "done", ended
    logs = maia("logs", workflow_id, env=as_home(homes["client"], redis_url)).stdout
    assert "The agent boss brings permission rules: ignored on this worker" in logs


def test_a_worker_with_concurrency_runs_workflows_at_once_and_a_queued_one_stops_at_once(
    redis_url: str,
    homes: dict[str, Path],
    script: WorkflowLiteLLM,
    make_parent: Callable[..., Path],
    make_sub: Callable[..., Path],
) -> None:
    make_sub("rev")
    parent = make_parent()
    first, second = Gate(), Gate()
    script.add("parent", first.hold(text_stream("first")), second.hold(text_stream("second")))
    ids = [submit(parent, f"task {n}", redis_url) for n in (1, 2)]
    never = submit(parent, "never run", redis_url)
    stopped = maia("stop", never, env=as_home(homes["client"], redis_url))
    assert stopped.returncode == 0, stopped.stderr
    assert show(never, homes["client"], redis_url)["label"] == "error (stopped)"
    worker = start_worker(homes["worker"], redis_url, "pair", "--concurrency", "2", "--burst")
    try:
        # both held at once: two workflows run together
        assert first.reached.wait(WAIT) and second.reached.wait(WAIT), "the two workflows did not run at once"
        first.open()
        second.open()
        for workflow_id in ids:
            ended = wait_for(
                workflow_id, homes["client"], redis_url, lambda s: s["state"] in ("done", "error"), "the end"
            )
            assert ended["state"] == "done", ended
        worker.communicate(timeout=WAIT)  # --burst: the workers end with the queue
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
    assert worker.returncode == 0
    assert script.seen("parent") == 2  # the stopped one never reached the model
    assert "Stopped by maia stop before it started." in str(show(never, homes["client"], redis_url)["error"])


def test_reply_from_a_home_whose_settings_name_the_queue(
    redis_url: str,
    homes: dict[str, Path],
    script: WorkflowLiteLLM,
    make_parent: Callable[..., Path],
    make_sub: Callable[..., Path],
) -> None:
    make_sub("rev")
    parent = make_parent()
    script.add("parent", tool_stream("RequestIntervention", {"question": "Which branch?"}), text_stream("Used main."))
    workflow_id = submit(parent, "pick a branch", redis_url)
    settings = json.loads((homes["client"] / "settings.json").read_text())
    settings["Workflows"] = {"queue": redis_url}
    (homes["approver"] / "settings.json").write_text(json.dumps(settings))
    by_settings = {"MAIA_HOME": str(homes["approver"])}  # no MAIA_QUEUE: the settings name the queue
    worker = start_worker(homes["worker"], redis_url, "w1", "--burst")
    try:
        wait_for(workflow_id, homes["client"], redis_url, lambda s: bool(s["requests"]), "the question")
        replied = maia("reply", workflow_id, "main", env=by_settings)
        assert replied.returncode == 0, replied.stderr
        assert replied.stdout.strip() == f"Answered r1 of {workflow_id}."
        again = maia("reply", workflow_id, "develop", env=by_settings)
        assert again.returncode == 2
        ended = wait_for(workflow_id, homes["client"], redis_url, lambda s: s["state"] in ("done", "error"), "the end")
    finally:
        stop_worker(worker)
    assert ended["state"] == "done", ended
    body = script.requests["parent"][-1]
    assert "The user answered:\nmain" in json.dumps(body["messages"], ensure_ascii=False).replace("\\n", "\n")


def test_a_settings_queue_that_is_not_redis_names_the_field_and_the_fix(
    home: Path, write_settings: Callable[..., Path]
) -> None:
    write_settings(Workflows={"queue": "http://example.invalid"})
    done = maia("models")
    assert done.returncode != 0
    assert "Workflows" in done.stderr and "redis://" in done.stderr, done.stderr
