"""Decisions for path tools, WebFetch, Skill, Mcp, Agent and custom tools (§9.3), with real files and links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from maia.permissions import decide, explain, parse_rule, parse_rules
from maia.permissions.rules import RuleSyntaxError


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A launch folder with sources, secrets and links pointing in and out."""
    root = tmp_path / "proj"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a")
    (root / "src" / "pkg" / "b.py").write_text("b")
    (root / ".env").write_text("SECRET=1")
    (root / "docs").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("x")
    os.symlink(outside / "passwd", root / "src" / "escape.py")  # inside by name, outside in fact
    os.symlink(root / ".env", root / "docs" / "env-link")  # a link to the secret
    os.symlink(root / "src" / "a.py", root / "docs" / "a-link.py")  # a link to an allowed file
    return root


PATH_RULES = {
    "allow": [
        "Read(src/**)",
        "Edit(src/**/*.py)",
        "Glob",
        "Grep(src/**)",
        "Write(docs/*.md)",
        f"Read({Path.home()}/notes/**)",
        "Read(~/public/*)",
    ],
    "ask": ["Edit(src/pkg/**)"],
    "deny": ["Read(./.env)", "Write(**/.env)", "Grep(.env)"],
}

PATH_CASES: list[tuple[str, dict[str, str], str]] = [
    ("Read", {"path": "src/a.py"}, "allow"),
    ("Read", {"path": "./src/a.py"}, "allow"),
    ("Read", {"path": "src/pkg/b.py"}, "allow"),
    ("Read", {"path": "src"}, "allow"),  # dir/** covers dir itself
    ("Read", {"path": "docs/x.md"}, "ask"),
    ("Read", {"path": ".env"}, "deny"),
    ("Read", {"path": "./.env"}, "deny"),
    ("Read", {"path": "src/../.env"}, "deny"),
    ("Read", {"path": "src/pkg/../../.env"}, "deny"),
    ("Read", {"path": "{root}/.env"}, "deny"),
    ("Read", {"path": "{root}/src/a.py"}, "allow"),
    ("Read", {"path": "docs/env-link"}, "deny"),  # a link to the secret is the secret
    ("Read", {"path": "src/escape.py"}, "ask"),  # its real location is outside the folder
    ("Read", {"path": "docs/a-link.py"}, "ask"),  # the name is not covered even if the target is
    ("Read", {"path": "../outside/passwd"}, "ask"),
    ("Read", {"path": "src/../../outside/passwd"}, "ask"),
    ("Read", {"path": "~/notes/todo.md"}, "allow"),
    ("Read", {"path": "~/public/a"}, "allow"),
    ("Read", {"path": "~/public/sub/a"}, "ask"),
    ("Read", {"path": "~/other"}, "ask"),
    ("Read", {}, "ask"),
    ("Read", {"path": 3}, "ask"),  # type: ignore[dict-item]
    ("Edit", {"path": "src/a.py"}, "allow"),
    ("Edit", {"path": "src/a.txt"}, "ask"),
    ("Edit", {"path": "src/pkg/b.py"}, "ask"),  # ask beats allow
    ("Write", {"path": "docs/guide.md"}, "allow"),
    ("Write", {"path": "docs/sub/guide.md"}, "ask"),
    ("Write", {"path": ".env"}, "deny"),
    ("Write", {"path": "src/pkg/.env"}, "deny"),
    ("Write", {"path": "docs/../.env"}, "deny"),
    ("Glob", {"pattern": "**/*.py"}, "allow"),
    ("Glob", {"pattern": "*", "path": "/etc"}, "allow"),
    ("Grep", {"pattern": "x", "path": "src/pkg"}, "allow"),
    ("Grep", {"pattern": "x"}, "ask"),  # no path: the launch folder itself
    ("Grep", {"pattern": "x", "path": ".env"}, "deny"),
    ("Grep", {"pattern": "x", "path": "docs/env-link"}, "deny"),
    ("Glob", {"pattern": "../outside/*"}, "allow"),  # bare Glob allows everything…
]


@pytest.mark.parametrize(
    ("tool_input", "verdict"),
    [
        ({"pattern": "**/*.py"}, "allow"),
        ({"pattern": "/etc/*.conf"}, "deny"),
        ({"pattern": "../*"}, "ask"),
        ({"pattern": "*.md", "path": "/etc"}, "deny"),
        ({"pattern": "~/.ssh/*"}, "deny"),
    ],
)
def test_glob_patterns_that_leave_the_folder(tool_input: dict[str, str], verdict: str, tree: Path) -> None:
    rules = {
        "allow": ["Glob(./**)", "Glob(.)"],
        "deny": ["Glob(/etc/**)", "Glob(/etc)", "Glob(~/.ssh/**)", "Glob(~/.ssh)"],
    }
    assert explain("Glob", tool_input, rules, tree).verdict.value == verdict


@pytest.mark.parametrize(("tool", "tool_input", "verdict"), PATH_CASES, ids=repr)
def test_path_rules(tool: str, tool_input: dict[str, str], verdict: str, tree: Path) -> None:
    inp = {k: v.replace("{root}", str(tree)) if isinstance(v, str) else v for k, v in tool_input.items()}
    decision = explain(tool, inp, PATH_RULES, tree)
    assert decision.verdict.value == verdict, decision.reason


def test_launch_folder_reached_through_a_link(tmp_path: Path, tree: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(tree, alias)
    assert decide("Read", {"path": "src/a.py"}, PATH_RULES, alias) == "allow"
    assert decide("Read", {"path": ".env"}, PATH_RULES, alias) == "deny"


WEB_RULES = {
    "allow": ["WebFetch(domain:docs.example.com)", "WebFetch(domain:*.example.org)"],
    "deny": ["WebFetch(domain:evil.com)"],
}


@pytest.mark.parametrize(
    ("url", "verdict"),
    [
        ("https://docs.example.com/page", "allow"),
        ("http://DOCS.example.com:8080/x", "allow"),
        ("https://example.com/", "ask"),
        ("https://sub.docs.example.com/", "ask"),  # the bare domain does not cover subdomains
        ("https://a.example.org/", "allow"),
        ("https://a.b.example.org/", "allow"),
        ("https://example.org/", "ask"),
        ("https://evil.com/", "deny"),
        ("https://docs.example.com.evil.com/", "ask"),
        ("https://docs.example.com@evil.com/", "deny"),  # the host is evil.com
        ("ftp://docs.example.com/", "allow"),  # the rule is about the host; WebFetch itself refuses ftp
        ("not a url", "ask"),
    ],
)
def test_webfetch_domains(url: str, verdict: str, tmp_path: Path) -> None:
    assert decide("WebFetch", {"url": url}, WEB_RULES, tmp_path) == verdict


@pytest.mark.parametrize(
    ("tool", "tool_input", "rules", "verdict"),
    [
        ("Skill", {"skill": "pdf"}, {"allow": ["Skill(pdf)"]}, "allow"),
        ("Skill", {"skill": "pdfx"}, {"allow": ["Skill(pdf)"]}, "ask"),
        ("Skill", {"skill": "test-run"}, {"allow": ["Skill(test-*)"]}, "allow"),
        ("Agent", {"agent": "reviewer", "task": "x"}, {"allow": ["Agent(reviewer)"]}, "allow"),
        ("Agent", {"agent": "writer", "task": "x"}, {"allow": ["Agent(reviewer)"]}, "ask"),
        ("Agent", {"agent": "writer", "task": "x"}, {"deny": ["Agent"]}, "deny"),
        ("mcp__github__list_issues", {}, {"allow": ["Mcp(github)"]}, "allow"),
        ("mcp__github__delete_repository", {}, {"allow": ["Mcp(github)"], "deny": ["Mcp(github,delete_*)"]}, "deny"),
        ("mcp__github__create_issue", {}, {"allow": ["Mcp(github)"], "ask": ["Mcp(*,create_*)"]}, "ask"),
        ("mcp__docs__search", {}, {"allow": ["Mcp(github)"]}, "ask"),
        ("mcp__docs__search", {}, {"allow": ["Mcp(*)"]}, "allow"),
        ("mcp__db__query", {"sql": "SELECT 1"}, {"allow": ["mcp__db__query(SELECT *)"]}, "allow"),
        ("mcp__db__query", {"sql": "DROP TABLE x"}, {"allow": ["mcp__db__query(SELECT *)"]}, "ask"),
        ("Addition", {"param1": 5, "param2": 2}, {"allow": ["Addition(5)"]}, "allow"),
        ("Addition", {"param1": 4}, {"allow": ["Addition(5)"]}, "ask"),
        ("Addition", {"param1": 4}, {"allow": ["Addition"]}, "allow"),
        ("Addition", {"param1": 4}, {"allow": ["Addition"], "deny": ["Addition(4)"]}, "deny"),
        ("TodoWrite", {"todos": []}, {}, "ask"),
        ("TodoWrite", {"todos": []}, {"allow": ["TodoWrite"]}, "allow"),
        ("Read", {"path": "x"}, {"allow": ["Bash"]}, "ask"),
    ],
)
def test_other_tools(
    tool: str, tool_input: dict[str, object], rules: dict[str, list[str]], verdict: str, tmp_path: Path
) -> None:
    assert decide(tool, tool_input, rules, tmp_path) == verdict


@pytest.mark.parametrize("text", ["Read", "Bash(ls *)", "mcp__db__query(SELECT *)", " Edit ( src/** ) ", "a.b-c_d"])
def test_valid_rules(text: str) -> None:
    assert parse_rule(text).tool


@pytest.mark.parametrize("text", ["", "Bash(", "Bash()", "Bash ls", "(ls)", "Bäsh", "Read(x)(y"])
def test_invalid_rules(text: str) -> None:
    with pytest.raises(RuleSyntaxError):
        parse_rule(text)


def test_parse_rules_warns_once_per_bad_entry_and_keeps_the_rest() -> None:
    parsed = parse_rules({"allow": ["Read", "Bash(", 3], "deny": "Bash", "maybe": []}, where="s.json: permissions")
    assert [r.text for r in parsed.ruleset.allow] == ["Read"]
    assert parsed.warnings == [
        's.json: permissions.allow[1]: "Bash(" is not a rule: write Tool or Tool(pattern), Tool made of letters, '
        "digits, _ . -; ignored.",
        "s.json: permissions.allow[2]: a rule must be a string, not 3; ignored.",
        "s.json: permissions.deny: expected a list of rules; ignored.",
        's.json: permissions: unknown list "maybe" ignored (use allow, ask, deny or inertVariables).',
    ]


@pytest.mark.parametrize(
    ("rule", "command", "verdict"),
    [
        ("Bash(git log:*)", "git log", "allow"),
        ("Bash(git log:*)", "git log --oneline -3", "allow"),
        ("Bash(git log:*)", "git logx", "ask"),
        ("Bash(npm run test:*)", "npm run test:unit", "allow"),  # the literal colon still works
        ("Bash(npm run test:*)", "npm run test --watch", "allow"),
        ("Bash(git:*)", "git status", "allow"),
    ],
)
def test_claude_code_colon_star_is_a_synonym_of_space_star(
    rule: str, command: str, verdict: str, tmp_path: Path
) -> None:
    assert decide("Bash", {"command": command}, {"allow": [rule]}, tmp_path) == verdict


@pytest.mark.parametrize(
    ("rule", "known"),
    [("bash(ls)", "Bash"), ("Reed(src/**)", "Read"), ("WebFech", "WebFetch"), ("edit", "Edit"), ("Glob2", "Glob")],
)
def test_a_misspelled_tool_name_warns_with_the_file_and_the_rule(rule: str, known: str) -> None:
    parsed = parse_rules({"deny": [rule]}, where="/p/.maia/settings.json: permissions")
    assert [r.text for r in parsed.ruleset.deny] == [rule]  # kept: it may be a custom tool
    tool = rule.split("(")[0]
    assert parsed.warnings == [
        f'/p/.maia/settings.json: permissions.deny[0]: "{rule}": no tool is named "{tool}"; did you mean "{known}"? '
        "(the rule is kept, for a custom tool of that name)"
    ]


@pytest.mark.parametrize(
    "rule", ["Addition", "deploy_prod", "mcp__github__list_issues(x)", "Redirect(out/**)", "Mcp(github)", "Skill", "My"]
)
def test_custom_and_known_names_do_not_warn(rule: str) -> None:
    assert parse_rules({"allow": [rule]}).warnings == []


def test_inert_variables_from_settings() -> None:
    parsed = parse_rules({"inertVariables": ["FOO", "LD_PRELOAD", "path", "BASH_ENV", "X Y", 3, "DEBUG_LEVEL"]}, "s")
    assert parsed.ruleset.inert == frozenset({"FOO", "DEBUG_LEVEL"})
    assert parsed.warnings == [
        "s.inertVariables[1]: LD_PRELOAD can change what a command runs (like PATH, LD_*, BASH_ENV): it is never "
        "inert; ignored.",
        "s.inertVariables[2]: path can change what a command runs (like PATH, LD_*, BASH_ENV): it is never inert; "
        "ignored.",
        "s.inertVariables[3]: BASH_ENV can change what a command runs (like PATH, LD_*, BASH_ENV): it is never "
        "inert; ignored.",
        "s.inertVariables[4]: 'X Y' is not a variable name; ignored.",
        "s.inertVariables[5]: 3 is not a variable name; ignored.",
    ]
    assert parse_rules({"inertVariables": "FOO"}, "s").warnings == [
        's.inertVariables: expected a list of variable names such as ["FOO"]; ignored.'
    ]


def test_the_built_in_inert_list_holds_no_dangerous_name() -> None:
    from maia.permissions.programs import _DANGEROUS_EXACT, DEFAULT_INERT, dangerous_variable

    # MAIA's own list is read as is; the patterns (PYTHON*, NODE_*) refuse what a user declares
    assert DEFAULT_INERT and not DEFAULT_INERT & _DANGEROUS_EXACT
    for name in ("PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "ENV", "IFS", "PS4"):
        assert dangerous_variable(name), name
    for name in ("SHELLOPTS", "BASHOPTS", "BASH_CMDS", "BASH_FUNC_x%%", "PROMPT_COMMAND", "GIT_SSH_COMMAND"):
        assert dangerous_variable(name), name
    for name in ("PYTHONPATH", "NODE_OPTIONS", "PERL5OPT", "npm_config_script_shell", "PAGER", "EDITOR", "HOME"):
        assert dangerous_variable(name), name


def test_known_tools_cover_the_built_in_tools() -> None:
    from maia.permissions.rules import KNOWN_TOOLS
    from maia.tools import builtin_tools

    async def no_models() -> list[object]:
        return []

    names = {t.spec.name for t in builtin_tools(no_models)}  # type: ignore[arg-type]
    assert names <= KNOWN_TOOLS
