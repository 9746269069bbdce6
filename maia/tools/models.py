"""CurrentModel and ListModels: which model this session uses, and which ones LiteLLM offers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from maia.core.contracts import ToolContext, ToolTraits
from maia.core.errors import ProviderError
from maia.i18n import _
from maia.provider.models import ModelInfo
from maia.tools.base import BuiltinTool, ToolError


class CurrentModelTool(BuiltinTool):
    """The model of this session."""

    traits = ToolTraits(read_only=True)

    name = "CurrentModel"
    description = "Tell which LLM model this session is using right now."
    schema = {"type": "object", "properties": {}}

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """The model name, read at call time."""
        if not ctx.model:
            raise ToolError(_("No model is selected."))
        return _("This session uses the model {model} (through LiteLLM).").format(model=ctx.model)


class ListModelsTool(BuiltinTool):
    """The models LiteLLM offers."""

    traits = ToolTraits(read_only=True)

    name = "ListModels"
    description = "List the LLM models available from the LiteLLM server; the one this session uses is marked."
    schema = {"type": "object", "properties": {}}

    def __init__(self, list_models: Callable[[], Awaitable[list[ModelInfo]]]) -> None:
        self._list_models = list_models

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Ask LiteLLM (at every call) and mark the current model."""
        try:
            models = await self._list_models()
        except ProviderError as error:
            raise ToolError(error.message) from None
        if not models:
            return _("LiteLLM offers no model.")
        lines = []
        for model in models:
            mark = _(" (this session)") if model.name == ctx.model else ""
            size = (
                _(", {tokens} tokens of context").format(tokens=model.max_input_tokens)
                if model.max_input_tokens
                else ""
            )
            lines.append(f"- {model.name}{size}{mark}")
        return "\n".join(lines)
