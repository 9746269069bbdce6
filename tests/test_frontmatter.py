"""One YAML front-matter reader for SKILL.md and AGENT.md: the same verdict on the same header."""

from __future__ import annotations

import contextlib
import subprocess
import sys
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


PLAIN_OR_NOT = [
    "name: rev\ndescription: Reviews code for security problems.\n",
    'name: rev\ndescription: Don\'t guess; say "why" (50% of the time, at most) & stop!\n',
    "name: rev\nallowed-tools: Read, Grep, Glob\nmodel: gpt-4o-mini\n",
    "name: rev\ndescription: yes\n",
    "name: rev\ndescription: No\n",
    "name: rev\ndescription: off\n",
    "name: rev\nomitMd: true\n",
    "name: rev\nmaxIterations: 20\n",
    "name: rev\ntimeout: 1:20\n",
    "name: rev\ndescription: Reviews: code\n",
    "name: rev\ndescription: Reviews code # not this\n",
    "name: rev\ndescription: Reviews code   \n",
    "name: rev\ndescription:  two spaces\n",
    "name: rev\ndescription:\n",
    "name: rev\nname: other\n",
    "on: push\n",
    "name: rev\ntools: [Read, Grep]\n",
    "name: rev\npermissions:\n  allow: [Read]\n",
    "name: rev\n\ndescription: a blank line above\n",
    "name: 'quoted'\n",
    "name: rev\ndescription: Revue du code (sécurité)\n",
    "name: rev\r\ndescription: Windows lines\r\n",
    "name: rev\ndescription: a\tb\n",
    "name: rev\ndescription: ~\n",
]


@pytest.mark.parametrize("header", PLAIN_OR_NOT)
def test_a_plain_header_reads_as_yaml_reads_it(header: str) -> None:
    """Plain lines are read without yaml; whatever the short reader takes, it reads as yaml does."""
    import yaml

    from maia.core.frontmatter import _plain

    plain = _plain(header)
    if plain is not None:
        assert plain == yaml.safe_load(header)
    with contextlib.suppress(FrontMatterError):
        assert read_front_matter(f"---\n{header}---\nbody\n", "x:").header == yaml.safe_load(header)


def test_the_plain_reader_takes_the_plain_headers_only() -> None:
    from maia.core.frontmatter import _plain

    taken = [header for header in PLAIN_OR_NOT if _plain(header) is not None]
    assert taken == [*PLAIN_OR_NOT[:3], "name: rev\r\ndescription: Windows lines\r\n"]


def test_every_shipped_header_reads_as_yaml_reads_it() -> None:
    import yaml

    root = Path(__file__).resolve().parents[1]
    files = [*root.glob("examples/**/AGENT.md"), *root.glob("examples/**/SKILL.md"), *root.glob("docs/**/*.md")]
    checked = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        if not lines or lines[0].strip() != "---":
            continue
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
        if end is None:
            continue
        header = "".join(lines[1:end])
        assert read_front_matter(text, "x:").header == (yaml.safe_load(header) or {}), path
        checked += 1
    assert checked > 0


def test_a_plain_header_imports_no_yaml(tmp_path: Path) -> None:
    path = tmp_path / "AGENT.md"
    path.write_text("---\nname: rev\ndescription: Reviews code.\n---\n# Instructions system\nx\n")
    code = (
        "import sys\nfrom maia.core.frontmatter import read_front_matter\n"
        f"print(read_front_matter(open({str(path)!r}).read(), 'x:').header, 'yaml' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "{'name': 'rev', 'description': 'Reviews code.'} False"
