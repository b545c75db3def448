"""The replay walk's native run (rust/python/src/walk.rs) against the Python
walk it stands for (python/thinkseal/_walk.py): over the random histories of
the property tests, for every origin and any range, the same chain values,
codes, turns and messages as sent; where the run must stop and leave a message
to Python; and a plain tool loop it decides alone, so the comparison is not
vacuous."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkseal import (
    AssistantMessage,
    Binding,
    Conversation,
    Message,
    Native,
    Origin,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    _core,
)
from thinkseal._walk import _RUN_KIT, CHAIN_START, KEPT, NO_SEALED, Pairing, Walk, walk
from thinkseal.testing import respond

from .test_properties import ALL_OPS, ORIGINS, run_ops

CLAUDE = Origin("anthropic", "m")


@contextmanager
def python_walk() -> Iterator[None]:
    """The walk and ``sent_messages`` with their native runs switched off:
    every message decided and paired by the Python loops."""
    native = Walk.run, Pairing.run
    Walk.run = lambda self, items, bounds, pairing, target, context: bounds[0]  # type: ignore[method-assign]
    Pairing.run = lambda self, items, bounds, codes, first: bounds[0]  # type: ignore[method-assign]
    try:
        yield
    finally:
        Walk.run, Pairing.run = native  # type: ignore[method-assign]


def fresh(items: list[Message]) -> list[Message]:
    """The same messages as new objects (no digest or unsealed form cached)."""
    return list(pickle.loads(pickle.dumps(items)))


def decided(items: list[Message], start: int, end: int, origin: Origin, context: bytes) -> tuple[Any, ...]:
    """What ``walk`` decides for ``items[start:end]``, from the chain value before ``start``."""
    total = len(items)
    chain = walk(items, 0, start, total, CHAIN_START, origin, context).chain_end()
    out = walk(items, start, end, total, chain, origin, context)
    as_itself = [m is items[start + k] for k, m in enumerate(out.sent)]
    return bytes(out.chain), bytes(out.codes), list(out.turns), out.sent, as_itself, out.chain_end()


@settings(max_examples=150, deadline=None)
@given(st.lists(ALL_OPS, max_size=25), st.data())
def test_the_native_run_decides_as_the_python_walk(ops: list[tuple[Any, ...]], data: st.DataObject) -> None:
    conv = run_ops(ops, check_each_step=False)
    items = list(conv)
    start = data.draw(st.integers(0, len(items)))
    end = data.draw(st.integers(start, len(items)))
    for origin in ORIGINS:
        native = decided(fresh(items), start, end, origin, conv.context_digest)
        with python_walk():
            python = decided(fresh(items), start, end, origin, conv.context_digest)
        assert native == python


@settings(max_examples=100, deadline=None)
@given(st.lists(ALL_OPS, max_size=25), st.data())
def test_the_native_run_finds_the_messages_as_sent_as_the_python_pairing(
    ops: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    conv = run_ops(ops, check_each_step=False)
    start = data.draw(st.integers(0, len(conv)))
    end = data.draw(st.integers(start, len(conv)))
    for origin in ORIGINS:
        replay = conv.replay(origin)
        native = replay.sent_messages(start, end)
        with python_walk():
            python = replay.sent_messages(start, end)
        assert native == python
        # Those that go out as themselves are the conversation's own objects either way.
        assert [m is conv[start + k] for k, m in enumerate(native)] == [
            m is conv[start + k] for k, m in enumerate(python)
        ]


def tool_loop(turns: int) -> Conversation:
    conv = Conversation([SystemMessage("s"), UserMessage("q")])
    for k in range(turns):
        calls = [ToolCall(f"c{k}", "f", {"k": k}), ToolCall(f"d{k}", "g", {})]
        conv = respond(conv, CLAUDE, AssistantMessage(None, calls, [ThinkingBlock.Text(f"t{k}", f"s{k}")]))
        conv = conv.append(ToolMessage("r", f"d{k}"), ToolMessage("r", f"c{k}"))
        if k % 3 == 2:
            conv = conv.append(UserMessage(f"u{k}"))
    conv = respond(conv, CLAUDE, AssistantMessage("done", [], [ThinkingBlock.Redacted("r")]))
    return conv.append(AssistantMessage("no thinking"), UserMessage("bye"))


def run_of(items: list[Message], origin: Origin = CLAUDE, context: bytes | None = None) -> tuple[Any, ...]:
    context = tool_loop(0).context_digest if context is None else context
    return _core.walk_run(items, 0, len(items), len(items), set(), CHAIN_START, origin, context, _RUN_KIT)


def test_a_plain_tool_loop_is_decided_wholly_by_the_native_run() -> None:
    conv = tool_loop(12)
    items = list(conv)
    stop, chain, codes, turns = run_of(items, context=conv.context_digest)
    assert stop == len(items)
    with python_walk():
        python = walk(fresh(items), 0, len(items), len(items), CHAIN_START, CLAUDE, conv.context_digest)
    assert (chain, codes, turns) == (bytes(python.chain), bytes(python.codes), python.turns)
    assert codes.count(KEPT) == 13
    assert codes.count(NO_SEALED) == 1


def test_the_native_run_fills_missing_digests_as_the_python_walk_does() -> None:
    items = fresh(list(tool_loop(3)))
    for m in items:
        object.__setattr__(m, "_digest", None)
    stop, *_ = run_of(items)
    assert stop == len(items)
    assert [m._digest for m in items] == [_core.message_digest(m) for m in items]


class Noted(UserMessage):
    """A subclass: its role and form are the Python walk's to read."""

    __slots__ = ()


def leaves(conv: Conversation, *tail: Message, origin: Origin = CLAUDE) -> int:
    """Where the native run stops on ``conv`` followed by ``tail``."""
    items = [*conv, *tail]
    stop, *_ = run_of(items, origin, conv.context_digest)
    return stop


@pytest.mark.parametrize(
    "case",
    [
        "stray-result",
        "unanswered-call",
        "repeated-call-id",
        "other-origin",
        "unbound-sealed",
        "bound-without-sealed",
        "origin-edited",
        "native-block",
        "prefix-changed",
        "subclass",
    ],
)
def test_the_native_run_leaves_what_does_not_go_out_as_itself(case: str) -> None:
    conv = tool_loop(2)
    n = len(conv)
    signed = [ThinkingBlock.Text("t", "s")]
    if case == "stray-result":
        assert leaves(conv, ToolMessage("late", "nobody")) == n
    elif case == "unanswered-call":
        reply = AssistantMessage(None, [ToolCall("x", "f", {}), ToolCall("y", "f", {})], signed)
        assert leaves(respond(conv, CLAUDE, reply), ToolMessage("r", "x")) == n
    elif case == "repeated-call-id":
        reply = AssistantMessage(None, [ToolCall("x", "f", {}), ToolCall("x", "g", {})], signed)
        assert leaves(respond(conv, CLAUDE, reply), ToolMessage("r", "x")) == n
    elif case == "other-origin":
        assert leaves(respond(conv, Origin("anthropic", "other"), AssistantMessage("a", [], signed))) == n
    elif case == "unbound-sealed":
        assert leaves(conv, AssistantMessage("a", [], signed)) == n
    elif case == "bound-without-sealed":
        # Goes out unbound (``unsealed()`` drops the binding): another object.
        binding = next(m for m in conv if isinstance(m, AssistantMessage)).thinking_binding
        assert leaves(conv, AssistantMessage("a", [], [ThinkingBlock.Text("t")])._bound(binding)) == n
    elif case == "origin-edited":
        # The binding's origin rewritten, its digests left: the prefix still
        # matches the target, but the turn is bound elsewhere (origin-mismatch).
        turn = respond(conv, CLAUDE, AssistantMessage("a", [], signed))
        last = turn[-1]
        assert isinstance(last, AssistantMessage)
        bound = last.thinking_binding
        assert bound is not None
        edited = last._bound(Binding(Origin("anthropic", "other"), bound.version, bound.prefix, bound.turn))
        assert leaves(conv, edited) == n
        assert turn.with_messages([*conv, edited]).replay(CLAUDE).reason(n) == "origin-mismatch"
        reply = AssistantMessage.from_parts([Native.of("anthropic", {"type": "server_tool_use"}), "a"])
        assert leaves(respond(conv, CLAUDE, reply)) == n
    elif case == "prefix-changed":
        edited = conv.with_messages([conv[0], UserMessage("edited"), *list(conv)[2:]])
        assert leaves(edited) == 2  # the first turn, after the edit
    else:
        assert leaves(conv, Noted("u")) == n
    # Everything before the case went natively, and the Python walk agrees on all of it.
    assert leaves(conv) == n


def test_a_target_of_another_class_is_left_to_python() -> None:
    class Elsewhere(Origin):
        __slots__ = ()

    conv = tool_loop(1)
    assert leaves(conv, origin=Elsewhere("anthropic", "m")) == 0
    assert leaves(conv) == len(conv)
