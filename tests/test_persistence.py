"""Conversation.to_json / from_json and Message.to_dict / message_from_dict:
lossless, versioned, and strict about what they read."""

from __future__ import annotations

import json

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
    message_from_dict,
    message_to_dict,
)
from thinkseal.testing import respond

Text = ThinkingBlock.Text
Redacted = ThinkingBlock.Redacted
Opaque = ThinkingBlock.Opaque
ORIGIN = Origin("anthropic", "claude-test", "acct;with=odd%chars")
TOOLS = [
    Tool("get_weather", "Weather \u2600", {"type": "object", "properties": {"city": {"type": "string"}}}),
    Tool("noop"),
]
FORMAT = {"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}, "strict": True}}
CALL = ToolCall("call_\u00e9", "get_weather", {"city": "Z\u00fcrich", "n": [1, 2.5, -0.0, 10**30, None, True], "o": {}})


def rich_conversation() -> Conversation:
    c = Conversation([UserMessage('q\n\t"quoted"'), SystemMessage("sys \U0001f600")], TOOLS, FORMAT)
    c = respond(
        c,
        ORIGIN,
        AssistantMessage.from_parts(
            [Text("first", "sig-1"), "Let me check.", CALL, Redacted("cmVk"), Text("", "sig-empty"), " More."]
        ),
    )
    c = c.append(ToolMessage("sunny", CALL.id), ToolMessage("oops", "call_other", is_error=True))
    c = respond(c, ORIGIN, AssistantMessage("", (), [Opaque("openrouter", '{"a":1}'), Text("plain")]))
    return c.append(
        UserMessage("q2"),
        AssistantMessage(None, [ToolCall("c2", "noop", {})]),
        AssistantMessage("unsigned", (), [Text("just text")]),
    )


def assert_same_conversation(a: Conversation, b: Conversation) -> None:
    assert a == b
    assert a.tools == b.tools
    assert a.response_format == b.response_format
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert type(x) is type(y)
        assert x == y
        if isinstance(x, AssistantMessage):
            assert x.parts == y.parts
            assert x.content_opt == y.content_opt
            assert x.thinking_binding == y.thinking_binding


def test_round_trip_every_field():
    c = rich_conversation()
    text = c.to_json()
    assert isinstance(text, str)
    back = Conversation.from_json(text)
    assert_same_conversation(c, back)
    assert back.to_json() == text


def test_round_trip_keeps_replay_decisions():
    c = rich_conversation()
    back = Conversation.from_json(c.to_json())
    assert list(back.replay_report(ORIGIN)) == list(c.replay_report(ORIGIN))
    assert [e.reason for e in back.replay_report(ORIGIN)][:2] == [Reason.KEPT, Reason.KEPT]
    assert back.replay(ORIGIN).chain_end == c.replay(ORIGIN).chain_end


def test_round_trip_from_bytes():
    c = rich_conversation()
    assert_same_conversation(Conversation.from_json(c.to_json().encode("utf-8")), c)
    assert_same_conversation(Conversation.from_json(bytearray(c.to_json().encode("utf-8"))), c)


def test_none_and_empty_content_survive():
    c = Conversation([UserMessage("q"), AssistantMessage(None, [CALL]), AssistantMessage("", [CALL])])
    back = Conversation.from_json(c.to_json())
    assert back[1].content_opt is None
    assert back[2].content_opt == ""


def test_document_is_versioned_and_documented_shape():
    doc = json.loads(rich_conversation().to_json())
    assert doc["format"] == "thinkseal.conversation"
    assert doc["version"] == 2
    assert isinstance(doc["messages"], list)
    assert doc["tools"][0]["name"] == "get_weather"
    assert doc["response_format"] == FORMAT
    assistant = doc["messages"][2]
    assert assistant["role"] == "assistant"
    assert [p["type"] for p in assistant["parts"]] == [
        "thinking",
        "text",
        "tool_call",
        "redacted_thinking",
        "thinking",
        "text",
    ]
    assert assistant["binding"].startswith("thinkseal-binding/")


def test_signatures_are_stored_but_never_inside_the_binding():
    doc = json.loads(rich_conversation().to_json())
    binding = doc["messages"][2]["binding"]
    assert "sig-1" not in binding
    assert "cmVk" not in binding
    assert doc["messages"][2]["parts"][0]["signature"] == "sig-1"


def test_hand_written_version_1_document_loads():
    text = json.dumps(
        {
            "format": "thinkseal.conversation",
            "version": 1,
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "u"},
                {
                    "role": "assistant",
                    "parts": [
                        {"type": "thinking", "text": "t", "signature": "sig"},
                        {"type": "redacted_thinking", "data": "r"},
                        {"type": "opaque_thinking", "provider": "openrouter", "data": "{}"},
                        {"type": "text", "text": "answer"},
                        {"type": "tool_call", "id": "c1", "name": "f", "arguments": {"x": 1}},
                    ],
                    "binding": None,
                },
                {"role": "tool", "content": "r", "tool_call_id": "c1", "is_error": True},
            ],
            "tools": [{"name": "f", "description": "d", "parameters": {"type": "object"}}],
            "response_format": {"type": "json_object"},
        }
    )
    c = Conversation.from_json(text)
    assert c[0] == SystemMessage("s")
    assert c[1] == UserMessage("u")
    assert c[2] == AssistantMessage(
        "answer", [ToolCall("c1", "f", {"x": 1})], [Text("t", "sig"), Redacted("r"), Opaque("openrouter", "{}")]
    )
    assert c[3] == ToolMessage("r", "c1", is_error=True)
    assert c.tools == (Tool("f", "d", {"type": "object"}),)
    assert c.response_format == {"type": "json_object"}


def test_minimal_document_uses_documented_defaults():
    text = json.dumps(
        {
            "format": "thinkseal.conversation",
            "version": 1,
            "messages": [
                {"role": "tool", "content": "r", "tool_call_id": "c"},
                {"role": "assistant", "parts": [{"type": "thinking", "text": "t"}, {"type": "text", "text": "a"}]},
            ],
            "tools": [{"name": "t"}],
        }
    )
    c = Conversation.from_json(text)
    assert c[0].is_error is False
    assert c[1].thinking == (Text("t"),)
    assert c[1].thinking_binding is None
    assert c.tools == (Tool("t"),)
    assert c.response_format is None


@pytest.mark.parametrize(
    "message",
    [
        SystemMessage("s"),
        UserMessage("u"),
        ToolMessage("r", "c", is_error=True),
        ToolMessage("r", "c"),
        AssistantMessage(None, [CALL], [Text("t", "s"), Redacted("r")]),
        AssistantMessage.from_parts(["a", CALL, Text("t", "s"), "b"]),
        AssistantMessage(""),
    ],
    ids=repr,
)
def test_message_dict_round_trip(message):
    d = message.to_dict()
    assert d["role"] == message.role
    json.dumps(d)  # JSON-ready
    back = message_from_dict(d)
    assert type(back) is type(message)
    assert back == message
    assert message_from_dict(json.loads(json.dumps(d))) == message


def test_bound_message_dict_round_trip_keeps_binding():
    c = rich_conversation()
    message = c[2]
    assert message.thinking_binding is not None
    back = message_from_dict(message.to_dict())
    assert back.thinking_binding == message.thinking_binding
    assert back == message


def test_message_from_dict_with_edited_turn_keeps_stale_binding_which_no_longer_holds():
    c = rich_conversation()
    d = c[2].to_dict()
    d["parts"][1]["text"] = "Let me check again."
    edited = message_from_dict(d)
    assert edited.thinking_binding == c[2].thinking_binding
    ms = list(c)
    ms[2] = edited
    assert c.with_messages(ms).replay_report(ORIGIN)[0].reason == Reason.TURN_CHANGED


def test_edited_history_in_a_stored_file_is_prefix_changed():
    c = rich_conversation()
    doc = json.loads(c.to_json())
    doc["messages"][0]["content"] = "q (edited on disk)"
    loaded = Conversation.from_json(json.dumps(doc))
    assert [e.reason for e in loaded.replay_report(ORIGIN)][:2] == [Reason.PREFIX_CHANGED, Reason.PREFIX_CHANGED]


def test_stored_tools_or_format_edited_is_prefix_changed():
    c = rich_conversation()
    doc = json.loads(c.to_json())
    doc["tools"][1]["description"] = "changed"
    assert Conversation.from_json(json.dumps(doc)).replay_report(ORIGIN)[0].reason == Reason.PREFIX_CHANGED
    doc = json.loads(c.to_json())
    doc["response_format"] = {"type": "json_object"}
    assert Conversation.from_json(json.dumps(doc)).replay_report(ORIGIN)[0].reason == Reason.PREFIX_CHANGED


def test_stored_json_values_reordered_keep_the_binding():
    # A database that reorders keys and respells numbers (PostgreSQL jsonb) changes nothing.
    c = rich_conversation()
    doc = json.loads(c.to_json())
    for part in doc["messages"][2]["parts"]:
        if part["type"] == "tool_call":
            part["arguments"] = dict(reversed(list(part["arguments"].items())))
            part["arguments"]["n"][1] = 2.50
            part["arguments"]["n"][0] = 1.0
    doc["response_format"] = dict(reversed(list(doc["response_format"].items())))
    doc["tools"][0]["parameters"] = dict(reversed(list(doc["tools"][0]["parameters"].items())))
    loaded = Conversation.from_json(json.dumps(doc, sort_keys=True))
    assert [e.reason for e in loaded.replay_report(ORIGIN)] == [e.reason for e in c.replay_report(ORIGIN)]


# -- what from_json refuses --------------------------------------------------------------------


def edited_doc(edit) -> str:
    doc = json.loads(rich_conversation().to_json())
    edit(doc)
    return json.dumps(doc)


def refuse(text, path_start: str) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        Conversation.from_json(text)
    assert isinstance(info.value, ValueError)
    assert info.value.path is not None
    assert info.value.path.startswith(path_start), info.value.path
    return info.value


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "not json",
        "[]",
        "null",
        '{"format": "thinkseal.conversation", "version": 1, "messages": []',
        b"\xff\xfe\x00garbage",
        '{"format": "thinkseal.conversation", "version": 1, "messages": [], }',
    ],
)
def test_invalid_json(text):
    refuse(text, "$")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_literals_are_refused(literal):
    text = json.dumps({"format": "thinkseal.conversation", "version": 1, "messages": []})[:-1] + f', "x": {literal}}}'
    err = refuse(text, "$")
    assert literal.lstrip("-") in str(err)


def test_non_finite_literal_inside_arguments_is_refused():
    text = edited_doc(lambda d: d["messages"][2]["parts"][2]["arguments"].update(n="__X__")).replace('"__X__"', "NaN")
    refuse(text, "$")


@pytest.mark.parametrize("value", [None, 1, "x", [], 1.5])
def test_from_json_refuses_non_text(value):
    with pytest.raises(ValidationError):
        Conversation.from_json(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda d: d.pop("format"), "$.format"),
        (lambda d: d.update(format="other"), "$.format"),
        (lambda d: d.update(format=1), "$.format"),
        (lambda d: d.update(version=3), "$.version"),
        (lambda d: d.update(version=0), "$.version"),
        (lambda d: d.update(version="1"), "$.version"),
        (lambda d: d.update(version=1.0), "$.version"),
        pytest.param(lambda d: d.update(version=True), "$.version", id="version-true-is-not-an-int"),
        (lambda d: d.pop("messages"), "$.messages"),
        (lambda d: d.update(messages={}), "$.messages"),
        (lambda d: d.update(tools={}), "$.tools"),
        (lambda d: d.update(response_format="json"), "$.response_format"),
        (lambda d: d.update(response_format=[]), "$.response_format"),
        (lambda d: d["messages"].__setitem__(0, "system"), "$.messages[0]"),
        (lambda d: d["messages"][0].pop("role"), "$.messages[0].role"),
        (lambda d: d["messages"][0].update(role="developer"), "$.messages[0].role"),
        (lambda d: d["messages"][0].update(role=None), "$.messages[0].role"),
        (lambda d: d["messages"][0].update(content=5), "$.messages[0].content"),
        (lambda d: d["messages"][0].update(content=""), "$.messages[0]"),
        (lambda d: d["messages"][0].pop("content"), "$.messages[0].content"),
        (lambda d: d["messages"][3].update(is_error="yes"), "$.messages[3].is_error"),
        (lambda d: d["messages"][3].update(is_error=0), "$.messages[3].is_error"),
        (lambda d: d["messages"][3].update(tool_call_id=7), "$.messages[3].tool_call_id"),
        (lambda d: d["messages"][3].pop("tool_call_id"), "$.messages[3].tool_call_id"),
        (lambda d: d["messages"][2].update(parts="text"), "$.messages[2].parts"),
        (lambda d: d["messages"][2].pop("parts"), "$.messages[2].parts"),
        (lambda d: d["messages"][2]["parts"].__setitem__(1, "text"), "$.messages[2].parts[1]"),
        (lambda d: d["messages"][2]["parts"][1].update(type="image"), "$.messages[2].parts[1].type"),
        (lambda d: d["messages"][2]["parts"][1].pop("type"), "$.messages[2].parts[1].type"),
        (lambda d: d["messages"][2]["parts"][1].update(text=None), "$.messages[2].parts[1].text"),
        (lambda d: d["messages"][2]["parts"][0].update(signature=5), "$.messages[2].parts[0].signature"),
        (lambda d: d["messages"][2]["parts"][0].update(text="", signature=None), "$.messages[2]"),
        (lambda d: d["messages"][2]["parts"][2].update(arguments=[1]), "$.messages[2].parts[2].arguments"),
        (lambda d: d["messages"][2]["parts"][2].update(arguments="{}"), "$.messages[2].parts[2].arguments"),
        (lambda d: d["messages"][2]["parts"][2].update(id=""), "$.messages[2]"),
        (lambda d: d["messages"][2]["parts"][3].update(data=""), "$.messages[2]"),
        (lambda d: d["messages"][2]["parts"][3].pop("data"), "$.messages[2].parts[3].data"),
        (lambda d: d["messages"][2].update(binding="thinkseal-binding/garbage"), "$.messages[2]"),
        (lambda d: d["messages"][2].update(binding=""), "$.messages[2]"),
        (lambda d: d["messages"][2].update(binding=5), "$.messages[2].binding"),
        (lambda d: d["messages"][2].update(binding={"origin": "x"}), "$.messages[2].binding"),
        (lambda d: d["tools"].__setitem__(0, "tool"), "$.tools[0]"),
        (lambda d: d["tools"][0].update(name=5), "$.tools[0].name"),
        (lambda d: d["tools"][0].pop("name"), "$.tools[0].name"),
        (lambda d: d["tools"][0].update(parameters=[]), "$.tools[0].parameters"),
        (lambda d: d["tools"][1].update(description=None), "$.tools[1].description"),
    ],
)
def test_malformed_document_names_the_path(edit, path):
    refuse(edited_doc(edit), path)


def test_bad_binding_text_mentions_binding():
    err = refuse(edited_doc(lambda d: d["messages"][2].update(binding="thinkseal-binding/1;x")), "$.messages[2]")
    assert "binding" in str(err).lower()


def test_huge_binding_version_is_a_validation_error():
    def edit(d):
        b = d["messages"][2]["binding"]
        d["messages"][2]["binding"] = "thinkseal-binding/" + "9" * 5000 + b[b.index(";") :]

    refuse(edited_doc(edit), "$.messages[2]")


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        pytest.param(lambda d: d["tools"][1].update(name=""), "$.tools[1]", id="blank-name"),
        pytest.param(lambda d: d["tools"][1].update(name="\ud800"), "$.tools[1]", id="surrogate-name"),
        pytest.param(lambda d: d["tools"][0].update(parameters={"\ud800": 1}), "$.tools[0]", id="surrogate-key"),
    ],
)
def test_bad_tool_values_name_the_tool(edit, path):
    # Message errors are reported under $.messages[i]; tool errors should be under $.tools[i].
    refuse(edited_doc(edit), path)


def test_bad_response_format_value_names_the_field():
    err = refuse(edited_doc(lambda d: d.update(response_format={"schema": {}})), "")
    assert "response_format" in (err.path or "")


def test_lone_surrogate_escapes_are_refused():
    text = edited_doc(lambda d: d["messages"][0].update(content="__X__")).replace('"__X__"', '"\\ud800"')
    refuse(text, "$.messages[0]")
    text = edited_doc(lambda d: d["messages"][2]["parts"][2]["arguments"].update(k="__X__")).replace(
        '"__X__"', '"\\udfff"'
    )
    refuse(text, "$.messages[2]")


def test_deeply_nested_document_is_refused_cleanly():
    deep = "[" * 100_000 + "]" * 100_000
    refuse('{"format": "thinkseal.conversation", "version": 1, "messages": ' + deep + "}", "$")


def test_huge_integer_literal_is_refused_cleanly():
    refuse('{"format": "thinkseal.conversation", "version": 1' + "0" * 5000 + ', "messages": []}', "$")


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ("user", "$"),
        ({}, "$.role"),
        ({"role": "user"}, "$.content"),
        ({"role": "robot", "content": "x"}, "$.role"),
        ({"role": "assistant", "parts": [{"type": "video"}]}, "$.parts[0].type"),
        ({"role": "assistant", "parts": [], "binding": "nope"}, "$"),
        ({"role": "tool", "content": "x", "tool_call_id": "c", "is_error": None}, "$.is_error"),
    ],
)
def test_message_from_dict_refuses(data, path):
    with pytest.raises(ValidationError) as info:
        message_from_dict(data)
    assert (info.value.path or "").startswith(path)


def test_message_from_dict_is_exported():
    assert "message_from_dict" in thinkseal.__all__
    assert thinkseal.message_from_dict is message_from_dict


def test_message_to_dict_is_the_exported_twin_of_to_dict():
    assert "message_to_dict" in thinkseal.__all__
    assert thinkseal.message_to_dict is message_to_dict
    for message in rich_conversation():
        assert message_to_dict(message) == message.to_dict()
        assert message_from_dict(message_to_dict(message)) == message


@pytest.mark.parametrize("value", [None, "user", {"role": "user", "content": "x"}, Tool("t")])
def test_message_to_dict_refuses_what_is_not_a_message(value):
    with pytest.raises(ValidationError) as info:
        message_to_dict(value)
    assert info.value.path == "message"


def test_a_key_repeated_in_one_object_is_refused() -> None:
    # Python would keep the last value, other readers the first: the file has no single meaning.
    text = (
        '{"format": "thinkseal.conversation", "version": 2, '
        '"messages": [{"role": "user", "content": "a", "content": "b"}]}'
    )
    with pytest.raises(ValidationError, match="'content' appears twice"):
        Conversation.from_json(text)
    with pytest.raises(ValidationError, match="'version' appears twice"):
        Conversation.from_json('{"format": "thinkseal.conversation", "version": 2, "version": 1, "messages": []}')
