"""A sandboxed command cannot reach an abstract UNIX socket a process outside listens on, even with the
network on (X11 and session buses listen there: a way to the user's desktop; from the security review)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from tests.sandbox.helpers import needs_scopes

SANDBOX = [sys.executable, "-m", "maia.process.sandbox", "--write"]
CLIENT = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
    "try:\n"
    "    s.connect('\\0' + sys.argv[1])\n"
    "    print('connected')\n"
    "except OSError as e:\n"
    "    print('refused', e.errno)\n"
)


@needs_scopes
def test_an_abstract_socket_outside_is_refused_with_the_network_on(tmp_path: Path) -> None:
    name = f"maia-test-{tmp_path.name}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    server.listen(1)
    try:
        outside = subprocess.run([sys.executable, "-c", CLIENT, name], capture_output=True, text=True, timeout=30)
        assert outside.stdout.strip() == "connected"  # the socket works without the sandbox
        inside = subprocess.run(
            [*SANDBOX, str(tmp_path), "--", sys.executable, "-c", CLIENT, name],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert inside.stdout.strip().startswith("refused"), inside.stdout + inside.stderr
    finally:
        server.close()
