"""Sub-agent definitions (§20.1): ``<agents dir>/<name>/AGENT.md``, a YAML header and four sections.

Project agents (``./.maia/agents``) replace user agents (``~/.maia/agents``) of the same name. A broken
definition never stops the others: it is skipped with a warning naming the file, the field and the fix.
The header's structure (types, enums, required keys) is checked with the shipped schema
``maia/data/schemas/agent-header.schema.json`` and settings.json's "field and fix" wording; what a schema
cannot say (the name is the folder's, a permission rule's syntax, the Agent tool) is checked here.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from maia.core.frontmatter import FrontMatterError, read_front_matter
from maia.core.schemas import schema_errors
from maia.i18n import _
from maia.permissions.rules import RuleSyntaxError, parse_rule

Effort: TypeAlias = Literal["low", "medium", "high"]
Scope: TypeAlias = Literal["project", "user"]

# Model calls a sub-agent may make, by effort (§24).
EFFORT_ITERATIONS: dict[str, int] = {"low": 10, "medium": 25, "high": 50}
MAX_NAME = 64
AGENT_FILES = ("AGENT.md", "agent.md")
KNOWN_KEYS = ("name", "description", "model", "tools", "permissions", "effort", "skills", "omitmd", "trace", "$schema")
_SHOWN_KEYS = {"omitmd": "omitMd", "permissionmode": "permissionMode"}
_LENIENT = {"effort": "medium", "omitMd": False, "trace": False}  # a bad value warns and the default is used
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_LIST_ITEM = re.compile(r"^[^\s,]+$")

# Section titles, normalised (case and accents ignored, a final "(…)" removed).
SECTION_TITLES: dict[str, str] = {
    "instructions system": "instructions",
    "instructions systeme": "instructions",
    "system instructions": "instructions",
    "missions": "missions",
    "mission": "missions",
    "constraints": "constraints",
    "constraint": "constraints",
    "contraintes": "constraints",
    "contrainte": "constraints",
    "output": "output",
}
SECTION_NAMES = {
    "instructions": "Instructions system",
    "missions": "Missions",
    "constraints": "Constraints",
    "output": "Output",
}
REQUIRED_SECTIONS = ("instructions", "missions", "output")


class DefinitionError(ValueError):
    """An AGENT.md that cannot be used; the message says what is wrong and how to fix it."""


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """One valid sub-agent."""

    name: str
    description: str
    path: Path
    scope: Scope
    instructions: str
    missions: str
    output: str
    constraints: str | None = None
    model: str | None = None
    tools: tuple[str, ...] | None = None  # None: every tool of the main agent (never Agent)
    skills: tuple[str, ...] | None = None  # None: every skill; (): none
    permissions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    effort: Effort = "medium"
    omit_md: bool = False
    trace: bool = False

    @property
    def max_iterations(self) -> int:
        """Model calls allowed by the effort: 10, 25 or 50."""
        return EFFORT_ITERATIONS[self.effort]

    def to_json(self) -> dict[str, Any]:
        """The definition as JSON (sent to the child process, printed by ``maia agents``)."""
        return {
            "name": self.name,
            "description": self.description,
            "path": str(self.path),
            "scope": self.scope,
            "model": self.model,
            "tools": list(self.tools) if self.tools is not None else None,
            "skills": list(self.skills) if self.skills is not None else None,
            "permissions": {k: list(v) for k, v in self.permissions.items()},
            "effort": self.effort,
            "omitMd": self.omit_md,
            "trace": self.trace,
            "instructions": self.instructions,
            "missions": self.missions,
            "constraints": self.constraints,
            "output": self.output,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentDefinition:
        """The definition back from :meth:`to_json` (KeyError/TypeError/ValueError when malformed)."""
        effort = str(data.get("effort") or "medium")
        if effort not in EFFORT_ITERATIONS:
            raise ValueError(f"bad effort {effort!r}")
        scope: Scope = "user" if data.get("scope") == "user" else "project"
        tools, skills = data.get("tools"), data.get("skills")
        return cls(
            name=str(data["name"]),
            description=str(data["description"]),
            path=Path(str(data["path"])),
            scope=scope,
            instructions=str(data["instructions"]),
            missions=str(data["missions"]),
            output=str(data["output"]),
            constraints=str(data["constraints"]) if data.get("constraints") else None,
            model=str(data["model"]) if data.get("model") else None,
            tools=tuple(str(t) for t in tools) if tools is not None else None,
            skills=tuple(str(s) for s in skills) if skills is not None else None,
            permissions={str(k): tuple(str(r) for r in v) for k, v in dict(data.get("permissions") or {}).items()},
            effort=effort,  # type: ignore[arg-type]  # checked above
            omit_md=bool(data.get("omitMd")),
            trace=bool(data.get("trace")),
        )


@dataclass(slots=True)
class LoadedAgents:
    """The agents that loaded (by name), a warning per problem, and why each skipped folder was skipped."""

    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # folder name → the warning that skipped it

    def __iter__(self) -> Iterator[Any]:
        """``agents, warnings = load_agents(...)`` works."""
        yield self.agents
        yield self.warnings

    def find(self, name: str) -> AgentDefinition | None:
        """The agent called ``name``, ignoring case."""
        return find_agent(self.agents, name)


def find_agent(agents: Mapping[str, AgentDefinition], name: str) -> AgentDefinition | None:
    """The agent called ``name`` (exact first, then ignoring case)."""
    if name in agents:
        return agents[name]
    lowered = name.lower()
    return next((a for n, a in agents.items() if n.lower() == lowered), None)


# --- names -----------------------------------------------------------------------------------


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an agent's name, or None when it can."""
    if not name:
        return _("an agent name cannot be empty")
    if len(name) > MAX_NAME:
        return _("an agent name has at most {max} characters ({count} given)").format(max=MAX_NAME, count=len(name))
    if not _NAME.match(name):
        return _("an agent name is made of letters, digits, _ . and - only, not {name!r}").format(name=name)
    if name.startswith("."):
        return _("an agent name cannot start with a dot")
    return None


# --- the file --------------------------------------------------------------------------------


def _scalar(value: Any) -> str | None:
    """A YAML scalar as text (numbers included), None for anything else."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def split_list(text: str) -> list[str]:
    """``a, b(c, d), e`` → ``["a", "b(c, d)", "e"]``: commas inside parentheses do not split."""
    items: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        if char == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    items.append("".join(current).strip())
    return [item for item in items if item]


def _list(value: Any) -> list[str] | None:
    """A list written ``[a, b]``, ``- a`` lines or ``a, b`` (its type checked by the schema); None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        return split_list(value)
    return [item for v in value for item in split_list(str(v).strip())]


def _names(value: Any, key: str, example: str) -> tuple[str, ...] | None:
    items = _list(value)
    if items is None:
        return None
    for item in items:
        if not _LIST_ITEM.match(item):
            raise DefinitionError(
                _('"{key}": {item!r} is not a name; separate names with commas, e.g. {key}: {example}').format(
                    key=key, item=item, example=example
                )
            )
    return tuple(dict.fromkeys(items))


def _permissions(value: Any) -> dict[str, tuple[str, ...]]:
    """The rule lists (families and types checked by the schema); a rule that cannot be read is an error."""
    found: dict[str, tuple[str, ...]] = {}
    for family, rules in (value or {}).items():
        items = _list(rules) or []
        for rule in items:
            try:
                parse_rule(rule)
            except RuleSyntaxError as error:
                raise DefinitionError(_('"permissions.{family}": {error}').format(family=family, error=error)) from None
        found[family] = tuple(items)
    return found


def _header_fixes(folder: str) -> dict[str, str]:
    """The fix each header key's problem shows."""
    flag = _("true or false")
    rules = _("a list of rules, e.g. [Read, Grep]")
    return {
        "name": _('the folder\'s name, in quotes when YAML would read it otherwise: name: "{folder}"').format(
            folder=folder
        ),
        "description": _(
            "say what the agent does and when to use it, e.g. description: Reviews code for security problems"
        ),
        "model": _("one model name or fragment, e.g. model: sonnet"),
        "tools": _("a list of tool names, e.g. tools: Read, Grep, Glob"),
        "skills": _("a list of skill names, e.g. skills: [api-docs, testing-guide]"),
        "permissions": _("a table of allow, ask and deny lists, e.g. permissions: {allow: [Read, Grep], deny: [Bash]}"),
        "permissions.allow": rules,
        "permissions.ask": rules,
        "permissions.deny": rules,
        "effort": _("low, medium or high"),
        "omitMd": flag,
        "trace": flag,
    }


def _for_schema(header: Mapping[str, Any]) -> dict[str, Any]:
    """The header as the schema spells it (``omitMd``), with the spellings MAIA has always accepted made
    plain: ``effort: High``, ``trace: yes`` or ``1``, ``permissions: {Allow: …}`` (keys ignore case)."""
    data: dict[str, Any] = {}
    for key, value in header.items():
        if value is None:
            continue  # "model:" with nothing after it: as if absent, as always
        if key == "effort" and isinstance(value, str):
            value = value.strip().lower()
        elif key in ("omitmd", "trace") and isinstance(value, str | int) and not isinstance(value, bool):
            text = str(value).strip().lower()
            value = True if text in _TRUE else False if text in _FALSE else value
        elif key == "permissions" and isinstance(value, dict):
            merged: dict[str, Any] = {}
            for raw_key, rules in value.items():
                family = str(raw_key).strip().lower()
                if family in merged:  # "Allow:" and "allow:" add up
                    before = merged[family]
                    merged[family] = [
                        *(before if isinstance(before, list) else [before]),
                        *(rules if isinstance(rules, list) else [rules]),
                    ]
                else:
                    merged[family] = rules
            value = merged
        data[_SHOWN_KEYS.get(key, key)] = value
    return data


# --- sections --------------------------------------------------------------------------------

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_TRAILING_PARENS = re.compile(r"\s*\([^()]*\)\s*$")


def normalise_title(title: str) -> str:
    """``**Instructions Système (à lire)**:`` → ``instructions systeme``."""
    text = title.strip(" \t*_:")
    text = _TRAILING_PARENS.sub("", text).strip(" \t*_:")
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(text.casefold().split())


@dataclass(frozen=True, slots=True)
class _Line:
    text: str
    number: int  # in the file, from 1
    code: bool  # inside a fenced code block


def _clean_lines(body: str, first_line: int) -> list[_Line]:
    """The body's lines, HTML comments removed outside code blocks, code blocks marked."""
    out: list[_Line] = []
    fence: str | None = None
    comment_start: int | None = None
    for offset, raw in enumerate(body.splitlines()):
        number = first_line + offset
        if fence is not None:
            match = _FENCE.match(raw)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None if not match.group(2).strip() else fence
            out.append(_Line(raw, number, True))
            continue
        touched = comment_start is not None
        text, pieces = raw, []
        while text:
            if comment_start is not None:
                end = text.find("-->")
                if end < 0:
                    break
                text, comment_start = text[end + 3 :], None
            else:
                start = text.find("<!--")
                if start < 0:
                    pieces.append(text)
                    break
                pieces.append(text[:start])
                text, comment_start, touched = text[start + 4 :], number, True
        line = "".join(pieces)
        if touched and not line.strip():
            continue  # a line that held only a comment disappears
        match = _FENCE.match(line)
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            out.append(_Line(line, number, True))
            continue
        out.append(_Line(line, number, False))
    if comment_start is not None:
        raise DefinitionError(
            _("the HTML comment opened with <!-- at line {line} is never closed: add --> after it").format(
                line=comment_start
            )
        )
    return out


def parse_sections(body: str, first_line: int = 1) -> dict[str, str]:
    """The recognised sections of a body by key (``instructions``, ``missions``, ``constraints``, ``output``)."""
    lines = _clean_lines(body, first_line)
    headings: list[tuple[int, int, str | None]] = []  # (index, level, section key)
    for index, line in enumerate(lines):
        if line.code:
            continue
        match = _HEADING.match(line.text)
        if match:
            headings.append((index, len(match.group(1)), SECTION_TITLES.get(normalise_title(match.group(2) or ""))))
    sections: dict[str, str] = {}
    where: dict[str, int] = {}
    for position, (index, level, key) in enumerate(headings):
        if key is None:
            continue
        if key in sections:
            raise DefinitionError(
                _('the section "{section}" appears twice (lines {first} and {second}): keep one').format(
                    section=SECTION_NAMES[key], first=where[key], second=lines[index].number
                )
            )
        end = len(lines)
        for other_index, other_level, other_key in headings[position + 1 :]:
            if other_level <= level or other_key is not None:
                end = other_index
                break
        sections[key] = "\n".join(line.text for line in lines[index + 1 : end]).strip()
        where[key] = lines[index].number
    return sections


# --- one definition --------------------------------------------------------------------------


@dataclass(slots=True)
class ParsedAgent:
    """A definition, the non-fatal remarks about it, and the values of the extra keys asked for."""

    definition: AgentDefinition
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # lower-case key → raw header value


def parse_agent(
    path: Path,
    scope: Scope = "project",
    folder_name: str | None = None,
    *,
    extra_keys: Sequence[str] = (),
    keep_agent_tool: bool = False,
) -> ParsedAgent:
    """Read one AGENT.md; DefinitionError says why it cannot be used.

    ``extra_keys`` (lower case) are header keys another kind of agent adds (a workflow's ``timeout``):
    their raw values come back in ``extra`` instead of an "unknown key" warning. ``keep_agent_tool``
    keeps ``Agent`` in ``tools`` (a workflow's parent launches agents; a sub-agent never does).
    """
    known = (*KNOWN_KEYS, *extra_keys)
    folder = folder_name or path.parent.name
    problem = name_problem(folder)
    if problem is not None:
        raise DefinitionError(
            _("the folder name is not a valid agent name: {problem}; rename the folder").format(problem=problem)
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise DefinitionError(_("cannot read the file: {error}").format(error=error)) from None
    try:
        front = read_front_matter(text, _("name:, description: …"))
    except FrontMatterError as error:
        raise DefinitionError(str(error)) from None
    raw, body, header_lines = front.header, front.body, front.body_line
    warnings: list[str] = []
    header: dict[str, Any] = {}
    for raw_key, value in raw.items():
        key = str(raw_key).strip().lower()
        if key in header:
            warnings.append(
                _('the key "{key}" is given twice (keys ignore case); the last one is used').format(key=raw_key)
            )
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = _(' (did you mean "{key}"?)').format(key=_SHOWN_KEYS.get(close[0], close[0])) if close else ""
            warnings.append(_('unknown key "{key}" ignored{hint}').format(key=raw_key, hint=hint))
            continue
        header[key] = value
    # The structure, with the schema: a bad effort or flag warns and takes the default, anything else
    # makes the definition unusable.
    data = _for_schema({k: v for k, v in header.items() if k not in extra_keys})
    fatal: list[str] = []
    for found in schema_errors(data, "agent-header", _header_fixes(folder)):
        if found.field in _LENIENT:
            default = json.dumps(_LENIENT[str(found.field)]).strip('"')
            warnings.append(
                _("{problem}; {default} is used").format(problem=found.message.removesuffix("."), default=default)
            )
            data.pop(str(found.field))
        else:
            fatal.append(found.message.removesuffix("."))
    if fatal:
        raise DefinitionError(". ".join(fatal))
    name = _agent_name(data.get("name"), folder, warnings)
    description: str = data["description"]
    model = _scalar(data.get("model")) or None
    tools = _names(data.get("tools"), "tools", "Read, Grep, Glob")
    if tools is not None and not keep_agent_tool and any(t.lower() == "agent" for t in tools):
        warnings.append(_('"tools": a sub-agent never gets the Agent tool; Agent is left out'))
        tools = tuple(t for t in tools if t.lower() != "agent")
    skills = _names(data.get("skills"), "skills", "[api-docs, testing-guide]")
    permissions = _permissions(data.get("permissions"))
    effort: Effort = data.get("effort", "medium")
    omit_md: bool = data.get("omitMd", False)
    trace: bool = data.get("trace", False)
    sections = parse_sections(body, header_lines + 1)
    missing = [SECTION_NAMES[key] for key in REQUIRED_SECTIONS if key not in sections]
    if missing:
        raise DefinitionError(
            _(
                "missing section(s): {names}; add a Markdown heading for each (e.g. # {first}) followed by its text"
            ).format(names=", ".join(missing), first=missing[0])
        )
    empty = [SECTION_NAMES[key] for key in REQUIRED_SECTIONS if not sections[key]]
    if empty:
        raise DefinitionError(
            _("empty section(s): {names}; write their text under the heading").format(names=", ".join(empty))
        )
    definition = AgentDefinition(
        name=name,
        description=" ".join(description.split()),
        path=path,
        scope=scope,
        instructions=sections["instructions"],
        missions=sections["missions"],
        output=sections["output"],
        constraints=sections.get("constraints") or None,
        model=model or None,
        tools=tools,
        skills=skills,
        permissions=permissions,
        effort=effort,
        omit_md=omit_md,
        trace=trace,
    )
    return ParsedAgent(definition, warnings, {k: header[k] for k in extra_keys if k in header})


def _agent_name(value: Any, folder: str, warnings: list[str]) -> str:
    if value is None:
        warnings.append(_('no "name" in the header: the folder name is used; add name: {folder}').format(folder=folder))
        return folder
    if value.strip() != folder:
        raise DefinitionError(
            _('"name" is {name!r} but the folder is {folder!r}: they must be the same; write name: {folder}').format(
                name=value.strip(), folder=folder
            )
        )
    return folder


# --- every definition ------------------------------------------------------------------------


def agent_dirs(home: Path, launch: Path) -> list[tuple[Scope, Path]]:
    """Where agents are looked for, the user's first (the project's replace them by name)."""
    return [("user", home / "agents"), ("project", launch / ".maia" / "agents")]


def load_agents(home: Path, launch: Path) -> LoadedAgents:
    """Every valid agent of ``~/.maia/agents`` and ``./.maia/agents``; a warning per problem. In a folder
    the user has not trusted, the project's agents lose the allow rules of their ``permissions``."""
    from maia.core.trust import folder_trusted

    loaded = load_agents_from(agent_dirs(home, launch))
    if not folder_trusted(launch, home):
        loaded.agents = {name: without_grants(a) for name, a in loaded.agents.items()}
    return loaded


def without_grants(definition: AgentDefinition) -> AgentDefinition:
    """A project agent as an untrusted folder may define it: its deny and ask rules, no allow rule."""
    if definition.scope != "project" or not definition.permissions.get("allow"):
        return definition
    import dataclasses

    kept = {k: v for k, v in definition.permissions.items() if k != "allow"}
    return dataclasses.replace(definition, permissions=kept)


def load_agents_from(dirs: Sequence[tuple[Scope, Path]], *, exclude: Path | None = None) -> LoadedAgents:
    """Every valid agent of these folders, a later folder replacing an earlier one by name; the agent
    folder ``exclude`` is left out (a workflow's parent beside its agents)."""
    loaded = LoadedAgents()
    skip = exclude.resolve() if exclude is not None else None
    found: dict[str, AgentDefinition] = {}  # lower-case name → definition
    seen: set[Path] = set()
    for scope, base in dirs:
        try:
            real = base.resolve()
            if real in seen or not base.is_dir():
                continue
            seen.add(real)
            folders = sorted((p for p in base.iterdir() if p.is_dir()), key=lambda p: p.name)
        except OSError as error:
            loaded.warnings.append(_("{path}: cannot list the agents ({error}).").format(path=base, error=error))
            continue
        in_scope: set[str] = set()
        for folder in folders:
            if folder.name.startswith(".") or (skip is not None and folder.resolve() == skip):
                continue
            path = next((folder / n for n in AGENT_FILES if (folder / n).is_file()), None)
            if path is None:
                message = _("{folder}: no AGENT.md in this folder; ignored.").format(folder=folder)
                loaded.warnings.append(message)
                loaded.skipped[folder.name] = message
                continue
            try:
                parsed = parse_agent(path, scope)
            except DefinitionError as error:
                message = _("{path}: {error}; agent ignored.").format(path=path, error=error)
                loaded.warnings.append(message)
                loaded.skipped[folder.name] = message
                continue
            loaded.warnings.extend(_("{path}: {warning}.").format(path=path, warning=w) for w in parsed.warnings)
            key = parsed.definition.name.lower()
            if key in in_scope:
                message = _(
                    "{path}: another agent of this folder has the same name (names ignore case); ignored."
                ).format(path=path)
                loaded.warnings.append(message)
                loaded.skipped[folder.name] = message
                continue
            in_scope.add(key)
            found[key] = parsed.definition  # the project's replaces the user's
    loaded.agents = {a.name: a for a in sorted(found.values(), key=lambda a: a.name.lower())}
    return loaded


def agent_lines(agents: Sequence[AgentDefinition] | Mapping[str, AgentDefinition]) -> list[str]:
    """``name (project): description`` per agent, for ``/agents``, ``&`` and the start-up log."""
    values = list(agents.values()) if isinstance(agents, Mapping) else list(agents)
    scopes = {"project": _("project"), "user": _("user")}
    return [
        _("{name} ({scope}): {description}").format(name=a.name, scope=scopes[a.scope], description=a.description)
        for a in values
    ]


def loaded_message(agents: Mapping[str, AgentDefinition]) -> str | None:
    """The start-up INFO: ``Sub-agents loaded:`` and one agent per line; None without agents."""
    if not agents:
        return None
    return _("Sub-agents loaded:") + "".join(f"\n- {line}" for line in agent_lines(agents))
