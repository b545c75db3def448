"""The embedded default: SQLite through the standard library's ``sqlite3``.

A file is opened in WAL mode, so readers never wait for the writer and several
processes can share it; every write is one ``BEGIN IMMEDIATE`` transaction.
One connection per store, used under a lock (share the store between threads).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ._base import AsyncStore, Store
from ._codec import CHAIN_START, ContextRow, Head, MessageRow, SessionNotFoundError, advance_params, conflict, lost_race

__all__ = ["AsyncSQLiteStore", "SQLiteStore"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS thinkseal_sessions (
    session_id TEXT PRIMARY KEY,
    length INTEGER NOT NULL,
    chain BLOB NOT NULL,
    contexts INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS thinkseal_messages (
    session_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    body TEXT NOT NULL,
    digest BLOB NOT NULL,
    chain BLOB NOT NULL,
    PRIMARY KEY (session_id, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS thinkseal_contexts (
    session_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    position INTEGER NOT NULL,
    body TEXT NOT NULL,
    digest BLOB NOT NULL,
    PRIMARY KEY (session_id, version)
) WITHOUT ROWID;
"""

_HEAD = "SELECT length, chain, contexts FROM thinkseal_sessions WHERE session_id = ?"
_CONTEXT = (
    "SELECT version, position, body, digest FROM thinkseal_contexts WHERE session_id = ? ORDER BY version DESC LIMIT 1"
)
_INSERT_MESSAGE = "INSERT INTO thinkseal_messages (session_id, position, body, digest, chain) VALUES (?, ?, ?, ?, ?)"
_INSERT_CONTEXT = "INSERT INTO thinkseal_contexts (session_id, version, position, body, digest) VALUES (?, ?, ?, ?, ?)"


class SQLiteStore(Store):
    """Sessions in one SQLite database: a file path (WAL mode, shareable by
    several processes) or ``":memory:"`` (this store only). The schema is
    created on first use (docs/store.md)."""

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *, timeout: float = 30.0) -> None:
        super().__init__()
        self.path = os.fspath(path)
        # isolation_level=None: transactions are begun explicitly, so a write is
        # exactly the statements between BEGIN IMMEDIATE and COMMIT.
        self._conn = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False, isolation_level=None)
        self._lock = threading.RLock()
        with self._lock:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(SCHEMA)

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

    def _head_in(self, conn: sqlite3.Connection, session_id: str) -> Head:
        row = conn.execute(_HEAD, (session_id,)).fetchone()
        if row is None:
            raise SessionNotFoundError(session_id)
        context = conn.execute(_CONTEXT, (session_id,)).fetchone() if row[2] else None
        return Head(row[0], row[1], row[2], ContextRow(*context) if context else None)

    def _head(self, session_id: str) -> Head:
        with self._transaction() as conn:
            return self._head_in(conn, session_id)

    def _read(self, session_id: str, start: int) -> tuple[Head, list[MessageRow]]:
        with self._transaction() as conn:
            head = self._head_in(conn, session_id)
            cursor = conn.execute(
                "SELECT position, body, digest, chain FROM thinkseal_messages "
                "WHERE session_id = ? AND position >= ? ORDER BY position",
                (session_id, start),
            )
            return head, [MessageRow(*r) for r in cursor]

    def _insert(self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None) -> None:
        with self._transaction("IMMEDIATE") as conn:
            if conn.execute(_HEAD, (session_id,)).fetchone() is not None:
                raise conflict(session_id, None, None)
            conn.execute(
                "INSERT INTO thinkseal_sessions (session_id, length, chain, contexts) VALUES (?, ?, ?, ?)",
                (session_id, len(rows), chain, 0 if context is None else 1),
            )
            conn.executemany(_INSERT_MESSAGE, [(session_id, *r) for r in rows])
            if context is not None:
                conn.execute(_INSERT_CONTEXT, (session_id, *context))

    def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        with self._transaction("IMMEDIATE") as conn:
            # The condition and the new head in one statement: it matches only
            # while nobody else has written since ``head`` was read.
            updated = conn.execute(
                "UPDATE thinkseal_sessions SET length = ?, chain = ?, contexts = ? "
                "WHERE session_id = ? AND length = ? AND chain = ? AND contexts = ?",
                advance_params(session_id, head, rows, chain, context),
            ).rowcount
            if updated != 1:
                now = conn.execute(_HEAD, (session_id,)).fetchone()
                raise lost_race(session_id, head, None if now is None else now[0])
            conn.executemany(_INSERT_MESSAGE, [(session_id, *r) for r in rows])
            if context is not None:
                conn.execute(_INSERT_CONTEXT, (session_id, *context))

    def _sessions(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT session_id FROM thinkseal_sessions ORDER BY rowid")]

    def _delete(self, session_id: str) -> bool:
        with self._transaction("IMMEDIATE") as conn:
            found = conn.execute("DELETE FROM thinkseal_sessions WHERE session_id = ?", (session_id,)).rowcount
            conn.execute("DELETE FROM thinkseal_messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM thinkseal_contexts WHERE session_id = ?", (session_id,))
            return found == 1

    def _fork(self, source: str, length: int, session_id: str) -> None:
        with self._transaction("IMMEDIATE") as conn:
            if conn.execute(_HEAD, (session_id,)).fetchone() is not None:
                raise conflict(session_id, None, None)
            self._head_in(conn, source)
            chain = CHAIN_START
            if length:
                chain = conn.execute(
                    "SELECT chain FROM thinkseal_messages WHERE session_id = ? AND position = ?", (source, length - 1)
                ).fetchone()[0]
            contexts = conn.execute(
                "SELECT count(*) FROM thinkseal_contexts WHERE session_id = ? AND position <= ?", (source, length)
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO thinkseal_sessions (session_id, length, chain, contexts) VALUES (?, ?, ?, ?)",
                (session_id, length, chain, contexts),
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

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class AsyncSQLiteStore(AsyncStore):
    """``SQLiteStore`` for asyncio: each call runs in a worker thread
    (``asyncio.to_thread``), so the event loop never waits on the disk."""

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *, timeout: float = 30.0) -> None:
        super().__init__()
        self.sync = SQLiteStore(path, timeout=timeout)

    async def _head(self, session_id: str) -> Head:
        return await asyncio.to_thread(self.sync._head, session_id)

    async def _read(self, session_id: str, start: int) -> tuple[Head, list[MessageRow]]:
        return await asyncio.to_thread(self.sync._read, session_id, start)

    async def _insert(self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None) -> None:
        await asyncio.to_thread(self.sync._insert, session_id, rows, chain, context)

    async def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        await asyncio.to_thread(self.sync._append_rows, session_id, head, rows, chain, context)

    async def _sessions(self) -> list[str]:
        return await asyncio.to_thread(self.sync._sessions)

    async def _delete(self, session_id: str) -> bool:
        return await asyncio.to_thread(self.sync._delete, session_id)

    async def _fork(self, source: str, length: int, session_id: str) -> None:
        await asyncio.to_thread(self.sync._fork, source, length, session_id)

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)
