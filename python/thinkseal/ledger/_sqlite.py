"""The ledger in SQLite (standard library): one table, WAL mode, every write
one ``BEGIN IMMEDIATE`` transaction, so processes sharing the file merge
entries one at a time (``_backend.merged``)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Sequence

from ._backend import BackendError, Write, merged
from ._entries import Entry

SCHEMA = """
CREATE TABLE IF NOT EXISTS thinkseal_ledger (
    key BLOB PRIMARY KEY,
    binding TEXT NOT NULL,
    checksum BLOB NOT NULL,
    expires REAL,
    written REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS thinkseal_ledger_written ON thinkseal_ledger (written);
"""
# SQLite takes at most 32,766 parameters a statement; lookups go in batches.
_BATCH = 500
# Expired and surplus entries are removed every this many writes.
_PRUNE_EVERY = 256


def entry_of(binding: object, checksum: object, expires: object) -> Entry:
    """An entry from a stored row, whatever its types: a row that is not what
    the ledger writes (bytes that are not UTF-8, a number for the check) gives
    an entry that does not verify, never an exception."""
    if isinstance(binding, (bytes, bytearray, memoryview)):
        try:
            binding = bytes(binding).decode()
        except UnicodeDecodeError:
            binding = ""
    text = binding if isinstance(binding, str) else ""
    check = bytes(checksum) if isinstance(checksum, (bytes, bytearray, memoryview)) else b""
    when = float(expires) if isinstance(expires, (int, float)) and not isinstance(expires, bool) else None
    return Entry(text, check, when)


class SQLiteBackend:
    def __init__(self, path: str | os.PathLike[str], max_entries: int, *, timeout: float = 30.0) -> None:
        self.path = os.fspath(path)
        self._max = max_entries
        self._writes = 0
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False, isolation_level=None)
            self._conn.text_factory = bytes  # a row that is not UTF-8 must not fail the read
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(SCHEMA)
        except sqlite3.Error as err:
            raise BackendError(f"ledger: cannot open the SQLite database {self.path!r}") from err

    def get(self, keys: Sequence[bytes]) -> dict[bytes, Entry]:
        found: dict[bytes, Entry] = {}
        try:
            with self._lock:
                for start in range(0, len(keys), _BATCH):
                    batch = keys[start : start + _BATCH]
                    marks = ",".join("?" * len(batch))
                    rows = self._conn.execute(
                        f"SELECT key, binding, checksum, expires FROM thinkseal_ledger WHERE key IN ({marks})",
                        list(batch),
                    )
                    for key, binding, checksum, expires in rows:
                        if isinstance(key, bytes):
                            found[key] = entry_of(binding, checksum, expires)
        except sqlite3.Error as err:
            raise BackendError("ledger: SQLite read failed") from err
        return found

    def put(self, writes: Sequence[Write], now: float) -> None:
        try:
            with self._lock:
                conn = self._conn
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for key, entry, tombstone in writes:
                        row = conn.execute(
                            "SELECT binding, checksum, expires FROM thinkseal_ledger WHERE key = ?", (key,)
                        ).fetchone()
                        old = None if row is None else entry_of(*row)
                        new = merged(old, entry, tombstone, now)
                        conn.execute(
                            "INSERT OR REPLACE INTO thinkseal_ledger (key, binding, checksum, expires, written) "
                            "VALUES (?, ?, ?, ?, ?)",
                            (key, new.binding, new.check, new.expires, now),
                        )
                    self._writes += 1
                    if self._writes % _PRUNE_EVERY == 0:
                        self._prune(conn, now)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
        except sqlite3.Error as err:
            raise BackendError("ledger: SQLite write failed") from err

    def _prune(self, conn: sqlite3.Connection, now: float) -> None:
        conn.execute("DELETE FROM thinkseal_ledger WHERE expires IS NOT NULL AND expires <= ?", (now,))
        (count,) = conn.execute("SELECT count(*) FROM thinkseal_ledger").fetchone()
        if count > self._max:
            conn.execute(
                "DELETE FROM thinkseal_ledger WHERE key IN (SELECT key FROM thinkseal_ledger ORDER BY written LIMIT ?)",
                (count - self._max,),
            )

    def prune(self, now: float) -> None:
        """Remove expired entries, and the oldest beyond ``max_entries``, now."""
        with self._lock:
            self._prune(self._conn, now)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"sqlite {self.path!r}"


class AsyncSQLiteBackend:
    """``SQLiteBackend`` in worker threads (the event loop never waits on the disk)."""

    def __init__(self, path: str | os.PathLike[str], max_entries: int) -> None:
        self.sync = SQLiteBackend(path, max_entries)

    async def get(self, keys: Sequence[bytes]) -> dict[bytes, Entry]:
        return await asyncio.to_thread(self.sync.get, keys)

    async def put(self, writes: Sequence[Write], now: float) -> None:
        await asyncio.to_thread(self.sync.put, writes, now)

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    def __repr__(self) -> str:
        return repr(self.sync)
