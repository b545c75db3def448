"""The chat-completions mapping shared by openrouter, deepseek and zai
(python/thinkseal/providers/_chat.py), checked through each of the three adapters."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from itertools import pairwise
from typing import Any
from urllib.parse import urlsplit

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    ResponseError,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.providers import PROVIDER_IDS, _wire
from thinkseal.providers._chat import ChatProvider
from thinkseal.testing.chat import EXTENSIONS, ChatEmulator, Turn, sdk_request_errors

from .support import check_request, sdk_create

# The chat-completions providers the chat emulator serves: every registered adapter built on
# ChatProvider but gemini-openai, which has its own emulator (tests/providers/test_gemini_openai.py).
PROVIDERS = tuple(p for p in PROVIDER_IDS if isinstance(thinkseal.provider(p), ChatProvider) and p in EXTENSIONS)
# Where each provider puts a reply's reasoning text (message and delta).
REASONING_FIELD = {
    "openrouter": "reasoning",
    "deepseek": "reasoning_content",
    "zai": "reasoning_content",
    "openai": "reasoning_content",  # as an OpenAI-compatible server returns it
}

WEATHER = Tool(
    "get_weather",
    "Current weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = Tool("get_time", "Local time in a city", {"type": "object", "properties": {"city": {"type": "string"}}})


def completion(
    provider: str,
    content: str | None = None,
    reasoning: str | None = None,
    calls: tuple[tuple[str, str, str], ...] = (),
    **message_extra: Any,
) -> dict[str, Any]:
    """A raw chat.completion body; ``calls`` are (id, name, arguments JSON text)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message[REASONING_FIELD[provider]] = reasoning
    if calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}} for cid, name, args in calls
        ]
    message.update(message_extra)
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
    }


def chunks(provider: str, response: dict[str, Any], cuts: list[int] | None = None) -> Iterator[dict[str, Any]]:
    """``response`` (from ``completion``) as stream chunks; text split at ``cuts``."""
    message = response["choices"][0]["message"]
    base = {k: response[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def split(text: str) -> list[str]:
        points = sorted({c % (len(text) + 1) for c in cuts or [len(text) // 2]} | {0, len(text)})
        return [text[a:b] for a, b in pairwise(points) if text[a:b]]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    field = REASONING_FIELD[provider]
    for piece in split(message.get(field) or ""):
        yield chunk({field: piece})
    for piece in split(message.get("content") or ""):
        yield chunk({"content": piece})
    for k, call in enumerate(message.get("tool_calls") or []):
        head = {"index": k, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"]}}
        yield chunk({"tool_calls": [head]})
        for piece in split(call["function"]["arguments"]):
            yield chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
    yield chunk({}, response["choices"][0]["finish_reason"])


def stream_reply(req: thinkseal.PreparedRequest, events: Any) -> AssistantMessage:
    acc = req.stream()
    for event in events:
        acc.feed(event)
    return acc.finish()


def base_conversation() -> Conversation:
    return Conversation(
        [SystemMessage("You are terse."), UserMessage("Weather and time in Paris?")], tools=[WEATHER, TIME]
    )


def messages_without_reasoning(body: dict[str, Any]) -> list[dict[str, Any]]:
    drop = {"reasoning", "reasoning_details", "reasoning_content"}
    return [{k: v for k, v in m.items() if k not in drop} for m in body["messages"]]


@pytest.fixture(params=PROVIDERS)
def provider_id(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- the test tooling itself ----------------------------------------------------------------------


def test_provider_extensions_are_the_documented_ones() -> None:
    # The request fields each provider adds to OpenAI's chat-completions schema;
    # only these are removed before a body is validated against the openai SDK.
    expected = {
        "deepseek": {"body": {"thinking"}, "assistant": {"reasoning_content"}},
        "zai": {
            "body": {"thinking", "do_sample", "tool_stream", "request_id", "user_id"},
            "assistant": {"reasoning_content"},
        },
        "openrouter": {
            "body": {"reasoning", "include_reasoning", "provider", "transforms", "models", "usage", "top_k"},
            "assistant": {"reasoning", "reasoning_details", "annotations"},
            "part": {"cache_control"},
            "tool": {"cache_control"},
        },
        "openai": {"body": set(), "assistant": set()},
    }
    assert expected == EXTENSIONS


def test_sdk_validation_is_strict() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert sdk_request_errors(body, "deepseek") is None
    assert sdk_request_errors({**body, "thinkng": {"type": "enabled"}}, "deepseek") is not None
    odd = {"role": "assistant", "content": "x", "reasoning_content": "t"}
    assert sdk_request_errors({**body, "messages": [odd]}, "openrouter") is not None
    assert sdk_request_errors({**body, "messages": [odd]}, "deepseek") is None
    tool_without_id = {"role": "tool", "content": "x"}
    assert sdk_request_errors({**body, "messages": [tool_without_id]}, "zai") is not None
    assert sdk_request_errors({**body, "stream": True}, "zai") is None


def test_emulator_enforces_openai_tool_pairing() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
    unanswered = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "user", "content": "and?"},
    ]
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c9", "content": "x"}]
    with ChatEmulator("deepseek") as emu:
        client = emu.client()
        with pytest.raises(openai.BadRequestError) as err:
            sdk_create(client, {"model": "m", "messages": unanswered})
        assert "The following tool_call_ids did not have response messages: c1" in str(err.value)
        with pytest.raises(openai.BadRequestError) as err:
            sdk_create(client, {"model": "m", "messages": orphan})
        assert "must be a response to a preceeding message with 'tool_calls'" in str(err.value)


# -- requests -------------------------------------------------------------------------------------------


def test_messages_map_to_chat_shapes(provider_id: str) -> None:
    turn = AssistantMessage(None, [ToolCall("c1", "get_weather", {"city": "Paris"}), ToolCall("c2", "get_time", {})])
    conv = base_conversation().append(
        turn,
        ToolMessage("20°C, sunny", "c1"),
        ToolMessage("no clock available", "c2", is_error=True),
        AssistantMessage("Sunny, 20°C."),
        SystemMessage("Now answer in French."),
        UserMessage("Merci"),
    )
    req = thinkseal.provider(provider_id).prepare(conv, model="m")
    body = check_request(req, provider_id)
    assert req.headers == {}
    assert list(body) == ["model", "messages", "tools"]
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather and time in Paris?"},
        {
            "role": "assistant",
            "content": None,
            **({"reasoning_content": ""} if provider_id == "deepseek" else {}),
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
                {"id": "c2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "20°C, sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "[tool error] no clock available"},
        {
            "role": "assistant",
            "content": "Sunny, 20°C.",
            **({"reasoning_content": ""} if provider_id == "deepseek" else {}),
        },
        {"role": "system", "content": "Now answer in French."},
        {"role": "user", "content": "Merci"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "get_time",
                "description": "Local time in a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        },
    ]
    assert b'"20\xc2\xb0C, sunny"' in req.content  # compact UTF-8, not \u escapes


def test_tool_call_arguments_go_out_as_canonical_json_text(provider_id: str) -> None:
    args: dict[str, Any] = {"b": [1.0, 2.5], "a": {"z": None, "y": "é"}}
    conv = base_conversation().append(
        AssistantMessage(None, [ToolCall("c1", "get_weather", args)]), ToolMessage("ok", "c1")
    )
    body = thinkseal.provider(provider_id).prepare(conv, model="m").body
    text = body["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert text == '{"a":{"y":"é","z":null},"b":[1,2.5]}'
    assert json.loads(text) == args


def test_system_message_inside_a_tool_run_goes_after_the_run(provider_id: str) -> None:
    turn = AssistantMessage(None, [ToolCall("c1", "get_weather", {"city": "Paris"}), ToolCall("c2", "get_time", {})])
    conv = base_conversation().append(
        turn, ToolMessage("sunny", "c1"), SystemMessage("Be brief."), ToolMessage("noon", "c2"), UserMessage("ok")
    )
    req = thinkseal.provider(provider_id).prepare(conv, model="m")
    body = check_request(req, provider_id)
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "tool", "system", "user"]
    assert [m.get("tool_call_id") for m in body["messages"][3:5]] == ["c1", "c2"]
    assert [r.reason for r in req.report] == ["no-sealed-thinking"]
    with ChatEmulator(provider_id) as emu:  # OpenAI's rule: tool results follow their assistant message
        sdk_create(emu.client(), req.body)


def test_parallel_tool_results_go_out_together_in_order(provider_id: str) -> None:
    turn = AssistantMessage(None, [ToolCall("c1", "get_weather", {"city": "Paris"}), ToolCall("c2", "get_time", {})])
    conv = base_conversation().append(turn, ToolMessage("noon", "c2"), ToolMessage("sunny", "c1"))
    body = check_request(thinkseal.provider(provider_id).prepare(conv, model="m"), provider_id)
    assert [(m["role"], m.get("tool_call_id")) for m in body["messages"][2:]] == [
        ("assistant", None),
        ("tool", "c2"),
        ("tool", "c1"),
    ]
    assert [c["id"] for c in body["messages"][2]["tool_calls"]] == ["c1", "c2"]


def test_unpaired_call_is_dropped_and_stray_result_becomes_user_text(provider_id: str) -> None:
    turn = AssistantMessage(
        "Checking.", [ToolCall("c1", "get_weather", {"city": "Paris"}), ToolCall("c2", "get_time", {})]
    )
    conv = base_conversation().append(turn, ToolMessage("sunny", "c1"), ToolMessage("late", "c9", is_error=True))
    req = thinkseal.provider(provider_id).prepare(conv, model="m")
    body = check_request(req, provider_id)
    wire = messages_without_reasoning(body)
    assert wire[2]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    ]
    assert wire[3] == {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
    assert wire[4] == {"role": "user", "content": "[tool result for call c9 (error)]\nlate"}
    with ChatEmulator(provider_id) as emu:
        sdk_create(emu.client(), req.body)


def test_turn_left_with_nothing_to_send_is_skipped(provider_id: str) -> None:
    # Its only call is unanswered, and it has no text: chat-completions has nothing to carry.
    lonely = AssistantMessage(None, [ToolCall("c1", "get_time", {})], thinking=[ThinkingBlock.Text("hmm")])
    conv = base_conversation().append(lonely, UserMessage("never mind"), AssistantMessage(""), UserMessage("hello?"))
    req = thinkseal.provider(provider_id).prepare(conv, model="m")
    body = check_request(req, provider_id)
    assert [m["role"] for m in body["messages"]] == ["system", "user", "user", "user"]
    assert [r.reason for r in req.report] == ["no-sealed-thinking", "no-sealed-thinking"]


@pytest.mark.parametrize(
    ("fmt", "accepted_by"),
    [
        ({"type": "json_object"}, set(PROVIDERS)),
        ({"type": "text"}, set(PROVIDERS)),
        (
            {"type": "json_schema", "json_schema": {"name": "weather", "schema": {"type": "object"}, "strict": True}},
            {"openrouter", "openai"},
        ),
        ({"type": "xml"}, set()),
    ],
)
def test_response_format(provider_id: str, fmt: dict[str, Any], accepted_by: set[str]) -> None:
    conv = base_conversation().with_response_format(fmt)
    adapter = thinkseal.provider(provider_id)
    if provider_id in accepted_by:
        body = check_request(adapter.prepare(conv, model="m"), provider_id)
        assert body["response_format"] == fmt
    else:
        with pytest.raises(ValidationError) as err:
            adapter.prepare(conv, model="m")
        assert err.value.path == "Conversation.response_format.type"


def test_stream_flag(provider_id: str) -> None:
    adapter = thinkseal.provider(provider_id)
    plain = check_request(adapter.prepare(base_conversation(), model="m"), provider_id)
    assert "stream" not in plain
    streaming = adapter.prepare(base_conversation(), model="m", stream=True, stream_options={"include_usage": True})
    body = check_request(streaming, provider_id)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    with pytest.raises(ValidationError) as err:
        adapter.prepare(base_conversation(), model="m", stream_options={"include_usage": True})
    assert err.value.path == "stream_options"


@pytest.mark.parametrize("key", ["messages", "tools", "functions", "response_format"])
def test_fields_built_by_thinkseal_are_not_options(provider_id: str, key: str) -> None:
    options: dict[str, Any] = {key: []}
    with pytest.raises(ValidationError) as err:
        thinkseal.provider(provider_id).prepare(base_conversation(), model="m", **options)
    assert err.value.path == key


def test_options_must_be_json_and_are_copied(provider_id: str) -> None:
    adapter = thinkseal.provider(provider_id)
    with pytest.raises(ValidationError) as err:
        adapter.prepare(base_conversation(), model="m", metadata={"x": float("nan")})
    assert err.value.path == "metadata.x"
    stop = ["END"]
    req = adapter.prepare(base_conversation(), model="m", stop=stop, seed=7)
    stop.append("MORE")
    assert req.body["stop"] == ["END"]
    assert json.loads(req.content)["stop"] == ["END"]
    assert req.body["seed"] == 7


def test_unchanged_turns_are_not_encoded_again(provider_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = thinkseal.provider(provider_id)
    conv = base_conversation().append(
        AssistantMessage(None, [ToolCall("c1", "get_weather", {"city": "Paris"})], [ThinkingBlock.Text("t")]),
        ToolMessage("sunny", "c1"),
    )
    first = adapter.prepare(conv, model="m")
    encoded: list[Any] = []
    real = _wire.dumps

    def counting(value: Any) -> bytes:
        encoded.append(value)
        return real(value)

    monkeypatch.setattr(_wire, "dumps", counting)
    conv = conv.append(AssistantMessage("Sunny."), UserMessage("thanks"))
    second = adapter.prepare(conv, model="m")
    assert second.content.startswith(first.content[: first.content.index(b'],"model"')])
    fragments = [v for v in encoded if isinstance(v, dict) and "role" in v]
    assert [f["role"] for f in fragments] == ["assistant", "user"]  # only the two new messages
    assert json.loads(second.content) == second.body


# -- replies ------------------------------------------------------------------------------------------------


def test_receive_reads_text_reasoning_and_calls(provider_id: str) -> None:
    req = thinkseal.provider(provider_id).prepare(base_conversation(), model="m")
    response = completion(
        provider_id,
        content="Let me check.",
        reasoning="Need two tools.",
        calls=(("c1", "get_weather", '{"city": "Paris"}'), ("c2", "get_time", "")),
    )
    reply = req.receive(response)
    assert reply.parts == (
        ThinkingBlock.Text("Need two tools."),
        "Let me check.",
        ToolCall("c1", "get_weather", {"city": "Paris"}),
        ToolCall("c2", "get_time", {}),
    )
    assert not reply.has_sealed_thinking
    assert reply.thinking_binding is None
    assert req.receive(ChatCompletion.model_validate(response).model_dump()) == reply


def test_empty_content_and_reasoning_read_as_none(provider_id: str) -> None:
    req = thinkseal.provider(provider_id).prepare(base_conversation(), model="m")
    calls = (("c1", "get_time", "{}"),)
    for content in ("", None):
        reply = req.receive(completion(provider_id, content=content, reasoning="", calls=calls))
        assert reply.content_opt is None
        assert reply.thinking == ()
    assert stream_reply(req, chunks(provider_id, completion(provider_id, content="", calls=calls))) == reply


def test_unknown_extra_fields_are_ignored(provider_id: str) -> None:
    req = thinkseal.provider(provider_id).prepare(base_conversation(), model="m")
    plain = completion(provider_id, content="Hi.", reasoning="r", calls=(("c1", "get_time", "{}"),))
    extra = copy.deepcopy(plain)
    extra["x_trace"] = {"deep": [1, 2]}
    extra["choices"][0]["native_finish_reason"] = "end_turn"
    extra["choices"][0]["message"]["annotations"] = []
    extra["choices"][0]["message"]["x_new"] = "field"
    extra["choices"][0]["message"]["tool_calls"][0]["x_score"] = 0.5
    extra["choices"][0]["message"]["tool_calls"][0]["function"]["strict"] = True
    assert req.receive(extra) == req.receive(plain)


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda r: r.pop("choices"), "$.choices"),
        (lambda r: r.update(choices=[]), "$.choices"),
        (lambda r: r.update(choices={"0": {}}), "$.choices"),
        (lambda r: r["choices"].__setitem__(0, "oops"), "$.choices[0]"),
        (lambda r: r["choices"][0].pop("message"), "$.choices[0].message"),
        (lambda r: r["choices"][0].update(message=[1]), "$.choices[0].message"),
        (lambda r: r["choices"][0]["message"].update(content=7), "$.choices[0].message.content"),
        (lambda r: r["choices"][0]["message"].update(content="\ud800"), "$.choices[0].message.content"),
        (lambda r: r["choices"][0]["message"].update(tool_calls={}), "$.choices[0].message.tool_calls"),
        (lambda r: r["choices"][0]["message"]["tool_calls"].append(3), "$.choices[0].message.tool_calls[1]"),
        (
            lambda r: r["choices"][0]["message"]["tool_calls"][0].pop("function"),
            "$.choices[0].message.tool_calls[0].function",
        ),
        (lambda r: r["choices"][0]["message"]["tool_calls"][0].pop("id"), "$.choices[0].message.tool_calls[0].id"),
        (
            lambda r: r["choices"][0]["message"]["tool_calls"][0].update(id="  "),
            "$.choices[0].message.tool_calls[0].id",
        ),
        (
            lambda r: r["choices"][0]["message"]["tool_calls"][0].update(type="custom"),
            "$.choices[0].message.tool_calls[0].type",
        ),
        (
            lambda r: r["choices"][0]["message"]["tool_calls"][0]["function"].update(name=None),
            "$.choices[0].message.tool_calls[0].function.name",
        ),
        (
            lambda r: r["choices"][0]["message"]["tool_calls"][0]["function"].update(arguments='{"city": '),
            "$.choices[0].message.tool_calls[0].function.arguments",
        ),
        (
            lambda r: r["choices"][0]["message"]["tool_calls"][0]["function"].update(arguments="[1]"),
            "$.choices[0].message.tool_calls[0].function.arguments",
        ),
        (
            lambda r: r["choices"][0]["message"]["tool_calls"][0]["function"].update(arguments='{"x": NaN}'),
            "$.choices[0].message.tool_calls[0].function.arguments",
        ),
        (lambda r: r.update(error={"message": "overloaded", "code": 529}), "$.error"),
    ],
)
def test_malformed_response_names_the_path(provider_id: str, mutate: Any, path: str) -> None:
    response = completion(provider_id, content="Hi.", reasoning="r", calls=(("c1", "get_time", "{}"),))
    mutate(response)
    with pytest.raises(ResponseError) as err:
        thinkseal.provider(provider_id).prepare(base_conversation(), model="m").receive(response)
    assert err.value.path == path
    assert str(err.value).startswith(path)


def test_malformed_reasoning_names_the_path(provider_id: str) -> None:
    field = REASONING_FIELD[provider_id]
    response = completion(provider_id, content="Hi.")
    response["choices"][0]["message"][field] = ["not", "text"]
    with pytest.raises(ResponseError) as err:
        thinkseal.provider(provider_id).prepare(base_conversation(), model="m").receive(response)
    assert err.value.path == f"$.choices[0].message.{field}"


def test_response_that_is_not_an_object(provider_id: str) -> None:
    req = thinkseal.provider(provider_id).prepare(base_conversation(), model="m")
    with pytest.raises(ResponseError) as err:
        req.receive([])  # type: ignore[arg-type]
    assert err.value.path == "$"


# -- streaming --------------------------------------------------------------------------------------------------


@given(cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6))
def test_stream_finish_equals_receive_however_the_text_is_split(cuts: list[int]) -> None:
    for provider_id in PROVIDERS:
        response = completion(
            provider_id,
            content="Le temps à Paris: ☀️ 20°C.",
            reasoning="Two calls, then answer. 🤔",
            calls=(("c1", "get_weather", '{"city": "Paris"}'), ("c2", "get_time", '{"city": "Paris", "tz": true}')),
        )
        req = thinkseal.provider(provider_id).prepare(base_conversation(), model="m", stream=True)
        assert stream_reply(req, chunks(provider_id, response, cuts)) == req.receive(response)


def test_stream_merges_interleaved_tool_call_fragments_by_index(provider_id: str) -> None:
    base = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def call(index: int, **fields: Any) -> dict[str, Any]:
        return chunk({"tool_calls": [{"index": index, **fields}]})

    events = [
        call(0, id="c1", type="function", function={"name": "get_weather", "arguments": ""}),
        call(1, id="c2", type="function", function={"name": "get_time", "arguments": '{"ci'}),
        call(0, function={"arguments": '{"city": '}),
        call(1, function={"arguments": 'ty": "Paris"}'}),
        call(0, id="", function={"name": None, "arguments": '"Paris"}'}),
        chunk({}, "tool_calls"),
        {**base, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
    ]
    for event in events:
        ChatCompletionChunk.model_validate(event)
    req = thinkseal.provider(provider_id).prepare(base_conversation(), model="m", stream=True)
    assert stream_reply(req, events).tool_calls == (
        ToolCall("c1", "get_weather", {"city": "Paris"}),
        ToolCall("c2", "get_time", {"city": "Paris"}),
    )
    assert stream_reply(req, [ChatCompletionChunk.model_validate(e).model_dump() for e in events]).tool_calls == (
        ToolCall("c1", "get_weather", {"city": "Paris"}),
        ToolCall("c2", "get_time", {"city": "Paris"}),
    )


def test_stream_ignores_other_choices(provider_id: str) -> None:
    response = completion(provider_id, content="first")
    other = completion(provider_id, content="second")
    events = []
    for mine, theirs in zip(chunks(provider_id, response), chunks(provider_id, other), strict=True):
        theirs["choices"][0]["index"] = 1
        events += [mine, theirs]
    req = thinkseal.provider(provider_id).prepare(base_conversation(), model="m", stream=True)
    assert stream_reply(req, events).content == "first"


def test_stream_cut_off_before_finish_reason_is_an_error(provider_id: str) -> None:
    response = completion(provider_id, content="Hello there.", reasoning="r")
    events = list(chunks(provider_id, response))[:-1]
    req = thinkseal.provider(provider_id).prepare(base_conversation(), model="m", stream=True)
    with pytest.raises(ResponseError) as err:
        stream_reply(req, events)
    assert err.value.path == "$.choices[0].finish_reason"


@pytest.mark.parametrize(
    ("event", "path"),
    [
        ({"choices": "x"}, "$.choices"),
        ({"choices": [{"index": 0, "delta": {"content": 5}}]}, "$.choices[0].delta.content"),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "0"}]}}]},
            "$.choices[0].delta.tool_calls[0].index",
        ),
        (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "type": "custom"}]}}]},
            "$.choices[0].delta.tool_calls[0].type",
        ),
        ({"error": {"message": "upstream failed", "code": 502}, "choices": []}, "$.error"),
    ],
)
def test_malformed_chunk_names_the_path(provider_id: str, event: dict[str, Any], path: str) -> None:
    acc = thinkseal.provider(provider_id).prepare(base_conversation(), model="m", stream=True).stream()
    with pytest.raises(ResponseError) as err:
        acc.feed(event)
    assert err.value.path == path


def test_streamed_call_without_id_is_an_error_at_finish(provider_id: str) -> None:
    acc = thinkseal.provider(provider_id).prepare(base_conversation(), model="m", stream=True).stream()
    acc.feed({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": "get_time"}}]}}]})
    acc.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    with pytest.raises(ResponseError) as err:
        acc.finish()
    assert err.value.path == "$.choices[0].delta.tool_calls[0].id"


def test_stream_rejoins_a_character_split_into_surrogate_halves(provider_id: str) -> None:
    # A chunk boundary inside a JSON-escaped surrogate pair: each half decodes alone.
    events = [json.loads('{"choices":[{"index":0,"delta":{"content":"ok \\ud83d"}}]}')]
    events.append(json.loads('{"choices":[{"index":0,"delta":{"content":"\\ude00"},"finish_reason":"stop"}]}'))
    req = thinkseal.provider(provider_id).prepare(base_conversation(), model="m", stream=True)
    assert stream_reply(req, events).content == "ok 😀"
    lone = [json.loads('{"choices":[{"index":0,"delta":{"content":"\\ud83d"},"finish_reason":"stop"}]}')]
    with pytest.raises(ResponseError) as err:
        stream_reply(req, lone)
    assert err.value.path == "$.choices[0].delta.content"


def test_sdk_round_trip_through_the_emulator(provider_id: str) -> None:
    with ChatEmulator(provider_id) as emu:
        emu.reply(Turn(reasoning="Call it.", tool_calls=[("call_1", "get_weather", {"city": "Paris"})]))
        emu.reply(Turn(reasoning="Call it.", tool_calls=[("call_1", "get_weather", {"city": "Paris"})]))
        client = emu.client()
        adapter = thinkseal.provider(provider_id)
        req = adapter.prepare(base_conversation(), model="m")
        received = req.receive(sdk_create(client, req.body).model_dump())
        sreq = adapter.prepare(base_conversation(), model="m", stream=True)
        acc = sreq.stream()
        for event in sdk_create(client, sreq.body):
            acc.feed(event.model_dump())
        streamed = acc.finish()
        assert streamed.parts == received.parts
        assert emu.requests[0].path == urlsplit(emu.base_url).path + req.path
