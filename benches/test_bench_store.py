"""Benchmarks of thinkseal.store (pytest-benchmark), per backend: appending one
turn to a session of 100 and of 15,000 messages (the same cost: one row), and
a stateless worker's cold path, loading a 15,000-message session and building
the Anthropic request bytes, against ``Conversation.from_json`` of the same
history. SQLite runs on a file in a temp dir; PostgreSQL and Redis run where
THINKSEAL_TEST_POSTGRES / THINKSEAL_TEST_REDIS name a server (.ci/run starts
both), and are skipped otherwise.

Run: pytest benches/test_bench_store.py --benchmark-only
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, Tool, UserMessage
from thinkseal.store import PostgresStore, RedisStore, SQLiteStore, Store

from ._workload import bound_history, history

ORIGIN = thinkseal.Origin("anthropic", "claude-sonnet-4-5")
LONG = 15_000
BACKENDS = ["sqlite", "postgres", "redis"]
_bound: dict[str, list[thinkseal.Message]] = {}


def _long_history() -> list[thinkseal.Message]:
    if "long" not in _bound:
        _bound["long"] = bound_history(LONG, ORIGIN)
    return _bound["long"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    namespace = f"b{uuid.uuid4().hex[:12]}"
    made: Store
    if request.param == "sqlite":
        made = SQLiteStore(tmp_path / "bench.db")
    else:
        variable = "THINKSEAL_TEST_POSTGRES" if request.param == "postgres" else "THINKSEAL_TEST_REDIS"
        url = os.environ.get(variable)
        if not url:
            pytest.skip(f"{variable} is not set: no {request.param} server to measure")
        made = (
            PostgresStore(url, schema=namespace) if request.param == "postgres" else RedisStore(url, prefix=namespace)
        )
    yield made
    for session_id in made.list_sessions():
        made.delete(session_id)
    if isinstance(made, PostgresStore):
        with made._connection() as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{namespace}" CASCADE')
    made.close()


@pytest.mark.benchmark(group="store-append-one-turn")
@pytest.mark.parametrize("n", [100, LONG])
def test_append_one_turn(benchmark: Any, store: Store, n: int) -> None:
    """One user turn appended (with the length held) to a session of n messages of 1.6 KB."""
    session_id = store.create(Conversation(history(n)))
    state = {"length": n}
    benchmark.extra_info["messages"] = n

    def step() -> int:
        length = store.append(session_id, [UserMessage(f"next {state['length']}")], expected_length=state["length"])
        state["length"] = length
        return length

    assert benchmark.pedantic(step, rounds=50, iterations=1, warmup_rounds=2) > n


@pytest.mark.benchmark(group="store-cold-load-prepare")
def test_load_and_prepare(benchmark: Any, store: Store) -> None:
    """A stateless worker's request: load and verify a 15,000-message bound
    session, then build the Anthropic request body bytes."""
    conv = Conversation(_long_history(), [Tool("search")])
    session_id = store.create(conv)
    adapter = thinkseal.provider("anthropic")
    benchmark.extra_info["messages"] = LONG

    def step() -> int:
        loaded = store.load(session_id)
        return len(adapter.prepare(loaded, model=ORIGIN.model, max_tokens=1024).content)

    assert benchmark.pedantic(step, rounds=3, iterations=1) > LONG * 1000


@pytest.mark.benchmark(group="store-cold-load-prepare")
def test_from_json_and_prepare_baseline(benchmark: Any) -> None:
    """The same history from one ``Conversation.to_json`` document (already in
    memory: no file or database read counted)."""
    text = Conversation(_long_history(), [Tool("search")]).to_json()
    adapter = thinkseal.provider("anthropic")
    benchmark.extra_info["messages"] = LONG

    def step() -> int:
        loaded = Conversation.from_json(text)
        return len(adapter.prepare(loaded, model=ORIGIN.model, max_tokens=1024).content)

    assert benchmark.pedantic(step, rounds=3, iterations=1) > LONG * 1000
