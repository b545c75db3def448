# ruff: noqa: RUF001  (the Chinese test text uses fullwidth commas on purpose)
"""Z.ai GLM: reasoning_content in and back, thinking.clear_thinking=false when
earlier reasoning is sent (python/thinkseal/providers/zai.py)."""

from __future__ import annotations

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
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.testing import respond
from thinkseal.testing.chat import ChatEmulator, Turn

from .support import check_request, fixture, sdk_create

MODEL = "glm-5.1"
CALL_ID = "call_-8123456789012345678"
WEATHER = Tool("get_weather", "Weather of a city", {"type": "object", "properties": {"city": {"type": "string"}}})
TOOL_WIRE = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def start() -> Conversation:
    return Conversation([SystemMessage("你是天气助手。"), UserMessage("北京天气怎么样？")], tools=[WEATHER])


def stream(req: thinkseal.PreparedRequest, events: list[dict[str, Any]]) -> AssistantMessage:
    acc = req.stream()
    for event in events:
        acc.feed(event)
    return acc.finish()


def after_tool_call() -> Conversation:
    reply = thinkseal.provider("zai").prepare(start(), model=MODEL).receive(fixture("zai", "tool_call"))
    return start().append(reply, ToolMessage("晴，25℃", CALL_ID))


@pytest.fixture
def emulator() -> Iterator[ChatEmulator]:
    with ChatEmulator("zai") as emu:
        yield emu


def test_fixtures_parse_with_the_sdk() -> None:
    for name in ("tool_call", "final_answer"):
        ChatCompletion.model_validate(fixture("zai", name))
    for event in fixture("zai", "tool_call.stream"):
        ChatCompletionChunk.model_validate(event)


def test_full_loop_exact_body() -> None:
    p = thinkseal.provider("zai")
    req = p.prepare(start(), model=MODEL, thinking={"type": "enabled"}, max_tokens=4096)
    assert check_request(req, "zai") == {
        "model": MODEL,
        "messages": [{"role": "system", "content": "你是天气助手。"}, {"role": "user", "content": "北京天气怎么样？"}],
        "tools": [TOOL_WIRE],
        "thinking": {"type": "enabled"},  # nothing earlier to preserve: left as the caller gave it
        "max_tokens": 4096,
    }
    reply = req.receive(fixture("zai", "tool_call"))
    assert reply.parts == (
        ThinkingBlock.Text("用户想知道北京的天气。I will call get_weather."),
        ToolCall(CALL_ID, "get_weather", {"city": "北京"}),
    )
    conv = start().append(reply, ToolMessage("晴，25℃", CALL_ID))
    req = p.prepare(conv, model=MODEL, thinking={"type": "enabled"}, max_tokens=4096)
    assert [(e.index, e.reason) for e in req.report] == [(2, "no-sealed-thinking")]
    assert check_request(req, "zai") == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "你是天气助手。"},
            {"role": "user", "content": "北京天气怎么样？"},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "用户想知道北京的天气。I will call get_weather.",
                "tool_calls": [
                    {
                        "id": CALL_ID,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"北京"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": CALL_ID, "content": "晴，25℃"},
        ],
        "tools": [TOOL_WIRE],
        "thinking": {"type": "enabled", "clear_thinking": False},
        "max_tokens": 4096,
    }
    assert '"reasoning_content":"用户想知道北京的天气。'.encode() in req.content
    final = req.receive(fixture("zai", "final_answer"))
    assert final.parts == (ThinkingBlock.Text("工具返回晴，25℃。"), "北京今天晴，25℃。")


def test_streamed_loop_equals_received() -> None:
    p = thinkseal.provider("zai")
    req = p.prepare(start(), model=MODEL, stream=True, tool_stream=True)
    body = check_request(req, "zai")
    assert (body["stream"], body["tool_stream"]) == (True, True)
    streamed = stream(req, fixture("zai", "tool_call.stream"))
    assert streamed == req.receive(fixture("zai", "tool_call"))
    sdk_events = [ChatCompletionChunk.model_validate(e).model_dump() for e in fixture("zai", "tool_call.stream")]
    assert stream(req, sdk_events).parts == streamed.parts


@pytest.mark.parametrize(
    ("thinking", "sent"),
    [
        (None, {"clear_thinking": False}),
        ({"type": "enabled"}, {"type": "enabled", "clear_thinking": False}),
        ({"type": "disabled"}, {"type": "disabled", "clear_thinking": False}),
        ({"type": "enabled", "clear_thinking": True}, {"type": "enabled", "clear_thinking": True}),
        ({"clear_thinking": False}, {"clear_thinking": False}),
    ],
)
def test_clear_thinking_is_set_only_when_the_caller_did_not(thinking: dict[str, Any] | None, sent: Any) -> None:
    options: dict[str, Any] = {} if thinking is None else {"thinking": thinking}
    given = None if thinking is None else dict(thinking)
    req = thinkseal.provider("zai").prepare(after_tool_call(), model=MODEL, **options)
    assert check_request(req, "zai")["thinking"] == sent
    assert (None if thinking is None else thinking) == given  # the caller's dict is not changed


def test_no_clear_thinking_when_no_reasoning_is_sent() -> None:
    conv = start().append(
        AssistantMessage(None, [ToolCall("c1", "get_weather", {"city": "北京"})]), ToolMessage("晴", "c1")
    )
    body = check_request(thinkseal.provider("zai").prepare(conv, model=MODEL), "zai")
    assert "thinking" not in body
    assert "reasoning_content" not in body["messages"][2]
    body = check_request(thinkseal.provider("zai").prepare(conv, model=MODEL, thinking={"type": "enabled"}), "zai")
    assert body["thinking"] == {"type": "enabled"}


def test_emulator_loop_with_preserved_thinking(emulator: ChatEmulator) -> None:
    emulator.reply(Turn(reasoning="先查天气。", tool_calls=[("call_1", "get_weather", {"city": "北京"})]))
    emulator.reply(Turn(reasoning="再查上海。", tool_calls=[("call_2", "get_weather", {"city": "上海"})]))
    emulator.reply(Turn(reasoning="都有了。", content="北京晴，上海雨。"))
    client = emulator.client()
    p = thinkseal.provider("zai")
    conv = start()
    req = p.prepare(conv, model=MODEL, thinking={"type": "enabled"})
    conv = conv.append(
        req.receive(sdk_create(client, check_request(req, "zai")).model_dump()), ToolMessage("晴", "call_1")
    )
    req = p.prepare(conv, model=MODEL, thinking={"type": "enabled"}, stream=True)
    acc = req.stream()
    for event in sdk_create(client, check_request(req, "zai")):
        acc.feed(event.model_dump())
    conv = conv.append(acc.finish(), ToolMessage("雨", "call_2"))
    req = p.prepare(conv, model=MODEL, thinking={"type": "enabled"})
    final = req.receive(sdk_create(client, check_request(req, "zai")).model_dump())
    assert final.content == "北京晴，上海雨。"
    last = emulator.requests[-1].body
    assert last["thinking"] == {"type": "enabled", "clear_thinking": False}
    assert [m.get("reasoning_content") for m in last["messages"] if m["role"] == "assistant"] == [
        "先查天气。",
        "再查上海。",
    ]


def test_emulator_rejects_changed_reasoning_under_preserved_thinking(emulator: ChatEmulator) -> None:
    emulator.reply(Turn(reasoning="先查天气。", tool_calls=[("call_1", "get_weather", {"city": "北京"})]))
    client = emulator.client()
    p = thinkseal.provider("zai")
    req = p.prepare(start(), model=MODEL)
    conv = start().append(req.receive(sdk_create(client, req.body).model_dump()), ToolMessage("晴", "call_1"))
    body = p.prepare(conv, model=MODEL).body
    changed = {**body, "messages": [dict(m) for m in body["messages"]]}
    changed["messages"][2]["reasoning_content"] = "先查天气"
    with pytest.raises(openai.BadRequestError, match="preserved thinking"):
        sdk_create(client, changed)
    sdk_create(client, body)


def test_raw_request_bytes_are_accepted(emulator: ChatEmulator) -> None:
    emulator.reply(Turn(reasoning="查。", tool_calls=[("call_1", "get_weather", {"city": "北京"})]))
    p = thinkseal.provider("zai")
    req = p.prepare(start(), model=MODEL)
    reply = req.receive(httpx.post(emulator.url(req.path), content=req.content).json())
    req = p.prepare(start().append(reply, ToolMessage("晴", "call_1")), model=MODEL)
    assert httpx.post(emulator.url(req.path), content=req.content).status_code == 200
    assert emulator.requests[-1].raw == req.content


def test_foreign_sealed_history_goes_out_as_text_only(emulator: ChatEmulator) -> None:
    turn = AssistantMessage(
        None,
        [ToolCall("or_1", "get_weather", {"city": "北京"})],
        [
            ThinkingBlock.Text("Routed thought."),
            ThinkingBlock.Opaque("openrouter", '{"type":"reasoning.encrypted","data":"OR-SECRET"}'),
        ],
    )
    conv = respond(start(), Origin("openrouter", "z-ai/glm-5.1"), turn).append(ToolMessage("晴", "or_1"))
    req = thinkseal.provider("zai").prepare(conv, model=MODEL)
    assert [e.reason for e in req.report] == ["origin-mismatch"]
    body = check_request(req, "zai")
    assert body["messages"][2]["reasoning_content"] == "Routed thought."
    assert b"OR-SECRET" not in req.content
    assert body["thinking"] == {"clear_thinking": False}
    sdk_create(emulator.client(), req.body)


def test_pruned_edited_retargeted_and_unbound_history_keeps_its_text() -> None:
    p = thinkseal.provider("zai")
    full = after_tool_call()
    reply = full[2]
    assert isinstance(reply, AssistantMessage)
    variants = [
        full.with_messages(full.messages[1:]),
        full.with_messages([*full.messages[:2], reply.with_content("查一下。"), full.messages[3]]),
        full.with_messages([*full.messages[:2], AssistantMessage.from_parts(reply.parts), full.messages[3]]),
    ]
    for conv, model in [(v, MODEL) for v in variants] + [(full, "glm-4.7")]:
        body = check_request(p.prepare(conv, model=model), "zai")
        turn = next(m for m in body["messages"] if m["role"] == "assistant")
        assert turn["reasoning_content"] == reply.thinking_text


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"thinking": {"type": "auto"}}, "thinking.type"),
        ({"thinking": {"type": "enabled", "clear_thinking": "no"}}, "thinking.clear_thinking"),
        ({"thinking": []}, "thinking"),
        ({"temperature": 1.5}, "temperature"),
        ({"top_p": 0}, "top_p"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"do_sample": 1}, "do_sample"),
        ({"tool_stream": "yes"}, "tool_stream"),
    ],
)
def test_invalid_options(options: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as err:
        thinkseal.provider("zai").prepare(start(), model=MODEL, **options)
    assert err.value.path == path


def test_json_schema_response_format_is_refused() -> None:
    fmt: dict[str, Any] = {"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "object"}}}
    with pytest.raises(ValidationError, match="json_object"):
        thinkseal.provider("zai").prepare(start().with_response_format(fmt), model=MODEL)
