"""Translation of user-facing text: ``_()`` over gettext, English source strings."""

from __future__ import annotations

import gettext
from pathlib import Path

_LOCALE_DIR = Path(__file__).with_name("locale")
_translation = gettext.translation("maia", localedir=_LOCALE_DIR, fallback=True)


def _(message: str) -> str:
    """Translate ``message`` into the user's language (English when no catalog applies)."""
    return _translation.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """Translate a message whose form depends on the count ``n``."""
    return _translation.ngettext(singular, plural, n)
