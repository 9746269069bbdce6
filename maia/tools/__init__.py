"""The built-in tools (§8); :mod:`maia.core.registry` is their one catalogue."""

from __future__ import annotations

from maia.core.registry import builtin_tools

__all__ = ["builtin_tools"]
