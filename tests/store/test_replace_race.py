"""``replace`` racing ``append`` and ``save`` on one session, from threads,
asyncio tasks and processes, on every backend: never a lost or a mixed result.

The session goes through epochs: each starts with a replace's marker message
(``R:<id>|<base>|<length>``, the marker of the epoch it replaced and that
epoch's length) and grows by appends (``A:<writer>.<i>|<base>``, the marker of
the epoch the writer's conversation was in). At the end, from what every
worker was told (accepted, at which position; replaced, which content):

- each epoch was ended by at most one replace, and the replaces form one chain
  from the first epoch to the stored one (none was based on a stale session);
- each epoch's content, as its replace read it (or as stored, for the last),
  is its marker then exactly the appends accepted in it, each at the position
  it was accepted at (none lost, none duplicated, none from another epoch)."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
import time
from collections import defaultdict
from typing import Any

from thinkseal import ConflictError, Conversation, UserMessage
from thinkseal.store import PostgresStore, RedisStore, SQLiteStore

from .conftest import Backend

ORIGIN = "R:origin|-|0"
WRITERS, APPENDS = 6, 25
REPLACERS, REPLACES = 2, 5

Accepted = list[tuple[int, str]]
Replaced = list[tuple[str, str, int, tuple[str, ...]]]


def _marker(text: str) -> str:
    return text.split("|", maxsplit=1)[0]


def _texts(conv: Conversation) -> tuple[str, ...]:
    return tuple(m.text for m in conv)  # type: ignore[attr-defined]


def write(store: Any, sid: str, w: int, appends: int) -> Accepted:
    """Appends by one writer (every other one through ``save``), retried after a refresh on conflict."""
    held = store.load(sid)
    accepted: Accepted = []
    for i in range(appends):
        while True:
            message = UserMessage(f"A:{w}.{i}|{_marker(held[0].text)}")  # type: ignore[attr-defined]
            try:
                if w % 2:
                    length = store.save(sid, held.append(message), expected_length=len(held))
                else:
                    length = store.append(sid, [message], expected_length=len(held))
            except ConflictError:
                held = store.refresh(sid, held)
                continue
            accepted.append((length - 1, message.text))
            held = held.append(message)
            break
    return accepted


def compact(store: Any, sid: str, r: int, replaces: int) -> Replaced:
    """Replaces by one worker: each reads the session and replaces it by one marker message."""
    done: Replaced = []
    for k in range(replaces):
        while True:
            held = store.load(sid)
            base = _marker(held[0].text)  # type: ignore[attr-defined]
            marker = f"R:{r}.{k}"
            replacement = Conversation([UserMessage(f"{marker}|{base}|{len(held)}")])
            try:
                store.replace(sid, replacement, expected_length=len(held))
            except ConflictError:
                continue
            done.append((marker, base, len(held), _texts(held)))
            break
        time.sleep(0.002)  # let some appends land in the new epoch
    return done


def check(stored: tuple[str, ...], accepted: list[Accepted], replaced: list[Replaced]) -> None:
    appends: dict[str, Accepted] = defaultdict(list)
    for writer in accepted:
        for position, text in writer:
            appends[text.split("|")[1]].append((position, text))
    epochs: dict[str, tuple[str, ...]] = {}
    successor: dict[str, str] = {}
    replaces = [r for worker in replaced for r in worker]
    for marker, base, length, content in replaces:
        assert base not in epochs, f"epoch {base} ended by two replaces: one read a stale session"
        assert len(content) == length
        epochs[base] = content
        successor[base] = marker
    final = _marker(stored[0])
    assert final not in epochs
    epochs[final] = stored
    for base, content in epochs.items():
        assert _marker(content[0]) == base
        landed = sorted(appends.pop(base, []))
        assert [text for _, text in landed] == list(content[1:]), f"epoch {base}: appends lost, mixed or moved"
        assert [position for position, _ in landed] == list(range(1, len(content)))
    assert not appends, f"appends accepted in epochs nobody saw: {sorted(appends)}"
    current, steps = "R:origin", 0
    while current in successor:
        current, steps = successor[current], steps + 1
    assert (current, steps) == (final, len(replaces))
    assert steps >= 1
    assert sum(len(w) for w in accepted) == WRITERS * APPENDS


def test_threads_racing_replace_and_append(backend: Backend) -> None:
    store = backend.store()
    sid = store.create(Conversation([UserMessage(ORIGIN)]))
    results: dict[str, Any] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(WRITERS + REPLACERS)

    def run(key: str, job: Any, *args: Any) -> None:
        try:
            barrier.wait()
            results[key] = job(store, sid, *args)
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(f"w{w}", write, w, APPENDS)) for w in range(WRITERS)]
    threads += [threading.Thread(target=run, args=(f"r{r}", compact, r, REPLACES)) for r in range(REPLACERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    accepted = [results[f"w{w}"] for w in range(WRITERS)]
    check(_texts(store.load(sid)), accepted, [results[f"r{r}"] for r in range(REPLACERS)])
    assert store.verify(sid).ok


def test_async_tasks_racing_replace_and_append(backend: Backend) -> None:
    async def write_async(store: Any, sid: str, w: int) -> Accepted:
        held = await store.load(sid)
        accepted: Accepted = []
        for i in range(APPENDS):
            while True:
                message = UserMessage(f"A:{w}.{i}|{_marker(held[0].text)}")
                try:
                    if w % 2:
                        length = await store.save(sid, held.append(message), expected_length=len(held))
                    else:
                        length = await store.append(sid, [message], expected_length=len(held))
                except ConflictError:
                    held = await store.refresh(sid, held)
                    continue
                accepted.append((length - 1, message.text))
                held = held.append(message)
                break
        return accepted

    async def compact_async(store: Any, sid: str, r: int) -> Replaced:
        done: Replaced = []
        for k in range(REPLACES):
            while True:
                held = await store.load(sid)
                base, marker = _marker(held[0].text), f"R:{r}.{k}"
                replacement = Conversation([UserMessage(f"{marker}|{base}|{len(held)}")])
                try:
                    await store.replace(sid, replacement, expected_length=len(held))
                except ConflictError:
                    continue
                done.append((marker, base, len(held), _texts(held)))
                break
            await asyncio.sleep(0.002)
        return done

    async def main() -> tuple[tuple[str, ...], list[Accepted], list[Replaced]]:
        async with backend.async_store() as store:
            sid = await store.create(Conversation([UserMessage(ORIGIN)]))
            writers = [write_async(store, sid, w) for w in range(WRITERS)]
            replacers = [compact_async(store, sid, r) for r in range(REPLACERS)]
            results = await asyncio.gather(*writers, *replacers)
            assert (await store.verify(sid)).ok
            return _texts(await store.load(sid)), list(results[:WRITERS]), list(results[WRITERS:])

    check(*asyncio.run(main()))


def _open(name: str, location: str, namespace: str) -> Any:
    if name == "sqlite":
        return SQLiteStore(location)
    if name == "postgres":
        return PostgresStore(location, schema=namespace)
    return RedisStore(location, prefix=f"{namespace}:")


def _process(name: str, location: str, namespace: str, sid: str, role: str, n: int) -> Any:
    with _open(name, location, namespace) as store:
        if role == "write":
            return write(store, sid, n, APPENDS)
        return compact(store, sid, n, REPLACES)


def test_processes_racing_replace_and_append(backend: Backend) -> None:
    store = backend.store()
    sid = store.create(Conversation([UserMessage(ORIGIN)]))
    location = backend.path if backend.name == "sqlite" else backend.url
    jobs = [(backend.name, location, backend.namespace, sid, "write", w) for w in range(WRITERS)]
    jobs += [(backend.name, location, backend.namespace, sid, "compact", r) for r in range(REPLACERS)]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.starmap(_process, jobs)
    check(_texts(store.load(sid)), results[:WRITERS], results[WRITERS:])
    assert store.verify(sid).ok
