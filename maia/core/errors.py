"""User-facing errors, each carrying its exit status, mapped once at the CLI boundary."""

from __future__ import annotations

import enum
from pathlib import Path

from maia.i18n import _


class ExitStatus(enum.IntEnum):
    """Process exit codes of every MAIA command."""

    OK = 0
    ERROR = 1
    USAGE = 2
    ITERATION_LIMIT = 3
    INTERRUPTED = 130


class MaiaError(Exception):
    """An error the user can understand and act on; never shown with a traceback."""

    exit_status: ExitStatus = ExitStatus.ERROR

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(MaiaError):
    """Bad arguments, or a name that refers to nothing (exit 2)."""

    exit_status = ExitStatus.USAGE


class NotFoundError(UsageError):
    """A session, model or other named thing does not exist (exit 2)."""


class ConfigError(MaiaError):
    """A configuration file is missing or invalid."""


class Interrupted(MaiaError):
    """The user interrupted the operation (Ctrl+C)."""

    exit_status = ExitStatus.INTERRUPTED

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or _("Interrupted."))


class ProviderError(MaiaError):
    """The model server could not give a complete answer."""


class ProviderUnreachable(ProviderError):
    """No connection could be made to the LiteLLM server."""

    def __init__(self, url: str, cause: str) -> None:
        super().__init__(_("LiteLLM is unreachable ({url}): {cause}").format(url=url, cause=cause))
        self.url = url
        self.cause = cause


class ProviderTimeout(ProviderError):
    """The proxy sent nothing within ``ReadTimeout`` (or a connection could not be set up in time)."""


class HttpStatusError(ProviderError):
    """The server answered with a non-2xx HTTP status."""

    def __init__(
        self, status: int, detail: str, *, url: str = "", hint: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(_("LiteLLM answered HTTP {status}: {detail}").format(status=status, detail=detail), hint=hint)
        self.status = status
        self.detail = detail
        self.url = url
        self.retry_after = retry_after  # the server's Retry-After, when it gave one (429, 503)


class AuthFailed(HttpStatusError):
    """The server refused the API key (HTTP 401/403)."""


class UnknownModel(HttpStatusError):
    """The proxy does not know the model asked for (exit 2: fix the name)."""

    exit_status = ExitStatus.USAGE


class RateLimited(HttpStatusError):
    """HTTP 429: the caller should wait ``retry_after`` seconds (None when the server gave no delay)."""

    def __init__(self, status: int, detail: str, retry_after: float | None, *, url: str = "") -> None:
        super().__init__(status, detail, url=url, retry_after=retry_after)


class ContextTooLong(ProviderError):
    """The request does not fit in the model's context window."""

    def __init__(self, detail: str, *, status: int | None = None) -> None:
        super().__init__(_("The conversation is too long for the model: {detail}").format(detail=detail))
        self.detail = detail
        self.status = status


class StreamError(ProviderError):
    """The server reported an error in the middle of the answer."""

    def __init__(self, detail: str, *, code: str | None = None) -> None:
        super().__init__(_("LiteLLM server error: {detail}").format(detail=detail))
        self.detail = detail
        self.code = code


class IncompleteStream(ProviderError):
    """The answer stream ended before its end marker: the turn failed."""

    def __init__(self) -> None:
        super().__init__(_("The answer was cut off: the server closed the stream before the end of the answer."))


class EmptyResponse(ProviderError):
    """The server answered with an empty body."""

    def __init__(self) -> None:
        super().__init__(_("LiteLLM sent an empty response."))


ERRORS_LOG = "errors.log"  # in MAIA's home: the tracebacks of unexpected errors, owner-only
MAX_ERRORS_LOG = 1_000_000  # bytes; beyond, the log starts again (the previous one kept as errors.log.1)


def log_unexpected(error: BaseException, home: Path) -> Path | None:
    """Append an unexpected error's traceback to ``errors.log`` in MAIA's home (mode 0600); its path, or
    None when it cannot be written (a full disk must not hide the error it reports)."""
    import datetime
    import os
    import traceback

    path = home / ERRORS_LOG
    entry = "".join(
        [
            f"--- {datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')} pid {os.getpid()}\n",
            *traceback.format_exception(error),
        ]
    )
    try:
        home.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_ERRORS_LOG:
            os.replace(path, path.with_name(ERRORS_LOG + ".1"))
        # an append-only log: each entry is one write to a file opened O_APPEND, never rewritten
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.fchmod(fd, 0o600)  # tracebacks may quote paths and prompts: the owner's only
            os.write(fd, entry.encode("utf-8", errors="replace"))
        finally:
            os.close(fd)
    except OSError:
        return None
    return path


def unexpected_message(error: BaseException, home: Path) -> str:
    """One line saying an unexpected error happened, its traceback logged in MAIA's home."""
    detail = " ".join(str(error).split())
    if len(detail) > 200:
        detail = detail[:199] + "…"
    what = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    path = log_unexpected(error, home)
    if path is None:
        return _("MAIA hit an unexpected error (a bug): {what}.").format(what=what)
    return _("MAIA hit an unexpected error (a bug): {what}. Details in {path}.").format(what=what, path=path)
