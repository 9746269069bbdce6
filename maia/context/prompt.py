"""Building the system prompt: the packaged base text, the project context or summary, the skills."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from maia.context.memory import ContextFile


@functools.lru_cache(maxsize=1)
def base_prompt() -> str:
    """The packaged English system prompt (``maia/data/system_prompt.md``)."""
    return resources.files("maia").joinpath("data/system_prompt.md").read_text(encoding="utf-8")


def build_system_prompt(
    launch: Path,
    *,
    context: ContextFile | None = None,
    start_context: str | None = None,
    skills: Sequence[tuple[str, str]] = (),
    extra_sections: Sequence[str] = (),
) -> str:
    """Base prompt, then the compacted summary (which replaces MAIA.md) or the project file, then skills."""
    parts = [base_prompt().replace("{cwd}", str(launch)).rstrip()]
    if start_context:
        parts.append("# Starting context: compacted summary of the previous conversation\n\n" + start_context.strip())
    elif context is not None:
        parts.append(f"# Instructions ({context.path})\n\n" + context.text.strip())
    if skills:
        lines = "\n".join(f"- {name}: {description}" for name, description in skills)
        parts.append("# Skills\n\nLoad a skill with the Skill tool when it fits the task:\n" + lines)
    parts.extend(s.strip() for s in extra_sections if s.strip())
    return "\n\n".join(parts) + "\n"
