"""A stored value that is not what the store wrote (a wrong type, a wrong
size, a missing row, key or field, text that is not UTF-8) is a
``ValidationError`` naming the session and the position, never a bare
TypeError, KeyError, UnicodeDecodeError or driver error, and never quoting the
row. Each backend's own ways of holding a bad value are tried, on the sync and
the async store."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from thinkseal import ThinksealError, ValidationError
from thinkseal.store import AsyncPostgresStore, PostgresStore, SessionNotFoundError

from .conftest import Backend, Blocking, server_url
from .histories import SECRET, sealed_conversation

# A message row's JSON with content in it, then a byte that is never UTF-8.
NOT_UTF8 = ('{"role": "user", "content": "' + SECRET + '"}').encode()[:-2] + b'\xff"}'

Corruption = Callable[[Backend, str], None]


def _sql(statement: str, *params: Any) -> Corruption:
    def corrupt(backend: Backend, sid: str) -> None:
        backend.sql(statement, (*params, sid))

    return corrupt


def _sql_table(statement: str) -> Corruption:
    def corrupt(backend: Backend, sid: str) -> None:
        backend.sql(statement)

    return corrupt


def _redis(edit: Callable[[Any, Backend, str], Any]) -> Corruption:
    def corrupt(backend: Backend, sid: str) -> None:
        client = backend.redis()
        edit(client, backend, sid)
        client.close()

    return corrupt


def _redis_entry(position: int, make: Callable[[bytes], bytes]) -> Corruption:
    def edit(client: Any, backend: Backend, sid: str) -> None:
        key = backend.key(sid, "m")
        client.lset(key, position, make(client.lindex(key, position)))

    return _redis(edit)


def _redis_context(make: Callable[[bytes], bytes]) -> Corruption:
    def edit(client: Any, backend: Backend, sid: str) -> None:
        key = backend.key(sid, "c")
        client.lset(key, 0, make(client.lindex(key, 0)))

    return _redis(edit)


# name -> (backend, corruption, the path the error names)
CASES: dict[str, tuple[str, Corruption, str]] = {
    "sqlite-body-not-utf8": (
        "sqlite",
        _sql("UPDATE {m} SET body = CAST(? AS TEXT) WHERE position = 2 AND session_id = ?", NOT_UTF8),
        "$.messages[2]",
    ),
    "sqlite-digest-text": (
        "sqlite",
        _sql("UPDATE {m} SET digest = 'not a digest' WHERE position = 3 AND session_id = ?"),
        "$.messages[3]",
    ),
    "sqlite-digest-integer": (
        "sqlite",
        _sql("UPDATE {m} SET digest = 7 WHERE position = 3 AND session_id = ?"),
        "$.messages[3]",
    ),
    "sqlite-digest-short-blob": (
        "sqlite",
        _sql("UPDATE {m} SET digest = substr(digest, 1, 31) WHERE position = 3 AND session_id = ?"),
        "$.messages[3]",
    ),
    "sqlite-chain-text": (
        "sqlite",
        _sql("UPDATE {m} SET chain = 'x' WHERE position = 4 AND session_id = ?"),
        "$.messages[4]",
    ),
    "sqlite-position-text": (
        "sqlite",
        _sql("UPDATE {m} SET position = 'two' WHERE position = 2 AND session_id = ?"),
        "$.messages[2]",
    ),
    "sqlite-row-missing": (
        "sqlite",
        _sql("DELETE FROM {m} WHERE position = 2 AND session_id = ?"),
        "$.messages[2]",
    ),
    "sqlite-session-length-text": (
        "sqlite",
        _sql("UPDATE {s} SET length = 'many' WHERE session_id = ?"),
        "$.session.length",
    ),
    "sqlite-session-chain-short": (
        "sqlite",
        _sql("UPDATE {s} SET chain = x'0102' WHERE session_id = ?"),
        "$.session.chain",
    ),
    "sqlite-context-body-not-utf8": (
        "sqlite",
        _sql("UPDATE {c} SET body = CAST(? AS TEXT) WHERE session_id = ?", NOT_UTF8),
        "$.contexts[0]",
    ),
    "sqlite-context-digest-integer": (
        "sqlite",
        _sql("UPDATE {c} SET digest = 5 WHERE session_id = ?"),
        "$.contexts[0]",
    ),
    "sqlite-context-missing": (
        "sqlite",
        _sql("DELETE FROM {c} WHERE session_id = ?"),
        "$.contexts[0]",
    ),
    "postgres-digest-short": (
        "postgres",
        _sql("UPDATE {m} SET digest = substring(digest from 1 for 31) WHERE position = 3 AND session_id = ?"),
        "$.messages[3]",
    ),
    "postgres-digest-column-text": (
        "postgres",
        _sql_table("ALTER TABLE {m} ALTER COLUMN digest TYPE text USING encode(digest, 'hex')"),
        "$.messages[0]",
    ),
    "postgres-row-missing": (
        "postgres",
        _sql("DELETE FROM {m} WHERE position = 2 AND session_id = ?"),
        "$.messages[2]",
    ),
    "postgres-session-chain-short": (
        "postgres",
        _sql("UPDATE {s} SET chain = '\\x0102'::bytea WHERE session_id = ?"),
        "$.session.chain",
    ),
    "postgres-context-missing": (
        "postgres",
        _sql("DELETE FROM {c} WHERE session_id = ?"),
        "$.contexts[0]",
    ),
    "redis-body-not-utf8": ("redis", _redis_entry(2, lambda e: e[:64] + NOT_UTF8), "$.messages[2]"),
    "redis-entry-truncated": ("redis", _redis_entry(3, lambda e: e[:40]), "$.messages[3]"),
    "redis-entry-missing": ("redis", _redis(lambda c, b, s: c.rpop(b.key(s, "m"))), "$.messages[7]"),
    "redis-chain-field-missing": ("redis", _redis(lambda c, b, s: c.hdel(b.key(s, "s"), "chain")), "$.session.chain"),
    "redis-length-not-a-number": (
        "redis",
        _redis(lambda c, b, s: c.hset(b.key(s, "s"), "length", "many")),
        "$.session.length",
    ),
    "redis-contexts-fraction": (
        "redis",
        _redis(lambda c, b, s: c.hset(b.key(s, "s"), "contexts", "0.5")),
        "$.session.contexts",
    ),
    "redis-context-no-position": ("redis", _redis_context(lambda e: e[:32] + b"ten digits" + e[42:]), "$.contexts[0]"),
    "redis-context-body-not-utf8": ("redis", _redis_context(lambda e: e[:42] + NOT_UTF8), "$.contexts[0]"),
    "redis-messages-wrong-type": (
        "redis",
        _redis(lambda c, b, s: (c.delete(b.key(s, "m")), c.set(b.key(s, "m"), "a string"))),
        "$.session",
    ),
}


def _cases(name: str) -> list[str]:
    return [case for case, (backend, _, _) in CASES.items() if backend == name]


@pytest.fixture(params=list(CASES))
def case(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[tuple[Backend, Corruption, str]]:
    name, corrupt, path = CASES[request.param][0], CASES[request.param][1], CASES[request.param][2]
    backend = Backend(name, tmp_path)
    yield backend, corrupt, path
    backend.cleanup()


def _stores(backend: Backend) -> Iterator[Any]:
    yield backend.store()
    store = Blocking(backend.async_store())
    try:
        yield store
    finally:
        store.close()


def _assert_named(err: BaseException, sid: str, path: str) -> None:
    assert isinstance(err, ValidationError), f"{type(err).__name__}: {err}"
    assert err.path is not None
    assert err.path.startswith(path), (err.path, path)
    assert sid in str(err)
    assert SECRET not in str(err)
    assert "\\xff" not in str(err)


def test_a_malformed_stored_value_is_a_validation_error_naming_session_and_position(
    case: tuple[Backend, Corruption, str],
) -> None:
    backend, corrupt, path = case
    sid = backend.store().create(sealed_conversation(3))
    corrupt(backend, sid)
    for store in _stores(backend):
        for read in (store.load, store.verify):
            with pytest.raises(ThinksealError) as caught:
                read(sid)
            _assert_named(caught.value, sid, path)


@pytest.mark.parametrize("name", ["sqlite", "redis"])  # PostgreSQL: in the SQL_ASCII test below
def test_metadata_that_is_not_utf8_is_named_and_never_blocks_the_messages(name: str, tmp_path: Any) -> None:
    backend = Backend(name, tmp_path)
    try:
        sid = backend.store().create(sealed_conversation(1), metadata={"tag": SECRET})
        if name == "sqlite":
            backend.sql("UPDATE {s} SET metadata = CAST(? AS TEXT) WHERE session_id = ?", (NOT_UTF8, sid))
        else:
            _redis(lambda c, b, s: c.hset(b.key(s, "s"), "metadata", NOT_UTF8))(backend, sid)
        for store in _stores(backend):
            for read in (store.info, store.load_session, lambda s, store=store: store.sessions()):
                with pytest.raises(ThinksealError) as caught:
                    read(sid)
                _assert_named(caught.value, sid, "$.metadata")
            assert len(store.load(sid)) == len(sealed_conversation(1))
            assert store.verify(sid).ok
    finally:
        backend.cleanup()


FORK_CASES = {
    "sqlite": "DELETE FROM {m} WHERE position = 2 AND session_id = ?",
    "postgres": "DELETE FROM {m} WHERE position = 2 AND session_id = ?",
}


def test_fork_of_a_session_with_a_missing_row_names_it(backend: Backend) -> None:
    sid = backend.store().create(sealed_conversation(3))
    if backend.name == "redis":
        client = backend.redis()
        client.ltrim(backend.key(sid, "m"), 0, 1)  # entries 2.. gone, the length still says 10
        client.close()
    else:
        backend.sql(FORK_CASES[backend.name], (sid,))
    for store in _stores(backend):
        for length in (3, None):  # the missing row last, and in the middle
            with pytest.raises(ThinksealError) as caught:
                store.fork(sid, length=length)
            _assert_named(caught.value, sid, "$.messages[2]")
        assert store.list_sessions() == [sid]  # nothing forked


def test_fork_of_a_redis_session_with_a_truncated_entry_or_context_names_it(tmp_path: Any) -> None:
    backend = Backend("redis", tmp_path)
    try:
        sid = backend.store().create(sealed_conversation(3))
        _redis_entry(4, lambda e: e[:40])(backend, sid)
        for store in _stores(backend):
            with pytest.raises(ThinksealError) as caught:
                store.fork(sid, length=5)
            _assert_named(caught.value, sid, "$.messages[4]")
        _redis_context(lambda e: e[:32] + b"ten digits" + e[42:])(backend, sid)
        for store in _stores(backend):
            with pytest.raises(ThinksealError) as caught:
                store.fork(sid, length=2)
            _assert_named(caught.value, sid, "$.contexts[0]")
    finally:
        backend.cleanup()


# -- PostgreSQL: a database whose text is not checked as UTF-8 -------------------------------------


@pytest.fixture
def ascii_database() -> Iterator[str]:
    """A PostgreSQL database of encoding SQL_ASCII, which stores text bytes as
    given (a UTF8 database refuses bytes that are not UTF-8); its conninfo."""
    url = server_url("postgres")
    name = f"ts_ascii_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    try:
        yield make_conninfo(**{**conninfo_to_dict(url), "dbname": name})
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_postgres_row_not_utf8_in_a_sql_ascii_database(ascii_database: str) -> None:
    sync = PostgresStore(ascii_database)
    asynchronous = Blocking(AsyncPostgresStore(ascii_database))
    try:
        sid = sync.create(sealed_conversation(2))
        with psycopg.connect(ascii_database, autocommit=True) as conn:
            conn.execute(
                "UPDATE thinkseal_messages SET body = convert_from(%s::bytea, 'SQL_ASCII') "
                "WHERE session_id = %s AND position = 2",
                (NOT_UTF8, sid),
            )
        for store in (sync, asynchronous):
            assert store.list_sessions() == [sid]
            for read in (store.load, store.verify):
                with pytest.raises(ThinksealError) as caught:
                    read(sid)
                _assert_named(caught.value, sid, "$.messages[2]")
        with psycopg.connect(ascii_database, autocommit=True) as conn:
            conn.execute('UPDATE thinkseal_messages SET body = \'{"role": "user", "content": "fine"}\'')
            conn.execute("UPDATE thinkseal_sessions SET metadata = convert_from(%s::bytea, 'SQL_ASCII')", (NOT_UTF8,))
        for store in (sync, asynchronous):
            assert [m.text for m in store.load(sid)] == ["fine"] * len(sealed_conversation(2))  # type: ignore[attr-defined]
            with pytest.raises(ThinksealError) as caught:
                store.info(sid)
            _assert_named(caught.value, sid, "$.metadata")
    finally:
        sync.close()
        asynchronous.close()


def test_a_missing_session_is_not_found_on_every_backend(backend: Backend) -> None:
    for store in _stores(backend):
        with pytest.raises(SessionNotFoundError):
            store.fork("absent", length=0)
        with pytest.raises(SessionNotFoundError):
            store.verify("absent")
