"""DeepSeek: reasoning_content in, reasoning_content back on every assistant
message of a request with tools (python/thinkseal/providers/deepseek.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Origin,
    ResponseError,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.testing import respond
from thinkseal.testing.chat import DEEPSEEK_MISSING_REASONING, ChatEmulator, Turn

from .support import check_request, fixture, sdk_create

MODEL = "deepseek-v4-pro"
WEATHER = Tool(
    "get_weather",
    "Weather of a location",
    {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)
TOOL_WIRE = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a location",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    },
}
CALL_WIRE = {
    "id": "call_00_kQ2wYd8Rk3",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"location":"Hangzhou"}'},
}


def start() -> Conversation:
    return Conversation(
        [SystemMessage("You are a weather bot."), UserMessage("How is Hangzhou today?")], tools=[WEATHER]
    )


def stream(req: thinkseal.PreparedRequest, events: list[dict[str, Any]]) -> AssistantMessage:
    acc = req.stream()
    for event in events:
        acc.feed(event)
    return acc.finish()


@pytest.fixture
def emulator() -> Iterator[ChatEmulator]:
    with ChatEmulator("deepseek") as emu:
        yield emu


def test_fixtures_parse_with_the_sdk() -> None:
    for name in ("tool_call", "final_answer"):
        ChatCompletion.model_validate(fixture("deepseek", name))
    for event in fixture("deepseek", "tool_call.stream"):
        ChatCompletionChunk.model_validate(event)


def test_full_loop_exact_body() -> None:
    p = thinkseal.provider("deepseek")
    options: dict[str, Any] = {"thinking": {"type": "enabled"}, "reasoning_effort": "high", "max_tokens": 2048}
    req = p.prepare(start(), model=MODEL, **options)
    assert check_request(req, "deepseek") == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You are a weather bot."},
            {"role": "user", "content": "How is Hangzhou today?"},
        ],
        "tools": [TOOL_WIRE],
        **options,
    }
    reply = req.receive(fixture("deepseek", "tool_call"))
    assert reply.parts == (
        ThinkingBlock.Text("The user wants the weather in Hangzhou. I should call get_weather."),
        ToolCall("call_00_kQ2wYd8Rk3", "get_weather", {"location": "Hangzhou"}),
    )
    assert reply.thinking_binding is None  # plain text: nothing to seal
    conv = start().append(reply, ToolMessage("24℃, cloudy", "call_00_kQ2wYd8Rk3"))
    req = p.prepare(conv, model=MODEL, **options)
    assert [(e.index, e.reason) for e in req.report] == [(2, "no-sealed-thinking")]
    assert check_request(req, "deepseek") == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You are a weather bot."},
            {"role": "user", "content": "How is Hangzhou today?"},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "The user wants the weather in Hangzhou. I should call get_weather.",
                "tool_calls": [CALL_WIRE],
            },
            {"role": "tool", "tool_call_id": "call_00_kQ2wYd8Rk3", "content": "24℃, cloudy"},
        ],
        "tools": [TOOL_WIRE],
        **options,
    }
    final = req.receive(fixture("deepseek", "final_answer"))
    assert final.content == "It is 24℃ and cloudy in Hangzhou."
    conv = conv.append(final, UserMessage("And tomorrow?"))
    body = check_request(p.prepare(conv, model=MODEL, **options), "deepseek")
    assert body["messages"][4] == {
        "role": "assistant",
        "content": "It is 24℃ and cloudy in Hangzhou.",
        "reasoning_content": "The tool says 24℃, cloudy. Answer briefly.",
    }


def test_streamed_loop_equals_received() -> None:
    p = thinkseal.provider("deepseek")
    req = p.prepare(start(), model=MODEL, stream=True)
    assert check_request(req, "deepseek")["stream"] is True
    streamed = stream(req, fixture("deepseek", "tool_call.stream"))
    assert streamed == req.receive(fixture("deepseek", "tool_call"))
    assert streamed.parts == req.receive(fixture("deepseek", "tool_call")).parts
    sdk_events = [ChatCompletionChunk.model_validate(e).model_dump() for e in fixture("deepseek", "tool_call.stream")]
    assert stream(req, sdk_events) == streamed
    conv = start().append(streamed, ToolMessage("24℃, cloudy", "call_00_kQ2wYd8Rk3"))
    assert p.prepare(conv, model=MODEL).body["messages"][2]["reasoning_content"] == streamed.thinking_text


def test_every_assistant_message_carries_reasoning_content_when_tools_are_sent() -> None:
    conv = start().append(
        AssistantMessage("Which city exactly?"),  # no thinking at all (another provider, or hand-written)
        UserMessage("Hangzhou"),
        AssistantMessage(None, [ToolCall("c1", "get_weather", {"location": "Hangzhou"})]),
        ToolMessage("24℃", "c1"),
    )
    body = check_request(thinkseal.provider("deepseek").prepare(conv, model=MODEL), "deepseek")
    assistants = [m for m in body["messages"] if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in assistants] == ["", ""]


def test_without_tools_only_turns_with_reasoning_carry_it() -> None:
    conv = Conversation([UserMessage("Hi")]).append(
        AssistantMessage("Hello!", thinking=[ThinkingBlock.Text("Greet back.")]),
        UserMessage("Joke?"),
        AssistantMessage("No."),
        UserMessage("Why?"),
    )
    body = check_request(thinkseal.provider("deepseek").prepare(conv, model=MODEL), "deepseek")
    assert body["messages"][1] == {"role": "assistant", "content": "Hello!", "reasoning_content": "Greet back."}
    assert body["messages"][3] == {"role": "assistant", "content": "No."}


def test_tool_call_turn_carries_reasoning_content_even_when_tools_were_removed() -> None:
    conv = start().append(AssistantMessage(None, [ToolCall("c1", "get_weather", {"location": "Hangzhou"})]))
    conv = conv.append(ToolMessage("24℃", "c1")).with_tools([])
    body = check_request(thinkseal.provider("deepseek").prepare(conv, model=MODEL), "deepseek")
    assert "tools" not in body
    assert body["messages"][2]["reasoning_content"] == ""


def test_emulator_loop_through_the_sdk(emulator: ChatEmulator) -> None:
    emulator.reply(
        Turn(reasoning="Need the weather tool.", tool_calls=[("call_0", "get_weather", {"location": "Hangzhou"})])
    )
    emulator.reply(Turn(reasoning="Got it.", content="24℃, cloudy."))
    emulator.reply(Turn(reasoning="Same tool again.", tool_calls=[("call_1", "get_weather", {"location": "Beijing"})]))
    emulator.reply(Turn(content="Beijing: 20℃."))
    client = emulator.client()
    p = thinkseal.provider("deepseek")
    conv = start()
    req = p.prepare(conv, model=MODEL, thinking={"type": "enabled"})
    conv = conv.append(req.receive(sdk_create(client, check_request(req, "deepseek")).model_dump()))
    conv = conv.append(ToolMessage("24℃, cloudy", "call_0"))
    req = p.prepare(conv, model=MODEL, thinking={"type": "enabled"}, stream=True)
    acc = req.stream()
    for event in sdk_create(client, check_request(req, "deepseek")):
        acc.feed(event.model_dump())
    conv = conv.append(acc.finish(), UserMessage("And Beijing?"))
    req = p.prepare(conv, model=MODEL, thinking={"type": "enabled"})
    conv = conv.append(req.receive(sdk_create(client, check_request(req, "deepseek")).model_dump()))
    conv = conv.append(ToolMessage("20℃", "call_1"))
    req = p.prepare(conv, model=MODEL, thinking={"type": "enabled"}, stream=True)
    acc = req.stream()
    for event in sdk_create(client, check_request(req, "deepseek")):
        acc.feed(event.model_dump())
    assert acc.finish().content == "Beijing: 20℃."
    sent = emulator.requests[-1].body["messages"]
    assert [m.get("reasoning_content") for m in sent if m["role"] == "assistant"] == [
        "Need the weather tool.",
        "Got it.",
        "Same tool again.",
    ]


def test_emulator_rejects_a_tool_turn_without_reasoning_content(emulator: ChatEmulator) -> None:
    conv = start().append(
        AssistantMessage(
            None, [ToolCall("call_0", "get_weather", {"location": "Hangzhou"})], [ThinkingBlock.Text("t")]
        ),
        ToolMessage("24℃", "call_0"),
    )
    body = thinkseal.provider("deepseek").prepare(conv, model=MODEL).body
    naive = {**body, "messages": [{k: v for k, v in m.items() if k != "reasoning_content"} for m in body["messages"]]}
    with pytest.raises(openai.BadRequestError) as err:
        sdk_create(emulator.client(), naive)
    assert err.value.body["message"] == DEEPSEEK_MISSING_REASONING  # type: ignore[index]
    sdk_create(emulator.client(), {**naive, "thinking": {"type": "disabled"}})  # only thinking mode needs it
    sdk_create(emulator.client(), body)


def test_raw_request_bytes_are_accepted(emulator: ChatEmulator) -> None:
    emulator.reply(Turn(reasoning="Weather tool.", tool_calls=[("call_0", "get_weather", {"location": "Hangzhou"})]))
    p = thinkseal.provider("deepseek")
    req = p.prepare(start(), model=MODEL)
    reply = req.receive(httpx.post(emulator.url(req.path), content=req.content).json())
    req = p.prepare(start().append(reply, ToolMessage("24℃", "call_0")), model=MODEL)
    response = httpx.post(emulator.url(req.path), content=req.content)
    assert response.status_code == 200, response.text
    assert emulator.requests[-1].raw == req.content


def foreign_history() -> Conversation:
    """A sealed Anthropic turn (signed text + redacted), bound to its own origin."""
    conv = start()
    turn = AssistantMessage(
        None,
        [ToolCall("toolu_1", "get_weather", {"location": "Hangzhou"})],
        [ThinkingBlock.Text("Claude thinks.", signature="SIG-anthropic"), ThinkingBlock.Redacted("REDACTED-anthropic")],
    )
    return respond(conv, Origin("anthropic", "claude-sonnet-4-5"), turn).append(ToolMessage("24℃", "toolu_1"))


def test_history_from_another_provider_goes_out_as_text_only(emulator: ChatEmulator) -> None:
    req = thinkseal.provider("deepseek").prepare(foreign_history(), model=MODEL)
    assert [e.reason for e in req.report] == ["origin-mismatch"]
    body = check_request(req, "deepseek")
    assert body["messages"][2]["reasoning_content"] == "Claude thinks."
    assert b"SIG-anthropic" not in req.content
    assert b"REDACTED-anthropic" not in req.content
    sdk_create(emulator.client(), req.body)


def test_pruned_edited_and_unbound_history_keeps_its_text() -> None:
    p = thinkseal.provider("deepseek")
    reply = p.prepare(start(), model=MODEL).receive(fixture("deepseek", "tool_call"))
    full = start().append(reply, ToolMessage("24℃", "call_00_kQ2wYd8Rk3"))
    pruned = full.with_messages(full.messages[1:])
    edited = full.with_messages([*full.messages[:2], reply.with_content("Checking."), full.messages[3]])
    unbound = full.with_messages([*full.messages[:2], AssistantMessage.from_parts(reply.parts), full.messages[3]])
    retargeted = p.prepare(full, model="deepseek-v4-flash")
    for conv in (pruned, edited, unbound):
        body = check_request(p.prepare(conv, model=MODEL), "deepseek")
        turn = next(m for m in body["messages"] if m["role"] == "assistant")
        assert turn["reasoning_content"] == reply.thinking_text
    assert next(m for m in retargeted.body["messages"] if m["role"] == "assistant")["reasoning_content"] == (
        reply.thinking_text
    )


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"thinking": {"type": "on"}}, "thinking.type"),
        ({"thinking": {}}, "thinking.type"),
        ({"thinking": "enabled"}, "thinking"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"max_tokens": 1.5}, "max_tokens"),
        ({"temperature": 2.5}, "temperature"),
        ({"top_p": -0.1}, "top_p"),
        ({"presence_penalty": 3}, "presence_penalty"),
    ],
)
def test_invalid_options(options: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as err:
        thinkseal.provider("deepseek").prepare(start(), model=MODEL, **options)
    assert err.value.path == path


@pytest.mark.parametrize("effort", ["minimal", "low", "medium", "high", "xhigh", "max", "ultra"])
def test_documented_reasoning_efforts_pass(effort: str) -> None:
    body = thinkseal.provider("deepseek").prepare(start(), model=MODEL, reasoning_effort=effort).body
    assert body["reasoning_effort"] == effort


def test_json_schema_response_format_is_refused() -> None:
    fmt: dict[str, Any] = {"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "object"}}}
    with pytest.raises(ValidationError, match="json_object"):
        thinkseal.provider("deepseek").prepare(start().with_response_format(fmt), model=MODEL)
    body = (
        thinkseal.provider("deepseek").prepare(start().with_response_format({"type": "json_object"}), model=MODEL).body
    )
    assert body["response_format"] == {"type": "json_object"}


def test_malformed_reasoning_content_in_a_chunk() -> None:
    acc = thinkseal.provider("deepseek").prepare(start(), model=MODEL, stream=True).stream()
    with pytest.raises(ResponseError) as err:
        acc.feed({"choices": [{"index": 0, "delta": {"reasoning_content": 3}}]})
    assert err.value.path == "$.choices[0].delta.reasoning_content"


def test_receive_output_round_trips_through_json() -> None:
    reply = thinkseal.provider("deepseek").prepare(start(), model=MODEL).receive(fixture("deepseek", "tool_call"))
    assert thinkseal.message_from_dict(json.loads(json.dumps(reply.to_dict()))) == reply
