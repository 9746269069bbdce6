"""MCP answers turned into text for the model (pure; works on the JSON form of the messages).

Text parts are joined; every other part is described in one bracketed line
(``[image/png, 1.2 KB]``); the whole is cut at 100,000 characters (§22).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from maia.i18n import _

MAX_RESULT = 100_000


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool call's text and whether the server flagged it as an error (``isError``)."""

    text: str
    is_error: bool


def human_size(count: int) -> str:
    """``512 B``, ``1.2 KB``, ``3.4 MB``."""
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


def _decoded_size(data: Any) -> int:
    if not isinstance(data, str):
        return 0
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _resource(contents: Mapping[str, Any]) -> str:
    uri = str(contents.get("uri", ""))
    mime = contents.get("mimeType")
    if isinstance(contents.get("text"), str):
        return str(contents["text"])
    size = human_size(_decoded_size(contents.get("blob")))
    label = f"{mime}, {size}" if mime else size
    return _("[resource {uri}: {label}]").format(uri=uri, label=label)


def describe_part(part: Mapping[str, Any]) -> str:
    """One content part as text: its text, or a bracketed description of what it holds."""
    kind = part.get("type")
    if kind == "text":
        return str(part.get("text", ""))
    if kind in ("image", "audio"):
        mime = part.get("mimeType") or kind
        return f"[{mime}, {human_size(_decoded_size(part.get('data')))}]"
    if kind == "resource":
        resource = part.get("resource")
        return _resource(resource) if isinstance(resource, Mapping) else _("[embedded resource]")
    if kind == "resource_link":
        name = part.get("name") or ""
        uri = part.get("uri") or ""
        mime = part.get("mimeType")
        extra = f", {mime}" if mime else ""
        return _("[resource link: {uri} ({name}{extra})]").format(uri=uri, name=name, extra=extra)
    return _("[{kind} content]").format(kind=kind or _("unknown"))


def cut(text: str, limit: int = MAX_RESULT) -> str:
    """Keep the first ``limit`` characters and say how many there were."""
    if len(text) <= limit:
        return text
    notice = _("\n[… cut: {total} characters in total, the first {kept} are shown]").format(total=len(text), kept=limit)
    return text[:limit] + notice


def join_parts(parts: Sequence[Any]) -> str:
    """Text parts joined by line breaks, other parts described."""
    return "\n".join(describe_part(p) for p in parts if isinstance(p, Mapping))


def tool_outcome(result: Mapping[str, Any], limit: int = MAX_RESULT) -> ToolOutcome:
    """A ``tools/call`` result: content joined (``structuredContent`` when there is no content)."""
    content = result.get("content")
    text = join_parts(content) if isinstance(content, list) else ""
    if not text and result.get("structuredContent") is not None:
        text = json.dumps(result["structuredContent"], ensure_ascii=False)
    return ToolOutcome(cut(text, limit), bool(result.get("isError")))


def resource_text(result: Mapping[str, Any], limit: int = MAX_RESULT) -> str:
    """A ``resources/read`` result: text contents joined, binary ones described."""
    contents = result.get("contents")
    parts = [_resource(c) for c in contents if isinstance(c, Mapping)] if isinstance(contents, list) else []
    return cut("\n".join(parts), limit)


def prompt_messages(result: Mapping[str, Any], limit: int = MAX_RESULT) -> list[tuple[str, str]]:
    """A ``prompts/get`` result as (role, text) pairs."""
    messages = result.get("messages")
    out: list[tuple[str, str]] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, Mapping):
            continue
        role = "assistant" if message.get("role") == "assistant" else "user"
        content = message.get("content")
        text = describe_part(content) if isinstance(content, Mapping) else join_parts(content or [])
        out.append((role, cut(text, limit)))
    return out
