"""Values derived from a message, kept on the message (messages are immutable,
so what is derived from one cannot go stale): the adapters' wire fragments
(``providers/_wire.py``) and the ledger's keys and bound copies of a turn
(``ledger/_ledger.py``). They live in the message's ``_wire`` slot.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

from ._messages import Message

T = TypeVar("T")

MISSING: Any = object()


def cached(message: Message, key: str, build: Callable[[], T]) -> T:
    """``build()``'s result for ``message`` under ``key``, computed once per message.

    ``key`` must capture everything the result depends on besides the message
    (provider id, and any request option that changes the shape).
    """
    found = entry(message, key, MISSING)
    if found is not MISSING:
        return found  # type: ignore[no-any-return]
    value = build()  # may itself cache other entries for this message
    put(message, key, value)
    return value


def entry(message: Message, key: str, default: Any) -> Any:
    """What ``cached`` keeps for ``message`` under ``key``, or ``default``."""
    store = getattr(message, "_wire", None)
    if type(store) is tuple:
        return store[1] if store[0] == key else default
    return default if store is None else store.get(key, default)


def put(message: Message, key: str, value: Any) -> None:
    """Keep ``value`` under ``key``. A message sent to one adapter (the usual
    case) keeps its one entry as a ``(key, value)`` pair, a dict only from a
    second key on: a one-entry dict costs about 130 bytes more per message.
    Keys are interned, so every message shares one key object rather than a
    copy of the f-string it was looked up with. Two threads filling the same
    message may each replace the other's entry; the loser is built again on
    its next use, equal to the first."""
    key = sys.intern(key)
    store = getattr(message, "_wire", None)
    if isinstance(store, dict):
        store[key] = value
        return
    replaced = (key, value) if store is None else {store[0]: store[1], key: value}
    object.__setattr__(message, "_wire", replaced)
