"""Issue 29, item 6: a sub-agent's process loads only what its first request needs, and its sandbox is
still in place before its first command."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from maia.app.application import Application, AppOptions
from maia.core.settings import load_settings
from maia.process.sandbox.policy import policy_from_settings
from maia.provider.fake import ScriptedProvider, text_turn, tool_turn
from maia.subagents.launcher import launch_subagent
from tests.agent.helpers import RecordingUI
from tests.streams import text_stream
from tests.subagents.conftest import ScriptedLiteLLM
from tests.subagents.test_process import definition, spec_for

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX child")

# Run before the process's own code: at the first model request it sends (on a connection of its own, or to
# its parent, which makes it: a sub-agent's relay), the modules it has loaded go to a file; any connection
# it opens itself is written down too.
PROBE = """
import json, os, socket, sys
OUT = sys.argv[1]
def dump():
    if not getattr(dump, "done", False):
        dump.done = True
        with open(OUT, "w") as out:
            json.dump(sorted(sys.modules), out)
_write = os.write
def write(fd, data):
    if bytes(data[:20]).startswith(b'{"type":"http"'):
        dump()
    return _write(fd, data)
os.write = write
_send = socket.socket.send
def send(self, data, *args):
    if b"/chat/completions" in bytes(data[:300]):
        dump()
    return _send(self, data, *args)
socket.socket.send = send
_connect = socket.socket.connect
def connect(self, address):
    with open(OUT + ".connections", "a") as out:
        out.write(repr(address) + "\\n")
    return _connect(self, address)
socket.socket.connect = connect
"""

# What a task's first request never needs in a sub-agent's process: httpx and anyio (its parent makes its model
# requests: maia.subagents.relay), the sandbox policy (until a command),
# the MCP layer (no mcp.json), the sub-agent layer (no nesting), the permission and search engines (until a
# tool is called), the tokenizer, jsonschema and yaml (the child reads no AGENT.md: its definition travels in
# the start message; the user's agents here, as a project's would be read by the folder's trust check).
NOT_BEFORE_THE_FIRST_REQUEST = [
    "httpx",
    "httpcore",
    "h11",
    "anyio",
    "maia.process.sandbox.policy",
    "maia.mcp.source",
    "maia.mcp.client",
    "maia.subagents.source",
    "maia.subagents.tool",
    "maia.permissions.engine",
    "maia.search.engine",
    "tiktoken",
    "jsonschema",
    "yaml",
]


def probed_child(out: Path) -> list[str]:
    """The child's command (``python -I``, as MAIA starts it) with the probe in front of its entry point."""
    code = PROBE + "from maia.frontends.subagent import main\nsys.exit(main())\n"
    return [sys.executable, "-I", "-c", code, str(out)]


async def test_a_child_loads_only_what_its_first_request_needs(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path, tmp_path: Path
) -> None:
    make_agent("rev", base=home / "agents")
    script.add("rev", text_stream("All good."))
    out = tmp_path / "modules.json"
    result = await launch_subagent(
        spec_for(definition(home, project, "rev"), "check a.py", project, home), command=probed_child(out)
    )
    assert result.ok, (result.error, result.stderr_tail)
    loaded = json.loads(out.read_text())
    assert "maia.app.application" in loaded and "maia.subagents.relay" in loaded  # the probe saw the real request
    assert [name for name in NOT_BEFORE_THE_FIRST_REQUEST if name in loaded] == []
    assert script.seen("rev") == 1  # the parent made it
    assert not Path(f"{out}.connections").exists()  # the child connected to nothing itself


async def test_the_sandbox_is_worked_out_before_the_first_command(
    home: Path, project: Path, write_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sandbox_at_first_use``: nothing worked out at start; the first command runs under the same policy
    an eager start would have given it."""
    import maia.tools.bash as bash

    seen: list[Any] = []
    real = bash.run_shell

    async def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("sandbox"))
        return await real(*args, **kwargs)

    monkeypatch.setattr(bash, "run_shell", spy)
    write_settings(permissions={"allow": ["Bash(echo *)"]})
    settings = load_settings(home)
    options = AppOptions(
        launch=project, home=home, settings=settings, model="m", save=False, origin="subagent", depth=1,
        sandbox_at_first_use=True,
    )  # fmt: skip
    provider = ScriptedProvider([tool_turn(("Bash", {"command": "echo hi"})), text_turn("done")])
    app = await Application.open(options, RecordingUI(), provider=provider)  # type: ignore[arg-type]
    try:
        assert app._sandbox_pending  # nothing worked out before the first request

        async def never(_wait: object) -> bool:
            return False

        await app.send("run it", on_wait=never)
    finally:
        await app.aclose()
    assert seen == [policy_from_settings(settings, project)]


async def test_a_spare_has_loaded_everything_its_first_request_needs_before_its_task_comes(
    script: ScriptedLiteLLM, make_agent: Callable[..., Path], home: Path, project: Path, tmp_path: Path
) -> None:
    """What a spare loads while it waits (``warm_up``) is all its run loads up to its first request: the call
    that takes it waits for no module (each was ~25 ms of a spare call: the built-in tools, anyio's asyncio
    layer, which anyio loads at the first connection)."""
    from maia.subagents.spares import spare_ready, start_spare

    make_agent("rev", base=home / "agents")
    script.add("rev", text_stream("All good."))
    out = tmp_path / "modules.json"
    code = (
        PROBE + "import maia.frontends.subagent as child\n"
        "warm_up = child.warm_up\n"
        "def warm():\n"
        "    warm_up()\n"
        "    with open(OUT + '.ready', 'w') as out:\n"
        "        json.dump(sorted(sys.modules), out)\n"
        "child.warm_up = warm\n"
        "sys.exit(child.main())\n"
    )
    command = [sys.executable, "-I", "-c", code, str(out)]
    await start_spare(project, command=command)
    assert await spare_ready()
    ready = set(json.loads(Path(f"{out}.ready").read_text()))
    result = await launch_subagent(
        spec_for(definition(home, project, "rev"), "check a.py", project, home), command=command
    )
    assert result.ok, (result.error, result.stderr_tail)
    loaded = set(json.loads(out.read_text()))
    assert (
        "maia.subagents.relay" in loaded and "maia.tools.read" in ready
    )  # the probe saw the real request, after the warm-up
    assert sorted(loaded - ready) == []
