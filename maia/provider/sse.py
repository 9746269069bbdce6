"""Pure parsing of LiteLLM's OpenAI-format answers: SSE framing and tool-call assembly (§7.2).

No I/O here: the HTTP layer feeds bytes in and forwards the events out.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from maia.core.contracts import (
    Done,
    ReasoningDelta,
    StopReason,
    StreamEvent,
    TextDelta,
    Thinking,
    ThinkingBlock,
    ToolUse,
    Truncated,
    Usage,
)
from maia.core.errors import ContextTooLong, StreamError

DONE_MARKER = b"[DONE]"
_SIMPLE_EVENTS = re.compile(rb"^data: (.*)\n\n", re.MULTILINE)

# Output sizes at which a server that "repairs" a cut tool call is suspected (§7.2).
SUSPICIOUS_OUTPUT_LIMITS = frozenset(1 << n for n in range(10, 17))

_CONTEXT_TOO_LONG = re.compile(
    r"contextwindowexceeded|prompt is too long|input is too long|context_length_exceeded"
    r"|maximum context length|context length exceeded|exceeds the context window",
    re.IGNORECASE,
)


_raw_decode = json.JSONDecoder().raw_decode  # json.loads' own decoder settings (strict, no hooks)


def _loads(text: str) -> Any:
    """``json.loads(text)``, minus the wrapper's cost on the usual payload: one value filling the text.

    json.loads skips whitespace around the value with two regex calls and wraps the C scanner in
    Python frames, ~0.6 µs per call, a third of what decoding a small chunk costs. A value that does not
    fill the text (whitespace around it, trailing garbage) or does not start it goes to json.loads,
    which decides, so the result and the errors are json.loads' own.
    """
    try:
        value, end = _raw_decode(text)
    except ValueError:
        return json.loads(text)
    if end != len(text):
        return json.loads(text)
    return value


def is_context_too_long(message: str) -> bool:
    """Whether an error message says the request does not fit in the model's context."""
    return bool(_CONTEXT_TOO_LONG.search(message))


class SseDecoder:
    """Splits a byte stream into the payloads of its ``data:`` fields, one per event.

    Linear in the input whatever its shape: a line that arrives in many reads (one 16 MB event) is
    kept as a list of pieces and joined once, when its end arrives.
    """

    __slots__ = ("_data", "_pending")

    def __init__(self) -> None:
        self._pending: list[bytes] = []  # the start of a line whose end has not arrived
        self._data: list[bytes] = []  # the data lines of the event being read

    def feed(self, chunk: bytes) -> list[bytes]:
        """Add bytes; return the payloads of the events they complete."""
        pending = self._pending
        if pending:
            pending.append(chunk)
            if b"\n" not in chunk:
                return []
            buf = b"".join(pending)
            pending.clear()
        else:
            buf = chunk
        out: list[bytes] = []
        if b"\r" in buf:  # CR LF line ends: line by line
            lines = buf.split(b"\n")
            rest = lines.pop()
            self._lines(lines, out)
        else:
            data = self._data
            end = buf.rfind(b"\n\n") + 2
            if not data and end > 1:
                # the usual shape, events of one "data: …" line each, decoded in C: each match holds
                # two of the region's line ends, so equal counts prove every line was such an event
                found = _SIMPLE_EVENTS.findall(buf, 0, end)
                if buf.count(b"\n", 0, end) == 2 * len(found):
                    out.extend(found)
                    buf = buf[end:]
            # events one at a time: a single "data: …" line costs one test, not one per line
            blocks = buf.split(b"\n\n")
            rest = blocks.pop()
            for block in blocks:
                if not data and block.startswith(b"data: ") and b"\n" not in block:
                    out.append(block[6:])
                    continue
                self._lines(block.split(b"\n"), out)
                if data:  # the blank line that ended the block ends the event
                    out.append(data[0] if len(data) == 1 else b"\n".join(data))
                    data.clear()
            if b"\n" in rest:  # complete lines of an event still open
                lines = rest.split(b"\n")
                rest = lines.pop()
                self._lines(lines, out)
        if rest:
            pending.append(rest)
        return out

    def _lines(self, lines: list[bytes], out: list[bytes]) -> None:
        """Complete lines: ``data:`` lines collected, a blank line ends the event."""
        data = self._data
        for line in lines:
            if line.startswith(b"data:"):
                if line.endswith(b"\r"):
                    line = line[:-1]
                data.append(line[6:] if line.startswith(b"data: ") else line[5:])
            elif data and (not line or line == b"\r"):  # a blank line ends the event
                out.append(data[0] if len(data) == 1 else b"\n".join(data))
                data.clear()
            # other fields (event:, id:, retry:) and comments (":") carry nothing MAIA needs

    def close(self) -> list[bytes]:
        """End of input: return the payload of an event left without its blank line."""
        out = self.feed(b"\n\n") if self._pending else self.feed(b"\n") if self._data else []
        self._pending.clear()
        return out


@dataclass(slots=True)
class _Call:
    index: int
    seq: int
    id: str | None
    name: str
    args: list[str] = field(default_factory=list)


def _error_from_payload(error: Any) -> Exception:
    if isinstance(error, dict):
        message = str(error.get("message") or error)
        code = error.get("code")
    else:
        message, code = str(error), None
    if is_context_too_long(message):
        return ContextTooLong(message)
    return StreamError(message, code=None if code is None else str(code))


def map_stop_reason(finish_reason: str | None, has_calls: bool) -> StopReason:
    """Map an OpenAI ``finish_reason`` to MAIA's stop reason (§7.2)."""
    if finish_reason in ("tool_calls", "function_call"):
        return "tool_use"
    if finish_reason == "length":
        return "max_tokens"
    if finish_reason == "stop":
        return "tool_use" if has_calls else "end_turn"
    return "tool_use" if has_calls else "other"


class StreamAssembler:
    """Turns decoded chunks into stream events; tool calls are accumulated and emitted at the end."""

    __slots__ = ("_by_index", "_calls", "_thinking", "finish_reason", "header_cost", "on_call", "usage")

    def __init__(self, header_cost: float | None = None, on_call: Callable[[str], None] | None = None) -> None:
        self.on_call = on_call  # hears each call's name as it arrives (its arguments still to come)
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.header_cost = header_cost
        self._thinking: list[dict[str, Any]] = []  # Anthropic's signed blocks, text and signature accumulated

    def feed_payload(self, payload: bytes) -> list[StreamEvent]:
        """Parse one SSE payload; ``[DONE]`` must be handled by the caller. Invalid JSON is ignored."""
        try:
            # decoding first is what json.loads does with bytes, minus its encoding sniffing (~25% faster)
            chunk = _loads(payload.decode("utf-8", "surrogatepass"))
        except (ValueError, RecursionError):  # RecursionError: a payload nested thousands of levels deep
            return []
        if not isinstance(chunk, dict):
            return []
        try:
            return self.feed(chunk)
        except (AttributeError, TypeError, ValueError, RecursionError):
            # a chunk shaped otherwise than the protocol says (a number where an object goes…): the
            # proxy's text is untrusted; it is ignored like invalid JSON, never a crash
            return []

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        """Process one decoded chunk and return the events it carries."""
        if chunk.get("error"):
            raise _error_from_payload(chunk["error"])
        events: list[StreamEvent] = []
        choices = chunk.get("choices")
        if choices and type(choices) is list:
            for choice in choices:
                if type(choice) is not dict:
                    continue
                delta = choice.get("delta") or choice.get("message")
                if delta and type(delta) is dict:
                    content = delta.get("content")
                    if content and len(delta) == 1 and type(content) is str:
                        events.append(TextDelta(content))  # the usual text delta: no other key to look up
                    else:
                        self._add_delta(delta, content, events)
                finish = choice.get("finish_reason")
                if finish and type(finish) is str:
                    self.finish_reason = finish
        usage = chunk.get("usage")
        if usage and type(usage) is dict:
            self.usage = usage
            events.append(self._usage_event(usage))
        return events

    def _add_delta(self, delta: dict[str, Any], content: Any, events: list[StreamEvent]) -> None:
        """Any delta: reasoning, thinking blocks, text (its ``content`` already read), tool-call fragments."""
        reasoning = delta.get("reasoning_content")
        if reasoning and isinstance(reasoning, str):
            events.append(ReasoningDelta(reasoning))
        blocks = delta.get("thinking_blocks")
        if blocks:
            self._add_thinking(blocks)
        if content and isinstance(content, str):
            events.append(TextDelta(content))
        calls = delta.get("tool_calls")
        if calls and type(calls) is list:
            self._add_fragments(calls)

    def _add_thinking(self, blocks: Any) -> None:
        """``thinking_blocks`` fragments: text pieces, then the signature in a chunk of its own."""
        if not isinstance(blocks, list):
            return
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "redacted_thinking":
                self._thinking.append({"redacted": str(block.get("data", "")), "thinking": "", "signature": None})
                continue
            if not self._thinking or self._thinking[-1].get("signature") or self._thinking[-1].get("redacted"):
                self._thinking.append({"thinking": "", "signature": None, "redacted": None})
            current = self._thinking[-1]
            text = block.get("thinking")
            if isinstance(text, str):
                current["thinking"] += text
            signature = block.get("signature") or block.get("signature_delta")
            if isinstance(signature, str) and signature:
                current["signature"] = signature

    def thinking_events(self) -> list[StreamEvent]:
        """The signed reasoning blocks of the answer (unsigned ones cannot be sent back: dropped)."""
        return [
            Thinking(ThinkingBlock(b["thinking"], b.get("signature"), b.get("redacted")))
            for b in self._thinking
            if b.get("signature") or b.get("redacted")
        ]

    def _usage_event(self, usage: dict[str, Any]) -> Usage:
        details = usage.get("completion_tokens_details") or {}
        reasoning = int(details.get("reasoning_tokens") or 0)
        output = int(usage.get("completion_tokens") or 0)
        # the proxy's own cost header wins; Anthropic-format upstreams also put a cost in usage
        cost = self.header_cost if self.header_cost is not None else usage.get("cost")
        if not isinstance(cost, int | float):
            cost = None
        return Usage(
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=max(0, output - reasoning),
            reasoning_tokens=reasoning,
            cost=None if cost is None else float(cost),
        )

    def _add_fragments(self, fragments: Any) -> None:
        """A delta's ``tool_calls``: fragments of calls, accumulated by index."""
        by_index = self._by_index
        for position, fragment in enumerate(fragments):
            if type(fragment) is not dict:
                continue
            index = fragment.get("index")
            function = fragment.get("function")
            # the usual fragment: more arguments for the call open on its (integer) index, no id, no
            # name, which the general path would only append; any other (a missing, null, bool or float
            # index, an id, a name, an index not seen yet) goes to the general path
            if type(index) is int and type(function) is dict and not fragment.get("id") and not function.get("name"):
                call = by_index.get(index)
                if call is not None:
                    args = function.get("arguments")
                    if args:
                        call.args.append(args if isinstance(args, str) else json.dumps(args))
                    continue
            self._add_fragment(fragment, position)

    def _add_fragment(self, fragment: dict[str, Any], position: int) -> None:
        index = fragment.get("index")
        call_id = fragment.get("id") or None
        if call_id is not None and not isinstance(call_id, str):
            call_id = str(call_id)
        function = fragment.get("function") or {}
        if not isinstance(function, dict):
            function = {}
        name = function.get("name") or ""
        if not isinstance(name, str):
            name = ""
        args = function.get("arguments")
        if not isinstance(index, int):
            index = position
        call = self._by_index.get(index)
        if call is None:
            if call_id is None and not name and self._calls:
                # a bare arguments fragment on an unknown index continues the previous call
                call = self._calls[-1]
            else:
                call = self._new_call(index, call_id, name)
        elif call_id is not None and call.id is not None and call_id != call.id:
            # a new id on an index already used opens a new call
            call = self._new_call(index, call_id, name)
        else:
            if call_id is not None and call.id is None:
                call.id = call_id
            if name and name != call.name:
                call.name += name
                self._announce(call.name)
        if args:
            call.args.append(args if isinstance(args, str) else json.dumps(args))

    def _new_call(self, index: int, call_id: str | None, name: str) -> _Call:
        call = _Call(index=index, seq=len(self._calls), id=call_id, name=name)
        self._calls.append(call)
        self._by_index[index] = call
        if name:
            self._announce(name)
        return call

    def _announce(self, name: str) -> None:
        if self.on_call is not None:
            with contextlib.suppress(Exception):  # a listener's failure never breaks the answer being read
                self.on_call(name)

    @property
    def has_calls(self) -> bool:
        """Whether any tool call fragment arrived."""
        return bool(self._calls)

    def finish(self) -> list[StreamEvent]:
        """The end-of-answer events: signed reasoning, the tool calls sorted by index, a truncation warning, Done."""
        events: list[StreamEvent] = self.thinking_events()
        ordered = sorted(self._calls, key=lambda c: (c.index, c.seq))
        used_ids = {c.id for c in ordered if c.id}
        for n, call in enumerate(ordered):
            call_id = call.id
            if not call_id:
                call_id = f"call_{n}"
                while call_id in used_ids:
                    call_id += "_"
                used_ids.add(call_id)
            raw = "".join(call.args)
            parsed, valid = parse_arguments(raw)
            events.append(ToolUse(call_id, call.name, parsed, raw, valid))
        output_tokens = None
        if self.usage is not None:
            output_tokens = int(self.usage.get("completion_tokens") or 0)
        if self.finish_reason == "length":
            events.append(Truncated("length", output_tokens))
        elif ordered and output_tokens in SUSPICIOUS_OUTPUT_LIMITS:
            events.append(Truncated("suspicious_limit", output_tokens))
        events.append(Done(map_stop_reason(self.finish_reason, bool(ordered))))
        return events


def parse_arguments(raw: str) -> tuple[dict[str, Any], bool]:
    """Tool-call arguments as an object; invalid JSON (or not an object) gives ``{}``, flagged invalid."""
    if not raw.strip():
        return {}, True
    try:
        value = json.loads(raw)
    except ValueError:
        return {}, False
    if isinstance(value, dict):
        return value, True
    return {}, False


def parse_stream(data: bytes) -> tuple[list[StreamEvent], bool]:
    """Parse a whole SSE body; returns the events and whether ``[DONE]`` was seen (for tests, benches)."""
    decoder = SseDecoder()
    assembler = StreamAssembler()
    events: list[StreamEvent] = []
    for payload in [*decoder.feed(data), *decoder.close()]:
        if payload == DONE_MARKER:
            events.extend(assembler.finish())
            return events, True
        events.extend(assembler.feed_payload(payload))
    return events, False


def parse_completion(body: dict[str, Any]) -> list[StreamEvent]:
    """Events of a non-streaming ``chat.completion`` answer (a proxy that ignored ``stream``)."""
    if body.get("error"):
        raise _error_from_payload(body["error"])
    assembler = StreamAssembler()
    events: list[StreamEvent] = []
    chunk: dict[str, Any] = {"choices": [], "usage": body.get("usage")}
    for choice in body.get("choices") or []:
        message = dict(choice.get("message") or {})
        calls = message.get("tool_calls") or []
        message["tool_calls"] = [{**c, "index": i} for i, c in enumerate(calls)]
        chunk["choices"].append({"delta": message, "finish_reason": choice.get("finish_reason")})
    events.extend(assembler.feed(chunk))
    events.extend(assembler.finish())
    return events
