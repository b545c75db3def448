"""The exceptions thinkseal raises; the native core raises these same classes."""

from __future__ import annotations

__all__ = ["ReplayError", "ResponseError", "ThinksealError", "ValidationError"]


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
