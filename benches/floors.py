"""What a stateless request cannot go below on this machine, per backend, beside
what thinkseal's takes and what the issue-22 targets allow it
(docs/performance.md, "Why targets are missed"):

- the round trip: the backend's client asks for nothing (PostgreSQL ``SELECT 1``,
  Redis ``PING``, SQLite ``SELECT 1``);
- the body's bytes moved: the client alone reads the Anthropic body of the bench
  history, stored as the store stores fragment data (in ``FRAGMENT_PART`` parts
  on PostgreSQL and Redis, one blob read through a blob handle on SQLite);
- what any lazy load does with them then, whatever the code around it: check
  them (the store's keyed BLAKE3, ``fragment_check``) and join them into the body;
- the floor: the round trip and the bytes moved, checked and joined. A lazy load
  that reads its session with one round trip and its fragments with another
  pays at least this, before it decodes, restores or prepares anything.

thinkseal's lazy load + ``prepare`` and its ``refresh`` + ``prepare`` after 2 new
turns are ``benches._stateless``'s rows (``measure``), the allowances 10 times
pydantic-ai's lean path (from its own stored JSON) and 2 % of a full load +
``prepare``. Every figure is timed as ``benches.compare`` times it
(``_stateless.best``: a full collection, then the same read for another
session's bytes, then the timed one; ``--cold`` without the other read).

    python -m benches.floors [--n 1000] [--rounds 21] [--cold]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from thinkseal import Conversation, _core, provider
from thinkseal.store._codec import fragment_parts
from thinkseal.store._fragments import OPEN_KEY
from thinkseal.store._sqlite import MMAP_BYTES

from . import _peers, _stateless
from ._workload import bound_history, fresh_copies

KEYS = (1, 2)  # the timed session's bytes, and another session's (read first when served)


class Raw(Protocol):
    """One backend through its client alone: a round trip, and a session's bytes
    put and got back in the parts the store keeps them in."""

    def round_trip(self) -> None: ...

    def put(self, key: int, data: bytes) -> None: ...

    def get(self, key: int) -> list[bytes]: ...

    def close(self) -> None: ...


class SQLiteRaw:
    """A table of blobs in a WAL file mapped as the store maps it, each read
    through a blob handle as the store reads fragment data."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        self.conn.execute("CREATE TABLE floor (k INTEGER PRIMARY KEY, data BLOB NOT NULL)")

    def round_trip(self) -> None:
        self.conn.execute("SELECT 1").fetchone()

    def put(self, key: int, data: bytes) -> None:
        self.conn.execute("INSERT INTO floor VALUES (?, ?)", (key, data))

    def get(self, key: int) -> list[bytes]:
        with self.conn.blobopen("floor", "data", key, readonly=True) as blob:
            return [blob.read()]

    def close(self) -> None:
        self.conn.close()


class PostgresRaw:
    """A table of ``bytea`` parts in a schema of its own (dropped at close)."""

    def __init__(self, url: str) -> None:
        import psycopg  # noqa: PLC0415 - only with a server named

        self.conn = psycopg.connect(url, autocommit=True, connect_timeout=5)
        self.schema = f"floors{uuid.uuid4().hex[:12]}"
        self.conn.execute(f'CREATE SCHEMA "{self.schema}"')
        self.conn.execute(
            f'CREATE TABLE "{self.schema}".parts (k integer, part integer, data bytea NOT NULL, PRIMARY KEY (k, part))'
        )

    def round_trip(self) -> None:
        self.conn.execute("SELECT 1").fetchone()

    def put(self, key: int, data: bytes) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(
                f'INSERT INTO "{self.schema}".parts VALUES (%s, %s, %s)',
                [(key, i, part) for i, part in enumerate(fragment_parts(data))],
            )

    def get(self, key: int) -> list[bytes]:
        rows = self.conn.execute(
            f'SELECT data FROM "{self.schema}".parts WHERE k = %s ORDER BY part', (key,), binary=True
        ).fetchall()
        return [row[0] for row in rows]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
        self.conn.close()


class RedisRaw:
    """A key per part under a prefix of its own (deleted at close), read with one ``MGET``."""

    def __init__(self, url: str) -> None:
        import redis  # noqa: PLC0415 - only with a server named

        self.client = redis.Redis.from_url(url, socket_connect_timeout=5)
        self.prefix = f"floors{uuid.uuid4().hex[:12]}"
        self.names: dict[int, list[str]] = {}

    def round_trip(self) -> None:
        self.client.ping()

    def put(self, key: int, data: bytes) -> None:
        parts = fragment_parts(data)
        self.names[key] = [f"{self.prefix}:{key}:{i}" for i in range(len(parts))]
        self.client.mset(dict(zip(self.names[key], parts, strict=True)))

    def get(self, key: int) -> list[bytes]:
        return [p for p in self.client.mget(self.names[key]) if isinstance(p, bytes)]  # a missing one: None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            for names in self.names.values():
                self.client.delete(*names)
        self.client.close()


def raw_backends(directory: Path) -> Iterator[tuple[str, Raw]]:
    """Each backend ``benches._stateless`` reaches, through its client alone."""
    yield "sqlite", SQLiteRaw(directory / "floors.db")
    for name, make in (("postgres", PostgresRaw), ("redis", RedisRaw)):
        url = os.environ.get(_stateless.VARIABLES[name])
        if url:
            yield name, make(url)


def moved(raw: Raw, key: int) -> bytes:
    """The session's bytes read, checked and joined, as a lazy load must."""
    parts = raw.get(key)
    _core.fragment_check(OPEN_KEY, b"", parts)
    return b"".join(parts)


def floor_rows(raw: Raw, body: bytes, rounds: int) -> dict[str, float]:
    """µs: the round trip, the body's bytes read, and read + checked + joined;
    the floor (the round trip and the bytes moved)."""
    for key in KEYS:
        raw.put(key, body)
        assert moved(raw, key) == body, "the bytes read back are not the ones written"
    round_trip = _stateless.best(raw.round_trip, rounds, other=raw.round_trip) * 1e6
    read = _stateless.best(lambda: raw.get(KEYS[0]), rounds, other=lambda: raw.get(KEYS[1])) * 1e6
    read_checked_joined = _stateless.best(lambda: moved(raw, KEYS[0]), rounds, other=lambda: moved(raw, KEYS[1])) * 1e6
    return {
        "round_trip_us": round_trip,
        "read_us": read,
        "moved_us": read_checked_joined,
        "floor_us": round_trip + read_checked_joined,
    }


def peer_lean_us(conv: Conversation, rounds: int) -> float | None:
    """pydantic-ai's lean path from its own stored JSON, µs a request (None without it)."""
    if not _peers.available()["pydantic-ai"]:
        return None
    run = _peers.pydantic_ai_stateless(_peers.pydantic_ai_stored(conv))
    other = _peers.pydantic_ai_stateless(_peers.pydantic_ai_stored(Conversation(fresh_copies(list(conv)))))
    return _stateless.best(run, rounds, other=other) * 1e6


def floors(n: int = 1_000, rounds: int = 21) -> dict[str, Any]:
    """The figures (µs) per backend at ``n`` messages, and the allowances."""
    conv = Conversation(bound_history(n, _peers.ORIGIN))
    body = provider("anthropic").prepare(conv, model=_peers.ORIGIN.model, max_tokens=1024).content
    lean = peer_lean_us(conv, rounds)
    out: dict[str, Any] = {"n": n, "body_bytes": len(body), "peer_lean_us": lean, "backends": {}}
    with tempfile.TemporaryDirectory(prefix="thinkseal-floors-") as directory:
        for name, raw in raw_backends(Path(directory)):
            try:
                out["backends"][name] = floor_rows(raw, body, rounds)
            finally:
                raw.close()
    store = _stateless.store_rows((n,), lambda _: rounds, rounds)
    for name, figures in out["backends"].items():
        ours = store["by_size"][n].get(name)
        if ours is None:  # reached through its client, not through a store: not compared
            continue
        figures["lazy_us"] = ours["lazy_prepare_us_per_msg"] * n
        figures["lazy_allowance_us"] = None if lean is None else lean / 10
        figures["refresh_us"] = ours["refresh_prepare_us"]
        figures["refresh_allowance_us"] = ours["load_prepare_us"] * 0.02
    return out


def table(figures: dict[str, Any]) -> str:
    """The figures as two markdown tables: the lazy load, the refresh."""

    def ms(us: float | None) -> str:
        return "n/a" if us is None else f"{us / 1e3:.2f}"

    def share(part: float, whole: float | None) -> str:
        return "n/a" if not whole else f"{part / whole * 100:.0f} %"

    n, size = figures["n"], figures["body_bytes"] / 1e6
    lines = [
        f"n = {n:,} ({size:.2f} MB body; {_stateless.MEASURES[_stateless.SERVED]})",
        "",
        "| backend | round trip µs | the body's bytes read, ms | … checked and joined, ms | floor, ms "
        "| floor / allowance | thinkseal's lazy load + `prepare`, ms | allowance (10x pydantic-ai lean), ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    backends: dict[str, dict[str, float]] = figures["backends"]
    for name, f in backends.items():
        allowance = f.get("lazy_allowance_us")
        lines.append(
            f"| {_stateless.LABELS[name]} | {f['round_trip_us']:.0f} | {ms(f['read_us'])} | {ms(f['moved_us'])} "
            f"| {ms(f['floor_us'])} | {share(f['floor_us'], allowance)} | {ms(f.get('lazy_us'))} | {ms(allowance)} |"
        )
    lines += [
        "",
        "| backend | round trip µs | thinkseal's `refresh` + `prepare` µs | allowance (2 % of a full load) µs "
        "| round trip / allowance |",
        "|---|---|---|---|---|",
    ]
    for name, f in backends.items():
        if "refresh_us" in f:
            lines.append(
                f"| {_stateless.LABELS[name]} | {f['round_trip_us']:.0f} | {f['refresh_us']:.0f} "
                f"| {f['refresh_allowance_us']:.0f} | {share(f['round_trip_us'], f['refresh_allowance_us'])} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="what a stateless request cannot go below here", allow_abbrev=False)
    parser.add_argument("--n", type=int, default=1_000, help="messages in the conversation")
    parser.add_argument("--rounds", type=int, default=21, help="timed rounds per figure (the minimum is kept)")
    _stateless.cold_option(parser)
    args = parser.parse_args(argv)
    _stateless.use_measure(args)
    print(table(floors(args.n, args.rounds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
