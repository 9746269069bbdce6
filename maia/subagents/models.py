"""Choosing a sub-agent's model (§20.2): exact id, else a name containing the fragment, else the parent's."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from maia.core.errors import MaiaError
from maia.i18n import _
from maia.provider.models import ModelInfo

ListModels = Callable[[], Awaitable[list[ModelInfo]]]


@dataclass(frozen=True, slots=True)
class ModelResolution:
    """The model to run and, when it is not what the definition asked for, why."""

    model: str
    warning: str | None = None


def pick_model(wanted: str, names: Sequence[str]) -> str | None:
    """``wanted`` if offered, else the first name (in list order) containing it, ignoring case."""
    if wanted in names:
        return wanted
    lowered = wanted.lower()
    exact = next((n for n in names if n.lower() == lowered), None)
    return exact or next((n for n in names if lowered in n.lower()), None)


class ModelResolver:
    """Resolves definitions' models against LiteLLM's list, loaded once, only when a definition needs it."""

    def __init__(self, list_models: ListModels | None) -> None:
        self._list_models = list_models
        self._names: list[str] | None = None
        self._error: str | None = None
        self._lock = asyncio.Lock()

    async def _load(self) -> list[str] | None:
        async with self._lock:
            if self._names is None and self._error is None:
                if self._list_models is None:
                    self._error = _("the model list is not available")
                else:
                    try:
                        self._names = [m.name for m in await self._list_models()]
                    except MaiaError as error:
                        self._error = error.message
            return self._names

    async def resolve(self, agent: str, wanted: str | None, parent_model: str) -> ModelResolution:
        """The model for an agent whose definition asks for ``wanted`` (None: the parent's model)."""
        if not wanted:
            return ModelResolution(parent_model)
        names = await self._load()
        if names is None:
            return ModelResolution(
                wanted,
                _(
                    'Sub-agent "{agent}": the model list could not be loaded ({error}); "{model}" is used as written.'
                ).format(agent=agent, error=self._error, model=wanted),
            )
        found = pick_model(wanted, names)
        if found is not None:
            return ModelResolution(found)
        return ModelResolution(
            parent_model,
            _(
                'Sub-agent "{agent}": no LiteLLM model matches "{model}"; the main agent\'s model {parent} is used.'
            ).format(agent=agent, model=wanted, parent=parent_model),
        )
