"""A database written before sessions recorded their fingerprint version,
epoch and metadata still opens: the store adds the columns (SQLite,
PostgreSQL) with the values those sessions had (version 1, epoch 0, no
metadata), and reads a Redis hash without those fields the same way. The
fragment tables' earlier forms are brought up to date too (their rows are a
cache). The old tables and entries are built here exactly as the earlier
releases wrote them."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, UserMessage
from thinkseal.store import SQLiteStore, _codec

from .conftest import Backend, Blocking
from .histories import CLAUDE, plain, sealed_conversation
from .test_fragment_rows import BIG, K1, T1, put, read_back, stored_values

# The message and context tables, unchanged since the first release, verbatim.
SQLITE_MESSAGES_AND_CONTEXTS = """
CREATE TABLE thinkseal_messages (
    session_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    body TEXT NOT NULL,
    digest BLOB NOT NULL,
    chain BLOB NOT NULL,
    PRIMARY KEY (session_id, position)
) WITHOUT ROWID;
CREATE TABLE thinkseal_contexts (
    session_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    position INTEGER NOT NULL,
    body TEXT NOT NULL,
    digest BLOB NOT NULL,
    PRIMARY KEY (session_id, version)
) WITHOUT ROWID;
"""

# The tables of the first release, verbatim (PostgreSQL adds ``seq``).
OLD_SQLITE = (
    """
CREATE TABLE thinkseal_sessions (
    session_id TEXT PRIMARY KEY,
    length INTEGER NOT NULL,
    chain BLOB NOT NULL,
    contexts INTEGER NOT NULL
);
"""
    + SQLITE_MESSAGES_AND_CONTEXTS
)

OLD_POSTGRES = """
CREATE SCHEMA "{schema}";
CREATE TABLE "{schema}".thinkseal_sessions (
    session_id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    length integer NOT NULL,
    chain bytea NOT NULL,
    contexts integer NOT NULL
);
CREATE TABLE "{schema}".thinkseal_messages (
    session_id text NOT NULL REFERENCES "{schema}".thinkseal_sessions ON DELETE CASCADE,
    position integer NOT NULL,
    body text NOT NULL,
    digest bytea NOT NULL,
    chain bytea NOT NULL,
    PRIMARY KEY (session_id, position)
);
CREATE TABLE "{schema}".thinkseal_contexts (
    session_id text NOT NULL REFERENCES "{schema}".thinkseal_sessions ON DELETE CASCADE,
    version integer NOT NULL,
    position integer NOT NULL,
    body text NOT NULL,
    digest bytea NOT NULL,
    PRIMARY KEY (session_id, version)
);
"""

SID = "old-session"


def write_old_database(backend: Backend, conv: Conversation) -> None:
    rows, chain = _codec.encode_messages(conv.messages, 0, _codec.CHAIN_START)
    context = _codec.encode_context(conv, 0, 0)
    if backend.name == "redis":
        client = backend.redis()
        client.hset(backend.key(SID, "s"), mapping={"length": len(rows), "chain": chain, "contexts": 1})
        client.rpush(backend.key(SID, "m"), *[r.digest + r.chain + str(r.body).encode() for r in rows])
        client.rpush(backend.key(SID, "c"), context.digest + b"%010d" % context.position + str(context.body).encode())
        client.zadd(f"{backend.namespace}:sessions", {SID: client.incr(f"{backend.namespace}:seq")})
        client.close()
        return
    if backend.name == "sqlite":
        with sqlite3.connect(backend.path) as conn:
            conn.executescript(OLD_SQLITE)
    else:
        backend.sql(OLD_POSTGRES.replace("{schema}", backend.namespace))
    backend.sql("INSERT INTO {s} (session_id, length, chain, contexts) VALUES (?, ?, ?, 1)", (SID, len(rows), chain))
    for r in rows:
        backend.sql("INSERT INTO {m} VALUES (?, ?, ?, ?, ?)", (SID, r.position, r.body, r.digest, r.chain))
    backend.sql("INSERT INTO {c} VALUES (?, 0, 0, ?, ?)", (SID, context.body, context.digest))


def session_columns(backend: Backend) -> set[str]:
    if backend.name == "sqlite":
        return {r[1].decode() for r in backend.sql("PRAGMA table_info(thinkseal_sessions)")}
    rows = backend.sql(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ?",
        (backend.namespace, "thinkseal_sessions"),
    )
    return {r[0] for r in rows}


def check_old_session(store: Any, conv: Conversation) -> None:
    assert store.list_sessions() == [SID]
    loaded = store.load(SID)
    assert loaded == conv
    assert {e.reason for e in loaded.replay_report(CLAUDE)} == {"kept"}
    integrity = store.verify(SID)
    assert integrity.ok
    assert integrity.version == thinkseal.FINGERPRINT_VERSION == 1  # the only version the old release wrote
    info = store.info(SID)
    assert (info.length, dict(info.metadata), info.version) == (len(conv), {}, 1)
    assert [s.session_id for s in store.sessions()] == [SID]


def test_an_old_database_opens_and_is_brought_up_to_date(backend: Backend) -> None:
    conv = sealed_conversation(3)
    write_old_database(backend, conv)
    if backend.name != "redis":
        assert {"version", "epoch", "metadata"}.isdisjoint(session_columns(backend))

    store = backend.store()
    if backend.name != "redis":
        assert {"version", "epoch", "metadata"} <= session_columns(backend)
    check_old_session(store, conv)
    check_old_session(backend.store(), conv)  # opening again changes nothing
    asynchronous = Blocking(backend.async_store())
    try:
        check_old_session(asynchronous, conv)
    finally:
        asynchronous.close()

    n = len(conv)
    assert store.append(SID, [UserMessage("after the upgrade")], expected_length=n) == n + 1
    store.set_metadata(SID, {"tags": ["upgraded"]})
    assert store.replace(SID, store.load(SID), expected_length=n + 1) == n + 1
    assert store.info(SID).metadata == {"tags": ["upgraded"]}
    assert store.verify(SID).ok
    assert store.load(SID)[-1] == UserMessage("after the upgrade")


def test_an_old_database_opens_first_in_an_async_store(backend: Backend) -> None:
    conv = sealed_conversation(2)
    write_old_database(backend, conv)
    asynchronous = Blocking(backend.async_store())
    try:
        check_old_session(asynchronous, conv)
        assert asynchronous.append(SID, UserMessage("x"), expected_length=len(conv)) == len(conv) + 1
    finally:
        asynchronous.close()
    assert backend.store().verify(SID).ok


def test_an_up_to_date_sqlite_database_opens_without_its_write_lock(tmp_path: Any) -> None:
    path = str(tmp_path / "busy.db")
    SQLiteStore(path).create(session_id="s")  # the schema is there
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process is writing
    try:
        store = SQLiteStore(path, timeout=0.2)
        assert store.list_sessions() == ["s"]
        store.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


# -- the fragment tables' earlier forms ----------------------------------------


# The tables of the release before fragments, verbatim: its sessions table had
# the three later columns.
PRE_FRAGMENTS_SQLITE = (
    """
CREATE TABLE thinkseal_sessions (
    session_id TEXT PRIMARY KEY,
    length INTEGER NOT NULL,
    chain BLOB NOT NULL,
    contexts INTEGER NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    epoch INTEGER NOT NULL DEFAULT 0,
    metadata TEXT NOT NULL DEFAULT '{}'
);
"""
    + SQLITE_MESSAGES_AND_CONTEXTS
)


def test_a_sqlite_database_from_before_fragments_gets_their_table_on_open(tmp_path: Any) -> None:
    path = str(tmp_path / "old.db")
    with sqlite3.connect(path) as conn:
        conn.executescript(PRE_FRAGMENTS_SQLITE)

    def tables() -> set[str]:
        with sqlite3.connect(path) as conn:
            return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    assert "thinkseal_fragments" not in tables()
    store = SQLiteStore(path)
    try:
        assert "thinkseal_fragments" in tables()
        sid = store.create(Conversation(plain(2)))
        put(store, sid, T1, K1, 0, 2)
        assert store._fragment_index(sid) == [(T1, K1, 0, 2, b"entry 0-2")]
    finally:
        store.close()


# The first form of the fragments table (WITHOUT ROWID): a row's key was the
# whole row, so finding a row read its data whole.
FIRST_FRAGMENTS_SQLITE = """
CREATE TABLE thinkseal_fragments (
    session_id TEXT NOT NULL,
    target BLOB NOT NULL,
    wire_key TEXT NOT NULL,
    start INTEGER NOT NULL,
    stop INTEGER NOT NULL,
    entry BLOB NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (session_id, target, wire_key, start)
) WITHOUT ROWID;
"""


def test_a_sqlite_database_with_the_first_fragments_table_gets_the_keyed_one_on_open(tmp_path: Any) -> None:
    path = str(tmp_path / "first.db")
    first = SQLiteStore(path)
    sid = first.create(Conversation(plain(3)))
    first.close()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE thinkseal_fragments")
        conn.executescript(FIRST_FRAGMENTS_SQLITE)
        conn.execute(
            "INSERT INTO thinkseal_fragments VALUES (?, ?, ?, 0, 2, ?, ?)", (sid, T1, K1, b"old entry", b"old data")
        )
    store = SQLiteStore(path)
    try:
        # A cache over the message rows: its rows go with the old table, the sessions stay.
        assert store._fragment_index(sid) == []
        assert store.load(sid) == Conversation(plain(3))
        put(store, sid, T1, K1, 0, 2)
        put(store, sid, T1, K1, 0, 2, tag="again")  # the key index keeps one row per key
        assert read_back(store, sid, T1) == [(K1, 0, 2, b"entry 0-2again", b"data 0-2again" * 3)]
        with sqlite3.connect(path) as conn:
            (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'thinkseal_fragments'").fetchone()
            plan = conn.execute(
                "EXPLAIN QUERY PLAN SELECT entry FROM thinkseal_fragments WHERE session_id = ? AND target = ?",
                (sid, T1),
            ).fetchall()
        assert "WITHOUT ROWID" not in sql
        assert any("thinkseal_fragments_key" in str(row) for row in plan)
    finally:
        store.close()


@pytest.mark.parametrize("backend", ["redis"], indirect=True)
def test_a_redis_row_of_the_first_form_reads_as_one_part(store: Any, backend: Backend) -> None:
    # The first form's ``:fe`` value was end ':' entry, with the data whole under the row's field.
    sid = store.create(Conversation(plain(4)))
    client = backend.redis()
    field = b"%d:%s%d:%s0" % (len(T1), T1, len(K1), K1.encode())
    client.hset(backend.key(sid, "fe"), field, b"2:entry")
    client.hset(backend.key(sid, "fd"), field, b"data")
    client.close()
    assert read_back(store, sid, T1) == [(K1, 0, 2, b"entry", b"data")]
    store._put_fragment(sid, T1, K1, 0, 2, b"entry", BIG)  # rewritten in parts
    assert read_back(store, sid, T1) == [(K1, 0, 2, b"entry", BIG)]
    assert stored_values(backend, sid) == 4


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_postgres_schema_without_the_parts_table_gets_it_on_open(store: Any, backend: Backend) -> None:
    # The first fragments form kept a row's data whole in its row: such a row reads as one part.
    sid = store.create(Conversation(plain(4)))
    schema = f'"{backend.namespace}"'
    backend.sql(f"DROP TABLE {schema}.thinkseal_fragment_parts")
    backend.sql(
        f"INSERT INTO {schema}.thinkseal_fragments VALUES (?, ?, ?, 0, 2, ?, ?)", (sid, T1, K1, b"entry", b"whole")
    )
    reopened = backend.store()
    assert read_back(reopened, sid, T1) == [(K1, 0, 2, b"entry", b"whole")]
    reopened._put_fragment(sid, T1, K1, 0, 2, b"entry", BIG)
    assert read_back(reopened, sid, T1) == [(K1, 0, 2, b"entry", BIG)]
    assert stored_values(backend, sid) == 4
