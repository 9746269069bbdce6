"""SSE parsing + tool-call assembly vs bare iteration over the same bytes, timed in the same rounds.

A 10,000-chunk stream, with three references:
- "lines": splitting the body into lines and picking the ``data:`` ones (no JSON);
- "lines+json": the same plus ``json.loads`` of each payload, the least any client must do (the target);
- "httpx lines+json": httpx's own line decoder fed 4 KB reads, plus ``json.loads`` (what a client
  built on ``aiter_lines`` does).
One 16 MB event (a huge tool-call argument) arriving in 4 KB reads, against collecting the same reads
(list + join), and collecting + ``json.loads`` of the event and of the call's arguments (what a
client must do to use the call): the cost must stay linear.
Run: ``.venv/bin/python bench/sse.py [runs]``.
"""

from __future__ import annotations

import codecs
import json
import sys

from common import interleaved, report, rounds
from httpx._decoders import LineDecoder

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


def httpx_lines_json(data: bytes, size: int = 4096) -> int:
    """Reference: 4 KB reads through httpx's text and line decoders, JSON-decoding each payload."""
    text, lines = codecs.getincrementaldecoder("utf-8")(), LineDecoder()
    count = 0
    for i in range(0, len(data), size):
        for line in lines.decode(text.decode(data[i : i + size])):
            if line.startswith("data: ") and line != "data: [DONE]":
                json.loads(line[6:])
                count += 1
    return count


def big_event(megabytes: int = 16) -> bytes:
    """One event carrying a tool call whose arguments are ``megabytes`` MB, then the end of the stream."""
    content = "x = 1;" * (megabytes * 1024 * 1024 // 6)
    call = {"index": 0, "id": "call_big", "type": "function", "function": {"name": "Write", "arguments": ""}}
    call["function"]["arguments"] = json.dumps({"path": "big.py", "content": content})
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": "tool_calls"}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"


def collect(data: bytes, size: int = 4096) -> int:
    """Reference: gather 4 KB reads into one bytes object."""
    parts = [data[i : i + size] for i in range(0, len(data), size)]
    return len(b"".join(parts))


def collect_json(data: bytes, size: int = 4096) -> int:
    """Reference: gather the reads, decode the event's JSON, then the call's arguments (JSON in a string).

    That is the least a client must do to use the tool call.
    """
    body = b"".join(data[i : i + size] for i in range(0, len(data), size))
    event = json.loads(body[6 : body.index(b"\n")])
    return len(json.loads(event["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]))


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
    runs = rounds(sys.argv[1:], 20, __doc__)
    data = make_stream()
    events, done = parse_stream(data)
    assert done and events, "the benchmark stream must parse completely"
    times = interleaved(
        {
            "lines": lambda: bare_lines(data),
            "lines+json": lambda: bare_lines_json(data),
            "httpx": lambda: httpx_lines_json(data),
            "whole": lambda: parse_stream(data),
            "incremental": lambda: maia_incremental(data),
        },
        runs,
    )
    print(f"stream: {len(data):,} bytes, {data.count(b'data: '):,} events")
    big = big_event()
    assert maia_incremental(big) == 2, "the big event must give its tool call and Done"
    big_times = interleaved(
        {
            "collect": lambda: collect(big),
            "collect+json": lambda: collect_json(big),
            "maia": lambda: maia_incremental(big),
        },
        max(3, runs // 4),
    )
    value = {k: v for k, v in times.items() if v is not None}
    report(
        f"SSE parse + assembly, median of {runs} runs",
        [
            ("parse_stream vs lines+json", value["whole"], times["lines+json"], 1.3),
            ("4 KB reads vs lines+json", value["incremental"], times["lines+json"], 1.3),
            ("4 KB reads vs httpx lines+json (4 KB reads)", value["incremental"], times["httpx"], 1.3),
            ("parse_stream vs lines (no JSON)", value["whole"], times["lines"], None),
        ],
    )
    maia_big = big_times["maia"]
    assert maia_big is not None
    report(
        f"one {len(big) / 1e6:.0f} MB event in 4 KB reads, median of {max(3, runs // 4)} runs",
        [
            ("decoder + assembler vs collect+json (event, arguments)", maia_big, big_times["collect+json"], 1.3),
            ("decoder + assembler vs collecting only (no JSON)", maia_big, big_times["collect"], None),
        ],
    )


if __name__ == "__main__":
    main()
