"""The in-memory ledger: one process, bounded, least recently written first out."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from threading import Lock

from ._backend import Write, merged
from ._entries import Entry


class MemoryBackend:
    def __init__(self, max_entries: int) -> None:
        self._entries: OrderedDict[bytes, Entry] = OrderedDict()
        self._max = max_entries
        self._lock = Lock()

    def get(self, keys: Sequence[bytes]) -> dict[bytes, Entry]:
        with self._lock:
            return {k: e for k in keys if (e := self._entries.get(k)) is not None}

    def put(self, writes: Sequence[Write], now: float) -> None:
        with self._lock:
            entries = self._entries
            for key, entry, tombstone in writes:
                entries[key] = merged(entries.get(key), entry, tombstone, now)
                entries.move_to_end(key)
            while len(entries) > self._max:
                entries.popitem(last=False)

    def close(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"memory, {len(self._entries)} entries"


class AsyncMemoryBackend:
    """``MemoryBackend`` behind awaitable methods (nothing in it blocks)."""

    def __init__(self, max_entries: int) -> None:
        self.sync = MemoryBackend(max_entries)

    async def get(self, keys: Sequence[bytes]) -> dict[bytes, Entry]:
        return self.sync.get(keys)

    async def put(self, writes: Sequence[Write], now: float) -> None:
        self.sync.put(writes, now)

    async def close(self) -> None:
        self.sync.close()

    def __repr__(self) -> str:
        return repr(self.sync)
