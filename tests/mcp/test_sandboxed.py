"""Local MCP servers run in the commands' sandbox; only the user's own mcp.json may opt one out."""

from __future__ import annotations

import os
from pathlib import Path

from maia.mcp.config import load_config
from maia.mcp.source import McpSource
from maia.process.sandbox.policy import policy_from_settings
from tests.mcp.conftest import stdio_entry, write_rules, write_servers
from tests.sandbox.helpers import needs_bwrap


def _children() -> list[str]:
    """The program names of this process's direct children (read from /proc)."""
    names = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm_end = stat.rindex(")")
        if int(stat[comm_end + 2 :].split()[1]) == os.getpid():
            names.append(stat[stat.index("(") + 1 : comm_end])
    return names


@needs_bwrap
async def test_a_project_server_runs_under_bubblewrap_and_a_users_opt_out_does_not(home: Path, project: Path) -> None:
    write_servers(project / ".mcp.json", {"proj": stdio_entry(project / "proj.txt", sandbox=False)})
    write_servers(home / "mcp.json", {"mine": stdio_entry(project / "mine.txt", sandbox=False)})
    write_rules(home, allow=["Mcp(proj)", "Mcp(mine)"])
    source = McpSource(home, project)
    source.sandbox = policy_from_settings(None, project)
    assert source.sandbox is not None and source.sandbox.uses_namespaces
    try:
        await source.start()
        assert [s.state for s in source.servers()] == ["ok", "ok"], [s.reason for s in source.servers()]
        assert (project / "proj.txt").exists() and (project / "mine.txt").exists()
        children = _children()
        assert children.count("bwrap") == 1  # the project's server, inside the namespace sandbox
        assert len(children) >= 2  # and the user's own, started directly
    finally:
        await source.aclose()


def test_sandbox_false_counts_only_in_the_users_file(home: Path, project: Path) -> None:
    write_servers(project / ".mcp.json", {"proj": stdio_entry(sandbox=False)})
    write_servers(home / "mcp.json", {"mine": stdio_entry(sandbox=False), "odd": stdio_entry(sandbox="no")})
    loaded = load_config(home, project)
    by_name = {s.name: s for s in loaded.servers}
    assert by_name["mine"].sandbox is False
    assert by_name["proj"].sandbox is True and by_name["odd"].sandbox is True
    assert any('"sandbox": false is ignored in a project' in w for w in loaded.warnings)
    assert any('"mcpServers.odd.sandbox" must be true or false, not a string' in w for w in loaded.warnings)
