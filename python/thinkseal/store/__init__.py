"""Append-only conversation sessions for servers that outgrow one process
(docs/store.md).

    from thinkseal.store import SQLiteStore

    with SQLiteStore("sessions.db") as store:
        session = store.create(conversation)
        conversation = store.load(session)
        store.append(session, [reply], expected_length=len(conversation))

Backends: ``SQLiteStore`` / ``AsyncSQLiteStore`` (standard library, the
default), ``PostgresStore`` / ``AsyncPostgresStore`` (psycopg 3, the
``store-postgres`` extra) and ``RedisStore`` / ``AsyncRedisStore`` (redis-py,
the ``store-redis`` extra). The PostgreSQL and Redis classes import their
driver on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import ConflictError
from ._base import AsyncStore, Store
from ._codec import Integrity, Session, SessionInfo, SessionNotFoundError, VersionMismatchError
from ._sqlite import AsyncSQLiteStore, SQLiteStore

if TYPE_CHECKING:
    from ._postgres import AsyncPostgresStore, PostgresStore
    from ._redis import AsyncRedisStore, RedisStore

__all__ = [
    "AsyncPostgresStore",
    "AsyncRedisStore",
    "AsyncSQLiteStore",
    "AsyncStore",
    "ConflictError",
    "Integrity",
    "PostgresStore",
    "RedisStore",
    "SQLiteStore",
    "Session",
    "SessionInfo",
    "SessionNotFoundError",
    "Store",
    "VersionMismatchError",
]


def __getattr__(name: str) -> Any:
    # Loaded on first use: psycopg and redis are optional extras.
    if name in ("PostgresStore", "AsyncPostgresStore"):
        from . import _postgres  # noqa: PLC0415

        return getattr(_postgres, name)
    if name in ("RedisStore", "AsyncRedisStore"):
        from . import _redis  # noqa: PLC0415

        return getattr(_redis, name)
    raise AttributeError(f"module 'thinkseal.store' has no attribute {name!r}")
