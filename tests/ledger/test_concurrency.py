"""Many writers on one ledger: threads, processes and asyncio tasks record at
once; every recorded reply is recognised afterwards, a datum recorded under
two bindings by racing writers is a conflict whatever the order, and a writer
killed with SIGKILL in the middle of its writes leaves no entry that fails to
verify (each write is one transaction or one script)."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from thinkseal import AssistantMessage, Conversation, Origin, ThinkingBlock, UserMessage
from thinkseal.ledger import Ledger
from thinkseal.ledger._entries import Checker, Entry
from thinkseal.store import SQLiteStore
from thinkseal.testing import respond

from .conftest import LedgerBackend

CLAUDE = Origin("anthropic", "claude-a")
THREADS = 8
REPLIES = 60


def reply(writer: int, n: int, user: str = "q") -> Conversation:
    """A one-turn history whose reply carries data unique to (writer, n)."""
    turn = AssistantMessage(f"a{n}", thinking=[ThinkingBlock.Text("t", f"sig-{writer}-{n}")])
    return respond(Conversation([UserMessage(f"{user} {writer} {n}")]), CLAUDE, turn)


def stripped(conv: Conversation) -> Conversation:
    return Conversation([m._bound(None) if isinstance(m, AssistantMessage) else m for m in conv])


def open_ledger(name: str, path: str, url: str, namespace: str) -> Ledger:
    if name == "sqlite":
        return Ledger.sqlite(path)
    if name == "postgres":
        return Ledger.postgres(url, schema=namespace)
    return Ledger.redis(url, prefix=f"{namespace}:")


def _record_many(name: str, path: str, url: str, namespace: str, writer: int, count: int) -> int:
    with open_ledger(name, path, url, namespace) as ledger:
        return sum(ledger.record(reply(writer, n)[-1]) for n in range(count))  # type: ignore[arg-type]


def test_threads_record_at_once_and_every_reply_is_recognised(backend: LedgerBackend) -> None:
    ledger = backend.ledger()
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def run(writer: int) -> None:
        try:
            barrier.wait()
            for n in range(REPLIES):
                conv = reply(writer, n)
                ledger.record(conv[-1])  # type: ignore[arg-type]
                assert ledger.attach(stripped(conv)).recognised == 1
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    reader = backend.ledger()
    for writer in range(THREADS):
        for n in range(REPLIES):
            assert reader.attach(stripped(reply(writer, n))).recognised == 1


def _record_at(barrier: threading.Barrier, ledger: Ledger, conv: Conversation) -> None:
    barrier.wait()
    ledger.record(conv[-1])  # type: ignore[arg-type]


def test_racing_writers_of_one_datum_under_two_bindings_end_in_a_conflict(backend: LedgerBackend) -> None:
    """Two histories whose replies carry the same signature, recorded by two
    threads at once, many times over: neither is ever recognised afterwards."""
    for round_ in range(20):
        turn = AssistantMessage("a", thinking=[ThinkingBlock.Text("t", f"shared-{round_}")])
        one = respond(Conversation([UserMessage(f"one {round_}")]), CLAUDE, turn)
        two = respond(Conversation([UserMessage(f"two {round_}")]), CLAUDE, turn)
        ledgers = [backend.ledger(), backend.ledger()]
        barrier = threading.Barrier(2)

        threads = [threading.Thread(target=_record_at, args=(barrier, ledgers[k], c)) for k, c in enumerate((one, two))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for conv in (one, two):
            assert ledgers[0].attach(stripped(conv)).turns[0].status == "changed"


def test_processes_share_a_ledger(shared: LedgerBackend) -> None:
    processes, count = 4, 40
    args = [(shared.name, shared.path, shared.url, shared.namespace, w, count) for w in range(processes)]
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        recorded = pool.starmap(_record_many, args)
    assert recorded == [count] * processes
    reader = shared.ledger()
    for writer in range(processes):
        for n in range(count):
            assert reader.attach(stripped(reply(writer, n))).recognised == 1


def test_async_tasks_record_at_once(backend: LedgerBackend) -> None:
    async def main() -> None:
        ledger = backend.async_ledger()

        async def task(writer: int) -> None:
            for n in range(20):
                await ledger.record(reply(writer, n)[-1])  # type: ignore[arg-type]

        await asyncio.gather(*(task(w) for w in range(8)))
        for writer in range(8):
            for n in range(20):
                assert (await ledger.attach(stripped(reply(writer, n)))).recognised == 1
        await ledger.close()

    asyncio.run(main())


_WRITER = """
import sys
from tests.ledger.test_concurrency import open_ledger, reply
name, path, url, namespace = sys.argv[1:5]
ledger = open_ledger(name, path, url, namespace)
print("ready", flush=True)
n = 0
while True:
    ledger.record(reply(99, n)[-1])
    n += 1
"""


def test_a_writer_killed_mid_write_leaves_no_bad_entry(shared: LedgerBackend) -> None:
    root = Path(__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITER, shared.name, shared.path, shared.url, shared.namespace],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"ready"
        time.sleep(1.0)  # let it write for a while
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    reader = shared.ledger()
    entries = shared.entries(reader)
    assert len(entries) > 5
    checker = Checker(b"")
    for key, (binding, checksum) in entries.items():
        assert checker.binding_of(key, Entry(binding, bytes(checksum), None), time.time()) not in (
            None,
            "invalid",
            "conflict",
        )
    recognised = [reader.attach(stripped(reply(99, n))).recognised for n in range(len(entries))]
    assert all(recognised)


def test_sqlite_ledger_and_store_can_share_one_file(tmp_path: Any) -> None:
    path = str(tmp_path / "both.db")
    with SQLiteStore(path) as store, Ledger.sqlite(path) as ledger:
        conv = reply(1, 1)
        session = store.create(conv)
        ledger.record(conv[-1])  # type: ignore[arg-type]
        loaded = store.load(session)
        assert ledger.attach(stripped(loaded)).recognised == 1
