"""The Agent tool's surface, ``&name``, model resolution, the protocol and the texts (no process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from maia.core.contracts import ToolContext
from maia.core.errors import ProviderUnreachable, UsageError
from maia.permissions.engine import decide
from maia.permissions.rules import Verdict
from maia.provider.models import ModelInfo
from maia.subagents import protocol
from maia.subagents.definitions import AgentDefinition
from maia.subagents.launcher import SubAgentResult, done_message, failure_for_model, trace_name
from maia.subagents.models import ModelResolver, pick_model
from maia.subagents.protocol import ChildSpec, ProtocolError
from maia.subagents.tool import (
    AgentInvocation,
    AgentTool,
    agent_tools,
    agents_listing,
    agents_prompt_section,
    direct_context,
    parse_agent_invocation,
    resolve_invocation,
)
from maia.tools.base import ToolError


def agent(name: str, description: str = "Does things.", scope: str = "project") -> AgentDefinition:
    return AgentDefinition(name, description, Path(f"/a/{name}/AGENT.md"), scope, "i", "m", "o")  # type: ignore[arg-type]


AGENTS = {"rev": agent("rev", "Reviews code."), "doc": agent("doc", "Writes docs.", "user")}


def test_spec_lists_the_agents(tmp_path: Path) -> None:
    tool = AgentTool(AGENTS, home=tmp_path)
    spec = tool.spec
    assert spec.name == "Agent" and tool.permission == "ask"
    assert spec.input_schema["properties"]["agent"]["enum"] == ["rev", "doc"]
    assert spec.input_schema["required"] == ["agent", "task"]
    assert spec.description.endswith("Available sub-agents:\n- rev: Reviews code.\n- doc: Writes docs.")
    assert tool.describe({"agent": "rev", "task": "look at a.py\nand b.py"}) == "rev: look at a.py"
    assert tool.describe({"agent": "rev", "task": "x" * 150}) == "rev: " + "x" * 99 + "…"
    assert tool.lock_key({"agent": "rev", "task": "t"}, tmp_path) is None


async def test_no_nesting_and_no_unknown_agent(tmp_path: Path) -> None:
    tool = AgentTool(AGENTS, home=tmp_path)
    with pytest.raises(ToolError, match="A sub-agent cannot launch sub-agents"):
        await tool.execute({"agent": "rev", "task": "t"}, ToolContext(launch=tmp_path, depth=1))
    with pytest.raises(ToolError, match=r"Unknown sub-agent: who\. Available: rev, doc\."):
        await tool.execute({"agent": "who", "task": "t"}, ToolContext(launch=tmp_path))
    with pytest.raises(ToolError, match='Parameter "task" missing'):
        await tool.execute({"agent": "rev"}, ToolContext(launch=tmp_path))


def test_the_tool_exists_only_with_agents_and_at_the_top(tmp_path: Path) -> None:
    assert agent_tools({}, depth=0, home=tmp_path) == []
    assert agent_tools(AGENTS, depth=1, home=tmp_path) == []
    [tool] = agent_tools(AGENTS, depth=0, home=tmp_path)
    assert tool.spec.name == "Agent"


def test_prompt_section() -> None:
    assert agents_prompt_section({}) == ""
    section = agents_prompt_section(AGENTS)
    assert section.startswith("# Sub-agents\n\nWith the Agent tool")
    assert section.endswith("- rev: Reviews code.\n- doc: Writes docs.")


def test_rules_name_the_agent(tmp_path: Path) -> None:
    rules = {"allow": ["Agent(rev)"], "deny": ["Agent(d*)"]}
    assert decide("Agent", {"agent": "rev", "task": "t"}, rules, tmp_path) == Verdict.ALLOW
    assert decide("Agent", {"agent": "doc", "task": "t"}, rules, tmp_path) == Verdict.DENY
    assert decide("Agent", {"agent": "other", "task": "t"}, rules, tmp_path) == Verdict.ASK
    assert decide("Agent", {"agent": "other", "task": "t"}, {"allow": ["Agent"]}, tmp_path) == Verdict.ALLOW


# --- &name -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("&rev look at a.py", AgentInvocation("rev", "look at a.py")),
        ("& rev  look at a.py ", AgentInvocation("rev", "look at a.py")),
        ("  &rev", AgentInvocation("rev", "")),
        ("&rev\nline one\nline two", AgentInvocation("rev", "line one\nline two")),
        ("&", AgentInvocation(None, "")),
        ("&   ", AgentInvocation(None, "")),
        ("rev & co", None),
        ("a && b", None),
    ],
)
def test_parse_agent_invocation(text: str, expected: AgentInvocation | None) -> None:
    assert parse_agent_invocation(text) == expected


def test_resolve_invocation_ignores_case_and_lists_on_error() -> None:
    assert resolve_invocation(AgentInvocation("REV", ""), AGENTS) is AGENTS["rev"]
    with pytest.raises(UsageError, match=r"Unknown sub-agent: nope\. Available sub-agents: rev, doc\."):
        resolve_invocation(AgentInvocation("nope", ""), AGENTS)
    with pytest.raises(UsageError, match="Available sub-agents: none"):
        resolve_invocation(AgentInvocation("nope", ""), {})


def test_listing_and_context() -> None:
    assert agents_listing(AGENTS) == "Sub-agents:\n- rev (project): Reviews code.\n- doc (user): Writes docs."
    assert agents_listing({}).startswith("No sub-agent. Create one with /createAgent NAME")
    text = direct_context(SubAgentResult("rev", True, summary="Found 2 bugs."))
    assert text.startswith('The user ran the sub-agent "rev".') and text.endswith("\n\nFound 2 bugs.")


# --- models ----------------------------------------------------------------------------------


def test_pick_model() -> None:
    names = ["gpt-4o", "claude-3-5-sonnet", "claude-sonnet-4", "GPT-4O-mini"]
    assert pick_model("gpt-4o", names) == "gpt-4o"
    assert pick_model("gpt-4o-MINI", names) == "GPT-4O-mini"
    assert pick_model("sonnet", names) == "claude-3-5-sonnet"  # the first in the list
    assert pick_model("llama", names) is None


async def test_resolver_loads_once_and_falls_back() -> None:
    calls = 0

    async def models() -> list[ModelInfo]:
        nonlocal calls
        calls += 1
        return [ModelInfo("gpt-4o"), ModelInfo("claude-sonnet-4")]

    resolver = ModelResolver(models)
    assert (await resolver.resolve("a", None, "parent")).model == "parent" and calls == 0  # not needed, not loaded
    assert (await resolver.resolve("a", "sonnet", "parent")).model == "claude-sonnet-4"
    missing = await resolver.resolve("a", "llama", "parent")
    assert missing.model == "parent"
    assert missing.warning == 'Sub-agent "a": no LiteLLM model matches "llama"; the main agent\'s model parent is used.'
    assert calls == 1


async def test_resolver_without_a_list_uses_the_name_as_written() -> None:
    async def broken() -> list[ModelInfo]:
        raise ProviderUnreachable("http://x", "refused")

    resolution = await ModelResolver(broken).resolve("a", "exact-id", "parent")
    assert resolution.model == "exact-id"
    assert resolution.warning is not None and "could not be loaded (LiteLLM is unreachable" in resolution.warning


# --- protocol and texts ----------------------------------------------------------------------


def test_protocol_round_trip(tmp_path: Path) -> None:
    spec = ChildSpec(AGENTS["rev"], "task ✓", tmp_path, tmp_path / "home", "m", "parent", ("Bash(ls)",))
    line = protocol.encode(protocol.start(spec))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    message = protocol.decode(line)
    assert message["type"] == "start" and ChildSpec.from_json(message["spec"]) == spec
    assert protocol.decode(protocol.encode(protocol.confirm_result(3, True))) == {
        "type": "confirm-result",
        "id": 3,
        "ok": True,
    }


@pytest.mark.parametrize("line", [b"not json", b"[1]", b'{"no": "type"}', b"\xff"])
def test_protocol_rejects_garbage(line: bytes) -> None:
    with pytest.raises(ProtocolError):
        protocol.decode(line)


def test_a_malformed_spec_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="malformed start message"):
        ChildSpec.from_json({"task": "t"})


def test_texts() -> None:
    one = SubAgentResult("rev", True, summary="s", tool_calls=1, duration=12.4)
    assert done_message(one) == 'Sub-agent "rev" finished in 12 s (1 tool call).'
    traced = SubAgentResult("rev", True, tool_calls=3, duration=2, trace="s-rev_2")
    assert done_message(traced) == 'Sub-agent "rev" finished in 2 s (3 tool calls). Trace: s-rev_2.'
    failed = SubAgentResult("rev", False, error="boom")
    assert failure_for_model(failed) == 'Sub-agent "rev" failed: boom'
    assert trace_name("p" * 120, "rev") == "p" * 96 + "-rev"
    assert trace_name(None, "rev").startswith("session_") and trace_name(None, "rev").endswith("-rev")
