"""The store's interface and guarantees, the same tests on every backend
(SQLite, PostgreSQL, Redis; see conftest.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

import pytest

import thinkseal
from thinkseal import AssistantMessage, ConflictError, Conversation, Tool, UserMessage, ValidationError
from thinkseal.store import SessionNotFoundError
from thinkseal.store import _base as store_base
from thinkseal.testing import respond

from .conftest import Backend
from .histories import CLAUDE, SECRET, SIGNATURES, TOOLS, opaque_turn, plain, sealed_conversation, turn


def prepare(conv: Conversation) -> Any:
    return thinkseal.provider("anthropic").prepare(conv, model="claude-sonnet-4-5", max_tokens=1024)


# -- round trips ----------------------------------------------------------------------------


def test_round_trip_keeps_every_field_and_seal(store: Any) -> None:
    conv = sealed_conversation().append(opaque_turn())
    sid = store.create(conv)
    loaded = store.load(sid)
    assert loaded == conv
    assert loaded.tools == conv.tools
    assert loaded.response_format == conv.response_format
    assert [m.to_dict() for m in loaded] == [m.to_dict() for m in conv]
    assert [getattr(m, "thinking_binding", None) for m in loaded] == [
        getattr(m, "thinking_binding", None) for m in conv
    ]
    assert [e.reason for e in loaded.replay_report(CLAUDE)] == [e.reason for e in conv.replay_report(CLAUDE)]
    assert sum(e.kept for e in loaded.replay_report(CLAUDE)) == 4
    assert prepare(loaded).content == prepare(conv).content
    assert store.verify(sid).ok
    assert store.length(sid) == len(conv)


def test_response_format_and_empty_session(store: Any) -> None:
    empty = store.create()
    assert store.load(empty) == Conversation()
    fmt = {"type": "json_schema", "json_schema": {"name": "answer", "schema": {"type": "object"}}}
    conv = Conversation([UserMessage("hi")], response_format=fmt)
    sid = store.create(conv, session_id="user-7:chat.1")
    assert sid == "user-7:chat.1"
    assert store.load(sid).response_format == fmt


def test_import_export_equal_the_json_round_trip(store: Any) -> None:
    text = sealed_conversation().to_json()
    sid = store.import_json(text)
    assert store.export_json(sid) == Conversation.from_json(text).to_json() == text
    assert Conversation.from_json(store.export_json(sid)) == Conversation.from_json(text)


# -- append, save, conflicts ------------------------------------------------------------------


def test_append_is_conditional_on_the_loaded_length(store: Any) -> None:
    sid = store.create(Conversation([UserMessage("one")]))
    assert store.append(sid, [UserMessage("two")], expected_length=1) == 2
    with pytest.raises(ConflictError) as caught:
        store.append(sid, UserMessage("stale"), expected_length=1)
    err = caught.value
    assert isinstance(err, thinkseal.ThinksealError)
    assert (err.session_id, err.expected_length, err.actual_length) == (sid, 1, 2)
    assert "stale" not in str(err)
    assert [m.text for m in store.load(sid)] == ["one", "two"]  # nothing of the loser written


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_short_postgres_append_is_one_statement(store: Any, backend: Backend) -> None:
    # The session row advanced and the rows and context row inserted in one
    # statement, once the store knows the session row (from its load, or its
    # own last write); a lost race adds the read of the session row for its error.
    sid = store.create(Conversation([UserMessage("one")]))
    store.load(sid)
    assert backend.round_trips(store, lambda: store.append(sid, [UserMessage("two")], expected_length=1)) == 1
    held = store.load(sid)
    retooled = held.append(UserMessage("three")).with_tools([Tool("added")])
    assert backend.round_trips(store, lambda: store.save(sid, retooled, expected_length=2)) == 1
    assert store.load(sid) == retooled
    assert store.load(sid).tools == (Tool("added"),)
    other = backend.store()
    other.append(sid, [UserMessage("four")], expected_length=3)

    def lose() -> None:
        with pytest.raises(ConflictError):
            store.append(sid, [UserMessage("lost")], expected_length=3)

    assert backend.round_trips(store, lose) == 2
    assert [m.text for m in store.load(sid)] == ["one", "two", "three", "four"]  # nothing of the loser written


def test_append_to_a_missing_session(store: Any) -> None:
    with pytest.raises(SessionNotFoundError):
        store.append("nope", [UserMessage("x")], expected_length=0)
    with pytest.raises(SessionNotFoundError):
        store.load("nope")
    with pytest.raises(ValidationError):
        store.load("no spaces allowed")


def test_create_refuses_an_existing_id(store: Any) -> None:
    store.create(session_id="s1")
    with pytest.raises(ConflictError) as caught:
        store.create(Conversation([UserMessage("x")]), session_id="s1")
    assert caught.value.expected_length is None
    assert len(store.load("s1")) == 0


def test_save_appends_the_new_tail_and_context(store: Any) -> None:
    conv = sealed_conversation(2)
    sid = store.create(conv)
    n = len(conv)
    grown = respond(conv.append(UserMessage("more")), CLAUDE, turn(2))
    assert store.save(sid, grown, expected_length=n) == n + 2
    assert store.load(sid) == grown
    # A new context is a new row; the messages are not rewritten.
    retooled = grown.with_tools([*TOOLS, Tool("second")])
    store.save(sid, retooled, expected_length=n + 2)
    loaded = store.load(sid)
    assert loaded.tools == retooled.tools
    assert loaded == retooled
    # The new tools change the context of every sealed turn: a plain fingerprint fact.
    assert {e.reason for e in loaded.replay_report(CLAUDE)} == {"prefix-changed"}


def test_save_refuses_a_conversation_that_does_not_extend_the_stored_one(store: Any) -> None:
    conv = sealed_conversation(2)
    sid = store.create(conv)
    edited = conv.with_messages([UserMessage("rewritten"), *conv.messages[1:]]).append(UserMessage("x"))
    with pytest.raises(ConflictError, match="does not extend"):
        store.save(sid, edited, expected_length=len(conv))
    with pytest.raises(ConflictError):
        store.save(sid, conv.append(UserMessage("x")), expected_length=len(conv) - 1)
    assert store.load(sid) == conv


# -- refresh, fork, list, delete --------------------------------------------------------------


def test_refresh_reads_only_the_new_rows(store: Any, backend: Any) -> None:
    conv = sealed_conversation(3)
    sid = store.create(conv)
    held = store.load(sid)
    assert store.refresh(sid, held) is held  # nothing new: the same object
    other = store.load(sid)
    newer = respond(other.append(UserMessage("next")), CLAUDE, turn(3))
    store.save(sid, newer, expected_length=len(other))

    reads: list[tuple[int, int]] = []
    read = store._read

    def counted(session_id: str, start: int) -> Any:
        head, rows = read(session_id, start)
        reads.append((start, len(rows)))
        return head, rows

    store._read = counted
    # An old row edited behind the store's back is not even read by refresh.
    backend.set_body(sid, 1, json.dumps({"role": "user", "content": "edited"}))
    refreshed = store.refresh(sid, held)
    assert reads == [(len(held) - 1, 3)]  # one row of overlap, then the two new ones
    assert refreshed == newer
    assert refreshed[1] is held[1]
    reasons = [e.reason for e in refreshed.replay_report(CLAUDE)]
    assert reasons == ["kept"] * 3 + ["unpaired-tool-call"]  # the newest call is not answered yet


class _ChainSteps:
    """Stands in for thinkseal._core where the store's chain is computed,
    counting the chain steps asked of it."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.steps = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def chain(self, start: bytes, digests: bytes) -> bytes:
        self.steps += len(digests) // 32
        return self.real.chain(start, digests)


@pytest.mark.parametrize("length", [40, 400])
def test_refresh_after_k_new_rows_chains_only_those(store: Any, length: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from thinkseal import _replay  # noqa: PLC0415
    from thinkseal.store import _codec  # noqa: PLC0415

    sid = store.create(Conversation([UserMessage(f"m{i}") for i in range(length)]))
    held = store.load(sid)
    counting = _ChainSteps(_codec._core)
    monkeypatch.setattr(_codec, "_core", counting)
    monkeypatch.setattr(_replay, "_core", counting)
    for step in range(3):  # held, then what refresh gave, each checked against the store in O(new rows)
        store.append(sid, [UserMessage(f"new {step}a"), UserMessage(f"new {step}b")], expected_length=len(held))
        counting.steps = 0
        refreshed = store.refresh(sid, held)
        assert len(refreshed) == len(held) + 2
        assert counting.steps <= 2, f"{counting.steps} chain steps for 2 new rows after {len(held)}"
        held = refreshed
    monkeypatch.undo()
    assert held == store.load(sid)


def test_refresh_of_a_conversation_that_is_not_a_prefix_loads_whole(store: Any) -> None:
    sid = store.create(Conversation([UserMessage("a"), UserMessage("b")]))
    stranger = Conversation([UserMessage("x"), UserMessage("y")])
    assert store.refresh(sid, stranger) == store.load(sid)
    assert store.refresh(sid, Conversation([UserMessage("a"), UserMessage("b"), UserMessage("c")])) == store.load(sid)


def test_refresh_takes_a_new_context(store: Any) -> None:
    conv = Conversation([UserMessage("a")], tools=TOOLS)
    sid = store.create(conv)
    held = store.load(sid)
    store.save(sid, held.with_tools([]), expected_length=1)
    assert store.refresh(sid, held).tools == ()


def test_fork_shares_the_prefix_and_keeps_its_seals(store: Any) -> None:
    conv = sealed_conversation(3)
    sid = store.create(conv)
    fork = store.fork(sid, length=6)
    assert store.load(fork) == Conversation(conv.messages[:6], tools=TOOLS)
    assert [e.kept for e in store.load(fork).replay_report(CLAUDE)] == [True, True]
    whole = store.fork(sid, session_id="whole-copy")
    assert whole == "whole-copy"
    assert store.load(whole) == conv
    store.append(fork, [UserMessage("branch")], expected_length=6)
    assert len(store.load(sid)) == len(conv)  # the source is untouched
    with pytest.raises(ValidationError):
        store.fork(sid, length=len(conv) + 1)
    with pytest.raises(ConflictError):
        store.fork(sid, session_id="whole-copy")


def test_fork_takes_the_context_in_force_at_its_length(store: Any) -> None:
    sid = store.create(Conversation([UserMessage("a")]))
    store.save(sid, store.load(sid).with_tools(TOOLS).append(UserMessage("b")), expected_length=1)
    assert store.load(store.fork(sid, length=0)).tools == ()
    assert store.load(store.fork(sid, length=1)).tools == tuple(TOOLS)


def test_list_and_delete(store: Any) -> None:
    a = store.create()
    b = store.create(Conversation([UserMessage("x")]))
    assert store.list_sessions() == [a, b]
    assert store.delete(a) is True
    assert store.delete(a) is False
    assert store.list_sessions() == [b]
    with pytest.raises(SessionNotFoundError):
        store.load(a)
    store.create(session_id=a)  # the id is free again, and the new session empty
    assert len(store.load(a)) == 0


def test_a_store_is_a_context_manager(backend: Any) -> None:
    with backend.store() as store:
        sid = store.create(Conversation([UserMessage("x")]))
    with backend.store() as again:
        assert len(again.load(sid)) == 1


# -- tampering ----------------------------------------------------------------------------------


def _sealed_indices(conv: Conversation) -> list[int]:
    return [e.index for e in conv.replay_report(CLAUDE)]


@pytest.mark.parametrize("with_digest", [False, True], ids=["body-only", "body-and-digest"])
def test_an_edited_row_unseals_that_turn_and_every_later_one(
    store: Any, backend: Any, with_digest: bool, caplog: Any
) -> None:
    conv = sealed_conversation(4)
    sid = store.create(conv)
    turns = _sealed_indices(conv)
    target = turns[1]
    edited = conv[target].with_content("an edited answer")  # what an editor of the row would write...
    body = json.loads(backend.get_body(sid, target))
    body["parts"] = [{"type": "text", "text": "an edited answer"} if p["type"] == "text" else p for p in body["parts"]]
    # ...keeping the old binding and the signed thinking in the row
    assert body["binding"] is not None
    digest = edited.with_thinking(conv[target].thinking).digest if with_digest else None
    backend.set_body(sid, target, json.dumps(body), digest=digest)

    with caplog.at_level(logging.WARNING, logger="thinkseal.store"):
        loaded = store.load(sid)
    report = {e.index: e.reason for e in loaded.replay_report(CLAUDE)}
    assert report[turns[0]] == "kept"
    assert report[target] == "turn-changed"
    assert all(report[i] == "prefix-changed" for i in turns[2:])
    assert loaded[target].content == "an edited answer"  # kept as stored

    integrity = store.verify(sid)
    assert not integrity.ok
    assert integrity.mismatched == (target,)
    assert any(str(target) in r.getMessage() for r in caplog.records)
    for record in caplog.records:  # the log names positions, never content
        assert "edited" not in record.getMessage()
        assert "SIG-" not in record.getMessage()

    sent = prepare(loaded).content.decode()
    assert SIGNATURES[0] in sent  # the untouched first turn still goes out sealed
    for i in range(1, 4):  # nothing stale: no later signature or redacted data
        assert SIGNATURES[i] not in sent
    assert f"{SECRET}-1" not in sent


def test_a_malformed_row_names_its_position_not_its_content(store: Any, backend: Any) -> None:
    conv = sealed_conversation(2)
    sid = store.create(conv)
    backend.set_body(sid, 2, '{"role": "assistant", "parts": [{"type": "thinking", "text": "t", "signature": 5}]}')
    with pytest.raises(ValidationError) as caught:
        store.load(sid)
    assert caught.value.path is not None
    assert caught.value.path.startswith("$.messages[2]")
    backend.set_body(sid, 2, '{"role": "assistant", "parts": [' + json.dumps(SIGNATURES[0]))
    with pytest.raises(ValidationError) as caught:
        store.load(sid)
    assert SIGNATURES[0] not in str(caught.value)
    assert "message 2" in str(caught.value)


# -- cost ------------------------------------------------------------------------------------


def test_appending_one_turn_writes_the_same_small_number_of_rows_at_100_and_15000(store: Any, backend: Any) -> None:
    short = store.create(Conversation(plain(100)))
    long = store.create(Conversation(plain(15_000)))  # one bulk write
    written = {}
    for sid, n in ((short, 100), (long, 15_000)):
        written[n] = backend.count_writes(
            store, lambda sid=sid, n=n: store.append(sid, [AssistantMessage("one more turn")], expected_length=n)
        )
    assert written[100] == written[15_000]
    # SQLite and PostgreSQL: the message row and the session row; Redis: one RPUSH and one HSET.
    assert written[100] == 2
    assert len(store.load(long)) == 15_001


# -- async ------------------------------------------------------------------------------------


def test_async_store_decodes_large_loads_off_the_event_loop(backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[tuple[str, int, int]] = []
    for name in ("build", "extend"):
        original = getattr(store_base, name)

        def recording(*args: Any, name: str = name, original: Any = original) -> Any:
            # build(session, head, rows): every row; extend(session, held, head, rows): one before the new ones
            rows = args[1].length if name == "build" else args[2].length - max(len(args[1]) - 1, 0)
            threads.append((name, rows, threading.get_ident()))
            return original(*args)

        monkeypatch.setattr(store_base, name, recording)

    async def main() -> int:
        async with backend.async_store() as store:
            small = await store.create(sealed_conversation(2))
            large = await store.create(
                Conversation([UserMessage(f"turn {i}") for i in range(store_base.OFF_LOOP_ROWS + 1)])
            )
            await store.load(small)
            held = await store.load(large)
            assert len(held) == store_base.OFF_LOOP_ROWS + 1
            await store.append(
                large,
                [UserMessage(f"more {i}") for i in range(store_base.OFF_LOOP_ROWS + 1)],
                expected_length=len(held),
            )
            assert len(await store.refresh(large, held)) == 2 * (store_base.OFF_LOOP_ROWS + 1)
            assert (await store.verify(large)).ok
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    rows = store_base.OFF_LOOP_ROWS
    on_loop = [(name, n) for name, n, thread in threads if thread == loop_thread]
    off_loop = [(name, n) for name, n, thread in threads if thread != loop_thread]
    assert on_loop == [("build", len(sealed_conversation(2)))]
    assert off_loop == [("build", rows + 1), ("extend", rows + 2), ("build", 2 * (rows + 1))]


def test_async_store_has_the_same_interface(backend: Any) -> None:
    async def main() -> None:
        async with backend.async_store() as store:
            conv = sealed_conversation(2)
            sid = await store.create(conv)
            held = await store.load(sid)
            assert held == conv
            assert await store.append(sid, [UserMessage("x")], expected_length=len(conv)) == len(conv) + 1
            with pytest.raises(ConflictError):
                await store.append(sid, [UserMessage("y")], expected_length=len(conv))
            refreshed = await store.refresh(sid, held)
            assert len(refreshed) == len(conv) + 1
            await store.save(sid, refreshed.with_tools([]), expected_length=len(refreshed))
            assert (await store.load(sid)).tools == ()
            fork = await store.fork(sid, length=3)
            assert await store.length(fork) == 3
            assert await store.list_sessions() == [sid, fork]
            assert (await store.verify(sid)).ok
            text = await store.export_json(sid)
            assert await store.export_json(await store.import_json(text)) == text
            assert await store.delete(fork)
            with pytest.raises(SessionNotFoundError):
                await store.load(fork)

    asyncio.run(main())
