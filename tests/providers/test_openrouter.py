"""OpenRouter: reasoning text plus reasoning_details items, each kept as an
Opaque block and replayed byte-for-byte only while the turn is kept
(python/thinkseal/providers/openrouter.py)."""

from __future__ import annotations

import copy
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
from thinkseal.testing.chat import (
    ANTHROPIC_BOUND_ELSEWHERE,
    ANTHROPIC_INVALID_SIGNATURE,
    ANTHROPIC_MODIFIED,
    ChatEmulator,
    Turn,
)

from .support import check_request, fixture, sdk_create

MODEL = "anthropic/claude-sonnet-4.5"
CALL_ID = "toolu_01A09q90qw90lq917835lq9"
WEATHER = Tool("get_weather", "Weather of a city", {"type": "object", "properties": {"city": {"type": "string"}}})
TOOL_WIRE = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
# The fixture's reasoning_details items, as thinkseal stores them: compact JSON, keys sorted.
ITEMS = [
    '{"format":"anthropic-claude-v1","id":"reasoning-summary-1","index":0,"summary":"Analyzed the weather request.",'
    '"type":"reasoning.summary"}',
    '{"data":"eyJlbmNyeXB0ZWQiOiJ0cnVlIn0=","format":"anthropic-claude-v1","id":"reasoning-encrypted-1","index":1,'
    '"type":"reasoning.encrypted"}',
    '{"format":"anthropic-claude-v1","id":"reasoning-text-1","index":2,"signature":"EqQBCkgIARABGAIiQL8xWm3pY1c0qvZ2Pz9Qe4rT",'
    '"text":"I need the weather in Paris first.","type":"reasoning.text"}',
]


def start() -> Conversation:
    return Conversation([SystemMessage("You are a weather bot."), UserMessage("Weather in Paris?")], tools=[WEATHER])


def stream(req: thinkseal.PreparedRequest, events: list[dict[str, Any]]) -> AssistantMessage:
    acc = req.stream()
    for event in events:
        acc.feed(event)
    return acc.finish()


def loop_once(model: str = MODEL, account: str | None = None) -> tuple[Conversation, AssistantMessage]:
    """The fixture reply to ``start()`` with its tool result appended."""
    reply = (
        thinkseal.provider("openrouter", account)
        .prepare(start(), model=model)
        .receive(fixture("openrouter", "tool_call"))
    )
    return start().append(reply, ToolMessage("20°C, sunny", CALL_ID)), reply


def assistant(body: dict[str, Any], n: int = 0) -> dict[str, Any]:
    turns: list[dict[str, Any]] = [m for m in body["messages"] if m["role"] == "assistant"]
    return turns[n]


@pytest.fixture
def emulator() -> Iterator[ChatEmulator]:
    with ChatEmulator("openrouter") as emu:
        yield emu


def test_fixtures_parse_with_the_sdk() -> None:
    for name in ("tool_call", "final_answer"):
        ChatCompletion.model_validate(fixture("openrouter", name))
    for event in fixture("openrouter", "tool_call.stream"):
        ChatCompletionChunk.model_validate(event)


def test_receive_keeps_text_then_each_item_in_order() -> None:
    req = thinkseal.provider("openrouter").prepare(start(), model=MODEL)
    reply = req.receive(fixture("openrouter", "tool_call"))
    assert reply.parts == (
        ThinkingBlock.Text("I need the weather in Paris first."),
        *(ThinkingBlock.Opaque("openrouter", item) for item in ITEMS),
        ToolCall(CALL_ID, "get_weather", {"city": "Paris"}),
    )
    assert reply.has_sealed_thinking
    assert reply.thinking_binding is not None
    assert reply.thinking_binding.origin == Origin("openrouter", MODEL)
    items = fixture("openrouter", "tool_call")["choices"][0]["message"]["reasoning_details"]
    assert [json.loads(b.data) for b in reply.thinking[1:]] == items  # type: ignore[attr-defined]
    sdk = ChatCompletion.model_validate(fixture("openrouter", "tool_call")).model_dump()
    assert req.receive(sdk) == reply


def test_full_loop_exact_body() -> None:
    p = thinkseal.provider("openrouter")
    options: dict[str, Any] = {"reasoning": {"effort": "high"}, "max_tokens": 4096}
    req = p.prepare(start(), model=MODEL, **options)
    assert check_request(req, "openrouter") == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You are a weather bot."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "tools": [TOOL_WIRE],
        **options,
    }
    conv = start().append(req.receive(fixture("openrouter", "tool_call")), ToolMessage("20°C, sunny", CALL_ID))
    req = p.prepare(conv, model=MODEL, **options)
    assert [(e.index, e.reason) for e in req.report] == [(2, "kept")]
    assert check_request(req, "openrouter") == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You are a weather bot."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "reasoning": "I need the weather in Paris first.",
                "reasoning_details": [json.loads(item) for item in ITEMS],
                "tool_calls": [
                    {
                        "id": CALL_ID,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": CALL_ID, "content": "20°C, sunny"},
        ],
        "tools": [TOOL_WIRE],
        **options,
    }
    # Byte for byte: the stored items go on the wire exactly, in order.
    assert ('"reasoning_details":[' + ",".join(ITEMS) + "]").encode() in req.content
    final = req.receive(fixture("openrouter", "final_answer"))
    assert final.content == "It is 20°C and sunny in Paris."
    conv = conv.append(final, UserMessage("Thanks!"))
    req = p.prepare(conv, model=MODEL, **options)
    assert [e.reason for e in req.report] == ["kept", "kept"]
    assert (
        assistant(req.body, 1)["reasoning_details"]
        == fixture("openrouter", "final_answer")["choices"][0]["message"]["reasoning_details"]
    )


def test_streamed_reply_equals_received() -> None:
    p = thinkseal.provider("openrouter")
    req = p.prepare(start(), model=MODEL, stream=True)
    assert check_request(req, "openrouter")["stream"] is True
    streamed = stream(req, fixture("openrouter", "tool_call.stream"))
    received = req.receive(fixture("openrouter", "tool_call"))
    assert streamed == received
    assert streamed.parts == received.parts
    sdk_events = [ChatCompletionChunk.model_validate(e).model_dump() for e in fixture("openrouter", "tool_call.stream")]
    assert stream(req, sdk_events) == received
    conv = start().append(streamed, ToolMessage("20°C, sunny", CALL_ID))
    assert [e.reason for e in p.prepare(conv, model=MODEL).report] == ["kept"]


def test_signature_only_fragment_joins_its_item() -> None:
    def delta(**fields: Any) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}

    events = [
        delta(
            reasoning="Let me",
            # Some routes open the item with an empty signature: a placeholder, not the value.
            reasoning_details=[
                {"type": "reasoning.text", "text": "Let me", "signature": "", "format": "f", "index": 0}
            ],
        ),
        delta(
            reasoning=" think.",
            reasoning_details=[{"type": "reasoning.text", "text": " think.", "format": "f", "index": 0}],
        ),
        delta(
            reasoning_details=[{"type": "reasoning.text", "text": "", "signature": "EqQB", "format": "f", "index": 0}]
        ),
        delta(
            reasoning_details=[{"type": "reasoning.text", "signature": "", "index": 0}]
        ),  # empty: the last non-empty wins
        delta(content="Hi."),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    reply = stream(thinkseal.provider("openrouter").prepare(start(), model=MODEL, stream=True), events)
    assert reply.thinking == (
        ThinkingBlock.Text("Let me think."),
        ThinkingBlock.Opaque(
            "openrouter", '{"format":"f","index":0,"signature":"EqQB","text":"Let me think.","type":"reasoning.text"}'
        ),
    )


def test_fragments_merge_by_index_and_type() -> None:
    def details(*items: dict[str, Any]) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": {"reasoning_details": list(items)}}]}

    events = [
        details({"type": "reasoning.text", "text": "Gemini ", "index": 0}),
        details(
            {
                "type": "reasoning.encrypted",
                "data": "sig-part",
                "id": "tool_1",
                "format": "google-gemini-v1",
                "index": 0,
            }
        ),
        details({"type": "reasoning.text", "text": "thought", "index": 0, "format": "google-gemini-v1"}),
        details({"type": "reasoning.summary", "summary": "S1"}, {"type": "reasoning.summary", "summary": "+S2"}),
        {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]},
    ]
    reply = stream(thinkseal.provider("openrouter").prepare(start(), model=MODEL, stream=True), events)
    assert [json.loads(b.data) for b in reply.thinking] == [  # type: ignore[attr-defined]
        {"type": "reasoning.text", "text": "Gemini thought", "index": 0, "format": "google-gemini-v1"},
        {"type": "reasoning.encrypted", "data": "sig-part", "id": "tool_1", "format": "google-gemini-v1", "index": 0},
        {"type": "reasoning.summary", "summary": "S1+S2"},  # no index: continues the item before it
    ]


def test_unknown_item_types_are_kept_opaque() -> None:
    response = copy.deepcopy(fixture("openrouter", "final_answer"))
    tool_item = {"type": "reasoning.server_tool_call", "name": "web_search", "payload": {"q": "paris"}, "index": 1}
    response["choices"][0]["message"]["reasoning_details"].append(tool_item)
    reply = thinkseal.provider("openrouter").prepare(start(), model=MODEL).receive(response)
    assert json.loads(reply.thinking[-1].data) == tool_item  # type: ignore[attr-defined]


def test_null_fields_do_not_change_an_item() -> None:
    response = copy.deepcopy(fixture("openrouter", "final_answer"))
    plain = thinkseal.provider("openrouter").prepare(start(), model=MODEL).receive(response)
    response["choices"][0]["message"]["reasoning_details"][0].update(id=None, summary=None)
    assert thinkseal.provider("openrouter").prepare(start(), model=MODEL).receive(response).parts == plain.parts


@pytest.mark.parametrize(
    ("item", "path"),
    [
        ("text", "$.choices[0].message.reasoning_details[0]"),
        ({"text": "x"}, "$.choices[0].message.reasoning_details[0].type"),
        ({"type": 3}, "$.choices[0].message.reasoning_details[0].type"),
        ({"type": "reasoning.summary", "id": "s"}, "$.choices[0].message.reasoning_details[0].summary"),
        ({"type": "reasoning.encrypted"}, "$.choices[0].message.reasoning_details[0].data"),
        (
            {"type": "reasoning.text", "text": "t", "signature": 5},
            "$.choices[0].message.reasoning_details[0].signature",
        ),
        ({"type": "reasoning.text", "text": "\udc00"}, "$.choices[0].message.reasoning_details[0].text"),
        ({"type": "reasoning.text", "text": "t", "index": "0"}, "$.choices[0].message.reasoning_details[0].index"),
        ({"type": "reasoning.text", "text": "t", "extra": float("nan")}, "$.choices[0].message.reasoning_details[0]"),
    ],
)
def test_malformed_item_names_the_path(item: Any, path: str) -> None:
    response = copy.deepcopy(fixture("openrouter", "final_answer"))
    response["choices"][0]["message"]["reasoning_details"] = [item]
    with pytest.raises(ResponseError) as err:
        thinkseal.provider("openrouter").prepare(start(), model=MODEL).receive(response)
    assert err.value.path == path


@pytest.mark.parametrize(
    ("fragment", "path"),
    [
        ({"text": "x", "index": 0}, "$.choices[0].delta.reasoning_details[0].type"),
        ({"type": "reasoning.text", "text": 1, "index": 0}, "$.choices[0].delta.reasoning_details[0].text"),
        ({"type": "reasoning.text", "index": 0.5}, "$.choices[0].delta.reasoning_details[0].index"),
    ],
)
def test_malformed_fragment_names_the_path(fragment: dict[str, Any], path: str) -> None:
    acc = thinkseal.provider("openrouter").prepare(start(), model=MODEL, stream=True).stream()
    with pytest.raises(ResponseError) as err:
        acc.feed({"choices": [{"index": 0, "delta": {"reasoning_details": [fragment]}}]})
    assert err.value.path == path


def test_streamed_item_missing_its_required_field_fails_at_finish() -> None:
    acc = thinkseal.provider("openrouter").prepare(start(), model=MODEL, stream=True).stream()
    acc.feed({"choices": [{"index": 0, "delta": {"reasoning_details": [{"type": "reasoning.encrypted", "index": 0}]}}]})
    acc.feed({"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "stop"}]})
    with pytest.raises(ResponseError) as err:
        acc.finish()
    assert err.value.path == "$.choices[0].delta.reasoning_details[0].data"


# -- through the emulator (it signs its items over the prefix and checks them) -------------------


def sdk_turn(client: openai.OpenAI, req: thinkseal.PreparedRequest) -> AssistantMessage:
    if req.body.get("stream"):
        acc = req.stream()
        for event in sdk_create(client, check_request(req, "openrouter")):
            acc.feed(event.model_dump())
        return acc.finish()
    return req.receive(sdk_create(client, check_request(req, "openrouter")).model_dump())


def test_emulator_loop_replays_items_it_accepts(emulator: ChatEmulator) -> None:
    emulator.reply(
        Turn(reasoning="Weather first.", tool_calls=[("call_1", "get_weather", {"city": "Paris"})], encrypted=True)
    )
    emulator.reply(Turn(reasoning="Now Lyon.", tool_calls=[("call_2", "get_weather", {"city": "Lyon"})]))
    emulator.reply(Turn(reasoning="Both known.", content="Paris sunny, Lyon rainy."))
    client = emulator.client()
    p = thinkseal.provider("openrouter")
    conv = start()
    conv = conv.append(sdk_turn(client, p.prepare(conv, model=MODEL)), ToolMessage("sunny", "call_1"))
    conv = conv.append(sdk_turn(client, p.prepare(conv, model=MODEL, stream=True)), ToolMessage("rainy", "call_2"))
    req = p.prepare(conv, model=MODEL, reasoning={"effort": "low"})
    assert [e.reason for e in req.report] == ["kept", "kept"]
    assert sdk_turn(client, req).content == "Paris sunny, Lyon rainy."
    sent = emulator.requests[-1].body["messages"]
    assert [len(m["reasoning_details"]) for m in sent if m["role"] == "assistant"] == [2, 1]


def test_emulator_rejects_modified_foreign_and_rebound_items(emulator: ChatEmulator) -> None:
    emulator.reply(
        Turn(reasoning="Weather first.", tool_calls=[("call_1", "get_weather", {"city": "Paris"})], encrypted=True)
    )
    client = emulator.client()
    p = thinkseal.provider("openrouter")
    conv = start().append(sdk_turn(client, p.prepare(start(), model=MODEL)), ToolMessage("sunny", "call_1"))
    body = p.prepare(conv, model=MODEL).body
    sdk_create(client, body)

    def with_details(details: list[Any], messages: list[Any] | None = None, **top: Any) -> dict[str, Any]:
        out: dict[str, Any] = json.loads(json.dumps({**body, **top}))
        if messages is not None:
            out["messages"] = messages
        next(m for m in out["messages"] if m["role"] == "assistant")["reasoning_details"] = details
        return out

    items = assistant(body)["reasoning_details"]
    tampered = [{**items[0], "text": "Weather first!"}, items[1]]
    foreign = [json.loads(ITEMS[2])]
    cases = [
        (with_details(tampered), ANTHROPIC_MODIFIED.format(i=2, j=0)),
        (with_details(items[::-1]), ANTHROPIC_MODIFIED.format(i=2, j=0)),
        (with_details(items[:1]), ANTHROPIC_MODIFIED.format(i=2, j=0)),
        (with_details(foreign), ANTHROPIC_INVALID_SIGNATURE.format(i=2, j=0)),
        (with_details(items, model="openai/gpt-5"), ANTHROPIC_INVALID_SIGNATURE.format(i=2, j=0)),
        (with_details(items, json.loads(json.dumps(body["messages"][1:]))), ANTHROPIC_BOUND_ELSEWHERE.format(i=1, j=0)),
    ]
    for bad, message in cases:
        with pytest.raises(openai.BadRequestError) as err:
            sdk_create(client, bad)
        assert err.value.body["message"] == message  # type: ignore[index]


def test_raw_request_bytes_are_accepted(emulator: ChatEmulator) -> None:
    emulator.reply(
        Turn(reasoning="Weather first.", tool_calls=[("call_1", "get_weather", {"city": "Paris"})], encrypted=True)
    )
    p = thinkseal.provider("openrouter")
    req = p.prepare(start(), model=MODEL)
    reply = req.receive(httpx.post(emulator.url(req.path), content=req.content).json())
    req = p.prepare(start().append(reply, ToolMessage("sunny", "call_1")), model=MODEL)
    response = httpx.post(emulator.url(req.path), content=req.content)
    assert response.status_code == 200, response.text
    assert emulator.requests[-1].raw == req.content


# -- histories that no longer hold: text only, never the items -------------------------------------


def unsealed_variants() -> list[tuple[str, Conversation, str, str]]:
    """(case, conversation, model, expected report reason) for one fixture turn."""
    conv, reply = loop_once()
    tool = conv.messages[3]
    edited = reply.with_content("Checking the weather.")
    stored = reply.to_dict()  # a stored copy edited in place, binding and items still on it
    stored["parts"][-1]["arguments"] = {"city": "Lyon"}
    tampered = thinkseal.message_from_dict(stored)
    assert isinstance(tampered, AssistantMessage)
    assert tampered.thinking_binding is not None
    return [
        ("pruned", conv.with_messages(conv.messages[1:]), MODEL, "prefix-changed"),
        (
            "system changed",
            conv.with_messages([SystemMessage("Be brief."), *conv.messages[1:]]),
            MODEL,
            "prefix-changed",
        ),
        ("tools changed", conv.with_tools([WEATHER, Tool("get_time")]), MODEL, "prefix-changed"),
        ("edited", conv.with_messages([*conv.messages[:2], edited, tool]), MODEL, "no-sealed-thinking"),
        ("edited in storage", conv.with_messages([*conv.messages[:2], tampered, tool]), MODEL, "turn-changed"),
        ("other model", conv, "google/gemini-3-pro", "origin-mismatch"),
        (
            "unbound",
            conv.with_messages([*conv.messages[:2], AssistantMessage.from_parts(reply.parts), tool]),
            MODEL,
            "unbound",
        ),
    ]


@pytest.mark.parametrize("case", [v[0] for v in unsealed_variants()])
def test_changed_history_goes_out_with_reasoning_text_only(case: str, emulator: ChatEmulator) -> None:
    _, conv, model, reason = next(v for v in unsealed_variants() if v[0] == case)
    req = thinkseal.provider("openrouter").prepare(conv, model=model)
    assert [e.reason for e in req.report] == [reason]
    body = check_request(req, "openrouter")
    turn = assistant(body)
    assert turn["reasoning"] == "I need the weather in Paris first."
    assert "reasoning_details" not in turn
    for secret in (
        b"EqQBCkgIARABGAIiQL8xWm3pY1c0qvZ2Pz9Qe4rT",
        b"eyJlbmNyeXB0ZWQiOiJ0cnVlIn0=",
        b"reasoning-summary-1",
    ):
        assert secret not in req.content
    sdk_create(emulator.client(), req.body)


def test_other_account_does_not_get_the_items() -> None:
    conv, _ = loop_once(account="team-a")
    assert [e.reason for e in thinkseal.provider("openrouter", account="team-a").prepare(conv, model=MODEL).report] == [
        "kept"
    ]
    req = thinkseal.provider("openrouter", account="team-b").prepare(conv, model=MODEL)
    assert [e.reason for e in req.report] == ["origin-mismatch"]
    assert "reasoning_details" not in assistant(req.body)


def test_unsealing_a_turn_unseals_every_later_turn() -> None:
    conv, _ = loop_once()
    req = thinkseal.provider("openrouter").prepare(conv, model=MODEL)
    final = req.receive(fixture("openrouter", "final_answer"))
    conv = conv.append(final, UserMessage("More?"))
    pruned = conv.with_messages([m for i, m in enumerate(conv.messages) if i != 1])
    req = thinkseal.provider("openrouter").prepare(pruned, model=MODEL)
    assert [e.reason for e in req.report] == ["prefix-changed", "prefix-changed"]
    assert all("reasoning_details" not in m for m in req.body["messages"])


def test_items_go_to_no_other_provider() -> None:
    conv, reply = loop_once()
    for other in ("deepseek", "zai"):
        req = thinkseal.provider(other).prepare(conv, model=MODEL)
        assert [e.reason for e in req.report] == ["origin-mismatch"]
        turn = assistant(check_request(req, other))
        assert turn["reasoning_content"] == reply.thinking_text
        assert b"reasoning_details" not in req.content
        assert b"EqQBCkgIARABGAIiQL8xWm3pY1c0qvZ2Pz9Qe4rT" not in req.content


def test_foreign_opaque_and_signed_blocks_never_go_to_openrouter() -> None:
    turn = AssistantMessage(
        None,
        [ToolCall("c1", "get_weather", {"city": "Paris"})],
        [
            ThinkingBlock.Text("Claude thinks.", signature="SIG-A"),
            ThinkingBlock.Redacted("RED-A"),
            ThinkingBlock.Opaque("mistral", "M-DATA"),
        ],
    )
    conv = respond(start(), Origin("anthropic", "claude-sonnet-4-5"), turn).append(ToolMessage("sunny", "c1"))
    req = thinkseal.provider("openrouter").prepare(conv, model=MODEL)
    assert assistant(check_request(req, "openrouter")) == {
        "role": "assistant",
        "content": None,
        "reasoning": "Claude thinks.",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
        ],
    }
    # Even a turn bound to this very origin sends only its own provider's Opaque items.
    bound = respond(start(), Origin("openrouter", MODEL), turn).append(ToolMessage("sunny", "c1"))
    req = thinkseal.provider("openrouter").prepare(bound, model=MODEL)
    assert [e.reason for e in req.report] == ["kept"]
    assert "reasoning_details" not in assistant(req.body)
    for secret in (b"M-DATA", b"SIG-A", b"RED-A"):
        assert secret not in req.content


def test_hand_made_openrouter_block_that_is_not_json_is_refused() -> None:
    turn = AssistantMessage("Hi.", thinking=[ThinkingBlock.Opaque("openrouter", "not json")])
    conv = respond(start(), Origin("openrouter", MODEL), turn).append(UserMessage("?"))
    with pytest.raises(ValidationError) as err:
        thinkseal.provider("openrouter").prepare(conv, model=MODEL)
    assert err.value.path == "AssistantMessage.thinking[0].data"


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"reasoning": {"effort": "ultra"}}, "reasoning.effort"),
        ({"reasoning": {"effort": "high", "max_tokens": 2000}}, "reasoning.max_tokens"),
        ({"reasoning": {"max_tokens": -1}}, "reasoning.max_tokens"),
        ({"reasoning": {"exclude": "yes"}}, "reasoning.exclude"),
        ({"reasoning": {"enabled": 1}}, "reasoning.enabled"),
        ({"reasoning": {"context": "everything"}}, "reasoning.context"),
        ({"reasoning": "high"}, "reasoning"),
        ({"include_reasoning": "true"}, "include_reasoning"),
        ({"temperature": 3}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
    ],
)
def test_invalid_options(options: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as err:
        thinkseal.provider("openrouter").prepare(start(), model=MODEL, **options)
    assert err.value.path == path


def test_documented_options_pass_through() -> None:
    options: dict[str, Any] = {
        "reasoning": {
            "max_tokens": 2000,
            "exclude": False,
            "enabled": True,
            "context": "all_turns",
            "mode": "standard",
        },
        "provider": {"order": ["anthropic"], "allow_fallbacks": False},
        "temperature": 1,
    }
    body = check_request(thinkseal.provider("openrouter").prepare(start(), model=MODEL, **options), "openrouter")
    assert {k: body[k] for k in options} == options


def test_json_schema_response_format_passes_through() -> None:
    fmt: dict[str, Any] = {
        "type": "json_schema",
        "json_schema": {"name": "weather", "strict": True, "schema": {"type": "object"}},
    }
    body = check_request(
        thinkseal.provider("openrouter").prepare(start().with_response_format(fmt), model=MODEL), "openrouter"
    )
    assert body["response_format"] == fmt


def test_fallback_models_are_refused() -> None:
    """OpenRouter's ``models`` fallback lets another model answer; its sealed
    reasoning_details would then be bound to (and replayed to) the model asked
    for. One model per request, as docs/providers.md says."""
    with pytest.raises(ValidationError, match="models: fallback routing") as info:
        thinkseal.provider("openrouter").prepare(start(), model=MODEL, models=["openai/gpt-5"])
    assert info.value.path == "models"
