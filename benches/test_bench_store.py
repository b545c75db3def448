"""Benchmarks of thinkseal.store (pytest-benchmark), per backend: appending one
turn to a session of 100 and of 15,000 messages (the same cost: one row), and
a stateless worker's cold path, loading a 15,000-message session and building
the Anthropic request bytes, against ``Conversation.from_json`` of the same
history; and an async store loading a 50,000-message session while a ticker
task records the event loop's longest stall (``extra_info``, and printed with
``-s``), with the garbage collector on and off. SQLite runs on a file in a temp dir; PostgreSQL and Redis run where
THINKSEAL_TEST_POSTGRES / THINKSEAL_TEST_REDIS name a server (.ci/run starts
both), and are skipped otherwise.

Run: pytest benches/test_bench_store.py --benchmark-only
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, Tool, UserMessage
from thinkseal.store import (
    AsyncPostgresStore,
    AsyncRedisStore,
    AsyncSQLiteStore,
    AsyncStore,
    PostgresStore,
    RedisStore,
    SQLiteStore,
    Store,
)

from ._workload import bound_history, history

ORIGIN = thinkseal.Origin("anthropic", "claude-sonnet-4-5")
LONG = 15_000
STALL_ROWS = 50_000
BACKENDS = ["sqlite", "postgres", "redis"]
_bound: dict[str, list[thinkseal.Message]] = {}
# Per store the fixture made, how to make its async twin (same database and namespace).
_TWINS: dict[int, Callable[[], AsyncStore]] = {}


def _long_history() -> list[thinkseal.Message]:
    if "long" not in _bound:
        _bound["long"] = bound_history(LONG, ORIGIN)
    return _bound["long"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    namespace = f"b{uuid.uuid4().hex[:12]}"
    made: Store
    twin: Callable[[], AsyncStore]
    if request.param == "sqlite":
        path = tmp_path / "bench.db"
        made = SQLiteStore(path)
        twin = lambda: AsyncSQLiteStore(path)  # noqa: E731
    else:
        variable = "THINKSEAL_TEST_POSTGRES" if request.param == "postgres" else "THINKSEAL_TEST_REDIS"
        url = os.environ.get(variable)
        if not url:
            pytest.skip(f"{variable} is not set: no {request.param} server to measure")
        if request.param == "postgres":
            made = PostgresStore(url, schema=namespace)
            twin = lambda: AsyncPostgresStore(url, schema=namespace)  # noqa: E731
        else:
            made = RedisStore(url, prefix=namespace)
            twin = lambda: AsyncRedisStore(url, prefix=namespace)  # noqa: E731
    _TWINS[id(made)] = twin
    yield made
    del _TWINS[id(made)]
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


def _async_twin(store: Store) -> AsyncStore:
    """The async store over the same database and namespace as ``store``."""
    return _TWINS[id(store)]()


async def _load_watching_the_loop(store: AsyncStore, session_id: str, collect: bool) -> float:
    """Load the session with a ticker task on the loop; the longest gap between its ticks."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    await store.length(session_id)  # connected: only the load is watched
    task = asyncio.create_task(ticker())
    gc.collect()
    if not collect:
        gc.disable()
    try:
        await asyncio.sleep(0.02)
        gaps.clear()
        loaded = await store.load(session_id)
        await asyncio.sleep(0.01)
        longest = max(gaps)
        done.set()
        await task
    finally:
        gc.enable()
    assert len(loaded) == STALL_ROWS
    return longest


@pytest.mark.benchmark(group="store-async-load-event-loop")
@pytest.mark.parametrize("collector", ["gc-on", "gc-off"])
def test_async_load_event_loop_stall(benchmark: Any, store: Store, collector: str) -> None:
    """An async load of 50,000 messages of 1.6 KB, the loop's longest stall recorded."""
    session_id = store.create(Conversation(history(STALL_ROWS)))
    stalls: list[float] = []

    def step() -> None:
        async def main() -> float:
            async with _async_twin(store) as asynchronous:
                return await _load_watching_the_loop(asynchronous, session_id, collector == "gc-on")

        stalls.append(asyncio.run(main()))

    benchmark.pedantic(step, rounds=3, iterations=1)
    benchmark.extra_info["messages"] = STALL_ROWS
    benchmark.extra_info["longest_stall_ms"] = [round(s * 1000, 1) for s in stalls]
    print(f"\n{type(store).__name__} {collector}: longest stalls {benchmark.extra_info['longest_stall_ms']} ms")
    assert stalls, "the load never ran"  # --benchmark-disable runs pedantic once
