"""No lost turns: many writers append to one session, each with the length it
holds, and retry after a refresh when another got there first. Every accepted
append is stored exactly once, at the position it was accepted at, and each
writer's turns keep their order."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from typing import Any

from thinkseal import ConflictError, Conversation, UserMessage
from thinkseal.store import SQLiteStore

WRITERS = 16
APPENDS = 200


def write(store: Any, session_id: str, writer: int, appends: int) -> tuple[list[tuple[int, str]], int]:
    """``appends`` turns by one writer: (position, text) of each accepted one,
    and how many conflicts it met."""
    held = store.load(session_id)
    accepted: list[tuple[int, str]] = []
    conflicts = 0
    for i in range(appends):
        message = UserMessage(f"writer {writer} turn {i}")
        while True:
            length_before = len(held)
            try:
                length = store.append(session_id, [message], expected_length=len(held))
            except ConflictError as err:
                actual = err.actual_length
                conflicts += 1
                held = store.refresh(session_id, held)
                assert actual is not None
                assert len(held) >= actual > length_before
                continue
            accepted.append((length - 1, message.text))
            held = held.append(message)
            break
    return accepted, conflicts


def check(stored: Conversation, accepted: list[list[tuple[int, str]]], total: int) -> None:
    texts = [m.text for m in stored]  # type: ignore[attr-defined]
    assert len(texts) == total
    assert len(set(texts)) == total  # none duplicated
    for writer in accepted:
        for position, text in writer:
            assert texts[position] == text  # where it was accepted
        positions = [p for p, _ in writer]
        assert positions == sorted(positions)  # in the writer's order


def test_threads_never_lose_or_duplicate_a_turn(backend: Any) -> None:
    store = backend.store()
    sid = store.create()
    results: list[Any] = [None] * WRITERS
    errors: list[BaseException] = []
    barrier = threading.Barrier(WRITERS)

    def run(w: int) -> None:
        try:
            barrier.wait()
            results[w] = write(store, sid, w, APPENDS)
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    check(store.load(sid), [r[0] for r in results], WRITERS * APPENDS)
    assert sum(r[1] for r in results) > 0  # the writers did collide, and recovered
    assert store.verify(sid).ok


def _process_writer(path: str, session_id: str, writer: int, appends: int) -> tuple[list[tuple[int, str]], int]:
    with SQLiteStore(path) as store:
        return write(store, session_id, writer, appends)


def test_processes_share_a_sqlite_file(tmp_path: Any) -> None:
    path = str(tmp_path / "shared.db")
    with SQLiteStore(path) as store:
        sid = store.create()
    processes, appends = 4, 50
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        results = pool.starmap(_process_writer, [(path, sid, w, appends) for w in range(processes)])
    with SQLiteStore(path) as store:
        check(store.load(sid), [r[0] for r in results], processes * appends)


def test_async_tasks_never_lose_or_duplicate_a_turn(backend: Any) -> None:
    tasks, appends = 16, 50

    async def writer(store: Any, sid: str, w: int) -> tuple[list[tuple[int, str]], int]:
        held = await store.load(sid)
        accepted: list[tuple[int, str]] = []
        conflicts = 0
        for i in range(appends):
            message = UserMessage(f"task {w} turn {i}")
            while True:
                try:
                    length = await store.append(sid, [message], expected_length=len(held))
                except ConflictError:
                    conflicts += 1
                    held = await store.refresh(sid, held)
                    continue
                accepted.append((length - 1, message.text))
                held = held.append(message)
                break
        return accepted, conflicts

    async def main() -> tuple[Conversation, list[Any]]:
        async with backend.async_store() as store:
            sid = await store.create()
            results = await asyncio.gather(*(writer(store, sid, w) for w in range(tasks)))
            return await store.load(sid), list(results)

    stored, results = asyncio.run(main())
    check(stored, [r[0] for r in results], tasks * appends)
    assert sum(r[1] for r in results) > 0
