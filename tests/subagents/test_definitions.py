"""AGENT.md: header, sections, every warning, loading from both folders."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from maia.subagents.definitions import (
    AgentDefinition,
    DefinitionError,
    load_agents,
    loaded_message,
    normalise_title,
    parse_agent,
    parse_sections,
    split_list,
)
from tests.subagents.conftest import BODY, agent_md

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agents" / "code_reviewer"


def load_one(make_agent: Callable[..., Path], home: Path, project: Path, *args: str, **kwargs: str) -> AgentDefinition:
    make_agent(*args, **kwargs)
    loaded = load_agents(home, project)
    assert loaded.warnings == []
    return next(iter(loaded.agents.values()))


def warnings_for(make_agent: Callable[..., Path], home: Path, project: Path, *args: str, **kwargs: str) -> list[str]:
    make_agent(*args, **kwargs)
    return load_agents(home, project).warnings


# --- header ----------------------------------------------------------------------------------


def test_defaults(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    agent = load_one(make_agent, home, project, "rev")
    assert agent.name == "rev" and agent.description == "Reviews things." and agent.scope == "project"
    assert agent.model is None and agent.tools is None and agent.skills is None and agent.permissions == {}
    assert agent.effort == "medium" and agent.max_iterations == 25
    assert not agent.omit_md and not agent.trace and agent.constraints is None
    assert agent.instructions == "You review things." and agent.missions == "- Look at what the task names."
    assert agent.output == "One short paragraph."


def test_keys_ignore_case_and_comments_are_removed(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    text = (
        "---\n"
        "NAME: rev            # must be the folder's name\n"
        "Description: Finds bugs # not part of the text\n"
        'MODEL: "gpt #4"      # quoted: the # stays\n'
        "Effort: HIGH\n"
        "OmitMD: yes\n"
        "TRACE: true\n"
        "---\n" + BODY
    )
    agent = load_one(make_agent, home, project, "rev", text=text)
    assert (agent.name, agent.description, agent.model) == ("rev", "Finds bugs", "gpt #4")
    assert agent.effort == "high" and agent.max_iterations == 50 and agent.omit_md and agent.trace


@pytest.mark.parametrize(
    "header",
    [
        "tools: Read, Grep,Glob",
        "tools: [Read, Grep, Glob]",
        "tools:\n  - Read\n  - Grep\n  - Glob",
        "tools:\n  - Read, Grep\n  - Glob\n  - Read",
    ],
)
def test_lists_in_every_form(header: str, make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    assert load_one(make_agent, home, project, "rev", header).tools == ("Read", "Grep", "Glob")


def test_skills_empty_list_means_none(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    assert load_one(make_agent, home, project, "rev", "skills: []").skills == ()


def test_permissions_table(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    header = (
        "permissions:\n  Allow: [Read, Grep]\n  ask: Bash(git log, status), WebFetch\n"
        "  DENY:\n    - Bash\n    - Write(*.py)"
    )
    agent = load_one(make_agent, home, project, "rev", header)
    assert agent.permissions == {
        "allow": ("Read", "Grep"),
        "ask": ("Bash(git log, status)", "WebFetch"),
        "deny": ("Bash", "Write(*.py)"),
    }


def test_efforts(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    make_agent("a", "effort: low")
    make_agent("b", "effort: Medium")
    agents = load_agents(home, project).agents
    assert agents["a"].max_iterations == 10 and agents["b"].max_iterations == 25


def test_split_list_keeps_parentheses() -> None:
    assert split_list(" a , b(c, d(e, f)), ,g ") == ["a", "b(c, d(e, f))", "g"]


def test_definition_round_trips_through_json(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    header = "model: x\ntools: Read\nskills: []\npermissions: {deny: [Bash]}\neffort: low\ntrace: true"
    body = BODY + "\n# Constraints\nNever push.\n"
    agent = load_one(make_agent, home, project, "rev", header, body)
    assert AgentDefinition.from_json(agent.to_json()) == agent


# --- sections --------------------------------------------------------------------------------


def test_titles_are_normalised() -> None:
    assert normalise_title("**Instructions Système (à lire)**:") == "instructions systeme"
    assert normalise_title("Instructions system(e)") == "instructions system"
    assert normalise_title("CONTRAINTES (optionnelle)") == "contraintes"


def test_sections_any_level_case_accents_parentheses() -> None:
    body = (
        "Intro text is ignored.\n"
        "### INSTRUCTIONS SYSTÈME ###\n"
        "Be careful.\n"
        "## Missions (required)\n"
        "- one\n"
        "###### Contraintes\n"
        "No pushing.\n"
        "# output\n"
        "A list.\n"
    )
    assert parse_sections(body) == {
        "instructions": "Be careful.",
        "missions": "- one",
        "constraints": "No pushing.",
        "output": "A list.",
    }


def test_a_section_keeps_its_sub_headings_and_stops_at_the_same_level() -> None:
    body = (
        "## Missions\n"
        "- a\n"
        "### Details\n"
        "more\n"
        "## Notes\n"
        "not a mission\n"
        "# Output\n"
        "out\n"
        "### Format\n"
        "kept\n"
        "#### Instructions system\n"
        "a recognised section ends the one before, whatever its level\n"
    )
    sections = parse_sections(body)
    assert sections["missions"] == "- a\n### Details\nmore"
    assert sections["output"] == "out\n### Format\nkept"
    assert sections["instructions"] == "a recognised section ends the one before, whatever its level"


def test_headings_in_code_blocks_are_ignored() -> None:
    body = (
        "# Missions\n"
        "```markdown\n"
        "# Output\n"
        "not a heading\n"
        "```\n"
        "~~~~\n"
        "# Instructions system\n"
        "~~~\n"
        "still code\n"
        "~~~~\n"
        "# Output\n"
        "real\n"
    )
    sections = parse_sections(body)
    assert sections["missions"].startswith("```markdown\n# Output\nnot a heading\n```\n~~~~")
    assert sections["output"] == "real" and "instructions" not in sections


def test_html_comments_are_removed_outside_code() -> None:
    body = (
        "# Missions\n"
        "<!-- a comment\n"
        "# Output\n"
        "spanning lines -->\n"
        "- keep <!-- inline --> this\n"
        "```\n"
        "<!-- in code: kept -->\n"
        "```\n"
        "# Output <!-- a note -->\n"
        "out\n"
    )
    sections = parse_sections(body)
    assert sections["missions"] == "- keep  this\n```\n<!-- in code: kept -->\n```"
    assert sections["output"] == "out"


def test_example_and_template_are_valid(home: Path, project: Path) -> None:
    from maia.subagents.create import template_text

    shutil.copytree(EXAMPLE, project / ".maia" / "agents" / "code_reviewer")
    folder = project / ".maia" / "agents" / "my_agent"
    folder.mkdir()
    (folder / "AGENT.md").write_text(template_text())
    loaded = load_agents(home, project)
    assert loaded.warnings == []
    reviewer = loaded.agents["code_reviewer"]
    assert reviewer.tools == ("Read", "Grep", "Glob") and reviewer.permissions["deny"] == ("Write", "Edit", "Bash")
    assert "CRITICAL" in reviewer.output and reviewer.constraints and "Read-only" in reviewer.description
    template = loaded.agents["my_agent"]
    assert template.constraints == "- Never delete files." and "<!--" not in template.instructions
    assert (template.effort, template.omit_md, template.trace, template.model) == ("medium", False, False, None)


# --- warnings --------------------------------------------------------------------------------


SKIPPING = [
    ("no header", "Just text\n" + BODY, "no YAML header"),
    ("never closed", "---\nname: rev\ndescription: d\n" + BODY, "the YAML header is never closed"),
    ("bad yaml", "---\nname: rev\ndescription: a: b\n---\n" + BODY, "invalid YAML header at line 3"),
    ("not a mapping", "---\n- a\n- b\n---\n" + BODY, "the header must be key: value lines"),
    ("name differs", agent_md("other"), "\"name\" is 'other' but the folder is 'rev'"),
    (
        "name not text",
        "---\nname: [rev]\ndescription: d\n---\n" + BODY,
        '"name" must be a string, not a list; fix: the folder\'s name, in quotes',
    ),
    ("no description", "---\nname: rev\n---\n" + BODY, '"description" is required'),
    ("empty description", "---\nname: rev\ndescription: '  '\n---\n" + BODY, '"description" is empty; fix: say what'),
    (
        "model list",
        agent_md("rev", "model: [a, b]"),
        '"model" must be a string or a number, not a list; fix: one model name or fragment',
    ),
    ("tools table", agent_md("rev", "tools: {a: b}"), '"tools" must be a string or a list, not an object; fix: a list'),
    ("tools spaced", agent_md("rev", "tools: [Read Grep]"), "\"tools\": 'Read Grep' is not a name"),
    (
        "tools nested",
        agent_md("rev", "tools: [[Read]]"),
        '"tools[0]" must be a string or a number, not a list; fix: a list',
    ),
    ("skills table", agent_md("rev", "skills: {a: 1}"), '"skills" must be a string or a list, not an object; fix:'),
    (
        "permissions list",
        agent_md("rev", "permissions: [Read]"),
        '"permissions" must be an object, not a list; fix: a table',
    ),
    (
        "permissions family",
        agent_md("rev", "permissions:\n  denied: [Bash]"),
        '"permissions.denied" is not a known field; fix: rename it "deny"',
    ),
    ("bad rule", agent_md("rev", "permissions:\n  deny: ['Bash(']"), '"permissions.deny": "Bash(" is not a rule'),
    ("missing sections", agent_md("rev", body="# Missions\nm\n"), "missing section(s): Instructions system, Output"),
    (
        "empty section",
        agent_md("rev", body="# Instructions system\n# Missions\nm\n# Output\no\n"),
        "empty section(s): Instructions system",
    ),
    (
        "twice",
        agent_md("rev", body=BODY + "\n# Output\nagain\n"),
        'the section "Output" appears twice (lines 12 and 15): keep one',
    ),
    (
        "open comment",
        agent_md("rev", body=BODY + "\n<!-- open\n"),
        "the HTML comment opened with <!-- at line 15 is never closed: add --> after it",
    ),
]


@pytest.mark.parametrize(("case", "text", "expected"), SKIPPING, ids=[c[0] for c in SKIPPING])
def test_an_invalid_agent_is_skipped_with_the_reason(
    case: str, text: str, expected: str, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    path = make_agent("rev", text=text)
    make_agent("good")
    loaded = load_agents(home, project)
    assert list(loaded.agents) == ["good"]  # the others load
    assert len(loaded.warnings) == 1
    warning = loaded.warnings[0]
    assert warning.startswith(f"{path}: ") and expected in warning and warning.endswith("; agent ignored.")
    assert loaded.skipped == {"rev": warning}


KEPT = [
    ("no name", "---\ndescription: d\n---\n" + BODY, 'no "name" in the header: the folder name is used; add name: rev'),
    (
        "agent tool",
        agent_md("rev", "tools: Read, agent"),
        '"tools": a sub-agent never gets the Agent tool; Agent is left out',
    ),
    (
        "effort",
        agent_md("rev", "effort: extreme"),
        '"effort" must be one of "low", "medium", "high", not "extreme"; fix: low, medium or high; medium is used',
    ),
    (
        "omitMd",
        agent_md("rev", "omitMd: maybe"),
        '"omitMd" must be true or false, not a string ("maybe"); fix: true or false; false is used',
    ),
    (
        "trace",
        agent_md("rev", "trace: 2"),
        '"trace" must be true or false, not a whole number (2); fix: true or false; false is used',
    ),
    ("unknown key", agent_md("rev", "omit_md: true"), 'unknown key "omit_md" ignored (did you mean "omitMd"?)'),
    (
        "twice",
        agent_md("rev", "Effort: low\neffort: high"),
        'the key "effort" is given twice (keys ignore case); the last one is used',
    ),
]


@pytest.mark.parametrize(("case", "text", "expected"), KEPT, ids=[c[0] for c in KEPT])
def test_a_remark_keeps_the_agent(
    case: str, text: str, expected: str, make_agent: Callable[..., Path], home: Path, project: Path
) -> None:
    path = make_agent("rev", text=text)
    loaded = load_agents(home, project)
    assert list(loaded.agents) == ["rev"]
    assert loaded.warnings == [f"{path}: {expected}."]


def test_remarks_apply_their_defaults(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    make_agent("rev", "tools: Read, Agent\neffort: extreme\ntrace: 2")
    agent = load_agents(home, project).agents["rev"]
    assert agent.tools == ("Read",) and agent.effort == "medium" and not agent.trace


def test_folder_problems(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    base = project / ".maia" / "agents"
    (base / "empty").mkdir(parents=True)
    make_agent("bad name")
    make_agent(".hidden")
    (base / "binary").mkdir()
    (base / "binary" / "AGENT.md").write_bytes(b"\xff\xfe\x00broken")
    warnings = load_agents(home, project).warnings
    assert len(warnings) == 3
    assert f"{base / 'bad name' / 'AGENT.md'}: the folder name is not a valid agent name" in warnings[0]
    assert warnings[1].startswith(f"{base / 'binary' / 'AGENT.md'}: cannot read the file")
    assert warnings[2] == f"{base / 'empty'}: no AGENT.md in this folder; ignored."


def test_names_differing_only_by_case_in_one_folder(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    make_agent("Rev")
    second = make_agent("rev")
    loaded = load_agents(home, project)
    assert list(loaded.agents) == ["Rev"]
    assert loaded.warnings == [
        f"{second}: another agent of this folder has the same name (names ignore case); ignored."
    ]


def test_parse_agent_raises_for_the_caller(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "AGENT.md").write_text("no header")
    with pytest.raises(DefinitionError, match="no YAML header"):
        parse_agent(tmp_path / "x" / "AGENT.md")


# --- both folders ----------------------------------------------------------------------------


def test_the_project_wins_and_both_folders_load(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    make_agent("shared", description="User's.", base=home / "agents")
    make_agent("Shared", description="Project's.")
    make_agent("mine", description="Only mine.", base=home / "agents")
    loaded = load_agents(home, project)
    assert loaded.warnings == []
    assert {n: (a.scope, a.description) for n, a in loaded.agents.items()} == {
        "mine": ("user", "Only mine."),
        "Shared": ("project", "Project's."),
    }
    message = loaded_message(loaded.agents)
    assert message == "Sub-agents loaded:\n- mine (user): Only mine.\n- Shared (project): Project's."
    assert loaded.find("SHARED") is loaded.agents["Shared"]


def test_one_pass_when_both_folders_are_the_same(project: Path, make_agent: Callable[..., Path]) -> None:
    make_agent("rev", text="---\ndescription: d\n---\n" + BODY)  # a remark, to count the passes
    loaded = load_agents(project / ".maia", project)
    assert list(loaded.agents) == ["rev"] and len(loaded.warnings) == 1
    assert loaded.agents["rev"].scope == "user"  # found first, in the one folder
    assert loaded_message({}) is None


def test_unpacks_as_agents_and_warnings(make_agent: Callable[..., Path], home: Path, project: Path) -> None:
    make_agent("rev")
    agents, warnings = load_agents(home, project)
    assert list(agents) == ["rev"] and warnings == []
