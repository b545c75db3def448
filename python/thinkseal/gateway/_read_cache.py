"""What the gateway read from a wire message's bytes, kept for the next
request that carries the same bytes: an agent re-sends its whole history with
one more step each time, so reading only what is new keeps a request's cost in
its new turns. Keyed by a digest of the exact bytes (the same bytes read the
same), bounded, least recently used first out. The messages are immutable
values: sharing them between requests (and sessions) is safe, and the digests
they keep are then reused by the replay decision."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Final

from .._messages import Message

DEFAULT_SIZE: Final[int] = 65_536  # wire messages


class ReadCache:
    """Messages read from wire-message bytes (a read that fails is not kept)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[bytes, tuple[Message, ...]] = OrderedDict()
        self.reads = 0  # how many wire messages were read (not found): counted work, for the tests

    def get(self, raw: bytes, read: Callable[[], Sequence[Message]]) -> tuple[Message, ...]:
        key = hashlib.blake2b(raw, digest_size=16).digest()
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            return found
        self.reads += 1
        found = tuple(read())
        self._entries[key] = found
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return found
