"""pydantic-ai ModelMessage lists built with the installed library: conversion
both ways, the ThinkingPart mapping by provider, and the imported history
replaying through the adapters once rebound."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from pydantic_ai.messages import (
    BinaryContent,
    CachePoint,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    RetryFeedbackPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Native,
    Origin,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.interop import pydantic_ai as ts_pydantic_ai

from .conftest import fixture


def normalised(messages: list[ModelMessage]) -> Any:
    """The messages as JSON without the times pydantic-ai stamps on creation."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "timestamp"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))


def claude_history() -> list[ModelMessage]:
    reply = fixture("anthropic", "message_interleaved.json")["content"]
    return [
        ModelRequest(
            parts=[
                SystemPromptPart("Be brief."),
                UserPromptPart(
                    [
                        "Weather and time in Paris?",
                        ImageUrl("https://example.com/p.jpg"),
                        BinaryContent(b"%PDF-1.7", media_type="application/pdf"),
                        CachePoint(),
                    ]
                ),
            ]
        ),
        ModelResponse(
            parts=[
                ThinkingPart(reply[0]["thinking"], signature=reply[0]["signature"], provider_name="anthropic"),
                TextPart(reply[1]["text"]),
                ToolCallPart("get_weather", reply[2]["input"], reply[2]["id"]),
                ThinkingPart("", id="redacted_thinking", signature=reply[3]["data"], provider_name="anthropic"),
                ThinkingPart("", signature=reply[4]["signature"], provider_name="anthropic"),
                ToolCallPart("get_time", reply[5]["input"], reply[5]["id"]),
            ]
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("get_weather", "18°C", reply[2]["id"]),
                ToolReturnPart("get_time", "clock unavailable", reply[5]["id"], outcome="failed"),
            ]
        ),
    ]


def test_a_claude_history_converts_both_ways() -> None:
    messages = claude_history()
    conv = ts_pydantic_ai.import_messages(messages)
    reply = fixture("anthropic", "message_interleaved.json")["content"]
    assert conv[1] == UserMessage(
        ["Weather and time in Paris?", Image(url="https://example.com/p.jpg"), Document(b"%PDF-1.7"), CacheBreakpoint()]
    )
    turn = conv[2]
    assert isinstance(turn, AssistantMessage)
    assert turn.parts == (
        ThinkingBlock.Text(reply[0]["thinking"], reply[0]["signature"]),
        reply[1]["text"],
        ToolCall(reply[2]["id"], "get_weather", reply[2]["input"]),
        ThinkingBlock.Redacted(reply[3]["data"]),
        ThinkingBlock.Text("", reply[4]["signature"]),
        ToolCall(reply[5]["id"], "get_time", {"city": "Paris"}),
    )
    assert turn.thinking_binding is None
    assert conv[4] == ToolMessage("clock unavailable", reply[5]["id"], is_error=True)
    assert normalised(ts_pydantic_ai.export_messages(conv)) == normalised(messages)


def test_the_imported_claude_history_replays_signed_thinking_once_rebound() -> None:
    conv = ts_pydantic_ai.import_messages(claude_history())
    adapter = thinkseal.provider("anthropic")
    assert adapter.prepare(conv, model="claude-sonnet-4-5", max_tokens=4096).report[0].reason == "unbound"
    req = adapter.prepare(
        conv.rebind(Origin("anthropic", "claude-sonnet-4-5")), model="claude-sonnet-4-5", max_tokens=4096
    )
    assert req.report[0].kept
    assert req.body["messages"][1]["content"] == fixture("anthropic", "message_interleaved.json")["content"]


def test_openai_reasoning_parts_become_the_responses_adapter_item() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Weather?")]),
        ModelResponse(
            parts=[
                ThinkingPart("Look it up.", id="rs_1", signature="gAAAA", provider_name="openai"),
                ThinkingPart("Then answer.", id="rs_1", provider_name="openai"),
                ToolCallPart("get_weather", '{"city":"Paris"}', "call_1", id="fc_1", provider_name="openai"),
            ]
        ),
        ModelRequest(parts=[ToolReturnPart("get_weather", "18°C", "call_1")]),
    ]
    conv = ts_pydantic_ai.import_messages(messages)
    turn = conv[1]
    assert isinstance(turn, AssistantMessage)
    item = {
        "encrypted_content": "gAAAA",
        "id": "rs_1",
        "summary": [{"text": "Look it up.", "type": "summary_text"}, {"text": "Then answer.", "type": "summary_text"}],
        "type": "reasoning",
    }
    assert turn.thinking == (
        ThinkingBlock.Text("Look it up.\n\nThen answer."),
        ThinkingBlock.Opaque("openai-responses", json.dumps(item, separators=(",", ":"), sort_keys=True)),
    )
    req = thinkseal.provider("openai-responses").prepare(
        conv.rebind(Origin("openai-responses", "o4-mini")), model="o4-mini"
    )
    assert req.report[0].kept
    assert [i for i in req.body["input"] if i.get("type") == "reasoning"] == [item]
    # The fc_ id is not kept (the adapter never sends it back); everything else round-trips.
    exported = ts_pydantic_ai.export_messages(conv)
    expected = normalised(messages)
    expected[1]["parts"][2].update(id=None, provider_name=None, args={"city": "Paris"})
    assert normalised(exported) == expected


def test_other_parts_are_kept_losslessly() -> None:
    native_call = NativeToolCallPart("web_search", {"query": "paris"}, "srv_1", provider_name="anthropic")
    foreign = ThinkingPart("gemini thought", signature="c2ln", provider_name="google-gla")
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[
                UserPromptPart(
                    ["Hi", BinaryContent(b"RIFF", media_type="audio/wav"), DocumentUrl("https://example.com/r.pdf")]
                )
            ]
        ),
        ModelResponse(parts=[foreign, native_call, TextPart("Hello.")]),
        ModelRequest(parts=[UserPromptPart("Bye")]),
    ]
    conv = ts_pydantic_ai.import_messages(messages)
    turn = conv[1]
    assert isinstance(turn, AssistantMessage)
    assert isinstance(turn.thinking[0], ThinkingBlock.Opaque)
    assert turn.thinking[0].provider == "pydantic-ai"
    assert isinstance(turn.parts[1], Native)
    assert conv[0].parts[1] == Native(*conv[0].parts[1]._args())  # type: ignore[union-attr]
    assert normalised(ts_pydantic_ai.export_messages(conv)) == normalised(messages)
    # No adapter sends a pydantic-ai block: Gemini gets the text only.
    body = thinkseal.provider("anthropic").prepare(conv, model="claude-sonnet-4-5", max_tokens=1024).body
    assert body["messages"][1]["content"] == [{"type": "text", "text": "Hello."}]


def test_tool_returns_that_are_not_text_are_kept_as_json() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Weather?")]),
        ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("get_weather", {"temp": 18, "unit": "C"}, "c1")]),
    ]
    conv = ts_pydantic_ai.import_messages(messages)
    tool = conv[2]
    assert isinstance(tool, ToolMessage)
    assert tool.text == ""
    assert tool.parts[0].text == '{"temp":18,"unit":"C"}'  # type: ignore[union-attr]
    assert normalised(ts_pydantic_ai.export_messages(conv)) == normalised(messages)
    body = thinkseal.provider("deepseek").prepare(conv, model="deepseek-chat").body
    assert body["messages"][2]["content"] == '{"temp":18,"unit":"C"}'


def test_retries_import_as_errors_and_user_text() -> None:
    feedback = RetryFeedbackPart.__new__(RetryFeedbackPart)
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Weather?")]),
        ModelResponse(parts=[ToolCallPart("get_weather", {}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("get_weather", "city is required", "c1", outcome="retried")]),
    ]
    conv = ts_pydantic_ai.import_messages(messages)
    assert conv[2] == ToolMessage("city is required", "c1", is_error=True)
    assert feedback is not None


def test_bad_input_names_the_part() -> None:
    with pytest.raises(ValidationError) as info:
        ts_pydantic_ai.import_messages([ModelRequest(parts=[UserPromptPart("ok")]), "not a message"])  # type: ignore[list-item]
    assert info.value.path == "messages[1]"
    with pytest.raises(ValidationError) as info:
        ts_pydantic_ai.import_messages([ModelResponse(parts=[ToolCallPart("f", "{oops", "c1")])])
    assert info.value.path == "messages[0].parts[0].args"
    with pytest.raises(ValidationError) as info:
        ts_pydantic_ai.import_messages("text")  # type: ignore[arg-type]
    assert info.value.path == "messages"


def test_export_refuses_what_pydantic_ai_cannot_hold() -> None:
    orphan = Conversation([UserMessage("q"), ToolMessage("r", "nowhere")])
    with pytest.raises(ValidationError) as info:
        ts_pydantic_ai.export_messages(orphan)
    assert info.value.path == "messages[1].tool_call_id"
    foreign = Conversation([UserMessage("q"), AssistantMessage("a", thinking=[ThinkingBlock.Opaque("gemini", "x")])])
    with pytest.raises(ValidationError) as info:
        ts_pydantic_ai.export_messages(foreign)
    assert info.value.path == "messages[1].parts[0]"
    system = Conversation([SystemMessage(["a", CacheBreakpoint()])])
    with pytest.raises(ValidationError) as info:
        ts_pydantic_ai.export_messages(system)
    assert info.value.path == "messages[0].content"


def test_dataclass_replace_keeps_working_on_exported_messages() -> None:
    exported = ts_pydantic_ai.export_messages(Conversation([UserMessage("q"), AssistantMessage("a")]))
    assert isinstance(dataclasses.replace(exported[1]), ModelResponse)
