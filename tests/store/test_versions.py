"""Each session records the fingerprint version its digests were made under
(``thinkseal.FINGERPRINT_VERSION`` when written). A session of another version
reads as ``version-mismatch``: its rows are not checked against digests this
release cannot make, its sealed turns go out unsealed as for any binding of
another version, and writes to it raise ``VersionMismatchError``, never
``ConflictError``, until ``migrate`` re-encodes it; ``Conversation.rebind`` and
``replace`` seal it again for a caller who vouches for it."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

import pytest

import thinkseal
from thinkseal import ConflictError, UserMessage
from thinkseal.store import VersionMismatchError

from .conftest import Backend
from .histories import CLAUDE, SIGNATURES, sealed_conversation

OTHER = thinkseal.FINGERPRINT_VERSION + 1


def _other_digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=32, person=b"other version").digest()


def _as_other_version(body: bytes) -> bytes:
    return body.replace(
        f"thinkseal-binding/{thinkseal.FINGERPRINT_VERSION};".encode(), f"thinkseal-binding/{OTHER};".encode()
    )


def store_as_other_version(backend: Backend, sid: str) -> None:
    """Rewrite a stored session as a release of fingerprint version ``OTHER``
    would have written it: its bindings of that version, every digest and
    chain value made another way, the session row recording the version."""
    chain = bytes(32)
    if backend.name == "redis":
        client = backend.redis()
        key = backend.key(sid, "m")
        for position, entry in enumerate(client.lrange(key, 0, -1)):
            body = _as_other_version(entry[64:])
            digest = _other_digest(body)
            chain = _other_digest(chain + digest)
            client.lset(key, position, digest + chain + body)
        context = client.lindex(backend.key(sid, "c"), 0)
        client.lset(backend.key(sid, "c"), 0, _other_digest(context[42:]) + context[32:])
        client.hset(backend.key(sid, "s"), mapping={"chain": chain, "version": OTHER})
        client.close()
        return
    rows = backend.sql("SELECT position, body FROM {m} WHERE session_id = ? ORDER BY position", (sid,))
    for position, body in rows:
        text = _as_other_version(body if isinstance(body, bytes) else body.encode())
        digest = _other_digest(text)
        chain = _other_digest(chain + digest)
        backend.sql(
            "UPDATE {m} SET body = ?, digest = ?, chain = ? WHERE session_id = ? AND position = ?",
            (text.decode(), digest, chain, sid, position),
        )
    backend.sql("UPDATE {c} SET digest = ? WHERE session_id = ?", (_other_digest(b"context"), sid))
    backend.sql("UPDATE {s} SET chain = ?, version = ? WHERE session_id = ?", (chain, OTHER, sid))


def prepare(conv: thinkseal.Conversation) -> Any:
    return thinkseal.provider("anthropic").prepare(conv, model=CLAUDE.model, max_tokens=1024)


def test_a_session_of_another_version_reads_as_version_mismatch(
    either: Any, backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    store = either
    conv = sealed_conversation(3)
    sid = store.create(conv)
    assert store.info(sid).version == thinkseal.FINGERPRINT_VERSION
    store_as_other_version(backend, sid)

    integrity = store.verify(sid)
    assert integrity.status == "version-mismatch"
    assert integrity.version == OTHER
    assert integrity.version_mismatch
    assert not integrity.ok
    assert integrity.mismatched == ()  # not one row reported as edited
    assert integrity.context_mismatched == ()
    assert not integrity.session_mismatched
    info = store.info(sid)
    assert (info.version, info.version_mismatch) == (OTHER, True)

    with caplog.at_level(logging.INFO, logger="thinkseal.store"):
        loaded = store.load(sid)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # nothing reads as tampering
    assert any(f"version {OTHER}" in r.getMessage() for r in caplog.records)
    assert len(loaded) == len(conv)
    assert loaded.messages[:2] == conv.messages[:2]  # read as stored (only the bindings name another version)
    assert {e.reason for e in loaded.replay_report(CLAUDE)} == {"version-mismatch"}
    sent = prepare(loaded).content.decode()
    assert not any(signature in sent for signature in SIGNATURES)  # unsealed, as for any binding of another version

    grown = loaded.append(UserMessage("next"))
    for write in (
        lambda: store.save(sid, grown, expected_length=len(conv)),
        lambda: store.append(sid, [UserMessage("next")], expected_length=len(conv)),
    ):
        with pytest.raises(VersionMismatchError) as caught:
            write()
        assert not isinstance(caught.value, ConflictError)
        assert (caught.value.session_id, caught.value.version) == (sid, OTHER)
        assert caught.value.current == thinkseal.FINGERPRINT_VERSION
        assert "differ" not in str(caught.value)
        assert "migrate" in str(caught.value)
    assert store.length(sid) == len(conv)
    assert store.refresh(sid, loaded) == loaded  # read whole, not chained onto


def test_migrate_re_encodes_and_rebind_reseals(either: Any, backend: Backend) -> None:
    store = either
    conv = sealed_conversation(3)
    sid = store.create(conv)
    store_as_other_version(backend, sid)
    n = len(conv)

    assert store.migrate(sid) == n
    integrity = store.verify(sid)
    assert integrity.ok
    assert integrity.version == thinkseal.FINGERPRINT_VERSION
    migrated = store.load(sid)
    # The rows are current now, the bindings are still those of the other
    # version: nothing is sealed that the caller has not vouched for.
    assert {e.reason for e in migrated.replay_report(CLAUDE)} == {"version-mismatch"}
    assert store.append(sid, [UserMessage("after")], expected_length=n) == n + 1
    assert store.migrate(sid) == n + 1  # current already: nothing written

    vouched = store.load(sid).rebind(CLAUDE)
    assert store.replace(sid, vouched, expected_length=n + 1) == n + 1
    resealed = store.load(sid)
    assert [e.reason for e in resealed.replay_report(CLAUDE)] == ["kept"] * 3
    assert SIGNATURES[0] in prepare(resealed).content.decode()
    assert store.verify(sid).ok


def test_a_current_session_records_the_current_version(either: Any) -> None:
    sid = either.create(sealed_conversation(1))
    fork = either.fork(sid)
    for session in (sid, fork):
        assert either.info(session).version == thinkseal.FINGERPRINT_VERSION
        assert not either.info(session).version_mismatch
    assert json.loads(either.export_json(sid))["version"] == 2  # the JSON format version, unrelated
