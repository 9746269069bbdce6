"""The permission engine (§9): rules allow / ask / deny, Bash commands split into what they run."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from maia.permissions.engine import Decision, decide, explain, parts_of
    from maia.permissions.rules import Rule, RuleSet, Verdict, parse_rule, parse_rules

__all__ = ["Decision", "Rule", "RuleSet", "Verdict", "decide", "explain", "parse_rule", "parse_rules", "parts_of"]

# loaded on first use (PEP 562): importing a light submodule (rules, subject) must not load the engine,
# its program tables and the bash reader, which only a tool call's decision needs (start-up cost, issue 29)
_HOME = {name: "maia.permissions.engine" for name in ("Decision", "decide", "explain", "parts_of")} | {
    name: "maia.permissions.rules" for name in ("Rule", "RuleSet", "Verdict", "parse_rule", "parse_rules")
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
