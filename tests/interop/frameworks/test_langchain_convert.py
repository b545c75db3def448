"""LangChain messages to a ``Conversation`` and back
(``thinkseal.interop.langchain``): every part kept in order, sealed data
included, through ``AIMessage`` and LangChain's own dump and load; the shapes
langchain-anthropic writes for Claude read as Claude's blocks; malformed
messages refused with thinkseal errors naming the field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)

import thinkseal
from thinkseal import AssistantMessage, Conversation, Image, Native, Reply, ThinkingBlock, ToolCall, Usage, UserMessage
from thinkseal._reply import ReplyInfo  # how an adapter builds a Reply (no public constructor for the info)
from thinkseal.interop.langchain import export_message, export_messages, import_messages

CALL_1 = ToolCall("toolu_1", "lookup", {"q": 1})
CALL_2 = ToolCall("toolu_2", "lookup", {"q": 2})
RESPONSES_ITEM = '{"encrypted_content":"gAAA","id":"rs_1","summary":[],"type":"reasoning"}'
TURNS = [
    # Claude's interleaved turn: order is part of what Claude verifies.
    AssistantMessage.from_parts(
        [
            ThinkingBlock.Text("First.", "c2ln"),
            "Let me look.",
            CALL_1,
            ThinkingBlock.Redacted("cmVk"),
            ThinkingBlock.Text("", "b21pdHRlZA=="),
            CALL_2,
        ]
    ),
    AssistantMessage("It is 1.", thinking=[ThinkingBlock.Text("plain"), ThinkingBlock.Opaque("openrouter", '{"a":1}')]),
    AssistantMessage(None, [CALL_1], thinking=[ThinkingBlock.Opaque("openai-responses", RESPONSES_ITEM)]),
    AssistantMessage.from_parts(["Cited.", Native("anthropic", '{"type":"web_search_tool_result","x":[1]}', "t")]),
    AssistantMessage("Just text."),
    AssistantMessage(None, [CALL_1, CALL_2]),
]


@pytest.mark.parametrize("turn", TURNS)
def test_an_assistant_turn_round_trips_through_ai_message_and_langchains_dump(turn: AssistantMessage) -> None:
    message = export_message(turn)
    assert import_messages([message]) == Conversation([turn])
    restored = messages_from_dict(json.loads(json.dumps(messages_to_dict([message]))))
    assert import_messages(restored) == Conversation([turn])


def test_claudes_blocks_are_langchain_anthropics() -> None:
    message = export_message(TURNS[0])
    assert message.content == [
        {"type": "thinking", "thinking": "First.", "signature": "c2ln"},
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": 1}},
        {"type": "redacted_thinking", "data": "cmVk"},
        {"type": "thinking", "thinking": "", "signature": "b21pdHRlZA=="},
    ]  # the last call follows nothing: it is in tool_calls only, as langchain-anthropic reads it
    assert [c["id"] for c in message.tool_calls] == ["toolu_1", "toolu_2"]
    assert export_message(TURNS[4]).content == "Just text."
    assert export_message(TURNS[5]).content == []


def test_a_message_as_chat_anthropic_writes_it_imports_as_claudes_turn() -> None:
    """ChatAnthropic's reply (every block, tool_use with its input) and its
    aggregated stream (blocks with ``index``, tool_use with partial_json)."""
    blocks: list[Any] = [
        {"type": "thinking", "thinking": "First.", "signature": "c2ln"},
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": 1}},
    ]
    whole = AIMessage(content=blocks, tool_calls=[{"id": "toolu_1", "name": "lookup", "args": {"q": 1}}])
    expected = AssistantMessage.from_parts([ThinkingBlock.Text("First.", "c2ln"), "Let me look.", CALL_1])
    assert import_messages([whole])[0] == expected
    streamed = AIMessageChunk(
        content=[
            {**blocks[1], "index": 1},
            {**blocks[0], "index": 0},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "lookup",
                "input": {},
                "partial_json": '{"q": 1}',
                "index": 2,
            },
        ],
        tool_call_chunks=[{"id": "toolu_1", "name": "lookup", "args": '{"q": 1}', "index": 2}],
    )
    assert import_messages([streamed])[0] == expected


def test_other_shapes_langchain_uses_for_reasoning() -> None:
    v1 = AIMessage(content=[{"type": "reasoning", "reasoning": "Hm.", "extras": {"signature": "c2ln"}}, "Yes."])
    assert import_messages([v1])[0] == AssistantMessage("Yes.", thinking=[ThinkingBlock.Text("Hm.", "c2ln")])
    deepseek = AIMessage(content="Yes.", additional_kwargs={"reasoning_content": "Hm."})
    assert import_messages([deepseek])[0] == AssistantMessage("Yes.", thinking=[ThinkingBlock.Text("Hm.")])
    wrapped = AIMessage(content=[{"type": "non_standard", "value": {"type": "redacted_thinking", "data": "cmVk"}}, "A"])
    assert import_messages([wrapped])[0] == AssistantMessage("A", thinking=[ThinkingBlock.Redacted("cmVk")])


def test_a_whole_history_round_trips() -> None:
    conv = Conversation(
        [
            thinkseal.SystemMessage("Be brief."),
            UserMessage(["Look:", Image(url="https://example.com/a.png")]),
            TURNS[0],
            thinkseal.ToolMessage("1", "toolu_1"),
            thinkseal.ToolMessage("failed", "toolu_2", is_error=True),
            UserMessage(["Inline:", Image(b"\x89PNG", "image/png")]),
            TURNS[1],
        ]
    )
    messages = export_messages(conv)
    assert [type(m) for m in messages] == [
        SystemMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
        ToolMessage,
        HumanMessage,
        AIMessage,
    ]
    assert isinstance(messages[4], ToolMessage)
    assert messages[4].status == "error"
    assert import_messages(messages) == conv
    assert import_messages(messages_from_dict(json.loads(json.dumps(messages_to_dict(messages))))) == conv


def test_an_export_refuses_what_langchain_cannot_hold() -> None:
    conv = Conversation([UserMessage(["Read:", thinkseal.Document(url="https://example.com/a.pdf")])])
    with pytest.raises(thinkseal.ValidationError, match=r"messages\[0\]\.content\[1\]"):
        export_messages(conv)


@pytest.mark.parametrize(
    ("messages", "path"),
    [
        ("hello", "messages"),
        ([{"role": "user", "content": "hi"}], r"messages\[0\]"),
        ([ChatMessage(content="hi", role="critic")], r"messages\[0\]"),
        ([HumanMessage("")], r"messages\[0\]"),
        ([HumanMessage([{"type": "audio", "base64": "AAAA"}])], r"messages\[0\]\.content\[0\]"),
        ([HumanMessage([{"text": "no type"}])], r"messages\[0\]\.content\[0\]\.type"),
        ([AIMessage(content=[{"type": "thinking", "thinking": "x", "signature": 5}])], r"messages\[0\]\.content\[0\]"),
        ([AIMessage(content=[{"type": "thinking", "thinking": ""}])], r"messages\[0\]\.content\[0\]"),
        ([AIMessage(content=[{"type": "redacted_thinking"}])], r"messages\[0\]\.content\[0\]\.data"),
        ([AIMessage(content=[{"type": "text", "text": "x", "citations": [1]}])], r"messages\[0\]\.content\[0\]"),
        ([AIMessage(content=[{"type": "tool_use", "name": "f", "input": {}}])], r"messages\[0\]\.content\[0\]\.id"),
        ([AIMessage(content=[{"type": "image", "url": "u"}])], r"messages\[0\]\.content\[0\]"),
        ([AIMessage(content=[{"type": "non_standard", "value": {"x": 1}}])], r"messages\[0\]\.content\[0\]"),
        (
            [AIMessage(content=[{"type": "reasoning", "extras": {"thinkseal_opaque": {"provider": "x"}}}])],
            r"messages\[0\]\.content\[0\]\.extras\.thinkseal_opaque\.data",
        ),
        (
            [AIMessage(content="", invalid_tool_calls=[{"id": "c", "name": "f", "args": "{", "error": "bad"}])],
            r"messages\[0\]\.invalid_tool_calls\[0\]",
        ),
        (
            [AIMessage(content="", tool_calls=[{"id": "c", "name": "f", "args": {"x": float("nan")}}])],
            r"messages\[0\]\.tool_calls\[0\]\.args\.x",
        ),
        ([AIMessage(content="x", additional_kwargs={"reasoning_content": 3})], r"reasoning_content"),
        ([ToolMessage("", tool_call_id="c")], r"messages\[0\]"),
    ],
)
def test_malformed_messages_are_refused_naming_the_field(messages: Any, path: str) -> None:
    with pytest.raises(thinkseal.ValidationError, match=path):
        import_messages(messages)


def test_a_tool_error_and_a_bad_status() -> None:
    error = ToolMessage("boom", tool_call_id="c1", status="error")
    assert import_messages([error])[0] == thinkseal.ToolMessage("boom", "c1", is_error=True)
    bad = ToolMessage("x", tool_call_id="c1")
    object.__setattr__(bad, "status", "maybe")
    with pytest.raises(thinkseal.ValidationError, match=r"messages\[0\]\.status"):
        import_messages([bad])


def test_a_reply_carries_usage_and_metadata() -> None:
    reply = Reply(
        TURNS[4],
        ReplyInfo("end_turn", Usage(10, 5, cache_read_tokens=3, reasoning_tokens=2), "msg_1", "claude-x"),
    )
    message = export_message(reply)
    assert message.usage_metadata == {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 15,
        "input_token_details": {"cache_read": 3},
        "output_token_details": {"reasoning": 2},
    }
    assert message.response_metadata == {"model_name": "claude-x", "stop_reason": "end_turn", "id": "msg_1"}
    with pytest.raises(thinkseal.ValidationError, match="message"):
        export_message("hi")  # type: ignore[arg-type]
