"""The ledger in PostgreSQL (psycopg 3, the ``store-postgres`` extra), sync
and asyncio.

A write is one transaction: each key is inserted if absent (``ON CONFLICT DO
NOTHING``) and then locked (``SELECT ... FOR UPDATE``), so two workers
recording one datum merge their entries one after the other
(``_backend.merged``) and a datum recorded under two bindings ends as a
conflict whatever the order. Keys are locked in sorted order, so two writes
never wait on each other in a cycle.
"""

from __future__ import annotations

import re
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg

from .._errors import ValidationError
from ._backend import BackendError, Write, merged
from ._entries import Entry
from ._sqlite import entry_of

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_PRUNE_EVERY = 256


class _SQL:
    def __init__(self, schema: str | None) -> None:
        if schema is not None and not _SCHEMA_NAME.fullmatch(schema):
            raise ValidationError("schema: expected a lower-case SQL identifier", path="schema")
        q = f'"{schema}".' if schema else ""
        t = f"{q}thinkseal_ledger"
        self.create = (f'CREATE SCHEMA IF NOT EXISTS "{schema}";' if schema else "") + (
            f"CREATE TABLE IF NOT EXISTS {t} (key bytea PRIMARY KEY, binding text NOT NULL, "
            "checksum bytea NOT NULL, expires double precision, written double precision NOT NULL);"
            f"CREATE INDEX IF NOT EXISTS thinkseal_ledger_written ON {t} (written);"
        )
        self.get = f"SELECT key, binding, checksum, expires FROM {t} WHERE key = ANY(%s)"
        self.claim = (
            f"INSERT INTO {t} (key, binding, checksum, expires, written) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (key) DO NOTHING"
        )
        self.lock = f"SELECT key, binding, checksum, expires FROM {t} WHERE key = ANY(%s) ORDER BY key FOR UPDATE"
        self.update = f"UPDATE {t} SET binding = %s, checksum = %s, expires = %s, written = %s WHERE key = %s"
        self.expire = f"DELETE FROM {t} WHERE expires IS NOT NULL AND expires <= %s"
        self.count = f"SELECT count(*) FROM {t}"
        self.trim = f"DELETE FROM {t} WHERE key IN (SELECT key FROM {t} ORDER BY written LIMIT %s)"


def _updates(rows: Sequence[tuple[Any, ...]], writes: Sequence[Write], now: float) -> list[tuple[Any, ...]]:
    """The UPDATE parameters that merge ``writes`` into the locked ``rows``."""
    held = {bytes(r[0]): entry_of(r[1], r[2], r[3]) for r in rows}
    params = []
    for key, entry, tombstone in sorted(writes, key=lambda w: w[0]):
        new = merged(held.get(key), entry, tombstone, now)
        held[key] = new  # the same key twice in one write merges twice
        params.append((new.binding, new.check, new.expires, now, key))
    return params


class PostgresBackend:
    def __init__(self, conninfo: str, schema: str | None, max_entries: int, **connect_kwargs: Any) -> None:
        self._conninfo = conninfo
        self._kwargs = connect_kwargs
        self._sql = _SQL(schema)
        self._max = max_entries
        self._writes = 0
        self._free: list[psycopg.Connection[tuple[Any, ...]]] = []
        self._lock = threading.Lock()
        with self._connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(7218190012)")  # CREATE ... IF NOT EXISTS races with itself
            conn.execute(self._sql.create)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        with self._lock:
            conn = self._free.pop() if self._free else None
        try:
            if conn is None:
                conn = psycopg.connect(self._conninfo, autocommit=True, **self._kwargs)
            yield conn
        except psycopg.Error as err:
            raise BackendError("ledger: PostgreSQL request failed") from err
        finally:
            if conn is not None and not (conn.broken or conn.closed):
                with self._lock:
                    self._free.append(conn)

    def get(self, keys: Sequence[bytes]) -> dict[bytes, Entry]:
        with self._connection() as conn:
            rows = conn.execute(self._sql.get, (list(keys),)).fetchall()
        return {bytes(r[0]): entry_of(r[1], r[2], r[3]) for r in rows}

    def put(self, writes: Sequence[Write], now: float) -> None:
        keys = sorted({w[0] for w in writes})
        with self._connection() as conn, conn.transaction():
            conn.cursor().executemany(self._sql.claim, [(k, "", b"", 0.0, now) for k in keys])
            rows = conn.execute(self._sql.lock, (keys,)).fetchall()
            # A row just claimed holds an expired placeholder: merging over it writes the entry.
            conn.cursor().executemany(self._sql.update, _updates(rows, writes, now))
            self._writes += 1
            if self._writes % _PRUNE_EVERY == 0:
                self._prune(conn, now)

    def _prune(self, conn: psycopg.Connection[tuple[Any, ...]], now: float) -> None:
        conn.execute(self._sql.expire, (now,))
        (count,) = conn.execute(self._sql.count).fetchone() or (0,)
        if count > self._max:
            conn.execute(self._sql.trim, (count - self._max,))

    def prune(self, now: float) -> None:
        """Remove expired entries, and the oldest beyond ``max_entries``, now."""
        with self._connection() as conn, conn.transaction():
            self._prune(conn, now)

    def close(self) -> None:
        with self._lock:
            free, self._free = self._free, []
        for conn in free:
            conn.close()

    def __repr__(self) -> str:
        return "postgres"


class AsyncPostgresBackend:
    def __init__(self, conninfo: str, schema: str | None, max_entries: int, **connect_kwargs: Any) -> None:
        self._conninfo = conninfo
        self._kwargs = connect_kwargs
        self._sql = _SQL(schema)
        self._max = max_entries
        self._writes = 0
        self._free: list[psycopg.AsyncConnection[tuple[Any, ...]]] = []
        self._created = False

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[tuple[Any, ...]]]:
        conn = self._free.pop() if self._free else None
        try:
            if conn is None:
                conn = await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True, **self._kwargs)
            if not self._created:
                async with conn.transaction():
                    await conn.execute("SELECT pg_advisory_xact_lock(7218190012)")
                    await conn.execute(self._sql.create)
                self._created = True
            yield conn
        except psycopg.Error as err:
            raise BackendError("ledger: PostgreSQL request failed") from err
        finally:
            if conn is not None and not (conn.broken or conn.closed):
                self._free.append(conn)

    async def get(self, keys: Sequence[bytes]) -> dict[bytes, Entry]:
        async with self._connection() as conn:
            rows = await (await conn.execute(self._sql.get, (list(keys),))).fetchall()
        return {bytes(r[0]): entry_of(r[1], r[2], r[3]) for r in rows}

    async def put(self, writes: Sequence[Write], now: float) -> None:
        keys = sorted({w[0] for w in writes})
        async with self._connection() as conn, conn.transaction():
            await conn.cursor().executemany(self._sql.claim, [(k, "", b"", 0.0, now) for k in keys])
            rows = await (await conn.execute(self._sql.lock, (keys,))).fetchall()
            await conn.cursor().executemany(self._sql.update, _updates(rows, writes, now))
            self._writes += 1
            if self._writes % _PRUNE_EVERY == 0:
                await conn.execute(self._sql.expire, (now,))
                (count,) = await (await conn.execute(self._sql.count)).fetchone() or (0,)
                if count > self._max:
                    await conn.execute(self._sql.trim, (count - self._max,))

    async def close(self) -> None:
        free, self._free = self._free, []
        for conn in free:
            await conn.close()

    def __repr__(self) -> str:
        return "postgres (asyncio)"
