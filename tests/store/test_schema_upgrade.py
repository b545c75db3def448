"""A database written before sessions recorded their fingerprint version,
epoch and metadata still opens: the store adds the columns (SQLite,
PostgreSQL) with the values those sessions had (version 1, epoch 0, no
metadata), and reads a Redis hash without those fields the same way. The old
tables and entries are built here exactly as the earlier release wrote them."""

from __future__ import annotations

import sqlite3
from typing import Any

import thinkseal
from thinkseal import Conversation, UserMessage
from thinkseal.store import SQLiteStore, _codec

from .conftest import Backend, Blocking
from .histories import CLAUDE, sealed_conversation

# The tables of the release before, verbatim (PostgreSQL adds ``seq``).
OLD_SQLITE = """
CREATE TABLE thinkseal_sessions (
    session_id TEXT PRIMARY KEY,
    length INTEGER NOT NULL,
    chain BLOB NOT NULL,
    contexts INTEGER NOT NULL
);
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
