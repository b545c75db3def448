"""Complexity checks: deciding a conversation after k new messages hashes O(k)
messages and chain steps, whatever the length of the history. Counted, not
timed (timings live in benches/)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from thinkseal import (
    AssistantMessage,
    Conversation,
    Origin,
    Replay,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    _replay,
    _walk,
    provider,
)
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import respond

CLAUDE = Origin("anthropic", "claude-sonnet-4-5")


class CountingCore:
    """Stands in for thinkseal._core, counting the work it is asked to do."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.counts: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def chain(self, start: bytes, digests: bytes) -> bytes:
        self.counts["chain steps"] += len(digests) // 32
        return self.real.chain(start, digests)

    def message_digests(self, messages: list[Any], threads: int = 1) -> list[bytes]:
        self.counts["digests"] += len(messages)
        return self.real.message_digests(messages, threads)

    def prefix_digest(self, *args: Any) -> bytes:
        self.counts["prefix digests"] += 1
        return self.real.prefix_digest(*args)

    def walk_run(self, items: list[Any], start: int, end: int, *rest: Any) -> tuple[int, bytes, bytes, list[int]]:
        # The native run (rust/python/src/walk.rs) does the same work inside:
        # a chain step per message it takes, a prefix digest per turn it
        # keeps, a digest per message it took that had none.
        missing = [i for i in range(start, min(end, len(items))) if items[i]._digest is None]
        stop, chain, codes, turns = self.real.walk_run(items, start, end, *rest)
        self.counts["chain steps"] += len(chain) // 32
        self.counts["prefix digests"] += codes.count(_walk.KEPT)
        self.counts["digests"] += sum(1 for i in missing if i < stop)
        return stop, chain, codes, turns


def tool_loop_history(turns: int) -> Conversation:
    conv = Conversation([UserMessage("start")])
    for i in range(turns):
        reply = AssistantMessage(
            None, [ToolCall(f"call_{i}", "step", {"i": i})], [ThinkingBlock.Text(f"step {i}", f"sig{i}")]
        )
        conv = respond(conv, CLAUDE, reply).append(ToolMessage(f"done {i}", f"call_{i}"))
    return conv


def work_after_one_turn(conv: Conversation, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    conv.replay(CLAUDE)  # decided once before, as a server does on every request
    counting = CountingCore(_walk._core)
    monkeypatch.setattr(_walk, "_core", counting)
    reply = AssistantMessage(None, [ToolCall("call_new", "step", {})], [ThinkingBlock.Text("new", "sig-new")])
    grown = respond(conv, CLAUDE, reply).append(ToolMessage("ok", "call_new"))
    report = grown.replay(CLAUDE).report
    assert all(entry.kept for entry in report)  # the whole tool loop still goes out sealed
    monkeypatch.undo()
    return counting.counts


def test_hashing_after_one_turn_is_flat_in_history_length(monkeypatch: pytest.MonkeyPatch) -> None:
    small = work_after_one_turn(tool_loop_history(20), monkeypatch)
    large = work_after_one_turn(tool_loop_history(2_000), monkeypatch)
    assert small == large
    assert sum(large.values()) <= 12, large


def test_a_branch_or_edit_rehashes_only_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    conv = tool_loop_history(500)
    conv.replay(CLAUDE)
    counting = CountingCore(_walk._core)
    monkeypatch.setattr(_walk, "_core", counting)
    # Branch: two different continuations of the same history.
    a = conv.append(UserMessage("a"))
    b = conv.append(UserMessage("b"))
    assert all(e.kept for e in a.replay(CLAUDE).report)
    assert all(e.kept for e in b.replay(CLAUDE).report)
    # Each branch chains its one new message (plus the open tail); nothing before it.
    # Hashed: each branch's new message and, once, the open loop's tool result.
    assert counting.counts["chain steps"] <= 6, counting.counts
    assert counting.counts["digests"] <= 3, counting.counts
    monkeypatch.undo()


def test_cached_prefix_costs_at_most_40_bytes() -> None:
    """docs/performance.md: ≤ 40 bytes per cached prefix, no hasher snapshots kept."""
    conv = tool_loop_history(3_000)
    conv.replay(CLAUDE)
    store, length = conv._replay[CLAUDE]
    assert length == len(conv) - 2  # all but the open tool loop (last turn + its result) is cached
    stored = len(store.chain) + len(store.codes) + store.turns.itemsize * len(store.turns)
    assert stored / length <= 40, stored / length


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_prepare_after_one_turn_maps_only_new_messages(provider_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unchanged turn's wire form is built once: the next request maps only
    the messages since the last assistant turn (the rest is list copies)."""
    origin = Origin(provider_id, "m")
    adapter = provider(provider_id)
    options = {
        "anthropic": {"max_tokens": 1024},
        "vertex-anthropic": {"max_tokens": 1024, "project": "p", "region": "r"},
        "vertex-gemini": {"project": "p", "location": "global"},
    }.get(provider_id, {})

    def grow(conv: Conversation, i: int) -> Conversation:
        reply = AssistantMessage(None, [ToolCall(f"call{i:05d}a", "step", {"i": i})], [ThinkingBlock.Text(f"t{i}")])
        return respond(conv, origin, reply).append(ToolMessage(f"done {i}", f"call{i:05d}a"))

    conv = Conversation([UserMessage("start")], [Tool("step")])
    for i in range(300):
        conv = grow(conv, i)
    adapter.prepare(conv, model="m", **options)
    mapped: list[int] = []
    real = Replay.sent_messages

    def counting(self: Replay, start: int = 0, end: int | None = None) -> list[Any]:
        out = real(self, start, end)
        mapped.append(len(out))
        return out

    monkeypatch.setattr(Replay, "sent_messages", counting)
    request = adapter.prepare(grow(conv, 300), model="m", **options)
    assert sum(mapped) <= 4, mapped
    # Gemini: contents; OpenAI's Responses: input
    assert len(request.body.get("messages") or request.body.get("input") or request.body["contents"]) >= 300


class CountingRoles:
    """Counts how often a message's role is read: every walk, pairing and
    settled-point scan reads it once per message it visits."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads = 0
        for cls in (ToolMessage, AssistantMessage, UserMessage):
            monkeypatch.setattr(cls, "role", property(self._read(cls.role)))

    def _read(self, role: str) -> Any:
        def read(_: Any) -> str:
            self.reads += 1
            return role

        return read


@pytest.mark.parametrize("n", [200, 800])
def test_parallel_results_answered_one_by_one_cost_each_the_same(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """One turn with n parallel calls, its results appended one at a time, a
    decision after each: each decision reads a bounded number of messages,
    whatever n (it used to re-read the whole open run: quadratic in n)."""
    calls = [ToolCall(f"c{i}", "f", {"i": i}) for i in range(n)]
    turn = AssistantMessage(None, calls, [ThinkingBlock.Text("t", "s")])
    conv = respond(Conversation([UserMessage("q")]), CLAUDE, turn)
    conv.replay(CLAUDE)
    counting = CountingRoles(monkeypatch)
    for i in range(n):
        conv = conv.append(ToolMessage(f"r{i}", f"c{i}"))
        assert conv.replay_report(CLAUDE)[0].reason == ("kept" if i == n - 1 else "unpaired-tool-call")
    assert counting.reads <= 8 * n, counting.reads


def test_caches_kept_per_conversation_are_bounded_in_the_number_of_origins() -> None:
    """A conversation replayed to many origins (a server switching among many
    models) keeps the caches of the ones it used last, so ``with_messages``
    and ``append`` copy a bounded number of entries, and the origin in use
    stays incremental."""
    conv = tool_loop_history(20)
    origins = [Origin("anthropic", f"model-{k}") for k in range(50)]
    for origin in [*origins, CLAUDE]:
        conv.replay(origin)
    assert len(conv._replay) == _replay.MAX_CACHED_ORIGINS
    assert next(reversed(conv._replay)) == CLAUDE
    assert origins[-1] in conv._replay
    assert origins[0] not in conv._replay
    edited = conv.with_messages(list(conv))
    assert len(edited._replay) == _replay.MAX_CACHED_ORIGINS
    grown = conv.append(UserMessage("next"))
    assert len(grown._replay) == _replay.MAX_CACHED_ORIGINS
    assert [e.reason for e in grown.replay(origins[0]).report] == ["origin-mismatch"] * 20  # decided afresh


def test_deciding_again_after_many_origins_still_hashes_only_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    conv = tool_loop_history(300)
    for k in range(30):
        conv.replay(Origin("openrouter", f"m{k}"))
    counts = work_after_one_turn(conv, monkeypatch)
    assert counts["digests"] <= 3, counts
    assert counts["chain steps"] <= 4, counts


class CountingCallIds:
    """Counts how often a tool result's ``tool_call_id`` is read: pairing a
    result with its call, and making a stray one user text, read it once per
    result they visit."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads = 0
        real = ToolMessage.tool_call_id

        def read(message: ToolMessage) -> str:
            self.reads += 1
            return real.__get__(message)  # type: ignore[no-any-return]

        def write(message: ToolMessage, value: str) -> None:
            real.__set__(message, value)

        monkeypatch.setattr(ToolMessage, "tool_call_id", property(read, write))


@pytest.mark.parametrize("n", [100, 400])
def test_parallel_results_answered_one_by_one_go_out_without_rewalking_the_run(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One turn with n parallel calls, its results appended one at a time, and
    after each what a request reads of the replay: every message as sent and
    the chain a reply is bound over. Each result is paired once over the whole
    loop (the open run used to be walked again for every request: quadratic)."""
    calls = [ToolCall(f"c{i}", "f", {"i": i}) for i in range(n)]
    turn = AssistantMessage(None, calls, [ThinkingBlock.Text("t", "s")])
    conv = respond(Conversation([UserMessage("q")]), CLAUDE, turn)
    counting = CountingCallIds(monkeypatch)
    for i in range(n):
        conv = conv.append(ToolMessage(f"r{i}", f"c{i}"))
        replay = conv.replay(CLAUDE)
        assert len(replay.sent_messages()) == i + 3
        assert len(replay.chain_end) == 32
    assert counting.reads <= 3 * n, counting.reads
