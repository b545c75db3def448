"""PostgreSQL through psycopg 3 (the ``store-postgres`` extra), sync and asyncio.

An append is one transaction: a conditional ``UPDATE`` of the session row
(``WHERE length = expected AND chain = ... AND contexts = ... AND epoch = ...``),
which takes the row's lock, so a concurrent append waits for it and then finds
the condition false (``ConflictError``), then one ``INSERT`` per new message
(``COPY`` for many). The primary key (session, position) refuses a duplicate
position even to a writer that skipped the condition. A ``replace`` is the same
conditional ``UPDATE`` (a new epoch), then the old rows deleted and the new ones
written, in one transaction. A read of a session's row and its messages runs in
one ``REPEATABLE READ`` read-only transaction, so it sees one snapshot even
while a ``replace`` commits. Text columns come back as ``bytes`` from a
``SQL_ASCII`` database; ``_codec`` checks them as UTF-8.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg

from .._binding import FINGERPRINT_VERSION
from .._errors import ValidationError
from ._base import AsyncStore, Store
from ._codec import (
    CHAIN_START,
    ContextRow,
    FragmentIndex,
    FragmentRow,
    Head,
    MessageRow,
    SessionInfo,
    SessionNotFoundError,
    Tail,
    advance_params,
    bad_row,
    conflict,
    data_parts,
    digest_of,
    fragment_index_of,
    fragment_parts,
    fragment_rows,
    head_of,
    listed_id,
    listed_info,
    lost_race,
    missing_row,
    replace_params,
    sql_row,
)

__all__ = ["AsyncPostgresStore", "PostgresStore"]

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
# Rows written with COPY rather than one INSERT each (a bulk import).
_COPY_FROM = 16
# Rows converted by psycopg per batch in the asyncio store, which yields to the
# event loop between batches (a batch of 1.6 KB messages takes about 1 ms).
_FETCH_BATCH = 1000
# `_SQL.read`'s rows: a message row's four columns, then `_SQL.head`'s eleven.
_READ_HEAD = 4
_HEAD_COLUMNS = 11
_FORK_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"
_ADVISORY_LOCK = "SELECT pg_advisory_xact_lock(7218190011)"

# Columns added to thinkseal_sessions since the first release: tables created
# before them get them on open, with the values their sessions had
# (fingerprint version 1, the only one there was; no rewrite yet; no metadata).
ADDED_COLUMNS = (
    ("version", "integer NOT NULL DEFAULT 1"),
    ("epoch", "bigint NOT NULL DEFAULT 0"),
    ("metadata", "text NOT NULL DEFAULT '{}'"),
)


class _SQL:
    """The statements, for tables in ``schema`` (the search path when None)."""

    def __init__(self, schema: str | None) -> None:
        if schema is not None and not _SCHEMA_NAME.fullmatch(schema):
            raise ValidationError("schema: expected a lower-case SQL identifier", path="schema")
        q = f'"{schema}".' if schema else ""
        s, m, c = f"{q}thinkseal_sessions", f"{q}thinkseal_messages", f"{q}thinkseal_contexts"
        f, p = f"{q}thinkseal_fragments", f"{q}thinkseal_fragment_parts"
        self.sessions_table = s
        self.create = (
            (f'CREATE SCHEMA IF NOT EXISTS "{schema}";' if schema else "")
            + f"""
CREATE TABLE IF NOT EXISTS {s} (
    session_id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    length integer NOT NULL,
    chain bytea NOT NULL,
    contexts integer NOT NULL,
    version integer NOT NULL DEFAULT 1,
    epoch bigint NOT NULL DEFAULT 0,
    metadata text NOT NULL DEFAULT '{{}}'
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
);
CREATE TABLE IF NOT EXISTS {f} (
    session_id text NOT NULL REFERENCES {s} ON DELETE CASCADE,
    target bytea NOT NULL,
    wire_key text NOT NULL,
    start bigint NOT NULL,
    stop bigint NOT NULL,
    entry bytea NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (session_id, target, wire_key, start)
);
CREATE TABLE IF NOT EXISTS {p} (
    session_id text NOT NULL,
    target bytea NOT NULL,
    wire_key text NOT NULL,
    start bigint NOT NULL,
    part integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (session_id, target, wire_key, start, part),
    FOREIGN KEY (session_id, target, wire_key, start) REFERENCES {f} ON DELETE CASCADE
);"""
        )
        self.columns = (
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped"
        )
        self.add_column = f"ALTER TABLE {s} ADD COLUMN IF NOT EXISTS {{}} {{}}"
        # The session row, the chain value of its last message row and its
        # latest context row, in one statement (one snapshot).
        head_columns = (
            "s.length, s.chain, s.contexts, s.version, s.epoch, s.metadata, "
            f"(SELECT m.chain FROM {m} m WHERE m.session_id = s.session_id AND m.position = s.length - 1), "
            "c.version, c.position, c.body, c.digest"
        )
        head_from = (
            f"FROM {s} s LEFT JOIN {c} c ON c.session_id = s.session_id AND c.version = s.contexts - 1 "
            "WHERE s.session_id = %(id)s"
        )
        self.head = f"SELECT {head_columns} {head_from}"
        self.rows = (
            f"SELECT position, body, digest, chain FROM {m} "
            "WHERE session_id = %s AND position >= %s AND position < %s ORDER BY position"
        )

        def with_rows(more: list[str], first: str) -> str:
            # The session row (`head`'s columns, then `more`) and its message
            # rows from `first` to its length, in one statement: one snapshot
            # without a transaction. Each row has a message row's columns,
            # then the session row's: the session row's position is NULL, a
            # message row's session columns are.
            nulls = ", NULL" * (_HEAD_COLUMNS + len(more))
            return (
                f"SELECT NULL, NULL, NULL, NULL, {', '.join([head_columns, *more])} {head_from} "
                f"UNION ALL (SELECT position, body, digest, chain{nulls} FROM {m} "
                f"WHERE session_id = %(id)s AND position >= {first} "
                f"AND position < (SELECT length FROM {s} WHERE session_id = %(id)s) ORDER BY position)"
            )

        # A load's or refresh's read (five round trips before: BEGIN, its
        # mode, the session row, the rows, COMMIT).
        self.read = with_rows([], "%(start)s")
        # A lazy load's plan and rows: the rows from `back` before the end of
        # the session's last fragment row (from its start when it has none),
        # the session row carrying the fragment index (an array of records)
        # and that first position.
        index = (
            "SELECT array_agg(ROW(target, wire_key, start, stop, entry) ORDER BY target, wire_key, start) "
            f"FROM {f} WHERE session_id = s.session_id"
        )
        first = "(SELECT first FROM t)"
        self.read_lazy = (
            f"WITH t (first) AS (SELECT GREATEST(COALESCE(max(stop), 0) - %(back)s, 0) FROM {f} "
            f"WHERE session_id = %(id)s) " + with_rows([f"({index})", first], first)
        )
        self.insert_new_session = (
            f"INSERT INTO {s} (session_id, length, chain, contexts, version, epoch, metadata) "
            "VALUES (%s, %s, %s, %s, %s, 0, %s) ON CONFLICT (session_id) DO NOTHING"
        )
        self.insert_fork = (
            f"INSERT INTO {s} (session_id, length, chain, contexts, version, epoch, metadata) "
            f"SELECT %s, %s, %s, %s, version, 0, metadata FROM {s} WHERE session_id = %s "
            "ON CONFLICT (session_id) DO NOTHING"
        )
        self.insert_message = f"INSERT INTO {m} (session_id, position, body, digest, chain) VALUES (%s, %s, %s, %s, %s)"
        self.copy_messages = f"COPY {m} (session_id, position, body, digest, chain) FROM STDIN"
        self.insert_context = (
            f"INSERT INTO {c} (session_id, version, position, body, digest) VALUES (%s, %s, %s, %s, %s)"
        )
        self.advance = (
            f"UPDATE {s} SET length = %s, chain = %s, contexts = %s "
            "WHERE session_id = %s AND length = %s AND chain = %s AND contexts = %s AND epoch = %s"
        )
        # A short append in one statement: the session row advanced as by
        # `advance`, and only then (joined to it) its message rows and its
        # context row inserted; the count says whether it advanced. Longer
        # ones are copied in (`_write_rows`).
        self.append = (
            f"WITH advanced AS ({self.advance} RETURNING session_id), "
            f"added AS (INSERT INTO {m} (session_id, position, body, digest, chain) "
            "SELECT advanced.session_id, r.position, r.body, r.digest, r.chain FROM advanced, "
            "unnest(%s::integer[], %s::text[], %s::bytea[], %s::bytea[]) AS r (position, body, digest, chain)), "
            f"context AS (INSERT INTO {c} (session_id, version, position, body, digest) "
            "SELECT advanced.session_id, r.version, r.position, r.body, r.digest FROM advanced, "
            "unnest(%s::integer[], %s::integer[], %s::text[], %s::bytea[]) AS r (version, position, body, digest)) "
            "SELECT count(*) FROM advanced"
        )
        self.replace = (
            f"UPDATE {s} SET length = %s, chain = %s, contexts = %s, version = %s, epoch = %s "
            "WHERE session_id = %s AND length = %s AND chain = %s AND contexts = %s AND epoch = %s"
        )
        self.delete_rows = f"DELETE FROM {m} WHERE session_id = %s"
        self.delete_contexts = f"DELETE FROM {c} WHERE session_id = %s"
        # Fragments describe the message rows: a replace drops them (a delete cascades).
        self.delete_fragments = f"DELETE FROM {f} WHERE session_id = %s"
        self.rows_at = (
            f"SELECT position, body, digest, chain FROM {m} "
            "WHERE session_id = %s AND position = ANY(%s) ORDER BY position"
        )
        self.fragment_index = (
            f"SELECT target, wire_key, start, stop, entry FROM {f} WHERE session_id = %s "
            "ORDER BY target, wire_key, start"
        )
        # A target's rows and the parts of their data, in one statement: a
        # row's data is its first part, the others (of a row of more than
        # FRAGMENT_PART bytes) are in the parts table, read with a NULL stop.
        # Not ordered here (ordering the union would sort megabytes): the few
        # rows are put in order as they are read (`_fragment_rows`).
        self.fragments = (
            f"SELECT wire_key, start, stop, entry, data, 0 FROM {f} WHERE session_id = %s AND target = %s "
            f"UNION ALL SELECT wire_key, start, NULL, NULL, data, part FROM {p} WHERE session_id = %s AND target = %s"
        )
        # A fragment row written, in one statement: the session row locked (FOR
        # KEY SHARE, so a delete cannot commit between the check and the
        # writes; the foreign keys would refuse an orphan anyway), the rows it
        # merges deleted (their parts cascade), the row put, and the parts of
        # its data after the first put over those of the row it replaces. Of
        # the old parts, only those numbered past the new row's last are
        # deleted: no part row is both deleted and written by the statement.
        key = "session_id = %(id)s AND target = %(target)s AND wire_key = %(key)s"
        self.put_fragment = (
            f"WITH held AS (SELECT 1 FROM {s} WHERE session_id = %(id)s FOR KEY SHARE), "
            f"merged AS (DELETE FROM {f} WHERE {key} AND start > %(start)s AND start < %(stop)s "
            "AND EXISTS (SELECT 1 FROM held)), "
            f"dropped AS (DELETE FROM {p} WHERE {key} AND start = %(start)s AND part > %(parts)s "
            "AND EXISTS (SELECT 1 FROM held)), "
            f"written AS (INSERT INTO {f} (session_id, target, wire_key, start, stop, entry, data) "
            "SELECT %(id)s, %(target)s, %(key)s, %(start)s, %(stop)s, %(entry)s, %(first)s "
            "WHERE EXISTS (SELECT 1 FROM held) ON CONFLICT (session_id, target, wire_key, start) "
            "DO UPDATE SET stop = EXCLUDED.stop, entry = EXCLUDED.entry, data = EXCLUDED.data) "
            f"INSERT INTO {p} (session_id, target, wire_key, start, part, data) "
            "SELECT %(id)s, %(target)s, %(key)s, %(start)s, number, part "
            "FROM unnest(%(numbers)s::integer[], %(rest)s::bytea[]) AS rest (number, part) "
            "WHERE EXISTS (SELECT 1 FROM held) ON CONFLICT (session_id, target, wire_key, start, part) "
            "DO UPDATE SET data = EXCLUDED.data"
        )
        self.set_metadata = f"UPDATE {s} SET metadata = %s WHERE session_id = %s"
        self.sessions = f"SELECT session_id FROM {s} ORDER BY seq"
        self.infos = f"SELECT session_id, length, version, metadata FROM {s} ORDER BY seq"
        self.delete = f"DELETE FROM {s} WHERE session_id = %s"
        self.chain_at = f"SELECT chain FROM {m} WHERE session_id = %s AND position = %s"
        self.count_rows = f"SELECT count(*) FROM {m} WHERE session_id = %s AND position >= 0 AND position < %s"
        self.positions = (
            f"SELECT position FROM {m} WHERE session_id = %s AND position >= 0 AND position < %s ORDER BY position"
        )
        self.count_contexts = f"SELECT count(*) FROM {c} WHERE session_id = %s AND position <= %s"
        self.copy_rows = (
            f"INSERT INTO {m} (session_id, position, body, digest, chain) "
            f"SELECT %s, position, body, digest, chain FROM {m} WHERE session_id = %s AND position < %s"
        )
        self.copy_contexts = (
            f"INSERT INTO {c} (session_id, version, position, body, digest) "
            f"SELECT %s, version, position, body, digest FROM {c} WHERE session_id = %s AND position <= %s"
        )


def _head_of(session_id: str, row: Sequence[Any] | None) -> Head | None:
    if row is None:
        return None
    context = None if row[7] is None else row[7:11]
    return head_of(
        session_id,
        length=row[0],
        chain=row[1],
        contexts=row[2],
        version=row[3],
        epoch=row[4],
        metadata=row[5],
        last_chain=row[6],
        context=context,
    )


def _split_read(session_id: str, raw: list[tuple[Any, ...]]) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    """The head row of `_SQL.read` (or `read_lazy`) and its message rows
    (``raw``, the head row taken out). PostgreSQL returns a union's parts in
    order, so the head row comes first; it is looked for should a plan ever
    put it elsewhere. The message rows come in order from their one part, as
    each is checked at its position."""
    at = 0 if raw and raw[0][0] is None else next((i for i, row in enumerate(raw) if row[0] is None), None)
    if at is None:
        raise SessionNotFoundError(session_id)
    return raw.pop(at), raw


def _read_head(session_id: str, row: tuple[Any, ...]) -> Head:
    return _found(session_id, _head_of(session_id, row[_READ_HEAD : _READ_HEAD + _HEAD_COLUMNS]))


def _fragment_rows(target: bytes, raw: list[tuple[Any, ...]]) -> list[FragmentRow]:
    """`_SQL.fragments`' rows, each with its data's parts in order, in the
    order of their keys."""
    rows: list[tuple[Any, ...]] = []
    rest: dict[tuple[object, object], list[tuple[int, object]]] = {}
    for wire_key, start, stop, entry, data, part in raw:
        if stop is None:
            rest.setdefault((wire_key, start), []).append((part, data))
        else:
            rows.append((wire_key, start, stop, entry, data))
    rows.sort(key=lambda row: (row[0], row[1]))
    read = [
        (wire_key, start, stop, entry, data_parts([(0, data), *sorted(rest.get((wire_key, start), ()))]))
        for wire_key, start, stop, entry, data in rows
    ]
    return fragment_rows(target, read)


def _found(session_id: str, head: Head | None) -> Head:
    if head is None:
        raise SessionNotFoundError(session_id)
    return head


def _raw_bytes(raw: Sequence[Sequence[Any]]) -> int:
    return sum(len(r[1]) for r in raw if isinstance(r[1], (str, bytes)))


def _append_params(advance: tuple[Any, ...], rows: list[MessageRow], context: ContextRow | None) -> tuple[Any, ...]:
    """`_SQL.append`'s parameters: `advance`'s, then the rows' and the context row's columns as arrays."""
    contexts = [] if context is None else [context]
    return (
        *advance,
        [r.position for r in rows],
        [r.body for r in rows],
        [r.digest for r in rows],
        [r.chain for r in rows],
        [c.version for c in contexts],
        [c.position for c in contexts],
        [c.body for c in contexts],
        [c.digest for c in contexts],
    )


def _params(session_id: str, rows: list[MessageRow]) -> list[tuple[Any, ...]]:
    return [(session_id, *r) for r in rows]


def _first_missing(positions: Sequence[Sequence[Any]], length: int) -> int:
    return next((i for i, (p,) in enumerate(positions) if p != i), min(len(positions), length))


def _names(rows: Sequence[Sequence[Any]]) -> set[str]:
    return {r[0].decode() if isinstance(r[0], bytes) else r[0] for r in rows}


class PostgresStore(Store):
    """Sessions in PostgreSQL (psycopg 3). ``conninfo`` is a libpq connection
    string or URL; the store opens connections as threads need them (one per
    concurrent call, reused) and closes them in ``close()``. Tables live in
    ``schema`` (created if missing) or the connection's search path; they are
    created on first use, and tables made by an earlier release are brought up
    to date (docs/store.md)."""

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str | None = None,
        fragment_secret: bytes | str | None = None,
        **connect_kwargs: Any,
    ) -> None:
        super().__init__(fragment_secret)
        self._conninfo = conninfo
        self._kwargs = connect_kwargs
        self._sql = _SQL(schema)
        self._free: list[psycopg.Connection[tuple[Any, ...]]] = []
        self._all: list[psycopg.Connection[tuple[Any, ...]]] = []
        self._lock = threading.Lock()
        sql = self._sql
        with self._connection() as conn, conn.transaction():
            # Serialised: CREATE TABLE IF NOT EXISTS races with itself.
            conn.execute(_ADVISORY_LOCK)
            conn.execute(sql.create)
            have = _names(conn.execute(sql.columns, (sql.sessions_table,)).fetchall())
            for name, definition in ADDED_COLUMNS:
                if name not in have:
                    conn.execute(sql.add_column.format(name, definition))

    @staticmethod
    def _row(session_id: str, position: int, item: Any) -> MessageRow:
        return sql_row(session_id, position, item)

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

    def _head_in(self, conn: psycopg.Connection[tuple[Any, ...]], session_id: str) -> Head | None:
        return _head_of(session_id, conn.execute(self._sql.head, {"id": session_id}).fetchone())

    def _head(self, session_id: str) -> Head:
        with self._connection() as conn:
            return _found(session_id, self._head_in(conn, session_id))

    def _read(self, session_id: str, start: int) -> tuple[Head, list[tuple[Any, ...]]]:
        with self._connection() as conn:
            raw = conn.execute(self._sql.read, {"id": session_id, "start": start}, binary=True).fetchall()
        row, raw = _split_read(session_id, raw)
        return _read_head(session_id, row), raw

    def _write_rows(
        self,
        conn: psycopg.Connection[tuple[Any, ...]],
        session_id: str,
        rows: list[MessageRow],
        context: ContextRow | None,
    ) -> None:
        with conn.cursor() as cur:
            if len(rows) >= _COPY_FROM:
                with cur.copy(self._sql.copy_messages) as copy:
                    for row in rows:
                        copy.write_row((session_id, *row))
            elif rows:
                cur.executemany(self._sql.insert_message, _params(session_id, rows))
        if context is not None:
            conn.execute(self._sql.insert_context, (session_id, *context))

    def _insert(
        self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None, metadata: str
    ) -> None:
        with self._connection() as conn, conn.transaction():
            params = (session_id, len(rows), chain, 0 if context is None else 1, FINGERPRINT_VERSION, metadata)
            if conn.execute(self._sql.insert_new_session, params).rowcount != 1:
                raise conflict(session_id, None, None)
            self._write_rows(conn, session_id, rows, context)

    def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        params = advance_params(session_id, head, rows, chain, context)
        with self._connection() as conn:
            if len(rows) < _COPY_FROM:
                advanced = conn.execute(self._sql.append, _append_params(params, rows, context)).fetchone()
                if advanced != (1,):
                    raise lost_race(session_id, head, self._head_in(conn, session_id))
                return
            with conn.transaction():
                if conn.execute(self._sql.advance, params).rowcount != 1:
                    raise lost_race(session_id, head, self._head_in(conn, session_id))
                self._write_rows(conn, session_id, rows, context)

    def _replace_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> int:
        params = replace_params(session_id, head, rows, chain, context)
        with self._connection() as conn, conn.transaction():
            if conn.execute(self._sql.replace, params).rowcount != 1:
                raise lost_race(session_id, head, self._head_in(conn, session_id))
            conn.execute(self._sql.delete_rows, (session_id,))
            conn.execute(self._sql.delete_contexts, (session_id,))
            conn.execute(self._sql.delete_fragments, (session_id,))
            self._write_rows(conn, session_id, rows, context)
            return head.epoch + 1

    def _set_metadata(self, session_id: str, metadata: str) -> bool:
        with self._connection() as conn:
            return conn.execute(self._sql.set_metadata, (metadata, session_id)).rowcount == 1

    def _sessions(self) -> list[str]:
        with self._connection() as conn:
            return [listed_id(r[0], i) for i, r in enumerate(conn.execute(self._sql.sessions))]

    def _infos(self) -> list[SessionInfo]:
        with self._connection() as conn:
            return [listed_info(r[0], i, *r[1:]) for i, r in enumerate(conn.execute(self._sql.infos))]

    def _delete(self, session_id: str) -> bool:
        with self._connection() as conn:
            return conn.execute(self._sql.delete, (session_id,)).rowcount == 1

    def _fork(self, source: str, length: int, session_id: str) -> None:
        sql = self._sql
        try:
            with self._connection() as conn, conn.transaction():
                conn.execute(_FORK_SNAPSHOT)  # the source's rows as of one snapshot, even if it is replaced
                head = _found(source, self._head_in(conn, source))
                length = min(length, head.length)
                if conn.execute(sql.count_rows, (source, length)).fetchone() != (length,):
                    positions = conn.execute(sql.positions, (source, length)).fetchall()
                    raise missing_row(source, _first_missing(positions, length))
                chain: bytes | None = CHAIN_START
                if length:
                    found = conn.execute(sql.chain_at, (source, length - 1)).fetchone()
                    chain = digest_of(found[0] if found else None)
                    if chain is None:
                        raise bad_row(source, length - 1, "the stored chain value is not 32 bytes")
                contexts = conn.execute(sql.count_contexts, (source, length)).fetchone()
                params = (session_id, length, chain, contexts[0] if contexts else 0, source)
                if conn.execute(sql.insert_fork, params).rowcount != 1:
                    raise conflict(session_id, None, None)
                conn.execute(sql.copy_rows, (session_id, source, length))
                conn.execute(sql.copy_contexts, (session_id, source, length))
        except psycopg.errors.SerializationFailure:  # another fork created ``session_id`` meanwhile
            raise conflict(session_id, None, None) from None

    def _rows_between(self, session_id: str, start: int, end: int) -> list[Any]:
        with self._connection() as conn:
            return conn.execute(self._sql.rows, (session_id, start, end), binary=True).fetchall()

    def _rows_at(self, session_id: str, positions: Sequence[int]) -> list[Any]:
        if not positions:
            return []
        with self._connection() as conn:
            return conn.execute(self._sql.rows_at, (session_id, list(positions)), binary=True).fetchall()

    def _fragment_index(self, session_id: str) -> list[tuple[bytes, str, int, int, bytes]]:
        with self._connection() as conn:
            rows = conn.execute(self._sql.fragment_index, (session_id,), binary=True).fetchall()
        return [f for f in map(fragment_index_of, rows) if f is not None]

    def _fragment_index_and_tail(self, session_id: str, back: int) -> tuple[list[FragmentIndex], Tail | None, object]:
        with self._connection() as conn:
            raw = conn.execute(self._sql.read_lazy, {"id": session_id, "back": back}, binary=True).fetchall()
        row, raw = _split_read(session_id, raw)
        index, first = row[_READ_HEAD + _HEAD_COLUMNS :]
        head = _read_head(session_id, row)
        return [f for f in map(fragment_index_of, index or ()) if f is not None], (head, first, raw), None

    def _fragments(self, session_id: str, target: bytes, hint: object = None) -> list[FragmentRow]:
        with self._connection() as conn:
            raw = conn.execute(self._sql.fragments, (session_id, target, session_id, target), binary=True).fetchall()
        return _fragment_rows(target, raw)

    def _put_fragment(
        self, session_id: str, target: bytes, wire_key: str, start: int, end: int, entry: bytes, data: bytes
    ) -> None:
        first, *rest = fragment_parts(data)
        params = {
            "id": session_id,
            "target": target,
            "key": wire_key,
            "start": start,
            "stop": end,
            "entry": entry,
            "first": first,
            "parts": len(rest),
            "numbers": list(range(1, len(rest) + 1)),
            "rest": rest,
        }
        with self._connection() as conn:
            conn.execute(self._sql.put_fragment, params)

    def close(self) -> None:
        with self._lock:
            conns, self._all, self._free = self._all, [], []
        for conn in conns:
            conn.close()


class AsyncPostgresStore(AsyncStore):
    """``PostgresStore`` on ``psycopg.AsyncConnection``: one connection per
    concurrent call (a transaction never shares its connection with another
    task), opened as needed and reused. Create it with ``await
    AsyncPostgresStore.open(conninfo, schema=...)``. Rows read are converted in
    batches, the event loop served between them."""

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str | None = None,
        fragment_secret: bytes | str | None = None,
        **connect_kwargs: Any,
    ) -> None:
        super().__init__(fragment_secret)
        self._conninfo = conninfo
        self._kwargs = connect_kwargs
        self._schema = schema
        self._sql = _SQL(schema)
        self._free: list[psycopg.AsyncConnection[tuple[Any, ...]]] = []
        self._all: list[psycopg.AsyncConnection[tuple[Any, ...]]] = []
        self._ready = False
        self._twin: PostgresStore | None = None

    @staticmethod
    def _row(session_id: str, position: int, item: Any) -> MessageRow:
        return sql_row(session_id, position, item)

    @staticmethod
    def _raw_bytes(raw: Any) -> int:
        return _raw_bytes(raw)

    @classmethod
    async def open(
        cls,
        conninfo: str,
        *,
        schema: str | None = None,
        fragment_secret: bytes | str | None = None,
        **connect_kwargs: Any,
    ) -> AsyncPostgresStore:
        """A store whose tables exist (the first call of any method creates them too)."""
        store = cls(conninfo, schema=schema, fragment_secret=fragment_secret, **connect_kwargs)
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
                sql = self._sql
                async with conn.transaction():
                    await conn.execute(_ADVISORY_LOCK)
                    await conn.execute(sql.create)
                    have = _names(await (await conn.execute(sql.columns, (sql.sessions_table,))).fetchall())
                    for name, definition in ADDED_COLUMNS:
                        if name not in have:
                            await conn.execute(sql.add_column.format(name, definition))
                self._ready = True
            yield conn
        finally:
            if conn.broken or conn.closed:
                self._all.remove(conn)
            else:
                self._free.append(conn)

    async def _head_in(self, conn: psycopg.AsyncConnection[tuple[Any, ...]], session_id: str) -> Head | None:
        return _head_of(session_id, await (await conn.execute(self._sql.head, {"id": session_id})).fetchone())

    async def _head(self, session_id: str) -> Head:
        async with self._connection() as conn:
            return _found(session_id, await self._head_in(conn, session_id))

    async def _read(self, session_id: str, start: int) -> tuple[Head, list[tuple[Any, ...]]]:
        async with self._connection() as conn:
            cur = await conn.execute(self._sql.read, {"id": session_id, "start": start}, binary=True)
            rows: list[tuple[Any, ...]] = []
            while batch := await cur.fetchmany(_FETCH_BATCH):
                rows += batch
                if len(batch) == _FETCH_BATCH:
                    await asyncio.sleep(0)  # the rows are converted here, on the loop: let it serve others
        row, rows = _split_read(session_id, rows)
        return _read_head(session_id, row), rows

    async def _write_rows(
        self,
        conn: psycopg.AsyncConnection[tuple[Any, ...]],
        session_id: str,
        rows: list[MessageRow],
        context: ContextRow | None,
    ) -> None:
        async with conn.cursor() as cur:
            if len(rows) >= _COPY_FROM:
                async with cur.copy(self._sql.copy_messages) as copy:
                    for row in rows:
                        await copy.write_row((session_id, *row))
            elif rows:
                await cur.executemany(self._sql.insert_message, _params(session_id, rows))
        if context is not None:
            await conn.execute(self._sql.insert_context, (session_id, *context))

    async def _insert(
        self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None, metadata: str
    ) -> None:
        async with self._connection() as conn, conn.transaction():
            params = (session_id, len(rows), chain, 0 if context is None else 1, FINGERPRINT_VERSION, metadata)
            if (await conn.execute(self._sql.insert_new_session, params)).rowcount != 1:
                raise conflict(session_id, None, None)
            await self._write_rows(conn, session_id, rows, context)

    async def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        params = advance_params(session_id, head, rows, chain, context)
        async with self._connection() as conn:
            if len(rows) < _COPY_FROM:
                cur = await conn.execute(self._sql.append, _append_params(params, rows, context))
                if await cur.fetchone() != (1,):
                    raise lost_race(session_id, head, await self._head_in(conn, session_id))
                return
            async with conn.transaction():
                if (await conn.execute(self._sql.advance, params)).rowcount != 1:
                    raise lost_race(session_id, head, await self._head_in(conn, session_id))
                await self._write_rows(conn, session_id, rows, context)

    async def _replace_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> int:
        params = replace_params(session_id, head, rows, chain, context)
        async with self._connection() as conn, conn.transaction():
            if (await conn.execute(self._sql.replace, params)).rowcount != 1:
                raise lost_race(session_id, head, await self._head_in(conn, session_id))
            await conn.execute(self._sql.delete_rows, (session_id,))
            await conn.execute(self._sql.delete_contexts, (session_id,))
            await conn.execute(self._sql.delete_fragments, (session_id,))
            await self._write_rows(conn, session_id, rows, context)
            return head.epoch + 1

    async def _set_metadata(self, session_id: str, metadata: str) -> bool:
        async with self._connection() as conn:
            return (await conn.execute(self._sql.set_metadata, (metadata, session_id))).rowcount == 1

    async def _sessions(self) -> list[str]:
        async with self._connection() as conn:
            rows = await (await conn.execute(self._sql.sessions)).fetchall()
        return [listed_id(r[0], i) for i, r in enumerate(rows)]

    async def _infos(self) -> list[SessionInfo]:
        async with self._connection() as conn:
            rows = await (await conn.execute(self._sql.infos)).fetchall()
        return [listed_info(r[0], i, *r[1:]) for i, r in enumerate(rows)]

    async def _delete(self, session_id: str) -> bool:
        async with self._connection() as conn:
            return (await conn.execute(self._sql.delete, (session_id,))).rowcount == 1

    async def _fork(self, source: str, length: int, session_id: str) -> None:
        sql = self._sql
        try:
            async with self._connection() as conn, conn.transaction():
                await conn.execute(_FORK_SNAPSHOT)
                head = _found(source, await self._head_in(conn, source))
                length = min(length, head.length)
                if await (await conn.execute(sql.count_rows, (source, length))).fetchone() != (length,):
                    positions = await (await conn.execute(sql.positions, (source, length))).fetchall()
                    raise missing_row(source, _first_missing(positions, length))
                chain: bytes | None = CHAIN_START
                if length:
                    found = await (await conn.execute(sql.chain_at, (source, length - 1))).fetchone()
                    chain = digest_of(found[0] if found else None)
                    if chain is None:
                        raise bad_row(source, length - 1, "the stored chain value is not 32 bytes")
                contexts = await (await conn.execute(sql.count_contexts, (source, length))).fetchone()
                params = (session_id, length, chain, contexts[0] if contexts else 0, source)
                if (await conn.execute(sql.insert_fork, params)).rowcount != 1:
                    raise conflict(session_id, None, None)
                await conn.execute(sql.copy_rows, (session_id, source, length))
                await conn.execute(sql.copy_contexts, (session_id, source, length))
        except psycopg.errors.SerializationFailure:
            raise conflict(session_id, None, None) from None

    def _lazy_twin(self) -> PostgresStore:
        if self._twin is None:
            self._twin = PostgresStore(
                self._conninfo, schema=self._schema, fragment_secret=self._fragment_secret, **self._kwargs
            )
        return self._twin

    async def close(self) -> None:
        conns, self._all, self._free = self._all, [], []
        for conn in conns:
            await conn.close()
        twin, self._twin = self._twin, None
        if twin is not None:
            await asyncio.to_thread(twin.close)
