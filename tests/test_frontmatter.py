"""One YAML front-matter reader for SKILL.md and AGENT.md: the same verdict on the same header."""

from __future__ import annotations

from pathlib import Path

import pytest

from maia.core.frontmatter import FrontMatterError, read_front_matter
from maia.inputs.skills import parse_skill
from maia.subagents.definitions import DefinitionError, parse_agent


@pytest.mark.parametrize("text", ["---\n---\nbody\n", "---  \n---\r\nbody", "---\n\n---\nbody"])
def test_an_empty_header_is_an_empty_mapping(text: str) -> None:
    front = read_front_matter(text, "x:")
    assert front.header == {} and front.body.strip() == "body"


def test_skills_and_agents_read_an_empty_header_the_same_way(tmp_path: Path) -> None:
    for kind, name in (("skills", "SKILL.md"), ("agents", "AGENT.md")):
        folder = tmp_path / kind / "helper"
        folder.mkdir(parents=True)
        (folder / name).write_text("---\n---\nDo the thing.\n")
    # both read the header (empty) and then say what it lacks, never "no YAML header"
    with pytest.raises(ValueError, match='"description" is required'):
        parse_skill(tmp_path / "skills" / "helper" / "SKILL.md")
    with pytest.raises(DefinitionError) as caught:
        parse_agent(tmp_path / "agents" / "helper" / "AGENT.md")
    assert "no YAML header" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no header", "no YAML header"),
        ("---\na: 1\nbody", "never closed"),
        ("---\na: [x\n---\n", "invalid YAML header at line"),
        ("---\n- a\n---\n", "the header must be key: value lines (x:)"),
    ],
)
def test_a_bad_header_says_what_and_how(text: str, message: str) -> None:
    with pytest.raises(FrontMatterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_front_matter(text, "x:")
