"""The JSON schemas MAIA ships (``maia/data/schemas/``) for the files people write: TOOL.json, mcp.json
and the AGENT.md header. MAIA validates with them, with settings.json's "field and fix" wording, and
editors can use them through ``"$schema"`` (``maia/data/schemas/NAME.schema.json`` in the package)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

SCHEMAS = ("tool", "mcp", "agent-header")


def schema_path(name: str) -> Path:
    """Where the installed schema is (what an editor's ``$schema`` can point at)."""
    return Path(str(resources.files("maia.data").joinpath(f"schemas/{name}.schema.json")))


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """A shipped schema, parsed (once)."""
    text = resources.files("maia.data").joinpath(f"schemas/{name}.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_problems(data: Any, name: str, fixes: Mapping[str, str], where: Path | str | None = None) -> list[str]:
    """One sentence per place ``data`` breaks the schema ``name``, naming the field, what is expected and
    the fix; prefixed by ``where`` unless it is None. Empty when the data is valid."""
    import jsonschema

    from maia.core.settings import describe_schema_error

    validator = jsonschema.Draft202012Validator(load_schema(name))
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    mark = "\0"  # a path nobody has: the sentence without its "path: " prefix
    out = []
    for error in errors:
        text = describe_schema_error(error, mark if where is None else where, fixes)
        out.append(text.removeprefix(mark + ": ") if where is None else text)
    return out
