"""What a ledger backend does: look entries up by key, and write entries with
the one rule every backend applies atomically per key (``merged``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .._errors import ThinksealError
from ._entries import CONFLICT, Entry

# One entry to write: its key, the entry, and the conflict entry to write
# instead when the key holds another binding.
Write = tuple[bytes, Entry, Entry]


class BackendError(ThinksealError):
    """The ledger's backend could not be read or written (the driver's error is
    the ``__cause__``; its text, which may hold connection details, is not
    repeated here)."""


def _later(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else max(a, b)


def merged(old: Entry | None, new: Entry, tombstone: Entry, now: float) -> Entry:
    """What a key holds after ``new`` is written over ``old``: ``new`` when
    nothing live was there, the same binding with the later expiry when it
    was recorded again, and the conflict entry when another binding (or a
    conflict) was there: a datum recorded under two bindings is never
    attached to either."""
    if old is None or (old.expires is not None and old.expires <= now):
        return new
    if old.binding == new.binding:
        return Entry(old.binding, new.check, _later(old.expires, new.expires))
    return Entry(CONFLICT, tombstone.check, _later(old.expires, new.expires))


class Backend(Protocol):
    def get(self, keys: Sequence[bytes]) -> dict[bytes, Entry]: ...
    def put(self, writes: Sequence[Write], now: float) -> None: ...
    def close(self) -> None: ...


class AsyncBackend(Protocol):
    async def get(self, keys: Sequence[bytes]) -> dict[bytes, Entry]: ...
    async def put(self, writes: Sequence[Write], now: float) -> None: ...
    async def close(self) -> None: ...
