"""Which servers run and which of their tools the model sees (§22 steps 2 and 4): pure functions.

A server is enabled when an allow rule ``Mcp(key…)`` names it (``*`` stands for every server) and
no deny rule ``Mcp(key)`` / ``Mcp(key,*)`` disables it. This is decided before any connection.

Project servers (``./.mcp.json``) come from whatever repository was cloned: they only start when
the user's own ``~/.maia/settings.json`` allows them by their exact name (``Mcp(key)`` or
``Mcp(key,…)``, no wildcard in the server part). Rules from the project's settings, an agent's
definition or ``Mcp(*)`` never start a process or contact an address that a repository chose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from maia.core.paths import home_path
from maia.i18n import _
from maia.mcp.config import ServerConfig
from maia.permissions.rules import Rule, RuleSet, wildcard

MAX_TOOL_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class Selection:
    """Whether one declared server is enabled, and why in words."""

    server: ServerConfig
    enabled: bool
    reason: str
    rule: str | None = None

    @property
    def name(self) -> str:
        """The server's key."""
        return self.server.name


def split_mcp_rule(rule: Rule) -> tuple[str, str | None]:
    """``Mcp(server[,tool])`` → (server pattern, tool pattern or None); bare ``Mcp`` is ``Mcp(*)``."""
    if rule.pattern is None:
        return "*", None
    server, sep, tool = rule.pattern.partition(",")
    return server.strip() or "*", (tool.strip() or "*") if sep else None


def _server_matches(pattern: str, name: str) -> bool:
    return bool(wildcard(pattern).fullmatch(name))


def _mcp_rules(rules: Iterable[Rule]) -> list[Rule]:
    return [r for r in rules if r.tool == "Mcp"]


def _disabling(rule: Rule, name: str) -> bool:
    server, tool = split_mcp_rule(rule)
    return _server_matches(server, name) and (tool is None or tool == "*")


def _allowing(rules: Sequence[Rule], name: str) -> Rule | None:
    return next((r for r in rules if _server_matches(split_mcp_rule(r)[0], name)), None)


def _trusting(rules: Sequence[Rule], name: str) -> Rule | None:
    """A user rule naming the server literally (no wildcard in the server part)."""
    return next((r for r in rules if split_mcp_rule(r)[0] == name), None)


def user_trusts(server: ServerConfig, user_rules: RuleSet) -> bool:
    """Whether a server may start at all: the user's own files, or the user's literal allow rule."""
    return server.origin == "user" or _trusting(_mcp_rules(user_rules.allow), server.name) is not None


def select_servers(
    servers: Sequence[ServerConfig], rules: RuleSet, user_rules: RuleSet, *, trusted: bool = True
) -> tuple[list[Selection], list[str]]:
    """Decide every server (step 2) and warn about ``Mcp`` rules naming no declared server. In a folder
    the user has not trusted (``trusted`` False), the project's servers never start."""
    allow = _mcp_rules(rules.allow)
    deny = _mcp_rules(rules.deny)
    selections: list[Selection] = []
    for server in servers:
        name = server.name
        denied = next((r for r in deny if _disabling(r, name)), None)
        allowed = _allowing(allow, name)
        if not server.enabled:
            selections.append(
                Selection(server, False, _('disabled in {file} ("enabled": false)').format(file=server.file))
            )
        elif denied is not None:
            selections.append(
                Selection(server, False, _("disabled by the deny rule {rule}").format(rule=denied.text), denied.text)
            )
        elif server.origin == "project" and not trusted:
            selections.append(
                Selection(server, False, _("ignored (untrusted): this folder is not trusted; see `maia trust`"))
            )
        elif allowed is None:
            selections.append(
                Selection(server, False, _('no allow rule: add "Mcp({name})" to permissions.allow').format(name=name))
            )
        elif not user_trusts(server, user_rules):
            selections.append(
                Selection(
                    server,
                    False,
                    _(
                        'declared by the project ({file}): it starts only with "Mcp({name})" in the allow list of '
                        "your own {settings}"
                    ).format(file=server.file, name=name, settings=home_path("settings.json")),
                )
            )
        else:
            selections.append(
                Selection(server, True, _("enabled by the allow rule {rule}").format(rule=allowed.text), allowed.text)
            )
    warnings: list[str] = []
    names = {s.name for s in servers}
    seen: set[str] = set()
    for rule in _mcp_rules([*rules.allow, *rules.ask, *rules.deny]):
        pattern = split_mcp_rule(rule)[0]
        if "*" in pattern or pattern in names or rule.text in seen:
            continue
        seen.add(rule.text)
        warnings.append(
            _(
                'the permission rule "{rule}" names the MCP server "{name}", which is declared nowhere '
                "({mcp}, ./.mcp.json)."
            ).format(rule=rule.text, name=pattern, mcp=home_path("mcp.json"))
        )
    return selections, warnings


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``: characters outside ``[A-Za-z0-9_-]`` become ``_``, at most 64 characters."""
    return f"mcp__{server}__{_UNSAFE.sub('_', tool)}"[:MAX_TOOL_NAME]


def _any_match(patterns: Iterable[str], names: Iterable[str]) -> bool:
    compiled = [wildcard(p) for p in patterns]
    return any(p.fullmatch(n) for p in compiled for n in names)


def hidden_because(server: ServerConfig, tool: str, rules: RuleSet) -> str | None:
    """Why a tool is not offered to the model (step 4), or None when it is."""
    public = tool_name(server.name, tool)
    names = {tool, public.split("__", 2)[2] if public.count("__") >= 2 else tool}
    if server.exclude_tools and _any_match(server.exclude_tools, names):
        return _("excludeTools")
    if server.include_tools is not None and not _any_match(server.include_tools, names):
        return _("not in includeTools")
    for rule in rules.deny:
        if rule.tool == "Mcp":
            pattern, tool_pattern = split_mcp_rule(rule)
            if tool_pattern is not None and _server_matches(pattern, server.name) and _any_match([tool_pattern], names):
                return _("deny rule {rule}").format(rule=rule.text)
        elif rule.tool == public and rule.pattern is None:
            return _("deny rule {rule}").format(rule=rule.text)
    return None
