"""``maia models``: the models LiteLLM offers, the configured one marked."""

from __future__ import annotations

import click

from maia.core.errors import ConfigError, ProviderError
from maia.core.inert import inert_line
from maia.i18n import _

from . import CONTEXT_SETTINGS
from .setup import environment, settings_for, warn


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help=_("Print one JSON object for scripts."))
def models(as_json: bool) -> None:
    """List the models of your LiteLLM server, one per line, the configured one marked with ●.

    The context size is shown when the server gives it. The list is read from
    LiteLLM_URL + LiteLLM_Models in ~/.maia/settings.json.
    """
    import asyncio
    import json

    from maia.core.settings import resolve_model
    from maia.provider.models import list_models

    env = environment()
    settings = settings_for(env)
    try:
        choice = resolve_model(None, env.launch, env.home, settings=settings)
    except ConfigError as error:
        warn(error.message)
        choice = None
    current = choice.name if choice else None
    try:
        found = asyncio.run(list_models(settings))
    except ProviderError as error:
        error.hint = _("URL: {url}\nSettings: {path}").format(url=settings.models_url, path=settings.path)
        raise
    if as_json:
        payload = {
            "url": settings.models_url,
            "current": current,
            "models": [
                {"name": m.name, "max_input_tokens": m.max_input_tokens, "current": m.name == current} for m in found
            ],
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo(_("LiteLLM offers no model ({url}).").format(url=settings.models_url))
        return
    click.echo(_("Models from {url}:").format(url=settings.models_url))
    width = max(len(m.name) for m in found)
    for m in found:
        mark = "●" if m.name == current else " "
        size = _("{tokens} tokens of context").format(tokens=f"{m.max_input_tokens:,}") if m.max_input_tokens else ""
        click.echo(inert_line(f"{mark} {m.name:<{width}}  {size}".rstrip()))  # the server's names
    if current and current not in {m.name for m in found}:
        warn(_('the configured model "{model}" is not offered by this server.').format(model=current))
