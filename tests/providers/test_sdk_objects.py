"""The official SDKs' own response and stream-event objects go straight into
``receive``, ``parse`` and ``stream().feed``: each is built from a recorded
response with the SDK's own validation, and reads exactly as the wire dict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic.types
import ollama
import openai.types.chat
import openai.types.responses
import pydantic
import pytest
from google.genai import types as genai_types
from mistralai.client import models as mistral_models
from openai._models import construct_type

import thinkseal
from thinkseal import Conversation, ResponseError, Tool, UserMessage

FIXTURES = Path(__file__).parent / "fixtures"
CONV = Conversation([UserMessage("Weather and time in Paris?")], tools=[Tool("get_weather"), Tool("get_time")])
OPTIONS: dict[str, dict[str, Any]] = {
    "anthropic": {"max_tokens": 4096},
    "vertex-gemini": {"project": "p", "location": "global"},
}


def load(provider: str, name: str) -> Any:
    path = FIXTURES / provider / name
    if path.suffix == ".ndjson":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return json.loads(path.read_text())


def request(provider: str, *, stream: bool = False) -> thinkseal.PreparedRequest:
    return thinkseal.provider(provider).prepare(CONV, model="m", stream=stream, **OPTIONS.get(provider, {}))


def sdk_object(cls: Any, wire: Any) -> Any:
    """The SDK's object for ``wire``, validated by the SDK (Stainless models that
    reject a recorded field the installed SDK does not know yet are constructed)."""
    try:
        return cls.model_validate(wire)
    except pydantic.ValidationError:
        return cls.construct(**wire)


RESPONSES = [
    ("anthropic", "message_interleaved.json", anthropic.types.Message),
    ("anthropic", "message_web_search.json", anthropic.types.Message),
    ("openai", "chat_completion_object.json", openai.types.chat.ChatCompletion),
    ("openai-responses", "cookbook_joke.json", openai.types.responses.Response),
    ("gemini", "text_signature_response.json", genai_types.GenerateContentResponse),
    ("gemini", "sequential_step1_response.json", genai_types.GenerateContentResponse),
    ("gemini", "parallel_step1_response.json", genai_types.GenerateContentResponse),
    ("vertex-gemini", "sequential_step1_response.json", genai_types.GenerateContentResponse),
    ("mistral", "reply_answer.json", mistral_models.ChatCompletionResponse),
    ("mistral", "reply_tool_call.json", mistral_models.ChatCompletionResponse),
    ("ollama", "reply_answer.json", ollama.ChatResponse),
    ("ollama", "reply_tool_call.json", ollama.ChatResponse),
]


@pytest.mark.parametrize(("provider", "name", "cls"), RESPONSES)
def test_sdk_response_objects_parse_like_the_wire(provider: str, name: str, cls: Any) -> None:
    wire = load(provider.removeprefix("vertex-"), name)
    obj = sdk_object(cls, wire)
    assert not isinstance(obj, dict)
    req = request(provider)
    expected = req.parse(wire)
    assert req.parse(obj) == expected
    assert req.receive(obj) == expected.message
    assert req.parse(obj).usage == expected.usage
    assert expected.message.parts  # the fixture really carries a reply


def test_google_genai_fields_are_dumped_by_alias() -> None:
    """google-genai's fields are snake_case and its signatures bytes; the wire is
    camelCase with base64 text. A plain model_dump() would lose the signature."""
    wire = load("gemini", "text_signature_response.json")
    obj = genai_types.GenerateContentResponse.model_validate(wire)
    assert "usage_metadata" in obj.model_dump()
    req = request("gemini")
    reply = req.parse(obj)
    assert reply.message.has_sealed_thinking
    assert reply.message == req.parse(wire).message


def test_anthropic_stream_events() -> None:
    events = load("anthropic", "stream_interleaved.json")
    adapter = pydantic.TypeAdapter(anthropic.types.RawMessageStreamEvent)
    wire_acc = request("anthropic", stream=True).stream()
    sdk_acc = request("anthropic", stream=True).stream()
    for event in events:
        if event.get("type") == "ping":
            continue
        assert sdk_acc.feed(adapter.validate_python(event)) == wire_acc.feed(event)
    assert sdk_acc.reply == wire_acc.reply
    assert sdk_acc.reply.message == request("anthropic").receive(load("anthropic", "message_interleaved.json"))


def chat_chunks() -> list[dict[str, Any]]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5"}
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}
    return [
        {
            **base,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Checking"}, "finish_reason": None}],
        },
        {**base, "choices": [{"index": 0, "delta": {"content": " now."}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]},
        {
            **base,
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Paris"}'}}]},
                    "finish_reason": None,
                }
            ],
        },
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {**base, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}},
    ]


def test_openai_chat_completion_chunks() -> None:
    wire_acc = request("openai", stream=True).stream()
    sdk_acc = request("openai", stream=True).stream()
    for chunk in chat_chunks():
        obj = openai.types.chat.ChatCompletionChunk.model_validate(chunk)
        assert sdk_acc.feed(obj) == wire_acc.feed(chunk)
    assert sdk_acc.reply == wire_acc.reply
    assert sdk_acc.reply.message.tool_calls[0].arguments == {"city": "Paris"}


def test_openai_responses_stream_events() -> None:
    response = load("openai-responses", "cookbook_joke.json")
    text = next(p["text"] for item in response["output"] if item["type"] == "message" for p in item["content"])
    events = [
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {**response, "status": "in_progress", "output": []},
        },
        {
            "type": "response.output_text.delta",
            "sequence_number": 1,
            "item_id": "msg_1",
            "output_index": 1,
            "content_index": 0,
            "delta": text,
            "logprobs": [],
        },
        {"type": "response.completed", "sequence_number": 2, "response": response},
    ]
    wire_acc = request("openai-responses", stream=True).stream()
    sdk_acc = request("openai-responses", stream=True).stream()
    for event in events:
        # How the SDK's Stream builds each event (it constructs, it does not validate).
        obj = construct_type(type_=openai.types.responses.ResponseStreamEvent, value=event)
        assert isinstance(obj, pydantic.BaseModel)
        assert sdk_acc.feed(obj) == wire_acc.feed(event)
    assert sdk_acc.reply == wire_acc.reply == request("openai-responses").parse(response)


def test_mistral_completion_events() -> None:
    chunks = load("mistral", "stream_answer.json")
    wire_acc = request("mistral", stream=True).stream()
    sdk_acc = request("mistral", stream=True).stream()
    for chunk in chunks:
        event = mistral_models.CompletionEvent(data=mistral_models.CompletionChunk.model_validate(chunk))
        assert sdk_acc.feed(event) == wire_acc.feed(chunk)
    assert sdk_acc.reply == wire_acc.reply
    assert sdk_acc.reply.message.thinking


def test_ollama_stream_lines() -> None:
    lines = load("ollama", "stream_tool_call.ndjson")
    wire_acc = request("ollama", stream=True).stream()
    sdk_acc = request("ollama", stream=True).stream()
    for line in lines:
        assert sdk_acc.feed(ollama.ChatResponse.model_validate(line)) == wire_acc.feed(line)
    assert sdk_acc.reply == wire_acc.reply
    assert sdk_acc.reply.message.tool_calls


def test_google_genai_stream_chunks() -> None:
    wire = load("gemini", "sequential_step1_response.json")
    wire_acc = request("gemini", stream=True).stream()
    sdk_acc = request("gemini", stream=True).stream()
    assert sdk_acc.feed(genai_types.GenerateContentResponse.model_validate(wire)) == wire_acc.feed(wire)
    assert sdk_acc.reply == wire_acc.reply == request("gemini").parse(wire)


class NotAModel:
    pass


@pytest.mark.parametrize("value", [NotAModel(), "text", 3, None, [1], anthropic.types.Message])
def test_other_objects_say_what_is_expected(value: Any) -> None:
    req = request("anthropic")
    for call in (req.receive, req.parse, req.stream().feed):
        with pytest.raises(ResponseError) as info:
            call(value)
        assert info.value.path == "$"
        assert "model_dump()" in str(info.value)
        assert "JSON object" in str(info.value)


def test_a_failing_model_dump_is_a_response_error() -> None:
    class Broken:
        def model_dump(self, **kwargs: Any) -> dict[str, Any]:
            raise RuntimeError("boom")

    with pytest.raises(ResponseError, match="model_dump\\(\\) failed: boom"):
        request("anthropic").parse(Broken())
