"""The models LiteLLM offers, asked once per application and shared by everything that needs them.

Context-size resolution, the ListModels tool, ``/model`` validation and sub-agent model resolution all
read the same list; ``refresh=True`` asks the server again (``/models``, ``/model``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from maia.core.settings import Settings
from maia.i18n import _
from maia.provider.models import ModelInfo

Lister = Callable[[Settings], Awaitable[list[ModelInfo]]]


@dataclass(frozen=True, slots=True)
class ModelMatch:
    """The model a request resolves to, and a warning when it is not the one asked for."""

    name: str
    exact: bool
    warning: str | None = None


class ModelCatalog:
    """LiteLLM's model list, cached after the first successful answer."""

    def __init__(self, settings: Settings, lister: Lister | None = None) -> None:
        self.settings = settings
        self._lister = lister
        self._models: list[ModelInfo] | None = None
        self._lock = asyncio.Lock()

    async def models(self, *, refresh: bool = False) -> list[ModelInfo]:
        """The models (raises ProviderError when the server cannot be asked)."""
        async with self._lock:
            if self._models is None or refresh:
                lister = self._lister
                if lister is None:
                    from maia.provider.models import list_models

                    lister = list_models
                self._models = await lister(self.settings)
            return list(self._models)

    async def names(self, *, refresh: bool = False) -> list[str]:
        """The model names."""
        return [m.name for m in await self.models(refresh=refresh)]

    async def resolve(self, wanted: str, fallback: str) -> ModelMatch:
        """An exact name, else the only name containing ``wanted``, else ``fallback`` with a warning."""
        names = await self.names()
        if wanted in names:
            return ModelMatch(wanted, True)
        lowered = wanted.lower()
        containing = [n for n in names if lowered in n.lower()]
        if len(containing) == 1:
            return ModelMatch(containing[0], False)
        if containing:
            return ModelMatch(
                containing[0],
                False,
                _("{wanted!r} matches several models ({names}); using {name}.").format(
                    wanted=wanted, names=", ".join(containing), name=containing[0]
                ),
            )
        return ModelMatch(
            fallback,
            False,
            _("No model named {wanted!r} on the LiteLLM server; using {name}.").format(wanted=wanted, name=fallback),
        )
