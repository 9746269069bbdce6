"""Selection of servers and tools by the Mcp(server[,tool]) rules (§22 steps 2 and 4): pure functions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from maia.mcp.config import ServerConfig
from maia.mcp.rules import hidden_because, select_servers, tool_name
from maia.permissions.rules import RuleSet, parse_rules


def server(name: str, origin: str = "user", **extra: object) -> ServerConfig:
    return ServerConfig(name=name, transport="http", origin=origin, file=Path("/x/mcp.json"), url="https://x", **extra)  # type: ignore[arg-type]


def rules(**families: list[str]) -> RuleSet:
    return parse_rules(families).ruleset


def enabled(selections: list[object]) -> dict[str, bool]:
    return {s.name: s.enabled for s in selections}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, {"github": False, "docs": False}),  # no server is active by default
        ({"allow": ["Mcp(github)"]}, {"github": True, "docs": False}),
        ({"allow": ["Mcp(github,read_*)"]}, {"github": True, "docs": False}),  # any allow rule naming it
        ({"allow": ["Mcp(*)"]}, {"github": True, "docs": True}),
        ({"allow": ["Mcp"]}, {"github": True, "docs": True}),
        ({"allow": ["Mcp(*,search)"]}, {"github": True, "docs": True}),
        ({"allow": ["Mcp(git*)"]}, {"github": True, "docs": False}),
        ({"allow": ["Mcp(github)"], "deny": ["Mcp(github,*)"]}, {"github": False, "docs": False}),
        ({"allow": ["Mcp(*)"], "deny": ["Mcp(docs)"]}, {"github": True, "docs": False}),
        ({"allow": ["Mcp(*)"], "deny": ["Mcp(*)"]}, {"github": False, "docs": False}),
        ({"allow": ["Mcp(github)"], "deny": ["Mcp(github,delete_*)"]}, {"github": True, "docs": False}),
        ({"allow": ["Mcp(github)"], "ask": ["Mcp(github)"]}, {"github": True, "docs": False}),
        ({"allow": ["mcp__github__search"]}, {"github": False, "docs": False}),  # the old form only decides calls
    ],
)
def test_selection(given: dict[str, list[str]], expected: dict[str, bool]) -> None:
    selections, _warnings = select_servers([server("github"), server("docs")], rules(**given), RuleSet())
    assert enabled(selections) == expected


def test_reasons_name_the_rule() -> None:
    selections, _ = select_servers(
        [server("a"), server("b"), server("c", enabled=False)],
        rules(allow=["Mcp(a)", "Mcp(b)", "Mcp(c)"], deny=["Mcp(b,*)"]),
        RuleSet(),
    )
    a, b, c = selections
    assert a.reason == "enabled by the allow rule Mcp(a)" and a.rule == "Mcp(a)"
    assert b.reason == "disabled by the deny rule Mcp(b,*)" and b.rule == "Mcp(b,*)"
    assert '"enabled": false' in c.reason


def test_no_allow_rule_says_how_to_enable() -> None:
    (selection,), _ = select_servers([server("docs")], RuleSet(), RuleSet())
    assert selection.reason == 'no allow rule: add "Mcp(docs)" to permissions.allow'


def test_project_servers_need_the_users_literal_rule() -> None:
    servers = [server("proj", "project"), server("mine")]
    merged = rules(allow=["Mcp(*)"])
    for user in (RuleSet(), rules(allow=["Mcp(*)"]), rules(allow=["Mcp(pro*)"]), rules(deny=["Mcp(proj)"])):
        selections, _ = select_servers(servers, merged, user)
        assert enabled(selections) == {"proj": False, "mine": True}
        assert os.path.join(os.environ["MAIA_HOME"], "settings.json") in selections[0].reason
    for user in (rules(allow=["Mcp(proj)"]), rules(allow=["Mcp(proj,read)"])):
        selections, _ = select_servers(servers, merged, user)
        assert enabled(selections) == {"proj": True, "mine": True}
    # the user's trust does not override a deny
    selections, _ = select_servers(servers, rules(allow=["Mcp(*)"], deny=["Mcp(proj)"]), rules(allow=["Mcp(proj)"]))
    assert enabled(selections)["proj"] is False


def test_rules_naming_no_declared_server_warn_once() -> None:
    _, warnings = select_servers(
        [server("github")],
        rules(allow=["Mcp(gihtub)", "Mcp(git*)", "Mcp(*)"], deny=["Mcp(gihtub)", "Mcp(docs,x)"]),
        RuleSet(),
    )
    assert len(warnings) == 2  # Mcp(gihtub) is in two lists: one warning
    assert 'the permission rule "Mcp(gihtub)" names the MCP server "gihtub"' in warnings[0]
    assert os.path.join(os.environ["MAIA_HOME"], "mcp.json") + ", ./.mcp.json" in warnings[0]
    assert '"Mcp(docs,x)"' in warnings[1]


def test_tool_names() -> None:
    assert tool_name("github", "search_code") == "mcp__github__search_code"
    assert tool_name("s", "tool.with spaces/and-more") == "mcp__s__tool_with_spaces_and-more"
    assert tool_name("s", "é") == "mcp__s___"
    long = tool_name("server", "x" * 100)
    assert len(long) == 64 and long.startswith("mcp__server__xxx")


@pytest.mark.parametrize(
    ("extra", "given", "tool", "why"),
    [
        ({}, {}, "search", None),
        ({"exclude_tools": ("delete_*",)}, {}, "delete_repo", "excludeTools"),
        ({"include_tools": ("read_*", "search")}, {}, "write_file", "not in includeTools"),
        ({"include_tools": ("read_*", "search")}, {}, "read_file", None),
        ({}, {"deny": ["Mcp(s,delete_*)"]}, "delete_repo", "deny rule Mcp(s,delete_*)"),
        ({}, {"deny": ["Mcp(*,delete_*)"]}, "delete_repo", "deny rule Mcp(*,delete_*)"),
        ({}, {"deny": ["Mcp(other,delete_*)"]}, "delete_repo", None),
        ({}, {"deny": ["mcp__s__drop"]}, "drop", "deny rule mcp__s__drop"),
        ({}, {"deny": ["mcp__s__drop(x)"]}, "drop", None),  # a pattern on values decides calls, not the listing
        ({}, {"ask": ["Mcp(s,drop)"]}, "drop", None),  # ask keeps the tool, the call asks
        ({"exclude_tools": ("my_tool",)}, {}, "my.tool", "excludeTools"),  # the safe name counts too
        ({"exclude_tools": ("my_tool",)}, {}, "my_tool", "excludeTools"),
        ({}, {"deny": ["Mcp(s,my_tool)"]}, "my.tool", "deny rule Mcp(s,my_tool)"),  # the name the engine sees
    ],
)
def test_hidden_tools(extra: dict[str, object], given: dict[str, list[str]], tool: str, why: str | None) -> None:
    assert hidden_because(server("s", **extra), tool, rules(**given)) == why


def test_messages_name_the_home_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28: ~/.maia/… only when that is the home; MAIA_HOME's real path otherwise."""
    servers = [server("proj", "project")]
    (selection,), _ = select_servers(servers, rules(allow=["Mcp(*)"]), RuleSet())
    assert os.environ["MAIA_HOME"] in selection.reason and "~/.maia" not in selection.reason
    monkeypatch.delenv("MAIA_HOME")
    (selection,), _ = select_servers(servers, rules(allow=["Mcp(*)"]), RuleSet())
    assert "your own ~/.maia/settings.json" in selection.reason
