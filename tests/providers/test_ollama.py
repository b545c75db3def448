"""The ``ollama`` adapter: request bodies, replies and NDJSON streams, checked
against recorded fixtures, the official ``ollama`` SDK's models, and an emulated
``/api/chat`` driven through ``ollama.Client``."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest
from ollama._types import ChatRequest, ChatResponse
from ollama._types import Message as SdkMessage

from thinkseal import (
    AssistantMessage,
    Conversation,
    Origin,
    PreparedRequest,
    ResponseError,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
    provider,
)
from thinkseal.testing import respond
from thinkseal.testing.ollama import OllamaEmulator, Reply

from .support import assert_recognised

FIXTURES = Path(__file__).parent / "fixtures" / "ollama"
MODEL = "qwen3:8b"
Text = ThinkingBlock.Text

WEATHER = Tool(
    "get_weather",
    "Current weather for a city",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
TIME = Tool("get_time", "Local time in a timezone", {"type": "object", "properties": {"timezone": {"type": "string"}}})
TOOLS_WIRE = [
    {
        "type": "function",
        "function": {"name": WEATHER.name, "description": WEATHER.description, "parameters": WEATHER.parameters},
    },
    {
        "type": "function",
        "function": {"name": TIME.name, "description": TIME.description, "parameters": TIME.parameters},
    },
]
THINKING_1 = "The user wants the weather in Paris and the time there. I can call both tools at once."
THINKING_2 = "Both results are in; summarise them."
ANSWER = "It is 18 °C and sunny in Paris, and the local time is 14:05."


def load(name: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return value


def lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line.strip()]


def call_id(thinking: str, content: str, index: int, name: str, arguments: dict[str, Any]) -> str:
    """The documented id rule, computed independently of the adapter."""
    canonical_args = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    material = json.dumps([thinking, content, index, name, canonical_args], separators=(",", ":"), ensure_ascii=False)
    return "ollama_" + hashlib.sha256(material.encode()).hexdigest()[:24]


ID_WEATHER = call_id(THINKING_1, "", 0, "get_weather", {"city": "Paris", "unit": "celsius"})
ID_TIME = call_id(THINKING_1, "", 1, "get_time", {"timezone": "Europe/Paris"})


def check_wire(req: PreparedRequest) -> None:
    """What every prepared body must satisfy: its bytes decode to it, and the
    SDK's request models know every field of it."""
    assert json.loads(req.content) == req.body
    assert req.path == "/api/chat"
    parsed = ChatRequest.model_validate(req.body).model_dump(exclude_none=True, by_alias=True)
    assert_recognised({k: v for k, v in req.body.items() if k != "messages"}, parsed)
    for message in req.body["messages"]:
        assert_recognised(message, SdkMessage.model_validate(message).model_dump(exclude_none=True))


def prepare(conversation: Conversation, model: str = MODEL, **options: Any) -> PreparedRequest:
    req = provider("ollama").prepare(conversation, model=model, **options)
    check_wire(req)
    return req


def start() -> Conversation:
    return Conversation(
        [SystemMessage("You are terse."), UserMessage("Weather and time in Paris?")], tools=[WEATHER, TIME]
    )


def stream_reply(req: PreparedRequest, events: list[dict[str, Any]]) -> AssistantMessage:
    acc = req.stream()
    for event in events:
        acc.feed(event)
    return acc.finish()


# -- the full loop, on recorded fixtures ------------------------------------------


def test_full_loop_with_exact_bodies() -> None:
    conv = start()
    req = prepare(conv, think=True)
    assert req.body == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather and time in Paris?"},
        ],
        "tools": TOOLS_WIRE,
        "stream": False,
        "think": True,
    }

    reply = req.receive(load("reply_tool_call.json"))
    assert reply == AssistantMessage(
        None,
        [
            ToolCall(ID_WEATHER, "get_weather", {"city": "Paris", "unit": "celsius"}),
            ToolCall(ID_TIME, "get_time", {"timezone": "Europe/Paris"}),
        ],
        [Text(THINKING_1)],
    )
    assert reply.thinking_binding is None  # Ollama thinking is never signed, so never sealed

    conv = conv.append(reply, ToolMessage("18 °C, sunny", ID_WEATHER), ToolMessage("14:05", ID_TIME))
    req = prepare(conv, think=True)
    assert req.body["messages"][2:] == [
        {
            "role": "assistant",
            "content": "",
            "thinking": THINKING_1,
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}},
                {"function": {"name": "get_time", "arguments": {"timezone": "Europe/Paris"}}},
            ],
        },
        {"role": "tool", "content": "18 °C, sunny", "tool_name": "get_weather"},
        {"role": "tool", "content": "14:05", "tool_name": "get_time"},
    ]
    assert [(e.index, e.reason) for e in req.report] == [(2, "no-sealed-thinking")]

    answer = req.receive(load("reply_answer.json"))
    assert answer == AssistantMessage(ANSWER, thinking=[Text(THINKING_2)])
    conv = conv.append(answer, UserMessage("Thanks!"))
    assert prepare(conv, think=True).body["messages"][5:] == [
        {"role": "assistant", "content": ANSWER, "thinking": THINKING_2},
        {"role": "user", "content": "Thanks!"},
    ]


@pytest.mark.parametrize(
    ("reply", "stream"),
    [("reply_tool_call.json", "stream_tool_call.ndjson"), ("reply_answer.json", "stream_answer.ndjson")],
)
def test_stream_finish_equals_receive(reply: str, stream: str) -> None:
    req = prepare(start())
    received = req.receive(load(reply))
    streamed = stream_reply(req, lines(stream))
    assert streamed == received
    assert streamed.parts == received.parts
    # The SDK's shapes (ChatResponse.model_dump()) read the same.
    assert req.receive(ChatResponse.model_validate(load(reply)).model_dump()) == received
    assert stream_reply(req, [ChatResponse.model_validate(e).model_dump() for e in lines(stream)]) == received


@pytest.mark.parametrize("name", ["reply_tool_call.json", "reply_answer.json"])
def test_recorded_replies_parse_with_the_sdk_model(name: str) -> None:
    parsed = ChatResponse.model_validate(load(name))
    assert parsed.done is True
    assert parsed.message.thinking


@pytest.mark.parametrize("name", ["stream_tool_call.ndjson", "stream_answer.ndjson"])
def test_recorded_stream_lines_parse_with_the_sdk_model(name: str) -> None:
    parsed = [ChatResponse.model_validate(line) for line in lines(name)]
    assert [p.done for p in parsed] == [False] * (len(parsed) - 1) + [True]


# -- the same loop against the emulator, through the official SDK ---------------------


def test_full_loop_through_the_sdk(ollama_emulator: OllamaEmulator, ollama_client: ollama.Client) -> None:
    ollama_emulator.queue(
        Reply(thinking=THINKING_1, tool_calls=[("get_weather", {"city": "Paris"}), ("get_time", {"timezone": "CET"})]),
        Reply(thinking=THINKING_2, content=ANSWER),
    )
    conv = start()
    req = prepare(conv, think="high")
    reply = req.receive(ollama_client.chat(**req.body).model_dump())
    assert reply.thinking == (Text(THINKING_1),)
    assert [c.name for c in reply.tool_calls] == ["get_weather", "get_time"]

    conv = conv.append(
        reply,
        ToolMessage("18 °C, sunny", reply.tool_calls[0].id),
        ToolMessage("14:05", reply.tool_calls[1].id),
    )
    req = prepare(conv, think="high", stream=True)
    acc = req.stream()
    for part in ollama_client.chat(**req.body):
        acc.feed(part.model_dump())
    assert acc.finish() == AssistantMessage(ANSWER, thinking=[Text(THINKING_2)])

    received = ollama_emulator.requests[-1].body
    assert received["stream"] is True
    assert received["messages"][2]["thinking"] == THINKING_1
    assert [m.get("tool_name") for m in received["messages"][3:]] == ["get_weather", "get_time"]


def test_sdk_stream_and_sdk_reply_of_the_same_reply_are_equal(
    ollama_emulator: OllamaEmulator, ollama_client: ollama.Client
) -> None:
    scripted = Reply(thinking="Think it over.", content="Done.", tool_calls=[("get_time", {"timezone": "UTC"})])
    ollama_emulator.queue(scripted, scripted)
    whole = prepare(start())
    received = whole.receive(ollama_client.chat(**whole.body).model_dump())
    streaming = prepare(start(), stream=True)
    acc = streaming.stream()
    for part in ollama_client.chat(**streaming.body):
        acc.feed(part.model_dump())
    assert acc.finish() == received
    assert received.tool_calls[0].id == call_id("Think it over.", "Done.", 0, "get_time", {"timezone": "UTC"})


def test_raw_bytes_are_accepted_and_stream_as_ndjson(ollama_emulator: OllamaEmulator) -> None:
    ollama_emulator.queue(Reply(thinking="Hmm.", content="Hi."), Reply(thinking="Hmm.", content="Hi."))
    req = prepare(start())
    response = httpx.post(ollama_emulator.base_url + req.path, content=req.content, headers=req.headers)
    assert response.status_code == 200
    received = req.receive(response.json())
    req = prepare(start(), stream=True)
    with httpx.stream(
        "POST", ollama_emulator.base_url + req.path, content=req.content, headers=req.headers
    ) as response:
        events = [json.loads(line) for line in response.iter_lines() if line]
    assert stream_reply(req, events) == received == AssistantMessage("Hi.", thinking=[Text("Hmm.")])


def test_stream_flag_is_always_in_the_body(ollama_emulator: OllamaEmulator) -> None:
    assert prepare(start()).body["stream"] is False
    assert prepare(start(), stream=True).body["stream"] is True
    # Why it matters: Ollama streams when the body does not say otherwise.
    ollama_emulator.queue(Reply(content="Hi."))
    body = {k: v for k, v in prepare(start()).body.items() if k != "stream"}
    response = httpx.post(ollama_emulator.base_url + "/api/chat", json=body)
    assert response.headers["content-type"] == "application/x-ndjson"


# -- think, options, format -------------------------------------------------------------


@pytest.mark.parametrize("value", [True, False, "high", "medium", "low", "max"])
def test_valid_think_values_pass_through(
    value: object, ollama_emulator: OllamaEmulator, ollama_client: ollama.Client
) -> None:
    ollama_emulator.queue(Reply(thinking="t", content="ok"))
    req = prepare(start(), think=value)
    assert req.body["think"] == value
    reply = req.receive(ollama_client.chat(**req.body).model_dump())
    assert reply.thinking == (() if value is False else (Text("t"),))


@pytest.mark.parametrize(
    ("value", "shown"), [("extreme", '"extreme"'), ("HIGH", '"HIGH"'), (1, "1"), ("", '""'), ({"a": 1}, '{"a": 1}')]
)
def test_invalid_think_value_is_refused_with_ollamas_wording(
    value: object, shown: str, ollama_emulator: OllamaEmulator
) -> None:
    expected = f'invalid think value: {shown} (must be "high", "medium", "low", "max", true, or false)'
    with pytest.raises(ValidationError) as caught:
        provider("ollama").prepare(start(), model=MODEL, think=value)
    assert str(caught.value) == expected
    assert caught.value.path == "think"
    # The emulator (like Ollama) answers the same for a body that says so.
    response = httpx.post(ollama_emulator.base_url + "/api/chat", json={"model": MODEL, "messages": [], "think": value})
    assert (response.status_code, response.json()) == (400, {"error": expected})


def test_non_thinking_model_is_refused_only_when_thinking(
    ollama_emulator: OllamaEmulator, ollama_client: ollama.Client
) -> None:
    with pytest.raises(ollama.ResponseError) as caught:
        ollama_client.chat(**prepare(start(), model="llama3.2", think=True).body)
    assert caught.value.error == '"llama3.2" does not support thinking'
    assert caught.value.status_code == 400
    ollama_emulator.queue(Reply(content="ok"))
    req = prepare(start(), model="llama3.2", think=False)
    assert req.receive(ollama_client.chat(**req.body).model_dump()) == AssistantMessage("ok")


def test_options_pass_through_as_given() -> None:
    req = prepare(start(), options={"temperature": 0.2, "num_ctx": 8192}, keep_alive="5m", logprobs=True)
    assert req.body["options"] == {"temperature": 0.2, "num_ctx": 8192}
    assert (req.body["keep_alive"], req.body["logprobs"]) == ("5m", True)
    assert "think" not in req.body


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"temperature": 0.2}, "temperature"),  # belongs in options
        ({"num_ctx": 4096}, "num_ctx"),
        ({"options": [1]}, "options"),
        ({"keep_alive": True}, "keep_alive"),
        ({"keep_alive": [5]}, "keep_alive"),
        ({"logprobs": "yes"}, "logprobs"),
        ({"top_logprobs": 21}, "top_logprobs"),
        ({"format": "json"}, "format"),  # comes from Conversation.response_format
        ({"tools": []}, "tools"),
        ({"messages": []}, "messages"),
        ({"options": {"temperature": float("nan")}}, "options.temperature"),
    ],
)
def test_bad_options_are_refused(options: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        provider("ollama").prepare(start(), model=MODEL, **options)
    assert caught.value.path == path


SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


@pytest.mark.parametrize(
    ("response_format", "expected"),
    [
        ({"type": "json_object"}, {"format": "json"}),
        ({"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA, "strict": True}}, {"format": SCHEMA}),
        ({"type": "text"}, {}),
    ],
)
def test_response_format_becomes_format(
    response_format: dict[str, Any],
    expected: dict[str, Any],
    ollama_emulator: OllamaEmulator,
    ollama_client: ollama.Client,
) -> None:
    req = prepare(start().with_response_format(response_format))
    assert {k: v for k, v in req.body.items() if k == "format"} == expected
    ollama_emulator.queue(Reply(content='{"answer": "yes"}'))
    assert req.receive(ollama_client.chat(**req.body).model_dump()).content == '{"answer": "yes"}'


@pytest.mark.parametrize(
    "response_format", [{"type": "json_schema", "json_schema": {"name": "a"}}, {"type": "grammar", "grammar": "x"}]
)
def test_response_format_without_an_ollama_form_is_refused(response_format: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        provider("ollama").prepare(start().with_response_format(response_format), model=MODEL)


# -- histories that go out unsealed --------------------------------------------------------

CLAUDE = Origin("anthropic", "claude-sonnet-4-5")
SIGNED = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
SEALED_TURN = AssistantMessage(
    "Checking.",
    [ToolCall("toolu_01A", "get_weather", {"city": "Paris"})],
    [Text("I need the weather first.", SIGNED), ThinkingBlock.Redacted(REDACTED), Text("", "c2lnbmF0dXJlLW9ubHk=")],
)


def with_sealed_turn(origin: Origin) -> Conversation:
    """A conversation whose assistant turn is sealed and bound under ``origin``."""
    conv = respond(start(), origin, SEALED_TURN)
    return conv.append(ToolMessage("18 °C, sunny", "toolu_01A"))


def pruned(conv: Conversation) -> Conversation:
    return conv.with_messages(conv.messages[1:])


def edited(conv: Conversation) -> Conversation:
    messages = list(conv.messages)
    messages[2] = messages[2].with_content("Checking now.")  # type: ignore[attr-defined]
    return conv.with_messages(messages)


def unbound(conv: Conversation) -> Conversation:
    messages = list(conv.messages)
    messages[2] = SEALED_TURN  # the same blocks, never bound
    return conv.with_messages(messages)


@pytest.mark.parametrize(
    ("history", "reason"),
    [
        (lambda: with_sealed_turn(CLAUDE), "origin-mismatch"),  # another provider's turn
        (lambda: with_sealed_turn(Origin("ollama", "qwen3:32b")), "origin-mismatch"),  # another model
        (lambda: with_sealed_turn(Origin("ollama", MODEL, "other-account")), "origin-mismatch"),
        (lambda: pruned(with_sealed_turn(Origin("ollama", MODEL))), "prefix-changed"),
        (lambda: edited(with_sealed_turn(Origin("ollama", MODEL))), "no-sealed-thinking"),
        (lambda: unbound(with_sealed_turn(CLAUDE)), "unbound"),
    ],
)
def test_histories_go_out_unsealed_with_their_thinking_text(
    history: Callable[[], Conversation], reason: str, ollama_emulator: OllamaEmulator, ollama_client: ollama.Client
) -> None:
    conv = history()
    req = prepare(conv)
    turn = next(e for e in req.report)
    assert (turn.reason, turn.kept) == (reason, False)
    assistant = next(m for m in req.body["messages"] if m["role"] == "assistant")
    assert assistant["thinking"] == "I need the weather first."
    for secret in (SIGNED, REDACTED, "c2lnbmF0dXJlLW9ubHk="):
        assert secret.encode() not in req.content
    ollama_emulator.queue(Reply(content="ok"))
    ollama_client.chat(**req.body)  # the emulator accepts it


def test_a_history_rebound_to_ollama_goes_out_with_text_only() -> None:
    """Even a turn kept for Ollama (bound to it by ``rebind``) has only its text to send."""
    conv = with_sealed_turn(CLAUDE).rebind(Origin("ollama", MODEL))
    req = prepare(conv)
    assert [e.reason for e in req.report] == ["kept"]
    assert req.body["messages"][2] == {
        "role": "assistant",
        "content": "Checking.",
        "thinking": "I need the weather first.",
        "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
    }
    assert SIGNED.encode() not in req.content
    assert REDACTED.encode() not in req.content


# -- tool pairing ----------------------------------------------------------------------------


def two_calls() -> AssistantMessage:
    return AssistantMessage(
        None,
        [ToolCall("a1", "get_weather", {"city": "Paris"}), ToolCall("b2", "get_time", {"timezone": "CET"})],
        [Text("Two lookups.")],
    )


def test_parallel_tool_results_go_out_in_order(ollama_emulator: OllamaEmulator, ollama_client: ollama.Client) -> None:
    conv = start().append(two_calls(), ToolMessage("14:05", "b2"), ToolMessage("18 °C", "a1"))
    req = prepare(conv)
    assert req.body["messages"][3:] == [
        {"role": "tool", "content": "14:05", "tool_name": "get_time"},
        {"role": "tool", "content": "18 °C", "tool_name": "get_weather"},
    ]
    ollama_emulator.queue(Reply(content="ok"))
    ollama_client.chat(**req.body)


def test_unpaired_call_dropped_and_stray_result_sent_as_user_text(
    ollama_emulator: OllamaEmulator, ollama_client: ollama.Client
) -> None:
    conv = start().append(two_calls(), ToolMessage("18 °C", "a1"), ToolMessage("late", "zz9", is_error=True))
    req = prepare(conv)
    # Nothing sealed to lose, so the report names that rather than the pairing.
    assert [(e.index, e.reason) for e in req.report] == [(2, "no-sealed-thinking")]
    assert req.body["messages"][2:] == [
        {
            "role": "assistant",
            "content": "",
            "thinking": "Two lookups.",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
        {"role": "tool", "content": "18 °C", "tool_name": "get_weather"},
        {"role": "user", "content": "[tool result for call zz9 (error)]\nlate"},
    ]
    ollama_emulator.queue(Reply(content="ok"))
    ollama_client.chat(**req.body)
    # Sent as they stand, the unanswered call and the stray result are refused.
    raw = provider("ollama").prepare(start(), model=MODEL).body | {
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
            {"role": "user", "content": "y"},
        ]
    }
    assert httpx.post(ollama_emulator.base_url + "/api/chat", json=raw).status_code == 400


def test_error_results_are_marked() -> None:
    conv = start().append(two_calls(), ToolMessage("timeout", "a1", is_error=True), ToolMessage("14:05", "b2"))
    assert prepare(conv).body["messages"][3]["content"] == "[tool error] timeout"


def test_a_turn_with_only_thinking_still_goes_out() -> None:
    conv = start().append(AssistantMessage(None, [ToolCall("a1", "f", {})], [Text("Hmm.")]), UserMessage("Go on."))
    assert prepare(conv).body["messages"][2:] == [
        {"role": "assistant", "content": "", "thinking": "Hmm."},
        {"role": "user", "content": "Go on."},
    ]


def test_system_messages_stay_in_place() -> None:
    conv = start().append(AssistantMessage("Hi."), SystemMessage("Now be verbose."), UserMessage("More?"))
    assert [m["role"] for m in prepare(conv).body["messages"]] == ["system", "user", "assistant", "system", "user"]


def test_unchanged_turns_reuse_their_encoded_fragment() -> None:
    conv = start().append(two_calls(), ToolMessage("18 °C", "a1"), ToolMessage("14:05", "b2"))
    first = prepare(conv)
    second = prepare(conv.append(AssistantMessage("Done."), UserMessage("And tomorrow?")))
    assert second._encoded.items[2] is first._encoded.items[2]
    assert second.body["messages"][2] == first.body["messages"][2]


# -- generated ids -------------------------------------------------------------------------------


def test_generated_ids_follow_the_documented_rule() -> None:
    req = prepare(start())
    reply = req.receive(load("reply_tool_call.json"))
    assert [c.id for c in reply.tool_calls] == [ID_WEATHER, ID_TIME]
    # The same call in another reply (other thinking) gets another id, as does a repeat at another index.
    other = copy.deepcopy(load("reply_tool_call.json"))
    other["message"]["thinking"] = "Something else."
    other["message"]["tool_calls"][1] = other["message"]["tool_calls"][0]
    ids = [c.id for c in req.receive(other).tool_calls]
    assert len({*ids, ID_WEATHER}) == 3


# -- malformed and unusual replies ------------------------------------------------------------------


def mutate(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    body = copy.deepcopy(load("reply_tool_call.json"))
    change(body)
    return body


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        target: Any = body
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _drop(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        target: Any = body
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


CALL0 = ["message", "tool_calls", 0, "function"]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (_drop(["message"]), "$.message"),
        (_set(["message"], "hi"), "$.message"),
        (_set(["message", "content"], 3), "$.message.content"),
        (_set(["message", "thinking"], ["a"]), "$.message.thinking"),
        (_set(["message", "role"], "user"), "$.message.role"),
        (_set(["message", "tool_calls"], {"a": 1}), "$.message.tool_calls"),
        (_drop(CALL0), "$.message.tool_calls[0].function"),
        (_set([*CALL0, "name"], 7), "$.message.tool_calls[0].function.name"),
        (_drop([*CALL0, "arguments"]), "$.message.tool_calls[0].function.arguments"),
        (_set([*CALL0, "arguments"], 5), "$.message.tool_calls[0].function.arguments"),
        (_set([*CALL0, "arguments"], "{not json"), "$.message.tool_calls[0].function.arguments"),
        (_set([*CALL0, "arguments"], "[1, 2]"), "$.message.tool_calls[0].function.arguments"),
        (_set([*CALL0, "arguments"], {"x": float("nan")}), "$.message.tool_calls[0].function"),
        (_set(["message", "content"], "bad \ud800"), "$.message.content"),
        (_set(["done"], False), "$.done"),
        (_set(["done"], "yes"), "$.done"),
        (_drop(["done"]), "$.done"),
        (_set(["error"], "model 'qwen3:8b' not found"), "$.error"),
    ],
)
def test_malformed_replies_name_the_path(change: Callable[[dict[str, Any]], None], path: str) -> None:
    with pytest.raises(ResponseError) as caught:
        prepare(start()).receive(mutate(change))
    assert caught.value.path == path
    assert str(caught.value).startswith(path)


def test_unknown_fields_are_ignored() -> None:
    req = prepare(start())
    expected = req.receive(load("reply_tool_call.json"))
    body = mutate(_set(["x_new"], {"nested": [1]}))
    body["message"]["images"] = None
    body["message"]["x_field"] = "ignored"
    body["message"]["tool_calls"][0]["x_call"] = True
    body["message"]["tool_calls"][0]["id"] = "call_from_server"  # an id Ollama may add is ignored too
    assert req.receive(body) == expected
    events = lines("stream_tool_call.ndjson")
    for event in events:
        event["x_line"] = 1
    assert stream_reply(req, events) == expected


@pytest.mark.parametrize(
    ("events", "path"),
    [
        (lambda e: e[:-1], "$.done"),  # cut off before the done line
        (lambda e: [*e[:2], {"error": "an error was encountered while running the model"}], "$.error"),
        (lambda e: [*e, e[0]], "$"),  # a line after the done line
        (lambda e: [{"message": {"thinking": 3}, "done": False}], "$.message.thinking"),
        (lambda e: [{"message": "x", "done": True}], "$.message"),
        (lambda e: [{"message": {}, "done": "yes"}], "$.done"),
    ],
)
def test_broken_streams_raise(events: Callable[[list[dict[str, Any]]], list[dict[str, Any]]], path: str) -> None:
    req = prepare(start(), stream=True)
    with pytest.raises(ResponseError) as caught:
        stream_reply(req, events(lines("stream_tool_call.ndjson")))
    assert caught.value.path == path


def test_a_surrogate_pair_split_across_lines_is_rejoined() -> None:
    events = [
        {"message": {"role": "assistant", "content": "smile \ud83d"}, "done": False},
        {"message": {"role": "assistant", "content": "\ude00"}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True},
    ]
    assert stream_reply(prepare(start(), stream=True), events).content == "smile \U0001f600"


def test_emulated_stream_errors_and_cuts_raise(ollama_emulator: OllamaEmulator) -> None:
    ollama_emulator.queue(
        Reply(content="partial answer", cut=True), Reply(content="partial answer", error="model crashed")
    )
    for path in ("$.done", "$.error"):
        req = prepare(start(), stream=True)
        with httpx.stream(
            "POST", ollama_emulator.base_url + req.path, content=req.content, headers=req.headers
        ) as response:
            events = [json.loads(line) for line in response.iter_lines() if line]
        with pytest.raises(ResponseError) as caught:
            stream_reply(req, events)
        assert caught.value.path == path
