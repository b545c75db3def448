"""The session row's chain value is checked: edited in the database, it is
reported by ``verify`` and ``load`` as a tampered session row (no message row
is blamed), and an append is refused rather than chained onto it (which would
make the honest new row look edited). ``replace`` rewrites the session."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from thinkseal import ConflictError, UserMessage, ValidationError

from .conftest import Backend
from .histories import CLAUDE, sealed_conversation

EDITED_CHAIN = bytes(range(32))


def edit_session_chain(backend: Backend, sid: str) -> None:
    if backend.name == "redis":
        client = backend.redis()
        client.hset(backend.key(sid, "s"), "chain", EDITED_CHAIN)
        client.close()
    else:
        backend.sql("UPDATE {s} SET chain = ? WHERE session_id = ?", (EDITED_CHAIN, sid))


def test_an_edited_session_chain_is_reported_and_blocks_appends(
    either: Any, backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    store = either
    conv = sealed_conversation(3)
    sid = store.create(conv)
    edit_session_chain(backend, sid)

    integrity = store.verify(sid)
    assert not integrity.ok
    assert integrity.session_mismatched
    assert integrity.status == "tampered"
    assert integrity.mismatched == ()  # no message row is blamed
    assert integrity.context_mismatched == ()

    with caplog.at_level(logging.WARNING, logger="thinkseal.store"):
        loaded = store.load(sid)
    assert loaded == conv  # the messages are as they were, and so are their seals
    assert all(e.kept for e in loaded.replay_report(CLAUDE))
    assert any("session row" in r.getMessage() and sid in r.getMessage() for r in caplog.records)

    with pytest.raises(ValidationError, match="session row") as caught:
        store.append(sid, [UserMessage("honest")], expected_length=len(conv))
    assert caught.value.path == "$.session.chain"
    assert not isinstance(caught.value, ConflictError)
    with pytest.raises(ValidationError, match="session row"):
        store.save(sid, loaded.append(UserMessage("honest")), expected_length=len(conv))
    assert store.length(sid) == len(conv)  # nothing written

    # Rewritten from its rows, the session takes appends again, and checks.
    assert store.replace(sid, store.load(sid), expected_length=len(conv)) == len(conv)
    assert store.verify(sid).ok
    assert store.append(sid, [UserMessage("honest")], expected_length=len(conv)) == len(conv) + 1
    assert store.verify(sid).ok


def test_an_edit_after_this_store_wrote_is_caught_at_the_next_append(backend: Backend) -> None:
    store = backend.store()
    sid = store.create(sealed_conversation(1))
    n = store.append(sid, [UserMessage("first")], expected_length=store.length(sid))  # the head is known now
    edit_session_chain(backend, sid)
    with pytest.raises(ValidationError, match="session row"):
        store.append(sid, [UserMessage("second")], expected_length=n)
    assert store.length(sid) == n


def test_an_untouched_session_row_checks(either: Any) -> None:
    sid = either.create(sealed_conversation(2))
    integrity = either.verify(sid)
    assert integrity.ok
    assert integrity.status == "ok"
    assert not integrity.session_mismatched
    empty = either.create()
    assert either.verify(empty).ok
