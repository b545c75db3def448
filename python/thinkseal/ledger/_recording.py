"""A reply recorded on its way back to the caller: what the clients, the SDK
bridges and the framework adapters do with a ledger they were given. A ledger
that cannot be written is logged, not raised: the provider's answer still
reaches the caller (its seals are then unknown to a later ``attach``, and go
out unsealed)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeVar

from .._errors import ValidationError
from ._backend import BackendError

if TYPE_CHECKING:
    from .._messages import AssistantMessage
    from .._reply import Reply
    from ._ledger import AsyncLedger, Ledger

R = TypeVar("R", "Reply", "AssistantMessage")

_log = logging.getLogger("thinkseal.ledger")


def checked_ledger(ledger: object, *, asynchronous: bool = True) -> Any:
    """``ledger`` when it is a ledger the caller can use (a ``Ledger``, or, from
    asyncio, an ``AsyncLedger`` too) or None; else ``ValidationError`` at ``ledger``."""
    if ledger is None:
        return None
    from ._ledger import AsyncLedger, Ledger  # noqa: PLC0415

    kinds: tuple[type, ...] = (Ledger, AsyncLedger) if asynchronous else (Ledger,)
    if not isinstance(ledger, kinds):
        wanted = "a thinkseal.Ledger or AsyncLedger" if asynchronous else "a thinkseal.Ledger"
        raise ValidationError(f"ledger: expected {wanted}, got {type(ledger).__name__}", path="ledger")
    return ledger


def _bound(reply: Reply | AssistantMessage) -> bool:
    message = getattr(reply, "message", reply)
    return getattr(message, "thinking_binding", None) is not None


def record_reply(ledger: Ledger | None, reply: R) -> R:
    """``reply``, recorded in the sync ``ledger`` first (when there is one and
    the reply is bound)."""
    if ledger is not None and _bound(reply):
        try:
            ledger.record(reply)
        except BackendError as err:
            _unrecorded(err)
    return reply


async def arecord_reply(ledger: Ledger | AsyncLedger | None, reply: R) -> R:
    """``record_reply`` for a ledger of either kind, from asyncio."""
    from ._ledger import AsyncLedger  # noqa: PLC0415

    if ledger is not None and _bound(reply):
        try:
            if isinstance(ledger, AsyncLedger):
                await ledger.record(reply)
            else:
                ledger.record(reply)
        except BackendError as err:
            _unrecorded(err)
    return reply


def _unrecorded(err: Exception) -> None:
    _log.warning("the reply could not be recorded (%s); it is returned as it is", type(err).__name__)
