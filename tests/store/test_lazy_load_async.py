"""Lazy loads for an event loop (``AsyncStore.load(session_id, lazy=True)``):
the bodies are the fresh conversation's, byte for byte; the load reads every
target's fragment rows in its worker thread and ``prepare`` reads and writes
nothing on the loop (the write-back runs in a thread of its own); workers
taking turns keep the stored run growing. Every backend, against its real
server."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import thinkseal
from thinkseal import AssistantMessage, Conversation, Origin, ThinkingBlock, UserMessage
from thinkseal.providers import PROVIDER_IDS
from thinkseal.store import PostgresStore, SQLiteStore
from thinkseal.testing import respond

from ..providers.random_histories import MODELS, play, steps
from ..providers.sealed import OPTIONS
from .conftest import Backend
from .test_lazy_load import CLAUDE, claude_body, fresh_body, long_conversation, reply_from


async def lazy_body(store: Any, session_id: str, target: str, model: str = MODELS[0]) -> bytes:
    conv = await store.load(session_id, lazy=True)
    body = thinkseal.provider(target).prepare(conv, model=model, **OPTIONS[target]).content
    await asyncio.to_thread(conv._log.source.flush)  # the write-back, made in the background
    return body


@settings(
    max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None
)
@given(script=steps, target=st.sampled_from(PROVIDER_IDS))
def test_bodies_equal_fresh_bodies(backend: Backend, script: list[Any], target: str) -> None:
    conv = play(script).conv
    longer = respond(conv, Origin(target, MODELS[0]), reply_from(target, 90)).append(UserMessage("again"))

    async def main() -> list[bytes]:
        async with backend.async_store() as store:
            session_id = await store.create(conv)
            try:
                bodies = [await lazy_body(store, session_id, target), await lazy_body(store, session_id, target)]
                await store.append(session_id, list(longer)[len(conv) :], expected_length=len(conv))
                bodies += [await lazy_body(store, session_id, target), await lazy_body(store, session_id, target)]
                return bodies
            finally:
                await store.delete(session_id)

    first, second, third, fourth = asyncio.run(main())
    assert first == second == fresh_body(target, conv)
    assert third == fourth == fresh_body(target, longer)


def test_prepare_reads_and_writes_nothing_on_the_event_loop(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    conv = long_conversation(30)
    calls: list[tuple[str, str]] = []

    async def main() -> tuple[bytes, Any]:
        async with backend.async_store() as store:
            session_id = await store.create(conv)
            assert await lazy_body(store, session_id, "anthropic", CLAUDE.model) == claude_body(conv)
            twin = store._lazy_twin()
            for name in (
                "_fragments",
                "_put_fragment",
                "_rows_between",
                "_rows_at",
                "_fragment_index",
                "_fragment_index_and_tail",
                "_read",
            ):
                method = getattr(twin, name)

                def recorded(*args: Any, _name: str = name, _method: Any = method) -> Any:
                    calls.append((_name, threading.current_thread().name))
                    return _method(*args)

                monkeypatch.setattr(twin, name, recorded)
            lazy = await store.load(session_id, lazy=True)
            loop_thread = threading.current_thread().name
            calls.clear()
            more = lazy.append(UserMessage("one more"))
            req = thinkseal.provider("anthropic").prepare(more, model=CLAUDE.model, max_tokens=1024)
            on_loop = [c for c in calls if c[1] == loop_thread]
            await asyncio.to_thread(lazy._log.source.flush)
            return req.content, on_loop

    body, on_loop = asyncio.run(main())
    assert body == claude_body(conv.append(UserMessage("one more")))
    assert on_loop == []


def test_workers_taking_turns_keep_the_run_growing(backend: Backend, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="thinkseal.store")

    async def main() -> tuple[list[int], list[bool]]:
        conv = long_conversation(6)
        ends: list[int] = []
        equal: list[bool] = []
        async with backend.async_store() as store:
            session_id = await store.create(conv)
            for i in range(8):
                lazy = await store.load(session_id, lazy=True)
                req = thinkseal.provider("anthropic").prepare(lazy, model=CLAUDE.model, max_tokens=1024)
                equal.append(req.content == claude_body(conv))
                await asyncio.to_thread(lazy._log.source.flush)
                reply = AssistantMessage(f"turn {i}", [], [ThinkingBlock.Text(f"t{i}", f"s{i}")])
                conv = respond(conv, CLAUDE, reply).append(UserMessage(f"next {i}"))
                await store.append(session_id, list(conv)[len(lazy) :], expected_length=len(lazy))
                rows = store._lazy_twin()._fragment_index(session_id)
                ends.append(max(end for *_, end, _ in rows))
        return ends, equal

    ends, equal = asyncio.run(main())
    assert all(equal)
    assert not caplog.records
    assert ends == sorted(ends)
    assert ends[-1] > ends[0] + 10


def open_connections(twin: Any) -> int:
    """The connections the sync store holds open (PostgreSQL and Redis stores
    open new ones when used again after ``close``: what closing does is let
    go of the ones they hold)."""
    if isinstance(twin, SQLiteStore):
        try:
            twin._conn.execute("SELECT 1")
        except sqlite3.ProgrammingError:  # closed
            return 0
        return 1
    if isinstance(twin, PostgresStore):
        return len(twin._all)
    pool = twin._client.connection_pool
    return sum(c._sock is not None for c in pool._available_connections)


def test_close_closes_the_sync_store_it_made(backend: Backend) -> None:
    async def main() -> tuple[int, int]:
        store = backend.async_store()
        twin = store._lazy_twin()
        assert store._lazy_twin() is twin  # made once
        session_id = await store.create(Conversation([UserMessage("q")]))
        await store.load(session_id, lazy=True)
        assert twin.length(session_id) == 1  # of the same database
        before = open_connections(twin)
        await store.close()
        return before, open_connections(twin)

    before, after = asyncio.run(main())
    assert before >= 1
    assert after == 0


def test_an_async_store_writes_and_reads_fragments_under_its_secret(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    # The sync store a lazy load reads and writes through is made with the
    # async store's secret: a sync store of that secret reads its rows, and
    # a store of none does not.
    conv = long_conversation(30)
    expected = claude_body(conv)

    async def main() -> tuple[str, list[bytes]]:
        async with backend.async_store(fragment_secret="fleet") as store:
            session_id = await store.create(conv)
            bodies = [await lazy_body(store, session_id, "anthropic", CLAUDE.model) for _ in range(2)]
            return session_id, bodies

    session_id, bodies = asyncio.run(main())
    assert bodies == [expected, expected]
    caplog.set_level(logging.WARNING, logger="thinkseal.store")
    same = backend.store(fragment_secret="fleet").load(session_id, lazy=True)
    assert same._log.items.missing > 0
    assert claude_body(same) == expected
    assert not caplog.records
    other = backend.store().load(session_id, lazy=True)
    assert other._log.items.missing == 0
    assert claude_body(other) == expected
    assert any("does not check" in r.getMessage() for r in caplog.records)
