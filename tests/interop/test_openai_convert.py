"""OpenAI chat messages and Responses input items: real-shaped histories
convert exactly both ways, an imported Responses history replays its
reasoning items through the openai-responses adapter once rebound, and what a
format cannot hold is refused by name."""

from __future__ import annotations

import base64
from typing import Any

import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Image,
    Origin,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.interop import openai as ts_openai

from .conftest import fixture

PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG fake").decode()
PDF = "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.7").decode()
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def chat_history() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather here?"},
                {"type": "image_url", "image_url": {"url": PNG}},
                {"type": "file", "file": {"filename": "r.pdf", "file_data": PDF}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "I need the weather first.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "[tool error] timeout"},
        {"role": "assistant", "content": "Try again later.", "reasoning_content": "The tool failed."},
        {"role": "user", "content": "Thanks"},
    ]


def test_a_chat_history_exports_back_exactly() -> None:
    stored = chat_history()
    conv = ts_openai.import_chat(stored, tools=TOOLS, response_format={"type": "json_object"})
    assert ts_openai.export_chat(conv) == {
        "messages": stored,
        "tools": TOOLS,
        "response_format": {"type": "json_object"},
    }
    assert conv[1].parts[1] == Image(b"\x89PNG fake", "image/png")
    assert conv[2] == AssistantMessage(
        None, [ToolCall("call_1", "get_weather", {"city": "Paris"})], [ThinkingBlock.Text("I need the weather first.")]
    )
    assert conv[3] == ToolMessage("timeout", "call_1", is_error=True)
    reasoning = ts_openai.export_chat(conv, reasoning_field="reasoning")["messages"][4]
    assert reasoning == {"role": "assistant", "content": "Try again later.", "reasoning": "The tool failed."}


def langchain_history() -> list[dict[str, Any]]:
    """Chat dicts as LangChain's ``convert_to_openai_messages`` writes them: a
    tool result carries the tool's ``name``, and string content."""
    return [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "tool_calls": [
                {"type": "function", "id": "1", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
            ],
            "content": "",
        },
        {"role": "tool", "name": "get_weather", "content": '{"temp": 18}', "tool_call_id": "1"},
        {"role": "assistant", "content": "It is 18°C."},
    ]


def test_a_langchain_style_history_imports_and_exports_what_it_can() -> None:
    stored = langchain_history()
    conv = ts_openai.import_chat(stored)
    assert conv[2] == ToolMessage('{"temp": 18}', "1")
    exported = ts_openai.export_chat(conv)["messages"]
    # The tool's name is the call's (thinkseal keeps it there), and the empty content is written as such.
    expected = langchain_history()
    del expected[2]["name"]
    assert exported == expected
    assert ts_openai.import_chat(exported) == conv


def test_a_tool_result_named_for_another_tool_is_refused() -> None:
    stored = langchain_history()
    stored[2]["name"] = "get_time"
    with pytest.raises(ValidationError) as info:
        ts_openai.import_chat(stored)
    assert info.value.path == "messages[2].name"
    assert "'get_weather'" in str(info.value)


def test_a_chat_completion_reply_imports_from_its_model_dump() -> None:
    message = fixture("openai", "chat_completion_object.json")["choices"][0]["message"]
    conv = ts_openai.import_chat([{"role": "user", "content": "Describe"}, message])
    assert conv[1] == AssistantMessage(message["content"])


def test_openrouter_reasoning_details_replay_through_the_openrouter_adapter() -> None:
    details = [
        {"type": "reasoning.text", "text": "Think.", "signature": "sig-1", "format": "anthropic-claude-v1", "index": 0}
    ]
    stored = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello.", "reasoning": "Think.", "reasoning_details": details},
        {"role": "user", "content": "Again"},
    ]
    conv = ts_openai.import_chat(stored)
    assert ts_openai.export_chat(conv, reasoning_field="reasoning")["messages"] == stored
    origin = Origin("openrouter", "anthropic/claude-sonnet-4.5")
    adapter = thinkseal.provider("openrouter")
    assert "reasoning_details" not in adapter.prepare(conv, model=origin.model).body["messages"][1]
    kept = adapter.prepare(conv.rebind(origin), model=origin.model)
    assert kept.report[0].kept
    assert kept.body["messages"][1]["reasoning_details"] == details


def responses_history() -> list[dict[str, Any]]:
    encrypted = fixture("openai-responses", "cookbook_encrypted_reasoning.json")
    call = fixture("openai-responses", "cookbook_function_call.output.json")[1]
    return [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Weather in Paris?"},
                {"type": "input_file", "filename": "r.pdf", "file_data": PDF},
                {"type": "input_image", "image_url": "https://example.com/p.jpg", "detail": "auto"},
            ],
        },
        {k: v for k, v in encrypted.items() if v is not None},
        {"type": "function_call", "call_id": call["call_id"], "name": call["name"], "arguments": call["arguments"]},
        {"type": "function_call_output", "call_id": call["call_id"], "output": "18°C"},
        {
            "type": "reasoning",
            "id": "rs_2",
            "summary": [{"type": "summary_text", "text": "Report it."}],
            "encrypted_content": "gAAAA-2",
        },
        {"role": "assistant", "content": "Sunny, 18°C."},
        {"role": "user", "content": "Thanks"},
    ]


def test_a_responses_history_exports_back_exactly() -> None:
    items = responses_history()
    text = {"format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}, "strict": True}}
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
    conv = ts_openai.import_responses(items, tools=tools, text=text)
    assert ts_openai.export_responses(conv) == {"input": items, "tools": tools, "text": text}
    assert conv.response_format == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": {"type": "object"}, "strict": True},
    }
    turn = conv[4]
    assert isinstance(turn, AssistantMessage)
    assert turn.thinking[0] == ThinkingBlock.Text("Report it.")
    assert turn.thinking[1].provider == "openai-responses"  # type: ignore[union-attr]


def test_output_items_pasted_as_input_keep_what_the_adapter_sends() -> None:
    output = fixture("openai-responses", "cookbook_function_call.output.json")
    conv = ts_openai.import_responses([{"role": "user", "content": "Weather?"}, *output])
    turn = conv[1]
    assert isinstance(turn, AssistantMessage)
    assert turn.tool_calls[0].id == output[1]["call_id"]
    assert ts_openai.export_responses(conv)["input"][1:] == [
        {"id": output[0]["id"], "summary": [], "type": "reasoning"},
        {
            "type": "function_call",
            "call_id": output[1]["call_id"],
            "name": "get_weather",
            "arguments": '{"latitude":48.8566,"longitude":2.3522}',
        },
    ]


def test_an_imported_responses_history_replays_its_reasoning_once_rebound() -> None:
    items = responses_history()[:5]
    conv = ts_openai.import_responses(items)
    adapter = thinkseal.provider("openai-responses")
    unbound = adapter.prepare(conv, model="o4-mini")
    assert [(e.index, e.reason) for e in unbound.report] == [(2, "unbound")]
    assert all(i.get("type") != "reasoning" for i in unbound.body["input"])
    kept = adapter.prepare(conv.rebind(Origin("openai-responses", "o4-mini")), model="o4-mini")
    assert kept.report[0].kept
    reasoning = [i for i in kept.body["input"] if i.get("type") == "reasoning"]
    assert reasoning == [items[2]]


def test_responses_instructions_become_the_leading_system_message() -> None:
    conv = ts_openai.import_responses([{"role": "user", "content": "Hi"}], instructions="Be brief.")
    assert list(conv) == [SystemMessage("Be brief."), UserMessage("Hi")]


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (
            lambda: ts_openai.import_chat(
                [
                    {
                        "role": "assistant",
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{not json"}}],
                    }
                ]
            ),
            "messages[0].tool_calls[0].function.arguments",
        ),
        (lambda: ts_openai.import_chat([{"role": "user", "content": "x", "name": "bob"}]), "messages[0].name"),
        (lambda: ts_openai.import_chat([{"role": "tool", "content": "x"}]), "messages[0].tool_call_id"),
        (
            lambda: ts_openai.import_chat(
                [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@"}}]}]
            ),
            "messages[0].content[0].image_url.url",
        ),
        (
            lambda: ts_openai.import_responses([{"type": "function_call", "call_id": "c", "name": "f"}]),
            "input[0].arguments",
        ),
        (lambda: ts_openai.import_responses([{"type": "function_call_output", "output": "x"}]), "input[0].call_id"),
        (
            lambda: ts_openai.import_responses(
                [{"type": "reasoning", "id": "r", "summary": [{"type": "summary_text"}]}]
            ),
            "input[0].summary[0].text",
        ),
    ],
)
def test_bad_input_names_the_field(call: Any, path: str) -> None:
    with pytest.raises(ValidationError) as info:
        call()
    assert info.value.path is not None
    assert info.value.path.startswith(path), info.value.path


@pytest.mark.parametrize(
    ("message", "path"),
    [
        (AssistantMessage("a", thinking=[ThinkingBlock.Text("t", signature="s")]), "messages[1].parts[0]"),
        (AssistantMessage("a", thinking=[ThinkingBlock.Redacted("r")]), "messages[1].parts[0]"),
        (AssistantMessage.from_parts([ToolCall("c", "f", {}), "after"]), "messages[1].parts[1]"),
        (AssistantMessage.from_parts(["text", ThinkingBlock.Text("late")]), "messages[1].parts[1]"),
        (ToolMessage("[tool error] not really", "c"), "messages[1].content"),
    ],
)
def test_chat_export_refuses_what_it_cannot_hold(message: Any, path: str) -> None:
    with pytest.raises(ValidationError) as info:
        ts_openai.export_chat(Conversation([UserMessage("q"), message]))
    assert info.value.path == path


@pytest.mark.parametrize(
    ("message", "path"),
    [
        (AssistantMessage("a", thinking=[ThinkingBlock.Text("plain reasoning")]), "messages[1].parts[0]"),
        (AssistantMessage("a", thinking=[ThinkingBlock.Text("t", signature="s")]), "messages[1].parts[0]"),
        (UserMessage(["x", thinkseal.CacheBreakpoint()]), "messages[1].content[1]"),
        (UserMessage([thinkseal.Document(text="notes")]), "messages[1].content[0]"),
    ],
)
def test_responses_export_refuses_what_it_cannot_hold(message: Any, path: str) -> None:
    with pytest.raises(ValidationError) as info:
        ts_openai.export_responses(Conversation([UserMessage("q"), message]))
    assert info.value.path == path
