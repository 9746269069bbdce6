"""Skills (§11.3): locations and precedence, header validation, the Skill tool and § invocation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from maia.core.contracts import ToolContext
from maia.core.errors import UsageError
from maia.inputs.skills import SkillInvocation, SkillTool, load_skills, parse_invocation, resolve_invocation
from maia.tools.base import ToolError


def skill(base: Path, name: str, text: str, file_name: str = "SKILL.md") -> Path:
    path = base / name / file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_locations_and_most_specific_wins(tmp_path: Path) -> None:
    home = tmp_path / "home"
    launch = tmp_path / "parent" / "launch"
    launch.mkdir(parents=True)
    skill(home / "skills", "shared", "---\ndescription: from home\n---\nhome body")
    skill(home / "skills", "only_home", "---\ndescription: home only\n---\nh")
    skill(tmp_path / "parent" / ".maia" / "skills", "shared", "---\ndescription: from parent\n---\nparent body")
    skill(launch / ".agents" / "skills", "open", "---\ndescription: open layout\n---\no", "skill.md")
    skill(launch / ".maia" / "skills", "shared", "---\ndescription: from launch\n---\nlaunch body")
    loaded = load_skills(launch, home)
    assert loaded.warnings == []
    assert sorted(loaded.skills) == ["only_home", "open", "shared"]
    assert loaded.skills["shared"].description == "from launch"
    assert loaded.skills["shared"].body == "launch body"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no header at all", "no YAML header"),
        ("---\nname: x\n---\nbody", '"description" is required'),
        ("---\ndescription: [unclosed\n---\nbody", "invalid YAML header at line"),
        ("---\n- a list\n---\nbody", "the header must be key: value lines"),
        ("---\ndescription: ''\n---\nbody", '"description" is required'),
    ],
)
def test_invalid_skills_warn_and_others_load(tmp_path: Path, text: str, message: str) -> None:
    base = tmp_path / ".maia" / "skills"
    path = skill(base, "bad", text)
    skill(base, "good", "---\ndescription : spaced colon works\n---\nok")
    loaded = load_skills(tmp_path, tmp_path / "home")
    assert list(loaded.skills) == ["good"]
    assert loaded.skills["good"].description == "spaced colon works"
    (warning,) = loaded.warnings
    assert warning.startswith(f"{path}: ") and message in warning and warning.endswith("; skill ignored.")


def test_name_must_match_the_folder(tmp_path: Path) -> None:
    path = skill(tmp_path / ".maia" / "skills", "real", "---\nname: other\ndescription: d\n---\nbody")
    loaded = load_skills(tmp_path, tmp_path / "home")
    assert list(loaded.skills) == ["real"]
    assert loaded.warnings == [f'{path}: name "other" differs from the folder name; the skill is loaded as "real".']


def test_invocation_parsing() -> None:
    assert parse_invocation("§test run all") == SkillInvocation("test", "run all")
    assert parse_invocation("§") == SkillInvocation(None, "")
    assert parse_invocation("  §  ") == SkillInvocation(None, "")
    assert parse_invocation("hello §test") is None


def test_arguments_substitution(tmp_path: Path) -> None:
    base = tmp_path / ".maia" / "skills"
    skill(base, "with_args", "---\ndescription: d\n---\nRun the tests for $ARGUMENTS and report.")
    skill(base, "plain", "---\ndescription: d\n---\nSummarise the failures.")
    skills = load_skills(tmp_path, tmp_path / "h").skills
    assert resolve_invocation(SkillInvocation("with_args", "src/a.py"), skills) == (
        "Run the tests for src/a.py and report."
    )
    assert resolve_invocation(SkillInvocation("plain", "only unit"), skills) == (
        "Summarise the failures.\n\nARGUMENTS: only unit"
    )
    assert resolve_invocation(SkillInvocation("PLAIN", ""), skills) == "Summarise the failures."
    with pytest.raises(UsageError) as info:
        resolve_invocation(SkillInvocation("nope", ""), skills)
    assert str(info.value) == "Unknown skill: nope. Available skills: plain, with_args."


async def test_skill_tool_lists_and_loads(tmp_path: Path) -> None:
    skill(tmp_path / ".maia" / "skills", "pdf", "---\ndescription: Fill PDF forms\n---\nUse pdftk.")
    tool = SkillTool(load_skills(tmp_path, tmp_path / "h").skills)
    assert "pdf: Fill PDF forms" in tool.spec.description
    assert await tool.execute({"skill": "pdf"}, ToolContext(launch=tmp_path)) == "Use pdftk."
    with pytest.raises(ToolError, match=re.escape("Unknown skill: x. Available skills: pdf.")):
        await tool.execute({"skill": "x"}, ToolContext(launch=tmp_path))
