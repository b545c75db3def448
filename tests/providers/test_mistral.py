"""The ``mistral`` adapter: request bodies, replies and streams, checked against
recorded fixtures, the official ``mistralai`` SDK's models, and an emulated
``/v1/chat/completions`` (which signs thinking and checks the signatures it
gets back) driven through ``mistralai.Mistral``."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mistralai.client import Mistral
from mistralai.client.errors import SDKError
from mistralai.client.models import (
    ChatCompletionRequest,
    ChatCompletionResponse,
    ChatCompletionStreamRequest,
    CompletionChunk,
    CompletionEvent,
    ResponseFormat,
)

from thinkseal import (
    AssistantMessage,
    Conversation,
    Native,
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
from thinkseal.providers.mistral import wire_call_id
from thinkseal.testing import respond
from thinkseal.testing.mistral import MistralEmulator, Reply

from .support import assert_recognised

FIXTURES = Path(__file__).parent / "fixtures" / "mistral"
MODEL = "mistral-medium-3-5"
ORIGIN = Origin("mistral", MODEL)
Text = ThinkingBlock.Text

WEATHER = Tool(
    "get_weather",
    "Current weather for a city",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"],
    },
)
TIME = Tool("get_time", "Local time in a timezone", {"type": "object", "properties": {"timezone": {"type": "string"}}})
THINKING_1 = "The user wants the weather in Paris and the time there. Both tools can run at once."
SIGNATURE_1 = "bXN0LXNpZy0wMDE6dHVybjE="
THINKING_2 = "Both results are in; summarise them."
ANSWER = "It is 18 °C and sunny in Paris, and the local time is 14:05."
CALL_WEATHER = ToolCall("D681PevKs", "get_weather", {"city": "Paris", "unit": "celsius"})
CALL_TIME = ToolCall("kT9qWm2Lx", "get_time", {"timezone": "Europe/Paris"})


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def check_wire(req: PreparedRequest) -> None:
    """What every prepared body must satisfy: its bytes decode to it, and the
    SDK's request model knows every field of it."""
    assert json.loads(req.content) == req.body
    assert req.path == "/v1/chat/completions"
    model = ChatCompletionStreamRequest if req.body.get("stream") else ChatCompletionRequest
    assert_recognised(req.body, model.model_validate(req.body).model_dump(by_alias=True, mode="json"))


def prepare(conversation: Conversation, model: str = MODEL, **options: Any) -> PreparedRequest:
    req = provider("mistral").prepare(conversation, model=model, **options)
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


def thinking_chunk(text: str, signature: str | None = None) -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": "thinking", "thinking": [{"type": "text", "text": text}]}
    if signature is not None:
        chunk["signature"] = signature
    return chunk


def signature_of(message: AssistantMessage) -> str | None:
    """The signature of the turn's first thinking block."""
    block = message.thinking[0]
    assert isinstance(block, Text)
    return block.signature


def call_wire(call: ToolCall) -> dict[str, Any]:
    arguments = json.dumps(dict(call.arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}


def complete(client: Mistral, req: PreparedRequest) -> AssistantMessage:
    return req.receive(client.chat.complete(**req.body).model_dump())


def stream(client: Mistral, req: PreparedRequest) -> AssistantMessage:
    return stream_reply(req, [event.model_dump() for event in client.chat.stream(**req.body)])


# -- the full loop, on recorded fixtures ----------------------------------------------


def test_full_loop_with_exact_bodies() -> None:
    conv = start()
    req = prepare(conv, reasoning_effort="high")
    assert req.body == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather and time in Paris?"},
        ],
        "tools": [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in (WEATHER, TIME)
        ],
        "reasoning_effort": "high",
    }

    reply = req.receive(load("reply_tool_call.json"))
    assert reply.parts == (Text(THINKING_1, SIGNATURE_1), "Let me look both up.", CALL_WEATHER, CALL_TIME)
    assert reply.thinking_binding is not None
    assert reply.thinking_binding.origin == ORIGIN

    conv = conv.append(reply, ToolMessage("18 °C, sunny", CALL_WEATHER.id), ToolMessage("14:05", CALL_TIME.id))
    req = prepare(conv, reasoning_effort="high")
    assert [(e.index, e.reason) for e in req.report] == [(2, "kept")]
    assert req.body["messages"][2:] == [
        {
            "role": "assistant",
            "content": [thinking_chunk(THINKING_1, SIGNATURE_1), {"type": "text", "text": "Let me look both up."}],
            "tool_calls": [call_wire(CALL_WEATHER), call_wire(CALL_TIME)],
        },
        {"role": "tool", "tool_call_id": "D681PevKs", "name": "get_weather", "content": "18 °C, sunny"},
        {"role": "tool", "tool_call_id": "kT9qWm2Lx", "name": "get_time", "content": "14:05"},
    ]

    answer = req.receive(load("reply_answer.json"))
    assert answer == AssistantMessage.from_parts([Text(THINKING_2), ANSWER])
    assert answer.thinking_binding is None  # no signature: not sealed
    conv = conv.append(answer, UserMessage("Thanks!"))
    req = prepare(conv, reasoning_effort="high")
    assert [e.reason for e in req.report] == ["kept", "no-sealed-thinking"]
    assert req.body["messages"][5:] == [
        {"role": "assistant", "content": [thinking_chunk(THINKING_2), {"type": "text", "text": ANSWER}]},
        {"role": "user", "content": "Thanks!"},
    ]


@pytest.mark.parametrize(
    ("reply", "events"),
    [("reply_tool_call.json", "stream_tool_call.json"), ("reply_answer.json", "stream_answer.json")],
)
def test_stream_finish_equals_receive(reply: str, events: str) -> None:
    req = prepare(start(), stream=True)
    received = req.receive(load(reply))
    streamed = stream_reply(req, load(events))
    assert streamed == received
    assert streamed.parts == received.parts
    # The SDK's shapes read the same: ChatCompletionResponse.model_dump(), and
    # each CompletionEvent.model_dump() ({"data": chunk}) or CompletionChunk.model_dump().
    assert req.receive(ChatCompletionResponse.model_validate(load(reply)).model_dump()) == received
    assert stream_reply(req, [CompletionEvent.model_validate({"data": e}).model_dump() for e in load(events)]) == (
        received
    )
    assert stream_reply(req, [CompletionChunk.model_validate(e).model_dump() for e in load(events)]) == received


@pytest.mark.parametrize("name", ["reply_tool_call.json", "reply_answer.json"])
def test_recorded_replies_parse_with_the_sdk_model(name: str) -> None:
    parsed = ChatCompletionResponse.model_validate(load(name))
    message = parsed.choices[0].message
    assert message is not None
    assert isinstance(message.content, list)


@pytest.mark.parametrize("name", ["stream_tool_call.json", "stream_answer.json"])
def test_recorded_stream_events_parse_with_the_sdk_model(name: str) -> None:
    parsed = [CompletionChunk.model_validate(e) for e in load(name)]
    assert parsed[-1].choices[0].finish_reason is not None


# -- the loop against the emulator, through the official SDK --------------------------


def test_signed_loop_through_the_sdk(mistral_emulator: MistralEmulator, mistral_client: Mistral) -> None:
    mistral_emulator.queue(
        Reply(thinking="Call both.", tool_calls=[("aB3dE6gH9", "get_weather", {"city": "Paris"})], signed=True),
        Reply(thinking="Summarise.", content="18 °C.", signed=True),
        Reply(content="You're welcome."),
    )
    conv = start()
    req = prepare(conv, reasoning_effort="high")
    reply = complete(mistral_client, req)
    assert signature_of(reply)
    conv = conv.append(reply, ToolMessage("18 °C, sunny", "aB3dE6gH9"))

    req = prepare(conv, reasoning_effort="high", stream=True)
    assert [e.reason for e in req.report] == ["kept"]
    answer = stream(mistral_client, req)  # the emulator checked the replayed signature
    assert answer.parts == (Text("Summarise.", signature_of(answer)), "18 °C.")
    assert answer.thinking_binding is not None

    conv = conv.append(answer, UserMessage("Thanks!"))
    req = prepare(conv, reasoning_effort="high")
    assert [e.reason for e in req.report] == ["kept", "kept"]
    assert complete(mistral_client, req) == AssistantMessage("You're welcome.")
    sent = mistral_emulator.requests[-1].body["messages"]
    assert [c.get("signature") is not None for m in sent if m["role"] == "assistant" for c in m["content"]] == [
        True,
        True,
        False,
    ]


def test_sdk_stream_and_sdk_reply_of_the_same_reply_are_equal(
    mistral_emulator: MistralEmulator, mistral_client: Mistral
) -> None:
    scripted = Reply(
        thinking="Let me think about this carefully.",
        content="Calling the tool.",
        tool_calls=[("Zx81Qw7Er", "get_time", {"timezone": "UTC"})],
        signed=True,
    )
    mistral_emulator.queue(scripted, scripted)
    received = complete(mistral_client, prepare(start()))
    streamed = stream(mistral_client, prepare(start(), stream=True))
    assert streamed == received  # same parts, same signature, same binding (same prefix)
    assert received.has_sealed_thinking


def test_raw_bytes_are_accepted(mistral_emulator: MistralEmulator) -> None:
    mistral_emulator.queue(Reply(thinking="t", content="ok", signed=True))
    req = prepare(start())
    headers = {**req.headers, "authorization": "Bearer test-key"}
    response = httpx.post(mistral_emulator.base_url + req.path, content=req.content, headers=headers)
    assert response.status_code == 200
    assert req.receive(response.json()).content == "ok"


# -- histories that go out unsealed (and what the emulator does with stale signatures) ---------


def signed_history(server: MistralEmulator, client: Mistral) -> Conversation:
    """start() + a signed tool-call turn issued by the emulator + its tool result."""
    server.queue(
        Reply(thinking="Weather first.", tool_calls=[("aB3dE6gH9", "get_weather", {"city": "Paris"})], signed=True)
    )
    reply = complete(client, prepare(start()))
    return start().append(reply, ToolMessage("18 °C, sunny", "aB3dE6gH9"))


def assistant_chunks(req: PreparedRequest) -> list[dict[str, Any]]:
    turn = next(m for m in req.body["messages"] if m["role"] == "assistant")
    chunks: list[dict[str, Any]] = turn["content"]
    return chunks


def _prune(conv: Conversation) -> Conversation:
    return conv.with_messages(conv.messages[1:])


def _edit(conv: Conversation) -> Conversation:
    messages = list(conv.messages)
    messages[2] = messages[2].with_content("Looking it up.")  # type: ignore[attr-defined]
    return conv.with_messages(messages)


def _unbind(conv: Conversation) -> Conversation:
    messages = list(conv.messages)
    messages[2] = AssistantMessage.from_parts(messages[2].parts)  # type: ignore[attr-defined]
    return conv.with_messages(messages)


def _new_system_prompt(conv: Conversation) -> Conversation:
    return conv.with_messages([SystemMessage("You are verbose."), *conv.messages[1:]])


def _rethink(conv: Conversation) -> Conversation:
    messages = list(conv.messages)
    turn = messages[2]
    assert isinstance(turn, AssistantMessage)
    messages[2] = turn.with_thinking([Text("Weather first.", signature_of(turn))])  # same blocks, binding dropped
    return conv.with_messages(messages)


@pytest.mark.parametrize(
    ("change", "model", "reason", "stale_refused"),
    [
        (_prune, MODEL, "prefix-changed", True),
        (_new_system_prompt, MODEL, "prefix-changed", True),
        (lambda c: c.with_tools([WEATHER]), MODEL, "prefix-changed", True),
        (lambda c: c, "magistral-medium-latest", "origin-mismatch", True),
        # The emulator signs the thinking text and prefix only, so these two would
        # still pass it with the old signature; thinkseal does not vouch for them.
        (_edit, MODEL, "no-sealed-thinking", False),
        (_rethink, MODEL, "unbound", False),
        (_unbind, MODEL, "unbound", False),
    ],
)
def test_changed_histories_go_out_unsigned_with_their_thinking_text(
    change: Callable[[Conversation], Conversation],
    model: str,
    reason: str,
    stale_refused: bool,
    mistral_emulator: MistralEmulator,
    mistral_client: Mistral,
) -> None:
    conv = signed_history(mistral_emulator, mistral_client)
    kept = prepare(conv)
    assert [e.reason for e in kept.report] == ["kept"]
    signature = assistant_chunks(kept)[0]["signature"]

    req = prepare(change(conv), model=model)
    assert [e.reason for e in req.report] == [reason]
    assert assistant_chunks(req)[0] == thinking_chunk("Weather first.")  # the text, without its signature
    assert signature.encode() not in req.content
    mistral_emulator.queue(Reply(content="ok"))
    assert complete(mistral_client, req) == AssistantMessage("ok")

    # Sending the stale signature instead is what the emulator (like Mistral) refuses.
    stale = copy.deepcopy(req.body)
    next(m for m in stale["messages"] if m["role"] == "assistant")["content"][0]["signature"] = signature
    if stale_refused:
        with pytest.raises(SDKError) as caught:
            mistral_client.chat.complete(**stale)
        assert "invalid signature" in caught.value.body


def test_changed_thinking_text_with_its_old_signature_is_refused(
    mistral_emulator: MistralEmulator, mistral_client: Mistral
) -> None:
    conv = signed_history(mistral_emulator, mistral_client)
    stale = copy.deepcopy(prepare(conv).body)
    stale["messages"][2]["content"][0]["thinking"][0]["text"] = "Weather first, then time."
    with pytest.raises(SDKError) as caught:
        mistral_client.chat.complete(**stale)
    assert "invalid signature" in caught.value.body


def test_signed_turn_sent_to_another_provider_keeps_only_its_text(
    mistral_emulator: MistralEmulator, mistral_client: Mistral
) -> None:
    conv = signed_history(mistral_emulator, mistral_client)
    req = provider("ollama").prepare(conv, model="qwen3:8b")
    assert [e.reason for e in req.report] == ["origin-mismatch"]
    assert req.body["messages"][2]["thinking"] == "Weather first."
    assert b"signature" not in req.content


def test_another_account_does_not_get_the_signature(mistral_emulator: MistralEmulator, mistral_client: Mistral) -> None:
    conv = signed_history(mistral_emulator, mistral_client)
    req = provider("mistral", account="team-b").prepare(conv, model=MODEL)
    assert [e.reason for e in req.report] == ["origin-mismatch"]
    assert "signature" not in assistant_chunks(req)[0]


FOREIGN = AssistantMessage(
    "Checking.",
    [ToolCall("toolu_01A09q90qw90lq917835lq9", "get_weather", {"city": "Paris"})],
    [Text("I need the weather first.", "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds")],
)


def test_foreign_turns_go_out_unsigned_with_mistral_tool_call_ids(
    mistral_emulator: MistralEmulator, mistral_client: Mistral
) -> None:
    conv = respond(start(), Origin("anthropic", "claude-sonnet-4-5"), FOREIGN)
    conv = conv.append(ToolMessage("18 °C", "toolu_01A09q90qw90lq917835lq9"))
    req = prepare(conv)
    assert [e.reason for e in req.report] == ["origin-mismatch"]
    mapped = wire_call_id("toolu_01A09q90qw90lq917835lq9")
    assert len(mapped) == 9
    assert mapped.isalnum()
    assert mapped.isascii()
    assert req.body["messages"][2:] == [
        {
            "role": "assistant",
            "content": [thinking_chunk("I need the weather first."), {"type": "text", "text": "Checking."}],
            "tool_calls": [
                {"id": mapped, "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": mapped, "name": "get_weather", "content": "18 °C"},
    ]
    assert b"EqQBCgIYAhIM" not in req.content
    mistral_emulator.queue(Reply(content="ok"))
    assert complete(mistral_client, req) == AssistantMessage("ok")
    # The id as it was is what Mistral refuses.
    raw = copy.deepcopy(req.body)
    raw["messages"][2]["tool_calls"][0]["id"] = raw["messages"][3]["tool_call_id"] = "toolu_01A09q90qw90lq917835lq9"
    with pytest.raises(SDKError) as caught:
        mistral_client.chat.complete(**raw)
    assert json.loads(caught.value.body) == {
        "object": "error",
        "message": "Tool call id was toolu_01A09q90qw90lq917835lq9 but must be a-z, A-Z, 0-9, with a length of 9.",
        "type": "invalid_function_call",
        "param": None,
        "code": "3280",
    }


def test_an_ollama_turn_goes_to_mistral(mistral_emulator: MistralEmulator, mistral_client: Mistral) -> None:
    ollama_reply = (
        provider("ollama")
        .prepare(start(), model="qwen3:8b")
        .receive(
            {
                "message": {
                    "role": "assistant",
                    "content": "",
                    "thinking": "Look it up.",
                    "tool_calls": [{"function": {"name": "get_time", "arguments": {"timezone": "CET"}}}],
                },
                "done": True,
            }
        )
    )
    conv = start().append(ollama_reply, ToolMessage("14:05", ollama_reply.tool_calls[0].id))
    req = prepare(conv)
    assert req.body["messages"][2]["content"] == [thinking_chunk("Look it up.")]
    mistral_emulator.queue(Reply(content="ok"))
    complete(mistral_client, req)


def test_wire_call_ids() -> None:
    assert wire_call_id("D681PevKs") == "D681PevKs"  # Mistral's own ids go back unchanged
    assert wire_call_id("call_0fypS1hVX") == wire_call_id("call_0fypS1hVX")
    assert wire_call_id("call_0fypS1hVX") != wire_call_id("call_0fypS1hVY")
    assert all(len(wire_call_id(f"id-{i}")) == 9 for i in range(50))


# -- replay order and shapes -------------------------------------------------------------------


INTERLEAVED = {
    "id": "x",
    "object": "chat.completion",
    "model": MODEL,
    "created": 1,
    "usage": {},
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": [
                    thinking_chunk("First, plan.", "c2lnLTE="),
                    {"type": "text", "text": "Step one done."},
                    thinking_chunk("Now the tool.", "c2lnLTI="),
                    {"type": "text", "text": "Calling it."},
                ],
                "tool_calls": [call_wire(CALL_TIME)],
            },
        }
    ],
}


def test_a_kept_turn_is_replayed_part_by_part() -> None:
    req = prepare(start())
    reply = req.receive(INTERLEAVED)
    assert reply.parts == (
        Text("First, plan.", "c2lnLTE="),
        "Step one done.",
        Text("Now the tool.", "c2lnLTI="),
        "Calling it.",
        CALL_TIME,
    )
    req = prepare(start().append(reply, ToolMessage("14:05", CALL_TIME.id)))
    assert [e.reason for e in req.report] == ["kept"]
    assert req.body["messages"][2]["content"] == INTERLEAVED["choices"][0]["message"]["content"]  # type: ignore[index]


def test_an_unsealed_turn_sends_thinking_before_text() -> None:
    reply = AssistantMessage("Answer.", thinking=[Text("a"), Text("b")])
    req = prepare(start().append(reply, UserMessage("ok")))
    assert req.body["messages"][2] == {
        "role": "assistant",
        "content": [thinking_chunk("a"), thinking_chunk("b"), {"type": "text", "text": "Answer."}],
    }


def test_a_turn_without_thinking_sends_plain_content() -> None:
    req = prepare(start().append(AssistantMessage("Plain."), UserMessage("ok")))
    assert req.body["messages"][2] == {"role": "assistant", "content": "Plain."}


def test_redacted_and_opaque_blocks_never_go_out() -> None:
    reply = AssistantMessage(
        "Hi.",
        thinking=[ThinkingBlock.Redacted("cmVkYWN0ZWQ="), ThinkingBlock.Opaque("mistral", "b3BhcXVl"), Text("t", "s")],
    )
    conv = start().append(reply, UserMessage("ok")).rebind(ORIGIN)
    req = prepare(conv)
    assert [e.reason for e in req.report] == ["kept"]
    assert req.body["messages"][2]["content"] == [thinking_chunk("t", "s"), {"type": "text", "text": "Hi."}]


def test_reference_chunks_are_kept_in_place_and_unsign_their_thinking_block() -> None:
    body = copy.deepcopy(INTERLEAVED)
    message = body["choices"][0]["message"]  # type: ignore[index]
    message["content"][0]["thinking"].append({"type": "reference", "reference_ids": [1, 2]})
    message["content"].insert(1, {"type": "reference", "reference_ids": [3]})
    reply = prepare(start()).receive(body)
    reference = Native("mistral", '{"reference_ids":[3],"type":"reference"}')
    assert reply.parts[:3] == (Text("First, plan."), reference, "Step one done.")
    assert reply.parts[3] == Text("Now the tool.", "c2lnLTI=")
    # Back to Mistral in place; another provider gets nothing of it.
    conv = start().append(reply, ToolMessage("14:05", CALL_TIME.id))
    sent = prepare(conv).body["messages"][2]["content"]
    assert sent[1] == {"type": "reference", "reference_ids": [3]}
    assert b"reference_ids" not in provider("ollama").prepare(conv, model="qwen3:8b").content


# -- tool pairing --------------------------------------------------------------------------------


def two_calls() -> AssistantMessage:
    return AssistantMessage(None, [CALL_WEATHER, CALL_TIME], [Text("Two lookups.")])


def test_parallel_tool_results_go_out_in_order(mistral_emulator: MistralEmulator, mistral_client: Mistral) -> None:
    conv = start().append(two_calls(), ToolMessage("14:05", CALL_TIME.id), ToolMessage("18 °C", CALL_WEATHER.id))
    req = prepare(conv)
    assert req.body["messages"][3:] == [
        {"role": "tool", "tool_call_id": CALL_TIME.id, "name": "get_time", "content": "14:05"},
        {"role": "tool", "tool_call_id": CALL_WEATHER.id, "name": "get_weather", "content": "18 °C"},
    ]
    mistral_emulator.queue(Reply(content="ok"))
    complete(mistral_client, req)


def test_unpaired_call_dropped_and_stray_result_sent_as_user_text(
    mistral_emulator: MistralEmulator, mistral_client: Mistral
) -> None:
    mistral_emulator.queue(
        Reply(
            thinking="Both at once.",
            tool_calls=[
                ("aB3dE6gH9", "get_weather", {"city": "Paris"}),
                ("Tt5Tt5Tt5", "get_time", {"timezone": "CET"}),
            ],
            signed=True,
        )
    )
    reply = complete(mistral_client, prepare(start()))
    assert reply.has_sealed_thinking
    conv = start().append(reply, ToolMessage("18 °C", "aB3dE6gH9"), ToolMessage("too late", "Qq1Qq1Qq1"))
    req = prepare(conv)
    assert [(e.index, e.reason) for e in req.report] == [(2, "unpaired-tool-call")]
    assert req.body["messages"][2:] == [
        {
            "role": "assistant",
            "content": [thinking_chunk("Both at once.")],  # unsealed: no signature
            "tool_calls": [call_wire(ToolCall("aB3dE6gH9", "get_weather", {"city": "Paris"}))],
        },
        {"role": "tool", "tool_call_id": "aB3dE6gH9", "name": "get_weather", "content": "18 °C"},
        {"role": "user", "content": "[tool result for call Qq1Qq1Qq1]\ntoo late"},
    ]
    mistral_emulator.queue(Reply(content="ok"))
    complete(mistral_client, req)


def test_unpaired_call_unseals_a_bound_turn() -> None:
    conv = start().append(two_calls().with_thinking([Text("Two lookups.", "c2ln")]), ToolMessage("18", CALL_WEATHER.id))
    conv = conv.rebind(ORIGIN)
    req = prepare(conv.append(UserMessage("and?")))
    assert [e.reason for e in req.report] == ["unpaired-tool-call"]
    assert req.body["messages"][2] == {
        "role": "assistant",
        "content": [thinking_chunk("Two lookups.")],
        "tool_calls": [call_wire(CALL_WEATHER)],
    }


def test_unanswered_calls_are_what_the_emulator_refuses(
    mistral_emulator: MistralEmulator, mistral_client: Mistral
) -> None:
    body = prepare(start()).body | {
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": "", "tool_calls": [call_wire(CALL_TIME)]},
            {"role": "user", "content": "y"},
        ]
    }
    with pytest.raises(SDKError) as caught:
        mistral_client.chat.complete(**body)
    assert json.loads(caught.value.body)["message"] == "Not the same number of function calls and responses"


def test_a_turn_with_neither_text_nor_calls_is_left_out(
    mistral_emulator: MistralEmulator, mistral_client: Mistral
) -> None:
    conv = start().append(AssistantMessage(None, [CALL_TIME], [Text("Hmm.")]), UserMessage("Go on."))
    req = prepare(conv)
    assert [m["role"] for m in req.body["messages"]] == ["system", "user", "user"]
    mistral_emulator.queue(Reply(content="ok"))
    complete(mistral_client, req)


def test_a_system_message_among_tool_results_goes_after_them(
    mistral_emulator: MistralEmulator, mistral_client: Mistral
) -> None:
    conv = start().append(
        two_calls(),
        ToolMessage("18 °C", CALL_WEATHER.id),
        SystemMessage("Be brief."),
        ToolMessage("14:05", CALL_TIME.id),
        UserMessage("So?"),
    )
    req = prepare(conv)
    roles = [m["role"] for m in req.body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "system", "user"]
    mistral_emulator.queue(Reply(content="ok"))
    complete(mistral_client, req)


def test_error_results_are_marked() -> None:
    conv = start().append(
        two_calls(), ToolMessage("timeout", CALL_WEATHER.id, is_error=True), ToolMessage("1", CALL_TIME.id)
    )
    assert prepare(conv).body["messages"][3]["content"] == "[tool error] timeout"


def test_unchanged_turns_reuse_their_encoded_fragment() -> None:
    conv = start().append(two_calls(), ToolMessage("18 °C", CALL_WEATHER.id), ToolMessage("14:05", CALL_TIME.id))
    first = prepare(conv)
    second = prepare(conv.append(AssistantMessage("Done."), UserMessage("And tomorrow?")))
    assert second._encoded.items[2] is first._encoded.items[2]
    assert second.body["messages"][2] == first.body["messages"][2]


# -- options and response format ----------------------------------------------------------------


def test_options_pass_through_as_given(mistral_emulator: MistralEmulator, mistral_client: Mistral) -> None:
    req = prepare(
        start(), reasoning_effort="xhigh", max_tokens=512, temperature=0.3, top_p=0.9, tool_choice="any", random_seed=7
    )
    assert {k: req.body[k] for k in ("reasoning_effort", "max_tokens", "temperature", "top_p", "tool_choice")} == {
        "reasoning_effort": "xhigh",
        "max_tokens": 512,
        "temperature": 0.3,
        "top_p": 0.9,
        "tool_choice": "any",
    }
    assert "stream" not in req.body
    assert prepare(start(), stream=True).body["stream"] is True
    assert prepare(start(), prompt_mode="reasoning").body["prompt_mode"] == "reasoning"
    mistral_emulator.queue(Reply(content="ok"))
    complete(mistral_client, req)


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
        ({"prompt_mode": "thinking"}, "prompt_mode"),
        ({"max_tokens": -1}, "max_tokens"),
        ({"max_tokens": 1.5}, "max_tokens"),
        ({"temperature": -0.1}, "temperature"),
        ({"top_p": 1.5}, "top_p"),
        ({"n": 0}, "n"),
        ({"parallel_tool_calls": "yes"}, "parallel_tool_calls"),
        ({"stop": [1]}, "stop"),
        ({"tool_choice": "sometimes"}, "tool_choice"),
        ({"tool_choice": {"type": "function"}}, "tool_choice"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"tools": []}, "tools"),
        ({"messages": []}, "messages"),
        ({"metadata": {"x": float("inf")}}, "metadata.x"),
    ],
)
def test_bad_options_are_refused(options: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        provider("mistral").prepare(start(), model=MODEL, **options)
    assert caught.value.path == path


def test_every_documented_reasoning_effort_is_accepted(
    mistral_emulator: MistralEmulator, mistral_client: Mistral
) -> None:
    for effort in ("none", "minimal", "low", "medium", "high", "xhigh", "max"):
        mistral_emulator.queue(Reply(content="ok"))
        complete(mistral_client, prepare(start(), reasoning_effort=effort))
    # The emulator refuses what thinkseal refuses (sent raw: the SDK's model drops an unknown value).
    body = prepare(start()).body | {"reasoning_effort": "extreme"}
    response = httpx.post(
        mistral_emulator.url("/v1/chat/completions"), json=body, headers={"authorization": "Bearer k"}
    )
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["body", "reasoning_effort"]


SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


@pytest.mark.parametrize(
    "response_format",
    [
        {"type": "json_object"},
        {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True}},
        {"type": "text"},
    ],
)
def test_response_format_passes_through(
    response_format: dict[str, Any], mistral_emulator: MistralEmulator, mistral_client: Mistral
) -> None:
    req = prepare(start().with_response_format(response_format))
    assert req.body["response_format"] == response_format
    assert_recognised(response_format, ResponseFormat.model_validate(response_format).model_dump(by_alias=True))
    mistral_emulator.queue(Reply(content='{"answer": "yes"}'))
    complete(mistral_client, req)


@pytest.mark.parametrize(
    "response_format",
    [
        {"type": "json_schema", "json_schema": {"name": "a"}},
        {"type": "json_schema", "json_schema": {"schema": SCHEMA}},
        {"type": "grammar", "grammar": "x"},
    ],
)
def test_response_format_mistral_cannot_take_is_refused(response_format: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        provider("mistral").prepare(start().with_response_format(response_format), model=MODEL)


# -- malformed and unusual replies -------------------------------------------------------------------


def mutate(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    body: dict[str, Any] = copy.deepcopy(load("reply_tool_call.json"))
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


M = ["choices", 0, "message"]
C = "$.choices[0].message"


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (_drop(["choices"]), "$.choices"),
        (_set(["choices"], []), "$.choices"),
        (_set(["choices", 0], "x"), "$.choices[0]"),
        (_drop(M), f"{C}"),
        (_set([*M, "content"], 5), f"{C}.content"),
        (_drop([*M, "content", 1, "type"]), f"{C}.content[1].type"),
        (_set([*M, "content", 1, "text"], None), f"{C}.content[1].text"),
        (_set([*M, "content", 0, "thinking"], "text"), f"{C}.content[0].thinking"),
        (_set([*M, "content", 0, "thinking", 0], "text"), f"{C}.content[0].thinking[0]"),
        (_set([*M, "content", 0, "thinking", 1, "text"], 3), f"{C}.content[0].thinking[1].text"),
        (_set([*M, "content", 0, "signature"], 12), f"{C}.content[0].signature"),
        (_set([*M, "content", 1, "text"], "bad \ud800"), f"{C}.content[1].text"),
        (_set([*M, "tool_calls"], {}), f"{C}.tool_calls"),
        (_drop([*M, "tool_calls", 0, "id"]), f"{C}.tool_calls[0].id"),
        (_set([*M, "tool_calls", 0, "type"], "retrieval"), f"{C}.tool_calls[0].type"),
        (_drop([*M, "tool_calls", 0, "function"]), f"{C}.tool_calls[0].function"),
        (_drop([*M, "tool_calls", 0, "function", "name"]), f"{C}.tool_calls[0].function.name"),
        (_set([*M, "tool_calls", 0, "function", "arguments"], "{oops"), f"{C}.tool_calls[0].function.arguments"),
        (_set([*M, "tool_calls", 0, "function", "arguments"], 4), f"{C}.tool_calls[0].function.arguments"),
        (_drop([*M, "tool_calls", 0, "function", "arguments"]), f"{C}.tool_calls[0].function.arguments"),
        (_set(["choices", 0, "finish_reason"], "error"), "$.choices[0].finish_reason"),
        (_set(["object"], "error"), "$.message"),
        (lambda b: (b.clear(), b.update(detail=[{"type": "extra_forbidden", "loc": ["body", "x"]}])), "$.detail"),
    ],
)
def test_malformed_replies_name_the_path(change: Callable[[dict[str, Any]], None], path: str) -> None:
    with pytest.raises(ResponseError) as caught:
        prepare(start()).receive(mutate(change))
    assert caught.value.path == path
    assert str(caught.value).startswith(path)


def test_plain_string_content_and_object_arguments_are_read() -> None:
    body = mutate(_set([*M, "content"], "Just text."))
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = {"city": "Paris", "unit": "celsius"}
    reply = prepare(start()).receive(body)
    assert reply.parts == ("Just text.", CALL_WEATHER, CALL_TIME)
    assert reply.thinking_binding is None


def test_unknown_fields_are_ignored() -> None:
    req = prepare(start())
    expected = req.receive(load("reply_tool_call.json"))
    body = mutate(_set(["x_new"], {"a": [1]}))
    message = body["choices"][0]["message"]
    message["x_field"] = 1
    message["content"][0]["closed"] = True
    message["content"][0]["thinking"][0]["x_chunk"] = "y"
    message["tool_calls"][0]["x_call"] = None
    body["choices"][0]["x_choice"] = {}
    assert req.receive(body) == expected
    events = load("stream_tool_call.json")
    for event in events:
        event["x_event"] = True
        event["choices"][0]["delta"]["x_delta"] = 1
    assert stream_reply(req, events) == expected


@pytest.mark.parametrize(
    ("events", "path"),
    [
        (lambda e: e[:-1], "$.choices[0].finish_reason"),  # cut off
        (lambda e: [*e[:2], {"object": "error", "message": "Service unavailable"}], "$.message"),
        (lambda e: [{"choices": [{"index": 0, "delta": {"content": 4}}]}], "$.choices[0].delta.content"),
        (
            lambda e: [{"choices": [{"index": 0, "delta": {"content": [{"text": "no type"}]}}]}],
            "$.choices[0].delta.content[0].type",
        ),
        (lambda e: [{"data": {"choices": "x"}}], "$.data.choices"),
        (
            lambda e: [
                {
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"tool_calls": [{"function": {"name": "f"}}]},
                            "finish_reason": "tool_calls",
                        }
                    ]
                }
            ],
            "$.choices[0].delta.tool_calls[0].id",
        ),
    ],
)
def test_broken_streams_raise(events: Callable[[list[dict[str, Any]]], list[dict[str, Any]]], path: str) -> None:
    req = prepare(start(), stream=True)
    with pytest.raises(ResponseError) as caught:
        stream_reply(req, events(load("stream_tool_call.json")))
    assert caught.value.path == path


def test_a_reply_without_a_signature_is_not_sealed_when_streamed() -> None:
    events = load("stream_tool_call.json")
    for event in events:
        for chunk in event["choices"][0]["delta"].get("content") or []:
            if isinstance(chunk, dict):
                chunk.pop("signature", None)
    reply = stream_reply(prepare(start(), stream=True), events)
    assert reply.thinking == (Text(THINKING_1),)
    assert reply.thinking_binding is None


def test_streamed_tool_call_arguments_may_arrive_in_fragments() -> None:
    def event(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = [
        event(
            {"tool_calls": [{"id": "D681PevKs", "index": 0, "function": {"name": "get_weather", "arguments": '{"ci'}}]}
        ),
        event({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Paris", "unit": "celsius"}'}}]}),
        event({"tool_calls": [{"id": "kT9qWm2Lx", "index": 1, "function": {"name": "get_time", "arguments": "{}"}}]}),
        event({}, "tool_calls"),
    ]
    reply = stream_reply(prepare(start(), stream=True), events)
    assert reply.tool_calls == (CALL_WEATHER, ToolCall("kT9qWm2Lx", "get_time", {}))


def test_emulated_cut_stream_raises(mistral_emulator: MistralEmulator, mistral_client: Mistral) -> None:
    mistral_emulator.queue(Reply(thinking="t", content="partial", cut=True))
    req = prepare(start(), stream=True)
    events = [event.model_dump() for event in mistral_client.chat.stream(**req.body)]
    with pytest.raises(ResponseError) as caught:
        stream_reply(req, events)
    assert caught.value.path == "$.choices[0].finish_reason"
