"""Issue 22's stateless-worker rows, for ``benches.compare``: a worker that
holds nothing loads the session from a store and builds the Anthropic request
body; a worker that holds the conversation brings it up to date after another
worker appended turns (``store.refresh``) and builds the body again.

Per backend whose server is reachable (SQLite on a temp file always;
PostgreSQL and Redis where THINKSEAL_TEST_POSTGRES / THINKSEAL_TEST_REDIS name
a server), on the workload of ``benches._workload`` (bound Anthropic tool loop):

- ``load`` + ``prepare`` -> body bytes (``req.content``), µs per message;
- ``load(lazy=True)`` + ``prepare`` for a target prepared before (the body
  assembled from the stored fragments), and the same after another writer
  appended 2 messages (the new turns mapped and written back), µs per message;
  and the stored fragments' bytes per byte of the history they replace;
- ``refresh`` + ``prepare`` after another store object (another writer) appended
  2 messages (a user turn and a bound assistant turn) to the session, the body
  ready to send (``req.content_length``: the shared chunks, not joined) and
  joined (``req.content``), against that full ``load`` + ``prepare``; and the
  ``refresh`` alone (the fastest of the body-ready steps' refreshes).

Each timed round starts as a request does on a worker that serves many
sessions (``best``): a full collection, then the same request for another
session, then the timed one.

``python -m benches._stateless [--n 3000] [--cold]`` prints where a request's
time goes: a timing split (read, ``prepare``, the join) and a cProfile (top 15
by cumulative time) of SQLite ``load`` + ``prepare``, of SQLite's lazy load +
``prepare`` and of ``from_json`` + ``prepare``."""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import io
import os
import pstats
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from thinkseal import AssistantMessage, Conversation, ThinkingBlock, UserMessage, provider
from thinkseal.providers import PreparedRequest
from thinkseal.store import PostgresStore, RedisStore, SQLiteStore, Store
from thinkseal.store._fragments import read_data, read_entry
from thinkseal.testing import respond

from . import _peers
from ._workload import bound_history

BACKENDS = ("sqlite", "postgres", "redis")
LABELS = {"sqlite": "SQLite", "postgres": "PostgreSQL", "redis": "Redis"}
VARIABLES = {"postgres": "THINKSEAL_TEST_POSTGRES", "redis": "THINKSEAL_TEST_REDIS"}
NEW_TURNS = 2  # messages another writer appends before each refresh
WARM_STEPS = 3  # refreshes before timing: the first ones after a load still extend the wire caches
# A full collection before each round (outside the timing), so that none falls inside
# it. With the peers imported it costs about 0.25 s here; the smoke test
# (benches/test_bench_stateless.py) turns it off.
COLLECT = True
# Then, with SERVED, the same request for another session (``other``), as a worker
# that serves many sessions has run before this session's next request: the code
# and the interpreter's shared state warm, this session's data untouched since its
# own last request. Without it (``--cold`` in benches.compare), each round starts
# as a full collection leaves the caches: cold for code and data alike.
SERVED = True
# What comes before each timed round, by SERVED (printed with the figures).
MEASURES = {
    True: "served: a full collection, then the same request for another session",
    False: "cold: a full collection only",
}


def cold_option(parser: argparse.ArgumentParser) -> None:
    """``--cold``, which every bench of the stateless rows takes (``use_measure``)."""
    parser.add_argument(
        "--cold",
        action="store_true",
        help="before each timed round a full collection only, not then another session's request",
    )


def use_measure(args: argparse.Namespace) -> None:
    """SERVED as ``--cold`` says."""
    global SERVED  # noqa: PLW0603 - the measure is this module's switch, read by every bench that times with best
    SERVED = not args.cold


def best(
    run: Callable[[], Any],
    rounds: int,
    setup: Callable[[], None] | None = None,
    other: Callable[[], Any] | None = None,
) -> float:
    """Seconds, the minimum over ``rounds``. Before each, outside the timing:
    ``setup()``, a ``gc.collect()``, and ``other()`` (the same request for
    another session) when ``SERVED``."""
    times = []
    for _ in range(rounds):
        if setup is not None:
            setup()
        if COLLECT:
            gc.collect()
        if SERVED and other is not None:
            other()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


class Backend:
    """Store objects of one backend over one fresh namespace (a temp file, a
    PostgreSQL schema, a Redis key prefix): ``store()`` opens another one, as
    another worker would; ``close()`` deletes what was written."""

    def __init__(self, name: str, make: Callable[[], Store]) -> None:
        self.name = name
        self._make = make
        self._opened: list[Store] = []
        self.schema: str | None = None

    def store(self) -> Store:
        made = self._make()
        self._opened.append(made)
        return made

    def close(self) -> None:
        if self._opened:
            first = self._opened[0]
            with contextlib.suppress(Exception):
                for session_id in first.list_sessions():
                    first.delete(session_id)
                if isinstance(first, PostgresStore) and self.schema:
                    with first._connection() as conn:
                        conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
        for made in self._opened:
            made.close()
        self._opened.clear()


def _backend(name: str, directory: Path) -> Backend:
    namespace = f"bench{uuid.uuid4().hex[:12]}"
    if name == "sqlite":
        path = directory / "stateless.db"
        return Backend(name, lambda: SQLiteStore(path))
    url = os.environ.get(VARIABLES[name])
    if not url:
        raise LookupError(f"{VARIABLES[name]} is not set")
    if name == "postgres":
        backend = Backend(name, lambda: PostgresStore(url, schema=namespace, connect_timeout=5))
        backend.schema = namespace
        return backend
    return Backend(name, lambda: RedisStore(url, prefix=namespace, socket_connect_timeout=5))


@contextlib.contextmanager
def reachable(names: tuple[str, ...] = BACKENDS) -> Iterator[tuple[list[Backend], dict[str, str]]]:
    """The backends whose server answers, and for the others why they were left out."""
    left_out: dict[str, str] = {}
    backends: list[Backend] = []
    with tempfile.TemporaryDirectory(prefix="thinkseal-bench-") as directory:
        try:
            for name in names:
                try:
                    backend = _backend(name, Path(directory))
                    backends.append(backend)
                    backend.store().list_sessions()  # connects (and creates the tables)
                except Exception as err:
                    if backends and backends[-1].name == name:
                        backends.pop().close()
                    left_out[name] = str(err).splitlines()[0][:120] if isinstance(err, LookupError) else repr(err)[:120]
            yield backends, left_out
        finally:
            for backend in backends:
                backend.close()


def next_turns(conv: Conversation, i: int) -> Conversation:
    """``conv`` with a user turn and a bound assistant turn appended."""
    return respond(
        conv.append(UserMessage(f"next {i}")),
        _peers.ORIGIN,
        AssistantMessage(f"ok {i}", [], [ThinkingBlock.Text(f"thinking {i}", f"sig{i}")]),
    )


class Session:
    """One stored session as the bench drives it: ``reader`` is the worker
    timed, ``writer`` another worker that appends turns to it."""

    def __init__(self, reader: Store, writer: Store, stored: Conversation) -> None:
        self.reader, self.writer = reader, writer
        self.adapter = provider("anthropic")
        self.stored = stored
        self.id = writer.create(stored)
        self.held = stored
        self.i = 0
        self.refreshes: list[float] = []  # the refresh alone, within each body-ready step

    def prepare(self, conv: Conversation) -> PreparedRequest:
        return self.adapter.prepare(conv, model=_peers.ORIGIN.model, max_tokens=1024)

    def full(self) -> bytes:
        return self.prepare(self.reader.load(self.id)).content

    def lazy(self) -> bytes:  # a worker that holds nothing, for a target prepared before
        return self.prepare(self.reader.load(self.id, lazy=True)).content

    def hold(self) -> None:
        """The conversation a worker holds, prepared once."""
        self.held = self.reader.load(self.id)
        _ = self.prepare(self.held).content_length

    def write(self) -> None:  # another worker's turn: 2 messages appended to the store
        self.i += 1
        before = len(self.stored)
        self.stored = next_turns(self.stored, self.i)
        self.writer.append(self.id, self.stored[before:], expected_length=before)

    def step(self, joined: bool) -> int:
        start = time.perf_counter()
        conv = self.reader.refresh(self.id, self.held)
        self.refreshes.append(time.perf_counter() - start)
        req = self.prepare(conv)
        self.held = conv
        return len(req.content) if joined else req.content_length


def measure(backend: Backend, n: int, rounds: int, step_rounds: int) -> dict[str, float]:
    """One backend at ``n`` messages (times in µs): ``load`` + ``prepare`` -> body
    bytes, and ``refresh`` + ``prepare`` after ``NEW_TURNS`` messages appended by
    another store object, the body ready and joined; and the refresh as a %
    of the full load + prepare. Each round serves the same request for a
    second session of the same size first (``best``)."""
    reader, writer = backend.store(), backend.store()
    stored = Conversation(bound_history(n, _peers.ORIGIN))
    timed, other = Session(reader, writer, stored), Session(reader, writer, stored)
    sessions = (timed, other) if SERVED else (timed,)  # the ones requests are served for
    try:
        for s in sessions:
            assert len(s.full()) > n * 1_000  # warm, and the whole history went out
        load_prepare = best(timed.full, rounds, other=other.full)
        for s in sessions:
            assert s.lazy() == s.full()  # the first one maps everything and writes the fragments back
        lazy_prepare = best(timed.lazy, rounds, other=other.lazy)
        fragments = fragment_ratio(reader, timed.id)

        def write() -> None:
            for s in sessions:
                s.write()

        for s in sessions:
            s.hold()
            for _ in range(WARM_STEPS):
                s.write()
                s.step(False)
            s.refreshes.clear()
        ready = best(lambda: timed.step(False), step_rounds, write, lambda: other.step(False))
        refresh_alone = min(timed.refreshes)
        joined = best(lambda: timed.step(True), step_rounds, write, lambda: other.step(True))
        for s in sessions:
            assert len(s.held) == len(s.stored) == n + NEW_TURNS * (WARM_STEPS + 2 * step_rounds)
        # A worker that holds nothing, after another one appended 2 messages: the
        # new turns mapped, and their fragments written back.
        lazy_new = best(timed.lazy, step_rounds, write, other.lazy)
    finally:
        for s in (timed, other):
            writer.delete(s.id)
    return {
        "load_prepare_us": load_prepare * 1e6,
        "load_prepare_us_per_msg": load_prepare / n * 1e6,
        "lazy_prepare_us_per_msg": lazy_prepare / n * 1e6,
        "lazy_new_turns_us_per_msg": lazy_new / n * 1e6,
        "fragments_per_wire_byte": fragments,
        "refresh_prepare_us": ready * 1e6,
        "refresh_alone_us": refresh_alone * 1e6,
        "refresh_prepare_joined_us": joined * 1e6,
        "refresh_pct": ready / load_prepare * 100,
        "refresh_joined_pct": joined / load_prepare * 100,
    }


def fragment_ratio(store: Store, session_id: str) -> float:
    """Bytes of the session's fragment rows (entries and data) per byte of the
    wire messages they hold (what a body takes from them)."""
    stored = replaced = 0
    for target in {target for target, *_ in store._fragment_index(session_id)}:
        for wire_key, start, end, entry, data in store._fragments(session_id, target):
            checked = read_entry(target, wire_key, start, end, entry, store._fragment_key)
            read = None if checked is None else read_data(checked, data)
            assert read is not None, "a fragment row the worker wrote does not check"
            stored += len(entry) + sum(map(len, data))
            replaced += sum(map(len, read.wire))
    return stored / replaced


def store_rows(sizes: tuple[int, ...], rounds: Callable[[int], int], step_rounds: int) -> dict[str, Any]:
    """``measure`` for every reachable backend at every size, and which backends were left out."""
    with reachable() as (backends, left_out):
        figures = {n: {b.name: measure(b, n, rounds(n), step_rounds) for b in backends} for n in sizes}
    return {"backends": [n for n in BACKENDS if n not in left_out], "left_out": left_out, "by_size": figures}


# -- where the time goes -------------------------------------------------------------------


def _split(
    read: Callable[[], Conversation], other: Callable[[], Conversation], n: int, rounds: int
) -> dict[str, float]:
    """µs per message (each step on a freshly read conversation, each round
    after the whole request for another session, read by ``other``, as in
    ``best``): the read alone; the replay decision alone (the walk,
    ``conversation.replay``: what ``prepare`` decides first, and reuses);
    ``prepare`` after that decision (the wire mapping, body ready); ``prepare``
    whole, body ready and body joined."""
    adapter = provider("anthropic")
    model = _peers.ORIGIN.model
    box: dict[str, Any] = {}

    def fresh() -> None:
        box["conv"] = read()

    def decided() -> None:
        fresh()
        _ = box["conv"].replay(_peers.ORIGIN).report

    def served() -> None:
        _ = adapter.prepare(other(), model=model, max_tokens=1024).content

    out = {
        "read": best(read, rounds, other=served),
        "replay decision (walk)": best(lambda: box["conv"].replay(_peers.ORIGIN).report, rounds, fresh, served),
        "prepare after the decision (wire mapping)": best(
            lambda: adapter.prepare(box["conv"], model=model, max_tokens=1024).content_length, rounds, decided, served
        ),
        "prepare (body ready)": best(
            lambda: adapter.prepare(box["conv"], model=model, max_tokens=1024).content_length, rounds, fresh, served
        ),
        "prepare + join (body bytes)": best(
            lambda: adapter.prepare(box["conv"], model=model, max_tokens=1024).content, rounds, fresh, served
        ),
    }
    return {name: t / n * 1e6 for name, t in out.items()}


def _profiled(run: Callable[[], Any], top: int) -> str:
    """cProfile of one ``run()`` after a warm one: the top ``top`` by cumulative
    time, then by own time."""
    run()  # warm: imports, first-call caches
    gc.collect()
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return text.getvalue()


def profile(n: int = 3_000, top: int = 15, rounds: int = 9) -> str:
    """The timing split and the cProfile (top ``top`` by cumulative time) of
    SQLite ``load`` + ``prepare``, SQLite ``load(lazy=True)`` + ``prepare`` (a
    target prepared before) and ``from_json`` + ``prepare``, at ``n``; each
    timed round after the same request for a second session (``best``)."""
    adapter = provider("anthropic")
    model = _peers.ORIGIN.model
    conv = Conversation(bound_history(n, _peers.ORIGIN))
    stored = [conv.to_json(), conv.to_json()]
    out: list[str] = []
    with reachable(("sqlite",)) as (backends, _):
        store = backends[0].store()
        ids = [store.create(conv), store.create(conv)]
        for session_id in ids:  # the lazy loads' fragment rows written
            _ = adapter.prepare(store.load(session_id, lazy=True), model=model, max_tokens=1024).content
        paths: dict[str, tuple[Callable[[], Conversation], Callable[[], Conversation]]] = {
            "SQLite load": (lambda: store.load(ids[0]), lambda: store.load(ids[1])),
            "SQLite lazy load, a seen target": (
                lambda: store.load(ids[0], lazy=True),
                lambda: store.load(ids[1], lazy=True),
            ),
            "from_json": (lambda: Conversation.from_json(stored[0]), lambda: Conversation.from_json(stored[1])),
        }
        measure = MEASURES[SERVED]
        # Every timing first, then the profiles (a profiled run is not timed).
        for name, (read, other) in paths.items():
            split = _split(read, other, n, rounds)
            out.append(
                f"{name} + prepare, n = {n:,} (min of {rounds}, {measure}, µs per message): "
                + "; ".join(f"{step} {us:.2f}" for step, us in split.items())
            )
        for name, (read, _) in paths.items():

            def run(read: Callable[[], Conversation] = read) -> bytes:
                return adapter.prepare(read(), model=model, max_tokens=1024).content

            out.append(f"\n## {name} + prepare, n = {n:,}: cProfile of one run")
            out.append(_profiled(run, top))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="where a stateless request's time goes", allow_abbrev=False)
    parser.add_argument("--n", type=int, default=3_000, help="messages in the conversation")
    parser.add_argument("--top", type=int, default=15, help="functions shown per profile")
    cold_option(parser)
    args = parser.parse_args(argv)
    use_measure(args)
    print(profile(args.n, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
