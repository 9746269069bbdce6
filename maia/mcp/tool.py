"""An MCP server's tool as a MAIA :class:`~maia.core.contracts.Tool`: ``mcp__<server>__<tool>``, ask by default."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maia.core.contracts import Permission, ToolContext, ToolSpec, ToolTraits
from maia.permissions.subject import Subject, default_subject

MAX_DESCRIPTION = 2048  # a server's description is untrusted text sent with every request
_PERMISSIVE: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """A tool as the server lists it, with its public name."""

    server: str
    name: str  # the server's own name, sent back in tools/call
    public_name: str  # mcp__<server>__<tool>
    description: str
    input_schema: Mapping[str, Any]


def checked_schema(raw: Any) -> tuple[dict[str, Any], str | None]:
    """The server's input schema if it is a valid JSON Schema object, else a permissive one and why."""
    if not isinstance(raw, dict):
        return dict(_PERMISSIVE), "not an object"
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(raw)
    except jsonschema.SchemaError as error:
        return dict(_PERMISSIVE), error.message
    schema = dict(raw)
    if schema.get("type") is None:
        schema["type"] = "object"
    if schema.get("type") != "object":
        return dict(_PERMISSIVE), "its type is not object"
    return schema, None


def short_description(text: str | None) -> str:
    """The description, cut at 2048 characters."""
    text = (text or "").strip()
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


class McpTool:
    """Calls go through the source, which reconnects a lost server once before giving up."""

    # nothing is known of what a server's tool does: it may write or run anything
    traits: ToolTraits = ToolTraits()

    def __init__(self, remote: RemoteTool, call: Callable[[RemoteTool, dict[str, Any]], Awaitable[str]]) -> None:
        self.remote = remote
        self._call = call

    @property
    def spec(self) -> ToolSpec:
        """The public name, the server's description and input schema."""
        description = self.remote.description or f"Tool {self.remote.name} of the MCP server {self.remote.server}."
        return ToolSpec(self.remote.public_name, description, self.remote.input_schema)

    @property
    def permission(self) -> Permission:
        """MCP tools ask unless a rule says otherwise (``Mcp(server[,tool])``)."""
        return "ask"

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """``Mcp(server[,tool])`` rules, and rules named after the tool, matching its values."""
        return default_subject(self.remote.public_name, tool_input)

    def describe(self, tool_input: Mapping[str, Any]) -> str:
        """The arguments as compact JSON (cut at 200 characters)."""
        text = json.dumps(dict(tool_input), ensure_ascii=False, separators=(", ", ": "), default=str)
        if text == "{}":
            return ""
        return text if len(text) <= 200 else text[:199] + "…"

    def lock_key(self, tool_input: Mapping[str, Any], launch: Path) -> str | None:
        """Calls to MCP tools may run in parallel."""
        return None

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Call the tool on its server; an ``isError`` result or a lost server raises a ToolError."""
        return await self._call(self.remote, dict(tool_input))
