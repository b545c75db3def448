"""Tool, response format and Conversation (docs/api.md "Tools, response format, conversation")."""

from __future__ import annotations

import copy
import pickle
import threading

import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Origin,
    Reason,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.testing import respond

Text = ThinkingBlock.Text
ORIGIN = Origin("anthropic", "claude-test")
WEATHER = Tool(
    "get_weather",
    "Current weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CLOCK = Tool("get_time")
MESSAGES = (SystemMessage("sys"), UserMessage("hi"), AssistantMessage("hello"), UserMessage("bye"))


def sealed(content: str) -> AssistantMessage:
    return AssistantMessage(content, (), [Text("thought", "sig-" + content)])


# -- Tool -------------------------------------------------------------------------


def test_tool_defaults():
    t = Tool("noop")
    assert t.name == "noop"
    assert t.description == ""
    assert t.parameters == {"type": "object", "properties": {}}


def test_tool_default_parameters_are_not_shared_mutable_state():
    a, b = Tool("a"), Tool("b")
    with pytest.raises(TypeError):
        a.parameters["properties"]["x"] = {}  # type: ignore[index]
    assert b.parameters == {"type": "object", "properties": {}}
    assert Tool("c").parameters == {"type": "object", "properties": {}}


def test_tool_parameters_are_a_read_only_copy():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    t = Tool("t", "d", schema)
    schema["properties"]["b"] = {}
    assert t.parameters == {"type": "object", "properties": {"a": {"type": "integer"}}}
    with pytest.raises(TypeError):
        t.parameters["x"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        t.parameters["properties"].clear()  # type: ignore[attr-defined]


def test_tool_equality_follows_json_semantics():
    a = Tool("t", "d", {"type": "object", "properties": {"n": {"minimum": 1}}})
    b = Tool("t", "d", {"properties": {"n": {"minimum": 1.0}}, "type": "object"})
    assert a == b
    assert hash(a) == hash(b)
    assert a != Tool("t", "d", {"type": "object", "properties": {"n": {"minimum": 2}}})
    assert a != Tool("t", "other", a.parameters)
    assert a != Tool("u", "d", a.parameters)


def test_tool_is_immutable_and_picklable():
    with pytest.raises(AttributeError):
        WEATHER.name = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        WEATHER.parameters = {}  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(WEATHER)) == WEATHER
    assert copy.deepcopy(WEATHER) == WEATHER


@pytest.mark.parametrize(
    ("make", "path"),
    [
        (lambda: Tool(""), "Tool.name"),
        (lambda: Tool("  "), "Tool.name"),
        (lambda: Tool(None), "Tool.name"),  # type: ignore[arg-type]
        (lambda: Tool("\ud800"), "Tool.name"),
        (lambda: Tool("t", None), "Tool.description"),  # type: ignore[arg-type]
        (lambda: Tool("t", "\udfff"), "Tool.description"),
        (lambda: Tool("t", "", [1]), "Tool.parameters"),  # type: ignore[arg-type]
        (lambda: Tool("t", "", None), "Tool.parameters"),  # type: ignore[arg-type]
        (lambda: Tool("t", "", '{"type":"object"}'), "Tool.parameters"),  # type: ignore[arg-type]
        (lambda: Tool("t", "", {"x": float("nan")}), "Tool.parameters.x"),
        (lambda: Tool("t", "", {"x": {1: "a"}}), "Tool.parameters.x"),
    ],
)
def test_tool_validation(make, path):
    with pytest.raises(ValidationError) as info:
        make()
    assert info.value.path == path


def test_tool_description_may_be_empty():
    assert Tool("t", "").description == ""


# -- Conversation: construction and sequence protocol -----------------------------


def test_defaults():
    c = Conversation()
    assert c.messages == ()
    assert len(c) == 0
    assert c.tools == ()
    assert c.response_format is None
    assert list(c) == []


def test_sequence_protocol():
    c = Conversation(list(MESSAGES))
    assert c.messages == MESSAGES
    assert isinstance(c.messages, tuple)
    assert len(c) == 4
    assert c[0] is MESSAGES[0]
    assert c[3] is MESSAGES[3]
    assert c[-1] is MESSAGES[-1]
    assert c[-4] is MESSAGES[0]
    assert c[1:3] == MESSAGES[1:3]
    assert c[::-1] == MESSAGES[::-1]
    assert list(c) == list(MESSAGES)
    assert [m.role for m in c] == ["system", "user", "assistant", "user"]
    for bad in (4, -5, 100):
        with pytest.raises(IndexError):
            c[bad]


def test_tools_are_a_tuple():
    c = Conversation(MESSAGES, [WEATHER, CLOCK])
    assert c.tools == (WEATHER, CLOCK)
    assert isinstance(c.tools, tuple)


def test_system_messages_stay_where_the_caller_put_them():
    ms = (UserMessage("u"), SystemMessage("late system"), AssistantMessage("a"), SystemMessage("later"))
    c = Conversation(ms)
    assert c.messages == ms
    assert [m.role for m in c] == ["user", "system", "assistant", "system"]


def test_conversation_copies_its_input():
    source = list(MESSAGES)
    c = Conversation(source)
    source.append(UserMessage("sneaky"))
    source[0] = UserMessage("replaced")
    assert c.messages == MESSAGES
    assert len(c) == 4


def test_conversation_is_immutable():
    c = Conversation(MESSAGES, [WEATHER], {"type": "json_object"})
    for name in ("messages", "tools", "response_format"):
        with pytest.raises(AttributeError):
            setattr(c, name, None)
    with pytest.raises(TypeError):
        c.response_format["type"] = "text"  # type: ignore[index]
    assert c.response_format == {"type": "json_object"}
    assert c.tools == (WEATHER,)


@pytest.mark.parametrize(
    ("make", "path"),
    [
        (lambda: Conversation([UserMessage("u"), "text"]), "Conversation.messages[1]"),  # type: ignore[list-item]
        (lambda: Conversation([{"role": "user", "content": "x"}]), "Conversation.messages[0]"),  # type: ignore[list-item]
        (lambda: Conversation("hello"), "Conversation.messages"),  # type: ignore[arg-type]
        (lambda: Conversation(5), "Conversation.messages"),  # type: ignore[arg-type]
        (lambda: Conversation((), [WEATHER, "tool"]), "Conversation.tools[1]"),  # type: ignore[list-item]
        (lambda: Conversation((), {"name": "t"}), "Conversation.tools"),  # type: ignore[arg-type]
        (lambda: Conversation((), (), "json"), "Conversation.response_format"),  # type: ignore[arg-type]
        (lambda: Conversation((), (), [{"type": "json_object"}]), "Conversation.response_format"),  # type: ignore[arg-type]
        (lambda: Conversation((), (), {"schema": {}}), "Conversation.response_format.type"),
        (lambda: Conversation((), (), {"type": 1}), "Conversation.response_format.type"),
        (lambda: Conversation((), (), {"type": "json_object", "x": float("inf")}), "Conversation.response_format.x"),
    ],
)
def test_constructor_validation(make, path):
    with pytest.raises(ValidationError) as info:
        make()
    assert info.value.path == path


def test_append_rejects_non_messages_naming_the_index():
    c = Conversation(MESSAGES)
    with pytest.raises(ValidationError) as info:
        c.append(UserMessage("ok"), "nope")  # type: ignore[arg-type]
    assert info.value.path == "Conversation.messages[5]"
    assert len(c) == 4


def test_response_format_shapes():
    json_object = Conversation((), (), {"type": "json_object"})
    assert json_object.response_format == {"type": "json_object"}
    schema = {"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}, "strict": True}}
    c = Conversation((), (), schema)
    assert c.response_format == schema
    assert Conversation((), (), None).response_format is None


# -- derivation ---------------------------------------------------------------------


def test_append_returns_a_new_conversation():
    base = Conversation(MESSAGES[:2], [WEATHER], {"type": "json_object"})
    longer = base.append(MESSAGES[2], MESSAGES[3])
    assert longer is not base
    assert len(base) == 2
    assert base.messages == MESSAGES[:2]
    assert longer.messages == MESSAGES
    assert longer.tools == base.tools
    assert longer.response_format == base.response_format
    assert base.append() == base


def test_branches_from_one_parent_are_independent():
    base = Conversation([UserMessage("root")])
    left = base.append(UserMessage("left"))
    right = base.append(UserMessage("right"))
    left2 = left.append(AssistantMessage("L"))
    right2 = right.append(AssistantMessage("R"))
    assert [m.content for m in base] == ["root"]
    assert [m.content for m in left] == ["root", "left"]
    assert [m.content for m in right] == ["root", "right"]
    assert [m.content for m in left2] == ["root", "left", "L"]
    assert [m.content for m in right2] == ["root", "right", "R"]
    assert list(right2)[-1] == right2[-1] == AssistantMessage("R")
    again = base.append(UserMessage("third"))
    assert [m.content for m in again] == ["root", "third"]
    assert left2[1] == UserMessage("left")


def test_concurrent_appends_do_not_interfere():
    base = Conversation([UserMessage("root")])
    results: dict[int, Conversation] = {}

    def grow(k: int) -> None:
        c = base
        for i in range(50):
            c = c.append(UserMessage(f"{k}-{i}"))
        results[k] = c

    threads = [threading.Thread(target=grow, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, c in results.items():
        assert [m.content for m in c] == ["root"] + [f"{k}-{i}" for i in range(50)]
    assert len(base) == 1


def test_with_messages():
    base = Conversation(MESSAGES, [WEATHER], {"type": "json_object"})
    other = base.with_messages([UserMessage("only")])
    assert other.messages == (UserMessage("only"),)
    assert other.tools == (WEATHER,)
    assert other.response_format == {"type": "json_object"}
    assert base.messages == MESSAGES
    with pytest.raises(ValidationError):
        base.with_messages([1])  # type: ignore[list-item]


def test_with_tools():
    base = Conversation(MESSAGES, [WEATHER])
    other = base.with_tools([CLOCK])
    assert other.tools == (CLOCK,)
    assert other.messages == MESSAGES
    assert base.tools == (WEATHER,)
    assert base.with_tools(()).tools == ()
    with pytest.raises(ValidationError):
        base.with_tools(["x"])  # type: ignore[list-item]


def test_with_response_format():
    base = Conversation(MESSAGES)
    other = base.with_response_format({"type": "json_object"})
    assert other.response_format == {"type": "json_object"}
    assert base.response_format is None
    assert other.with_response_format(None).response_format is None
    assert other.messages == MESSAGES
    with pytest.raises(ValidationError):
        base.with_response_format({"no": "type"})


# -- value semantics ------------------------------------------------------------------


def test_equality_by_value():
    a = Conversation(MESSAGES, [WEATHER], {"type": "json_object"})
    b = Conversation(list(MESSAGES), (WEATHER,), {"type": "json_object"})
    assert a == b
    assert hash(a) == hash(b)
    assert a != a.with_tools(())
    assert a != a.with_response_format(None)
    assert a != a.with_messages(MESSAGES[:3])
    assert a != a.append(UserMessage("x"))
    assert a != MESSAGES


def test_equality_includes_bindings():
    base = Conversation([UserMessage("hi")])
    bound = respond(base, ORIGIN, sealed("a"))
    unbound = base.append(sealed("a"))
    assert bound != unbound
    assert bound == respond(base, ORIGIN, sealed("a"))


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip_keeps_bindings(protocol):
    c = respond(
        Conversation([SystemMessage("s"), UserMessage("hi")], [WEATHER], {"type": "json_object"}), ORIGIN, sealed("a")
    )
    restored = pickle.loads(pickle.dumps(c, protocol=protocol))
    assert restored == c
    assert restored[-1].thinking_binding == c[-1].thinking_binding
    assert restored.replay_report(ORIGIN)[0].reason == Reason.KEPT


def test_copy_and_deepcopy():
    c = respond(Conversation([UserMessage("hi")]), ORIGIN, sealed("a"))
    for clone in (copy.copy(c), copy.deepcopy(c)):
        assert clone == c
        assert clone.replay_report(ORIGIN)[0].kept


def test_exported():
    for name in ("Conversation", "Tool", "ReplayReport"):
        assert name in thinkseal.__all__


# -- rebind -------------------------------------------------------------------------


def history(n: int = 3) -> list:
    ms: list = [SystemMessage("sys"), UserMessage("q0")]
    for i in range(n):
        ms.append(sealed(f"a{i}"))
        ms.append(UserMessage(f"q{i + 1}"))
    return ms


def test_rebind_binds_every_sealed_turn():
    c = Conversation(history(3), [WEATHER])
    assert [e.reason for e in c.replay_report(ORIGIN)] == [Reason.UNBOUND] * 3
    r = c.rebind(ORIGIN)
    assert [e.reason for e in r.replay_report(ORIGIN)] == [Reason.KEPT] * 3
    for m in r:
        if isinstance(m, AssistantMessage):
            assert m.thinking_binding is not None
            assert m.thinking_binding.origin == ORIGIN


def test_rebind_returns_new_conversation_and_leaves_original():
    c = Conversation(history(2))
    r = c.rebind(ORIGIN)
    assert r is not c
    assert all(m.thinking_binding is None for m in c if isinstance(m, AssistantMessage))
    assert [m.content for m in r] == [m.content for m in c]
    assert [getattr(m, "parts", None) for m in r] == [getattr(m, "parts", None) for m in c]


def test_rebind_leaves_unsealed_turns_unbound():
    c = Conversation([UserMessage("q"), AssistantMessage("a", (), [Text("plain")]), UserMessage("q2")])
    r = c.rebind(ORIGIN)
    assert r[1].thinking_binding is None
    assert r.replay_report(ORIGIN)[0].reason == Reason.NO_SEALED_THINKING


def test_rebind_only_holds_for_its_origin():
    r = Conversation(history(2)).rebind(ORIGIN)
    assert [e.reason for e in r.replay_report(Origin("anthropic", "other"))] == [Reason.ORIGIN_MISMATCH] * 2


def test_rebind_agrees_with_bindings_made_by_receive():
    base = Conversation([SystemMessage("sys"), UserMessage("q0")])
    received = respond(respond(base, ORIGIN, sealed("a0")).append(UserMessage("q1")), ORIGIN, sealed("a1"))
    stripped = received.with_messages(
        [m.with_thinking(m.thinking) if isinstance(m, AssistantMessage) else m for m in received]
    )
    assert [e.reason for e in stripped.replay_report(ORIGIN)] == [Reason.UNBOUND, Reason.UNBOUND]
    rebound = stripped.rebind(ORIGIN)
    assert rebound == received


def test_rebind_replaces_stale_bindings():
    c = respond(Conversation([UserMessage("q")]), ORIGIN, sealed("a")).append(UserMessage("q2"))
    edited = c.with_messages([UserMessage("edited q"), *c.messages[1:]])
    assert edited.replay_report(ORIGIN)[0].reason == Reason.PREFIX_CHANGED
    assert edited.rebind(ORIGIN).replay_report(ORIGIN)[0].reason == Reason.KEPT


def test_rebind_validates_origin():
    with pytest.raises(ValidationError):
        Conversation(history(1)).rebind("anthropic")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Conversation(history(1)).replay(("anthropic", "m"))  # type: ignore[arg-type]


def test_rebind_with_tool_loop():
    call = ToolCall("c1", "get_weather", {"city": "Paris"})
    ms = [
        UserMessage("weather?"),
        AssistantMessage(None, [call], [Text("need tool", "s1")]),
        ToolMessage("sunny", "c1"),
        AssistantMessage("It is sunny.", (), [Text("done", "s2")]),
    ]
    r = Conversation(ms, [WEATHER]).rebind(ORIGIN)
    assert [e.reason for e in r.replay_report(ORIGIN)] == [Reason.KEPT, Reason.KEPT]
