"""The captured MCP exchanges (tests/fixtures/mcp) and loopback servers that answer exactly as they show.

One virtual environment cannot hold two SDK generations, so MAIA's client is proven against
``mcp==1.30`` servers by replaying their captured replies: the replay server keeps the 1.30
server's rules (session ids, protocol-version header, Accept header, the 400/404/406 bodies) and
answers each JSON-RPC request with the captured reply to the same request (method, tool name and
arguments), only renumbering the ``id``. A request the capture does not show gets an error that
fails the test.
"""

from __future__ import annotations

import json
import queue
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from werkzeug.wrappers import Request, Response

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mcp"
_TRUNCATED = re.compile(r"^\.\.\. \[(\d+) characters in total\]$")


@dataclass
class Message:
    """One HTTP request or response (or one event on a GET stream) as captured."""

    first_line: str
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    truncated: bool = False

    @property
    def status(self) -> int:
        match = re.search(r"HTTP/1\.1 (\d{3})", self.first_line)
        return int(match.group(1)) if match else 0

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[tuple[str, str]]:
        """``(event, data)`` pairs of an SSE body."""
        found: list[tuple[str, str]] = []
        event = "message"
        for line in self.body.splitlines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                found.append((event, line[6:]))
                event = "message"
        return found


@dataclass
class Exchange:
    """A captured request and what came back for it (for the legacy SSE transport: the stream events)."""

    section: str
    request: Message
    responses: list[Message] = field(default_factory=list)

    @property
    def rpc(self) -> dict[str, Any]:
        try:
            value = json.loads(self.request.body)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


def _message(lines: list[str]) -> Message:
    message = Message(lines[0])
    index = 1
    if lines[0].startswith("(GET stream event)"):
        body = lines[1:]
        if body and _TRUNCATED.match(body[-1]):
            message.truncated = True
            body = body[:-1]
        message.body = "\n".join(body)
        return message
    while index < len(lines) and lines[index]:
        name, _sep, value = lines[index].partition(": ")
        message.headers[name.lower()] = value
        index += 1
    body = lines[index + 1 :]
    if body and _TRUNCATED.match(body[-1]):
        message.truncated = True
        body = body[:-1]
    message.body = "\n".join(body).strip("\n")
    return message


def parse(name: str) -> list[Exchange]:
    """Every exchange of a transcript file, in order."""
    exchanges: list[Exchange] = []
    section = ""
    block: list[str] = []
    side = ""

    def flush() -> None:
        nonlocal block, side
        if block:
            message = _message(block)
            if side == ">":
                exchanges.append(Exchange(section, message))
            elif exchanges:
                exchanges[-1].responses.append(message)
        block, side = [], ""

    for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            flush()
            section = line[4:]
        elif line.startswith(">>> ") or line == ">>>":
            if side == "<":
                flush()
            side = ">"
            block.append(line[4:])
        elif line.startswith("<<< ") or line == "<<<":
            if side == ">" or line.startswith("<<< (GET stream"):
                flush()
            side = "<"
            block.append(line[4:])
        elif line.startswith("[") and line.endswith("s]"):
            flush()
    flush()
    return exchanges


def complete_tools_list(reply: str) -> str:
    """A captured ``tools/list`` reply cut by the capture: keep the tools it shows whole, close the JSON."""
    cut = reply.rfind('},{"name":')
    return reply[: cut + 1] + "]}}"


def sse_body(*datas: str) -> str:
    """Events the way the SDK servers write them (CRLF line ends)."""
    return "".join(f"event: message\r\ndata: {d}\r\n\r\n" for d in datas)


class ReplayStore:
    """Captured replies keyed by what the request asked."""

    def __init__(self, exchanges: list[Exchange]) -> None:
        self.exchanges = exchanges

    def section(self, prefix: str) -> Exchange:
        return next(e for e in self.exchanges if e.section.startswith(prefix))

    def initialize_reply(self, offered: str) -> dict[str, Any]:
        """The 1.30 server echoes a version it supports, else answers its newest: both replies were captured."""
        replies = [
            (e.rpc["params"]["protocolVersion"], self._datas(e)[0])
            for e in self.exchanges
            if e.rpc.get("method") == "initialize"
        ]
        for _offered, data in replies:
            if json.loads(data)["result"]["protocolVersion"] == offered:
                return dict(json.loads(data))
        return dict(json.loads(next(d for o, d in replies if o not in SUPPORTED)))

    def reply_datas(self, rpc: dict[str, Any]) -> list[str] | None:
        """The captured ``data:`` lines answering a request like ``rpc`` (same method, tool, arguments)."""
        for exchange in self.exchanges:
            captured = exchange.rpc
            if captured.get("method") != rpc.get("method") or "id" not in captured:
                continue
            if rpc.get("method") == "tools/call":
                mine, theirs = rpc.get("params", {}), captured.get("params", {})
                if (mine.get("name"), mine.get("arguments")) != (theirs.get("name"), theirs.get("arguments")):
                    continue
            datas = self._datas(exchange)
            if datas:
                return datas
        return None

    def _datas(self, exchange: Exchange) -> list[str]:
        datas: list[str] = []
        for response in exchange.responses:
            for _event, data in response.events():
                if response.truncated and data == response.events()[-1][1]:
                    if '"tools":[' not in data:
                        return []  # a reply the capture cut (big): not replayable
                    data = complete_tools_list(data)
                if data.startswith("{"):
                    datas.append(data)
        return datas


def _renumber(data: str, request_id: Any) -> str:
    message = json.loads(data)
    if "id" in message and ("result" in message or "error" in message):
        message["id"] = request_id
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


SUPPORTED = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # from the captured 400 reply


class StreamableReplay:
    """A Streamable HTTP server answering as the captured mcp 1.30 server did (``http-legacy-v1.txt``)."""

    def __init__(self) -> None:
        self.store = ReplayStore(parse("http-legacy-v1.txt"))
        self.sessions: set[str] = set()
        self.log: list[dict[str, Any]] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def forget_sessions(self) -> None:
        """As if the server restarted: every session id is unknown."""
        with self.lock:
            self.sessions.clear()

    def _captured(self, prefix: str, **replace: str) -> Response:
        response = self.store.section(prefix).responses[0]
        body = response.body
        for old, new in replace.items():
            body = body.replace(old, new)
        headers = {k: v for k, v in response.headers.items() if k in ("content-type", "mcp-session-id")}
        return Response(body, status=response.status, headers=headers)

    def __call__(self, request: Request) -> Response:
        body = request.get_data(as_text=True)
        rpc = json.loads(body) if body else {}
        with self.lock:
            self.log.append({"method": request.method, "headers": dict(request.headers), "rpc": rpc})
        session = request.headers.get("mcp-session-id")
        if request.method == "DELETE":
            with self.lock:
                known = session in self.sessions
                self.sessions.discard(session or "")
            if not known:
                return self._captured("POST with an unknown Mcp-Session-Id")
            return self._captured("DELETE ends the session")
        accept = request.headers.get("accept", "")
        if request.method == "GET":
            if session not in self.sessions:
                return self._captured("POST with an unknown Mcp-Session-Id")
            headers = {"content-type": "text/event-stream", "mcp-session-id": session or ""}
            return Response(self._idle_stream(session or ""), headers=headers, direct_passthrough=True)
        if "application/json" not in accept or "text/event-stream" not in accept:
            return self._captured("POST accepting only application/json")
        if rpc.get("method") == "initialize":
            reply = self.store.initialize_reply(rpc["params"]["protocolVersion"])
            reply["id"] = rpc["id"]
            new = uuid.uuid4().hex
            with self.lock:
                self.sessions.add(new)
            data = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
            return Response(sse_body(data), headers={"content-type": "text/event-stream", "mcp-session-id": new})
        if not session:
            return self._captured("POST without Mcp-Session-Id")
        if session not in self.sessions:
            return self._captured("POST with an unknown Mcp-Session-Id")
        version = request.headers.get("mcp-protocol-version")
        if version is not None and version not in SUPPORTED:
            return self._captured("POST with an unsupported MCP-Protocol-Version", **{"1999-01-01": version})
        if "id" not in rpc:
            return Response("", status=202, headers={"content-type": "application/json", "mcp-session-id": session})
        datas = self.store.reply_datas(rpc)
        if datas is None:
            datas = [
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": rpc["id"],
                        "error": {"code": -32099, "message": f"replay: no captured reply for {body}"},
                    }
                )
            ]
        events = sse_body(*(_renumber(d, rpc["id"]) for d in datas))
        return Response(events, headers={"content-type": "text/event-stream", "mcp-session-id": session})

    def _idle_stream(self, session: str) -> Iterator[bytes]:
        yield b""  # headers now; then no bytes, as the captured server
        while not self.stop.wait(0.1):
            with self.lock:
                if session not in self.sessions:
                    return


class SseReplay:
    """A legacy HTTP+SSE server answering as the captured mcp 1.30 server did (``sse-legacy-v1.txt``)."""

    def __init__(self) -> None:
        self.store = ReplayStore(parse("sse-legacy-v1.txt"))
        self.http_store = ReplayStore(parse("http-legacy-v1.txt"))  # the same server's initialize replies
        self.streams: dict[str, queue.Queue[str]] = {}
        self.log: list[dict[str, Any]] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def get(self, request: Request) -> Response:
        session = uuid.uuid4().hex
        events: queue.Queue[str] = queue.Queue()
        with self.lock:
            self.streams[session] = events
            self.log.append({"method": "GET", "headers": dict(request.headers), "rpc": {}})
        captured = self.store.section("GET /sse").responses[0]
        headers = {k: v for k, v in captured.headers.items() if k in ("content-type", "cache-control")}
        return Response(self._stream(session, events), headers=headers, direct_passthrough=True)

    def _stream(self, session: str, events: queue.Queue[str]) -> Iterator[bytes]:
        yield f"event: endpoint\r\ndata: /messages/?session_id={session}\r\n\r\n".encode()
        while not self.stop.is_set():
            try:
                data = events.get(timeout=0.1)
            except queue.Empty:
                continue
            yield sse_body(data).encode()

    def post(self, request: Request) -> Response:
        body = request.get_data(as_text=True)
        rpc = json.loads(body) if body else {}
        with self.lock:
            self.log.append({"method": "POST", "headers": dict(request.headers), "rpc": rpc})
        session = request.args.get("session_id")
        if not session:
            return self._captured("POST without session_id")
        events = self.streams.get(session)
        if events is None:
            return self._captured("POST with an unknown session_id")
        if rpc.get("method") == "initialize":
            reply = self.http_store.initialize_reply(rpc["params"]["protocolVersion"])
            reply["id"] = rpc["id"]
            events.put(json.dumps(reply, ensure_ascii=False, separators=(",", ":")))
        elif "id" in rpc:
            datas = self.store.reply_datas(rpc) or self.http_store.reply_datas(rpc)
            if datas is None:
                datas = [
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": rpc["id"],
                            "error": {"code": -32099, "message": f"replay: no captured reply for {body}"},
                        }
                    )
                ]
            for data in datas:
                events.put(_renumber(data, rpc["id"]))
        return self._captured("POST initialize to the endpoint")

    def _captured(self, prefix: str) -> Response:
        response = self.store.section(prefix).responses[0]
        return Response(response.body, status=response.status)
