"""The seal ledger: bindings that follow the sealed data (docs/ledger.md).

    ledger = thinkseal.Ledger.sqlite("ledger.db")
    ledger.record(reply)                        # each bound reply, as it arrives
    attached = ledger.attach(imported_history)  # a history held elsewhere
    request = adapter.prepare(attached.conversation, model=...)

``open_ledger(url)`` / ``open_async_ledger(url)`` open one from a URL
(``memory``, ``sqlite:///PATH``, ``postgresql://...``, ``redis://...``).

Backends: in memory (``Ledger()``), SQLite (standard library), PostgreSQL
(psycopg 3) and Redis (redis-py); ``AsyncLedger`` has the same shapes with
awaitable methods. The PostgreSQL and Redis backends import their driver on
first use.
"""

from __future__ import annotations

from ._backend import BackendError
from ._ledger import (
    DEFAULT_TTL,
    AsyncLedger,
    Attached,
    AttachedTurn,
    Ledger,
    Recognition,
    open_async_ledger,
    open_ledger,
)

__all__ = [
    "DEFAULT_TTL",
    "AsyncLedger",
    "Attached",
    "AttachedTurn",
    "BackendError",
    "Ledger",
    "Recognition",
    "open_async_ledger",
    "open_ledger",
]
