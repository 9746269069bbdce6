"""A bare MCP server over stdio, standard library only, for the tests that time its cold start (run it as a script).

    python bare_mcp.py

The SDK's server (tests/mcp/server_app.py) spends about a second of CPU importing itself: on a loaded 2-core
machine its cold start takes longer than a short ``timeout``, so a test of a reconnection within that timeout
failed for a reason that is not MAIA's. This one starts in a few milliseconds. It speaks the protocol's
handshake (``initialize``), ``ping``, ``tools/list`` and ``tools/call`` (newline-delimited JSON-RPC 2.0) and
offers ``pid`` (its process id) and ``echo`` (the text unchanged), as the SDK server does.
"""

import json
import os
import sys
from typing import Any

TOOLS = [
    {"name": "pid", "description": "The server's process id.", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "echo",
        "description": "Return the text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
]


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The result of one request (KeyError: no such method or tool)."""
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "bare", "version": "test"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        arguments = params.get("arguments") or {}
        text = {"pid": lambda: str(os.getpid()), "echo": lambda: str(arguments["text"])}[params["name"]]()
        return {"content": [{"type": "text", "text": text}], "isError": False}
    raise KeyError(method)


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:  # a notification (initialized, cancelled): nothing to answer
            continue
        try:
            reply: dict[str, Any] = {"result": answer(message["method"], message.get("params") or {})}
        except KeyError as missing:
            reply = {"error": {"code": -32601, "message": f"unknown: {missing}"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
