"""Per-session metadata: a small JSON object (provider, model, a user's
tags...) set at ``create`` and replaced by ``set_metadata``, returned by
``info``, ``load_session`` and ``sessions``, validated as JSON within the
package's limits, kept by ``replace``, copied by ``fork``, and independent of
the messages (an update never makes an append conflict)."""

from __future__ import annotations

import math
from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, UserMessage, ValidationError
from thinkseal.store import SessionInfo, SessionNotFoundError
from thinkseal.store._codec import MAX_METADATA

from .conftest import Backend
from .histories import sealed_conversation

META = {"provider": "anthropic", "model": "claude-sonnet-4-5", "tags": ["support", "vip"], "nested": {"n": [1, 2.5]}}


def test_metadata_is_set_at_create_and_returned(either: Any) -> None:
    store = either
    conv = sealed_conversation(2)
    sid = store.create(conv, metadata=META)
    plain = store.create(Conversation([UserMessage("x")]))

    info = store.info(sid)
    assert isinstance(info, SessionInfo)
    assert (info.session_id, info.length, info.version) == (sid, len(conv), thinkseal.FINGERPRINT_VERSION)
    assert info.metadata == META
    assert list(info.metadata) == list(META)  # key order kept
    with pytest.raises(TypeError):
        info.metadata["provider"] = "other"  # type: ignore[index]
    assert store.info(plain).metadata == {}

    loaded, loaded_info = store.load_session(sid)
    assert loaded == conv
    assert loaded_info == info
    assert store.sessions() == [info, store.info(plain)]


def test_set_metadata_replaces_it_and_never_conflicts_with_an_append(either: Any) -> None:
    store = either
    sid = store.create(Conversation([UserMessage("one")]), metadata={"tags": ["a"]})
    held = store.load(sid)
    store.set_metadata(sid, {"tags": ["a", "b"], "model": "m"})
    assert store.append(sid, [UserMessage("two")], expected_length=len(held)) == 2  # no conflict
    assert store.info(sid).metadata == {"tags": ["a", "b"], "model": "m"}
    assert store.info(sid).length == 2
    store.set_metadata(sid, {})
    assert store.info(sid).metadata == {}
    with pytest.raises(SessionNotFoundError):
        store.set_metadata("absent", {"x": 1})
    with pytest.raises(SessionNotFoundError):
        store.info("absent")


def test_replace_keeps_it_and_fork_and_import_carry_it(either: Any) -> None:
    store = either
    conv = sealed_conversation(2)
    sid = store.create(conv, metadata=META)
    assert store.replace(sid, Conversation([UserMessage("compacted")]), expected_length=len(conv)) == 1
    assert store.info(sid).metadata == META
    fork = store.fork(sid)
    assert store.info(fork).metadata == META
    imported = store.import_json(conv.to_json(), metadata={"source": "import"})
    assert store.info(imported).metadata == {"source": "import"}


DEEP: dict[str, Any] = {}
_level = DEEP
for _ in range(thinkseal.limits().max_depth + 1):
    _level["x"] = {}
    _level = _level["x"]


@pytest.mark.parametrize(
    "metadata",
    [
        ["not", "an", "object"],
        "text",
        {"nan": math.nan},
        {"bytes": b"raw"},
        {"object": object()},
        {1: "non-string key"},
        DEEP,
        {"big": "x" * MAX_METADATA},
    ],
    ids=["list", "str", "nan", "bytes", "object", "int-key", "too-deep", "too-big"],
)
def test_metadata_that_is_not_a_small_json_object_is_refused(either: Any, metadata: Any) -> None:
    store = either
    with pytest.raises(ValidationError) as caught:
        store.create(metadata=metadata)
    assert caught.value.path is not None
    assert caught.value.path.startswith("metadata")
    assert store.list_sessions() == []
    sid = store.create(metadata={"kept": True})
    with pytest.raises(ValidationError):
        store.set_metadata(sid, metadata)
    assert store.info(sid).metadata == {"kept": True}


@pytest.mark.parametrize("stored", [b"not json", b"[1, 2]", b'{"a": 1, "a": 2}'])
def test_a_stored_metadata_that_is_not_a_json_object_is_named(backend: Backend, stored: bytes) -> None:
    store = backend.store()
    sid = store.create(Conversation([UserMessage("x")]))
    if backend.name == "redis":
        client = backend.redis()
        client.hset(backend.key(sid, "s"), "metadata", stored)
        client.close()
    else:
        backend.sql("UPDATE {s} SET metadata = ? WHERE session_id = ?", (stored.decode(), sid))
    for read in (store.info, store.load_session, lambda s: store.sessions()):
        with pytest.raises(ValidationError) as caught:
            read(sid)
        assert caught.value.path == "$.metadata"
        assert sid in str(caught.value)
    assert len(store.load(sid)) == 1  # the messages are unaffected
