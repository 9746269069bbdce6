"""One tool registry: tools declare their traits and subject; approvals, the plan and edits modes, rule
names, ``maia permissions check`` and the front ends read those, never a list of tool names."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from maia.agent.approval import approval_for
from maia.app.approvals import with_mode
from maia.core.contracts import Permission, Tool, ToolContext, ToolSpec, ToolTraits
from maia.core.registry import BUILTIN, OWN_TOOL_NAMES, builtin_tool, tool_class, traits_of
from maia.permissions.engine import Decision
from maia.permissions.rules import KNOWN_TOOLS, Verdict
from maia.permissions.subject import PathSubject, Subject
from maia.tools import builtin_tools
from tests.conftest import trust_project

ROOT = Path(__file__).resolve().parents[2]


class Deploy:
    """A tool MAIA does not know by name: only what it declares tells what it is."""

    def __init__(self, traits: ToolTraits) -> None:
        self.traits = traits

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec("Deploy", "Deploy.", {"type": "object"})

    @property
    def permission(self) -> Permission:
        return "ask"

    def describe(self, tool_input: Mapping[str, Any]) -> str:
        return str(tool_input.get("target", ""))

    def lock_key(self, tool_input: Mapping[str, Any], launch: Path) -> str | None:
        return None

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        return PathSubject(str(tool_input.get("target")), "write")

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        return "deployed"


def test_every_registered_tool_is_a_tool_under_its_name_and_declares_its_traits() -> None:
    for name in BUILTIN:
        cls = tool_class(name)
        assert cls is not None and isinstance(cls.__dict__.get("traits", getattr(cls, "traits", None)), ToolTraits)
    tools = builtin_tools()
    assert [t.spec.name for t in tools] == [
        "Read", "Glob", "Grep", "Write", "Edit", "Bash", "TodoWrite", "WebFetch", "CurrentModel",
    ]  # fmt: skip
    for tool in tools:
        assert isinstance(tool, Tool) and isinstance(tool.traits, ToolTraits)
        assert type(builtin_tool(tool.spec.name)) is type(tool)
    assert OWN_TOOL_NAMES <= KNOWN_TOOLS  # rule names come from the same catalogue


def test_traits_say_what_the_name_lists_said() -> None:
    read_only = {n for n in BUILTIN if traits_of(n).read_only}
    assert read_only == {"Read", "Glob", "Grep", "WebFetch", "TodoWrite", "CurrentModel", "ListModels", "Skill"}
    assert {n for n in BUILTIN if traits_of(n).writes_file} == {"Write", "Edit"}
    assert {n for n in BUILTIN if traits_of(n).shows_file} == {"Read", "Write", "Edit"}
    assert traits_of("Agent").main_input == "agent" and traits_of("Bash").main_input == "command"
    assert traits_of("NoSuchTool") == ToolTraits()


def _always(verdict: Verdict) -> Any:
    def check(name: str, tool_input: Mapping[str, Any]) -> Decision:
        return Decision(verdict, None, "why")

    return check


def test_the_plan_and_edits_modes_read_the_tool_s_declared_traits(tmp_path: Path) -> None:
    reader = Deploy(ToolTraits(read_only=True))
    writer = Deploy(ToolTraits(writes_file="target"))
    for tool, plan_verdict in ((reader, Verdict.ALLOW), (writer, Verdict.DENY), (Deploy(ToolTraits()), Verdict.DENY)):
        tools = {"Deploy": tool}
        plan = with_mode(_always(Verdict.ALLOW), lambda: "plan", tmp_path, lambda tools=tools: tools)  # type: ignore[misc]
        assert plan("Deploy", {"target": "x"}).verdict == plan_verdict
    edits = with_mode(_always(Verdict.ASK), lambda: "edits", tmp_path, lambda: {"Deploy": writer})
    assert edits("Deploy", {"target": "site/index.html"}).verdict == Verdict.ALLOW  # inside the launch folder
    assert edits("Deploy", {"target": "/etc/x"}).verdict == Verdict.ASK


def test_a_question_shows_the_input_of_a_tool_that_is_not_read_only(tmp_path: Path) -> None:
    asked = approval_for(
        Deploy(ToolTraits()), "Deploy", {"target": "prod"}, "prod", Decision(Verdict.ASK, None, "x"), tmp_path
    )
    assert asked.detail_kind == "text" and '"target": "prod"' in (asked.detail or "")
    quiet = approval_for(
        Deploy(ToolTraits(read_only=True)), "Deploy", {"target": "p"}, "p", Decision(Verdict.ASK, None, "x"), tmp_path
    )
    assert quiet.detail is None


def test_no_duck_typing_on_maia_s_own_types_and_no_second_catalogue() -> None:
    sources = [p for p in (ROOT / "maia").rglob("*.py")] + list((ROOT / "commands").glob("*.py"))
    offenders = []
    for path in sources:
        text = path.read_text(encoding="utf-8")
        if re.search(r'getattr\((tool|decision), "(read_only|doubt)"', text) or "READ_ONLY_TOOLS" in text:
            offenders.append(str(path.relative_to(ROOT)))
        if path.name != "registry.py" and re.search(r'"Read": \("maia\.tools', text):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_permissions_check_takes_the_main_input_from_the_tool(home: Path, project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "maia", "permissions", "check", "--json", "Agent", "reviewer"],
        capture_output=True, text=True, cwd=project, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # no rule: ask
    (project / ".maia").mkdir(exist_ok=True)
    (project / ".maia" / "settings.json").write_text('{"permissions": {"allow": ["Agent(reviewer)"]}}')
    trust_project(project)  # a project's allow rules count once its folder is trusted
    done = subprocess.run(
        [sys.executable, "-m", "maia", "permissions", "check", "Agent", "reviewer"],
        capture_output=True, text=True, cwd=project, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_always_rules_follow_the_tool_s_declared_subject(tmp_path: Path) -> None:
    """A tool named nothing MAIA knows gets the rule its subject calls for (was: a list of tool names)."""
    from maia.agent.approval import suggest_rules

    writer = Deploy(ToolTraits(writes_file="target"))
    assert suggest_rules("Deploy", {"target": "site/index.html"}, tmp_path, tool_object=writer) == ["Edit(site/**)"]

    class Named(Deploy):
        def subject(self, tool_input: Mapping[str, Any]) -> Subject:
            from maia.permissions.subject import NameSubject

            return NameSubject(str(tool_input.get("target")))

    named = Named(ToolTraits())
    assert suggest_rules("Deploy", {"target": "staging"}, tmp_path, tool_object=named) == ["Deploy(staging)"]
