"""Creating a sub-agent from the commented template (§20.1b): never overwrites anything."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from importlib import resources
from pathlib import Path

from maia.core.errors import UsageError
from maia.i18n import _
from maia.subagents.definitions import Scope, name_problem

_NAME_LINE = re.compile(r"^name[ \t]*:.*$", re.IGNORECASE | re.MULTILINE)


def template_text() -> str:
    """The packaged AGENT.md template (a valid definition as it is)."""
    return resources.files("maia.subagents").joinpath("data/AGENT.md").read_text(encoding="utf-8")


def validate_agent_name(name: str) -> str:
    """The name, stripped; a UsageError saying what is wrong with it."""
    name = name.strip()
    problem = name_problem(name)
    if problem is not None:
        raise UsageError(_("Invalid agent name: {problem}.").format(problem=problem))
    return name


def _yaml_name(name: str) -> str:
    """The name as a YAML value that reads back as this exact text (``1.50``, ``yes`` are quoted)."""
    import yaml

    if yaml.safe_load(f"name: {name}") == {"name": name}:
        return name
    return f'"{name}"'


def apply_agent_name(template: str, name: str) -> str:
    """Replace only the header's ``name:`` line (comments and body untouched)."""
    lines = template.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise ValueError("the template has no YAML header")
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            break
        if _NAME_LINE.match(lines[index].rstrip("\r\n")):
            ending = lines[index][len(lines[index].rstrip("\r\n")) :]
            lines[index] = f"name: {_yaml_name(name)}{ending}"
            return "".join(lines)
    raise ValueError("the template's header has no name: line")


def agents_folder(scope: Scope, launch: Path, home: Path) -> Path:
    """``./.maia/agents`` (project) or ``~/.maia/agents`` (global)."""
    return launch / ".maia" / "agents" if scope == "project" else home / "agents"


def create_agent(folder: Path, name: str) -> Path:
    """Write ``<folder>/<name>/AGENT.md`` from the template; UsageError if it exists or the name is bad.

    The file appears complete or not at all: it is written aside, then linked into place, which
    fails if a file of that name exists (no check-then-write race, nothing overwritten).
    """
    name = validate_agent_name(name)
    target_dir = folder / name
    target = target_dir / "AGENT.md"
    existing = next((p for p in (target, target_dir / "agent.md") if p.exists()), None)
    if existing is not None:
        raise UsageError(_("The agent {name!r} already exists: {path}").format(name=name, path=existing))
    text = apply_agent_name(template_text(), name)
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        _write_new(target, text)
    except FileExistsError:
        raise UsageError(_("The agent {name!r} already exists: {path}").format(name=name, path=target)) from None
    except OSError as error:
        raise UsageError(_("Cannot create {path}: {error}").format(path=target, error=error.strerror)) from None
    return target


def _write_new(target: Path, text: str) -> None:
    fd, temp = tempfile.mkstemp(prefix=".AGENT.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, target)  # fails with FileExistsError when the file exists
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: exclusive create instead
            with open(target, "x", encoding="utf-8") as handle:
                handle.write(text)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
