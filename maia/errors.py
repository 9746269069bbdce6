"""User-facing errors, each carrying its exit status, mapped once at the CLI boundary."""

from __future__ import annotations

import enum

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
