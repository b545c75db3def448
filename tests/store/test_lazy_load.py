"""Lazy loads and prepared fragments (``store/_lazy.py``, ``store/_fragments.py``):
a worker that loads a session with ``lazy=True`` and prepares a request gets
exactly the body a fresh conversation gives, whether the body is assembled from
stored fragment rows or mapped; a fragment row that does not check, or that
was made from other message rows, is never sent (the messages are mapped again
and the event logged); and a load + prepare after k new turns reads, decides
and maps O(k) messages, whatever the length of the session. Every backend,
against its real server."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import thinkseal
from thinkseal import AssistantMessage, Conversation, Origin, SystemMessage, ThinkingBlock, UserMessage
from thinkseal._errors import ConflictError
from thinkseal.providers import PROVIDER_IDS
from thinkseal.store import _codec, _lazy
from thinkseal.store._fragments import OPEN_KEY, encode, read_data, read_entry
from thinkseal.testing import respond

from ..providers.random_histories import MODELS, play, steps
from ..providers.sealed import NATIVE, OPTIONS, SEALED
from .conftest import Backend

CLAUDE = Origin("anthropic", "claude-sonnet-4-5")


def fresh_body(target: str, conv: Conversation, model: str = MODELS[0]) -> bytes:
    copy = Conversation(list(conv), conv.tools, conv.response_format)
    return thinkseal.provider(target).prepare(copy, model=model, **OPTIONS[target]).content


def lazy_body(store: Any, session_id: str, target: str, model: str = MODELS[0]) -> bytes:
    conv = store.load(session_id, lazy=True)
    return thinkseal.provider(target).prepare(conv, model=model, **OPTIONS[target]).content


def reply_from(target: str, k: int) -> AssistantMessage:
    """A reply with the sealed data ``target`` returns (as ``play`` builds them)."""
    blocks, _ = SEALED[target](k)
    native = NATIVE[target]
    extra = [] if native is None else [native(k)[0]]
    return AssistantMessage.from_parts([*blocks, *extra, f"answer {k}"])


def fragment_rows(store: Any, session_id: str) -> list[tuple[bytes, str, int, int, bytes]]:
    return store._fragment_index(session_id)


def the_store(backend: Backend, role: str = "worker") -> Any:
    """One store per backend and role for every example of a hypothesis test
    (a store per example would open a connection each: more than a database
    server takes)."""
    stores = backend.__dict__.setdefault("_lazy_stores", {})
    if role not in stores:
        stores[role] = backend.store()
    return stores[role]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(script=steps, target=st.sampled_from(PROVIDER_IDS))
def test_bodies_from_stored_fragments_equal_fresh_bodies(backend: Backend, script: list[Any], target: str) -> None:
    # The leak property's random histories (every provider's sealed data, two
    # models, edits of earlier messages), stored and prepared by workers that
    # hold nothing: the first maps and writes fragments, the next one reads
    # them, and one after another writer appended two turns reads them and
    # maps the new turns. Each body is the fresh conversation's, byte for byte.
    store = the_store(backend)
    conv = play(script).conv
    session_id = store.create(conv)
    try:
        expected = fresh_body(target, conv)
        assert lazy_body(store, session_id, target) == expected  # maps, writes fragments back
        assert lazy_body(store, session_id, target) == expected  # from the fragments
        longer = respond(conv, Origin(target, MODELS[0]), reply_from(target, 90)).append(UserMessage("again"))
        the_store(backend, "writer").append(session_id, list(longer)[len(conv) :], expected_length=len(conv))
        assert lazy_body(store, session_id, target) == fresh_body(target, longer)
        assert lazy_body(store, session_id, target) == fresh_body(target, longer)
        # Another model: no fragments of its own yet, then its own.
        assert lazy_body(store, session_id, target, MODELS[1]) == fresh_body(target, longer, MODELS[1])
        assert lazy_body(store, session_id, target, MODELS[1]) == fresh_body(target, longer, MODELS[1])
    finally:
        store.delete(session_id)


# -- a session of many turns, for the checks below ------------------------------------------


def long_conversation(turns: int, system: bool = True, pad: str = "") -> Conversation:
    conv = Conversation([SystemMessage("be brief")] if system else [])
    for i in range(turns):
        conv = conv.append(UserMessage(f"question {i}{pad}"))
        reply = AssistantMessage(f"answer {i}{pad}", [], [ThinkingBlock.Text(f"t{i}{pad}", f"sig{i}")])
        conv = respond(conv, CLAUDE, reply)
    return conv.append(UserMessage("last"))


def claude_body(conv: Conversation) -> bytes:
    return thinkseal.provider("anthropic").prepare(conv, model=CLAUDE.model, max_tokens=1024).content


def edit_fragment(backend: Backend, store: Any, session_id: str, column: str, change: Callable[[bytes], bytes]) -> None:
    """Change the ``column`` ("entry" or "data") of the session's longest fragment row, behind the store."""
    target, wire_key, start, _, _ = max(fragment_rows(store, session_id), key=lambda r: r[3] - r[2])
    rows = store._fragments(session_id, target)
    _, _, _, entry, data = next(r for r in rows if r[0] == wire_key and r[1] == start)
    old = entry if column == "entry" else b"".join(data)
    new = change(old)
    if backend.name == "redis":
        client = backend.redis()
        key = backend.key(session_id, "fe" if column == "entry" else "fd")
        for name, value in client.hgetall(key).items():
            if value.endswith(old):  # the field's encoding is the backend's: found by its value
                client.hset(key, name, value[: len(value) - len(old)] + new)
        client.close()
        return
    table = "thinkseal_fragments" if backend.name == "sqlite" else f'"{backend.namespace}".thinkseal_fragments'
    backend.sql(
        f"UPDATE {table} SET {column} = ? WHERE session_id = ? AND wire_key = ? AND start = ?",
        (new, session_id, wire_key, start),
    )


def flip_last_byte(value: bytes) -> bytes:
    return value[:-1] + bytes([value[-1] ^ 1])


def flip_a_wire_byte(value: bytes) -> bytes:
    at = value.index(b"answer 1")  # inside a wire message of the stored run
    return value[:at] + b"ANSWER 1" + value[at + 8 :]


def flip_seen(value: bytes) -> bytes:
    return value[:20] + bytes([value[20] ^ 1]) + value[21:]  # inside the entry's "seen" field, no other check reads


@pytest.mark.parametrize(
    ("column", "change"),
    [("data", flip_a_wire_byte), ("data", flip_last_byte), ("entry", flip_last_byte), ("entry", flip_seen)],
)
def test_a_fragment_that_does_not_check_is_never_sent(
    backend: Backend, column: str, change: Callable[[bytes], bytes], caplog: pytest.LogCaptureFixture
) -> None:
    store = backend.store()
    conv = long_conversation(30)
    session_id = store.create(conv)
    expected = claude_body(conv)
    assert claude_body(store.load(session_id, lazy=True)) == expected
    assert fragment_rows(store, session_id)
    edit_fragment(backend, store, session_id, column, change)
    caplog.set_level(logging.WARNING, logger="thinkseal.store")
    lazy = store.load(session_id, lazy=True)
    if column == "entry":  # a bad entry is passed over at the load already: every row is read instead
        assert lazy._log.items.missing == 0
    body = claude_body(lazy)
    assert body == expected
    assert b"ANSWER 1" not in body
    assert any("does not check" in r.getMessage() for r in caplog.records)
    # Mapped again and written back: the next worker reads fragments that check.
    caplog.clear()
    conv_again = store.load(session_id, lazy=True)
    assert claude_body(conv_again) == expected
    assert not caplog.records
    assert conv_again._log.items.missing > 0  # the next load left the stored run unread


def test_another_targets_fragments_made_from_other_rows_are_never_sent(backend: Backend) -> None:
    # The longest run (model B's) is this session's own, so the load reads past
    # it; model A's run was copied in from a session whose first messages
    # differ. Its rows check, and link; the message rows they were made from
    # are not this session's.
    store = backend.store()
    mine = long_conversation(20)
    other = mine.with_messages([SystemMessage("be brief"), UserMessage("another question"), *list(mine)[2:30]])
    one, two = store.create(other), store.create(mine)
    claude_body(store.load(one, lazy=True))  # model A's run of the other session
    model_b = thinkseal.provider("anthropic").prepare(store.load(two, lazy=True), model="claude-b", max_tokens=1024)
    assert model_b.content == fresh_claude(mine, "claude-b")
    for target, wire_key, start, end, entry in fragment_rows(store, one):
        data = next(r[4] for r in store._fragments(one, target) if r[0] == wire_key and r[1] == start)
        store._put_fragment(two, target, wire_key, start, end, entry, b"".join(data))
    assert claude_body(store.load(two, lazy=True)) == fresh_claude(mine, CLAUDE.model)


def forge(store: Any, session_id: str, key: bytes, change: Callable[[bytes], bytes]) -> None:
    """Rewrite the session's fragment rows as a writer of the database who
    knows ``key`` can: each row's wire messages changed by ``change`` (same
    length), every check made anew under ``key``."""
    for target, wire_key, start, end, raw_entry in fragment_rows(store, session_id):
        entry = read_entry(target, wire_key, start, end, raw_entry, store._fragment_key)
        assert entry is not None
        raw = next(r[4] for r in store._fragments(session_id, target) if r[0] == wire_key and r[1] == start)
        data = read_data(entry, raw)
        assert data is not None
        wire = b"".join(data.wire)
        run = change(wire)
        assert len(run) == len(wire)
        chains = (entry.row_chain_start, entry.row_chain_end)
        forged = encode(
            target, wire_key, start, end, entry.seen, chains, entry.systems, data._replace(wire=(run,)), key
        )
        store._put_fragment(session_id, target, wire_key, start, end, *forged)


def test_a_store_with_a_fragment_secret_never_sends_rows_forged_with_the_open_key(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    fleet = backend.store(fragment_secret="fleet secret")
    conv = long_conversation(30)
    session_id = fleet.create(conv)
    expected = claude_body(conv)
    assert claude_body(fleet.load(session_id, lazy=True)) == expected  # rows written under the secret
    forge(fleet, session_id, OPEN_KEY, flip_a_wire_byte)
    # Without a secret the forged rows check: their bytes are sent as stored.
    assert b"ANSWER 1" in claude_body(backend.store().load(session_id, lazy=True))
    caplog.set_level(logging.WARNING, logger="thinkseal.store")
    lazy = fleet.load(session_id, lazy=True)
    assert lazy._log.items.missing == 0  # no entry checks under the secret: every row is read
    body = claude_body(lazy)
    assert body == expected
    assert b"ANSWER 1" not in body
    assert any("does not check" in r.getMessage() for r in caplog.records)


def test_stores_share_fragment_rows_only_under_the_same_secret(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    writer, peer = backend.store(fragment_secret=b"k1"), backend.store(fragment_secret="k1")
    other, open_store = backend.store(fragment_secret="k2"), backend.store()
    conv = long_conversation(30)
    session_id = writer.create(conv)
    expected = claude_body(conv)
    assert claude_body(writer.load(session_id, lazy=True)) == expected
    caplog.set_level(logging.WARNING, logger="thinkseal.store")
    shared = peer.load(session_id, lazy=True)  # the same secret, as str: the same key
    assert shared._log.items.missing > 0
    assert claude_body(shared) == expected
    assert not caplog.records
    for stranger in (other, open_store):
        caplog.clear()
        lazy = stranger.load(session_id, lazy=True)
        assert lazy._log.items.missing == 0
        assert claude_body(lazy) == expected
        assert any("does not check" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("secret", [3, ["s"], "lone \udc00"])
def test_a_fragment_secret_that_is_not_text_or_bytes_is_named(backend: Backend, secret: Any) -> None:
    with pytest.raises(thinkseal.ValidationError, match="fragment_secret") as raised:
        backend.store(fragment_secret=secret)
    assert raised.value.path == "fragment_secret"


def fresh_claude(conv: Conversation, model: str) -> bytes:
    copy = Conversation(list(conv), conv.tools, conv.response_format)
    return thinkseal.provider("anthropic").prepare(copy, model=model, max_tokens=1024).content


def test_fragments_made_from_other_rows_are_never_sent(backend: Backend, caplog: pytest.LogCaptureFixture) -> None:
    # Fragment rows copied from another session of the same target: they check,
    # but the message rows they were made from are not this session's.
    store = backend.store()
    first, second = long_conversation(20), long_conversation(20, system=False)
    one, two = store.create(first), store.create(second)
    claude_body(store.load(one, lazy=True))
    index = fragment_rows(store, one)
    for target, wire_key, start, end, entry in index:
        data = next(r[4] for r in store._fragments(one, target) if r[0] == wire_key and r[1] == start)
        store._put_fragment(two, target, wire_key, start, end, entry, b"".join(data))
    caplog.set_level(logging.WARNING, logger="thinkseal.store")
    assert claude_body(store.load(two, lazy=True)) == claude_body(second)


def test_a_lazy_conversation_reads_as_the_stored_one(backend: Backend) -> None:
    store = backend.store()
    conv = long_conversation(25)
    session_id = store.create(conv)
    claude_body(store.load(session_id, lazy=True))  # fragments written
    lazy = store.load(session_id, lazy=True)
    eager = store.load(session_id)
    assert 0 < lazy._log.items.missing < len(conv)  # most rows unread
    assert lazy.system_messages == eager.system_messages == (SystemMessage("be brief"),)
    assert lazy.context_digest == eager.context_digest
    assert lazy[len(conv) // 2] == eager[len(conv) // 2]
    assert lazy.messages == eager.messages
    assert lazy == eager
    assert lazy.to_json() == eager.to_json()
    assert lazy._log.items.missing == 0


def test_an_unread_row_of_a_replaced_session_is_a_conflict(backend: Backend) -> None:
    store = backend.store()
    conv = long_conversation(25)
    session_id = store.create(conv)
    claude_body(store.load(session_id, lazy=True))
    lazy = store.load(session_id, lazy=True)
    assert lazy._log.items.missing > 0
    other = long_conversation(25).with_messages([UserMessage("replaced"), *list(long_conversation(25))[1:]])
    backend.store().replace(session_id, other, expected_length=len(conv))
    with pytest.raises(ConflictError, match="replaced or deleted since this conversation was loaded"):
        _ = lazy.messages
    assert claude_body(store.load(session_id, lazy=True)) == claude_body(other)


def test_a_deleted_session_s_unread_row_is_a_conflict(backend: Backend) -> None:
    store = backend.store()
    session_id = store.create(long_conversation(25))
    claude_body(store.load(session_id, lazy=True))
    lazy = store.load(session_id, lazy=True)
    backend.store().delete(session_id)
    with pytest.raises(ConflictError, match="replaced or deleted since this conversation was loaded"):
        _ = lazy[0]


def test_workers_taking_turns_keep_the_run_growing(backend: Backend, caplog: pytest.LogCaptureFixture) -> None:
    # A stateless worker per request: load lazily, prepare, append the reply
    # and the next question. Each request maps only what is new, writes it
    # back (rows merged as they grow) and never fails to.
    store = backend.store()
    conv = long_conversation(6)
    session_id = store.create(conv)
    caplog.set_level(logging.WARNING, logger="thinkseal.store")
    ends = []
    for i in range(12):
        lazy = store.load(session_id, lazy=True)
        req = thinkseal.provider("anthropic").prepare(lazy, model=CLAUDE.model, max_tokens=1024)
        assert req.content == claude_body(conv)
        reply = AssistantMessage(f"turn {i}", [], [ThinkingBlock.Text(f"t{i}", f"s{i}")])
        conv = respond(conv, CLAUDE, reply).append(UserMessage(f"next {i}"))
        store.append(session_id, list(conv)[len(lazy) :], expected_length=len(lazy))
        rows = fragment_rows(store, session_id)
        ends.append(max(end for *_, end, _ in rows))
        assert len(rows) <= 2 + i.bit_length()  # merged: O(log n) rows
    assert not caplog.records
    assert ends == sorted(ends)
    assert ends[-1] > ends[0] + 20  # the run followed the session


def test_replace_drops_the_fragments(backend: Backend) -> None:
    store = backend.store()
    conv = long_conversation(10)
    session_id = store.create(conv)
    claude_body(store.load(session_id, lazy=True))
    assert fragment_rows(store, session_id)
    store.replace(session_id, long_conversation(4), expected_length=len(conv))
    assert fragment_rows(store, session_id) == []


# -- O(new turns) ---------------------------------------------------------------------------------


class Counts:
    """Messages read from rows, walked (replay decision) and mapped (wire form)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = self.walked = self.mapped = 0
        decode, walk = _lazy.decode_messages, thinkseal._replay.walk
        sent = thinkseal._replay.Replay.sent_messages

        def counted_decode(session_id: str, slices: Any, chain_before: bytes, *, check: bool = True) -> Any:
            messages, bad = decode(session_id, slices, chain_before, check=check)
            self.read += len(messages)
            return messages, bad

        def counted_walk(items: Any, start: int, end: int, *args: Any) -> Any:
            self.walked += end - start
            return walk(items, start, end, *args)

        def counted_sent(replay: Any, start: int = 0, end: int | None = None) -> Any:
            out = sent(replay, start, end)
            self.mapped += len(out)
            return out

        monkeypatch.setattr(_lazy, "decode_messages", counted_decode)
        monkeypatch.setattr(thinkseal._replay, "walk", counted_walk)
        monkeypatch.setattr(thinkseal._replay.Replay, "sent_messages", counted_sent)


@pytest.mark.parametrize("k", [2, 6])
def test_a_load_and_prepare_after_k_new_turns_costs_o_k(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    seen: dict[int, tuple[int, int, int]] = {}
    for turns in (20, 200):
        store, writer = backend.store(), backend.store()
        conv = long_conversation(turns)
        session_id = store.create(conv)
        claude_body(store.load(session_id, lazy=True))  # the first worker maps all and writes fragments
        longer = conv
        for i in range(k // 2):
            longer = respond(longer, CLAUDE, AssistantMessage(f"more {i}", [], [ThinkingBlock.Text("t", f"s{i}")]))
            longer = longer.append(UserMessage(f"next {i}"))
        writer.append(session_id, list(longer)[len(conv) :], expected_length=len(conv))
        with monkeypatch.context() as patched:
            counts = Counts(patched)
            body = claude_body(store.load(session_id, lazy=True))
        assert body == claude_body(longer)
        seen[turns] = (counts.read, counts.walked, counts.mapped)
        # The new turns, the messages since the last wire cut, and the few a lazy load reads before its run.
        assert max(seen[turns]) <= k + 4 + _lazy.LOOK_BACK, seen
    assert seen[20] == seen[200]


@pytest.mark.parametrize("backend", ["postgres", "redis"], indirect=True)
@pytest.mark.parametrize("part", [13, 1_000])
def test_rows_read_in_small_parts_give_the_same_bodies(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, part: int
) -> None:
    # Fragment data stored in parts of ``part`` bytes: the row's header and its
    # wire messages cut anywhere, read as the parts (never joined), and the
    # body the same as a fresh one's; mapping only the new turns.
    monkeypatch.setattr(_codec, "FRAGMENT_PART", part)
    store, writer = backend.store(), backend.store()
    conv = long_conversation(30, pad=" lorem ipsum" * 3)
    session_id = store.create(conv)
    assert claude_body(store.load(session_id, lazy=True)) == claude_body(conv)  # maps all, writes fragments
    for target, wire_key, start, end, raw_entry in fragment_rows(store, session_id):
        entry = read_entry(target, wire_key, start, end, raw_entry, OPEN_KEY)
        assert entry is not None
        parts = next(r[4] for r in store._fragments(session_id, target) if (r[0], r[1]) == (wire_key, start))
        assert len(parts) > 1
        data = read_data(entry, parts)
        assert data is not None
        assert len(data.wire) > 1
    longer = respond(conv, CLAUDE, AssistantMessage("more", [], [ThinkingBlock.Text("t", "s")])).append(
        UserMessage("n")
    )
    writer.append(session_id, list(longer)[len(conv) :], expected_length=len(conv))
    with monkeypatch.context() as patched:
        counts = Counts(patched)
        assert claude_body(store.load(session_id, lazy=True)) == claude_body(longer)
    assert counts.mapped <= 2 + 4 + _lazy.LOOK_BACK


def test_stored_fragments_cost_at_most_1_2x_the_wire_bytes_they_replace(backend: Backend) -> None:
    # At the benchmarks' message size (about 1.6 KB of wire JSON a message): a
    # fragment row adds 37 bytes a message (its chain value, reason code and
    # size) and about 180 a row, so small messages cost relatively more.
    store = backend.store()
    conv = long_conversation(200, pad=" lorem ipsum dolor sit amet" * 20)
    session_id = store.create(conv)
    req = thinkseal.provider("anthropic").prepare(
        store.load(session_id, lazy=True), model=CLAUDE.model, max_tokens=1024
    )
    stored = replaced = 0
    for target in {t for t, *_ in fragment_rows(store, session_id)}:
        for wire_key, start, end, entry, data in store._fragments(session_id, target):
            checked = read_entry(target, wire_key, start, end, entry, OPEN_KEY)
            assert checked is not None
            read = read_data(checked, data)
            assert read is not None
            wire = b"".join(read.wire)
            assert wire in req.content  # what a body takes from the row, as it is
            stored += len(entry) + sum(map(len, data))
            replaced += len(wire)
    assert replaced > 0.9 * len(req.content)
    assert stored <= 1.2 * replaced, (stored, replaced)


def test_the_sqlite_store_reads_fragments_through_a_memory_map(tmp_path: Any) -> None:
    store = thinkseal.store.SQLiteStore(tmp_path / "s.db")
    assert store._conn.execute("PRAGMA mmap_size").fetchone()[0] > 0
    with sqlite3.connect(tmp_path / "s.db") as plain:
        assert plain.execute("SELECT count(*) FROM thinkseal_fragments").fetchone()[0] == 0


@pytest.mark.parametrize("lazy", [1, "yes", None])
def test_lazy_that_is_not_a_bool_is_named(backend: Backend, lazy: Any) -> None:
    store = backend.store()
    session_id = store.create(long_conversation(2))
    with pytest.raises(thinkseal.ValidationError, match="lazy: expected bool") as raised:
        store.load(session_id, lazy=lazy)
    assert raised.value.path == "lazy"

    async def load_async() -> None:
        async with backend.async_store() as asynchronous:
            await asynchronous.load(session_id, lazy=lazy)

    with pytest.raises(thinkseal.ValidationError, match="lazy: expected bool"):
        asyncio.run(load_async())


# A lazy load of a seen target, in round trips: the fragment index with the
# session row and the rows after the run (one statement, or one script), the
# system messages inside the run (when there are any), then the target's
# fragment rows with their parts (one statement; on Redis their entries and
# their data in one pipeline, named from the entries the first read saw).
LAZY_ROUND_TRIPS = {"postgres": 2, "redis": 2}


@pytest.mark.parametrize("backend", ["postgres", "redis"], indirect=True)
@pytest.mark.parametrize("system", [False, True])
def test_a_lazy_load_of_a_seen_target_reads_the_index_and_the_rows_at_once(backend: Backend, system: bool) -> None:
    store = backend.store()
    conv = long_conversation(30, system=system)
    session_id = store.create(conv)
    assert claude_body(store.load(session_id, lazy=True)) == claude_body(conv)  # maps all, writes fragments
    bodies: list[bytes] = []
    read = backend.round_trips(store, lambda: bodies.append(claude_body(store.load(session_id, lazy=True))))
    assert read == LAZY_ROUND_TRIPS[backend.name] + system
    assert bodies == [claude_body(conv)]
