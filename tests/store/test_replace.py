"""``replace`` rewrites a whole session atomically (pruning, compaction),
under the same optimistic condition as ``append``: ``ConflictError`` when the
session no longer has the length the caller read, or was replaced since (even
back to the same length), and nothing written then."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from thinkseal import ConflictError, Conversation, Tool, UserMessage
from thinkseal.store import SessionNotFoundError

from .conftest import Backend
from .histories import CLAUDE, TOOLS, sealed_conversation


def test_replace_swaps_the_whole_session(either: Any) -> None:
    store = either
    conv = sealed_conversation(3)
    sid = store.create(conv, metadata={"tags": ["kept"]})
    compacted = Conversation([conv[0], UserMessage("summary of the first turns"), *conv.messages[-2:]], [Tool("other")])
    assert store.replace(sid, compacted, expected_length=len(conv)) == len(compacted)
    loaded = store.load(sid)
    assert loaded == compacted
    assert loaded.tools == (Tool("other"),)
    assert store.length(sid) == len(compacted)
    assert store.verify(sid).ok
    assert store.info(sid).metadata == {"tags": ["kept"]}
    assert store.list_sessions() == [sid]
    assert store.append(sid, [UserMessage("next")], expected_length=len(compacted)) == len(compacted) + 1
    assert store.replace(sid, Conversation(), expected_length=len(compacted) + 1) == 0
    assert store.load(sid) == Conversation()
    assert store.verify(sid).ok
    with pytest.raises(SessionNotFoundError):
        store.replace("absent", conv, expected_length=0)


def test_replace_is_conditional_on_the_length_read(either: Any) -> None:
    store = either
    sid = store.create(Conversation([UserMessage("one")]))
    held = store.load(sid)
    store.append(sid, [UserMessage("two")], expected_length=1)
    with pytest.raises(ConflictError) as caught:
        store.replace(sid, Conversation([UserMessage("stale")]), expected_length=len(held))
    assert (caught.value.expected_length, caught.value.actual_length) == (1, 2)
    assert [m.text for m in store.load(sid)] == ["one", "two"]


def test_a_session_replaced_back_to_the_same_length_is_a_conflict(backend: Backend) -> None:
    mine, other = backend.store(), backend.store()
    sid = mine.create(Conversation([UserMessage("a"), UserMessage("b")], tools=TOOLS))
    held = mine.load(sid)
    other.replace(sid, Conversation([UserMessage("x"), UserMessage("y")]), expected_length=2)
    for write in (
        lambda: mine.append(sid, [UserMessage("based on a, b")], expected_length=len(held)),
        lambda: mine.replace(sid, Conversation([UserMessage("compacted a, b")]), expected_length=len(held)),
    ):
        with pytest.raises(ConflictError, match="replaced"):
            write()
    with pytest.raises(ConflictError, match="replaced"):
        mine.save(sid, held.append(UserMessage("based on a, b")), expected_length=len(held))
    with pytest.raises(ConflictError, match="does not extend"):  # a store that never read it: checked by content
        backend.store().save(sid, held.append(UserMessage("based on a, b")), expected_length=len(held))
    assert [m.text for m in mine.load(sid)] == ["x", "y"]
    # Refreshed, the same writer sees the new session (loaded whole) and goes on.
    refreshed = mine.refresh(sid, held)
    assert [m.text for m in refreshed] == ["x", "y"]
    assert refreshed.tools == ()
    assert mine.append(sid, [UserMessage("z")], expected_length=len(refreshed)) == 3


def test_refresh_across_a_replace_that_kept_the_tail_loads_whole(either: Any) -> None:
    store = either
    conv = Conversation([UserMessage("a"), UserMessage("b"), UserMessage("c")])
    sid = store.create(conv)
    held = store.load(sid)
    rewritten = Conversation([UserMessage("x"), UserMessage("b"), UserMessage("c"), UserMessage("d")])
    store.replace(sid, rewritten, expected_length=3)
    assert store.refresh(sid, held) == rewritten  # not a, b, c + d: the prefix is checked by chain value


def test_the_async_store_sees_a_replace_back_to_the_same_length(backend: Backend) -> None:
    async def main() -> None:
        async with backend.async_store() as mine, backend.async_store() as other:
            sid = await mine.create(Conversation([UserMessage("a"), UserMessage("b")]))
            held = await mine.load(sid)
            await other.replace(sid, Conversation([UserMessage("x"), UserMessage("y")]), expected_length=2)
            with pytest.raises(ConflictError, match="replaced"):
                await mine.append(sid, [UserMessage("based on a, b")], expected_length=len(held))
            with pytest.raises(ConflictError, match="replaced"):
                await mine.replace(sid, Conversation(), expected_length=len(held))
            assert [m.text for m in await mine.load(sid)] == ["x", "y"]

    asyncio.run(main())


def test_replace_keeps_seals_it_was_given(either: Any) -> None:
    store = either
    conv = sealed_conversation(2)
    sid = store.create(Conversation([UserMessage("old")]))
    store.replace(sid, conv, expected_length=1)
    assert [e.kept for e in store.load(sid).replay_report(CLAUDE)] == [True, True]


@pytest.mark.parametrize("backend", ["sqlite", "redis"], indirect=True)
def test_a_read_sees_one_snapshot_while_a_replace_commits(backend: Backend) -> None:
    """A replace committed in the middle of a read (after the session row is
    read, before all its rows are) leaves the read whole: the session as it
    was, not its row with the new rows (SQLite reads in one transaction;
    Redis reads in batches, each checked against the epoch, and reads again
    when it changed; PostgreSQL reads both in one statement, which has no
    middle: `test_a_postgres_read_is_one_statement`)."""
    mine, other = backend.store(), backend.store()
    old = Conversation([UserMessage(f"old {i}") for i in range(1500)])  # more than one Redis batch
    new = Conversation([UserMessage(f"new {i}") for i in range(1200)])
    sid = mine.create(old)
    replaced: list[bool] = []

    def replace_once() -> None:
        if not replaced:
            replaced.append(True)
            other.replace(sid, new, expected_length=len(old))

    if backend.name == "redis":
        rows_script = mine._rows_script

        def racing_rows(*args: Any) -> Any:
            replace_once()
            return rows_script(*args)

        mine._rows_script = racing_rows
    else:
        head_in = mine._head_in

        def racing_head(*args: Any) -> Any:
            head = head_in(*args)
            replace_once()
            return head

        mine._head_in = racing_head
    loaded = mine.load(sid)
    assert replaced
    assert loaded in (old, new)  # one or the other, whole
    if backend.name != "redis":
        assert loaded == old  # the snapshot taken before the replace
    else:
        assert loaded == new  # read again after the epoch changed
    assert mine.load(sid) == new


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_postgres_read_is_one_statement(backend: Backend) -> None:
    """PostgreSQL reads the session row and the message rows of a load or a
    refresh in one statement, one snapshot: one round trip, and every load
    made while another store replaces the session back and forth is one
    version whole."""
    mine, other = backend.store(), backend.store()
    old = Conversation([UserMessage(f"old {i}") for i in range(1500)])
    new = Conversation([UserMessage(f"new {i}") for i in range(1200)])
    sid = mine.create(old)
    held = mine.load(sid)
    assert backend.round_trips(mine, lambda: mine.load(sid)) == 1
    other.append(sid, [UserMessage("more")], expected_length=len(old))
    assert backend.round_trips(mine, lambda: mine.refresh(sid, held)) == 1

    versions = [old.append(UserMessage("more")), new]
    done = threading.Event()

    def swap() -> None:
        try:
            for i in range(8):
                other.replace(sid, versions[(i + 1) % 2], expected_length=len(versions[i % 2]))
        finally:
            done.set()

    swapper = threading.Thread(target=swap)
    swapper.start()
    loads = 0
    while not done.is_set():
        assert mine.load(sid) in versions
        loads += 1
    swapper.join()
    assert loads
    assert mine.load(sid) == versions[0]
