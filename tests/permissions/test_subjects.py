"""What rules are matched against: the path the tool opens, the folder Glob walks, protected paths,
Read denies inside Grep and Glob, WebFetch hosts as the client connects, tool subjects."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from maia.core.contracts import ToolContext
from maia.permissions import Decision, Verdict, explain
from maia.permissions import paths as permission_paths
from maia.permissions.subject import McpSubject, NameSubject, PathSubject, subject_of
from maia.tools.glob import GlobTool, glob_start
from maia.tools.grep import GrepTool
from maia.tools.read import ReadTool


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "a.py").write_text("token = 1\n")
    (root / "src" / "deep" / "b.py").write_text("token = 2\n")
    (root / ".env").write_text("token = SECRET\n")
    (root / "src" / ".env").write_text("token = SECRET2\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("token outside\n")
    return root


# --- one normaliser for the tool and the engine --------------------------------------------------


@pytest.mark.parametrize("path", [".env", " .env", ".env ", "\t./.env\n", "src/../.env", "src/deep/../../.env"])
def test_the_engine_judges_the_path_the_tool_opens(path: str, tree: Path) -> None:
    decision = explain("Read", {"path": path}, {"deny": ["Read(.env)"], "allow": ["Read"]}, tree)
    assert decision.verdict == Verdict.DENY, decision.reason
    # and the tool opens that very file
    text = asyncio.run(ReadTool().execute({"path": path}, ToolContext(launch=tree)))
    assert "SECRET" in text and "SECRET2" not in text


def test_case_is_ignored_on_a_case_insensitive_file_system(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = {"deny": ["Read(.env)", "Write(.maia/**)"], "allow": ["Read", "Write(**)"]}
    # this machine's file system (tmpfs/ext4) keeps case: .ENV is another file
    assert permission_paths.case_insensitive(str(tree)) is False
    assert explain("Read", {"path": ".ENV"}, rules, tree).verdict == Verdict.ALLOW
    # on macOS' and Windows' defaults, .ENV opens .env: the engine must see the same file
    monkeypatch.setattr(permission_paths, "case_insensitive", lambda _folder: True)
    assert explain("Read", {"path": ".ENV"}, rules, tree).verdict == Verdict.DENY
    assert explain("Write", {"path": ".MAIA/Settings.json"}, rules, tree).verdict == Verdict.DENY
    assert explain("Write", {"path": "maia.md"}, {"allow": ["Write(**)"]}, tree).verdict == Verdict.ASK


def test_a_folder_rule_covers_the_folder_itself(tree: Path) -> None:
    rules = {"allow": ["Read(src/**)", "Grep(src/**)", "Glob(src/**)"]}
    assert explain("Read", {"path": "src"}, rules, tree).verdict == Verdict.ALLOW
    assert explain("Grep", {"pattern": "x", "path": "src"}, rules, tree).verdict == Verdict.ALLOW
    assert explain("Glob", {"pattern": "src/**/*.py"}, rules, tree).verdict == Verdict.ALLOW
    assert explain("Grep", {"pattern": "x", "path": "srcx"}, rules, tree).verdict == Verdict.ASK


# --- Glob is judged by the folder it walks ----------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "walked"),
    [
        ("**/*.py", None, "."),
        ("src/**/*.py", None, "src"),
        ("src/deep/*.py", None, "src/deep"),
        ("../outside/*", None, "../outside"),
        ("src/../../outside/*.txt", None, "src/../../outside"),
        ("*.txt", "src/../../outside", "src/../../outside"),
        ("/etc/*.conf", None, "/etc"),
        ("src/*/../../../outside/*", None, "src"),  # `..` after a wildcard: walks src, matches nothing outside
    ],
)
def test_glob_start(pattern: str, path: str | None, walked: str) -> None:
    assert glob_start(pattern, path)[0] == walked


def test_glob_with_dotdot_anywhere_is_judged_by_the_folder_it_really_walks(tree: Path) -> None:
    rules = {"allow": ["Glob(./**)"], "deny": [f"Glob({tree.parent}/outside/**)"]}
    sneaky = {"pattern": "src/../../outside/*.txt"}
    assert explain("Glob", sneaky, rules, tree).verdict == Verdict.DENY
    assert explain("Glob", {"pattern": "*.txt", "path": "src/../../outside"}, rules, tree).verdict == Verdict.DENY
    # what the tool does with the same input: it walks that folder
    found = asyncio.run(GlobTool().execute(sneaky, ToolContext(launch=tree)))
    assert found == str(tree.parent / "outside" / "notes.txt")
    # a `..` after a wildcard walks src only and finds nothing outside
    stray = {"pattern": "src/*/../../../outside/*"}
    assert explain("Glob", stray, rules, tree).verdict == Verdict.ALLOW
    found = asyncio.run(GlobTool().execute(stray, ToolContext(launch=tree)))
    assert found == "No files match src/*/../../../outside/*."


# --- a Read deny inside Grep and Glob ------------------------------------------------------------------


def _check(rules: Mapping[str, list[str]], launch: Path) -> Any:
    def check(name: str, tool_input: Mapping[str, Any]) -> Decision:
        return explain(name, tool_input, rules, launch)

    return check


READ_DENY = {"deny": ["Read(**/.env)"], "allow": ["Glob", "Grep"]}


def test_grep_leaves_out_files_a_read_deny_covers_and_says_so(tree: Path) -> None:
    ctx = ToolContext(launch=tree, permissions=_check(READ_DENY, tree))
    text = asyncio.run(GrepTool().execute({"pattern": "token", "output_mode": "content"}, ctx))
    assert "SECRET" not in text
    assert text.splitlines() == [
        "src/a.py:1:token = 1",
        "src/deep/b.py:1:token = 2",
        "[2 matching files left out: a Read deny rule covers them]",
    ]
    # Grep on the denied file itself is denied before it runs
    assert explain("Grep", {"pattern": "token", "path": ".env"}, READ_DENY, tree).verdict == Verdict.DENY


def test_glob_leaves_out_files_a_read_deny_covers_and_says_so(tree: Path) -> None:
    ctx = ToolContext(launch=tree, permissions=_check(READ_DENY, tree))
    text = asyncio.run(GlobTool().execute({"pattern": "**/*"}, ctx))
    assert text.splitlines() == [
        "src/a.py",
        "src/deep/b.py",
        "[2 matching files left out: a Read deny rule covers them]",
    ]


def test_a_refusal_without_a_rule_does_not_hide_files(tree: Path) -> None:
    """``maia ask`` turns questions into refusals that no rule made: files stay listed."""

    def headless(name: str, tool_input: Mapping[str, Any]) -> Decision:
        if name == "Grep":  # the call itself was allowed (it runs); the files found are judged as Read
            return Decision(Verdict.ALLOW, "Grep", "allowed")
        return Decision(Verdict.DENY, None, "nobody can answer")

    ctx = ToolContext(launch=tree, permissions=headless)
    text = asyncio.run(GrepTool().execute({"pattern": "token"}, ctx))
    assert text.splitlines()[:2] == ["src/a.py", "src/deep/b.py"]
    # secret-looking files that nothing allows reading are left out of a wide search (issue 25)
    assert ".env" not in text.replace("matching files left out", "")


def test_a_wide_search_shows_secret_looking_files_a_rule_allows(tree: Path) -> None:
    def allowed(name: str, tool_input: Mapping[str, Any]) -> Decision:
        return Decision(Verdict.ALLOW, "Read", "allowed")

    text = asyncio.run(GrepTool().execute({"pattern": "SECRET"}, ToolContext(launch=tree, permissions=allowed)))
    assert text.splitlines() == [".env", "src/.env"]


# --- protected paths and the Write/Edit family ------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "path", "rules", "verdict"),
    [
        ("Write", ".maia/settings.json", {"allow": ["Write(**)"]}, "ask"),
        ("Edit", ".maia/tools/x/TOOL.json", {"allow": ["Edit(**)"]}, "ask"),
        ("Write", ".git/config", {"allow": ["Write(**)"]}, "ask"),
        ("Write", "vendor/lib/.git/hooks/pre-commit", {"allow": ["Write(**)"]}, "ask"),
        ("Write", "MAIA.md", {"allow": ["Write(**)"]}, "ask"),
        ("Edit", "AGENTS.md", {"allow": ["Edit(*.md)"]}, "ask"),
        ("Write", "CLAUDE.md", {"allow": ["Write"]}, "ask"),
        ("Write", "{home}/settings.json", {"allow": ["Write(/**)"]}, "ask"),
        ("Write", "docs/MAIA.md", {"allow": ["Write(**)"]}, "allow"),  # not the project's instructions
        ("Write", ".maia/settings.json", {"allow": ["Write(.maia/settings.json)"]}, "allow"),
        ("Edit", ".git/config", {"allow": ["Edit(.git/**)"]}, "allow"),
        ("Write", "MAIA.md", {"allow": ["Write(MAIA.md)"]}, "allow"),
        ("Write", ".maia/settings.json", {"allow": ["Write(**)"], "deny": ["Edit(.maia/**)"]}, "deny"),
        ("Write", ".env", {"allow": ["Write(**)"], "deny": ["Edit(.env)"]}, "deny"),  # one family
        ("Edit", "src/a.py", {"allow": ["Write(src/**)"]}, "allow"),
        ("Read", ".maia/settings.json", {"allow": ["Read(**)"]}, "allow"),  # reading is not protected
    ],
)
def test_protected_paths_and_one_write_family(
    tool: str, path: str, rules: dict[str, list[str]], verdict: str, tree: Path, home: Path
) -> None:
    decision = explain(tool, {"path": path.replace("{home}", str(home))}, rules, tree)
    assert decision.verdict.value == verdict, decision.reason
    if verdict == "ask":
        assert decision.doubt is True


# --- WebFetch hosts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "rules", "verdict"),
    [
        ("https://example.com/", {"allow": ["WebFetch(domain:*)"]}, "allow"),
        ("https://bücher.example/", {"allow": ["WebFetch(domain:xn--bcher-kva.example)"]}, "allow"),
        ("https://xn--bcher-kva.example/", {"allow": ["WebFetch(domain:bücher.example)"]}, "allow"),
        ("https://EXAMPLE.com./x", {"deny": ["WebFetch(domain:example.com)"]}, "deny"),
        ("http://127.0.0.1/", {"allow": ["WebFetch(domain:*)"]}, "ask"),
        ("http://0x7f.1/", {"allow": ["WebFetch"]}, "ask"),
        ("http://2130706433/", {"allow": ["WebFetch"]}, "ask"),
        ("http://017700000001/", {"allow": ["WebFetch"]}, "ask"),
        ("http://0/", {"allow": ["WebFetch"]}, "ask"),
        ("http://[::1]/", {"allow": ["WebFetch"]}, "ask"),
        ("http://[::ffff:127.0.0.1]/", {"allow": ["WebFetch"]}, "ask"),
        ("http://localhost:8080/", {"allow": ["WebFetch"]}, "ask"),
        ("http://api.localhost/", {"allow": ["WebFetch"]}, "ask"),
        ("http://169.254.169.254/latest/meta-data/", {"allow": ["WebFetch"]}, "ask"),
        ("http://10.1.2.3/", {"allow": ["WebFetch(domain:*)"]}, "ask"),
        ("http://docs.example.com@127.0.0.1/", {"allow": ["WebFetch(domain:docs.example.com)"]}, "ask"),
        ("http://0x7f.1/x", {"deny": ["WebFetch(domain:127.0.0.1)"], "allow": ["WebFetch"]}, "deny"),
        ("http://127.1/x", {"allow": ["WebFetch(domain:127.0.0.1)"]}, "allow"),  # a rule naming it
        ("http://localhost:8080/x", {"allow": ["WebFetch(domain:localhost:8080)"]}, "allow"),
        ("http://localhost:9090/x", {"allow": ["WebFetch(domain:localhost:8080)"]}, "ask"),  # port kept
        ("http://10.0.0.5/", {"allow": ["WebFetch(domain:10.0.*)"]}, "allow"),
        ("https://example.com:8443/", {"allow": ["WebFetch(domain:example.com:443)"]}, "ask"),
        ("https://example.com/", {"allow": ["WebFetch(domain:example.com:443)"]}, "allow"),
    ],
)
def test_webfetch_hosts_as_the_client_connects(
    url: str, rules: dict[str, list[str]], verdict: str, tmp_path: Path
) -> None:
    decision = explain("WebFetch", {"url": url}, rules, tmp_path)
    assert decision.verdict.value == verdict, decision.reason
    if verdict == "ask":  # special addresses ask from doubt; a public host no rule covers does not
        assert decision.doubt is (url != "https://example.com:8443/")


def test_webfetch_spellings_reach_the_same_address(httpserver: Any, tmp_path: Path) -> None:
    """The spellings the engine reads as 127.0.0.1 are the ones the HTTP client connects to."""
    import httpx

    httpserver.expect_request("/x").respond_with_data("here")
    port = httpserver.port
    for host in ("127.0.0.1", "127.1", "2130706433", "0x7f.1"):
        assert httpx.get(f"http://{host}:{port}/x", timeout=10).text == "here"
        decision = explain("WebFetch", {"url": f"http://{host}:{port}/x"}, {"allow": ["WebFetch"]}, tmp_path)
        assert decision.reason == "127.0.0.1 is a local or private address: ask unless a rule names it"


# --- subjects ---------------------------------------------------------------------------------------------


class _Foreign:
    """A tool someone else wrote, without a subject method."""

    def __init__(self, name: str) -> None:
        self.name = name


def test_subjects_of_builtin_and_foreign_tools() -> None:
    assert subject_of("Read", {"path": "x"}) == PathSubject("x", "read")
    assert subject_of("Edit", {"path": "x"}) == PathSubject("x", "write")
    assert subject_of("Grep", {"pattern": "p"}) == PathSubject(".", "search")
    assert subject_of("mcp__github__list_issues", {"q": "x"}, _Foreign("x")) == McpSubject(
        "github", "list_issues", ("x",)
    )
    assert subject_of("Agent", {"agent": "reviewer", "task": "t"}) == NameSubject("reviewer")


def test_a_tool_declares_its_subject(tmp_path: Path) -> None:
    class Deploy:
        def subject(self, tool_input: Mapping[str, Any]) -> NameSubject:
            return NameSubject(str(tool_input.get("environment")))

    rules = {"allow": ["Deploy(staging)"], "deny": ["Deploy(prod*)"]}
    assert explain("Deploy", {"environment": "staging", "note": "prod"}, rules, tmp_path, tool=Deploy()) == Decision(
        Verdict.ALLOW, "Deploy(staging)", "allow rule Deploy(staging) matches"
    )
    assert explain("Deploy", {"environment": "production"}, rules, tmp_path, tool=Deploy()).verdict == Verdict.DENY


def test_a_builtin_style_tool_without_its_own_subject_keeps_the_name_rules(tmp_path: Path) -> None:
    """An Agent or MCP tool built on BuiltinTool without a subject of its own is still judged by name."""
    from maia.tools.base import BuiltinTool

    class AgentTool(BuiltinTool):
        name = "Agent"
        description = "d"
        schema: dict[str, Any] = {"type": "object"}

    class McpTool(BuiltinTool):
        name = "mcp__db__query"
        description = "d"
        schema: dict[str, Any] = {"type": "object"}

    sneaky = {"agent": "writer", "task": "reviewer"}  # the task text must not satisfy Agent(reviewer)
    assert explain("Agent", sneaky, {"allow": ["Agent(reviewer)"]}, tmp_path, tool=AgentTool()).verdict == "ask"
    assert (
        explain("Agent", {"agent": "reviewer"}, {"allow": ["Agent(reviewer)"]}, tmp_path, tool=AgentTool()).verdict
        == "allow"
    )
    rules = {"allow": ["Mcp(db)"], "deny": ["Mcp(db,query)"]}
    assert explain("mcp__db__query", {"sql": "x"}, rules, tmp_path, tool=McpTool()).verdict == "deny"
