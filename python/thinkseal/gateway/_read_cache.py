"""What the gateway read from a wire message's bytes, kept for the next
request that carries the same bytes: an agent re-sends its whole history with
one more step each time, so reading only what is new keeps a request's cost in
its new turns. Keyed by a digest of the exact bytes (the same bytes read the
same; the caller hashes them), bounded by the wire bytes its entries were read
from (``gateway.read_cache_mib``), least recently used first out. The messages are immutable
values: sharing them between requests (and sessions) is safe, and the digests
they keep are then reused by the replay decision."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Final, Generic, TypeVar

from .._messages import Message

# How many bytes of wire messages a cache answers for (what it keeps for them is
# of the same order): the histories of about 160 sessions of 100k tokens.
# The gateway sets it from its configuration (``gateway.read_cache_mib``).
DEFAULT_BYTES: Final[int] = 64 * 2**20
SAME_SIZE: Final[int] = 4_096  # system prompts and other messages kept by value

T = TypeVar("T")
_MISSING = object()  # what a read may give (None) is kept too


class ReadCache(Generic[T]):
    """What was read from wire-message bytes (the messages, and what a surface
    checks across messages); a read that fails is not kept."""

    def __init__(self, budget: int = DEFAULT_BYTES) -> None:
        self.budget = budget
        self.bytes = 0  # the wire bytes the kept entries were read from
        self._entries: OrderedDict[bytes, tuple[T, int]] = OrderedDict()
        self._values: OrderedDict[Message, Message] = OrderedDict()
        self.reads = 0  # how many wire messages were read (not found): counted work, for the tests

    def get(self, key: bytes, read: Callable[[], T], size: int) -> T:
        """What ``read()`` gave for the ``size`` bytes whose digest is ``key``."""
        found = self._entries.get(key, _MISSING)
        if found is not _MISSING:
            self._entries.move_to_end(key)
            return found[0]  # type: ignore[index, no-any-return]
        self.reads += 1
        value = read()
        self._entries[key] = (value, size)
        self.bytes += size
        while self.bytes > self.budget and self._entries:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= dropped
        return value

    def __len__(self) -> int:
        return len(self._entries)

    def same(self, message: Message) -> Message:
        """The message equal to ``message`` given before, or ``message`` (a system
        prompt, read anew from each request, is then the same object each time,
        as the messages after it are)."""
        found = self._values.get(message)
        if found is not None:
            self._values.move_to_end(message)
            return found
        self._values[message] = message
        if len(self._values) > SAME_SIZE:
            self._values.popitem(last=False)
        return message
