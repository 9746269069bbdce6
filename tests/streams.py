"""Building LiteLLM-format SSE bodies for tests that need answers the captures do not have."""

from __future__ import annotations

import json
from typing import Any


def sse(*chunks: dict[str, Any]) -> bytes:
    """Chunks as ``data:`` events, then ``[DONE]``."""
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def text_stream(text: str, usage: tuple[int, int] | None = None) -> bytes:
    """A text answer (with a usage chunk when ``usage`` is given)."""
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"content": text}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    if usage:
        chunks.append(
            {
                "choices": [{"index": 0, "delta": {}}],
                "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
            }
        )
    return sse(*chunks)


def tool_stream(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> bytes:
    """An answer asking for one tool call."""
    return sse(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(arguments)},
                            }
                        ]
                    },
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )
