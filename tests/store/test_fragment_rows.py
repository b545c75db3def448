"""The backend primitives under the prepared fragments (``_fragments``): fragment
rows are written, merged and read back per session, target and wire key; they
describe the message rows, so deleting or replacing a session drops them and a
fork starts without them; ``_rows_between`` and ``_rows_at`` give rows that
``_row`` reads. Every backend, against its real server."""

from __future__ import annotations

from typing import Any

import pytest

from thinkseal import Conversation
from thinkseal.store._codec import FRAGMENT_PART

from .conftest import Backend
from .histories import plain

T1, T2 = b"\x00target-1", b"target-2:|"
K1, K2 = "messages", "system"


def fragment_count(backend: Backend, session_id: str) -> int:
    """Fragment rows (Redis: hash fields of both hashes) stored for the session, read behind the store."""
    if backend.name == "redis":
        client = backend.redis()
        try:
            return int(client.hlen(backend.key(session_id, "fe")) + client.hlen(backend.key(session_id, "fd")))
        finally:
            client.close()
    table = "thinkseal_fragments" if backend.name == "sqlite" else f'"{backend.namespace}".thinkseal_fragments'
    return int(backend.sql(f"SELECT count(*) FROM {table} WHERE session_id = ?", (session_id,))[0][0])


def put(store: Any, session_id: str, target: bytes, wire_key: str, start: int, end: int, tag: str = "") -> None:
    entry, data = f"entry {start}-{end}{tag}".encode(), f"data {start}-{end}{tag}".encode() * 3
    store._put_fragment(session_id, target, wire_key, start, end, entry, data)


def read_back(store: Any, session_id: str, target: bytes) -> list[tuple[str, int, int, bytes, bytes]]:
    """``store._fragments``, each row's data parts joined (the parts are a list of bytes)."""
    rows = store._fragments(session_id, target)
    assert all(type(data) is list and all(type(p) is bytes for p in data) for *_, data in rows)
    return [(*row[:4], b"".join(row[4])) for row in rows]


def starts(store: Any, session_id: str, target: bytes, wire_key: str) -> list[int]:
    return sorted(s for t, k, s, _, _ in store._fragment_index(session_id) if (t, k) == (target, wire_key))


def test_fragments_are_read_back_with_and_without_their_data(store: Any) -> None:
    sid = store.create(Conversation(plain(4)))
    put(store, sid, T1, K1, 0, 2)
    put(store, sid, T1, K2, 0, 4)
    put(store, sid, T2, K1, 2, 4)
    assert sorted(store._fragment_index(sid)) == [
        (T1, K1, 0, 2, b"entry 0-2"),
        (T1, K2, 0, 4, b"entry 0-4"),
        (T2, K1, 2, 4, b"entry 2-4"),
    ]
    assert sorted(read_back(store, sid, T1)) == [
        (K1, 0, 2, b"entry 0-2", b"data 0-2" * 3),
        (K2, 0, 4, b"entry 0-4", b"data 0-4" * 3),
    ]
    assert read_back(store, sid, T2) == [(K1, 2, 4, b"entry 2-4", b"data 2-4" * 3)]
    assert read_back(store, sid, b"target") == []  # a prefix of a stored target is another target
    assert store._fragment_index(store.create()) == []


def test_a_fragment_at_the_same_start_replaces_the_one_there(store: Any) -> None:
    sid = store.create(Conversation(plain(4)))
    put(store, sid, T1, K1, 1, 2)
    put(store, sid, T1, K1, 1, 3, tag=" again")
    assert store._fragment_index(sid) == [(T1, K1, 1, 3, b"entry 1-3 again")]
    assert read_back(store, sid, T1) == [(K1, 1, 3, b"entry 1-3 again", b"data 1-3 again" * 3)]


def test_a_fragment_merges_the_rows_starting_strictly_inside_it(store: Any) -> None:
    sid = store.create(Conversation(plain(8)))
    other = store.create(Conversation(plain(8)))
    for start in (0, 1, 2, 4, 5, 6):
        put(store, sid, T1, K1, start, start + 1)
        put(store, sid, T1, K2, start, start + 1)
        put(store, sid, T2, K1, start, start + 1)
        put(store, other, T1, K1, start, start + 1)
    put(store, sid, T1, K1, 0, 5, tag=" merged")
    # 1, 2 and 4 lie inside (0, 5): merged; 0 is replaced; 5 (the end) and 6 stay
    assert starts(store, sid, T1, K1) == [0, 5, 6]
    assert sorted(f for f in read_back(store, sid, T1) if f[0] == K1) == [
        (K1, 0, 5, b"entry 0-5 merged", b"data 0-5 merged" * 3),
        (K1, 5, 6, b"entry 5-6", b"data 5-6" * 3),
        (K1, 6, 7, b"entry 6-7", b"data 6-7" * 3),
    ]
    assert starts(store, sid, T1, K2) == [0, 1, 2, 4, 5, 6]
    assert starts(store, sid, T2, K1) == [0, 1, 2, 4, 5, 6]
    assert starts(store, other, T1, K1) == [0, 1, 2, 4, 5, 6]


def test_a_fragment_of_a_missing_session_is_not_written(store: Any, backend: Backend) -> None:
    put(store, "absent", T1, K1, 0, 2)
    assert store._fragment_index("absent") == []
    assert store._fragments("absent", T1) == []
    assert fragment_count(backend, "absent") == 0
    store.create(session_id="absent")
    assert store._fragment_index("absent") == []


def test_deleting_a_session_deletes_its_fragments(store: Any, backend: Backend) -> None:
    sid = store.create(Conversation(plain(4)))
    kept = store.create(Conversation(plain(4)))
    put(store, sid, T1, K1, 0, 2)
    put(store, kept, T1, K1, 0, 2)
    assert fragment_count(backend, sid) > 0
    assert store.delete(sid)
    assert fragment_count(backend, sid) == 0
    store.create(Conversation(plain(4)), session_id=sid)
    assert store._fragment_index(sid) == []
    assert store._fragment_index(kept) == [(T1, K1, 0, 2, b"entry 0-2")]


def test_replacing_a_session_deletes_its_fragments(store: Any, backend: Backend) -> None:
    conv = Conversation(plain(4))
    sid = store.create(conv)
    put(store, sid, T1, K1, 0, 2)
    put(store, sid, T2, K2, 2, 4)
    assert store.replace(sid, Conversation(plain(3)), expected_length=4) == 3
    assert store._fragment_index(sid) == []
    assert read_back(store, sid, T1) == []
    assert fragment_count(backend, sid) == 0
    put(store, sid, T1, K1, 0, 3)  # the session is still there to take new ones
    assert store._fragment_index(sid) == [(T1, K1, 0, 3, b"entry 0-3")]


def test_a_fork_copies_no_fragments(store: Any) -> None:
    sid = store.create(Conversation(plain(6)))
    put(store, sid, T1, K1, 0, 2)
    put(store, sid, T1, K1, 2, 4)
    fork = store.fork(sid, length=4)
    assert store.load(fork) == Conversation(plain(4))
    assert store._fragment_index(fork) == []
    assert read_back(store, fork, T1) == []
    assert starts(store, sid, T1, K1) == [0, 2]


def test_rows_between_and_at_are_the_rows_row_reads(store: Any) -> None:
    sid = store.create(Conversation(plain(6)))
    _, raw = store._read(sid, 0)
    expected = [store._row(sid, i, item) for i, item in enumerate(raw)]
    assert len(expected) == 6

    between = store._rows_between(sid, 1, 4)
    assert [store._row(sid, 1 + i, item) for i, item in enumerate(between)] == expected[1:4]
    assert [store._row(sid, 4 + i, item) for i, item in enumerate(store._rows_between(sid, 4, 10))] == expected[4:]
    assert store._rows_between(sid, 3, 3) == []
    assert store._rows_between("absent", 0, 3) == []

    at = store._rows_at(sid, [0, 2, 5])
    assert [store._row(sid, p, item) for p, item in zip([0, 2, 5], at, strict=True)] == [
        expected[0],
        expected[2],
        expected[5],
    ]
    assert [store._row(sid, 3, item) for item in store._rows_at(sid, [3, 6, 9])] == [expected[3]]
    assert store._rows_at(sid, []) == []
    assert store._rows_at("absent", [0, 1]) == []


# PostgreSQL's column types keep every fragment row well formed: nothing to pass over there.
@pytest.mark.parametrize("backend", ["sqlite", "redis"], indirect=True)
def test_malformed_fragment_rows_are_passed_over(store: Any, backend: Backend) -> None:
    sid = store.create(Conversation(plain(4)))
    put(store, sid, T1, K1, 0, 2)
    index = [(T1, K1, 0, 2, b"entry 0-2")]
    if backend.name == "sqlite":
        backend.sql(
            "INSERT INTO thinkseal_fragments VALUES (?, ?, ?, ?, ?, ?, ?)", (sid, T1, K2, "zero", 2, b"entry", b"data")
        )
        backend.sql("INSERT INTO thinkseal_fragments VALUES (?, ?, ?, ?, ?, ?, ?)", (sid, T1, b"\xff", 0, 2, b"e", 7))
        backend.sql("INSERT INTO thinkseal_fragments VALUES (?, ?, ?, ?, ?, ?, ?)", (sid, "text", K1, 0, 2, b"e", b"d"))
        # Its data is text, not a blob (read through a blob handle otherwise).
        backend.sql("INSERT INTO thinkseal_fragments VALUES (?, ?, ?, ?, ?, ?, ?)", (sid, T1, K2, 0, 2, b"entry", "d"))
        index.append((T1, K2, 0, 2, b"entry"))  # the index does not read the data
    else:
        client = backend.redis()
        client.hset(backend.key(sid, "fe"), mapping={b"garbage": b"2:entry", b"9:\x00target-18:messages1": b"x"})
        client.hset(backend.key(sid, "fe"), b"9:\x00target-16:system0", b"2:entry")  # its data is missing
        client.close()
        index.append((T1, K2, 0, 2, b"entry"))  # the index does not read the data
    assert store._fragment_index(sid) == index
    assert read_back(store, sid, T1) == [(K1, 0, 2, b"entry 0-2", b"data 0-2" * 3)]


def stored_values(backend: Backend, session_id: str) -> int:
    """Values the session's fragment data is stored in, read behind the store
    (PostgreSQL: rows and part rows; Redis: ``:fd`` fields; SQLite: rows)."""
    if backend.name == "redis":
        client = backend.redis()
        try:
            return int(client.hlen(backend.key(session_id, "fd")))
        finally:
            client.close()
    if backend.name == "sqlite":
        return int(backend.sql("SELECT count(*) FROM thinkseal_fragments WHERE session_id = ?", (session_id,))[0][0])
    schema = f'"{backend.namespace}"'
    rows = backend.sql(f"SELECT count(*) FROM {schema}.thinkseal_fragments WHERE session_id = ?", (session_id,))
    parts = backend.sql(f"SELECT count(*) FROM {schema}.thinkseal_fragment_parts WHERE session_id = ?", (session_id,))
    return int(rows[0][0]) + int(parts[0][0])


BIG = bytes(range(256)) * (3 * FRAGMENT_PART // 256) + b"tail"  # three parts and four bytes


def test_data_of_several_parts_is_read_back_whole_and_leaves_no_parts_behind(store: Any, backend: Backend) -> None:
    parts = 1 if backend.name == "sqlite" else 4  # SQLite reads a row's data whole through a blob handle
    sid = store.create(Conversation(plain(6)))
    store._put_fragment(sid, T1, K1, 0, 2, b"entry", BIG)
    assert read_back(store, sid, T1) == [(K1, 0, 2, b"entry", BIG)]
    assert [len(row[4]) for row in store._fragments(sid, T1)] == [parts]  # read as stored, not joined
    assert store._fragment_index(sid) == [(T1, K1, 0, 2, b"entry")]
    assert stored_values(backend, sid) == parts
    put(store, sid, T1, K1, 0, 2)  # the same start, one part: the four are replaced
    assert read_back(store, sid, T1) == [(K1, 0, 2, b"entry 0-2", b"data 0-2" * 3)]
    assert stored_values(backend, sid) == 1
    store._put_fragment(sid, T1, K1, 2, 4, b"entry", BIG)
    store._put_fragment(sid, T1, K2, 2, 4, b"other", BIG + b"!")
    assert stored_values(backend, sid) == 1 + 2 * parts
    put(store, sid, T1, K1, 0, 6)  # merges the row at 2: its parts go with it
    assert read_back(store, sid, T1) == [
        (K1, 0, 6, b"entry 0-6", b"data 0-6" * 3),
        (K2, 2, 4, b"other", BIG + b"!"),
    ]
    assert stored_values(backend, sid) == 1 + parts
    assert store.delete(sid)
    assert stored_values(backend, sid) == 0


def test_a_row_rewritten_at_its_start_keeps_exactly_its_own_parts(store: Any, backend: Backend) -> None:
    # A run's row grows as the session does (more parts over fewer), and may
    # be written shorter again (fewer over more): its data reads back as the
    # last write's, and no part of an earlier write is left.
    split = backend.name != "sqlite"
    sid = store.create(Conversation(plain(8)))
    put(store, sid, T1, K1, 0, 2)
    store._put_fragment(sid, T1, K1, 0, 4, b"grown", BIG)
    assert read_back(store, sid, T1) == [(K1, 0, 4, b"grown", BIG)]
    assert stored_values(backend, sid) == (4 if split else 1)
    shorter = BIG[: FRAGMENT_PART + 7]  # two parts
    store._put_fragment(sid, T1, K1, 0, 6, b"shorter", shorter)
    assert read_back(store, sid, T1) == [(K1, 0, 6, b"shorter", shorter)]
    assert stored_values(backend, sid) == (2 if split else 1)
    store._put_fragment(sid, T1, K1, 0, 8, b"grown again", BIG + b"!")
    assert read_back(store, sid, T1) == [(K1, 0, 8, b"grown again", BIG + b"!")]
    assert stored_values(backend, sid) == (4 if split else 1)


@pytest.mark.parametrize("backend", ["redis"], indirect=True)
def test_redis_fragment_rows_are_read_as_they_are_now_whatever_the_loads_hint(store: Any, backend: Backend) -> None:
    # A lazy load reads the fragment index first and the rows of its target
    # later, with the entries that first read gave: the data is asked for
    # with them, in one round trip (only Redis takes a hint). Rows rewritten
    # between the two reads (more parts, fewer, one merged away) are read as
    # they are now, with a second round trip.
    sid = store.create(Conversation(plain(8)))
    put(store, sid, T1, K1, 0, 2)
    store._put_fragment(sid, T1, K1, 2, 4, b"two", BIG[: FRAGMENT_PART + 7])
    put(store, sid, T2, K1, 0, 4)

    def hint() -> object:
        return store._fragment_index_and_tail(sid, 5)[2]

    assert [row[1:3] for row in read_back(store, sid, T1)] == [(0, 2), (2, 4)]
    fresh = hint()
    assert backend.round_trips(store, lambda: store._fragments(sid, T1, fresh)) == 1
    assert store._fragments(sid, T1, fresh) == store._fragments(sid, T1)
    for change in (
        lambda: store._put_fragment(sid, T1, K1, 2, 6, b"grown", BIG),  # more parts
        lambda: store._put_fragment(sid, T1, K1, 2, 6, b"shrunk", b"one part"),  # fewer
        lambda: put(store, sid, T1, K1, 0, 8),  # the row at 2 merged away
    ):
        stale = hint()
        change()
        rows = store._fragments(sid, T1, stale)
        assert [(*row[:4], b"".join(row[4])) for row in rows] == read_back(store, sid, T1)
        assert backend.round_trips(store, lambda stale=stale: store._fragments(sid, T1, stale)) == 2


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_postgres_fragment_write_is_one_statement(store: Any, backend: Backend) -> None:
    # The session row locked, the merged rows and the old parts deleted, the
    # row and its parts put: one round trip, whatever the number of parts.
    sid = store.create(Conversation(plain(8)))
    put(store, sid, T1, K1, 0, 2)
    assert backend.round_trips(store, lambda: store._put_fragment(sid, T1, K1, 0, 4, b"grown", BIG)) == 1
    assert backend.round_trips(store, lambda: put(store, sid, T1, K1, 0, 6)) == 1
    assert read_back(store, sid, T1) == [(K1, 0, 6, b"entry 0-6", b"data 0-6" * 3)]


@pytest.mark.parametrize("backend", ["postgres", "redis"], indirect=True)
def test_a_row_with_a_part_missing_is_passed_over(store: Any, backend: Backend) -> None:
    sid = store.create(Conversation(plain(4)))
    store._put_fragment(sid, T1, K1, 0, 2, b"entry", BIG)
    store._put_fragment(sid, T1, K2, 0, 2, b"kept", BIG)
    if backend.name == "redis":
        client = backend.redis()
        (field,) = [f for f in client.hkeys(backend.key(sid, "fe")) if f.endswith(b"8:messages0")]
        assert client.hdel(backend.key(sid, "fd"), field + b"#2") == 1
        client.close()
    else:
        table = f'"{backend.namespace}".thinkseal_fragment_parts'
        backend.sql(f"DELETE FROM {table} WHERE session_id = ? AND wire_key = ? AND part = 2", (sid, K1))
    assert read_back(store, sid, T1) == [(K2, 0, 2, b"kept", BIG)]
    assert len(store._fragment_index(sid)) == 2  # the index does not read the data


@pytest.mark.parametrize("backend", ["redis"], indirect=True)
def test_a_redis_row_claiming_countless_parts_is_passed_over_and_replaced(store: Any, backend: Backend) -> None:
    sid = store.create(Conversation(plain(4)))
    client = backend.redis()
    field = b"%d:%s%d:%s0" % (len(T1), T1, len(K1), K1.encode())
    client.hset(backend.key(sid, "fe"), field, b"2/%d:entry" % 10**15)  # written behind the store
    client.hset(backend.key(sid, "fd"), field, b"data")
    client.close()
    assert store._fragment_index(sid) == []
    assert read_back(store, sid, T1) == []
    put(store, sid, T1, K1, 0, 2)  # the script deletes at most FRAGMENT_MAX_PARTS parts of the old row
    assert read_back(store, sid, T1) == [(K1, 0, 2, b"entry 0-2", b"data 0-2" * 3)]
