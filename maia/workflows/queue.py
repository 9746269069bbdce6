"""Workflows on Redis Queue (issue 30): ``maia run --queue``, ``maia worker``, ``maia resume`` of a queued one.

A job carries what a worker needs and nothing of the submitter's machine beyond it: the parent's
AGENT.md and those of the agents it mentions (as text), the task, model, time limit, permission mode,
and where to work (a folder that must exist on the worker, or a git URL the worker clones). Never
settings, keys, trust or permission files: the worker runs with its own. The RQ job only names the
workflow; the job's content is in the registry (``maia:wf:<id>:job``), so ``maia resume`` enqueues
the same job again.

Workers are RQ ``SimpleWorker`` processes: the workflow runs in the worker's own process, so a worker
killed outright takes its run with it, its run lock expires, and the workflow shows ``error (worker
lost)``. RQ runs a job at most once; the run lock makes sure a workflow never runs twice at once.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maia.core.errors import ConfigError, ExitStatus, MaiaError, UsageError
from maia.i18n import _

if TYPE_CHECKING:
    import redis

    from maia.workflows.orchestrator import Orchestrator
    from maia.workflows.redis_store import RedisRegistry, RedisWorkflow

QUEUE_NAME = "maia-workflows"
JOB_VERSION = 1
PATCH_STATE = "patch"
INSTALL_HINT = "pip install 'maia-cli[queue]'"
_URL = re.compile(r"^rediss?://")


def require_packages() -> None:
    """rq and redis are installed; otherwise a MaiaError that says how to install them."""
    try:
        import redis  # noqa: F401
        import rq  # noqa: F401
    except ImportError:
        raise MaiaError(
            _("Workflows on a queue need the packages rq and redis, which are not installed."),
            hint=_("Install them with: {command}").format(command=INSTALL_HINT),
        ) from None


def queue_url(cli: str | None, home: Path, env: Mapping[str, str] | None = None) -> str | None:
    """The queue's URL: ``--queue``, else ``MAIA_QUEUE``, else ``"Workflows": {"queue": …}`` in settings."""
    env = os.environ if env is None else env
    for value, source in ((cli, "--queue"), (env.get("MAIA_QUEUE"), "MAIA_QUEUE")):
        if value is not None and value.strip():
            url = value.strip()
            if not _URL.match(url):
                raise UsageError(
                    _(
                        "{source}: {url!r} is not a Redis URL: give redis://[:password@]host:port/db "
                        "(rediss:// for TLS)."
                    ).format(source=source, url=public_url(url))
                )
            return url
    from maia.core.paths import settings_path

    if not settings_path(home).is_file():
        return None
    from maia.core.settings import load_settings

    try:
        return load_settings(home, env).queue
    except ConfigError:
        return None  # the command that needs the settings says what is wrong with them


def public_url(url: str) -> str:
    """The URL without its password (for messages and the registry)."""
    return re.sub(r"//[^@/]*@", "//***@", url)


@dataclass(slots=True)
class QueueContext:
    """A connection to the queue and its registry."""

    url: str
    client: redis.Redis
    registry: RedisRegistry

    def rq_queue(self) -> Any:
        """The RQ queue of workflows."""
        import redis as redis_module
        from rq import Queue

        raw = redis_module.Redis.from_url(self.url)  # RQ stores bytes: its own connection
        return Queue(QUEUE_NAME, connection=raw)


def connect(url: str, home: Path) -> QueueContext:
    """Connect to the queue (checked with a PING); MaiaError with the reason when it cannot be reached."""
    require_packages()
    import redis as redis_module

    from maia.workflows.redis_store import RedisRegistry

    try:
        client = redis_module.Redis.from_url(url, decode_responses=True, socket_connect_timeout=10)
        client.ping()
    except (redis_module.RedisError, ValueError) as error:
        raise MaiaError(
            _("The queue {url} cannot be reached: {error}").format(url=public_url(url), error=error),
            hint=_("Check the URL (--queue, MAIA_QUEUE or Workflows.queue in settings.json) and that Redis runs."),
        ) from None
    return QueueContext(url, client, RedisRegistry(client, home / "queue", public_url(url)))


# --- submitting ----------------------------------------------------------------------------------


def parse_git(spec: str) -> tuple[str, str | None]:
    """``URL[@REF]`` → (URL, REF); an ``@`` inside ``user@host:`` is part of the URL."""
    url, sep, ref = spec.rpartition("@")
    if sep and ref and "/" not in ref and ":" not in ref and url:
        return url, ref
    return spec, None


def job_for(
    orchestrator: Orchestrator, options: Any, folder: Path | None, git: str | None, branch: str | None = None
) -> dict[str, Any]:
    """What the worker needs: the agent files as text, the task and limits, where to work."""
    files = {orchestrator.name: orchestrator.definition.path.read_text(encoding="utf-8")}
    for name in orchestrator.mentioned:
        agent = orchestrator.agents.get(name)
        if agent is not None:
            with contextlib.suppress(OSError):
                files[name] = agent.path.read_text(encoding="utf-8")
    git_url, git_ref = parse_git(git) if git else (None, None)
    return {
        "version": JOB_VERSION,
        "parent": orchestrator.name,
        "agents": files,
        "task": options.task,
        "model": options.model,
        "timeout": options.timeout,
        "permissionMode": options.permission_mode,
        "folder": None if git else str(folder),
        "git": git_url,
        "ref": git_ref,
        "branch": branch if git else None,
    }


def enqueue(context: QueueContext, workflow: RedisWorkflow) -> None:
    """Put the workflow on the queue (its job is already in the registry)."""
    resumes = workflow.read().get("resumes")
    context.rq_queue().enqueue_call(
        "maia.workflows.queue.run_job",
        args=(workflow.id,),
        timeout=-1,  # the workflow's own time limit applies
        result_ttl=3600,
        failure_ttl=7 * 24 * 3600,
        job_id=f"{workflow.id}-{resumes if isinstance(resumes, int) else 0}",
        description=f"maia workflow {workflow.id}",
    )
    workflow.append_event("queued", queue=QUEUE_NAME)


# --- the worker ------------------------------------------------------------------------------------


@dataclass(slots=True)
class WorkerSetup:
    """The worker's machine: its MAIA home, queue and name."""

    home: Path
    url: str
    name: str
    trust_jobs: bool = False


_SETUP: WorkerSetup | None = None


def _end_before_start(workflow: RedisWorkflow, message: str) -> None:
    from maia.workflows.worker import end_record

    workflow.append_log(message)
    end_record(workflow, "error", int(ExitStatus.USAGE), message)


def _prepare_folder(workflow: RedisWorkflow, job: dict[str, Any], scratch: Path, name: str) -> Path | None:
    """Where the workflow works: the job's folder (it must exist here) or a clone of its git URL."""
    if job.get("git"):
        # outside the MAIA home, whose files the permission engine protects from every write
        work = jobs_folder() / workflow.id
        if not (work / ".git").is_dir():
            shutil.rmtree(work, ignore_errors=True)
            command = ["git", "clone", "--quiet", str(job["git"]), str(work)]
            done = subprocess.run(command, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                _end_before_start(
                    workflow,
                    _("The worker {name} could not clone {url}: {error}").format(
                        name=name, url=job["git"], error=done.stderr.strip() or done.returncode
                    ),
                )
                return None
            if job.get("ref"):
                done = subprocess.run(
                    ["git", "-C", str(work), "checkout", "--quiet", str(job["ref"])],
                    capture_output=True,
                    text=True,
                    stdin=subprocess.DEVNULL,
                )
                if done.returncode != 0:
                    _end_before_start(
                        workflow,
                        _("The worker {name} could not check out {ref}: {error}").format(
                            name=name, ref=job["ref"], error=done.stderr.strip()
                        ),
                    )
                    return None
        return work
    folder = Path(str(job.get("folder") or ""))
    if not folder.is_absolute() or not folder.is_dir():
        _end_before_start(
            workflow,
            _(
                "The folder {folder} does not exist on the worker {name}: the workflow works in a folder the "
                "worker must have (a shared file system or an identical checkout), or give --git URL."
            ).format(folder=folder, name=name),
        )
        return None
    return folder


def jobs_folder() -> Path:
    """Where a worker clones ``--git`` workflows: ``MAIA_JOBS_DIR``, else ``maia-jobs-<uid>`` in the
    temporary folder."""
    import tempfile

    chosen = os.environ.get("MAIA_JOBS_DIR", "").strip()
    if chosen:
        return Path(chosen).expanduser()
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"maia-jobs-{uid}"


def without_rules(text: str) -> tuple[str, bool]:
    """An AGENT.md without the ``permissions:`` of its header, and whether it had some (a header that
    cannot be read is left as it is: loading it fails with its own error)."""
    import yaml

    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return text, False
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        return text, False
    try:
        header = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError:
        return text, False
    if not isinstance(header, dict) or "permissions" not in header:
        return text, False
    del header["permissions"]
    dumped = yaml.safe_dump(header, sort_keys=False, allow_unicode=True) if header else ""
    return "---\n" + dumped + "---\n" + "".join(lines[end + 1 :]), True


def _write_agents(workflow: RedisWorkflow, job: dict[str, Any], scratch: Path, trust: bool) -> Path:
    """The job's AGENT.md files in ``<scratch>/agents/<name>/``; the parent's file. A job brings no
    permission rules unless the worker's operator trusts jobs (``--trust-jobs``)."""
    from maia.workflows.ui import WorkflowLog

    agents = scratch / "agents"
    shutil.rmtree(agents, ignore_errors=True)
    log = WorkflowLog(workflow.log_path, None, workflow.append_log)
    for name, text in dict(job.get("agents") or {}).items():
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", str(name)):
            continue  # a name that is not a folder name never becomes a path
        content = str(text)
        if not trust:
            content, dropped = without_rules(content)
            if dropped:
                log(
                    "warn",
                    _(
                        "The agent {name} brings permission rules: ignored on this worker (its operator trusts "
                        "jobs' rules with maia worker --trust-jobs)."
                    ).format(name=name),
                )
        folder = agents / str(name)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "AGENT.md").write_text(content, encoding="utf-8")
    return agents / str(job["parent"]) / "AGENT.md"


def _save_patch(workflow: RedisWorkflow, work: Path, branch: str | None, task: str | None) -> None:
    """The changes of a cloned folder, as a patch for ``maia result --patch``: a diff for ``git apply``, or
    with ``branch`` one commit on that branch for ``git am`` (nothing is pushed)."""
    git = ["git", "-C", str(work)]

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*git, *args], capture_output=True, stdin=subprocess.DEVNULL)

    run("add", "-A")
    if branch and run("diff", "--cached", "--quiet", "HEAD").returncode == 1:
        title = (task or "").strip().splitlines()[0][:72] if (task or "").strip() else f"maia workflow {workflow.id}"
        run("checkout", "-q", "-B", branch)
        committed = run(
            "-c", "user.name=MAIA", "-c", "user.email=maia@localhost",
            "commit", "-q", "--no-verify", "-m", title, "-m", f"Workflow {workflow.id} ({branch}).",
        )  # fmt: skip
        if committed.returncode == 0:
            done = run("format-patch", "--stdout", "-1", "HEAD")
            if done.returncode == 0:
                workflow.save_state(PATCH_STATE, done.stdout.decode("utf-8", "replace"))
                return
    done = run("diff", "--cached", "--binary", "HEAD")
    if done.returncode == 0:
        workflow.save_state(PATCH_STATE, done.stdout.decode("utf-8", "replace"))


def run_job(workflow_id: str) -> str:
    """The RQ job: run one queued workflow on this worker with the worker's own settings; its state."""
    from maia.workflows.worker import RunOptions, run_workflow

    setup = _SETUP
    if setup is None:
        raise RuntimeError("run_job runs in maia worker only")
    context = connect(setup.url, setup.home)
    workflow = context.registry.get(workflow_id)
    if workflow is None:
        return "missing"
    job = workflow.read_job()
    record = workflow.read()
    if job is None or record.get("state") != "pending":
        return "skipped"
    workflow.update(lambda data: data.update(worker=setup.name))
    scratch = setup.home / "queue" / workflow_id
    scratch.mkdir(parents=True, exist_ok=True)
    folder = _prepare_folder(workflow, job, scratch, setup.name)
    if folder is None:
        return "error"
    timeout = job.get("timeout")
    mode = job.get("permissionMode")
    options = RunOptions(
        home=setup.home,
        launch=folder,
        agent_file=_write_agents(workflow, job, scratch, setup.trust_jobs),
        task=job.get("task") if isinstance(job.get("task"), str) else None,
        model=job.get("model") if isinstance(job.get("model"), str) else None,
        timeout=float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None,
        permission_mode=mode if mode in ("wait", "deny", "allow") else None,
        detached=True,
        resume=record.get("resuming") is True,
    )
    work = folder

    def save_patch() -> None:  # before the end is recorded: a finished workflow has its patch
        if job.get("git"):
            branch = job.get("branch")
            _save_patch(workflow, work, branch if isinstance(branch, str) else None, options.task)

    rq_handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    import asyncio  # here: `maia run -d` reads the queue setting from this module and needs no event loop

    outcome = asyncio.run(run_workflow(workflow, options, None, save_patch))
    for sig, handler in rq_handlers.items():  # the run's own handlers are gone: RQ's come back
        signal.signal(sig, handler)
    if outcome.error == _("Interrupted by a signal."):
        # the signal stopped the workflow (recorded, resumable); it also stops this worker, which takes no
        # other job: RQ's warm shutdown, as if the signal had reached it
        handler = rq_handlers[signal.SIGTERM]
        if callable(handler):
            handler(signal.SIGTERM, None)
    return outcome.state


def work(setup: WorkerSetup, burst: bool) -> None:
    """Run workflows from the queue in this process until stopped (or, with ``burst``, until it is empty)."""
    global _SETUP
    import redis as redis_module
    from rq import SimpleWorker

    connect(setup.url, setup.home)  # a clear error when the queue cannot be reached
    _SETUP = setup
    raw = redis_module.Redis.from_url(setup.url)
    worker = SimpleWorker([QUEUE_NAME], connection=raw, name=setup.name)
    worker.work(burst=burst, logging_level="WARNING")
