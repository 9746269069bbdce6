"""Shell completion of dynamic values: sessions, agents, workflows, MCP servers, models.

Each function is a Click ``shell_complete`` callback: it reads local files only (the model list from
a cache the last listing left), never the network, and never prints a traceback in the user's shell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import click


def _items(values: Iterable[str], incomplete: str) -> list[Any]:
    from click.shell_completion import CompletionItem

    lowered = incomplete.lower()
    return [CompletionItem(v) for v in sorted(set(values)) if v.lower().startswith(lowered)]


def _safe(collect: Callable[[], Iterable[str]]) -> Callable[[click.Context, click.Parameter, str], list[Any]]:
    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        try:
            return _items(collect(), incomplete)
        except Exception:  # completion must never break the user's shell
            return []

    return complete


def _env() -> Any:
    from .setup import environment

    return environment()


def _sessions() -> list[str]:
    from maia.sessions.store import SessionStore

    return SessionStore.for_launch(_env().launch).names()


def _agents() -> list[str]:
    from maia.subagents.definitions import load_agents

    env = _env()
    return list(load_agents(env.home, env.launch).agents)


def _mcp_servers() -> list[str]:
    from maia.mcp.config import load_config

    env = _env()
    return [server.name for server in load_config(env.home, env.launch).servers]


def _models() -> list[str]:
    from maia.provider.models import cached_model_names

    return cached_model_names(_env().home)


def _workflows() -> list[str]:
    from maia.workflows.registry import WorkflowRegistry

    ids = [w.id for w in WorkflowRegistry(_env().home).all()]
    return ["last", *ids]


complete_sessions = _safe(_sessions)
complete_agents = _safe(_agents)
complete_mcp_servers = _safe(_mcp_servers)
complete_models = _safe(_models)
complete_workflows = _safe(_workflows)
