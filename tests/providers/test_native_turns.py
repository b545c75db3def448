"""The Anthropic Messages wire turns written natively (rust/python/src/claude.rs)
are the turns the Python path builds, byte for byte; whatever the native
writer does not know is left to the Python path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Message,
    Native,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    _core,
)
from thinkseal._walk import stray_tool_message
from thinkseal.providers import _claude, anthropic
from thinkseal.providers._wire import dumps

from .random_histories import MODELS, play, steps

CLAUDE_WIRES = ("anthropic", "vertex-anthropic")
OPTIONS: dict[str, dict[str, Any]] = {
    "anthropic": {"max_tokens": 1024},
    "vertex-anthropic": {"max_tokens": 1024, "project": "p", "region": "r"},
}
WIRE = anthropic._Wire()


def python_turn(role: str, group: list[Message]) -> bytes:
    """The turn as the Python path builds and encodes it."""
    if role == "assistant":
        assert isinstance(group[0], AssistantMessage)
        return dumps({"role": "assistant", "content": WIRE.assistant_blocks(group[0])})
    return dumps(WIRE.user_wire(group))


def native_turn(role: str, group: list[Message]) -> bytes | None:
    return _core.claude_turn(role, group, anthropic._TURN_KIT)


ARGUMENTS = {
    "q": 'quote " backslash \\ newline \n tab \t nul \x00 del \x7f',
    "ünïcödé": "日本語 😀 \u2028 \ufeff",
    "n": [1, -2, 2**70, 1.5, 1e300, -0.0, True, False, None],
    "nested": {"a": [{"b": [[], {}]}], "": ""},
}

PLAIN_TURNS = {
    "text": ("assistant", [AssistantMessage('answer with ünïcode 😀 and "quotes"\n')]),
    "text-led-by-spaces": ("assistant", [AssistantMessage("  \u3000 x")]),
    "tool-call": ("assistant", [AssistantMessage(None, [ToolCall("call_1", "lookup", ARGUMENTS)])]),
    "sealed-thinking-text-calls": (
        "assistant",
        [
            AssistantMessage(
                "text",
                [ToolCall("c1", "f", {}), ToolCall("c2", "g", {"x": 1})],
                [ThinkingBlock.Text("thought \u00e9", "SIG/+="), ThinkingBlock.Redacted("UkVE")],
            )
        ],
    ),
    "unsigned-thinking-left-out": (
        "assistant",
        [AssistantMessage("text", [], [ThinkingBlock.Text("unsigned"), ThinkingBlock.Text("signed", "s")])],
    ),
    "opaque-left-out": (
        "assistant",
        [AssistantMessage("text", [], [ThinkingBlock.Opaque("openrouter", "{}"), ThinkingBlock.Redacted("d")])],
    ),
    "user": ("user", [UserMessage("question 😀 \\ \x01")]),
    "tool-result": ("user", [ToolMessage('result "x"', "call_1")]),
    "tool-error": ("user", [ToolMessage("failed", "call_1", is_error=True)]),
    "results-then-text": (
        "user",
        [ToolMessage("r1", "c1"), ToolMessage("r2", "c2", is_error=True), UserMessage("and then")],
    ),
    "stray-result": ("user", [stray_tool_message(ToolMessage("orphan", "c9", is_error=True))]),
}


@pytest.mark.parametrize(("role", "group"), PLAIN_TURNS.values(), ids=PLAIN_TURNS)
def test_a_plain_turn_is_written_natively_as_the_python_path_builds_it(role: str, group: list[Message]) -> None:
    written = native_turn(role, group)
    assert written is not None
    assert written == python_turn(role, group)
    assert WIRE.turn_tally(json.loads(written)) == 0  # why the native path counts nothing


LEFT_TO_PYTHON = {
    "blank-text-part": ("assistant", [AssistantMessage.from_parts(["   ", "x"])]),
    "only-unicode-whitespace": ("assistant", [AssistantMessage.from_parts(["\u3000"])]),
    "native-block": ("assistant", [AssistantMessage.from_parts([Native("anthropic", json.dumps({"type": "x"})), "t"])]),
    "only-unsent-parts": ("assistant", [AssistantMessage(None, [], [ThinkingBlock.Text("unsigned")])]),
    "content-parts": ("user", [UserMessage(("a", "b"))]),
    "cache-breakpoint": ("user", [UserMessage(("a", CacheBreakpoint()))]),
    "tool-result-parts": ("user", [ToolMessage(("r", CacheBreakpoint()), "c1")]),
    "two-assistant-messages": ("assistant", [AssistantMessage("a"), AssistantMessage("b")]),
    "empty-user-turn": ("user", []),
    "another-role": ("system", [UserMessage("x")]),
}


@pytest.mark.parametrize(("role", "group"), LEFT_TO_PYTHON.values(), ids=LEFT_TO_PYTHON)
def test_what_the_native_writer_does_not_know_is_left_to_python(role: str, group: list[Message]) -> None:
    assert native_turn(role, group) is None


def test_a_message_subclass_is_left_to_python() -> None:
    class Assistant(AssistantMessage):
        __slots__ = ()

    assert native_turn("assistant", [Assistant("x")]) is None


def fresh(conv: Conversation) -> Conversation:
    """New message objects (none of the wire fragments cached on the old ones)."""
    return Conversation.from_json(conv.to_json())


def bodies(conv: Conversation, target: str, model: str) -> bytes:
    return thinkseal.provider(target).prepare(fresh(conv), model=model, **OPTIONS[target]).content


class python_turns:
    """The Anthropic wire with its native whole-run mapping switched off
    (``native_turns``) and, with ``each=True``, its native turn writer too."""

    def __init__(self, *, each: bool) -> None:
        self.each = each

    def __enter__(self) -> None:
        self.saved = anthropic._Wire.native_turns, anthropic._Wire.native_turn
        anthropic._Wire.native_turns = _claude.Wire.native_turns  # type: ignore[method-assign]
        if self.each:
            anthropic._Wire.native_turn = _claude.Wire.native_turn  # type: ignore[method-assign]

    def __exit__(self, *exc: object) -> None:
        anthropic._Wire.native_turns, anthropic._Wire.native_turn = self.saved  # type: ignore[method-assign]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(script=steps, target=st.sampled_from(CLAUDE_WIRES), model=st.sampled_from(MODELS))
def test_bodies_with_native_turns_equal_the_python_path_s(script: list[Any], target: str, model: str) -> None:
    # The leak property's random histories: every provider's sealed data, kept
    # or unsealed, tool loops, edits of earlier messages.
    conv = play(script).conv
    native = bodies(conv, target, model)
    with python_turns(each=False):
        assert native == bodies(conv, target, model)
    with python_turns(each=True):
        assert native == bodies(conv, target, model)


def test_the_native_writer_writes_the_turns_of_a_plain_tool_loop() -> None:
    # Not vacuous: in an ordinary tool loop every turn is written natively.
    conv = Conversation([UserMessage("q")])
    for i in range(4):
        reply = AssistantMessage(f"a{i}", [ToolCall(f"c{i}", "f", {"i": i})], [ThinkingBlock.Text(f"t{i}", f"s{i}")])
        conv = thinkseal.testing.respond(conv, thinkseal.Origin("anthropic", "m"), reply)
        conv = conv.append(ToolMessage(f"r{i}", f"c{i}"), UserMessage(f"u{i}"))
    replay = conv.replay(thinkseal.Origin("anthropic", "m"))
    turns = _claude.plan_turns(replay.sent_messages(), WIRE.goes_out)
    assert [native_turn(role, group) for role, group in turns] == [python_turn(role, group) for role, group in turns]


KEYS = WIRE.memo_keys


def python_run(sent: list[Message]) -> tuple[list[bytes], list[int]]:
    with python_turns(each=True):
        return WIRE.turns(fresh(Conversation(sent)).messages)


def tool_loop(turns: int) -> list[Message]:
    """A plain tool loop as sent, its results answering the calls out of order,
    with a turn of thinking alone (left out: the user turns around it merge)."""
    conv = Conversation([thinkseal.SystemMessage("s"), UserMessage("q")])
    claude = thinkseal.Origin("anthropic", "m")
    for i in range(turns):
        calls = [ToolCall(f"c{i}", "f", {"i": i}), ToolCall(f"d{i}", "g", {})]
        conv = thinkseal.testing.respond(conv, claude, AssistantMessage(None, calls, [ThinkingBlock.Redacted(f"r{i}")]))
        conv = conv.append(ToolMessage("second", f"d{i}"), ToolMessage("first", f"c{i}"))
        if i % 2:
            conv = conv.append(UserMessage(f"u{i}"))
    conv = thinkseal.testing.respond(conv, claude, AssistantMessage("done", [], [ThinkingBlock.Text("t", "s")]))
    conv = conv.append(UserMessage("more"), AssistantMessage.from_parts([ThinkingBlock.Text("t", "s")]))
    return conv.append(UserMessage("again")).replay(claude).sent_messages()


def test_a_plain_run_is_mapped_wholly_natively_as_the_python_path_maps_it() -> None:
    sent = tool_loop(5)
    native = _core.claude_turns(sent, KEYS, anthropic._TURN_KIT)
    assert native is not None
    assert native == python_run(sent)
    # The results went first, in call order; the thinking-only turn was left out.
    assert b'"tool_use_id":"c0","content":"first"},{"type":"tool_result","tool_use_id":"d0"' in native[0][2]
    assert json.loads(native[0][-1])["content"] == [{"type": "text", "text": "more"}, {"type": "text", "text": "again"}]


def test_a_run_keeps_each_one_message_turn_on_its_message_and_reads_it_back() -> None:
    sent = tool_loop(2)
    encoded, _ = _core.claude_turns(sent, KEYS, anthropic._TURN_KIT)  # type: ignore[misc]
    first_turn = next(m for m in sent if isinstance(m, AssistantMessage))
    assert first_turn._wire == (KEYS[0], encoded[1])
    # Read back from the message, not written again; a kept tally comes with it.
    object.__setattr__(first_turn, "_wire", (KEYS[0], (b'{"kept":1}', 3)))
    again = _core.claude_turns(sent, KEYS, anthropic._TURN_KIT)
    assert again is not None
    assert again[0][1] == b'{"kept":1}'
    assert again[1][1] == 3


def test_a_run_stops_at_what_it_does_not_know_and_python_finds_the_turns_before() -> None:
    sent = [*tool_loop(2), UserMessage(("look", thinkseal.Image(url="https://example.com/a.png")))]
    assert _core.claude_turns(sent, KEYS, anthropic._TURN_KIT) is None
    first_turn = next(m for m in sent if isinstance(m, AssistantMessage))
    kept = first_turn._wire
    assert kept is not None
    assert kept[0] == KEYS[0]
    with python_turns(each=True):
        encoded, _ = WIRE.turns(sent)
    # The Python path read what the native run kept: the same bytes object, not equal bytes made again.
    assert any(data is kept[1] for data in encoded)
