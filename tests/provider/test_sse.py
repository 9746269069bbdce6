"""The pure SSE parser and tool-call assembler against every capture and each §7.2 tolerance."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from maia.core.contracts import Done, ReasoningDelta, StreamEvent, TextDelta, ToolUse, Truncated, Usage
from maia.core.errors import ContextTooLong, StreamError
from maia.provider.sse import (
    SseDecoder,
    StreamAssembler,
    _loads,
    map_stop_reason,
    parse_completion,
    parse_stream,
)
from tests.conftest import FIXTURES, fixture_bytes, fixture_meta

STREAMS = sorted(p.name for p in FIXTURES.glob("*.sse") if fixture_meta(p.stem)["status"] == 200)
MOCK_TEXT = "Hello from LiteLLM mock_response."


def _kinds(events: list[StreamEvent]) -> list[str]:
    return [type(e).__name__ for e in events]


def _text(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def _expected_text(meta: dict[str, Any]) -> str:
    if meta["model"] == "mock-litellm":
        return MOCK_TEXT  # LiteLLM's own mock_response, not the scripted upstream
    return str(meta["script_turn"].get("text", ""))


@pytest.mark.parametrize("name", STREAMS)
def test_every_successful_capture_matches_what_the_upstream_sent(name: str) -> None:
    meta = fixture_meta(Path(name).stem)
    turn = meta["script_turn"]
    try:
        events, done = parse_stream(fixture_bytes(name))
    except StreamError:
        # captures whose stream dies mid-way: checked in their own tests
        assert "stream_error_after" in turn or "disconnect_after" in turn
        return
    assert done
    assert _text(events) == _expected_text(meta)
    calls = [e for e in events if isinstance(e, ToolUse)]
    expected_calls = turn.get("tool_calls", [])
    assert [c.name for c in calls] == [c["name"] for c in expected_calls]
    for call, expected in zip(calls, expected_calls, strict=True):
        if isinstance(expected["arguments"], dict):
            assert call.input == expected["arguments"]
            assert call.arguments_valid
        else:  # truncated: the raw text is kept, the input falls back to {}
            assert call.raw_arguments == expected["arguments"]
            assert call.input == {}
            assert not call.arguments_valid
    usage = [e for e in events if isinstance(e, Usage)]
    asked_usage = meta["request"].get("stream_options", {}).get("include_usage", False)
    assert len(usage) == (1 if asked_usage else 0)
    if "usage" in turn and meta["model"] != "mock-litellm":
        assert (usage[0].input_tokens, usage[0].output_tokens) == (
            turn["usage"]["input_tokens"],
            turn["usage"]["output_tokens"],
        )
    assert isinstance(events[-1], Done)
    if turn.get("finish_reason") == "length":
        assert events[-1].stop_reason == "max_tokens"
        assert isinstance(events[-2], Truncated) and events[-2].reason == "length"
    elif expected_calls:
        assert events[-1].stop_reason == "tool_use"
    else:
        assert events[-1].stop_reason == "end_turn"


def test_openai_text_capture_exact_sequence() -> None:
    events, done = parse_stream(fixture_bytes("scripted-openai-text.sse"))
    assert done
    assert events == [
        TextDelta("Hello! I read th"),
        TextDelta("e repo; main.py "),
        TextDelta("has 3 functions."),
        Usage(120, 14, 0, None),
        Done("end_turn"),
    ]


def test_anthropic_parallel_tools_exact_sequence_with_cost() -> None:
    events, _ = parse_stream(fixture_bytes("scripted-anthropic-parallel-tools.sse"))
    assert events == [
        Usage(23, 7, 0, 0.000174),
        ToolUse("toolu_scripted_23_0", "read_file", {"path": "a.py"}, '{"path": "a.py"}'),
        ToolUse("toolu_scripted_23_1", "list_dir", {"path": "src"}, '{"path": "src"}'),
        Done("tool_use"),
    ]


def test_reasoning_is_its_own_event_and_removed_from_output_tokens() -> None:
    events, _ = parse_stream(fixture_bytes("scripted-openai-reasoning.sse"))
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning == "The user wants a greeting. Keep it short."
    assert _text(events) == "Hi there!"
    assert [e for e in events if isinstance(e, Usage)] == [Usage(31, 2, 10, None)]


def test_long_arguments_in_seven_character_fragments() -> None:
    events, _ = parse_stream(fixture_bytes("scripted-openai-long-args.sse"))
    (call,) = [e for e in events if isinstance(e, ToolUse)]
    content = call.input["content"]
    assert content.count("\n") == 120 and '"quoted" \\ backslash é' in content


@pytest.mark.parametrize("name", ["scripted-openai-stream-error.sse", "scripted-openai-disconnect.sse"])
def test_in_stream_error_event_raises_with_the_server_message(name: str) -> None:
    with pytest.raises(StreamError) as info:
        parse_stream(fixture_bytes(name))
    assert "APIConnectionError" in info.value.detail
    assert info.value.code == "500"


def test_text_before_the_error_is_delivered_first() -> None:
    decoder, assembler = SseDecoder(), StreamAssembler()
    seen: list[StreamEvent] = []
    with pytest.raises(StreamError):
        for payload in decoder.feed(fixture_bytes("scripted-openai-stream-error.sse")):
            seen.extend(assembler.feed_payload(payload))
    assert _text(seen) == "This answer gets an "


@pytest.mark.parametrize("name", STREAMS)
def test_byte_by_byte_feeding_gives_the_same_payloads(name: str) -> None:
    data = fixture_bytes(name)
    whole = SseDecoder().feed(data)
    decoder = SseDecoder()
    pieces: list[bytes] = []
    for i in range(len(data)):
        pieces.extend(decoder.feed(data[i : i + 1]))
    pieces.extend(decoder.close())
    assert pieces == whole


def test_decoder_handles_crlf_comments_multiline_data_and_missing_final_blank_line() -> None:
    decoder = SseDecoder()
    out = decoder.feed(b': keep-alive\r\nevent: message\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata:[DONE]')
    assert out == [b'{"a":\n1}']
    assert decoder.close() == [b"[DONE]"]


@pytest.mark.parametrize("size", [1000, 4096, 65536])
def test_one_huge_event_in_small_reads(size: int) -> None:
    """A 4 MB tool call arriving in small reads gives the same payload as the whole body (pieces joined once)."""
    content = "x = 1\n" * (4 * 1024 * 1024 // 6)
    body = _sse(_tc(0, id="big", name="Write", args=json.dumps({"path": "a.py", "content": content})), FINISH_TOOLS)
    decoder, assembler = SseDecoder(), StreamAssembler()
    events: list[StreamEvent] = []
    for i in range(0, len(body), size):
        for payload in decoder.feed(body[i : i + size]):
            events.extend(assembler.finish() if payload == b"[DONE]" else assembler.feed_payload(payload))
    assert decoder.close() == []
    (call,) = [e for e in events if isinstance(e, ToolUse)]
    assert call.arguments_valid and call.input == {"path": "a.py", "content": content}
    assert events[-1] == Done("tool_use")


def test_payload_bytes_that_are_not_utf8_are_ignored_like_invalid_json() -> None:
    assembler = StreamAssembler()
    assert assembler.feed_payload(b'{"choices": [{"delta": {"content": "\xff"}}]}') == []
    assert assembler.feed_payload('{"choices": [{"delta": {"content": "é"}}]}'.encode()) == [TextDelta("é")]


def reference_payloads(body: bytes) -> list[bytes]:
    """The SSE rules, line by line: data lines collected, a blank line ends the event, end of input too."""
    payloads: list[bytes] = []
    data: list[bytes] = []
    for raw in body.split(b"\n"):
        line = raw.removesuffix(b"\r")
        if not line:
            if data:
                payloads.append(b"\n".join(data))
                data = []
        elif line.startswith(b"data:"):
            data.append(line[5:].removeprefix(b" "))
    if data:
        payloads.append(b"\n".join(data))
    return payloads


def test_any_chunking_gives_the_payloads_the_rules_give() -> None:
    """Events split anywhere (inside "\n\n", inside a line, CR LF or not) decode as the rules say."""
    rng = random.Random(3)
    parts = [b'data: {"a": 1}\n\n', b": comment\n", b"event: x\ndata: y\n\n", b"data:z\n\n", b"data: 1\ndata: 2\n\n"]
    parts.append(b"\n")
    for _round in range(300):
        body = b"".join(rng.choice(parts) for _ in range(rng.randint(1, 12)))
        if rng.random() < 0.3:
            body = body.replace(b"\n", b"\r\n")
        decoder, got = SseDecoder(), []
        cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, rng.randint(0, 6))))
        for start, end in zip([0, *cuts], [*cuts, len(body)], strict=True):
            got.extend(decoder.feed(body[start:end]))
        got.extend(decoder.close())
        assert got == reference_payloads(body), body


def _sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


def _tc(index: int | None, *, id: str | None = None, name: str | None = None, args: str = "") -> dict[str, Any]:
    frag: dict[str, Any] = {"function": {"arguments": args}}
    if index is not None:
        frag["index"] = index
    if id:
        frag["id"] = id
    if name:
        frag["function"]["name"] = name
    return {"choices": [{"index": 0, "delta": {"tool_calls": [frag]}}]}


FINISH_TOOLS = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}


def test_fragment_without_id_or_name_on_unknown_index_joins_previous_call() -> None:
    events, _ = parse_stream(
        _sse(_tc(0, id="a", name="Write", args='{"path": "x", '), _tc(1, args='"content": "y"}'), FINISH_TOOLS)
    )
    assert [e for e in events if isinstance(e, ToolUse)] == [
        ToolUse("a", "Write", {"path": "x", "content": "y"}, '{"path": "x", "content": "y"}')
    ]


def test_new_id_on_used_index_opens_a_new_call() -> None:
    events, _ = parse_stream(
        _sse(
            _tc(0, id="a", name="Read", args='{"path": "1"}'),
            _tc(0, id="b", name="Read"),
            _tc(0, args='{"path": "2"}'),
            FINISH_TOOLS,
        )
    )
    calls = [e for e in events if isinstance(e, ToolUse)]
    assert [(c.id, c.input) for c in calls] == [("a", {"path": "1"}), ("b", {"path": "2"})]


def test_repeated_same_id_and_name_do_not_split_or_double() -> None:
    events, _ = parse_stream(
        _sse(_tc(0, id="a", name="Read", args='{"pa'), _tc(0, id="a", name="Read", args='th": "z"}'), FINISH_TOOLS)
    )
    assert [e for e in events if isinstance(e, ToolUse)] == [ToolUse("a", "Read", {"path": "z"}, '{"path": "z"}')]


def test_missing_ids_become_call_n_and_calls_are_sorted_by_index() -> None:
    events, _ = parse_stream(
        _sse(_tc(1, name="Glob", args='{"pattern": "*"}'), _tc(0, name="Read", args='{"path": "a"}'), FINISH_TOOLS)
    )
    calls = [e for e in events if isinstance(e, ToolUse)]
    assert [(c.id, c.name) for c in calls] == [("call_0", "Read"), ("call_1", "Glob")]


def test_invalid_json_arguments_become_empty_object() -> None:
    events, _ = parse_stream(_sse(_tc(0, id="a", name="Write", args='{"path": '), FINISH_TOOLS))
    (call,) = [e for e in events if isinstance(e, ToolUse)]
    assert call.input == {} and not call.arguments_valid and call.raw_arguments == '{"path": '


def test_non_object_arguments_become_empty_object() -> None:
    events, _ = parse_stream(_sse(_tc(0, id="a", name="Write", args="[1, 2]"), FINISH_TOOLS))
    (call,) = [e for e in events if isinstance(e, ToolUse)]
    assert call.input == {} and not call.arguments_valid


def test_invalid_json_chunks_are_ignored() -> None:
    body = b"data: {not json\n\n" + _sse({"choices": [{"index": 0, "delta": {"content": "ok"}}]})
    events, done = parse_stream(body)
    assert done and _text(events) == "ok"


def _calls(*chunks: dict[str, Any]) -> list[ToolUse]:
    events, done = parse_stream(_sse(*chunks, FINISH_TOOLS))
    assert done
    return [e for e in events if isinstance(e, ToolUse)]


def _delta(*fragments: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"tool_calls": list(fragments)}}]}


def test_a_delta_with_text_and_other_keys_gives_every_part_in_order() -> None:
    call = {"index": 0, "id": "a", "function": {"name": "Read", "arguments": '{"path": "x"}'}}
    delta = {"role": "assistant", "reasoning_content": "think", "content": "hi", "tool_calls": [call]}
    events, _ = parse_stream(_sse({"choices": [{"index": 0, "delta": delta, "finish_reason": "tool_calls"}]}))
    assert events == [
        ReasoningDelta("think"),
        TextDelta("hi"),
        ToolUse("a", "Read", {"path": "x"}, '{"path": "x"}'),
        Done("tool_use"),
    ]


def test_empty_or_null_text_gives_no_event() -> None:
    chunks = [{"choices": [{"index": 0, "delta": {"content": c}}]} for c in ("", None)]
    events, _ = parse_stream(_sse(*chunks, {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}))
    assert events == [Done("other")]


def test_a_null_index_counts_as_the_fragment_position() -> None:
    opened = _delta(
        {"index": 0, "id": "a", "function": {"name": "Read", "arguments": ""}},
        {"index": 1, "id": "b", "function": {"name": "Glob", "arguments": ""}},
    )
    more = _delta(
        {"index": None, "function": {"arguments": '{"path": "x"}'}},
        {"index": None, "function": {"arguments": '{"pattern": "*"}'}},
    )
    calls = _calls(opened, more)
    assert [(c.id, c.input) for c in calls] == [("a", {"path": "x"}), ("b", {"pattern": "*"})]


def test_a_null_index_past_the_open_calls_continues_the_previous_call() -> None:
    opened = _delta({"index": 0, "id": "a", "function": {"name": "Write", "arguments": '{"path": '}})
    more = _delta(
        {"index": None, "function": {"arguments": '"x", '}},
        {"index": None, "function": {"arguments": '"content": "y"}'}},
    )
    assert [(c.id, c.input) for c in _calls(opened, more)] == [("a", {"path": "x", "content": "y"})]


def test_an_index_that_is_not_an_integer_counts_as_the_fragment_position() -> None:
    opened = _delta(
        {"index": 0, "id": "a", "function": {"name": "Read", "arguments": '{"path": '}},
        {"index": 1, "id": "b", "function": {"name": "Read", "arguments": '{"path": "b"}'}},
    )
    # 1.0 equals the open index 1 as a dict key, but it is not an integer: position 0 decides
    more = _delta({"index": 1.0, "function": {"arguments": '"a"}'}})
    assert [(c.id, c.input) for c in _calls(opened, more)] == [("a", {"path": "a"}), ("b", {"path": "b"})]


def test_an_id_arriving_after_the_first_fragment_is_kept_and_the_next_ones_continue_the_call() -> None:
    calls = _calls(_tc(0, name="Read", args='{"pa'), _tc(0, id="late", args='th": '), _tc(0, args='"1"}'))
    assert [(c.id, c.name, c.input) for c in calls] == [("late", "Read", {"path": "1"})]


def test_a_new_id_with_arguments_on_a_used_index_takes_the_following_fragments() -> None:
    calls = _calls(
        _tc(0, id="a", name="Read", args='{"path": "1"}'),
        _tc(0, id="b", name="Read", args='{"path": '),
        _tc(0, args='"2"}'),
    )
    assert [(c.id, c.input) for c in calls] == [("a", {"path": "1"}), ("b", {"path": "2"})]


def test_name_pieces_on_a_used_index_are_concatenated() -> None:
    calls = _calls(_tc(0, id="a", name="Re"), _tc(0, name="ad", args='{"path": "x"}'))
    assert [(c.id, c.name, c.input) for c in calls] == [("a", "Read", {"path": "x"})]


def test_arguments_sent_as_an_object_or_missing_on_an_open_call() -> None:
    calls = _calls(
        _tc(0, id="a", name="Write"),
        _delta({"index": 0}, {"index": 0, "function": {}}),  # nothing to add
        _delta({"index": 0, "function": {"arguments": {"path": "x"}}}),
    )
    assert [(c.id, c.raw_arguments, c.input) for c in calls] == [("a", '{"path": "x"}', {"path": "x"})]


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        ' {"a": 1}',
        '{"a": 1} ',
        '\t{"a": [1, 2.5, null, true]}\r\n',
        '{"a": 1} x',
        "{} {}",
        '{"a": 1',
        "\ufeff{}",
        "",
        "  ",
        "[NaN, Infinity]",
        '"text"',
        '{"a": "\x01"}',  # a raw control character: json.loads is strict
        '{"a": "\\ud800"}',
        '{"a": 1}\x00',
    ],
)
def test_payloads_are_decoded_exactly_as_json_loads_decodes_them(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            _loads(text)
        return
    assert repr(_loads(text)) == repr(expected)


def test_whitespace_around_a_payload_is_accepted_and_trailing_garbage_ignored() -> None:
    body = b'data:  {"choices": [{"index": 0, "delta": {"content": "a"}}]}  \n\n'
    body += b'data: {"choices": [{"index": 0, "delta": {"content": "b"}}]} x\n\n'
    body += b'data: {"choices": [{"index": 0, "delta": {"content": "c"}}]}\n\ndata: [DONE]\n\n'
    events, done = parse_stream(body)
    assert done and _text(events) == "ac"


@pytest.mark.parametrize("limit", [1024, 2048, 4096, 8192, 16384, 32768, 65536])
def test_tool_call_with_output_exactly_on_a_usual_limit_warns(limit: int) -> None:
    usage = {"choices": [{"index": 0, "delta": {}}], "usage": {"prompt_tokens": 5, "completion_tokens": limit}}
    events, _ = parse_stream(_sse(_tc(0, id="a", name="Write", args='{"path": "a"}'), FINISH_TOOLS, usage))
    assert Truncated("suspicious_limit", limit) in events


def test_output_near_but_not_on_a_limit_does_not_warn() -> None:
    usage = {"choices": [{"index": 0, "delta": {}}], "usage": {"prompt_tokens": 5, "completion_tokens": 4095}}
    events, _ = parse_stream(_sse(_tc(0, id="a", name="Write", args="{}"), FINISH_TOOLS, usage))
    assert not [e for e in events if isinstance(e, Truncated)]


def test_text_answer_on_a_limit_does_not_warn() -> None:
    usage = {"choices": [{"index": 0, "delta": {}}], "usage": {"prompt_tokens": 5, "completion_tokens": 4096}}
    text = {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}
    events, _ = parse_stream(_sse(text, usage))
    assert not [e for e in events if isinstance(e, Truncated)]


@pytest.mark.parametrize(
    ("finish", "has_calls", "expected"),
    [
        ("tool_calls", False, "tool_use"),
        ("function_call", True, "tool_use"),
        ("length", True, "max_tokens"),
        ("stop", True, "tool_use"),
        ("stop", False, "end_turn"),
        ("content_filter", False, "other"),
        ("content_filter", True, "tool_use"),
        (None, False, "other"),
    ],
)
def test_stop_reason_mapping(finish: str | None, has_calls: bool, expected: str) -> None:
    assert map_stop_reason(finish, has_calls) == expected


def test_in_stream_context_error_is_typed() -> None:
    body = _sse({"error": {"message": "prompt is too long: 210000 tokens > 200000 maximum", "code": "400"}}, done=False)
    with pytest.raises(ContextTooLong):
        parse_stream(body)


@pytest.mark.parametrize(
    "name",
    [
        "scripted-openai-nonstream-tool-call.json",
        "scripted-anthropic-nonstream-tool-call.json",
        "mock-litellm-nonstream-tool-call.json",
    ],
)
def test_non_streaming_completion_bodies(name: str) -> None:
    events = parse_completion(json.loads(fixture_bytes(name)))
    calls = [e for e in events if isinstance(e, ToolUse)]
    if name.startswith("mock"):
        # LiteLLM's mock_response ignores the scripted tool call and answers with text
        assert _text(events) == MOCK_TEXT and not calls
        assert events[-1] == Done("end_turn")
    else:
        assert [(c.name, c.input) for c in calls] == [("read_file", {"path": "a.py"})]
        assert events[-1] == Done("tool_use")


@pytest.mark.parametrize(
    "payload",
    [
        b'{"choices": [1]}',
        b'{"choices": [{"delta": "x"}]}',
        b'{"choices": "abc"}',
        b'{"usage": 5}',
        b"[" * 100_000,  # nested past the JSON decoder's recursion limit
        b'{"choices": [{"delta": {"tool_calls": [1]}}]}',
        b'{"choices": [{"delta": {"content": 5}}]}',
        b'{"choices": [{"delta": {"reasoning_content": ["x"]}}]}',
        b'{"usage": {"prompt_tokens": "many"}}',
    ],
)
def test_a_chunk_shaped_otherwise_is_ignored_never_a_crash(payload: bytes) -> None:
    # the proxy's text is untrusted: a wrong shape is ignored like invalid JSON, and what follows still counts
    assembler = StreamAssembler()
    assert assembler.feed_payload(payload) == []
    assert assembler.feed_payload(b'{"choices": [{"delta": {"content": "ok"}}]}') == [TextDelta("ok")]


def test_odd_types_in_a_tool_call_fragment_and_finish_reason_are_tolerated() -> None:
    assembler = StreamAssembler()
    fragment = {"index": 0, "id": 7, "function": {"name": 3, "arguments": "{}"}}
    assembler.feed_payload(
        json.dumps({"choices": [{"delta": {"tool_calls": [fragment]}, "finish_reason": ["x"]}]}).encode()
    )
    (call, done) = assembler.finish()
    assert isinstance(call, ToolUse) and call.id == "7" and call.name == "" and call.input == {}
    assert isinstance(done, Done) and done.stop_reason == "tool_use"  # the list was not taken as a finish reason


def test_a_call_s_name_is_heard_as_it_arrives_before_its_arguments() -> None:
    """The Agent tool's child starts loading while the task streams: the name is told at once, each time
    it grows (a name split over fragments), and a listener that fails never breaks the answer."""
    heard: list[str] = []
    assembler = StreamAssembler(on_call=heard.append)
    first = {"index": 0, "id": "c1", "type": "function", "function": {"name": "Ag", "arguments": ""}}
    assert assembler.feed({"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]}) == []
    assert heard == ["Ag"]
    assembler.feed({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": "ent"}}]}}]})
    assert heard == ["Ag", "Agent"]
    more = {"index": 0, "function": {"arguments": '{"agent": "rev"}'}}
    assembler.feed({"choices": [{"index": 0, "delta": {"tool_calls": [more]}}]})
    assert heard == ["Ag", "Agent"]  # arguments are no news

    def broken(_name: str) -> None:
        raise RuntimeError("listener bug")

    failing = StreamAssembler(on_call=broken)
    failing.feed({"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]})
    events = failing.finish()
    assert [e.name for e in events if isinstance(e, ToolUse)] == ["Ag"]
