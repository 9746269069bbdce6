"""Custom slash commands: a Markdown file becomes ``/name`` (docs/commands.md).

``~/.maia/commands/review.md`` is ``/review``; ``.maia/commands/frontend/review.md`` (a trusted
project's) is ``/frontend:review``. The optional YAML header gives ``description``,
``argument-hint``, ``model`` and ``allowed-tools`` (rules added for that turn only: they never
widen a deny, which is checked first). The body is the prompt, with ``$ARGUMENTS`` and ``$1``…``$9``
replaced by what the user typed after the name, ``@file`` references read as in any prompt, and
lines that start with ``!`` run as ``!`` runs (under the sandbox; their output takes their place).
Inside ``!`` lines the arguments are variables (``"${MAIA_ARG_1}"``): what the user typed is never
shell syntax there.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from maia.i18n import _

COMMANDS_DIR = "commands"
_HEADER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_SEGMENT = re.compile(r"[a-z0-9][a-z0-9_.-]*\Z")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")
MAX_FILE = 200_000

Source = Literal["user", "project"]


@dataclass(frozen=True, slots=True)
class CustomCommand:
    """One command read from its file."""

    name: str
    path: Path
    source: Source
    body: str
    description: str = ""
    argument_hint: str = ""
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()


@dataclass(slots=True)
class CommandSet:
    """The commands in force, those ignored (an untrusted project's, or shadowing a built-in), warnings."""

    commands: dict[str, CustomCommand] = field(default_factory=dict)
    ignored: list[tuple[CustomCommand, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Expanded:
    """A command filled in: the prompt to send, and what applies to that turn."""

    prompt: str
    model: str | None
    allowed_tools: tuple[str, ...]
    ran: tuple[str, ...] = ()  # the ``!`` lines that ran


def _files(folder: Path) -> list[tuple[str, Path]]:
    if not folder.is_dir():
        return []
    found: list[tuple[str, Path]] = []
    for path in sorted(folder.rglob("*.md")):
        if not path.is_file():
            continue
        parts = path.relative_to(folder).with_suffix("").parts
        found.append((":".join(p.lower() for p in parts), path))
    return found


def project_command_files(launch: Path) -> list[tuple[str, Path]]:
    """``(name, file)`` for each ``.maia/commands/**/*.md`` of the launch folder."""
    return _files(launch / ".maia" / COMMANDS_DIR)


def user_command_files(home: Path) -> list[tuple[str, Path]]:
    """``(name, file)`` for each ``commands/**/*.md`` of MAIA's home."""
    return _files(home / COMMANDS_DIR)


def parse_command(name: str, path: Path, source: Source) -> CustomCommand:
    """Read one command file; ValueError says what is wrong."""
    import yaml

    if not all(_SEGMENT.match(part) for part in name.split(":")):
        raise ValueError(_("a command name is made of letters, digits, '-', '_' and '.' (sub-folders for ':')"))
    try:
        if path.stat().st_size > MAX_FILE:
            raise ValueError(_("the file is larger than {size} bytes").format(size=MAX_FILE))
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(_("cannot read the file: {error}").format(error=error)) from None
    header: dict[str, Any] = {}
    match = _HEADER.match(text)
    if match:
        try:
            loaded = yaml.safe_load(match.group(1)) if match.group(1).strip() else {}
        except yaml.YAMLError as error:
            raise ValueError(_("invalid YAML header: {error}").format(error=getattr(error, "problem", error))) from None
        if not isinstance(loaded, dict):
            raise ValueError(_("the header must be key: value lines"))
        header = {str(k).strip().lower(): v for k, v in loaded.items()}
        text = text[match.end() :]
    body = text.strip()
    if not body:
        raise ValueError(_("the command has no prompt: write it below the header"))

    def text_field(key: str) -> str:
        value = header.get(key, "")
        if value is None:
            return ""
        if not isinstance(value, str | int | float):
            raise ValueError(_('"{key}" must be text').format(key=key))
        return str(value).strip()

    tools = header.get("allowed-tools", [])
    if isinstance(tools, str):
        tools = [t.strip() for t in re.split(r",(?![^()]*\))", tools) if t.strip()]
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise ValueError(_('"allowed-tools" must be a list of permission rules such as Bash(git diff *)'))
    if tools:
        from maia.permissions.rules import parse_rules

        parsed = parse_rules({"allow": tools}, where=str(path))
        if parsed.warnings:
            raise ValueError("; ".join(parsed.warnings))
    unknown = sorted(set(header) - {"description", "argument-hint", "model", "allowed-tools"})
    if unknown:
        raise ValueError(_("unknown keys in the header: {keys}").format(keys=", ".join(unknown)))
    return CustomCommand(
        name,
        path,
        source,
        body,
        text_field("description"),
        text_field("argument-hint"),
        text_field("model") or None,
        tuple(tools),
    )


def load_commands(
    launch: Path, home: Path, *, trusted: bool | Callable[[], bool], reserved: Collection[str] = ()
) -> CommandSet:
    """The user's commands, then the project's (only in a trusted folder; a project's wins on a clash);
    a name that shadows a built-in command is refused with a warning. ``trusted`` may be a function: asked
    only when the project has a command (the trust check reads the project's files)."""
    found = CommandSet()
    builtin = {name.lower() for name in reserved}
    layers: list[tuple[Source, list[tuple[str, Path]]]] = [
        ("user", user_command_files(home)),
        ("project", project_command_files(launch)),
    ]
    seen: set[Path] = set()
    for source, files in layers:
        for name, path in files:
            real = path.resolve()
            if real in seen:
                continue  # the home folder launched as a project
            seen.add(real)
            try:
                command = parse_command(name, path, source)
            except ValueError as error:
                found.warnings.append(_("{path}: {error}").format(path=path, error=error))
                continue
            if name in builtin:
                found.warnings.append(
                    _("{path}: /{name} is a built-in command: this file is ignored (rename it).").format(
                        path=path, name=name
                    )
                )
                found.ignored.append((command, _("shadows a built-in command")))
                continue
            if source == "project" and not (trusted() if callable(trusted) else trusted):
                found.ignored.append((command, _("ignored (untrusted)")))
                continue
            found.commands[name] = command
    return found


def _arguments(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()  # an unbalanced quote: words as typed


def fill(template: str, args: str) -> str:
    """``$ARGUMENTS`` and ``$1``…``$9`` replaced by what was typed (the prompt's text)."""
    words = _arguments(args)

    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "ARGUMENTS":
            return args
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    return _PLACEHOLDER.sub(value, template)


def shell_fill(template: str, args: str) -> tuple[str, dict[str, str]]:
    """A ``!`` line's placeholders as references to variables holding the arguments, and those variables.

    What the user typed never becomes shell text: ``$1`` becomes ``"${MAIA_ARG_1}"``, expanded by the
    shell as one word, whatever quotes the line's author put around it (inside single quotes it stays
    literal text). An option-like argument (``--output=…``) is still an option to the program: write
    ``--`` (or ``--end-of-options``) before placeholders in ``!`` lines.
    """
    words = _arguments(args)
    env = {"MAIA_ARGUMENTS": args}
    for index in range(9):
        env[f"MAIA_ARG_{index + 1}"] = words[index] if index < len(words) else ""

    out: list[str] = []
    quote = ""  # the quote the scan is inside: "", "'" or '"'
    index = 0
    while index < len(template):
        char = template[index]
        match = _PLACEHOLDER.match(template, index) if char == "$" and quote != "'" else None
        if match is not None:
            name = "MAIA_ARGUMENTS" if match.group(1) == "ARGUMENTS" else f"MAIA_ARG_{match.group(1)}"
            # inside double quotes the expansion is already one word; elsewhere it is quoted to be one
            out.append(f"${{{name}}}" if quote == '"' else f'"${{{name}}}"')
            index = match.end()
            continue
        if char == "\\" and quote != "'" and index + 1 < len(template):
            out.append(template[index : index + 2])
            index += 2
            continue
        if char in "'\"" and quote in ("", char):
            quote = "" if quote == char else char
        out.append(char)
        index += 1
    return "".join(out), env


RunBang = Callable[[str, dict[str, str]], Awaitable[str]]


async def expand(command: CustomCommand, args: str, run_bang: RunBang) -> Expanded:
    """The prompt of ``/name args``: placeholders filled, ``!`` lines run (``run_bang`` gives the text
    that takes their place)."""
    lines: list[str] = []
    ran: list[str] = []
    uses_arguments = bool(_PLACEHOLDER.search(command.body))
    for line in command.body.splitlines():
        if line.startswith("!") and line[1:].strip():
            shell_line, env = shell_fill(line[1:].strip(), args)
            ran.append(shell_line)
            lines.append(await run_bang(shell_line, env))
        else:
            lines.append(fill(line, args))
    prompt = "\n".join(lines).strip()
    if args.strip() and not uses_arguments:
        prompt = f"{prompt}\n\n{args.strip()}"  # arguments with no placeholder: added at the end
    return Expanded(prompt, command.model, command.allowed_tools, tuple(ran))


def help_rows(commands: CommandSet) -> list[tuple[str, str]]:
    """``(/name HINT, description)`` rows for ``/help``."""
    rows: list[tuple[str, str]] = []
    for name, command in sorted(commands.commands.items()):
        hint = f" {command.argument_hint}" if command.argument_hint else ""
        label = _("({source} command)").format(source=command.source)
        rows.append((f"/{name}{hint}", f"{command.description or command.body.splitlines()[0][:60]} {label}"))
    return rows
