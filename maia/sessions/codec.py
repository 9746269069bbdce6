"""The session file format (§12.1) in one place: content blocks, messages and sessions ⇄ JSON.

Keys are camelCase as in the spec's session files. Reading is tolerant (missing fields get
defaults, snake_case spellings are accepted); anything that cannot be a session is a ValueError
whose text says what is wrong, for the caller to put in front of the file name.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from maia.core.contracts import ContentBlock, Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from maia.i18n import _
from maia.sessions.summary import ORIGINS as ORIGINS  # the codec's names too, as before they moved
from maia.sessions.summary import SUMMARY_HEAD as SUMMARY_HEAD
from maia.sessions.summary import Origin as Origin
from maia.sessions.summary import read_summary as read_summary

FORMAT_VERSION = 1


# --- blocks and messages ---------------------------------------------------------------------


def block_to_dict(block: ContentBlock) -> dict[str, Any]:
    """A content block's JSON form."""
    if isinstance(block, TextBlock):
        if block.typed is not None:
            return {"type": "text", "text": block.text, "typed": block.typed}
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        data: dict[str, Any] = {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
        if block.raw_arguments is not None:
            data["rawArguments"] = block.raw_arguments
        return data
    if isinstance(block, ThinkingBlock):
        thinking: dict[str, Any] = {"type": "thinking", "thinking": block.thinking}
        if block.signature is not None:
            thinking["signature"] = block.signature
        if block.redacted is not None:
            thinking["redacted"] = block.redacted
        return thinking
    result: dict[str, Any] = {"type": "tool_result", "toolUseId": block.tool_use_id, "content": block.content}
    if block.is_error:
        result["isError"] = True
    return result


def message_to_dict(message: Message) -> dict[str, Any]:
    """A message's JSON form."""
    return {"role": message.role, "content": [block_to_dict(b) for b in message.content]}


def block_from_dict(data: Any) -> ContentBlock:
    """A content block from its JSON form."""
    if not isinstance(data, dict):
        raise ValueError("a content block must be an object")
    kind = data.get("type")
    if kind == "text":
        typed = data.get("typed")
        return TextBlock(str(data.get("text", "")), typed=typed if isinstance(typed, str) else None)
    if kind == "tool_use":
        inp = data.get("input")
        raw = data.get("rawArguments")
        return ToolUseBlock(
            str(data.get("id", "")),
            str(data.get("name", "")),
            inp if isinstance(inp, dict) else {},
            raw if isinstance(raw, str) else None,
        )
    if kind == "tool_result":
        return ToolResultBlock(
            str(data.get("toolUseId", data.get("tool_use_id", ""))),
            str(data.get("content", "")),
            bool(data.get("isError", data.get("is_error", False))),
        )
    if kind == "thinking":
        signature, redacted = data.get("signature"), data.get("redacted")
        return ThinkingBlock(
            str(data.get("thinking", "")),
            signature if isinstance(signature, str) else None,
            redacted if isinstance(redacted, str) else None,
        )
    raise ValueError(f"unknown content block type {kind!r}")


def message_from_dict(data: Any) -> Message:
    """A message from its JSON form (a string content is one text block)."""
    if not isinstance(data, dict) or data.get("role") not in ("user", "assistant"):
        raise ValueError("a message needs a role user or assistant")
    content = data.get("content", [])
    if isinstance(content, str):
        blocks: list[ContentBlock] = [TextBlock(content)]
    elif isinstance(content, list):
        blocks = [block_from_dict(b) for b in content]
    else:
        raise ValueError("a message's content must be a list")
    return Message(data["role"], blocks)


# the end of what MAIA attached before the user's words, in files written before ``typed`` was kept
_LEGACY_ENDS = ("</file>\n\n", "</folder>\n\n", "</stdin>\n\n")


def typed_text(block: TextBlock) -> str:
    """What the user typed for a user text block: ``typed`` when recorded, else the text without the attached
    files, piped input or command output an older MAIA put before it."""
    if block.typed is not None:
        return block.typed
    text = block.text
    end = max((text.rfind(mark) + len(mark) for mark in _LEGACY_ENDS if mark in text), default=-1)
    if end > 0:
        return text[end:]
    if text.startswith("The user ran a shell command") and "\n\n" in text:
        return text.rsplit("\n\n", 1)[1]
    return text


def user_words(message: Message) -> str:
    """A user message's text as the user typed it (attached context left out)."""
    return "".join(typed_text(b) for b in message.content if isinstance(b, TextBlock))


# --- sessions --------------------------------------------------------------------------------


@dataclass(slots=True)
class SavedSession:
    """The content of a session file (§12.1, plus ``version``, the owner ``id`` and the ``origin``)."""

    name: str
    model: str = ""
    launch: str = ""  # the file's "cwd"
    messages: list[Message] = field(default_factory=list)
    pending_context: list[str] = field(default_factory=list)
    start_context: str | None = None
    created_at: str = ""
    updated_at: str = ""
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    agent: str | None = None
    parent_session: str | None = None
    origin: Origin = "chat"
    cleared: bool = False  # the user ran /clear on it: kept for /load, skipped by --continue
    seal: str | None = None  # as read from the file (see maia.sessions.seal); never part of the digest

    @property
    def empty(self) -> bool:
        """Never saved: no message and no starting context."""
        return not self.messages and not self.start_context

    def to_json(self) -> dict[str, Any]:
        """The file's JSON object."""
        data: dict[str, Any] = {
            "version": FORMAT_VERSION,
            "id": self.id,
            "name": self.name,
            "origin": self.origin,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "model": self.model,
            "cwd": self.launch,
            "messages": [message_to_dict(m) for m in self.messages],
            "pendingContext": list(self.pending_context),
        }
        if self.start_context:
            data["startContext"] = self.start_context
        if self.agent:
            data["agent"] = self.agent
        if self.parent_session:
            data["parentSession"] = self.parent_session
        if self.cleared:
            data["cleared"] = True
        return data

    def digest(self) -> str:
        """What changes when the conversation changes (timestamps left out)."""
        return encode_session(self).digest


@dataclass(frozen=True, slots=True)
class EncodedSession:
    """A session serialised once: its digest (what a save compares) and the text a save writes.

    ``body`` is the file's JSON object without ``updatedAt`` (the digest covers it); the file puts a
    small ``summary`` object first, so a listing reads only the head of each file (``read_summary``).
    """

    name: str
    created_at: str
    digest: str
    body: bytes  # UTF-8

    def file_pieces(self, updated_at: str, summary: Mapping[str, Any]) -> list[bytes | memoryview]:
        """The file's text in pieces: ``{"summary":{…},"updatedAt":…,`` then the body's keys (see
        :func:`maia.core.storage.write_atomic`: never joined, the body is never copied)."""
        # ASCII escapes in the small head: a lone surrogate in a first prompt cannot break the save
        head = json.dumps({**summary, "updatedAt": updated_at}, separators=(",", ":"))
        body = memoryview(self.body)[1:]  # without its "{": a view, not a copy
        return [f'{{"summary":{head},"updatedAt":{json.dumps(updated_at)},'.encode(), body, b"\n"]

    def file_text(self, updated_at: str, summary: Mapping[str, Any]) -> str:
        """The file's text, whole."""
        return b"".join(self.file_pieces(updated_at, summary)).decode("utf-8")


def encode_session(session: SavedSession) -> EncodedSession:
    """Serialise a session once (compact JSON) and digest it."""
    data = session.to_json()
    data.pop("updatedAt")
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        body = text.encode("utf-8")
    except UnicodeEncodeError:
        # a lone surrogate (from a model, a tool, a server) has no UTF-8 form: JSON's \u escapes keep it
        text = json.dumps(data, separators=(",", ":"))
        body = text.encode("ascii")
    # the text itself is the digest: comparing two strings costs less than hashing one
    return EncodedSession(session.name, session.created_at, text, body)


def dump_session(session: SavedSession, summary: Mapping[str, Any] | None = None) -> str:
    """The file's text: compact JSON, so a 5 MB session is written in one go."""
    return encode_session(session).file_text(session.updated_at, summary or {})


def _origin(data: dict[str, Any]) -> Origin:
    value = data.get("origin")
    if value in ORIGINS:
        return value  # type: ignore[no-any-return]
    # files written before the origin was recorded: a trace is a sub-agent's, anything else the chat's
    return "subagent" if data.get("agent") else "chat"


def parse_session(text: str, name: str) -> SavedSession:
    """A session from a file's text; the file name is the name; missing fields get defaults."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            _("invalid JSON at line {line}, column {col}").format(line=error.lineno, col=error.colno)
        ) from None
    if not isinstance(data, dict):
        raise ValueError(_("not a session (the file must hold a JSON object)"))
    version = data.get("version", FORMAT_VERSION)
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise ValueError(
            _("written by a newer MAIA (format {version}); update MAIA to read it").format(version=version)
        )
    messages = data.get("messages", [])
    if not isinstance(messages, list):
        raise ValueError(_('"messages" must be a list'))
    try:
        parsed = [message_from_dict(m) for m in messages]
    except ValueError as error:
        raise ValueError(_("a message is malformed: {error}").format(error=error)) from None
    pending = data.get("pendingContext", [])
    start = data.get("startContext")
    summary = data.get("summary")
    seal = summary.get("seal") if isinstance(summary, dict) else None
    return SavedSession(
        name=name,
        model=str(data.get("model") or ""),
        launch=str(data.get("cwd") or ""),
        messages=parsed,
        pending_context=[str(p) for p in pending] if isinstance(pending, list) else [],
        start_context=str(start) if isinstance(start, str) and start else None,
        created_at=str(data.get("createdAt") or ""),
        updated_at=str(data.get("updatedAt") or ""),
        id=str(data.get("id") or uuid.uuid4().hex),
        agent=str(data["agent"]) if data.get("agent") else None,
        parent_session=str(data["parentSession"]) if data.get("parentSession") else None,
        origin=_origin(data),
        cleared=data.get("cleared") is True,
        seal=seal if isinstance(seal, str) else None,
    )
