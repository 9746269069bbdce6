"""Translation of user-facing text: ``_()`` over gettext, English source strings.

The language follows the locale the way GNU gettext does: ``LC_ALL``, else ``LC_MESSAGES``, else
``LANG`` names it; ``C``/``POSIX`` (or nothing) means English whatever ``LANGUAGE`` says, otherwise
``LANGUAGE`` (a colon-separated list) comes first. English is the source language: ``LANGUAGE=en``
or ``LANG=en_US.UTF-8`` reads no catalog at all.

A catalog is ``maia/locale/<lang>/LC_MESSAGES/maia.mo``, compiled from ``maia.po`` when a wheel is
built (``setup.py``). A source checkout or an editable install has the ``.po``: the ``.mo`` is then
compiled on first use beside it and again whenever the ``.po`` is newer (like ``__pycache__``,
ignored by git); a folder MAIA cannot write gets the catalog compiled in memory.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

DOMAIN = "maia"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
SOURCE_LANGUAGE = "en"


def _candidates(name: str) -> Iterator[str]:
    """``fr_FR.UTF-8@euro`` → ``fr_FR``, ``fr``: the catalog names one locale name may use."""
    base = name.split("@", 1)[0].split(".", 1)[0]
    if base:
        yield base
        if "_" in base:
            yield base.split("_", 1)[0]


def preferred_languages(environ: Mapping[str, str] | None = None) -> list[str]:
    """The languages the environment asks for, best first (empty: English)."""
    env = os.environ if environ is None else environ
    locale_name = env.get("LC_ALL") or env.get("LC_MESSAGES") or env.get("LANG") or ""
    if locale_name.split(".", 1)[0] in ("", "C", "POSIX"):
        return []  # GNU gettext ignores LANGUAGE in the C locale: LANG=C always means English
    names = [n for n in env.get("LANGUAGE", "").split(":") if n] or [locale_name]
    found: list[str] = []
    for name in names:
        for candidate in _candidates(name):
            if candidate not in found:
                found.append(candidate)
    return found


def catalog_language(environ: Mapping[str, str] | None = None) -> str | None:
    """The language whose catalog applies (``None``: English, the source strings)."""
    for language in preferred_languages(environ):
        if language.split("_", 1)[0] == SOURCE_LANGUAGE:  # en, en_US, en_GB: the source strings
            return None
        folder = LOCALE_DIR / language / "LC_MESSAGES"
        if (folder / f"{DOMAIN}.mo").is_file() or (folder / f"{DOMAIN}.po").is_file():
            return language
    return None


def _fresh_mo(language: str) -> tuple[Path | None, bytes | None]:
    """The catalog of ``language`` as a compiled file (its path) or, if it cannot be written, as bytes."""
    folder = LOCALE_DIR / language / "LC_MESSAGES"
    mo, po = folder / f"{DOMAIN}.mo", folder / f"{DOMAIN}.po"
    try:
        source_time = po.stat().st_mtime_ns
    except OSError:
        return mo, None  # an installed wheel: the compiled catalog only
    try:
        if mo.stat().st_mtime_ns >= source_time:
            return mo, None
    except OSError:
        pass
    from maia.i18n import po as po_format

    data = po_format.compile_mo(po_format.parse(po.read_text(encoding="utf-8")))
    temporary = folder / f".{DOMAIN}.{os.getpid()}.mo.tmp"
    try:
        temporary.write_bytes(data)
        os.replace(temporary, mo)  # two processes compiling at once write the same bytes
    except OSError:
        temporary.unlink(missing_ok=True)
        return None, data
    return mo, None


def _load(language: str | None) -> tuple[gettext.NullTranslations, bool]:
    """The translation of ``language`` and whether it was read from its ``.mo`` file."""
    if language is None:
        return gettext.NullTranslations(), False
    import io

    try:
        path, data = _fresh_mo(language)
        if path is not None:
            # gettext's own cache: Click's lookups in the same domain (use_for_libraries) reuse this parse
            return gettext.translation(DOMAIN, str(LOCALE_DIR), languages=[language]), True
        assert data is not None
        return gettext.GNUTranslations(io.BytesIO(data)), False
    except (OSError, ValueError):  # a broken catalog never stops MAIA: it speaks English
        return gettext.NullTranslations(), False


_language = catalog_language()
_translation, _from_file = _load(_language)


def language() -> str | None:
    """The language MAIA speaks in this process (``None``: English)."""
    return _language


def _(message: str) -> str:
    """Translate ``message`` into the user's language (English when no catalog applies)."""
    return _translation.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """Translate a message whose form depends on the count ``n``."""
    return _translation.ngettext(singular, plural, n)


def N_(message: str) -> str:  # the name gettext tools know
    """Mark ``message`` for the catalog without translating it here (it is translated where shown)."""
    return message


def use_for_libraries() -> None:
    """Let libraries that call the global gettext API (Click's "Usage:", "Options"…) speak MAIA's language.

    They look messages up in the current text domain; MAIA's catalog carries their strings too.
    Nothing changes when MAIA speaks English or its catalog only exists in memory.
    """
    if _from_file:
        gettext.bindtextdomain(DOMAIN, str(LOCALE_DIR))
        gettext.textdomain(DOMAIN)
