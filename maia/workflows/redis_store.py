"""The workflow registry on Redis (issue 30): the same interface as the file registry, shared by machines.

Keys, under ``maia:wf:<id>``:

- ``…`` (a string): the record; every change is a WATCH/MULTI transaction (a change lost to a concurrent
  writer is made again on the new record);
- ``…:agents``: the sub-agents' states; ``…:events``: a list of JSON events; ``…:log``: a list of log lines;
- ``…:requests`` (a hash ``rN`` → request) and ``…:answers`` (``rN`` → answer, created by HSETNX: of two
  concurrent approvers exactly one wins); ``…:reqseq``: the last request's number;
- ``…:stop``: ``maia stop``; ``…:traces`` (a hash); ``…:result``; ``…:state`` (a hash: the saved
  conversation, the patch); ``…:job``: what a worker needs to run it (see :mod:`maia.workflows.queue`);
- ``…:run``: the run lock, held by a worker with a time to live it renews (the heartbeat): a worker
  killed outright lets it expire, and the workflow shows ``error (worker lost)``.

``maia:wf:index`` (a sorted set by creation time) lists the workflows.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from maia.core.errors import UsageError
from maia.i18n import _
from maia.workflows.registry import (
    RECORD_VERSION,
    WORKFLOW_ID,
    Request,
    RequestKind,
    Workflow,
    WorkflowFileError,
    WorkflowRegistry,
    answerable,
    new_id,
    now_iso,
)

if TYPE_CHECKING:
    import redis

PREFIX = "maia:wf:"
INDEX = PREFIX + "index"
DEFAULT_HEARTBEAT = 30.0  # seconds a run lock lives without being renewed

# release the run lock only when it is still ours; renew it likewise
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
)


def heartbeat_seconds() -> float:
    """The run lock's time to live: ``MAIA_QUEUE_HEARTBEAT`` seconds (tests shorten it), else 30."""
    raw = os.environ.get("MAIA_QUEUE_HEARTBEAT", "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_HEARTBEAT
    return value if value >= 0.5 else DEFAULT_HEARTBEAT


def _str(value: Any) -> str | None:
    """A value read with ``decode_responses`` (typed as bytes or str by redis)."""
    if value is None:
        return None
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


class RedisWorkflow(Workflow):
    """One workflow stored in Redis; ``folder`` is only a local name (``<cache>/<id>``)."""

    lost_kind = "worker"

    def __init__(self, client: redis.Redis, folder: Path, where: str) -> None:
        super().__init__(folder)
        self.client = client
        self.key = PREFIX + folder.name
        self.where = where  # the queue's address without its password, to name things

    def _k(self, suffix: str) -> str:
        return f"{self.key}:{suffix}"

    @property
    def result_path(self) -> Path:
        """Where the result is, as shown by ``--json``."""
        return Path(f"{self.where}/{self.id}/result.md")

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """A Redis lock, for the rare read-modify-write that is not one transaction."""
        with self.client.lock(self._k("lock"), timeout=30, blocking_timeout=30):
            yield

    # --- the record ------------------------------------------------------------------------

    def _parse(self, text: str | None) -> dict[str, Any]:
        if text is None:
            raise WorkflowFileError(_("{where}: the workflow {id} has no record.").format(where=self.where, id=self.id))
        try:
            data = json.loads(text)
        except ValueError as error:
            raise WorkflowFileError(
                _("{where}: the record of {id} is not valid JSON ({error}).").format(
                    where=self.where, id=self.id, error=error
                )
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("agent"), str):
            raise WorkflowFileError(
                _("{where}: the record of {id} is not a workflow record.").format(where=self.where, id=self.id)
            )
        return data

    def read(self) -> dict[str, Any]:
        """The record."""
        data = self._parse(_str(self.client.get(self.key)))
        self._record = data
        return data

    def write(self, data: dict[str, Any]) -> None:
        """Replace the record."""
        self.client.set(self.key, _dump(data))
        self._record = data

    def update(self, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Read, change and write the record in one transaction (made again when another writer came first)."""
        from redis.exceptions import WatchError

        with self.client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(self.key)  # type: ignore[no-untyped-call]
                    data = self._parse(_str(pipe.get(self.key)))
                    change(data)
                    pipe.multi()
                    pipe.set(self.key, _dump(data))
                    pipe.execute()
                except WatchError:
                    continue
                self._record = data
                return data

    # --- agents, events, traces, result, log, state ------------------------------------------

    def read_agents(self) -> list[dict[str, Any]]:
        """The sub-agents' states."""
        text = self.client.get(self._k("agents"))
        if text is None:
            return []
        with contextlib.suppress(ValueError):
            agents = json.loads(text).get("agents")
            if isinstance(agents, list):
                return [a for a in agents if isinstance(a, dict) and isinstance(a.get("name"), str)]
        raise WorkflowFileError(
            _("{where}: the agents' states of {id} are broken.").format(where=self.where, id=self.id)
        )

    def write_agents(self, agents: list[dict[str, Any]]) -> None:
        """Replace the sub-agents' states."""
        self.client.set(self._k("agents"), _dump({"agents": agents}))

    def append_event(self, event: str, **fields: Any) -> None:
        """One event (best effort)."""
        with contextlib.suppress(Exception):
            self.client.rpush(self._k("events"), _dump({"time": now_iso(), "event": event, **fields}))

    def events(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The events."""
        found: list[dict[str, Any]] = []
        for line in self.client.lrange(self._k("events"), 0, -1):
            with contextlib.suppress(ValueError):
                data = json.loads(line)
                if isinstance(data, dict):
                    found.append(data)
        return found, []

    def write_trace(self, base: str, data: dict[str, Any]) -> Path:
        """A conversation, under a name never taken twice."""
        number = 1
        while True:
            name = f"{base}.json" if number == 1 else f"{base}-{number}.json"
            if self.client.hsetnx(self._k("traces"), name, _dump(data)):
                return Path(f"{self.where}/{self.id}/traces/{name}")
            number += 1

    def write_result(self, text: str) -> None:
        """The final answer."""
        self.client.set(self._k("result"), text if text.endswith("\n") else text + "\n")

    def read_result(self) -> str | None:
        """The final answer, None when there is none."""
        value = self.client.get(self._k("result"))
        return str(value) if value is not None else None

    def has_result(self) -> bool:
        """Whether the final answer was saved."""
        return bool(self.client.exists(self._k("result")))

    def append_log(self, line: str) -> None:
        """One line of the log."""
        with contextlib.suppress(Exception):
            self.client.rpush(self._k("log"), line)

    def log_since(self, offset: int) -> tuple[str, int]:
        """The log's lines after the ``offset``-th and the new offset."""
        lines = self.client.lrange(self._k("log"), offset, -1)
        return "".join(f"{_str(line)}\n" for line in lines), offset + len(lines)

    def save_state(self, name: str, text: str) -> None:
        """A named state (the saved conversation, the patch)."""
        self.client.hset(self._k("state"), name, text)

    def load_state(self, name: str) -> str | None:
        """A named state, None when there is none."""
        value = self.client.hget(self._k("state"), name)
        return str(value) if value is not None else None

    def has_state(self, name: str) -> bool:
        """Whether the named state was saved."""
        return bool(self.client.hexists(self._k("state"), name))

    def keep_reserve(self) -> None:
        """Nothing to set aside: the worker's disk holds none of the registry."""

    def free_reserve(self) -> bool:
        """No reserve."""
        return False

    # --- stop, run lock, liveness -------------------------------------------------------------

    def request_stop(self) -> None:
        """Ask the worker to stop."""
        self.client.set(self._k("stop"), now_iso())

    def stop_requested(self) -> bool:
        """``maia stop`` was run."""
        return bool(self.client.exists(self._k("stop")))

    def clear_stop(self) -> None:
        """Forget a ``maia stop``."""
        self.client.delete(self._k("stop"))

    def try_run_lock(self) -> Callable[[], None] | None:
        """The run lock, renewed by a thread until released; None when a live worker holds it."""
        token = secrets.token_hex(16)
        ttl = heartbeat_seconds()
        key = self._k("run")
        if not self.client.set(key, token, nx=True, px=int(ttl * 1000)):
            return None
        renew = self.client.register_script(_RENEW)
        release = self.client.register_script(_RELEASE)
        done = threading.Event()

        def beat() -> None:
            while not done.wait(ttl / 3):
                with contextlib.suppress(Exception):  # Redis away for a moment: the next beat tries again
                    renew(keys=[key], args=[token, int(ttl * 1000)])

        thread = threading.Thread(target=beat, name=f"heartbeat-{self.id}", daemon=True)
        thread.start()

        def unlock() -> None:
            done.set()
            thread.join()
            with contextlib.suppress(Exception):
                release(keys=[key], args=[token])

        return unlock

    def running_elsewhere(self) -> bool:
        """Whether a live worker holds the run lock."""
        return bool(self.client.exists(self._k("run")))

    def runner_alive(self, record: dict[str, Any]) -> bool:
        """The worker renews its run lock while it lives."""
        return self.running_elsewhere()

    # --- requests -----------------------------------------------------------------------------

    def answer_path(self, request_id: str) -> Path:
        """A name for the answer (in messages)."""
        return Path(f"{self.where}/{self.id}/requests/{request_id}.answer.json")

    def add_request(
        self,
        kind: RequestKind,
        agent: str,
        message: str,
        detail: str | None = None,
        detail_kind: str | None = None,
    ) -> Request:
        """The next request (the worker); ``detail``: the command or diff the person must see."""
        number = int(self.client.incr(self._k("reqseq")))
        request = Request(f"r{number}", kind, agent, message, now_iso())
        request.detail, request.detail_kind = detail, detail_kind if detail is not None else None
        request.nonce = secrets.token_hex(16)
        data = {**request.to_json(), "state": "pending", "nonce": request.nonce}
        self.client.hset(self._k("requests"), request.id, _dump(data))
        return request

    def close_request(self, request_id: str, state: Literal["answered", "withdrawn"]) -> None:
        """Mark a request answered or withdrawn (the worker)."""
        text = self.client.hget(self._k("requests"), request_id)
        if text is None:
            return
        data = json.loads(text)
        data["state"] = state
        self.client.hset(self._k("requests"), request_id, _dump(data))

    def read_answer(self, request_id: str) -> dict[str, Any] | None:
        """The answer, None while there is none."""
        text = self.client.hget(self._k("answers"), request_id)
        if text is None:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise WorkflowFileError(
                _("{path}: an answer must be a JSON object").format(path=self.answer_path(request_id))
            )
        return data

    def requests(self) -> tuple[list[Request], list[str]]:
        """Every request in order."""
        raw = self.client.hgetall(self._k("requests"))
        answers = self.client.hgetall(self._k("answers"))
        found: list[Request] = []
        warnings: list[str] = []
        for key in sorted(raw, key=lambda n: int(n[1:]) if n[1:].isdigit() else 0):
            name = str(_str(key))
            try:
                data = json.loads(raw[key])
            except ValueError:
                warnings.append(
                    _("{where}: the request {request} of {id} is broken; skipped.").format(
                        where=self.where, request=name, id=self.id
                    )
                )
                continue
            kind = data.get("kind")
            if kind not in ("permission", "intervention"):
                continue
            request = Request(
                name,
                kind,
                str(data.get("agent") or "?"),
                str(data.get("message") or ""),
                str(data.get("created") or ""),
                nonce=str(data.get("nonce") or ""),
            )
            if data.get("state") == "withdrawn":
                request.state = "withdrawn"
            if key in answers:
                request.state = "answered"
                try:
                    request.answer = self.read_answer(name)
                except WorkflowFileError as error:
                    request.answer_problem = error.message
                    warnings.append(error.message)
            found.append(request)
        return found, warnings

    def answer(self, request_id: str, answer: dict[str, Any], *, still_open: Callable[[], None]) -> None:
        """The request's one answer: HSETNX lets exactly one of concurrent approvers write it."""
        still_open()
        requests, _warnings = self.requests()
        request = answerable(self.id, request_id, requests)
        payload = {**answer, "nonce": request.nonce, "time": now_iso()}
        if not self.client.hsetnx(self._k("answers"), request_id, _dump(payload)):
            raise UsageError(_("The request {request} was already answered.").format(request=request_id))

    # --- the job ------------------------------------------------------------------------------

    def write_job(self, job: dict[str, Any]) -> None:
        """What a worker needs to run the workflow (agent files as text, task, where to work)."""
        self.client.set(self._k("job"), _dump(job))

    def read_job(self) -> dict[str, Any] | None:
        """The job, None when there is none."""
        text = self.client.get(self._k("job"))
        return json.loads(text) if text is not None else None


class RedisRegistry(WorkflowRegistry):
    """The workflows of one Redis database."""

    def __init__(self, client: redis.Redis, cache: Path, where: str) -> None:
        self.root = cache
        self.client = client
        self.where = where

    def _workflow(self, workflow_id: str) -> RedisWorkflow:
        return RedisWorkflow(self.client, self.root / workflow_id, self.where)

    def create(self, record: dict[str, Any]) -> RedisWorkflow:
        """A new workflow with a fresh id and its record."""
        while True:
            workflow_id = new_id()
            created = time.time_ns()
            data = {"version": RECORD_VERSION, "id": workflow_id, "createdNs": created, **record}
            if self.client.set(PREFIX + workflow_id, _dump(data), nx=True):
                break
        self.client.zadd(INDEX, {workflow_id: created})
        workflow = self._workflow(workflow_id)
        workflow._record = data
        return workflow

    def get(self, workflow_id: str) -> RedisWorkflow | None:
        """The workflow with this exact id."""
        if not WORKFLOW_ID.match(workflow_id) or not self.client.exists(PREFIX + workflow_id):
            return None
        return self._workflow(workflow_id)

    def all(self) -> list[Workflow]:
        """Every workflow, oldest first."""
        return [self._workflow(str(i)) for i in self.client.zrange(INDEX, 0, -1) if WORKFLOW_ID.match(str(i))]
