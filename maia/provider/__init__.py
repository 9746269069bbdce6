"""Model providers: LiteLLM over HTTP (the product), and a scripted double for tests."""

from __future__ import annotations

import sys
import types
from typing import Any


def _spare_the_httpx_command_line() -> None:
    """httpx's ``__init__`` imports its command-line client (``httpx._main``), which imports rich, pygments
    and click: about as long as httpx itself, before every first request, for a client MAIA never runs
    (encode/httpx#3547). A stand-in answers that import; calling its ``main`` loads the real one."""
    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return

    def main(*args: Any, **kwargs: Any) -> Any:
        sys.modules.pop("httpx._main", None)
        from httpx._main import main as real

        return real(*args, **kwargs)

    stand_in = types.ModuleType("httpx._main", "Stands in for httpx's command-line client until it is called.")
    setattr(stand_in, "main", main)  # noqa: B010  # a module's attribute, set as the import system would
    sys.modules["httpx._main"] = stand_in


_spare_the_httpx_command_line()
