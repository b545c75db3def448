"""PostgreSQL through psycopg 3 (the ``store-postgres`` extra), sync and asyncio.

An append is one transaction: a conditional ``UPDATE`` of the session row
(``WHERE length = expected AND chain = ... AND contexts = ...``), which takes
the row's lock, so a concurrent append waits for it and then finds the
condition false (``ConflictError``), then one ``INSERT`` per new message. The
primary key (session, position) refuses a duplicate position even to a writer
that skipped the condition. Reads need no snapshot: a session's rows never
change, so reading its row first and then its rows below that length is
consistent.
"""

from __future__ import annotations

import re
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg

from .._errors import ValidationError
from ._base import AsyncStore, Store
from ._codec import CHAIN_START, ContextRow, Head, MessageRow, SessionNotFoundError, advance_params, conflict, lost_race

__all__ = ["AsyncPostgresStore", "PostgresStore"]

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
# Rows written with COPY rather than one INSERT each (a bulk import).
_COPY_FROM = 16


class _SQL:
    """The statements, for tables in ``schema`` (the search path when None)."""

    def __init__(self, schema: str | None) -> None:
        if schema is not None and not _SCHEMA_NAME.fullmatch(schema):
            raise ValidationError("schema: expected a lower-case SQL identifier", path="schema")
        q = f'"{schema}".' if schema else ""
        s, m, c = f"{q}thinkseal_sessions", f"{q}thinkseal_messages", f"{q}thinkseal_contexts"
        self.create = (
            (f'CREATE SCHEMA IF NOT EXISTS "{schema}";' if schema else "")
            + f"""
CREATE TABLE IF NOT EXISTS {s} (
    session_id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    length integer NOT NULL,
    chain bytea NOT NULL,
    contexts integer NOT NULL
);
CREATE TABLE IF NOT EXISTS {m} (
    session_id text NOT NULL REFERENCES {s} ON DELETE CASCADE,
    position integer NOT NULL,
    body text NOT NULL,
    digest bytea NOT NULL,
    chain bytea NOT NULL,
    PRIMARY KEY (session_id, position)
);
CREATE TABLE IF NOT EXISTS {c} (
    session_id text NOT NULL REFERENCES {s} ON DELETE CASCADE,
    version integer NOT NULL,
    position integer NOT NULL,
    body text NOT NULL,
    digest bytea NOT NULL,
    PRIMARY KEY (session_id, version)
);"""
        )
        self.head = f"SELECT length, chain, contexts FROM {s} WHERE session_id = %s"
        self.context = f"SELECT version, position, body, digest FROM {c} WHERE session_id = %s AND version = %s"
        self.rows = (
            f"SELECT position, body, digest, chain FROM {m} "
            "WHERE session_id = %s AND position >= %s AND position < %s ORDER BY position"
        )
        self.insert_session = f"INSERT INTO {s} (session_id, length, chain, contexts) VALUES (%s, %s, %s, %s) "
        self.insert_new_session = self.insert_session + "ON CONFLICT (session_id) DO NOTHING"
        self.insert_message = f"INSERT INTO {m} (session_id, position, body, digest, chain) VALUES (%s, %s, %s, %s, %s)"
        self.copy_messages = f"COPY {m} (session_id, position, body, digest, chain) FROM STDIN"
        self.insert_context = (
            f"INSERT INTO {c} (session_id, version, position, body, digest) VALUES (%s, %s, %s, %s, %s)"
        )
        self.advance = (
            f"UPDATE {s} SET length = %s, chain = %s, contexts = %s "
            "WHERE session_id = %s AND length = %s AND chain = %s AND contexts = %s"
        )
        self.sessions = f"SELECT session_id FROM {s} ORDER BY seq"
        self.delete = f"DELETE FROM {s} WHERE session_id = %s"
        self.chain_at = f"SELECT chain FROM {m} WHERE session_id = %s AND position = %s"
        self.count_contexts = f"SELECT count(*) FROM {c} WHERE session_id = %s AND position <= %s"
        self.copy_rows = (
            f"INSERT INTO {m} (session_id, position, body, digest, chain) "
            f"SELECT %s, position, body, digest, chain FROM {m} WHERE session_id = %s AND position < %s"
        )
        self.copy_contexts = (
            f"INSERT INTO {c} (session_id, version, position, body, digest) "
            f"SELECT %s, version, position, body, digest FROM {c} WHERE session_id = %s AND position <= %s"
        )


def _head(sql: _SQL, session_id: str, row: tuple[Any, ...] | None, context: tuple[Any, ...] | None) -> Head:
    if row is None:
        raise SessionNotFoundError(session_id)
    return Head(row[0], bytes(row[1]), row[2], _context(context))


def _context(row: tuple[Any, ...] | None) -> ContextRow | None:
    return None if row is None else ContextRow(row[0], row[1], row[2], bytes(row[3]))


def _message_rows(rows: Sequence[tuple[Any, ...]]) -> list[MessageRow]:
    return [MessageRow(r[0], r[1], bytes(r[2]), bytes(r[3])) for r in rows]


def _params(session_id: str, rows: list[MessageRow]) -> list[tuple[Any, ...]]:
    return [(session_id, *r) for r in rows]


class PostgresStore(Store):
    """Sessions in PostgreSQL (psycopg 3). ``conninfo`` is a libpq connection
    string or URL; the store opens connections as threads need them (one per
    concurrent call, reused) and closes them in ``close()``. Tables live in
    ``schema`` (created if missing) or the connection's search path; they are
    created on first use (docs/store.md)."""

    def __init__(self, conninfo: str, *, schema: str | None = None, **connect_kwargs: Any) -> None:
        super().__init__()
        self._conninfo = conninfo
        self._kwargs = connect_kwargs
        self._sql = _SQL(schema)
        self._free: list[psycopg.Connection[tuple[Any, ...]]] = []
        self._all: list[psycopg.Connection[tuple[Any, ...]]] = []
        self._lock = threading.Lock()
        with self._connection() as conn, conn.transaction():
            # Serialised: CREATE TABLE IF NOT EXISTS races with itself.
            conn.execute("SELECT pg_advisory_xact_lock(7218190011)")
            conn.execute(self._sql.create)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        with self._lock:
            conn = self._free.pop() if self._free else None
        if conn is None:
            conn = psycopg.connect(self._conninfo, autocommit=True, **self._kwargs)
            with self._lock:
                self._all.append(conn)
        try:
            yield conn
        finally:
            with self._lock:
                if conn.broken or conn.closed:
                    self._all.remove(conn)
                else:
                    self._free.append(conn)

    def _head_in(self, conn: psycopg.Connection[tuple[Any, ...]], session_id: str) -> Head:
        row = conn.execute(self._sql.head, (session_id,)).fetchone()
        context = None
        if row is not None and row[2]:
            context = conn.execute(self._sql.context, (session_id, row[2] - 1)).fetchone()
        return _head(self._sql, session_id, row, context)

    def _head(self, session_id: str) -> Head:
        with self._connection() as conn:
            return self._head_in(conn, session_id)

    def _read(self, session_id: str, start: int) -> tuple[Head, list[MessageRow]]:
        with self._connection() as conn:
            head = self._head_in(conn, session_id)
            rows = conn.execute(self._sql.rows, (session_id, start, head.length)).fetchall()
            return head, _message_rows(rows)

    def _write_rows(self, conn: psycopg.Connection[tuple[Any, ...]], session_id: str, rows: list[MessageRow]) -> None:
        with conn.cursor() as cur:
            if len(rows) >= _COPY_FROM:
                with cur.copy(self._sql.copy_messages) as copy:
                    for row in rows:
                        copy.write_row((session_id, *row))
            elif rows:
                cur.executemany(self._sql.insert_message, _params(session_id, rows))

    def _insert(self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None) -> None:
        with self._connection() as conn, conn.transaction():
            params = (session_id, len(rows), chain, 0 if context is None else 1)
            if conn.execute(self._sql.insert_new_session, params).rowcount != 1:
                raise conflict(session_id, None, None)
            self._write_rows(conn, session_id, rows)
            if context is not None:
                conn.execute(self._sql.insert_context, (session_id, *context))

    def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        params = advance_params(session_id, head, rows, chain, context)
        with self._connection() as conn, conn.transaction():
            if conn.execute(self._sql.advance, params).rowcount != 1:
                now = conn.execute(self._sql.head, (session_id,)).fetchone()
                raise lost_race(session_id, head, None if now is None else now[0])
            self._write_rows(conn, session_id, rows)
            if context is not None:
                conn.execute(self._sql.insert_context, (session_id, *context))

    def _sessions(self) -> list[str]:
        with self._connection() as conn:
            return [r[0] for r in conn.execute(self._sql.sessions)]

    def _delete(self, session_id: str) -> bool:
        with self._connection() as conn:
            return conn.execute(self._sql.delete, (session_id,)).rowcount == 1

    def _fork(self, source: str, length: int, session_id: str) -> None:
        sql = self._sql
        with self._connection() as conn, conn.transaction():
            self._head_in(conn, source)
            chain = CHAIN_START
            if length:
                found = conn.execute(sql.chain_at, (source, length - 1)).fetchone()
                chain = bytes(found[0]) if found else CHAIN_START
            contexts = conn.execute(sql.count_contexts, (source, length)).fetchone()
            params = (session_id, length, chain, contexts[0] if contexts else 0)
            if conn.execute(sql.insert_new_session, params).rowcount != 1:
                raise conflict(session_id, None, None)
            conn.execute(sql.copy_rows, (session_id, source, length))
            conn.execute(sql.copy_contexts, (session_id, source, length))

    def close(self) -> None:
        with self._lock:
            conns, self._all, self._free = self._all, [], []
        for conn in conns:
            conn.close()


class AsyncPostgresStore(AsyncStore):
    """``PostgresStore`` on ``psycopg.AsyncConnection``: one connection per
    concurrent call (a transaction never shares its connection with another
    task), opened as needed and reused. Create it with ``await
    AsyncPostgresStore.open(conninfo, schema=...)``."""

    def __init__(self, conninfo: str, *, schema: str | None = None, **connect_kwargs: Any) -> None:
        super().__init__()
        self._conninfo = conninfo
        self._kwargs = connect_kwargs
        self._sql = _SQL(schema)
        self._free: list[psycopg.AsyncConnection[tuple[Any, ...]]] = []
        self._all: list[psycopg.AsyncConnection[tuple[Any, ...]]] = []
        self._ready = False

    @classmethod
    async def open(cls, conninfo: str, *, schema: str | None = None, **connect_kwargs: Any) -> AsyncPostgresStore:
        """A store whose tables exist (the first call of any method creates them too)."""
        store = cls(conninfo, schema=schema, **connect_kwargs)
        async with store._connection():
            pass
        return store

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[tuple[Any, ...]]]:
        conn = self._free.pop() if self._free else None
        if conn is None:
            conn = await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True, **self._kwargs)
            self._all.append(conn)
        try:
            if not self._ready:
                async with conn.transaction():
                    await conn.execute("SELECT pg_advisory_xact_lock(7218190011)")
                    await conn.execute(self._sql.create)
                self._ready = True
            yield conn
        finally:
            if conn.broken or conn.closed:
                self._all.remove(conn)
            else:
                self._free.append(conn)

    async def _head_in(self, conn: psycopg.AsyncConnection[tuple[Any, ...]], session_id: str) -> Head:
        row = await (await conn.execute(self._sql.head, (session_id,))).fetchone()
        context = None
        if row is not None and row[2]:
            cur = await conn.execute(self._sql.context, (session_id, row[2] - 1))
            context = await cur.fetchone()
        return _head(self._sql, session_id, row, context)

    async def _head(self, session_id: str) -> Head:
        async with self._connection() as conn:
            return await self._head_in(conn, session_id)

    async def _read(self, session_id: str, start: int) -> tuple[Head, list[MessageRow]]:
        async with self._connection() as conn:
            head = await self._head_in(conn, session_id)
            cur = await conn.execute(self._sql.rows, (session_id, start, head.length))
            return head, _message_rows(await cur.fetchall())

    async def _write_rows(
        self, conn: psycopg.AsyncConnection[tuple[Any, ...]], session_id: str, rows: list[MessageRow]
    ) -> None:
        async with conn.cursor() as cur:
            if len(rows) >= _COPY_FROM:
                async with cur.copy(self._sql.copy_messages) as copy:
                    for row in rows:
                        await copy.write_row((session_id, *row))
            elif rows:
                await cur.executemany(self._sql.insert_message, _params(session_id, rows))

    async def _insert(self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None) -> None:
        async with self._connection() as conn, conn.transaction():
            params = (session_id, len(rows), chain, 0 if context is None else 1)
            if (await conn.execute(self._sql.insert_new_session, params)).rowcount != 1:
                raise conflict(session_id, None, None)
            await self._write_rows(conn, session_id, rows)
            if context is not None:
                await conn.execute(self._sql.insert_context, (session_id, *context))

    async def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        params = advance_params(session_id, head, rows, chain, context)
        async with self._connection() as conn, conn.transaction():
            if (await conn.execute(self._sql.advance, params)).rowcount != 1:
                now = await (await conn.execute(self._sql.head, (session_id,))).fetchone()
                raise lost_race(session_id, head, None if now is None else now[0])
            await self._write_rows(conn, session_id, rows)
            if context is not None:
                await conn.execute(self._sql.insert_context, (session_id, *context))

    async def _sessions(self) -> list[str]:
        async with self._connection() as conn:
            return [r[0] for r in await (await conn.execute(self._sql.sessions)).fetchall()]

    async def _delete(self, session_id: str) -> bool:
        async with self._connection() as conn:
            return (await conn.execute(self._sql.delete, (session_id,))).rowcount == 1

    async def _fork(self, source: str, length: int, session_id: str) -> None:
        sql = self._sql
        async with self._connection() as conn, conn.transaction():
            await self._head_in(conn, source)
            chain = CHAIN_START
            if length:
                found = await (await conn.execute(sql.chain_at, (source, length - 1))).fetchone()
                chain = bytes(found[0]) if found else CHAIN_START
            contexts = await (await conn.execute(sql.count_contexts, (source, length))).fetchone()
            params = (session_id, length, chain, contexts[0] if contexts else 0)
            if (await conn.execute(sql.insert_new_session, params)).rowcount != 1:
                raise conflict(session_id, None, None)
            await conn.execute(sql.copy_rows, (session_id, source, length))
            await conn.execute(sql.copy_contexts, (session_id, source, length))

    async def close(self) -> None:
        conns, self._all, self._free = self._all, [], []
        for conn in conns:
            await conn.close()
