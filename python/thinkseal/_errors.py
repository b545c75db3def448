"""The exceptions thinkseal raises; the native core raises these same classes."""

from __future__ import annotations

__all__ = ["ConflictError", "ProviderError", "ReplayError", "ResponseError", "ThinksealError", "ValidationError"]


class ThinksealError(Exception):
    """Root of every error thinkseal raises on purpose."""


class ValidationError(ThinksealError, ValueError):
    """A value that thinkseal does not accept. ``path`` names the offending field."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class ResponseError(ThinksealError, ValueError):
    """A provider response that does not have the documented shape.

    ``path`` is the JSON path of the offending field, e.g. ``$.content[1].signature``.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class ReplayError(ThinksealError):
    """A request that the provider would reject because of its thinking.

    ``index`` is the position of the offending assistant turn in the
    conversation's messages and ``reason`` the replay reason (see ``ReplayReport``).
    """

    def __init__(self, message: str, *, index: int, reason: str) -> None:
        super().__init__(message)
        self.index = index
        self.reason = reason


class ProviderError(ThinksealError):
    """A provider answered with an error, or could not be reached (``thinkseal.Client``).

    ``status`` is the HTTP status (None when no answer came: ``type`` is then
    ``"connection_error"`` or ``"timeout"``; a redirect the client did not
    follow has its 3xx and ``"redirect"``); ``type`` and ``message`` are
    otherwise the provider's own error type and message as its error body gives them;
    ``request_id`` the provider's request id, where it sent one; ``provider``
    the adapter id; ``retry_after`` the seconds the provider asked to wait, if
    it said. The message is the provider's: thinkseal adds no request content.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        type: str | None = None,  # noqa: A002 - the providers' name for it
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        where = f" HTTP {status}" if status is not None else ""
        kind = f" {type}" if type else ""
        request = f" (request id {request_id})" if request_id else ""
        super().__init__(f"{provider}{where}{kind}: {message}{request}")
        self.message = message
        self.provider = provider
        self.status = status
        self.type = type
        self.request_id = request_id
        self.retry_after = retry_after


class ConflictError(ThinksealError):
    """A conditional write to a conversation store (``thinkseal.store``) that
    another writer got to first: the session no longer has the length the caller
    loaded (``append``/``save`` with ``expected_length``), a conversation does
    not extend the stored one (``save``), or ``create`` named an existing session.

    ``session_id`` names the session, ``expected_length`` the length the caller
    gave (None for ``create``), ``actual_length`` the stored length (None where
    the write did not read it: ``create``, ``fork`` or ``import_json`` naming an
    existing session, a lazily loaded session replaced since). Reload the
    new turns (``store.refresh``) and retry. The message never holds message
    content.
    """

    def __init__(
        self, message: str, *, session_id: str, expected_length: int | None, actual_length: int | None
    ) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.expected_length = expected_length
        self.actual_length = actual_length
