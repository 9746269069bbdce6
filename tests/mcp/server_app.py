"""A real MCP server built with the official SDK, for the tests (run it as a script).

    python server_app.py --transport http|http-json|http-stateless|sse|stdio [--port N] [--token T]
                         [--marker FILE] [--name NAME]

HTTP transports bind 127.0.0.1 (port 0 = a free one) and print ``READY <port>`` on stdout once the
socket listens. ``--marker`` appends one line per start to FILE (a test proves a server never started).
"""

import argparse
import asyncio
import base64
import os
import signal
import socket
import sys
import time
from typing import Any

try:  # mcp 2.x
    from mcp.server.mcpserver import Context, Image, MCPServer

    V1 = False
except ImportError:  # mcp 1.x: the same server is called FastMCP
    from mcp.server.fastmcp import Context, Image  # type: ignore[no-redef]
    from mcp.server.fastmcp import FastMCP as MCPServer

    V1 = True

# a 16x16 PNG (the fixtures' image() tool)
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAI0lEQVR4nGNgYPgPR/+ROLjFB58G4kxF4g1CDYMwWEdiPAAAker/AT60A4AAAAAASUVORK5CYII="
)


def build(name: str, transport: str) -> Any:
    if V1:
        server = MCPServer(
            name,
            log_level="ERROR",
            json_response=transport == "http-json",
            stateless_http=transport == "http-stateless",
        )
    else:
        server = MCPServer(name, version="test", log_level="ERROR")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    @server.tool()
    async def slow(seconds: float, ctx: Context) -> str:
        """Sleep for `seconds`, reporting progress every 0.5 s."""
        steps = max(1, int(seconds / 0.5))
        for step in range(steps):
            await asyncio.sleep(seconds / steps)
            await ctx.report_progress(step + 1, steps, f"step {step + 1}/{steps}")
        return f"slept {seconds} s"

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise RuntimeError("intentional failure from fail()")

    @server.tool()
    def big() -> str:
        """Return exactly 200,000 characters of numbered text lines."""
        line = "line {:06d}: the quick brown fox jumps over the lazy dog\n"
        text = "".join(line.format(i) for i in range(200_000 // len(line.format(0)) + 1))
        return text[:200_000]

    @server.tool()
    def image() -> Image:
        """A 16x16 PNG."""
        return Image(data=PNG, format="png")

    @server.tool()
    def pid() -> str:
        """The server's process id."""
        return str(os.getpid())

    @server.tool()
    def die() -> str:
        """End the server process at once (the transport breaks mid-session)."""
        os._exit(3)

    @server.tool(name="tool.with spaces/and-more")
    def odd_name() -> str:
        """A tool whose name needs sanitising."""
        return "odd"

    @server.tool(name="tool with.spaces/and-more")
    def odd_twin() -> str:
        """Another tool whose name becomes the same once made safe."""
        return "twin"

    @server.prompt()
    def review(code: str, language: str = "python") -> str:
        """Ask for a code review."""
        return f"Please review this {language} code:\n{code}"

    @server.resource("memo://notes", mime_type="text/plain")
    def notes() -> str:
        """Team notes."""
        return "remember the milk"

    @server.resource("memo://logo", mime_type="image/png")
    def logo() -> bytes:
        """The logo."""
        return PNG

    return server


def _auth(app: Any, token: str) -> Any:
    """Bearer check answering exactly as the SDK's RequireAuthMiddleware does (401, invalid_token)."""
    import json

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode() != f"Bearer {token}":
                body = json.dumps({"error": "invalid_token", "error_description": "Authentication required"}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (
                                b"www-authenticate",
                                b'Bearer error="invalid_token", error_description="Authentication required"',
                            ),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="http")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token")
    parser.add_argument("--marker")
    parser.add_argument("--name", default="maia-test")
    parser.add_argument("--stubborn", action="store_true", help="ignore SIGTERM and outlive stdin (stdio)")
    args = parser.parse_args()
    if args.marker:
        with open(args.marker, "a", encoding="utf-8") as handle:
            handle.write(f"{args.transport} {os.getpid()}\n")
    server = build(args.name, args.transport)
    if args.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.transport == "stdio":
        server.run("stdio")
        while args.stubborn:  # stdin closed: a well-behaved server would exit now
            time.sleep(1)
        return
    import uvicorn

    if args.transport == "sse":
        app = server.sse_app()
    elif V1:
        app = server.streamable_http_app()
    else:
        app = server.streamable_http_app(
            json_response=args.transport == "http-json", stateless_http=args.transport == "http-stateless"
        )
    if args.token:
        app = _auth(app, args.token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(64)
    print(f"READY {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    sys.exit(main())
