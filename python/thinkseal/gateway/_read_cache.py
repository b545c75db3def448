"""What the gateway read from a wire message's bytes, kept for the next
request that carries the same bytes: an agent re-sends its whole history with
one more step each time, so reading only what is new keeps a request's cost in
its new turns. Keyed by a digest of the exact bytes (the same bytes read the
same; the caller hashes them), bounded, least recently used first out. The messages are immutable
values: sharing them between requests (and sessions) is safe, and the digests
they keep are then reused by the replay decision."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Final, Generic, TypeVar

from .._messages import Message

DEFAULT_SIZE: Final[int] = 65_536  # wire messages

T = TypeVar("T")
_MISSING = object()  # what a read may give (None) is kept too


class ReadCache(Generic[T]):
    """What was read from wire-message bytes (the messages, and what a surface
    checks across messages); a read that fails is not kept."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[bytes, T] = OrderedDict()
        self._values: OrderedDict[Message, Message] = OrderedDict()
        self.reads = 0  # how many wire messages were read (not found): counted work, for the tests

    def get(self, key: bytes, read: Callable[[], T]) -> T:
        """What ``read()`` gave for the bytes whose digest is ``key``."""
        found = self._entries.get(key, _MISSING)
        if found is not _MISSING:
            self._entries.move_to_end(key)
            return found  # type: ignore[return-value]
        self.reads += 1
        found = read()
        self._entries[key] = found
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return found

    def same(self, message: Message) -> Message:
        """The message equal to ``message`` given before, or ``message`` (a system
        prompt, read anew from each request, is then the same object each time,
        as the messages after it are)."""
        found = self._values.get(message)
        if found is not None:
            self._values.move_to_end(message)
            return found
        self._values[message] = message
        if len(self._values) > self.size:
            self._values.popitem(last=False)
        return message
