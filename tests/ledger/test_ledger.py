"""The seal ledger on every backend: what it recognises, what it refuses, and
that nothing it holds (or fails to hold) ever makes a stale seal go out.

The central property: a history the ledger has seen, imported with every
binding stripped (as a framework or a client in another language would hold
it) and attached, is decided exactly as the original bound history, for every
adapter and model; after any edit, a turn is kept only where the edited
original (bindings intact) would keep it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

import thinkseal
from thinkseal import AssistantMessage, Conversation, Message, Origin, ThinkingBlock, ToolCall, UserMessage
from thinkseal.ledger import AttachedTurn, Ledger, Recognition
from thinkseal.ledger import _ledger as ledger_module
from thinkseal.ledger._entries import keys, sealed_data
from thinkseal.ledger._redis import RedisBackend
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import respond

from ..providers.random_histories import MODELS, History, play, steps
from ..providers.sealed import OPTIONS
from ..providers.test_edit_routes import ROUTES, _edit
from .conftest import LedgerBackend

CLAUDE = Origin("anthropic", "claude-a")


def stripped(conv: Conversation) -> Conversation:
    """``conv`` as another program holds it: the same messages, no bindings."""
    messages = [m._bound(None) if isinstance(m, AssistantMessage) else m for m in conv]
    return Conversation(messages, conv.tools, conv.response_format)


def record_all(ledger: Ledger, conv: Conversation) -> int:
    return sum(ledger.record(m) for m in conv if isinstance(m, AssistantMessage) and m.thinking_binding)


def reports(conv: Conversation, target: str) -> list[list[tuple[int, str]]]:
    out = []
    for model in MODELS:
        try:
            req = thinkseal.provider(target).prepare(conv, model=model, **OPTIONS[target])
        except thinkseal.ReplayError as err:
            out.append([(-1, str(err.reason))])
            continue
        out.append([(e.index, str(e.reason)) for e in req.report])
    return out


def loop(turns: int) -> Conversation:
    conv = Conversation([UserMessage("start")])
    for i in range(turns):
        reply = AssistantMessage(
            None,
            [ToolCall(f"c{i}", "f", {"i": i})],
            [ThinkingBlock.Text(f"t{i}", f"sig{i}"), ThinkingBlock.Redacted(f"r{i}")],
        )
        conv = respond(conv, CLAUDE, reply).append(thinkseal.ToolMessage(f"done {i}", f"c{i}"))
    return conv


# -- recognition -----------------------------------------------------------------------------


def test_a_seen_history_is_recognised_and_kept(backend: LedgerBackend) -> None:
    ledger = backend.ledger()
    conv = loop(5)
    assert record_all(ledger, conv) == 10  # two sealed data per turn
    imported = stripped(conv)
    assert [e.kept for e in imported.replay(CLAUDE).report] == [False] * 5  # on its own: unbound
    attached = ledger.attach(imported)
    assert attached.turns == tuple(AttachedTurn(i, "recognised") for i in range(1, 11, 2))
    assert attached.recognised == 5
    assert [e.reason for e in attached.conversation.replay(CLAUDE).report] == ["kept"] * 5
    assert list(attached.conversation) == list(conv)  # the very bindings, back


def test_an_edited_turn_is_changed_and_a_changed_prefix_still_unseals(backend: LedgerBackend) -> None:
    ledger = backend.ledger()
    conv = loop(3)
    record_all(ledger, conv)
    messages: list[Message] = list(stripped(conv))
    turn = messages[3]
    assert isinstance(turn, AssistantMessage)
    # The same sealed data beside other content: the turn no longer matches its binding.
    messages[3] = AssistantMessage.from_parts([*turn.thinking, "added text", *turn.tool_calls])
    attached = ledger.attach(Conversation(messages))
    assert [t.status for t in attached.turns] == ["recognised", "changed", "recognised"]
    assert [e.reason for e in attached.conversation.replay(CLAUDE).report] == ["kept", "unbound", "prefix-changed"]
    # An edit before a turn: recognised, and the replay decision unseals it.
    messages = list(stripped(conv))
    messages[0] = UserMessage("start, edited")
    attached = ledger.attach(Conversation(messages))
    assert attached.recognised == 3
    assert [e.reason for e in attached.conversation.replay(CLAUDE).report] == ["prefix-changed"] * 3


def test_a_history_never_seen_is_unknown_and_goes_out_unsealed(backend: LedgerBackend) -> None:
    ledger = backend.ledger()
    record_all(ledger, loop(2))
    other = stripped(loop(2).with_messages([UserMessage("other start"), *list(loop(2))[1:]]))
    fresh = Conversation([UserMessage("q"), AssistantMessage("a", thinking=[ThinkingBlock.Text("t", "never-seen")])])
    attached = ledger.attach(fresh)
    assert attached.turns == (AttachedTurn(1, Recognition.UNKNOWN),)
    assert attached.conversation is fresh
    req = thinkseal.provider("anthropic").prepare(attached.conversation, model="claude-a", max_tokens=8)
    assert "never-seen" not in req.content.decode()
    assert all(t.status == "recognised" for t in ledger.attach(other).turns)  # same data, same turns


def test_turns_without_sealed_parts_are_not_looked_up(backend: LedgerBackend) -> None:
    ledger = backend.ledger()
    conv = Conversation([UserMessage("q"), AssistantMessage("plain", thinking=[ThinkingBlock.Text("unsigned")])])
    attached = ledger.attach(conv)
    assert attached.turns == ()
    assert attached.conversation is conv


def test_entries_are_scoped_by_account(backend: LedgerBackend) -> None:
    ledger = backend.ledger()
    team = Origin("anthropic", "claude-a", "team-a")
    reply = AssistantMessage("a", thinking=[ThinkingBlock.Text("t", "sig-team")])
    conv = respond(Conversation([UserMessage("q")]), team, reply)
    ledger.record(conv[-1])
    imported = stripped(conv)
    assert ledger.attach(imported).turns == (AttachedTurn(1, "unknown"),)
    assert ledger.attach(imported, account="team-b").turns == (AttachedTurn(1, "unknown"),)
    attached = ledger.attach(imported, account="team-a")
    assert attached.turns == (AttachedTurn(1, "recognised"),)
    assert attached.conversation.replay(team).report[0].kept


def test_the_ledger_keeps_digests_and_bindings_only(backend: LedgerBackend) -> None:
    ledger = backend.ledger()
    secret = "SECRET-SIGNATURE-DATA-1234567890"
    reply = AssistantMessage("VISIBLE-CONTENT", thinking=[ThinkingBlock.Text("HIDDEN-THINKING", secret)])
    conv = respond(Conversation([UserMessage("USER-TEXT")]), CLAUDE, reply)
    ledger.record(conv[-1])
    stored = backend.entries(ledger)
    assert len(stored) == 1
    ((key, (binding, checksum)),) = stored.items()
    assert len(key) == 32
    assert len(checksum) == 32
    assert binding == str(conv[-1].thinking_binding)  # type: ignore[union-attr]
    for text in (secret, "VISIBLE-CONTENT", "HIDDEN-THINKING", "USER-TEXT"):
        assert text not in binding
        assert text.encode() not in key + checksum


# -- what is never trusted ----------------------------------------------------------------------


def test_a_datum_recorded_under_two_bindings_is_attached_to_neither(
    backend: LedgerBackend, caplog: pytest.LogCaptureFixture
) -> None:
    ledger = backend.ledger()
    reply = AssistantMessage("a", thinking=[ThinkingBlock.Text("t", "shared-signature")])
    one = respond(Conversation([UserMessage("first")]), CLAUDE, reply)
    two = respond(Conversation([UserMessage("second")]), CLAUDE, reply)
    ledger.record(one[-1])
    assert ledger.attach(stripped(one)).recognised == 1
    ledger.record(two[-1])
    ledger.record(one[-1])  # recording the first again does not undo the conflict
    with caplog.at_level(logging.WARNING, logger="thinkseal.ledger"):
        for conv in (one, two):
            attached = ledger.attach(stripped(conv))
            assert attached.turns == (AttachedTurn(1, "changed"),)
            assert not attached.conversation.replay(CLAUDE).report[0].kept
    assert "recorded under two bindings" in caplog.text
    assert "shared-signature" not in caplog.text


@pytest.mark.parametrize("damage", ["binding edited", "binding truncated", "checksum truncated", "swapped", "garbage"])
def test_a_forged_or_damaged_entry_never_makes_a_stale_seal_go_out(
    backend: LedgerBackend, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    ledger = backend.ledger()
    conv = loop(2)
    record_all(ledger, conv)
    assert ledger.attach(stripped(conv)).recognised == 2  # the entries were read (and verified) whole before
    stored = backend.entries(ledger)
    turn = conv[1]
    assert isinstance(turn, AssistantMessage)
    key = keys(None, sealed_data(turn))[0]
    binding, checksum = stored[key]
    other_turn_binding = str(conv[3].thinking_binding)  # type: ignore[union-attr]
    if damage == "binding edited":
        backend.overwrite(ledger, key, other_turn_binding, checksum)
    elif damage == "binding truncated":
        backend.overwrite(ledger, key, binding[:-10], checksum)
    elif damage == "checksum truncated":
        backend.overwrite(ledger, key, binding, checksum[:16])
    elif damage == "swapped":  # another key's whole entry, check included
        other = keys(None, sealed_data(conv[3]))[0]  # type: ignore[arg-type]
        backend.overwrite(ledger, key, *stored[other])
    else:
        backend.overwrite(ledger, key, "thinkseal-binding/1;x", b"\x00" * 32)
    with caplog.at_level(logging.WARNING, logger="thinkseal.ledger"):
        attached = ledger.attach(stripped(conv))
    assert attached.turns[0] == AttachedTurn(1, "changed")
    report = attached.conversation.replay(CLAUDE).report
    assert not report[0].kept
    assert not report[1].kept  # bound over the first turn's sealed form: unsealed with it
    assert "does not verify" in caplog.text


def test_a_secret_makes_entries_unforgeable_without_it(shared: LedgerBackend) -> None:
    backend = shared
    writer = backend.ledger(secret=b"fleet secret")
    conv = loop(1)
    record_all(writer, conv)
    assert backend.ledger(secret=b"fleet secret").attach(stripped(conv)).recognised == 1
    assert backend.ledger().attach(stripped(conv)).recognised == 0  # no secret: the checks do not verify
    assert backend.ledger(secret=b"another").attach(stripped(conv)).recognised == 0


def test_expired_entries_are_not_recognised(backend: LedgerBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = backend.ledger(ttl=60)
    conv = loop(1)
    record_all(ledger, conv)
    assert ledger.attach(stripped(conv)).recognised == 1
    if backend.name == "redis":  # Redis expires the key itself: check the TTL it was given
        client = redis.Redis.from_url(backend.url)
        names = list(client.scan_iter(f"{backend.namespace}:*"))
        assert len(names) == 2
        assert all(55_000 < client.pttl(name) <= 60_000 for name in names)
        client.close()
        return
    clock = ledger_module.time.time() + 61
    monkeypatch.setattr(ledger_module.time, "time", lambda: clock)
    assert ledger.attach(stripped(conv)).turns == (AttachedTurn(1, "unknown"),)


def test_the_ledger_is_bounded(bounded: LedgerBackend) -> None:
    backend = bounded
    ledger = backend.ledger(max_entries=6)
    conv = loop(6)  # 12 sealed data
    record_all(ledger, conv)
    if backend.name != "memory":
        ledger._backend.prune(0.0)  # type: ignore[attr-defined]  # as every 256th write does
    assert len(backend.entries(ledger)) == 6
    statuses = [t.status for t in ledger.attach(stripped(conv)).turns]
    assert statuses[-3:] == ["recognised"] * 3  # the newest kept
    assert "recognised" not in statuses[:3]


def test_a_backend_that_fails_leaves_the_history_as_it_is(
    shared: LedgerBackend, caplog: pytest.LogCaptureFixture
) -> None:
    backend = shared
    ledger = backend.ledger()
    conv = loop(1)
    record_all(ledger, conv)
    ledger.close()  # SQLite: a closed connection
    if backend.name == "postgres":  # a server that is gone
        ledger._backend._conninfo = "postgresql://nobody@127.0.0.1:1/none"  # type: ignore[attr-defined]
    elif backend.name == "redis":
        ledger._backend = RedisBackend("redis://127.0.0.1:1/0", "gone:")
    with caplog.at_level(logging.WARNING, logger="thinkseal.ledger"):
        attached = ledger.attach(stripped(conv))
    assert attached.turns == (AttachedTurn(1, "unknown"),)
    assert "ledger lookup failed" in caplog.text
    with pytest.raises(thinkseal.ledger.BackendError):
        ledger.record(conv[1])  # type: ignore[arg-type]


def test_bad_arguments_are_validation_errors() -> None:
    for bad in ({"ttl": 0}, {"ttl": float("nan")}, {"max_entries": 0}, {"secret": 3}, {"secret": "lone \udc00"}):
        with pytest.raises(thinkseal.ValidationError) as raised:
            Ledger(**bad)  # type: ignore[arg-type]
        assert raised.value.path == next(iter(bad))
    # A str secret is its UTF-8: the same key as those bytes.
    assert Ledger(secret="clé")._options.checker.check(bytes(32), "b") == Ledger(
        secret="clé".encode()
    )._options.checker.check(bytes(32), "b")
    with pytest.raises(thinkseal.ValidationError, match="record"):
        Ledger().record("not a reply")  # type: ignore[arg-type]
    with pytest.raises(thinkseal.ValidationError, match="conversation"):
        Ledger().attach([UserMessage("q")])  # type: ignore[arg-type]
    assert Ledger().record(AssistantMessage("unbound", thinking=[ThinkingBlock.Text("t", "s")])) == 0


# -- the property --------------------------------------------------------------------------------


@st.composite
def mostly_one_origin(draw: st.DrawFn) -> tuple[list[tuple[Any, ...]], Origin]:
    """A history of replies mostly by one origin (the target), with others'
    replies and user turns among them: histories with much to keep."""
    main = draw(st.sampled_from(PROVIDER_IDS))
    step = st.one_of(
        st.tuples(st.just("reply"), st.just(main), st.just(MODELS[0]), st.booleans()),
        st.tuples(st.just("reply"), st.just(main), st.just(MODELS[0]), st.booleans()),
        st.tuples(st.just("reply"), st.sampled_from(PROVIDER_IDS), st.sampled_from(MODELS), st.booleans()),
        st.tuples(st.just("user")),
    )
    return draw(st.lists(step, min_size=1, max_size=10)), Origin(main, MODELS[0])


@settings(max_examples=60, deadline=None)
@given(steps, st.sampled_from(PROVIDER_IDS))
def test_an_attached_import_is_decided_as_the_original(script: list[tuple[Any, ...]], target: str) -> None:
    h: History = play(script)  # mixed origins, earlier messages edited on the way
    ledger = Ledger()
    record_all(ledger, h.conv)
    attached = ledger.attach(stripped(h.conv))
    assert reports(attached.conversation, target) == reports(h.conv, target)


@settings(max_examples=60, deadline=None)
@given(mostly_one_origin())
def test_an_attached_import_keeps_what_the_original_keeps(history: tuple[list[tuple[Any, ...]], Origin]) -> None:
    script, target = history
    h = play(script)
    ledger = Ledger()
    record_all(ledger, h.conv)
    attached = ledger.attach(stripped(h.conv))
    assert reports(attached.conversation, target.provider) == reports(h.conv, target.provider)


@settings(max_examples=100, deadline=None)
@given(mostly_one_origin(), st.sampled_from(ROUTES), st.integers(0, 10_000), st.data())
def test_after_any_edit_a_turn_is_kept_only_where_the_original_keeps_it(
    history: tuple[list[tuple[Any, ...]], Origin], route: str, where: int, data: st.DataObject
) -> None:
    script, target = history
    h = play(script)
    ledger = Ledger()
    record_all(ledger, h.conv)
    edited = _edit(h.conv, route, where, data)  # the original, edited with its bindings kept
    if edited is None:
        return
    attached = ledger.attach(stripped(edited)).conversation
    got = {e.index for e in attached.replay(target).report if e.kept}
    # What a faithful ledger gives back: each turn the edit left as it was
    # bound as when it was recorded (an edit of a stored file may have hit the
    # binding's own text, which the ledger does not need), every other turn unbound.
    recorded = {m.digest: m.thinking_binding for m in h.conv if isinstance(m, AssistantMessage) and m.thinking_binding}
    restored = edited.with_messages(
        [m._bound(recorded.get(m.digest)) if isinstance(m, AssistantMessage) else m for m in edited]
    )
    want = {e.index for e in restored.replay(target).report if e.kept}
    assert got == want, (route, target)


# -- asyncio -------------------------------------------------------------------------------------


def test_the_async_ledger_does_the_same(backend: LedgerBackend) -> None:
    async def main() -> None:
        ledger = backend.async_ledger()
        conv = loop(3)
        recorded = 0
        for message in conv:
            if isinstance(message, AssistantMessage):
                recorded += await ledger.record(message)
        assert recorded == 6
        attached = await ledger.attach(stripped(conv))
        assert attached.recognised == 3
        assert list(attached.conversation) == list(conv)
        await ledger.close()

    asyncio.run(main())
