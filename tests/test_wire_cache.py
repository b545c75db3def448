"""The adapters' wire caches (providers/_wire.py) never change a body: a body
built through caches shared with other conversations equals one built fresh."""

from __future__ import annotations

import json
import tracemalloc

import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation, Message, Tool, ToolCall, ToolMessage, UserMessage
from thinkseal.providers import PROVIDER_IDS
from thinkseal.providers._wire import Body, Fragments, WireCache, whole

OPTIONS = {
    "anthropic": {"max_tokens": 1024},
    "vertex-anthropic": {"max_tokens": 1024, "project": "p", "region": "r"},
    "vertex-gemini": {"project": "p", "location": "global"},
}


def fresh(conversation: Conversation) -> Conversation:
    return Conversation(list(conversation), conversation.tools, conversation.response_format)


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_cache_of_another_history_is_not_reused_after_with_messages(provider_id: str) -> None:
    # A cached cut point where an assistant turn used to stand must not split
    # the user turn that stands there now (Bedrock rejects two user turns in a row).
    adapter = thinkseal.provider(provider_id)
    options = OPTIONS.get(provider_id, {})
    conv = Conversation(
        [UserMessage("start"), AssistantMessage(None, [ToolCall("c1", "lookup", {})]), ToolMessage("r", "c1")],
        tools=[Tool("lookup")],
    )
    adapter.prepare(conv, model="m", **options)
    nxt = conv.with_messages([conv[0], UserMessage("summary"), conv[2]]).append(
        AssistantMessage("ok"), UserMessage("next")
    )
    cached = adapter.prepare(nxt, model="m", **options)
    built = adapter.prepare(fresh(nxt), model="m", **options)
    assert cached.content == built.content
    assert cached.body == built.body


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_alternating_branches_build_their_own_bodies(provider_id: str) -> None:
    adapter = thinkseal.provider(provider_id)
    options = OPTIONS.get(provider_id, {})
    base = Conversation([UserMessage("q")]).append(AssistantMessage("a"), UserMessage("q2"))
    left = base.append(AssistantMessage("left"), UserMessage("l"))
    right = base.append(AssistantMessage("right"), UserMessage("r"))  # a branch: its own storage
    for _ in range(2):
        for branch in (left, right, left.append(AssistantMessage("more"), UserMessage("m"))):
            assert adapter.prepare(branch, model="m", **options).content == (
                adapter.prepare(fresh(branch), model="m", **options).content
            )


def _grown(cache: WireCache, steps: int, tag: str, start: int = 0) -> None:
    """``cache`` extended message by message from ``start``, one wire message
    (``tag`` and its index, tally 1) per message."""
    for i in range(start, start + steps):
        cache.extend(i, i + 1, [f'"{tag}{i}"'.encode()], [1], seen=i + 1)


def test_a_fork_and_its_parent_keep_their_own_wire_messages_as_both_grow() -> None:
    parent = WireCache()
    _grown(parent, 50, "p")
    sibling = parent.fork(30)  # the marks of conversations no longer than 30 messages
    _grown(parent, 20, "p", start=50)  # the parent grows past the fork...
    _grown(sibling, 10, "s", start=30)  # ...and the sibling its own way
    assert parent.pieces(0, 70) == [f'"p{i}"'.encode() for i in range(70)]
    assert sibling.pieces(0, 40) == [f'"p{i}"'.encode() for i in range(30)] + [
        f'"s{i}"'.encode() for i in range(30, 40)
    ]
    assert len(sibling.encoded) == len(sibling.totals) == len(sibling.sizes) == 40
    assert [sibling.total(c) for c in (30, 40)] == [30, 40]
    assert sibling.size(40) == sum(map(len, sibling.pieces(0, 40)))
    grandchild = sibling.fork(35)
    _grown(grandchild, 1, "g", start=35)
    assert grandchild.pieces(0, 36)[-2:] == [b'"s34"', b'"g35"']
    assert sibling.pieces(34, 36) == [b'"s34"', b'"s35"']


def test_a_fork_copies_none_of_its_parent_s_wire_messages_until_it_grows() -> None:
    # Counted in bytes allocated: a sibling that one request reads (and never
    # extends) must not cost a copy of the history's wire messages (its marks,
    # one per request that extended the cache, are copied).
    parent = WireCache()
    for start in range(0, 20_000, 200):  # a mark per request that extended it, 200 messages each
        parent.extend(start, start + 200, [f'"p{i}"'.encode() for i in range(start, start + 200)], [1] * 200)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        sibling = parent.fork(20_000)
        kept = tracemalloc.get_traced_memory()[0] - before
        _grown(sibling, 1, "s", start=20_000)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 4_000  # a list of 20,000 references alone is 160,000 bytes
    assert grown > 3 * 160_000  # growing copies its three lists once


def _tool_loop(n: int) -> list[Message]:
    """``n`` short messages of a tool loop: a user turn, a call, its result."""
    out: list[Message] = []
    for i in range(n):
        if i % 3 == 0:
            out.append(UserMessage(f"u{i}"))
        elif i % 3 == 1:
            out.append(AssistantMessage(f"a{i}", [ToolCall(f"c{i}", "lookup", {})]))
        else:
            out.append(ToolMessage(f"r{i}", f"c{i - 1}"))
    return out


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_a_request_reads_the_cached_history_in_place(provider_id: str) -> None:
    # Counted in bytes a request keeps: after a new turn, the request's wire
    # messages are the cache's list read in place, not a copy of it (a list of
    # references costs 8 bytes per wire message, and touches every one).
    adapter = thinkseal.provider(provider_id)
    options = OPTIONS.get(provider_id, {})
    conv = Conversation(_tool_loop(6_000), tools=[Tool("lookup")])
    for step in range(3):  # the cache built, then extended by a step, then read
        conv = conv.append(AssistantMessage(f"x{step}"), UserMessage(f"y{step}")) if step else conv
        if step < 2:
            assert adapter.prepare(conv, model="m", **options).content_length > 0
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        request = adapter.prepare(conv, model="m", **options)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    wire = max(len(v) for v in json.loads(request.content).values() if isinstance(v, list))
    assert wire >= 4_000
    assert kept < 2 * wire  # a copy of the references alone: 8 * wire


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_a_held_request_keeps_its_body_while_the_caches_it_read_grow_and_fork(provider_id: str) -> None:
    adapter = thinkseal.provider(provider_id)
    options = OPTIONS.get(provider_id, {})
    conv = Conversation(_tool_loop(60), tools=[Tool("lookup")])
    adapter.prepare(conv, model="m", **options)
    held_conv = conv.append(AssistantMessage("held"), UserMessage("held"))
    held = adapter.prepare(held_conv, model="m", **options)  # not read yet
    grown = held_conv
    for i in range(4):  # the held request's cache grows past it...
        grown = grown.append(AssistantMessage(f"g{i}"), UserMessage(f"g{i}"))
        adapter.prepare(grown, model="m", **options)
    sibling = conv.append(AssistantMessage("other"), UserMessage("other"))
    for i in range(4):  # ...and a branch forks it and grows its own way
        sibling = sibling.append(AssistantMessage(f"s{i}"), UserMessage(f"s{i}"))
        adapter.prepare(sibling, model="m", **options)
    assert held.content == adapter.prepare(fresh(held_conv), model="m", **options).content
    assert held.body == adapter.prepare(fresh(held_conv), model="m", **options).body


def test_fragments_read_their_spans_in_order() -> None:
    shared = [b"a", b"b", b"c", b"d"]
    parts = Fragments(5, (shared, 1, 3), ([b"x"], 0, 1), whole([b"y", b"z"]))
    assert len(parts) == 5
    assert list(parts) == [b"b", b"c", b"x", b"y", b"z"]
    assert [parts[i] for i in range(-5, 5)] == list(parts) * 2
    assert parts[1:4] == [b"c", b"x", b"y"]
    for out_of_range in (5, -6):
        with pytest.raises(IndexError):
            parts[out_of_range]
    shared.append(b"e")  # the list a span reads grows at its end: the span does not
    assert list(parts) == [b"b", b"c", b"x", b"y", b"z"]
    body = Body(b"[", parts, b"]")
    assert body.joined() == b"[b,c,x,y,z]"
    assert len(body) == len(body.joined())
