"""The workflow registry (§23): one folder per workflow in ``~/.maia/workflows/<id>/``.

Each file has one writer, and every read-modify-write happens under the folder's lock:

- ``workflow.json``: the run's record; ``maia run`` creates it, then its worker alone updates it
- ``agents.json``: the sub-agents' states (the worker, atomic writes)
- ``events.jsonl``: what happened, one JSON object a line (the worker, appends)
- ``requests/rN.json``: a question waiting for a person (the worker); ``rN.answer.json`` its answer,
  created once by ``maia approve`` / ``maia reply`` and never replaced
- ``stop``: ``maia stop`` asks the worker to stop
- ``traces/``: the conversations; ``result.md``: the final answer; ``run.log``: the worker's log

Any of these can be broken by hand: reading one raises :class:`WorkflowFileError` naming the file, and
the callers carry on with the rest.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from maia.core.errors import MaiaError, NotFoundError, UsageError
from maia.core.storage import storage_error, write_atomic
from maia.i18n import _

State = Literal["pending", "running", "waiting", "done", "error"]
STATES: tuple[State, ...] = ("pending", "running", "waiting", "done", "error")
FINAL_STATES = frozenset({"done", "error"})
RequestKind = Literal["permission", "intervention"]
RECORD_VERSION = 1
LOCK_WAIT = 30.0
# room kept free beside each workflow: on a full disk it is given back to save the result and the record
RESERVE_BYTES = 256 * 1024
WORKFLOW_ID = re.compile(r"^wf_(\d{8}_\d{6})_[0-9a-z]{4}$")
_REQUEST = re.compile(r"^r([1-9]\d{0,8})\.json$")
_ANY_REQUEST_FILE = re.compile(r"^r([1-9]\d{0,8})(?:\.answer)?\.json$")


class WorkflowFileError(MaiaError):
    """A file of the registry that cannot be read; the message names it."""


def now_iso() -> str:
    """The local time with its offset, to the second (what every file of the registry stores)."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


def new_id(now: datetime | None = None) -> str:
    """``wf_YYYYMMDD_HHMMSS_xxxx``: sortable by creation time, four random characters against clashes."""
    moment = now or datetime.now()
    return f"wf_{moment:%Y%m%d_%H%M%S}_{secrets.token_hex(2)}"


# --- processes -------------------------------------------------------------------------------


def _proc_stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()  # fields from the state on (the name may hold spaces)


def process_identity(pid: int) -> str | None:
    """The process's start time (Linux): a recycled pid does not pass for the workflow's process."""
    fields = _proc_stat(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def process_alive(pid: int, identity: str | None = None) -> bool:
    """The process exists, is not a zombie, and (when known) is the one that started the workflow."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: alive (and then surely not ours, unless the identity says so)
    except OSError:
        return False
    if sys.platform != "linux":
        return True
    fields = _proc_stat(pid)
    if fields is None:
        return False
    if fields[0] in ("Z", "X"):
        return False
    return identity is None or (len(fields) > 19 and fields[19] == identity)


# --- files -----------------------------------------------------------------------------------


def _read_json(path: Path, what: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as error:
        raise WorkflowFileError(
            _("{path}: cannot read {what}: {error}").format(path=path, what=what, error=error)
        ) from None
    try:
        return json.loads(text)
    except ValueError as error:
        raise WorkflowFileError(
            _("{path}: {what} is not valid JSON ({error}); fix it or delete the workflow's folder").format(
                path=path, what=what, error=error
            )
        ) from None


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass(slots=True)
class Request:
    """A question for a person: a permission (``maia approve``) or an intervention (``maia reply``)."""

    id: str
    kind: RequestKind
    agent: str
    message: str
    created: str
    state: Literal["pending", "answered", "withdrawn"] = "pending"
    answer: dict[str, Any] | None = None
    answer_problem: str | None = None  # the answer file exists but cannot be read
    nonce: str = ""  # copied into the answer by maia approve / reply: an answer without it is not one
    detail: str | None = None  # what a permission is about: the exact command, the diff, the arguments
    detail_kind: str | None = None  # "command" | "diff" | "text"

    @property
    def number(self) -> int:
        """``r12`` → 12."""
        return int(self.id[1:])

    def to_json(self) -> dict[str, Any]:
        """What ``--json`` shows of a request."""
        data: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "agent": self.agent,
            "message": self.message,
            "created": self.created,
        }
        if self.detail is not None:
            data["detail"] = self.detail
            data["detailKind"] = self.detail_kind
        return data


@dataclass(slots=True)
class Workflow:
    """One workflow's folder and the operations on its files."""

    folder: Path
    _record: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def id(self) -> str:
        """The workflow's id (its folder's name)."""
        return self.folder.name

    @property
    def record_path(self) -> Path:
        """``workflow.json``."""
        return self.folder / "workflow.json"

    @property
    def agents_path(self) -> Path:
        """``agents.json``."""
        return self.folder / "agents.json"

    @property
    def events_path(self) -> Path:
        """``events.jsonl``."""
        return self.folder / "events.jsonl"

    @property
    def requests_dir(self) -> Path:
        """``requests/``."""
        return self.folder / "requests"

    @property
    def traces_dir(self) -> Path:
        """``traces/``."""
        return self.folder / "traces"

    @property
    def stop_path(self) -> Path:
        """``stop``."""
        return self.folder / "stop"

    @property
    def result_path(self) -> Path:
        """``result.md``."""
        return self.folder / "result.md"

    @property
    def log_path(self) -> Path:
        """``run.log``."""
        return self.folder / "run.log"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The folder's lock, for every read-modify-write."""
        from filelock import FileLock, Timeout

        try:
            with FileLock(str(self.folder / ".lock"), timeout=LOCK_WAIT):
                yield
        except Timeout:
            raise MaiaError(
                _("{folder}: the workflow's lock is held by another process; try again.").format(folder=self.folder)
            ) from None

    # --- workflow.json ----------------------------------------------------------------------

    def read(self) -> dict[str, Any]:
        """The record; WorkflowFileError when it is missing or broken."""
        try:
            data = _read_json(self.record_path, _("the workflow's record"))
        except FileNotFoundError:
            raise WorkflowFileError(
                _("{path}: the workflow's record is missing; delete the folder {folder}").format(
                    path=self.record_path, folder=self.folder
                )
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("agent"), str):
            raise WorkflowFileError(
                _(
                    '{path}: not a workflow record (an object with "agent", "state"…); delete the folder {folder}'
                ).format(path=self.record_path, folder=self.folder)
            )
        self._record = data
        return data

    @property
    def record(self) -> dict[str, Any]:
        """The record as last read (read now if never)."""
        return self._record if self._record is not None else self.read()

    def write(self, data: dict[str, Any]) -> None:
        """Replace the record (atomic)."""
        write_atomic(self.record_path, _dump(data))
        self._record = data

    def update(self, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Read, change and write the record under the lock; the new record."""
        with self.locked():
            data = self.read()
            change(data)
            self.write(data)
            return data

    # --- agents.json, events.jsonl, traces, result --------------------------------------------

    def read_agents(self) -> list[dict[str, Any]]:
        """The sub-agents' states ([] before the worker wrote any); WorkflowFileError when broken."""
        try:
            data = _read_json(self.agents_path, _("the agents' states"))
        except FileNotFoundError:
            return []
        agents = data.get("agents") if isinstance(data, dict) else None
        if not isinstance(agents, list) or not all(
            isinstance(a, dict) and isinstance(a.get("name"), str) for a in agents
        ):
            raise WorkflowFileError(
                _('{path}: "agents" must be a list of objects with a "name"').format(path=self.agents_path)
            )
        return agents

    def write_agents(self, agents: list[dict[str, Any]]) -> None:
        """Replace the sub-agents' states (atomic; a disk too full for it keeps the last saved states, and
        the next change writes them all)."""
        try:
            write_atomic(self.agents_path, _dump({"agents": agents}))
        except OSError as error:
            if not storage_error(error):
                raise

    def append_event(self, event: str, **fields: Any) -> None:
        """One line of ``events.jsonl`` (best effort: a disk too full for it never stops the workflow;
        a cut line is skipped by the readers)."""
        line = json.dumps({"time": now_iso(), "event": event, **fields}, ensure_ascii=False) + "\n"
        with contextlib.suppress(OSError):
            fd = os.open(self.events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                os.write(fd, line.encode("utf-8"))  # one write: lines of concurrent writers never mix
            finally:
                os.close(fd)

    def events(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The events and a warning per line that is not one."""
        events: list[dict[str, Any]] = []
        warnings: list[str] = []
        try:
            lines = self.events_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return [], []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError:
                data = None
            if isinstance(data, dict):
                events.append(data)
            else:
                warnings.append(
                    _("{path}, line {line}: not an event; skipped.").format(path=self.events_path, line=number)
                )
        return events, warnings

    def write_trace(self, base: str, data: dict[str, Any]) -> Path:
        """``traces/<base>.json``, or ``<base>-2.json``… when taken: one file per run, never replaced."""
        self.traces_dir.mkdir(parents=True, exist_ok=True)
        text = _dump(data)
        number = 1
        while True:
            path = self.traces_dir / (f"{base}.json" if number == 1 else f"{base}-{number}.json")
            try:
                self._link_complete(path, text)  # whole or absent, never empty or cut (a full disk)
                return path
            except FileExistsError:
                number += 1

    def write_result(self, text: str) -> None:
        """``result.md`` (atomic)."""
        write_atomic(self.result_path, text if text.endswith("\n") else text + "\n")

    def read_result(self) -> str | None:
        """The final answer, None when there is none."""
        try:
            return self.result_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return None
        except OSError as error:
            raise WorkflowFileError(
                _("{path}: cannot read the result: {error}").format(path=self.result_path, error=error)
            ) from None

    # --- the log, saved state, liveness (what another backend stores elsewhere) ------------------

    lost_kind = "process"  # what a lost run lost: its process (here) or its worker (a queue)

    def append_log(self, line: str) -> None:
        """One line of ``run.log`` (best effort: a log never stops the workflow)."""
        with contextlib.suppress(OSError), open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def log_since(self, offset: int) -> tuple[str, int]:
        """The whole lines of the log after ``offset`` and the offset after them."""
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except FileNotFoundError:
            return "", offset
        end = data.rfind(b"\n") + 1  # whole lines only: the rest comes with the next read
        return data[:end].decode("utf-8", "replace"), offset + end

    def save_state(self, name: str, text: str) -> None:
        """Save a named state of the run (``parent.json``), atomically; OSError like any write."""
        write_atomic(self.folder / name, text)

    def load_state(self, name: str) -> str | None:
        """A named state of the run, None when there is none."""
        try:
            return (self.folder / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def has_state(self, name: str) -> bool:
        """Whether the named state was saved."""
        return (self.folder / name).is_file()

    def runner_alive(self, record: dict[str, Any]) -> bool:
        """Whether the process the record names still runs the workflow."""
        pid = record.get("pid")
        identity = record.get("processStart")
        return isinstance(pid, int) and process_alive(pid, identity if isinstance(identity, str) else None)

    def try_run_lock(self) -> Callable[[], None] | None:
        """Take the run lock (a workflow never runs twice at once): the function that releases it, or None
        when another process holds it."""
        fd = try_run_lock(self)
        if fd is None:
            return None
        return lambda: os.close(fd)  # the lock goes with the descriptor

    def running_elsewhere(self) -> bool:
        """Whether another process holds the run lock now."""
        return running_elsewhere(self)

    def has_result(self) -> bool:
        """Whether the final answer was saved."""
        return self.result_path.exists()

    # --- stop ---------------------------------------------------------------------------------

    def request_stop(self) -> None:
        """Ask the worker to stop (``maia stop``)."""
        self.stop_path.touch()

    def stop_requested(self) -> bool:
        """``maia stop`` was run."""
        return self.stop_path.exists()

    def clear_stop(self) -> None:
        """Forget a ``maia stop`` (of a run that ended)."""
        with contextlib.suppress(OSError):
            self.stop_path.unlink()

    # --- requests -----------------------------------------------------------------------------

    def _request_path(self, request_id: str) -> Path:
        return self.requests_dir / f"{request_id}.json"

    def answer_path(self, request_id: str) -> Path:
        """``requests/rN.answer.json``."""
        return self.requests_dir / f"{request_id}.answer.json"

    def add_request(
        self,
        kind: RequestKind,
        agent: str,
        message: str,
        detail: str | None = None,
        detail_kind: str | None = None,
    ) -> Request:
        """Write the next ``rN.json`` (the worker); ``detail``: the command or diff the person must see."""
        with self.locked():
            self.requests_dir.mkdir(parents=True, exist_ok=True)
            # an answer file already there (planted before its request) never gets a request of its number
            names = [p.name for p in self.requests_dir.iterdir()]
            numbers = [int(m.group(1)) for name in names if (m := _ANY_REQUEST_FILE.match(name))]
            request = Request(f"r{max(numbers, default=0) + 1}", kind, agent, message, now_iso())
            request.detail, request.detail_kind = detail, detail_kind if detail is not None else None
            request.nonce = secrets.token_hex(16)
            data = {**request.to_json(), "state": "pending", "nonce": request.nonce}
            write_atomic(self._request_path(request.id), _dump(data))
        return request

    def close_request(self, request_id: str, state: Literal["answered", "withdrawn"]) -> None:
        """Mark a request answered or withdrawn (the worker, the request file's one writer)."""
        with self.locked():
            path = self._request_path(request_id)
            data = _read_json(path, _("the request"))
            if isinstance(data, dict):
                data["state"] = state
                write_atomic(path, _dump(data))

    def read_answer(self, request_id: str) -> dict[str, Any] | None:
        """The answer to a request, None while there is none; WorkflowFileError when it cannot be read."""
        path = self.answer_path(request_id)
        try:
            data = _read_json(path, _("the answer"))
        except FileNotFoundError:
            return None
        if not isinstance(data, dict):
            raise WorkflowFileError(_("{path}: an answer must be a JSON object").format(path=path))
        return data

    def requests(self) -> tuple[list[Request], list[str]]:
        """Every request in order, and a warning per file that cannot be read."""
        found: list[Request] = []
        warnings: list[str] = []
        try:
            names = sorted((int(m.group(1)), p) for p in self.requests_dir.iterdir() if (m := _REQUEST.match(p.name)))
        except FileNotFoundError:
            return [], []
        except OSError as error:
            return [], [_("{path}: cannot list the requests: {error}").format(path=self.requests_dir, error=error)]
        for number, path in names:
            try:
                data = _read_json(path, _("the request"))
            except FileNotFoundError:
                continue
            except WorkflowFileError as error:
                warnings.append(error.message)
                continue
            kind = data.get("kind") if isinstance(data, dict) else None
            if kind not in ("permission", "intervention"):
                warnings.append(_('{path}: "kind" must be permission or intervention; skipped.').format(path=path))
                continue
            assert isinstance(data, dict)
            request = Request(
                f"r{number}",
                kind,
                str(data.get("agent") or "?"),
                str(data.get("message") or ""),
                str(data.get("created") or ""),
                nonce=str(data.get("nonce") or ""),
                detail=data["detail"] if isinstance(data.get("detail"), str) else None,
                detail_kind=data["detailKind"] if isinstance(data.get("detailKind"), str) else None,
            )
            if data.get("state") == "withdrawn":
                request.state = "withdrawn"
            if self.answer_path(request.id).exists():
                request.state = "answered"
                try:
                    request.answer = self.read_answer(request.id)
                except WorkflowFileError as error:
                    request.answer_problem = error.message
                    warnings.append(error.message)
            found.append(request)
        return found, warnings

    def answer(self, request_id: str, answer: dict[str, Any], *, still_open: Callable[[], None]) -> None:
        """Write a request's one answer (``maia approve`` / ``reply``); UsageError when it is answered already.

        ``still_open`` is called under the lock and raises when the workflow can no longer take answers.
        """
        with self.locked():
            still_open()
            requests, _warnings = self.requests()
            request = answerable(self.id, request_id, requests)
            payload = {**answer, "nonce": request.nonce, "time": now_iso()}
            self._create_once(self.answer_path(request_id), _dump(payload))

    def _create_once(self, path: Path, text: str) -> None:
        """Create ``path`` with its whole content at once, never over an existing file (the worker never
        sees half an answer)."""
        try:
            self._link_complete(path, text)
        except FileExistsError:
            raise UsageError(_("The request was already answered ({path}).").format(path=path)) from None

    @staticmethod
    def _link_complete(path: Path, text: str) -> None:
        """Create ``path`` as a hard link of a complete temporary file; FileExistsError when it exists."""
        temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(3)}.tmp")
        try:
            with open(temp, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.link(temp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)

    # --- the reserve --------------------------------------------------------------------------

    @property
    def reserve_path(self) -> Path:
        """``.reserve``: room set aside for the end of the run on a full disk."""
        return self.folder / ".reserve"

    def keep_reserve(self) -> None:
        """Set ``RESERVE_BYTES`` aside (best effort: a disk already full gets none)."""
        try:
            if self.reserve_path.exists():
                return
            with open(self.reserve_path, "wb") as handle:
                handle.write(b"\0" * RESERVE_BYTES)  # real blocks (not a sparse file): they can be given back
                handle.flush()
                os.fsync(handle.fileno())
        except OSError:
            with contextlib.suppress(OSError):
                self.reserve_path.unlink()

    def free_reserve(self) -> bool:
        """Give the reserve back to the disk; False when there was none."""
        try:
            self.reserve_path.unlink()
        except OSError:
            return False
        return True


# --- the registry ----------------------------------------------------------------------------


def answerable(workflow_id: str, request_id: str, requests: list[Request]) -> Request:
    """The request an answer is for, still waiting for one (every registry backend checks the same way):
    NotFoundError for an unknown request, UsageError for one answered or withdrawn."""
    request = next((r for r in requests if r.id == request_id), None)
    if request is None:
        raise NotFoundError(_("The workflow {id} has no request {request}.").format(id=workflow_id, request=request_id))
    if request.state == "answered":
        raise UsageError(_("The request {request} was already answered.").format(request=request_id))
    if request.state == "withdrawn":
        raise UsageError(
            _("The request {request} was withdrawn: the workflow no longer waits for it.").format(request=request_id)
        )
    return request


def _sort_key(workflow: Workflow) -> tuple[str, int, str]:
    created = 0
    with contextlib.suppress(WorkflowFileError, OSError):
        value = workflow.read().get("createdNs")
        created = value if isinstance(value, int) else 0
    match = WORKFLOW_ID.match(workflow.id)
    return (match.group(1) if match else "", created, workflow.id)


class WorkflowRegistry:
    """``~/.maia/workflows``: creating workflows and finding them by reference."""

    def __init__(self, home: Path) -> None:
        self.root = home / "workflows"

    def create(self, record: dict[str, Any]) -> Workflow:
        """A new folder with a fresh id, its record written (``id``, ``version``, ``createdNs`` added)."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            while True:
                folder = self.root / new_id()
                try:
                    folder.mkdir()
                except FileExistsError:
                    continue
                break
            (folder / "requests").mkdir()
            (folder / "traces").mkdir()
            workflow = Workflow(folder)
            workflow.write({"version": RECORD_VERSION, "id": workflow.id, "createdNs": time.time_ns(), **record})
            workflow.keep_reserve()
        except OSError as error:
            raise MaiaError(
                _("{path}: cannot create a workflow there: {error}").format(
                    path=self.root, error=error.strerror or error
                )
            ) from None
        return workflow

    def get(self, workflow_id: str) -> Workflow | None:
        """The workflow with this exact id."""
        if not WORKFLOW_ID.match(workflow_id):
            return None
        folder = self.root / workflow_id
        return Workflow(folder) if folder.is_dir() else None

    def all(self) -> list[Workflow]:
        """Every workflow, oldest first."""
        try:
            folders = [p for p in self.root.iterdir() if WORKFLOW_ID.match(p.name) and p.is_dir()]
        except FileNotFoundError:
            return []
        except OSError as error:
            raise MaiaError(
                _("{path}: cannot list the workflows: {error}").format(path=self.root, error=error)
            ) from None
        return sorted((Workflow(f) for f in folders), key=_sort_key)

    def find(self, ref: str) -> Workflow:
        """By exact id, ``last``, a fragment of one id only, or an agent's name (its newest workflow)."""
        ref = ref.strip()
        if not ref:
            raise UsageError(_("Give a workflow: its id, a part of it, last, or its agent's name."))
        exact = self.get(ref)
        if exact is not None:
            return exact
        every = self.all()
        if ref.lower() == "last":
            if not every:
                raise NotFoundError(_("No workflow yet: start one with maia run AGENT_FILE."))
            return every[-1]
        lowered = ref.lower()
        matching = [w for w in every if lowered in w.id.lower()]
        if len(matching) == 1:
            return matching[0]
        if len(matching) > 1:
            shown = ", ".join(w.id for w in reversed(matching[-10:]))
            more = len(matching) - 10
            if more > 0:
                shown += _(" and {count} more").format(count=more)
            raise UsageError(
                _("{ref!r} matches several workflows: {ids}. Give more of the id.").format(ref=ref, ids=shown)
            )
        by_agent = []
        for workflow in every:
            with contextlib.suppress(WorkflowFileError, OSError):
                if str(workflow.read().get("agent", "")).lower() == lowered:
                    by_agent.append(workflow)
        if by_agent:
            return by_agent[-1]
        raise NotFoundError(
            _("No workflow matches {ref!r} (an id, a part of one, last, or an agent's name).").format(ref=ref),
            hint=_("maia workflows --all lists them."),
        )


# --- the run lock (a workflow never runs twice at once) --------------------------------------------

RUN_LOCK = ".run.lock"


def try_run_lock(workflow: Workflow) -> int | None:
    """Take the workflow's run lock (an open descriptor to keep), or None when another process holds it."""
    fd = os.open(workflow.folder / RUN_LOCK, os.O_RDWR | os.O_CREAT, 0o666)  # close-on-exec: children never hold it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def run_lock(workflow: Workflow) -> Iterator[bool]:
    """Hold the run lock for the block; yields False (and holds nothing) when another process runs it."""
    fd = try_run_lock(workflow)
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)  # the lock goes with the descriptor


def running_elsewhere(workflow: Workflow) -> bool:
    """Whether a process holds the workflow's run lock now."""
    try:
        with run_lock(workflow) as free:
            return not free
    except OSError:
        return False  # a folder that cannot hold the lock file: nothing runs there either
