"""One ledger suite, four backends: memory and SQLite always; PostgreSQL and
Redis on the servers the store tests use (THINKSEAL_TEST_POSTGRES,
THINKSEAL_TEST_REDIS; skipped loudly locally, failed under CI=true when absent)."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import redis

from thinkseal.ledger import AsyncLedger, Ledger
from thinkseal.ledger._entries import Entry

from ..store.conftest import server_url

BACKENDS = ["memory", "sqlite", "postgres", "redis"]


class LedgerBackend:
    """Makes ledgers of one backend in a namespace of their own, and reaches
    behind them for the tests that edit, count or break entries."""

    def __init__(self, name: str, tmp_path: Any) -> None:
        self.name = name
        self.namespace = f"l{uuid.uuid4().hex[:12]}"
        self.path = str(tmp_path / f"{self.namespace}.db")
        self.url = "" if name in ("memory", "sqlite") else server_url(name)
        self._ledgers: list[Any] = []
        self._shared: Ledger | None = None

    def ledger(self, **options: Any) -> Ledger:
        """A ledger; every one made by this backend shares one store of entries
        (a memory ledger is shared by being the same object)."""
        if self.name == "memory":
            if self._shared is None or options:
                self._shared = Ledger(**options)
            return self._shared
        if self.name == "sqlite":
            ledger = Ledger.sqlite(self.path, **options)
        elif self.name == "postgres":
            ledger = Ledger.postgres(self.url, schema=self.namespace, **options)
        else:
            ledger = Ledger.redis(self.url, prefix=f"{self.namespace}:", **options)
        self._ledgers.append(ledger)
        return ledger

    def async_ledger(self, **options: Any) -> AsyncLedger:
        if self.name == "memory":
            return AsyncLedger(**options)
        if self.name == "sqlite":
            return AsyncLedger.sqlite(self.path, **options)
        if self.name == "postgres":
            return AsyncLedger.postgres(self.url, schema=self.namespace, **options)
        return AsyncLedger.redis(self.url, prefix=f"{self.namespace}:", **options)

    # -- behind the ledger's back ----------------------------------------------------

    def entries(self, ledger: Ledger) -> dict[bytes, tuple[Any, Any]]:
        """Every stored entry: key -> (binding, checksum) as stored."""
        if self.name == "memory":
            return {k: (e.binding, e.check) for k, e in ledger._backend._entries.items()}  # type: ignore[attr-defined]
        if self.name == "sqlite":
            with sqlite3.connect(self.path) as conn:
                conn.text_factory = bytes
                rows = conn.execute("SELECT key, binding, checksum FROM thinkseal_ledger").fetchall()
            return {bytes(k): (b.decode(errors="replace"), bytes(c)) for k, b, c in rows}
        if self.name == "postgres":
            with psycopg.connect(self.url, autocommit=True) as conn:
                rows = conn.execute(
                    f'SELECT key, binding, checksum FROM "{self.namespace}".thinkseal_ledger'
                ).fetchall()
            return {bytes(k): (b, bytes(c)) for k, b, c in rows}
        client = redis.Redis.from_url(self.url)
        found = {}
        for name in client.scan_iter(f"{self.namespace}:*"):
            binding, checksum = client.hmget(name, "binding", "checksum")
            found[bytes.fromhex(name.decode()[len(self.namespace) + 1 :])] = (binding.decode(), checksum)
        client.close()
        return found

    def overwrite(self, ledger: Ledger, key: bytes, binding: Any, checksum: Any) -> None:
        """Write an entry directly, as someone with access to the store could."""
        if self.name == "memory":
            ledger._backend._entries[key] = Entry(binding, checksum, None)  # type: ignore[attr-defined]
        elif self.name == "sqlite":
            with sqlite3.connect(self.path) as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO thinkseal_ledger (key, binding, checksum, expires, written) "
                    "VALUES (?, ?, ?, NULL, 0)",
                    (key, binding, checksum),
                )
        elif self.name == "postgres":
            with psycopg.connect(self.url, autocommit=True) as conn:
                conn.execute(
                    f'UPDATE "{self.namespace}".thinkseal_ledger SET binding = %s, checksum = %s WHERE key = %s',
                    (binding, checksum, key),
                )
        else:
            client = redis.Redis.from_url(self.url)
            client.hset(f"{self.namespace}:{key.hex()}", mapping={"binding": binding, "checksum": checksum})
            client.close()

    def cleanup(self) -> None:
        for ledger in self._ledgers:
            ledger.close()
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
def backend(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[LedgerBackend]:
    b = LedgerBackend(request.param, tmp_path)
    yield b
    b.cleanup()


@pytest.fixture(params=["sqlite", "postgres", "redis"])
def shared(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[LedgerBackend]:
    """The backends several processes share."""
    b = LedgerBackend(request.param, tmp_path)
    yield b
    b.cleanup()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def bounded(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[LedgerBackend]:
    """The backends that bound their entries themselves (Redis leaves it to the server's memory policy)."""
    b = LedgerBackend(request.param, tmp_path)
    yield b
    b.cleanup()
