"""The permission engine (§9): rules allow / ask / deny, Bash commands split into what they run."""

from maia.permissions.engine import Decision, decide, explain, parts_of
from maia.permissions.rules import Rule, RuleSet, Verdict, parse_rule, parse_rules

__all__ = ["Decision", "Rule", "RuleSet", "Verdict", "decide", "explain", "parse_rule", "parse_rules", "parts_of"]
