"""SSE parsing + tool-call assembly of a 10,000-chunk stream vs bare iteration over the same bytes.

Two references, measured in the same run:
- "lines": splitting the body into lines and picking the ``data:`` ones (no JSON);
- "lines+json": the same plus ``json.loads`` of each payload, the least any client must do.
Run: ``.venv/bin/python bench/sse.py [runs]``.
"""

from __future__ import annotations

import json
import sys

from common import report, time_call

from maia.provider.sse import SseDecoder, StreamAssembler, parse_stream


def make_stream(chunks: int = 10_000) -> bytes:
    """A realistic body: text deltas, then one tool call whose arguments arrive in small fragments."""
    lines = []
    text_chunks = chunks // 2
    for n in range(text_chunks):
        delta = {"content": f"word{n} "}
        lines.append({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]})
    lines.append(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "Write", "arguments": ""},
                            }
                        ]
                    },
                }
            ]
        }
    )
    args = json.dumps({"path": "a.py", "content": "x = 1\n" * (chunks - text_chunks)})
    step = max(1, len(args) // (chunks - text_chunks - 3))
    for i in range(0, len(args), step):
        frag = {"index": 0, "type": "function", "function": {"arguments": args[i : i + step]}}
        lines.append({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [frag]}}]})
    lines.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    lines.append({"choices": [{"index": 0, "delta": {}}], "usage": {"prompt_tokens": 1, "completion_tokens": 2}})
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in lines)
    return body + b"data: [DONE]\n\n"


def bare_lines(data: bytes) -> int:
    """Reference: line iteration only."""
    count = 0
    for line in data.split(b"\n"):
        if line.startswith(b"data: "):
            count += 1
    return count


def bare_lines_json(data: bytes) -> int:
    """Reference: line iteration and JSON decoding of each payload."""
    count = 0
    for line in data.split(b"\n"):
        if line.startswith(b"data: ") and line != b"data: [DONE]":
            json.loads(line[6:])
            count += 1
    return count


def maia_incremental(data: bytes, size: int = 4096) -> int:
    """MAIA as the provider runs it: 4 KB network reads fed to the decoder and the assembler."""
    decoder, assembler = SseDecoder(), StreamAssembler()
    events = 0
    for i in range(0, len(data), size):
        for payload in decoder.feed(data[i : i + size]):
            if payload == b"[DONE]":
                events += len(assembler.finish())
            else:
                events += len(assembler.feed_payload(payload))
    return events


def main() -> None:
    """Measure and print the medians and ratios."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    data = make_stream()
    events, done = parse_stream(data)
    assert done and events, "the benchmark stream must parse completely"
    lines = time_call(lambda: bare_lines(data), runs)
    lines_json = time_call(lambda: bare_lines_json(data), runs)
    whole = time_call(lambda: parse_stream(data), runs)
    incremental = time_call(lambda: maia_incremental(data), runs)
    print(f"stream: {len(data):,} bytes, {data.count(b'data: '):,} events")
    report(
        f"SSE parse + assembly, median of {runs} runs",
        [
            ("parse_stream vs lines+json", whole, lines_json, 1.3),
            ("4 KB reads vs lines+json", incremental, lines_json, 1.3),
            ("parse_stream vs lines (no JSON)", whole, lines, 1.3),
        ],
    )


if __name__ == "__main__":
    main()
