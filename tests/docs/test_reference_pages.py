"""Reference tables that must follow the code: variables and files (the man page's lists), settings keys."""

from __future__ import annotations

import re

from maia.commands.manual import ENVIRONMENT, FILES
from maia.core.settings import SETTINGS_SCHEMA
from tests.docs.markdown import DOCS, REPO, code_spans, sections, tables

ENV_PAGE = DOCS / "environment.md"


def _first_column(title: str, page_sections: dict[str, list[str]]) -> list[str]:
    (table, *_rest) = tables(page_sections[title])
    return [row[0] for row in table[1:]]


def _paths(cell: str) -> set[str]:
    return {part.strip().strip("`") for part in cell.split(", ") if part.strip()}


def test_the_variables_are_those_of_the_man_page() -> None:
    cells = _first_column("Variables MAIA reads", sections(ENV_PAGE, 2))
    documented = [span for cell in cells for span in code_spans(cell)]
    assert len(documented) == len(set(documented))
    assert set(documented) == {name for name, _meaning in ENVIRONMENT}


def test_the_files_are_those_of_the_man_page() -> None:
    cells = _first_column("Files", sections(ENV_PAGE, 2))
    documented = set().union(*(_paths(cell) for cell in cells))
    listed = set().union(*(_paths(name) for name, _meaning in FILES))
    assert documented == listed


def test_every_variable_the_code_reads_is_documented() -> None:
    """A MAIA_* name in the code that neither page nor man page knows is a variable nobody can find."""
    used: set[str] = set()
    for path in [*(REPO / "maia").rglob("*.py"), *(REPO / "commands").rglob("*.py")]:
        used.update(re.findall(r"[\"'](MAIA_[A-Z_]+)[\"']", path.read_text(encoding="utf-8")))
    internal = {"MAIA_SANDBOX_FAULT"}  # the sandbox launcher's fault injection, for its own tests
    # set by MAIA for custom tools, hooks and custom commands' ! lines, documented under "Variables MAIA sets"
    set_for_tools = {"MAIA_TOOL_DIR", "MAIA_HOOK_EVENT", "MAIA_PROJECT_DIR", "MAIA_ARGUMENTS"}
    set_for_tools |= {f"MAIA_ARG_{n}" for n in range(1, 10)}
    page = ENV_PAGE.read_text(encoding="utf-8")
    assert {name for name in used - internal if f"`{name}`" not in page} == set()
    assert used - internal - set_for_tools <= {name for name, _meaning in ENVIRONMENT}


def test_getting_started_lists_every_settings_key() -> None:
    page = sections(DOCS / "getting-started.md", 2)["3. Write `~/.maia/settings.json`"]
    keys: set[str] = set()
    for table in tables(page):
        if table[0][0] == "key":
            keys = {span for row in table[1:] for span in code_spans(row[0])}
    assert keys == set(SETTINGS_SCHEMA["properties"])
