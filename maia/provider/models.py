"""The models LiteLLM offers (§7.4) and their context sizes (``/v1/models``, ``/model/info``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maia.core.errors import ProviderError, ProviderUnreachable
from maia.core.settings import Settings
from maia.i18n import _
from maia.provider.litellm import classify_http_error, tls_context

if TYPE_CHECKING:
    import httpx  # imported when a list is asked for (a sub-agent never loads it: maia.subagents.relay)


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model name as LiteLLM knows it, and its input context size when the server gives it."""

    name: str
    max_input_tokens: int | None = None


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, float) and value.is_integer() and value > 0:
        return int(value)
    return None


def parse_model_list(data: Any) -> list[ModelInfo]:
    """Names from ``data[].id`` (else ``model_name``), deduplicated and sorted, with ``max_input_tokens``."""
    entries = data.get("data") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise ValueError("no 'data' list")
    found: dict[str, int | None] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        name = entry.get("id") or entry.get("model_name")
        if not isinstance(name, str) or not name:
            continue
        size = _positive_int(entry.get("max_input_tokens"))
        if size is None and isinstance(entry.get("model_info"), dict):
            size = _positive_int(entry["model_info"].get("max_input_tokens"))
        if found.get(name) is None:
            found[name] = size
    return [ModelInfo(name, found[name]) for name in sorted(found)]


def parse_model_info(data: Any) -> dict[str, int]:
    """``/model/info`` → ``{model_name: max_input_tokens}`` for the entries that give one."""
    sizes: dict[str, int] = {}
    entries = data.get("data") if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("model_name"), str):
            continue
        info = entry.get("model_info")
        size = _positive_int(info.get("max_input_tokens")) if isinstance(info, dict) else None
        if size is not None and entry["model_name"] not in sizes:
            sizes[entry["model_name"]] = size
    return sizes


async def _get_json(client: httpx.AsyncClient, url: str, settings: Settings) -> Any:
    import httpx

    headers = {"Accept": "application/json"}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    try:
        response = await client.get(url, headers=headers)
    except httpx.TransportError as exc:
        raise ProviderUnreachable(url, str(exc) or type(exc).__name__) from exc
    if not 200 <= response.status_code < 300:
        raise classify_http_error(
            response.status_code,
            response.content,
            response.headers,
            url,
            response.reason_phrase,
            settings_path=settings.path,
        )
    try:
        return response.json()
    except ValueError:
        raise ProviderError(
            _("{url} did not answer with JSON: {start}").format(url=url, start=response.text[:200])
        ) from None


async def list_models(settings: Settings, client: httpx.AsyncClient | None = None) -> list[ModelInfo]:
    """The models of the LiteLLM server, with context sizes from ``/model/info`` when missing."""
    import httpx

    own = client is None
    http = client or httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=10.0), verify=tls_context())
    try:
        data = await _get_json(http, settings.models_url, settings)
        try:
            models = parse_model_list(data)
        except ValueError:
            raise ProviderError(
                _('{url} answered without a model list (no "data" array).').format(url=settings.models_url)
            ) from None
        _remember_names(settings, models)
        if any(m.max_input_tokens is None for m in models):
            try:
                sizes = parse_model_info(await _get_json(http, settings.model_info_url, settings))
            except ProviderError:
                sizes = {}  # /model/info is LiteLLM-specific and optional: sizes stay unknown
            models = [ModelInfo(m.name, m.max_input_tokens or sizes.get(m.name)) for m in models]
        return models
    finally:
        if own:
            await http.aclose()


def models_cache_path(home: Path) -> Path:
    """Where the last model list is kept for shell completion (a Tab press never waits on the network)."""
    return home / "cache" / "models.json"


def _remember_names(settings: Settings, models: list[ModelInfo]) -> None:
    import contextlib
    import json

    from maia.core.storage import write_atomic

    path = models_cache_path(settings.path.parent)
    text = json.dumps([m.name for m in models])
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs completion
        if path.read_text(encoding="utf-8") == text:
            return  # unchanged: no write (and no fsync) on every start
    with contextlib.suppress(OSError):
        write_atomic(path, text)


def cached_model_names(home: Path) -> list[str]:
    """The model names of the last successful listing (empty when there was none)."""
    import json

    try:
        names = json.loads(models_cache_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
