"""Tool results, prompts and resources as the model reads them (pure)."""

from __future__ import annotations

import base64
import json

from maia.mcp.results import MAX_RESULT, cut, human_size, prompt_messages, resource_text, tool_outcome
from tests.mcp.transcripts import parse


def test_text_parts_joined_and_other_parts_described() -> None:
    png = base64.b64encode(b"x" * 1229).decode()
    result = {
        "content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": png, "mimeType": "image/png"},
            {"type": "audio", "data": base64.b64encode(b"y" * 10).decode(), "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "memo://n", "text": "embedded text"}},
            {"type": "resource", "resource": {"uri": "memo://b", "blob": png, "mimeType": "application/pdf"}},
            {"type": "hologram"},
            {"type": "text", "text": "last"},
        ],
        "isError": False,
    }
    assert tool_outcome(result).text.split("\n") == [
        "first",
        "[image/png, 1.2 KB]",
        "[audio/wav, 10 B]",
        "[resource link: file:///a.txt (a.txt, text/plain)]",
        "embedded text",
        "[resource memo://b: application/pdf, 1.2 KB]",
        "[hologram content]",
        "last",
    ]


def test_is_error_and_structured_content() -> None:
    assert tool_outcome({"content": [{"type": "text", "text": "bad"}], "isError": True}).is_error
    assert tool_outcome({"content": [], "structuredContent": {"n": 1, "s": "é"}}).text == '{"n": 1, "s": "é"}'
    assert tool_outcome({"content": [{"type": "text", "text": "x"}], "structuredContent": {"r": "x"}}).text == "x"
    assert tool_outcome({}).text == "" and not tool_outcome({}).is_error


def test_cut_at_100000_characters() -> None:
    text = "a" * 250_000
    kept = cut(text)
    assert kept.startswith("a" * MAX_RESULT) and kept[MAX_RESULT:].startswith("\n[… cut: 250000 characters in total")
    assert cut("short") == "short"
    assert human_size(512) == "512 B" and human_size(3 * 1024 * 1024) == "3.0 MB"


def test_captured_results() -> None:
    for name in ("http-legacy.txt", "http-legacy-v1.txt"):
        by_section = {e.section.split(":")[0]: e for e in parse(name)}
        echo = json.loads(by_section["tools/call echo"].responses[0].events()[0][1])["result"]
        assert tool_outcome(echo).text == "héllo"
        image = json.loads(by_section["tools/call image"].responses[0].events()[0][1])["result"]
        assert tool_outcome(image).text == "[image/png, 92 B]"


def test_prompt_and_resource_results() -> None:
    messages = prompt_messages(
        {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
                {"role": "system?", "content": {"type": "text", "text": "odd role"}},
                "junk",
            ]
        }
    )
    assert messages == [("user", "hi"), ("assistant", "[image/png, 3 B]"), ("user", "odd role")]
    text = resource_text(
        {"contents": [{"uri": "a", "text": "one"}, {"uri": "b", "blob": "AAAA"}, {"uri": "c", "text": "two"}]}
    )
    assert text == "one\n[resource b: 3 B]\ntwo"


def test_prompt_arguments_from_a_slash_command_line() -> None:
    import pytest

    from maia.mcp.source import PromptArgument, PromptInfo, parse_prompt_arguments

    review = PromptInfo(
        "s", "review", "mcp__s__review", "", (PromptArgument("code", required=True), PromptArgument("language"))
    )
    assert parse_prompt_arguments(review, "x") == {"code": "x"}
    assert parse_prompt_arguments(review, "a b c") == {"code": "a", "language": "b c"}  # the last takes the rest
    assert parse_prompt_arguments(review, "language=go 'x = 1'") == {"language": "go", "code": "x = 1"}
    assert parse_prompt_arguments(review, "other=1") == {"code": "other=1"}
    with pytest.raises(ValueError, match=r"missing argument code: /mcp__s__review <code> \[language\]"):
        parse_prompt_arguments(review, "")
    with pytest.raises(ValueError, match="cannot split the arguments"):
        parse_prompt_arguments(review, "'unclosed")
    bare = PromptInfo("s", "hello", "mcp__s__hello", "")
    assert parse_prompt_arguments(bare, "") == {}
    with pytest.raises(ValueError, match="mcp__s__hello takes no arguments"):
        parse_prompt_arguments(bare, "extra")
