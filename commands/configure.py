"""``maia setup``: ask (or take) the proxy's address and key, test them, and write settings.json."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from maia.i18n import _, ngettext

from . import CONTEXT_SETTINGS
from .setup import environment

DEFAULT_URL = "http://localhost:4000"


def check_proxy(data: dict[str, Any], home: Path) -> tuple[bool, list[str]]:
    """Ask the proxy for its model list: (reached with the key accepted, the model names), with a verdict printed."""
    import asyncio

    from maia.core.errors import AuthFailed, HttpStatusError, ProviderError, ProviderUnreachable
    from maia.core.inert import for_terminal
    from maia.core.paths import settings_path
    from maia.core.settings import validate_settings
    from maia.provider.models import list_models

    settings = validate_settings(data, settings_path(home))
    url = settings.models_url
    click.echo(_("Testing {url} …").format(url=url))
    try:
        found = asyncio.run(list_models(settings))
    except ProviderUnreachable as error:
        verdict = _("✗ Unreachable: nothing answers at {url} ({cause}). Check the address and that the proxy runs.")
        click.echo(for_terminal(verdict.format(url=url, cause=error.cause), sys.stdout))
        return False, []
    except AuthFailed as error:
        verdict = _("✗ Key refused: the proxy answered HTTP {status} ({detail}). Check the key.")
        click.echo(for_terminal(verdict.format(status=error.status, detail=error.detail), sys.stdout))
        return False, []
    except HttpStatusError as error:
        verdict = _("✗ The proxy answered HTTP {status} ({detail}): is {url} a LiteLLM (OpenAI-compatible) address?")
        click.echo(for_terminal(verdict.format(status=error.status, detail=error.detail, url=url), sys.stdout))
        return False, []
    except ProviderError as error:
        click.echo(for_terminal(_("✗ {message}").format(message=error.message), sys.stdout))
        return False, []
    names = [m.name for m in found]
    click.echo(
        ngettext(
            "✓ OK: the proxy accepted the key and offers {count} model.",
            "✓ OK: the proxy accepted the key and offers {count} models.",
            len(names),
        ).format(count=len(names))
    )
    return True, names


def _choose_model(names: list[str], current: str | None) -> str | None:
    """Ask for a default model among ``names`` (number or name); Enter takes the proposed one."""
    if not names:
        return current
    for number, name in enumerate(names, 1):
        click.echo(f"  {number:>3}  {name}")
    proposed = current if current in names else names[0]
    while True:
        answer = click.prompt(_("Default model (number or name)"), default=proposed).strip()
        if answer.isdigit() and 1 <= int(answer) <= len(names):
            return names[int(answer) - 1]
        if answer in names:
            return answer
        click.echo(
            _("Not in the list: type a number from 1 to {count} or a name shown above.").format(count=len(names))
        )


def run_setup(
    url: str | None = None,
    key: str | None = None,
    key_env: str | None = None,
    model: str | None = None,
    check: bool = True,
) -> bool:
    """The whole set-up; asks for what the options do not give when ``url`` is None. True when saved."""
    from maia.core.errors import UsageError
    from maia.core.settings import read_settings_object, save_settings

    env = environment()
    current = read_settings_object(env.home)
    interactive = url is None
    if key is not None and key_env is not None:
        raise UsageError(_("Use --key or --key-env, not both."))
    if key_env is not None:
        key = os.environ.get(key_env)
        if not key:
            raise UsageError(
                _("The variable {var} is not set (or empty): it should hold the proxy key.").format(var=key_env)
            )
    if interactive:
        click.echo(
            _("MAIA talks to your models through a LiteLLM proxy. Its settings go to {path}.").format(
                path=env.home / "settings.json"
            )
        )
    default_url = current.get("LiteLLM_URL") or DEFAULT_URL
    typed_key = key
    while True:  # interactive: a refused key or a wrong address is asked again, not a dead end
        if interactive:
            url = click.prompt(_("Proxy address"), default=default_url).strip()
        assert url is not None
        if not url.startswith(("http://", "https://")):
            message = _("The proxy address must start with http:// or https://, e.g. {url}").format(url=DEFAULT_URL)
            if not interactive:
                raise UsageError(message)
            click.echo(message)
            continue
        if interactive and typed_key is None:
            has_key = bool(current.get("LiteLLM_API_Key"))
            question = (
                _("Proxy key (hidden; Enter keeps the current one)")
                if has_key
                else _("Proxy key (hidden; Enter for none)")
            )
            key = click.prompt(question, default="", show_default=False, hide_input=True).strip() or None
        updates: dict[str, Any] = {"LiteLLM_URL": url}
        if key:
            updates["LiteLLM_API_Key"] = key
        if not check:
            break
        ok, names = check_proxy({**current, **updates}, env.home)
        if ok:
            if model is None and interactive:
                model = _choose_model(names, current.get("DefaultModel"))
            elif model is not None and names and model not in names:
                click.echo(
                    _('Warning: the proxy does not offer "{model}" (`maia models` lists them).').format(model=model)
                )
            break
        if interactive and click.confirm(_("Try another address or key?"), default=True):
            default_url = url
            continue
        if not (interactive and click.confirm(_("Save these settings anyway?"), default=False)):
            click.echo(_("Nothing saved. (--no-check saves without testing.)"))
            return False
        break
    if model:
        updates["DefaultModel"] = model
    path = save_settings(env.home, updates)
    click.echo(_("Saved {path} (readable by you only).").format(path=path))
    if updates.get("DefaultModel") or current.get("DefaultModel"):
        click.echo(
            _("Default model: {model}.").format(model=updates.get("DefaultModel") or current.get("DefaultModel"))
        )
    click.echo(_("Next: `maia` starts the chat; `maia models` lists the models."))
    return True


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option("--url", metavar="URL", help=_("The LiteLLM proxy's address, e.g. http://localhost:4000 (no questions)."))
@click.option("--key", metavar="KEY", help=_("The proxy key (sent as Authorization: Bearer …)."))
@click.option("--key-env", metavar="VAR", help=_("Read the proxy key from this environment variable."))
@click.option("--model", "-m", metavar="NAME", help=_("The default model (DefaultModel)."))
@click.option("--no-check", is_flag=True, help=_("Save without asking the proxy for its models."))
def setup(url: str | None, key: str | None, key_env: str | None, model: str | None, no_check: bool) -> None:
    """Set up MAIA: the proxy's address and key, tested, and a default model, saved in ~/.maia/settings.json.

    Without --url, asks each value. The proxy is asked for its models (/v1/models): the verdict says
    whether it is unreachable, refuses the key, or answers with N models. The other settings of an
    existing file are kept; the file is written readable by you only (mode 0600).

    Exit codes: 0 saved, 1 the test failed (nothing saved), 2 bad usage.
    """
    if not run_setup(url, key, key_env, model, check=not no_check):
        raise SystemExit(1)
