"""Every example of docs/permissions.md is checked against the engine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from maia.permissions import explain

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "permissions.md"
_MAIN = {"Bash": "command", "WebFetch": "url"}


def _examples() -> list[tuple[dict[str, list[str]], str, str, str]]:
    text = GUIDE.read_text(encoding="utf-8")
    found = []
    for block in re.finditer(r"```json\n((?:(?!```).)*?)\n```\n\n((?:\|[^\n]*\n)+)", text, re.DOTALL):
        rules = json.loads(block.group(1))
        if "permissions" in rules:
            rules = rules["permissions"]
        rows = block.group(2).strip().splitlines()
        assert rows[0] == "| tool | input | verdict |", rows[0]
        for row in rows[2:]:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
            tool, raw, verdict = cells
            # a command on several lines is written `line`<br>`line`
            value = raw.strip("`").replace("`<br>`", "\n").replace("\\|", "|")
            found.append((rules, tool, value, verdict))
    return found


EXAMPLES = _examples()


def test_the_guide_has_examples() -> None:
    assert len(EXAMPLES) >= 90


@pytest.mark.parametrize(("rules", "tool", "value", "verdict"), EXAMPLES, ids=lambda v: v if isinstance(v, str) else "")
def test_guide_example(rules: dict[str, list[str]], tool: str, value: str, verdict: str, tmp_path: Path) -> None:
    from maia.permissions.defaults import safe_default

    call = {_MAIN.get(tool, "path"): value}
    decision = safe_default(tool, call, explain(tool, call, rules, tmp_path), tmp_path)  # as the agent decides
    assert decision.verdict.value == verdict, decision.reason
