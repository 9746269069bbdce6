"""The JSON schemas MAIA ships (``maia/data/schemas/``) for the files people write: TOOL.json, mcp.json
and the AGENT.md header. MAIA validates with them, with settings.json's "field and fix" wording, and
editors can use them through ``"$schema"`` (``maia/data/schemas/NAME.schema.json`` in the package)."""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from maia.i18n import _

SCHEMAS = ("tool", "mcp", "agent-header")

FieldPath = tuple[str | int, ...]


def schema_path(name: str) -> Path:
    """Where the installed schema is (what an editor's ``$schema`` can point at)."""
    return Path(str(resources.files("maia.data").joinpath(f"schemas/{name}.schema.json")))


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """A shipped schema, parsed (once)."""
    text = resources.files("maia.data").joinpath(f"schemas/{name}.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """One place the data breaks its schema: the field (a path inside the data) and the sentence to show."""

    path: FieldPath
    message: str
    keyword: str = ""  # the schema keyword broken: "type", "enum", "required", "additionalProperties", …

    @property
    def field(self) -> str | int | None:
        """The first step of the path (the top-level field), None for the data itself."""
        return self.path[0] if self.path else None


class _Fixes(Mapping[str, str]):
    """The fix table seen from the file: a field's fix is its own, else its nearest ancestor's; the keys
    are paths inside the data, the lookups come with the data's place in the file (``under``) in front."""

    def __init__(self, fixes: Mapping[str, str], under: Sequence[str | int]) -> None:
        self._fixes = fixes
        self._prefix = ".".join(str(p) for p in under if not isinstance(p, int))

    def __getitem__(self, key: str) -> str:
        if self._prefix:
            if key != self._prefix and not key.startswith(self._prefix + "."):
                raise KeyError(key)
            key = key[len(self._prefix) + 1 :]
        parts = key.split(".") if key else []
        while True:
            joined = ".".join(parts)
            if joined in self._fixes:
                return self._fixes[joined]
            if not parts:
                raise KeyError(key)
            parts.pop()

    def __iter__(self) -> Iterator[str]:
        return iter(self._fixes)

    def __len__(self) -> int:
        return len(self._fixes)


def schema_errors(
    data: Any,
    name: str,
    fixes: Mapping[str, str],
    where: Path | str | None = None,
    *,
    under: Sequence[str] = (),
) -> list[SchemaProblem]:
    """Every place ``data`` breaks the schema ``name``, each with a sentence naming the field, what is
    expected and the fix (prefixed by ``where`` unless it is None).

    ``under`` is where ``data`` sits in the file (``("mcpServers", "docs")`` for one server): the sentences
    name the field from the file's top, the returned paths and the keys of ``fixes`` start at ``data``.
    An unknown field (``additionalProperties: false``) is one problem per field, its path ending with it.
    """
    from maia.core.settings import describe_schema_error, surely_valid

    wrapped = data
    for key in reversed(under):
        wrapped = {key: wrapped}
    schema = load_schema(name)
    if surely_valid(schema, wrapped) is True:
        return []  # valid for sure: jsonschema (a costly import before a first request) is not needed
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    table = _Fixes(fixes, under)
    mark = "\0"  # a path nobody has: the sentence without its "path: " prefix
    prefix = mark if where is None else where
    found: list[SchemaProblem] = []
    for error in validator.iter_errors(wrapped):
        full = tuple(error.absolute_path)
        if full[: len(under)] != tuple(under):
            continue  # about the wrapping, not the data (e.g. a server name: the loader checks it)
        relative = full[len(under) :]
        if error.validator == "additionalProperties" and error.validator_value is False:
            known = sorted(error.schema.get("properties", {}))
            for extra in sorted(k for k in error.instance if k not in error.schema.get("properties", {})):
                field = ".".join(str(p) for p in (*full, extra))
                close = difflib.get_close_matches(str(extra), known, n=1)
                own = ".".join(str(p) for p in (*relative, extra) if not isinstance(p, int))
                fix = fixes.get(own) or (
                    _('rename it "{key}", or remove it').format(key=close[0])
                    if close
                    else _("remove it, or use one of {known}").format(known=", ".join(known))
                )
                text = _('{path}: "{field}" is not a known field; fix: {fix}.').format(
                    path=prefix, field=field, fix=fix
                )
                found.append(SchemaProblem((*relative, extra), text, "additionalProperties"))
            continue
        text = describe_schema_error(error, prefix, table)
        found.append(SchemaProblem(relative, text, str(error.validator)))
    if where is None:
        found = [SchemaProblem(p.path, p.message.removeprefix(mark + ": "), p.keyword) for p in found]
    return sorted(found, key=lambda p: (list(map(str, p.path)), p.message))


def schema_problems(data: Any, name: str, fixes: Mapping[str, str], where: Path | str | None = None) -> list[str]:
    """One sentence per place ``data`` breaks the schema ``name``, naming the field, what is expected and
    the fix; prefixed by ``where`` unless it is None. Empty when the data is valid."""
    return [p.message for p in schema_errors(data, name, fixes, where)]
