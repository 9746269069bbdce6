"""Skills (§11.3): ``<dir>/<name>/SKILL.md`` with a YAML header, the Skill tool, and ``§name args``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maia.core.contracts import ToolContext, ToolTraits
from maia.core.errors import UsageError
from maia.core.frontmatter import FrontMatterError, read_front_matter
from maia.i18n import _
from maia.permissions.subject import NameSubject, Subject
from maia.tools.base import BuiltinTool, ToolError, require_str

_SKILL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")


@dataclass(frozen=True, slots=True)
class Skill:
    """One loaded skill."""

    name: str
    description: str
    path: Path
    body: str

    def invoke(self, args: str = "") -> str:
        """The prompt for ``§name args``: ``$ARGUMENTS`` replaced, else an ``ARGUMENTS:`` line added."""
        args = args.strip()
        if "$ARGUMENTS" in self.body:
            return self.body.replace("$ARGUMENTS", args).strip()
        return f"{self.body.strip()}\n\nARGUMENTS: {args}" if args else self.body.strip()


@dataclass(slots=True)
class LoadedSkills:
    """Skills by name, and one warning per skill that could not load."""

    skills: dict[str, Skill] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def skill_dirs(launch: Path, home: Path) -> list[Path]:
    """Where skills are looked for, least specific first (later ones win on a name clash)."""
    return [
        home / "skills",
        launch.parent / ".maia" / "skills",
        launch / ".agents" / "skills",
        launch / ".maia" / "skills",
    ]


def parse_skill(path: Path) -> Skill:
    """Read one SKILL.md; ValueError says what is wrong."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(_("cannot read the file: {error}").format(error=error)) from None
    front = read_front_matter(text, _("description: …"))  # a FrontMatterError is a ValueError
    header = {str(k).strip().lower(): v for k, v in front.header.items()}
    description = header.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError(_('"description" is required in the header: say what the skill is for'))
    return Skill(path.parent.name, " ".join(description.split()), path, front.body)


def load_skills(launch: Path, home: Path) -> LoadedSkills:
    """Every skill of every location; the most specific location wins on a name clash."""
    loaded = LoadedSkills()
    seen: set[Path] = set()
    for base in skill_dirs(launch, home):
        try:
            real = base.resolve()
        except OSError:
            continue
        if real in seen or not base.is_dir():
            continue
        seen.add(real)
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            path = next((folder / n for n in ("SKILL.md", "skill.md") if (folder / n).is_file()), None)
            if path is None:
                continue
            try:
                skill = parse_skill(path)
            except ValueError as error:
                loaded.warnings.append(_("{path}: {error}; skill ignored.").format(path=path, error=error))
                continue
            declared = _declared_name(path)
            if declared is not None and declared != folder.name:
                loaded.warnings.append(
                    _(
                        '{path}: name "{declared}" differs from the folder name; the skill is loaded as "{name}".'
                    ).format(path=path, declared=declared, name=folder.name)
                )
            loaded.skills[skill.name] = skill
    return loaded


def _declared_name(path: Path) -> str | None:
    try:
        header = read_front_matter(path.read_text(encoding="utf-8-sig"), "").header
    except (OSError, UnicodeDecodeError, FrontMatterError):
        return None
    for key, value in header.items():
        if str(key).strip().lower() == "name" and value is not None:
            return str(value).strip()
    return None


@dataclass(frozen=True, slots=True)
class SkillInvocation:
    """``§name args`` (``name`` None for ``§`` alone: list the skills)."""

    name: str | None
    args: str


def parse_invocation(text: str) -> SkillInvocation | None:
    """Recognise ``§name [args]`` at the start of the input."""
    stripped = text.strip()
    if not stripped.startswith("§"):
        return None
    rest = stripped[1:].strip()
    if not rest:
        return SkillInvocation(None, "")
    name, _sep, args = rest.partition(" ")
    if not _SKILL_NAME.match(name):
        return None  # "§ 3.2 of the contract": a section sign in a sentence, not a skill
    return SkillInvocation(name, args.strip())


def resolve_invocation(invocation: SkillInvocation, skills: Mapping[str, Skill]) -> str:
    """The prompt to send; an unknown skill is an error that lists the available ones."""
    assert invocation.name is not None
    skill = skills.get(invocation.name) or next(
        (s for n, s in skills.items() if n.lower() == invocation.name.lower()), None
    )
    if skill is None:
        available = ", ".join(sorted(skills)) or _("none")
        raise UsageError(
            _("Unknown skill: {name}. Available skills: {names}.").format(name=invocation.name, names=available)
        )
    return skill.invoke(invocation.args)


class SkillTool(BuiltinTool):
    """Load a skill's instructions on demand."""

    traits = ToolTraits(read_only=True, main_input="skill")

    name = "Skill"
    schema = {
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "The skill's name."},
            "args": {"type": "string", "description": "Optional arguments for the skill."},
        },
        "required": ["skill"],
    }
    summary_key = "skill"

    def __init__(self, skills: Mapping[str, Skill]) -> None:
        self.skills = dict(skills)

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """Skill rules match the skill's name."""
        name = tool_input.get("skill", tool_input.get("name"))
        return NameSubject(name if isinstance(name, str) else None)

    @property
    def description(self) -> str:  # type: ignore[override]
        """The skills available, named in the description the model reads."""
        names = "; ".join(f"{s.name}: {s.description}" for s in self.skills.values())
        return f"Load the full instructions of a skill, then follow them. Available skills: {names}"

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """The skill's instructions."""
        name = require_str(tool_input, "skill", _("the name of a skill"))
        try:
            return resolve_invocation(SkillInvocation(name, str(tool_input.get("args") or "")), self.skills)
        except UsageError as error:
            raise ToolError(error.message) from None
