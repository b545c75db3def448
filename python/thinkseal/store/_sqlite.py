"""The embedded default: SQLite through the standard library's ``sqlite3``.

A file is opened in WAL mode, so readers never wait for the writer and several
processes can share it; every write is one ``BEGIN IMMEDIATE`` transaction and
every read one transaction (one snapshot). One connection per store, used under
a lock (share the store between threads).

SQLite keeps whatever type a value was written with, so every value is checked
when it is read (``_codec``); text columns are read as bytes (``CAST(... AS
BLOB)``) and checked as UTF-8 there, so a row that is not UTF-8 is named, not
quoted.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .._binding import FINGERPRINT_VERSION
from ._base import AsyncStore, Store
from ._codec import (
    CHAIN_START,
    ContextRow,
    FragmentRow,
    Head,
    MessageRow,
    SessionInfo,
    SessionNotFoundError,
    advance_params,
    bad_row,
    conflict,
    digest_of,
    fragment_index_of,
    fragment_rows,
    head_of,
    listed_id,
    listed_info,
    lost_race,
    missing_row,
    replace_params,
    sql_row,
)

__all__ = ["AsyncSQLiteStore", "SQLiteStore"]

TABLES = (
    """CREATE TABLE IF NOT EXISTS thinkseal_sessions (
    session_id TEXT PRIMARY KEY,
    length INTEGER NOT NULL,
    chain BLOB NOT NULL,
    contexts INTEGER NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    epoch INTEGER NOT NULL DEFAULT 0,
    metadata TEXT NOT NULL DEFAULT '{}'
)""",
    """CREATE TABLE IF NOT EXISTS thinkseal_messages (
    session_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    body TEXT NOT NULL,
    digest BLOB NOT NULL,
    chain BLOB NOT NULL,
    PRIMARY KEY (session_id, position)
) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS thinkseal_contexts (
    session_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    position INTEGER NOT NULL,
    body TEXT NOT NULL,
    digest BLOB NOT NULL,
    PRIMARY KEY (session_id, version)
) WITHOUT ROWID""",
    # Prepared request data (``_fragments``): a cache over the message rows,
    # so it is dropped with them (delete, replace) and never forked. A rowid
    # table with its key in an index, not WITHOUT ROWID: there the key is the
    # whole row, and every look-up of a row read its megabytes of data whole
    # (a 1.7 MB row's entry in 0.6 ms rather than 4 µs).
    """CREATE TABLE IF NOT EXISTS thinkseal_fragments (
    session_id TEXT NOT NULL,
    target BLOB NOT NULL,
    wire_key TEXT NOT NULL,
    start INTEGER NOT NULL,
    stop INTEGER NOT NULL,
    entry BLOB NOT NULL,
    data BLOB NOT NULL
)""",
    """CREATE UNIQUE INDEX IF NOT EXISTS thinkseal_fragments_key
    ON thinkseal_fragments (session_id, target, wire_key, start)""",
)

_TABLE_NAMES = {"thinkseal_sessions", "thinkseal_messages", "thinkseal_contexts", "thinkseal_fragments"}
_INDEX_NAMES = {"thinkseal_fragments_key"}
# The first form of the fragments table (WITHOUT ROWID, before its key index):
# dropped on open, being a cache the next ``prepare`` writes again.
_OLD_FRAGMENTS = "SELECT 1 FROM sqlite_master WHERE name = 'thinkseal_fragments' AND sql LIKE '%WITHOUT ROWID%'"

# Columns added to thinkseal_sessions since the first release: a database
# created before them gets them on open, with the values its sessions had
# (fingerprint version 1, the only one there was; no rewrite yet; no metadata).
ADDED_COLUMNS = (
    ("version", "INTEGER NOT NULL DEFAULT 1"),
    ("epoch", "INTEGER NOT NULL DEFAULT 0"),
    ("metadata", "TEXT NOT NULL DEFAULT '{}'"),
)

_HEAD = (
    "SELECT length, chain, contexts, version, epoch, CAST(metadata AS BLOB), "
    "(SELECT m.chain FROM thinkseal_messages m WHERE m.session_id = s.session_id AND m.position = s.length - 1) "
    "FROM thinkseal_sessions s WHERE session_id = ?"
)
_EXISTS = "SELECT 1 FROM thinkseal_sessions WHERE session_id = ?"
_CONTEXT = (
    "SELECT version, position, CAST(body AS BLOB), digest FROM thinkseal_contexts WHERE session_id = ? AND version = ?"
)
_ROWS = (
    "SELECT position, CAST(body AS BLOB), digest, chain FROM thinkseal_messages "
    "WHERE session_id = ? AND position >= ? AND position < ? ORDER BY position"
)
_INSERT_SESSION = (
    "INSERT INTO thinkseal_sessions (session_id, length, chain, contexts, version, epoch, metadata) "
    "VALUES (?, ?, ?, ?, ?, 0, ?)"
)
_INSERT_MESSAGE = "INSERT INTO thinkseal_messages (session_id, position, body, digest, chain) VALUES (?, ?, ?, ?, ?)"
_INSERT_CONTEXT = "INSERT INTO thinkseal_contexts (session_id, version, position, body, digest) VALUES (?, ?, ?, ?, ?)"
_ADVANCE = (
    "UPDATE thinkseal_sessions SET length = ?, chain = ?, contexts = ? "
    "WHERE session_id = ? AND length = ? AND chain = ? AND contexts = ? AND epoch = ?"
)
_REPLACE = (
    "UPDATE thinkseal_sessions SET length = ?, chain = ?, contexts = ?, version = ?, epoch = ? "
    "WHERE session_id = ? AND length = ? AND chain = ? AND contexts = ? AND epoch = ?"
)
# How many of the first ``length`` rows are there, and how many of those have
# an integer position: both ``length`` means rows 0..length-1 are all there.
_FORK_COUNT = (
    "SELECT count(*), coalesce(sum(typeof(position) = 'integer'), 0) FROM thinkseal_messages "
    "WHERE session_id = ? AND position >= 0 AND position < ?"
)
_ROWS_AT = (
    "SELECT position, CAST(body AS BLOB), digest, chain FROM thinkseal_messages "
    "WHERE session_id = ? AND position IN ({}) ORDER BY position"
)
_FRAGMENT_INDEX = (
    "SELECT target, CAST(wire_key AS BLOB), start, stop, entry FROM thinkseal_fragments "
    "WHERE session_id = ? ORDER BY target, wire_key, start"
)
# The data is read through an incremental blob handle (``_data``), by rowid.
_FRAGMENTS = (
    "SELECT CAST(wire_key AS BLOB), start, stop, entry, rowid, typeof(data) = 'blob' FROM thinkseal_fragments "
    "WHERE session_id = ? AND target = ? ORDER BY wire_key, start"
)
_MERGE_FRAGMENTS = (
    "DELETE FROM thinkseal_fragments WHERE session_id = ? AND target = ? AND wire_key = ? AND start > ? AND start < ?"
)
_PUT_FRAGMENT = (
    "INSERT OR REPLACE INTO thinkseal_fragments (session_id, target, wire_key, start, stop, entry, data) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_DELETE_FRAGMENTS = "DELETE FROM thinkseal_fragments WHERE session_id = ?"
_FORK_POSITIONS = (
    "SELECT position FROM thinkseal_messages WHERE session_id = ? AND position >= 0 AND position < ? ORDER BY position"
)


def _raw_bytes(raw: Sequence[Sequence[Any]]) -> int:
    return sum(len(r[1]) for r in raw if isinstance(r[1], bytes))


def _first_missing(positions: Sequence[object], length: int) -> int:
    return next((i for i, p in enumerate(positions) if type(p) is not int or p != i), min(len(positions), length))


def _data(conn: sqlite3.Connection, rowid: int) -> bytes:
    """A fragment row's data, in the transaction that found the row. SQLite
    copies a blob it reads as a column into a buffer of its own, then Python
    into the bytes; the blob handle reads the pages straight into the bytes:
    1.8 MB (1,000 messages) in 0.48-0.50 ms against 0.67-0.69 as a column,
    each after a full collection of a 570,000-object heap."""
    with conn.blobopen("thinkseal_fragments", "data", rowid, readonly=True) as blob:
        return blob.read()


# The most of a database file a connection maps (``PRAGMA mmap_size``).
MMAP_BYTES = 256 * 1024 * 1024


class SQLiteStore(Store):
    """Sessions in one SQLite database: a file path (WAL mode, shareable by
    several processes) or ``":memory:"`` (this store only). The schema is
    created on first use, and a database made by an earlier release is brought
    up to date (docs/store.md)."""

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        timeout: float = 30.0,
        fragment_secret: bytes | str | None = None,
    ) -> None:
        super().__init__(fragment_secret)
        self.path = os.fspath(path)
        # isolation_level=None: transactions are begun explicitly, so a write is
        # exactly the statements between BEGIN IMMEDIATE and COMMIT.
        self._conn = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False, isolation_level=None)
        self._lock = threading.RLock()
        with self._lock:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                # Reads through a memory map: a lazy load's fragment rows run to
                # megabytes, read about 1.6x as fast mapped as through the page cache.
                self._conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            if not self._schema_current():
                # Written only when needed, so a database another store keeps
                # up to date opens without taking its write lock.
                with self._transaction("IMMEDIATE") as conn:
                    if conn.execute(_OLD_FRAGMENTS).fetchone() is not None:
                        conn.execute("DROP TABLE thinkseal_fragments")
                    for table in TABLES:
                        conn.execute(table)
                    columns = {r[1] for r in conn.execute("PRAGMA table_info(thinkseal_sessions)")}
                    for name, definition in ADDED_COLUMNS:
                        if name not in columns:
                            conn.execute(f"ALTER TABLE thinkseal_sessions ADD COLUMN {name} {definition}")

    @staticmethod
    def _row(session_id: str, position: int, item: Any) -> MessageRow:
        return sql_row(session_id, position, item)

    def _schema_current(self) -> bool:
        conn = self._conn
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
        columns = {r[1] for r in conn.execute("PRAGMA table_info(thinkseal_sessions)")}
        return names >= _TABLE_NAMES | _INDEX_NAMES and all(name in columns for name, _ in ADDED_COLUMNS)

    @contextmanager
    def _transaction(self, mode: str = "") -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            conn.execute(f"BEGIN {mode}")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _head_or_none(self, conn: sqlite3.Connection, session_id: str) -> Head | None:
        row = conn.execute(_HEAD, (session_id,)).fetchone()
        if row is None:
            return None
        contexts = row[2]
        context = None
        if type(contexts) is int and contexts > 0:
            context = conn.execute(_CONTEXT, (session_id, contexts - 1)).fetchone()
        return head_of(
            session_id,
            length=row[0],
            chain=row[1],
            contexts=contexts,
            version=row[3],
            epoch=row[4],
            metadata=row[5],
            last_chain=row[6],
            context=context,
        )

    def _head_in(self, conn: sqlite3.Connection, session_id: str) -> Head:
        head = self._head_or_none(conn, session_id)
        if head is None:
            raise SessionNotFoundError(session_id)
        return head

    def _head(self, session_id: str) -> Head:
        with self._transaction() as conn:
            return self._head_in(conn, session_id)

    def _read(self, session_id: str, start: int) -> tuple[Head, list[tuple[Any, ...]]]:
        with self._transaction() as conn:
            head = self._head_in(conn, session_id)
            return head, conn.execute(_ROWS, (session_id, start, head.length)).fetchall()

    def _write_rows(
        self, conn: sqlite3.Connection, session_id: str, rows: list[MessageRow], context: ContextRow | None
    ) -> None:
        conn.executemany(_INSERT_MESSAGE, [(session_id, *r) for r in rows])
        if context is not None:
            conn.execute(_INSERT_CONTEXT, (session_id, *context))

    def _insert(
        self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None, metadata: str
    ) -> None:
        with self._transaction("IMMEDIATE") as conn:
            if conn.execute(_EXISTS, (session_id,)).fetchone() is not None:
                raise conflict(session_id, None, None)
            params = (session_id, len(rows), chain, 0 if context is None else 1, FINGERPRINT_VERSION, metadata)
            conn.execute(_INSERT_SESSION, params)
            # Left by a release without fragments that deleted the session: they describe other rows.
            conn.execute(_DELETE_FRAGMENTS, (session_id,))
            self._write_rows(conn, session_id, rows, context)

    def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        with self._transaction("IMMEDIATE") as conn:
            # The condition and the new head in one statement: it matches only
            # while nobody else has written since ``head`` was read.
            if conn.execute(_ADVANCE, advance_params(session_id, head, rows, chain, context)).rowcount != 1:
                raise lost_race(session_id, head, self._head_or_none(conn, session_id))
            self._write_rows(conn, session_id, rows, context)

    def _replace_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> int:
        with self._transaction("IMMEDIATE") as conn:
            if conn.execute(_REPLACE, replace_params(session_id, head, rows, chain, context)).rowcount != 1:
                raise lost_race(session_id, head, self._head_or_none(conn, session_id))
            conn.execute("DELETE FROM thinkseal_messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM thinkseal_contexts WHERE session_id = ?", (session_id,))
            conn.execute(_DELETE_FRAGMENTS, (session_id,))
            self._write_rows(conn, session_id, rows, context)
            return head.epoch + 1

    def _set_metadata(self, session_id: str, metadata: str) -> bool:
        with self._transaction("IMMEDIATE") as conn:
            sql = "UPDATE thinkseal_sessions SET metadata = ? WHERE session_id = ?"
            return bool(conn.execute(sql, (metadata, session_id)).rowcount == 1)

    def _sessions(self) -> list[str]:
        with self._transaction() as conn:
            rows = conn.execute("SELECT CAST(session_id AS BLOB) FROM thinkseal_sessions ORDER BY rowid").fetchall()
        return [listed_id(r[0], i) for i, r in enumerate(rows)]

    def _infos(self) -> list[SessionInfo]:
        with self._transaction() as conn:
            rows = conn.execute(
                "SELECT CAST(session_id AS BLOB), length, version, CAST(metadata AS BLOB) "
                "FROM thinkseal_sessions ORDER BY rowid"
            ).fetchall()
        return [listed_info(r[0], i, r[1], r[2], r[3]) for i, r in enumerate(rows)]

    def _delete(self, session_id: str) -> bool:
        with self._transaction("IMMEDIATE") as conn:
            found = conn.execute("DELETE FROM thinkseal_sessions WHERE session_id = ?", (session_id,)).rowcount
            conn.execute("DELETE FROM thinkseal_messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM thinkseal_contexts WHERE session_id = ?", (session_id,))
            conn.execute(_DELETE_FRAGMENTS, (session_id,))
            return bool(found == 1)

    def _fork(self, source: str, length: int, session_id: str) -> None:
        with self._transaction("IMMEDIATE") as conn:
            if conn.execute(_EXISTS, (session_id,)).fetchone() is not None:
                raise conflict(session_id, None, None)
            head = self._head_in(conn, source)
            length = min(length, head.length)
            count, integers = conn.execute(_FORK_COUNT, (source, length)).fetchone()
            if count != length or integers != length:
                positions = [r[0] for r in conn.execute(_FORK_POSITIONS, (source, length))]
                raise missing_row(source, _first_missing(positions, length))
            chain: bytes | None = CHAIN_START
            if length:
                found = conn.execute(
                    "SELECT chain FROM thinkseal_messages WHERE session_id = ? AND position = ?", (source, length - 1)
                ).fetchone()
                chain = digest_of(found[0])
                if chain is None:
                    raise bad_row(source, length - 1, "the stored chain value is not 32 bytes")
            contexts = conn.execute(
                "SELECT count(*) FROM thinkseal_contexts WHERE session_id = ? AND position <= ?", (source, length)
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO thinkseal_sessions (session_id, length, chain, contexts, version, epoch, metadata) "
                "SELECT ?, ?, ?, ?, version, 0, metadata FROM thinkseal_sessions WHERE session_id = ?",
                (session_id, length, chain, contexts, source),
            )
            conn.execute(
                "INSERT INTO thinkseal_messages SELECT ?, position, body, digest, chain FROM thinkseal_messages "
                "WHERE session_id = ? AND position < ?",
                (session_id, source, length),
            )
            conn.execute(
                "INSERT INTO thinkseal_contexts SELECT ?, version, position, body, digest FROM thinkseal_contexts "
                "WHERE session_id = ? AND position <= ?",
                (session_id, source, length),
            )
            # Fragments are not copied (the fork gets its own); any under the new id are strays.
            conn.execute(_DELETE_FRAGMENTS, (session_id,))

    def _rows_between(self, session_id: str, start: int, end: int) -> list[Any]:
        with self._transaction() as conn:
            return conn.execute(_ROWS, (session_id, start, end)).fetchall()

    def _rows_at(self, session_id: str, positions: Sequence[int]) -> list[Any]:
        if not positions:
            return []
        with self._transaction() as conn:
            sql = _ROWS_AT.format(", ".join("?" * len(positions)))
            return conn.execute(sql, (session_id, *positions)).fetchall()

    def _fragment_index(self, session_id: str) -> list[tuple[bytes, str, int, int, bytes]]:
        with self._transaction() as conn:
            rows = conn.execute(_FRAGMENT_INDEX, (session_id,)).fetchall()
        return [f for f in map(fragment_index_of, rows) if f is not None]

    def _fragments(self, session_id: str, target: bytes, hint: object = None) -> list[FragmentRow]:
        with self._transaction() as conn:
            rows = conn.execute(_FRAGMENTS, (session_id, target)).fetchall()
            read = [(*row[:4], [_data(conn, row[4])] if row[5] else None) for row in rows]
        return fragment_rows(target, read)

    def _put_fragment(
        self, session_id: str, target: bytes, wire_key: str, start: int, end: int, entry: bytes, data: bytes
    ) -> None:
        with self._transaction("IMMEDIATE") as conn:
            if conn.execute(_EXISTS, (session_id,)).fetchone() is None:
                return
            conn.execute(_MERGE_FRAGMENTS, (session_id, target, wire_key, start, end))
            conn.execute(_PUT_FRAGMENT, (session_id, target, wire_key, start, end, entry, data))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class AsyncSQLiteStore(AsyncStore):
    """``SQLiteStore`` for asyncio: each call runs in a worker thread
    (``asyncio.to_thread``), so the event loop never waits on the disk."""

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        timeout: float = 30.0,
        fragment_secret: bytes | str | None = None,
    ) -> None:
        super().__init__(fragment_secret)
        self.sync = SQLiteStore(path, timeout=timeout, fragment_secret=fragment_secret)

    @staticmethod
    def _row(session_id: str, position: int, item: Any) -> MessageRow:
        return sql_row(session_id, position, item)

    @staticmethod
    def _raw_bytes(raw: Any) -> int:
        return _raw_bytes(raw)

    async def _head(self, session_id: str) -> Head:
        return await asyncio.to_thread(self.sync._head, session_id)

    async def _read(self, session_id: str, start: int) -> tuple[Head, list[tuple[Any, ...]]]:
        return await asyncio.to_thread(self.sync._read, session_id, start)

    async def _insert(
        self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None, metadata: str
    ) -> None:
        await asyncio.to_thread(self.sync._insert, session_id, rows, chain, context, metadata)

    async def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        await asyncio.to_thread(self.sync._append_rows, session_id, head, rows, chain, context)

    async def _replace_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> int:
        return await asyncio.to_thread(self.sync._replace_rows, session_id, head, rows, chain, context)

    async def _set_metadata(self, session_id: str, metadata: str) -> bool:
        return await asyncio.to_thread(self.sync._set_metadata, session_id, metadata)

    async def _sessions(self) -> list[str]:
        return await asyncio.to_thread(self.sync._sessions)

    async def _infos(self) -> list[SessionInfo]:
        return await asyncio.to_thread(self.sync._infos)

    async def _delete(self, session_id: str) -> bool:
        return await asyncio.to_thread(self.sync._delete, session_id)

    async def _fork(self, source: str, length: int, session_id: str) -> None:
        await asyncio.to_thread(self.sync._fork, source, length, session_id)

    def _lazy_twin(self) -> SQLiteStore:
        return self.sync

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)
