"""Custom tools (§10): ``.maia/tools/<dir>/TOOL.json`` run without a shell, one argument per value."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maia.core.contracts import ToolContext, ToolSpec
from maia.core.registry import OWN_TOOL_NAMES
from maia.core.schemas import schema_problems
from maia.i18n import _
from maia.permissions.subject import Subject, ValuesSubject
from maia.process.shell import DEFAULT_TIMEOUT, cut_middle, run_shell
from maia.tools.base import BuiltinTool, ToolError

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
MAX_OUTPUT = 30_000
RESERVED = OWN_TOOL_NAMES


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter the model fills in."""

    name: str
    type: str  # "number" or "string"
    default: str | None
    description: str


@dataclass(frozen=True, slots=True)
class CustomDefinition:
    """A validated TOOL.json."""

    name: str
    description: str
    parameters: tuple[Parameter, ...]
    argv: tuple[str, ...]  # the run line split into words, placeholders kept
    folder: Path


@dataclass(slots=True)
class LoadedCustomTools:
    """The tools that loaded, and one warning per definition that did not."""

    tools: list[CustomTool] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def strip_trailing_commas(text: str) -> str:
    """Remove a comma right before ``]`` or ``}`` (outside strings): a common slip in hand-written JSON."""
    out: list[str] = []
    in_string = False
    escape = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string:
            out.append(ch)
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch == ",":
            j = i + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if j < len(text) and text[j] in "]}":
                out.append(text[i + 1 : j])  # keep the white space (and line numbers)
                i = j
                continue
            out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def parse_definition(path: Path) -> CustomDefinition:
    """Read and validate one TOOL.json; ValueError says what is wrong and how to fix it."""
    folder = path.parent
    try:
        data = json.loads(strip_trailing_commas(path.read_text(encoding="utf-8-sig")))
    except json.JSONDecodeError as error:
        raise ValueError(
            _("invalid JSON at line {line}, column {col}: {msg}").format(
                line=error.lineno, col=error.colno, msg=error.msg
            )
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(_("cannot read the file: {error}").format(error=error)) from None
    if not isinstance(data, dict):
        raise ValueError(_("the file must hold a JSON object"))
    problems = schema_problems(data, "tool", _tool_fixes())  # the structure: maia/data/schemas/tool.schema.json
    if problems:
        raise ValueError(" ".join(problems).removesuffix("."))
    description = data["description"]
    name = data.get("name", folder.name)
    if not NAME.match(name):  # the folder's name, when the file gives none
        raise ValueError(_('"name" must be 1 to 64 letters, digits, _ or -, not {name!r}').format(name=name))
    if name in RESERVED:
        raise ValueError(_('"{name}" is the name of a built-in tool: choose another name').format(name=name))
    command = data["command"]
    parameters = _parameters(command.get("parameters", []))
    run = command["run"]
    try:
        argv = shlex.split(run, posix=True)
    except ValueError as error:
        raise ValueError(_('"command.run" cannot be split into words: {error}').format(error=error)) from None
    if not argv:
        raise ValueError(_('"command.run" is empty'))
    declared = {p.name for p in parameters}
    for word in argv:
        for placeholder in PLACEHOLDER.findall(word):
            if placeholder not in declared:
                raise ValueError(
                    _('"command.run" uses {{{{{name}}}}}, which is not a declared parameter').format(name=placeholder)
                )
    if PLACEHOLDER.search(argv[0]):
        raise ValueError(_('the program (first word of "command.run") cannot be a {{parameter}}'))
    return CustomDefinition(name, description.strip(), parameters, tuple(argv), folder)


def _tool_fixes() -> dict[str, str]:
    """The fix each TOOL.json field's error shows (the schema checks the structure)."""
    return {
        "description": _("say what the tool does and when to call it"),
        "name": _("1 to 64 letters, digits, _ or -"),
        "command": _('an object with "run" (and optional "parameters")'),
        "command.run": _('the command line to run, e.g. "python3 ./tool.py {{x}}"'),
        "command.parameters": _('a list of {"name": …, "type": …} objects'),
        "command.parameters.name": _("an identifier (letters, digits, _)"),
        "command.parameters.type": _('"number" or "string"'),
        "command.parameters.default": _("a string or a number"),
    }


def _parameters(raw: list[dict[str, Any]]) -> tuple[Parameter, ...]:
    """The declared parameters (their structure already checked by the schema)."""
    found: list[Parameter] = []
    for item in raw:
        name = item["name"]
        if any(p.name == name for p in found):
            raise ValueError(_('parameter "{name}" is declared twice').format(name=name))
        kind = item.get("type", "string")
        default = item.get("default")
        description = item.get("description", "")
        found.append(Parameter(name, kind, None if default is None else _text(default), str(description)))
    return tuple(found)


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class CustomTool(BuiltinTool):
    """A TOOL.json tool: asks before running by default."""

    default_permission = "ask"

    def __init__(self, definition: CustomDefinition) -> None:
        self.definition = definition

    @property
    def spec(self) -> ToolSpec:
        """Schema derived from the parameters (number → number, string → string)."""
        properties: dict[str, Any] = {}
        required = []
        for p in self.definition.parameters:
            entry: dict[str, Any] = {"type": p.type}
            if p.description:
                entry["description"] = p.description
            if p.default is not None:
                entry["description"] = (p.description + " " if p.description else "") + f"(default {p.default})"
            else:
                required.append(p.name)
            properties[p.name] = entry
        # a parameter the definition does not declare is refused (rules could not judge it)
        schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
        if required:
            schema["required"] = required
        return ToolSpec(self.definition.name, self.definition.description, schema)

    def describe(self, tool_input: Mapping[str, Any]) -> str:
        """The values the model sent."""
        return " ".join(_text(tool_input[p.name]) for p in self.definition.parameters if p.name in tool_input)

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """Rules match the declared parameters' values, defaults applied; undeclared ones are refused."""
        declared = {p.name for p in self.definition.parameters}
        extra = sorted(k for k in tool_input if k not in declared)
        if extra:
            return ValuesSubject(
                (),
                _("{tool} has no parameter {names}: the call is refused").format(
                    tool=self.definition.name, names=", ".join(extra)
                ),
            )
        values = []
        for p in self.definition.parameters:
            value = tool_input.get(p.name)
            if value is None:
                value = p.default
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                values.append(_text(value))
        return ValuesSubject(tuple(values))

    def argv(self, tool_input: Mapping[str, Any]) -> list[str]:
        """The words to run: each value stays one argument; ``./`` is the tool's folder."""
        values: dict[str, str] = {}
        for p in self.definition.parameters:
            if p.name in tool_input and tool_input[p.name] is not None:
                values[p.name] = _text(tool_input[p.name])
            elif p.default is not None:
                values[p.name] = p.default
            else:
                raise ToolError(_('Parameter "{name}" is required.').format(name=p.name))
        words = [PLACEHOLDER.sub(lambda m: values[m.group(1)], word) for word in self.definition.argv]
        program = words[0]
        if program.startswith("./"):
            words[0] = str(self.definition.folder / program[2:])
        return words

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Run without a shell in the tool's folder; a non-zero exit is an error carrying stderr."""
        argv = self.argv(tool_input)
        env = {**(ctx.env or {}), "MAIA_CWD": str(ctx.launch), "MAIA_TOOL_DIR": str(self.definition.folder)}
        result = await run_shell(
            argv,
            self.definition.folder,
            timeout=DEFAULT_TIMEOUT,
            env=env,
            max_chars=MAX_OUTPUT,
            separate_stderr=True,
            sandbox=ctx.sandbox,
        )
        output, _cut = cut_middle(result.output, MAX_OUTPUT)
        if result.state == "failed_to_start":
            raise ToolError(
                _("{name}: the program could not be started: {error}").format(
                    name=self.definition.name, error=result.error
                )
            )
        if result.state != "exited" or result.exit_code != 0:
            detail = result.with_note(result.stderr.strip() or output.strip())
            raise ToolError(f"{result.describe(DEFAULT_TIMEOUT)}\n{detail}".strip())
        return output


def load_custom_tools(launch: Path, home: Path) -> LoadedCustomTools:
    """``./.maia/tools`` and ``~/.maia/tools``, alphabetically; the project's tool wins on a name clash.
    The project's tools run programs the repository chose: loaded only in a trusted folder."""
    from maia.core.trust import folder_trusted

    loaded = LoadedCustomTools()
    taken: dict[str, str] = {}
    for scope, base in (("project", launch / ".maia" / "tools"), ("user", home / "tools")):
        # the trust check (it reads every granting file of the project) only for a project that has tools
        if not base.is_dir() or (scope == "project" and not folder_trusted(launch, home)):
            continue
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            path = next((folder / n for n in ("TOOL.json", "tool.json") if (folder / n).is_file()), None)
            if path is None:
                loaded.warnings.append(_("{folder}: no TOOL.json in this folder; ignored.").format(folder=folder))
                continue
            try:
                definition = parse_definition(path)
            except ValueError as error:
                loaded.warnings.append(_("{path}: {error}; tool ignored.").format(path=path, error=error))
                continue
            if definition.name in taken:
                if taken[definition.name] == scope:
                    loaded.warnings.append(
                        _('{path}: a tool named "{name}" is already defined; ignored.').format(
                            path=path, name=definition.name
                        )
                    )
                continue  # a user tool with a project tool's name: the project's wins, silently
            taken[definition.name] = scope
            loaded.tools.append(CustomTool(definition))
    return loaded
