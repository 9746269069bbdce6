"""Which saved session a front end carries on: ``--resume NAME`` or ``--continue`` (the newest of its kind)."""

from __future__ import annotations

from dataclasses import dataclass, field

from maia.core.errors import MaiaError, NotFoundError
from maia.i18n import _
from maia.sessions.codec import Origin, SavedSession
from maia.sessions.store import ForeignSession, SessionStore


def _kind(origin: str) -> str:
    """The kind of session an origin names, in the user's language."""
    kinds = {"chat": _("chat"), "ask": _("maia ask"), "subagent": _("sub-agent"), "workflow": _("workflow")}
    return kinds.get(origin, origin)


@dataclass(slots=True)
class Picked:
    """The session to load and what to tell the user about the choice."""

    session: SavedSession
    notes: list[str] = field(default_factory=list)  # which session, and why
    warnings: list[str] = field(default_factory=list)  # newer sessions that had to be skipped


def pick_session(store: SessionStore, origin: Origin, *, resume: str | None, continue_last: bool) -> Picked | None:
    """The session named by ``resume``, else (``continue_last``) the newest readable one of ``origin``.

    An unknown name is a NotFoundError (exit 2) with suggestions; a newer session that cannot be read
    is never skipped silently. None when nothing was asked.
    """
    if resume:
        session = store.load(resume)
        store.require_own(session)  # said before anything is locked or shown
        return Picked(session)
    if not continue_last:
        return None
    notes: list[str] = []
    warnings: list[str] = []
    for info in store.listing():
        if info.agent is not None or info.cleared or (info.origin != origin and info.error is None):
            continue
        if info.error is not None:
            warnings.append(
                _("The newer session {name} cannot be read ({error}); it was skipped.").format(
                    name=info.name, error=info.error
                )
            )
            continue
        try:
            session = store.load(info.name)
            store.require_own(session)
        except ForeignSession:
            # a planted file may claim to be the newest: skipped, said in one line, never carried on
            warnings.append(
                _(
                    "The session {name} was not written by your MAIA in this folder (a repository may have "
                    "planted it): it was skipped. `maia trust` shows it and accepts it."
                ).format(name=info.name)
            )
            continue
        except MaiaError as error:  # changed since the listing
            warnings.append(_("The session {name} was skipped: {error}").format(name=info.name, error=error.message))
            continue
        notes.append(
            _("Continuing {kind} session {name} ({count} messages, last saved {when}).").format(
                kind=_kind(origin), name=session.name, count=len(session.messages), when=info.updated_at or "?"
            )
        )
        return Picked(session, notes, warnings)
    raise NotFoundError(
        _("No saved {kind} session to continue in this folder.").format(kind=_kind(origin)),
        hint="\n".join(warnings) or None,
    )
