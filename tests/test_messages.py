"""Messages and tool calls (docs/api.md "Messages"), including the sealing rules of an
assistant turn and every route by which a binding could survive a change."""

from __future__ import annotations

import copy
import copyreg
import dataclasses
import pickle

import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Binding,
    Conversation,
    Message,
    Origin,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.testing import bind_reply

Text = ThinkingBlock.Text
Redacted = ThinkingBlock.Redacted
Opaque = ThinkingBlock.Opaque
ORIGIN = Origin("anthropic", "claude-test")

CALL = ToolCall("call_1", "get_weather", {"city": "Paris", "days": 3})
CALL2 = ToolCall("call_2", "get_time", {"tz": "UTC"})
SEALED_BLOCKS = (
    Text("first thought", "sig-1"),
    Redacted("cmVkYWN0ZWQ="),
    Text("", "sig-empty"),
    Opaque("openrouter", '{"id":"r1"}'),
    Text("plain thought"),
)


def sealed_turn(content: str | None = "answer", calls=(CALL,), thinking=SEALED_BLOCKS) -> AssistantMessage:
    return AssistantMessage(content, calls, thinking)


def bound_turn(message: AssistantMessage | None = None) -> AssistantMessage:
    """``message`` bound the way a provider's receive binds it."""
    conversation = Conversation([SystemMessage("be brief"), UserMessage("weather?")])
    bound = bind_reply(conversation, ORIGIN, message or sealed_turn())
    assert bound.thinking_binding is not None
    return bound


def assert_unsealed_copy(result: AssistantMessage, original: AssistantMessage) -> None:
    """The unsealing rule: only Text blocks with non-empty text, unsigned, in order."""
    expected = tuple(Text(b.text) for b in original.thinking if isinstance(b, Text) and b.text)
    assert result.thinking == expected
    assert all(b.signature is None for b in result.thinking)
    assert not result.has_sealed_thinking
    assert result.thinking_binding is None


# -- simple messages ------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "role"),
    [
        (SystemMessage("s"), "system"),
        (UserMessage("u"), "user"),
        (AssistantMessage("a"), "assistant"),
        (ToolMessage("r", "call_1"), "tool"),
    ],
)
def test_roles(message, role):
    assert message.role == role
    assert isinstance(message, Message)
    assert type(message).role == role


def test_text_messages_keep_their_content_exactly():
    assert SystemMessage("  You are terse.\n").content == "  You are terse.\n"
    assert UserMessage("e\u0301").content == "e\u0301"
    assert UserMessage("e\u0301") != UserMessage("\u00e9")


def test_tool_message_fields_and_default():
    m = ToolMessage("42", "call_1")
    assert (m.content, m.tool_call_id, m.is_error) == ("42", "call_1", False)
    err = ToolMessage("boom", "call_1", is_error=True)
    assert err.is_error is True
    assert err != ToolMessage("boom", "call_1")


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: SystemMessage(""), "content"),
        (lambda: SystemMessage("  \n\t"), "content"),
        (lambda: UserMessage(""), "content"),
        (lambda: UserMessage("   "), "content"),
        (lambda: ToolMessage("", "id"), "content"),
        (lambda: ToolMessage(" ", "id"), "content"),
        (lambda: ToolMessage("r", ""), "tool_call_id"),
        (lambda: ToolMessage("r", "  "), "tool_call_id"),
        (lambda: ToolCall("", "f", {}), "id"),
        (lambda: ToolCall(" ", "f", {}), "id"),
        (lambda: ToolCall("i", "", {}), "name"),
        (lambda: ToolCall("i", "\t", {}), "name"),
    ],
)
def test_blank_fields_are_refused(make, field):
    with pytest.raises(ValidationError) as info:
        make()
    assert (info.value.path or "").endswith(field)
    assert field in str(info.value)


def test_different_message_types_are_never_equal():
    assert SystemMessage("x") != UserMessage("x")
    assert UserMessage("x") != AssistantMessage("x")
    assert AssistantMessage("x") != UserMessage("x")
    assert ToolMessage("x", "x") != UserMessage("x")
    assert UserMessage("x") != "x"


def test_simple_messages_equal_by_value_and_hashable():
    assert UserMessage("u") == UserMessage("u")
    assert hash(UserMessage("u")) == hash(UserMessage("u"))
    assert UserMessage("u") != UserMessage("v")
    assert ToolMessage("r", "a") != ToolMessage("r", "b")
    assert len({SystemMessage("s"), SystemMessage("s"), UserMessage("s")}) == 2


@pytest.mark.parametrize(
    "message",
    [SystemMessage("s"), UserMessage("u"), ToolMessage("r", "c", True), AssistantMessage("a", [CALL])],
    ids=repr,
)
def test_simple_messages_are_immutable(message):
    with pytest.raises(AttributeError):
        message.content = "changed"
    with pytest.raises(AttributeError):
        del message.content
    with pytest.raises(AttributeError):
        message.role = "user"


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
@pytest.mark.parametrize(
    "message",
    [SystemMessage("s"), UserMessage("u"), ToolMessage("r", "c", True), AssistantMessage(None, [CALL])],
    ids=repr,
)
def test_messages_are_picklable(message, protocol):
    restored = pickle.loads(pickle.dumps(message, protocol=protocol))
    assert type(restored) is type(message)
    assert restored == message
    assert restored.digest == message.digest


# -- tool calls -----------------------------------------------------------------


def test_tool_call_fields():
    call = ToolCall("call_1", "f", {"b": [1, 2.5, None, True], "a": {"x": "y"}})
    assert (call.id, call.name) == ("call_1", "f")
    assert call.arguments == {"b": [1, 2.5, None, True], "a": {"x": "y"}}
    assert call.arguments_json == '{"a":{"x":"y"},"b":[1,2.5,null,true]}'


def test_tool_call_arguments_are_a_read_only_copy():
    source = {"a": [1, {"b": 2}]}
    call = ToolCall("i", "f", source)
    source["a"][1]["b"] = 99
    source["c"] = 1
    assert call.arguments == {"a": [1, {"b": 2}]}
    with pytest.raises(TypeError):
        call.arguments["a"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        call.arguments["a"].append(3)  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        call.arguments["a"][1]["b"] = 3  # type: ignore[index]
    with pytest.raises(TypeError):
        call.arguments.update(x=1)  # type: ignore[attr-defined]
    assert call.arguments_json == '{"a":[1,{"b":2}]}'


def test_tool_call_equality_follows_json_semantics():
    assert ToolCall("i", "f", {"a": 1, "b": 2}) == ToolCall("i", "f", {"b": 2, "a": 1.0})
    assert hash(ToolCall("i", "f", {"a": 1, "b": 2})) == hash(ToolCall("i", "f", {"b": 2, "a": 1.0}))
    assert ToolCall("i", "f", {"a": 1}) != ToolCall("i", "f", {"a": True})
    assert ToolCall("i", "f", {"a": 1}) != ToolCall("i", "f", {"a": "1"})
    assert ToolCall("i", "f", {}) != ToolCall("j", "f", {})
    assert ToolCall("i", "f", {}) != ToolCall("i", "g", {})


def test_tool_call_is_immutable_picklable_hashable():
    with pytest.raises(AttributeError):
        CALL.id = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        CALL.arguments = {}  # type: ignore[misc]
    restored = pickle.loads(pickle.dumps(CALL))
    assert restored == CALL
    assert {CALL, restored} == {CALL}
    assert copy.deepcopy(CALL) == CALL


def test_tool_call_arguments_must_be_an_object():
    for bad in ([1, 2], "{}", None, 3, ({"a": 1},)):
        with pytest.raises(ValidationError) as info:
            ToolCall("i", "f", bad)  # type: ignore[arg-type]
        assert info.value.path == "ToolCall.arguments"


# -- assistant message: content, parts -------------------------------------------


def test_content_is_empty_string_when_content_opt_is_none():
    m = AssistantMessage(None, [CALL])
    assert m.content_opt is None
    assert m.content == ""
    assert isinstance(m.content, str)
    default = AssistantMessage(tool_calls=[CALL])
    assert default.content_opt is None
    assert default.content == ""


def test_none_and_empty_content_are_different_values():
    none = AssistantMessage(None, [CALL])
    empty = AssistantMessage("", [CALL])
    assert empty.content_opt == ""
    assert empty.content == none.content == ""
    assert none != empty
    assert none.digest != empty.digest


def test_tool_calls_and_thinking_are_tuples():
    m = AssistantMessage("a", [CALL, CALL2], [Text("t")])
    assert m.tool_calls == (CALL, CALL2)
    assert isinstance(m.tool_calls, tuple)
    assert m.thinking == (Text("t"),)
    assert isinstance(m.thinking, tuple)
    assert AssistantMessage("a").tool_calls == ()
    assert AssistantMessage("a").thinking == ()


def test_constructor_lays_parts_out_canonically():
    m = AssistantMessage("text", [CALL, CALL2], [Text("t1", "s"), Redacted("r")])
    assert m.parts == (Text("t1", "s"), Redacted("r"), "text", CALL, CALL2)
    assert AssistantMessage(None, [CALL]).parts == (CALL,)
    assert AssistantMessage("").parts == ("",)


def test_from_parts_keeps_order():
    parts = (Text("a", "s1"), "Let me check.", CALL, Text("b", "s2"), CALL2, " Done.")
    m = AssistantMessage.from_parts(parts)
    assert m.parts == parts
    assert m.content == "Let me check. Done."
    assert m.content_opt == "Let me check. Done."
    assert m.tool_calls == (CALL, CALL2)
    assert m.thinking == (Text("a", "s1"), Text("b", "s2"))
    assert m.thinking_binding is None


def test_from_parts_order_is_part_of_the_value():
    a = AssistantMessage.from_parts([Text("t", "s"), "x", CALL])
    b = AssistantMessage.from_parts(["x", Text("t", "s"), CALL])
    c = AssistantMessage.from_parts([Text("t", "s"), CALL, "x"])
    assert len({a.digest, b.digest, c.digest}) == 3
    assert a != b != c != a
    assert a == AssistantMessage("x", [CALL], [Text("t", "s")])


def test_from_parts_without_text_has_no_content():
    m = AssistantMessage.from_parts([Text("t", "s"), CALL])
    assert m.content_opt is None
    assert m.content == ""


def test_from_parts_refuses_junk():
    with pytest.raises(ValidationError) as info:
        AssistantMessage.from_parts(["ok", 3])  # type: ignore[list-item]
    assert info.value.path == "AssistantMessage.parts[1]"
    with pytest.raises(ValidationError) as info:
        AssistantMessage.from_parts([UserMessage("u")])  # type: ignore[list-item]
    assert info.value.path == "AssistantMessage.parts[0]"
    with pytest.raises(ValidationError):
        AssistantMessage.from_parts("text")  # type: ignore[arg-type]
    with pytest.raises(ValidationError) as info:
        AssistantMessage.from_parts(["a", "\ud800"])
    assert info.value.path == "AssistantMessage.parts[1]"


def test_has_sealed_thinking():
    assert not AssistantMessage("a").has_sealed_thinking
    assert not AssistantMessage("a", thinking=[Text("t")]).has_sealed_thinking
    assert AssistantMessage("a", thinking=[Text("t"), Text("", "s")]).has_sealed_thinking
    assert AssistantMessage("a", thinking=[Redacted("r")]).has_sealed_thinking
    assert AssistantMessage("a", thinking=[Opaque("p", "d")]).has_sealed_thinking


def test_thinking_text_joins_text_blocks_without_separator():
    m = AssistantMessage("a", thinking=[Text("one", "s"), Redacted("r"), Text("", "s"), Opaque("p", "x"), Text("two")])
    assert m.thinking_text == "onetwo"
    assert AssistantMessage("a").thinking_text == ""
    assert AssistantMessage("a", thinking=[Redacted("r")]).thinking_text == ""


def test_constructor_never_sets_a_binding():
    assert sealed_turn().thinking_binding is None
    assert AssistantMessage.from_parts([Text("t", "s"), "x"]).thinking_binding is None


# -- well-formedness --------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        AssistantMessage("text"),
        AssistantMessage("  x  "),
        AssistantMessage(None, [CALL]),
        AssistantMessage("", [CALL]),
        AssistantMessage("   ", [CALL], [Text("t", "s")]),
    ],
    ids=repr,
)
def test_well_formed(message):
    assert message.is_well_formed
    assert message.validate() is message


@pytest.mark.parametrize(
    "message",
    [
        AssistantMessage(),
        AssistantMessage(""),
        AssistantMessage("  \n "),
        AssistantMessage(None, (), [Text("only thinking", "sig")]),
        AssistantMessage("", (), [Redacted("r")]),
        AssistantMessage.from_parts([Text("t", "s"), " "]),
    ],
    ids=repr,
)
def test_not_well_formed(message):
    assert not message.is_well_formed
    with pytest.raises(ValidationError) as info:
        message.validate()
    assert "tool call" in str(info.value)


def test_thinking_only_reply_can_still_be_constructed():
    # Construction is lenient (providers return such turns); validate() is the check.
    m = AssistantMessage(None, (), [Text("t", "s")])
    assert m.thinking == (Text("t", "s"),)


# -- with_content / with_tool_calls / with_thinking / unsealed ------------------


def test_with_content_same_value_returns_same_object_still_sealed():
    m = bound_turn()
    same = m.with_content("answer")
    assert same is m
    assert same.has_sealed_thinking
    assert same.thinking_binding is not None


def test_with_content_same_value_on_interleaved_turn_keeps_order():
    m = AssistantMessage.from_parts([Text("a", "s"), "x", CALL, Text("b", "s2"), "y"])
    assert m.with_content("xy") is m
    assert m.with_tool_calls([CALL]) is m
    assert m.with_tool_calls((CALL,)) is m


def test_with_content_none_when_none_is_same_object():
    m = bound_turn(sealed_turn(None))
    assert m.with_content(None) is m


@pytest.mark.parametrize("new", ["other answer", "", None, "answer "])
def test_with_content_different_value_unseals(new):
    m = bound_turn()
    changed = m.with_content(new)
    assert changed is not m
    assert changed.content_opt == new
    assert changed.tool_calls == m.tool_calls
    assert_unsealed_copy(changed, m)
    assert changed.thinking == (Text("first thought"), Text("plain thought"))
    # the original is untouched
    assert m.thinking == SEALED_BLOCKS
    assert m.thinking_binding is not None


def test_with_content_empty_vs_none_counts_as_a_change():
    m = bound_turn(sealed_turn(""))
    assert m.with_content("") is m
    assert m.with_content(None).thinking_binding is None
    assert not m.with_content(None).has_sealed_thinking


def test_with_tool_calls_same_value_returns_same_object_still_sealed():
    m = bound_turn()
    for same in ([CALL], (CALL,), [ToolCall("call_1", "get_weather", {"days": 3.0, "city": "Paris"})]):
        result = m.with_tool_calls(same)
        assert result is m
        assert result.has_sealed_thinking
        assert result.thinking_binding is not None


@pytest.mark.parametrize(
    "calls",
    [
        (),
        (CALL, CALL2),
        (CALL2,),
        (ToolCall("call_1", "get_weather", {"city": "Lyon", "days": 3}),),
        (ToolCall("call_1", "get_weather", {"city": "Paris", "days": True}),),
    ],
)
def test_with_tool_calls_different_value_unseals(calls):
    m = bound_turn()
    changed = m.with_tool_calls(calls)
    assert changed is not m
    assert changed.tool_calls == tuple(calls)
    assert changed.content_opt == m.content_opt
    assert_unsealed_copy(changed, m)


def test_with_tool_calls_validates():
    with pytest.raises(ValidationError) as info:
        sealed_turn().with_tool_calls([CALL, {"id": "x"}])  # type: ignore[list-item]
    assert info.value.path == "AssistantMessage.tool_calls[1]"


def test_with_content_validates():
    with pytest.raises(ValidationError):
        sealed_turn().with_content(5)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        sealed_turn().with_content("\ud800")


def test_changes_fall_back_to_canonical_layout():
    m = AssistantMessage.from_parts([Text("a", "s1"), "x", CALL, Text("b"), CALL2, "y"])
    content = m.with_content("z")
    assert content.parts == (Text("a"), Text("b"), "z", CALL, CALL2)
    calls = m.with_tool_calls([CALL2])
    assert calls.parts == (Text("a"), Text("b"), "xy", CALL2)
    thinking = m.with_thinking("new")
    assert thinking.parts == (Text("new"), "xy", CALL, CALL2)
    no_text = AssistantMessage.from_parts([CALL, Text("t", "s")]).with_tool_calls([CALL2])
    assert no_text.parts == (Text("t"), CALL2)
    assert no_text.content_opt is None


def test_with_thinking_replaces_and_clears_binding():
    m = bound_turn()
    new_blocks = (Text("replacement", "new-sig"), Redacted("new"))
    replaced = m.with_thinking(new_blocks)
    assert replaced.thinking == new_blocks
    assert replaced.has_sealed_thinking  # sealed blocks are allowed
    assert replaced.thinking_binding is None
    assert (replaced.content_opt, replaced.tool_calls) == (m.content_opt, m.tool_calls)


def test_with_thinking_same_blocks_still_clears_binding():
    m = bound_turn()
    replaced = m.with_thinking(m.thinking)
    assert replaced.thinking == m.thinking
    assert replaced.thinking_binding is None
    assert replaced != m  # equality includes the binding


def test_with_thinking_string_and_empty():
    m = bound_turn()
    assert m.with_thinking("text").thinking == (Text("text"),)
    assert m.with_thinking("text").thinking_binding is None
    assert m.with_thinking("").thinking == ()
    assert m.with_thinking("").thinking_binding is None
    assert m.with_thinking(()).thinking == ()


def test_with_thinking_validates():
    with pytest.raises(ValidationError) as info:
        sealed_turn().with_thinking(["just a string"])  # type: ignore[list-item]
    assert info.value.path == "AssistantMessage.thinking[0]"
    with pytest.raises(ValidationError):
        sealed_turn().with_thinking("\ud800")


def test_unsealed_drops_everything_sealed():
    m = bound_turn()
    u = m.unsealed()
    assert_unsealed_copy(u, m)
    assert (u.content_opt, u.tool_calls) == (m.content_opt, m.tool_calls)
    assert u.unsealed() is u


def test_unsealed_is_same_object_when_nothing_to_drop():
    m = AssistantMessage("a", [CALL], [Text("t")])
    assert m.unsealed() is m
    plain = AssistantMessage("a")
    assert plain.unsealed() is plain


def test_unsealed_of_sealed_unbound_turn():
    m = AssistantMessage("a", (), [Redacted("r")])
    u = m.unsealed()
    assert u is not m
    assert u.thinking == ()
    assert u.content_opt == "a"


# -- equality, hashing, binding ----------------------------------------------------


def test_assistant_equality_includes_binding():
    unbound = sealed_turn()
    bound = bound_turn()
    assert unbound == sealed_turn()
    assert bound != unbound
    assert unbound != bound
    assert bound == bound_turn()
    assert hash(bound) == hash(bound_turn())
    assert bound.digest == unbound.digest  # the digest is over the turn itself


def test_assistant_equality_by_value():
    assert AssistantMessage("a", [CALL], [Text("t", "s")]) == AssistantMessage("a", (CALL,), (Text("t", "s"),))
    assert AssistantMessage("a", [CALL], [Text("t", "s")]) != AssistantMessage("a", [CALL], [Text("t", "s2")])
    assert AssistantMessage("a") != AssistantMessage("b")
    assert AssistantMessage("a", [CALL]) != AssistantMessage("a", [CALL2])
    assert len({AssistantMessage("a"), AssistantMessage("a"), AssistantMessage("b")}) == 2


def test_assistant_is_immutable():
    m = bound_turn()
    for name in ("content_opt", "tool_calls", "thinking", "parts", "thinking_binding"):
        with pytest.raises(AttributeError):
            setattr(m, name, None)
    with pytest.raises(AttributeError):
        m.content = "x"  # type: ignore[misc]
    assert m.thinking_binding is not None
    assert isinstance(m.thinking, tuple)


def test_binding_cannot_be_attached_by_assignment():
    m = sealed_turn()
    with pytest.raises(AttributeError):
        m.thinking_binding = bound_turn().thinking_binding  # type: ignore[misc]
    assert m.thinking_binding is None


# -- no route keeps a binding across a change ------------------------------------


def test_dataclasses_replace_is_refused():
    m = bound_turn()
    with pytest.raises(TypeError):
        dataclasses.replace(m, content="edited")  # type: ignore[type-var]


@pytest.mark.parametrize(
    "changes",
    [
        {"content": "edited"},
        {"tool_calls": ()},
        {"tool_calls": (CALL, CALL2)},
        {"thinking": (Text("forged", "sig"),)},
        {"thinking": SEALED_BLOCKS},
        {},
    ],
    ids=repr,
)
def test_replace_protocol_never_keeps_binding(changes):
    m = bound_turn()
    replaced = m.__replace__(**changes)
    assert isinstance(replaced, AssistantMessage)
    assert replaced.thinking_binding is None
    if "content" in changes:
        assert replaced.content_opt == changes["content"]
    if "tool_calls" in changes:
        assert replaced.tool_calls == changes["tool_calls"]
    if "thinking" in changes:
        assert replaced.thinking == changes["thinking"]


def _copy_replace(obj, /, **changes):
    # copy.replace (Python 3.13) is exactly this call; use it where it exists.
    replace = getattr(copy, "replace", None)
    if replace is not None:
        return replace(obj, **changes)
    return type(obj).__replace__(obj, **changes)


def test_copy_replace_never_keeps_binding():
    m = bound_turn()
    replaced = _copy_replace(m, content="edited")
    assert replaced.content == "edited"
    assert replaced.thinking_binding is None
    assert _copy_replace(m, tool_calls=()).thinking_binding is None


def test_replace_protocol_validates():
    with pytest.raises(ValidationError):
        UserMessage("u").__replace__(content="")
    with pytest.raises(TypeError):
        UserMessage("u").__replace__(binding="x")
    assert UserMessage("u").__replace__(content="v") == UserMessage("v")
    assert ToolMessage("r", "c").__replace__(is_error=True) == ToolMessage("r", "c", True)


def test_constructor_has_no_binding_keyword():
    binding = bound_turn().thinking_binding
    with pytest.raises(TypeError):
        AssistantMessage("answer", [CALL], SEALED_BLOCKS, thinking_binding=binding)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        AssistantMessage("answer", [CALL], SEALED_BLOCKS, binding=binding)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        AssistantMessage.from_parts([Text("t", "s"), "x"], binding=binding)  # type: ignore[call-arg]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip_keeps_binding(protocol):
    m = bound_turn(AssistantMessage.from_parts([Text("a", "s1"), "x", CALL, Redacted("r"), CALL2]))
    restored = pickle.loads(pickle.dumps(m, protocol=protocol))
    assert restored == m
    assert restored.thinking_binding == m.thinking_binding
    assert restored.parts == m.parts
    assert hash(restored) == hash(m)


def test_copy_and_deepcopy_keep_binding_when_unchanged():
    m = bound_turn()
    for clone in (copy.copy(m), copy.deepcopy(m)):
        assert clone == m
        assert clone.thinking_binding == m.thinking_binding
        assert clone.has_sealed_thinking


@pytest.mark.parametrize(
    "edit",
    [
        lambda parts: ("edited", *parts[1:]),
        lambda parts: parts[:-1],
        lambda parts: (*parts, "more text"),
        lambda parts: tuple(reversed(parts)),
        lambda parts: (Text("forged", "sig-1"), *parts[1:]),
        lambda parts: tuple(p for p in parts if not isinstance(p, ToolCall)),
    ],
)
def test_pickle_trick_with_changed_parts_drops_binding(edit):
    m = bound_turn(AssistantMessage.from_parts([Text("first", "sig-1"), "x", CALL, Redacted("r")]))
    func, args = m.__reduce__()[:2]
    parts, binding = args
    assert binding == m.thinking_binding
    rebuilt = func(edit(tuple(parts)), binding)
    assert rebuilt.thinking_binding is None
    assert func(parts, binding).thinking_binding == binding  # the unchanged form keeps it


def test_pickle_trick_moving_binding_to_other_message_drops_it():
    m = bound_turn()
    other = AssistantMessage("different", [CALL], [Text("t", "s")])
    func = m.__reduce__()[0]
    moved = func(other.parts, m.thinking_binding)
    assert moved.thinking_binding is None
    junk = func(m.parts, "not a binding")
    assert junk.thinking_binding is None


def test_pickle_stream_with_edited_parts_drops_binding():
    m = bound_turn(AssistantMessage("answer-one", [CALL], [Text("t", "sig")]))
    data = pickle.dumps(m, protocol=0)
    assert b"answer-one" in data
    tampered = pickle.loads(data.replace(b"answer-one", b"answer-two"))
    assert tampered.content == "answer-two"
    assert tampered.thinking_binding is None


def test_reduce_ex_routes_through_the_checked_constructor():
    m = bound_turn()
    for protocol in (2, 4):
        func, args = m.__reduce_ex__(protocol)[:2]
        parts, binding = args
        assert func(parts, binding).thinking_binding == m.thinking_binding
        assert func(("edited",), binding).thinking_binding is None


def test_crafted_pickle_cannot_set_slots():
    m = bound_turn()
    state = {
        "parts": ("edited",),
        "content_opt": "edited",
        "tool_calls": (),
        "thinking": (),
        "thinking_binding": m.thinking_binding,
        "_digest": m.digest,
        "_unsealed": None,
    }

    class Forge:
        def __reduce__(self):
            return (copyreg._reconstructor, (AssistantMessage, object, None), (None, state))

    with pytest.raises((AttributeError, TypeError)):
        pickle.loads(pickle.dumps(Forge()))


def test_binding_from_other_turn_never_holds_in_replay():
    # Even moved by force, a binding names its own turn; replay reports the change.
    m = bound_turn()
    other = AssistantMessage("edited", [CALL], SEALED_BLOCKS)
    forged = other._bound(m.thinking_binding)
    conversation = Conversation([SystemMessage("be brief"), UserMessage("weather?"), forged])
    assert conversation.replay_report(ORIGIN)[0].reason == "turn-changed"


def test_public_api_lists_message_types():
    for name in ("Message", "SystemMessage", "UserMessage", "AssistantMessage", "ToolMessage", "ToolCall"):
        assert name in thinkseal.__all__
        assert getattr(thinkseal, name) is globals()[name]


def test_binding_is_a_binding():
    assert isinstance(bound_turn().thinking_binding, Binding)
