"""One suite, three backends: SQLite always; PostgreSQL and Redis when
THINKSEAL_TEST_POSTGRES (a libpq URL) and THINKSEAL_TEST_REDIS (a redis:// URL)
name running servers (.ci/run starts both). Locally, a backend whose server is
absent is skipped with a loud reason; under CI=true its absence fails."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import redis
from psycopg import pq

from thinkseal.store import (
    AsyncPostgresStore,
    AsyncRedisStore,
    AsyncSQLiteStore,
    PostgresStore,
    RedisStore,
    SQLiteStore,
)

BACKENDS = ["sqlite", "postgres", "redis"]
ENV = {"postgres": "THINKSEAL_TEST_POSTGRES", "redis": "THINKSEAL_TEST_REDIS"}
_skipped: set[str] = set()


def server_url(backend: str) -> str:
    """The URL of the backend's test server, or skip (fail under CI)."""
    url = os.environ.get(ENV[backend], "")
    if url:
        return url
    reason = (
        f"!!! {backend.upper()} STORE TESTS SKIPPED: {ENV[backend]} is not set, so no {backend} server to test "
        f"against (start one and set it; .ci/run does) !!!"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{ENV[backend]} is not set under CI=true: the {backend} backend must be tested in CI")
    _skipped.add(reason)
    pytest.skip(reason)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for reason in sorted(_skipped):
        terminalreporter.write_sep("!", reason, red=True, bold=True)


def _redis_writes(action: Any) -> int:
    """How many times redis-py wrote to a connection while ``action()`` ran."""
    original = redis.connection.AbstractConnection.send_packed_command
    writes = 0

    def counted(self: Any, command: Any, check_health: bool = True) -> None:
        nonlocal writes
        writes += 1
        original(self, command, check_health)

    redis.connection.AbstractConnection.send_packed_command = counted  # type: ignore[method-assign]
    try:
        action()
    finally:
        redis.connection.AbstractConnection.send_packed_command = original  # type: ignore[method-assign]
    return writes


class Backend:
    """Makes stores of one backend in a namespace of their own (a fresh
    SQLite database, PostgreSQL schema or Redis key prefix) and reaches
    behind them for the tests that edit or count rows."""

    def __init__(self, name: str, tmp_path: Any) -> None:
        self.name = name
        self.namespace = f"t{uuid.uuid4().hex[:12]}"
        self.path = str(tmp_path / f"{self.namespace}.db")
        self.url = "" if name == "sqlite" else server_url(name)
        self._stores: list[Any] = []

    def store(self, **options: Any) -> Any:
        """A store of this namespace; ``options``: the constructor's keywords (``fragment_secret``)."""
        if self.name == "sqlite":
            store: Any = SQLiteStore(self.path, **options)
        elif self.name == "postgres":
            store = PostgresStore(self.url, schema=self.namespace, **options)
        else:
            store = RedisStore(self.url, prefix=f"{self.namespace}:", **options)
        self._stores.append(store)
        return store

    def async_store(self, **options: Any) -> Any:
        if self.name == "sqlite":
            return AsyncSQLiteStore(self.path, **options)
        if self.name == "postgres":
            return AsyncPostgresStore(self.url, schema=self.namespace, **options)
        return AsyncRedisStore(self.url, prefix=f"{self.namespace}:", **options)

    # -- behind the store's back ------------------------------------------------------

    def set_body(self, session_id: str, position: int, body: str, *, digest: bytes | None = None) -> None:
        """Edit a message row's JSON directly in the database (and its digest, if given)."""
        if self.name == "sqlite":
            with sqlite3.connect(self.path) as conn:
                conn.execute(
                    "UPDATE thinkseal_messages SET body = ?, digest = coalesce(?, digest) "
                    "WHERE session_id = ? AND position = ?",
                    (body, digest, session_id, position),
                )
        elif self.name == "postgres":
            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(
                    f'UPDATE "{self.namespace}".thinkseal_messages SET body = %s, digest = coalesce(%s, digest) '
                    "WHERE session_id = %s AND position = %s",
                    (body, digest, session_id, position),
                )
        else:
            client = redis.Redis.from_url(self.url)
            key = f"{self.namespace}:{{{session_id}}}:m"
            entry = client.lindex(key, position)
            client.lset(key, position, (digest or entry[:32]) + entry[32:64] + body.encode())
            client.close()

    def sql(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run ``statement`` on the SQL database behind the stores ({s}, {m}
        and {c} name the sessions, messages and contexts tables); the rows it
        returned."""
        tables = {"s": "thinkseal_sessions", "m": "thinkseal_messages", "c": "thinkseal_contexts"}
        if self.name == "sqlite":
            with sqlite3.connect(self.path) as conn:
                conn.text_factory = bytes
                return conn.execute(statement.format(**tables), params).fetchall()
        assert self.name == "postgres"
        qualified = {k: f'"{self.namespace}".{v}' for k, v in tables.items()}
        with psycopg.connect(self.url, autocommit=True) as conn:
            cur = conn.execute(statement.format(**qualified).replace("?", "%s"), params)
            return cur.fetchall() if cur.description else []

    def redis(self) -> Any:
        """A client of the Redis server behind the stores (close it)."""
        return redis.Redis.from_url(self.url)

    def key(self, session_id: str, kind: str) -> str:
        """The Redis key of a session's hash (``s``), messages (``m``) or contexts (``c``)."""
        return f"{self.namespace}:{{{session_id}}}:{kind}"

    def get_body(self, session_id: str, position: int) -> str:
        if self.name == "sqlite":
            with sqlite3.connect(self.path) as conn:
                return conn.execute(
                    "SELECT body FROM thinkseal_messages WHERE session_id = ? AND position = ?", (session_id, position)
                ).fetchone()[0]
        if self.name == "postgres":
            with psycopg.connect(self.url, autocommit=True) as conn:
                row = conn.execute(
                    f'SELECT body FROM "{self.namespace}".thinkseal_messages WHERE session_id = %s AND position = %s',
                    (session_id, position),
                ).fetchone()
                assert row is not None
                return str(row[0])
        client = redis.Redis.from_url(self.url)
        entry = client.lindex(f"{self.namespace}:{{{session_id}}}:m", position)
        client.close()
        return bytes(entry[64:]).decode()

    def count_writes(self, store: Any, action: Any) -> int:
        """What the database wrote while ``action()`` ran: rows changed
        (SQLite's total_changes), row versions created (PostgreSQL: rows whose
        xmin is newer than a transaction id taken before), write commands run
        on this namespace's keys (Redis, commands run by scripts included)."""
        if self.name == "sqlite":
            before = store._conn.total_changes
            action()
            return int(store._conn.total_changes - before)
        if self.name == "postgres":
            with psycopg.connect(self.url, autocommit=True) as conn:
                mark = conn.execute("SELECT txid_current()").fetchone()[0]
                action()
                total = 0
                for table in ("thinkseal_sessions", "thinkseal_messages", "thinkseal_contexts"):
                    total += conn.execute(
                        f'SELECT count(*) FROM "{self.namespace}".{table} WHERE xmin::text::bigint > %s', (mark,)
                    ).fetchone()[0]
                return total
        # MONITOR lists every command the server runs, those scripts run
        # included: the ones on this namespace's keys are counted (the server's
        # command counters would count other tests' writes meanwhile too).
        writes = {"rpush", "hset", "lset", "zadd", "del", "incr", "hdel"}
        end = f"count-writes-{uuid.uuid4().hex}"
        client = redis.Redis.from_url(self.url)
        try:
            with client.monitor() as monitor:
                action()
                client.echo(end)
                written = 0
                for seen in monitor.listen():
                    words = str(seen["command"]).split(" ")
                    if end in words:
                        return written
                    if words[0].lower() in writes and len(words) > 1 and words[1].startswith(f"{self.namespace}:"):
                        written += 1
        finally:
            client.close()
        raise AssertionError("the monitor ended before the end mark")

    def round_trips(self, store: Any, action: Any) -> int:
        """Requests a store sent while ``action()`` ran, each waited for. On
        PostgreSQL, statements: the server's ReadyForQuery messages in libpq's
        trace of every connection the store holds (it opens them as it first
        needs them). On Redis, what redis-py wrote to a connection (a command,
        or a pipeline's commands at once)."""
        if self.name == "redis":
            return _redis_writes(action)
        assert self.name == "postgres"
        with tempfile.TemporaryFile(mode="w+") as trace:
            connections = list(store._all)
            for conn in connections:
                conn.pgconn.trace(trace.fileno())
                conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
            try:
                action()
            finally:
                for conn in connections:
                    conn.pgconn.untrace()
            assert list(store._all) == connections, "the action opened a connection its trace missed"
            trace.seek(0)
            return sum(line.split("\t")[2:3] == ["ReadyForQuery"] for line in trace)

    def cleanup(self) -> None:
        for store in self._stores:
            store.close()
        if self.name == "postgres":
            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{self.namespace}" CASCADE')
        elif self.name == "redis":
            client = redis.Redis.from_url(self.url)
            keys = list(client.scan_iter(f"{self.namespace}:*"))
            if keys:
                client.delete(*keys)
            client.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Backend]:
    b = Backend(request.param, tmp_path)
    yield b
    b.cleanup()


@pytest.fixture
def store(backend: Backend) -> Any:
    return backend.store()


class Blocking:
    """An async store whose methods are run to completion, one call at a time,
    on one event loop: the sync tests run against the async classes too."""

    def __init__(self, store: Any) -> None:
        self.inner = store
        self._loop = asyncio.new_event_loop()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not asyncio.iscoroutinefunction(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._loop.run_until_complete(attribute(*args, **kwargs))

        return call

    def close(self) -> None:
        self._loop.run_until_complete(self.inner.close())
        self._loop.close()


@pytest.fixture(params=["sync", "async"])
def either(request: pytest.FixtureRequest, backend: Backend) -> Iterator[Any]:
    """A store of the backend in its sync form, then in its async form (``Blocking``)."""
    if request.param == "sync":
        yield backend.store()
        return
    store = Blocking(backend.async_store())
    yield store
    store.close()
