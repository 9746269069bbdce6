"""Issue 29, item 6: a workflow's run loads only what its first request needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.streams import text_stream
from tests.subagents.test_startup import PROBE
from tests.workflows.conftest import WorkflowLiteLLM

# No mcp.json: the MCP layer (and its SDK) is not loaded; nor the tokenizer (no context bar to fill), the
# permission and search engines (no tool called yet), jsonschema, or httpx's command-line client.
NOT_BEFORE_THE_FIRST_REQUEST = [
    "maia.mcp.source",
    "maia.mcp.client",
    "mcp",
    "tiktoken",
    "jsonschema",
    "maia.permissions.engine",
    "maia.search.engine",
    "rich",
    "pygments",
]


def test_a_workflow_loads_only_what_its_first_request_needs(
    script: WorkflowLiteLLM, make_parent: Callable[..., Path], tmp_path: Path
) -> None:
    """The worker's code path (``run_workflow``), here in the foreground, as ``python -I`` like the worker."""
    parent = make_parent()
    script.add("parent", text_stream("Reviewed."))
    out = tmp_path / "modules.json"
    code = PROBE + f"from maia.commands import main\nmain(['run', {str(parent)!r}, 'review the code'])\n"
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Reviewed."
    loaded = json.loads(out.read_text())
    assert "maia.workflows.worker" in loaded and "httpx" in loaded  # the probe saw the real request
    assert [name for name in NOT_BEFORE_THE_FIRST_REQUEST if name in loaded] == []
