"""OpenAI's Responses API: reasoning items kept as Opaque blocks in their place
and replayed verbatim, right before the item that followed each, only while the
turn is kept; stateless replay (``store: false`` with encrypted reasoning) and
server-side state (``previous_response_id``)
(python/thinkseal/providers/openai_responses.py).

Every request body is validated against the openai SDK's
``ResponseCreateParams`` with unknown keys refused (the emulator's
``sdk_request_errors``); responses and stream events parse with the SDK's
``Response`` and ``ResponseStreamEvent`` models."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.responses import Response, ResponseOutputItem, ResponseStreamEvent
from pydantic import TypeAdapter

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Message,
    Native,
    Origin,
    PreparedRequest,
    ReplayError,
    ResponseError,
    SystemMessage,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    Tool,
    ToolCall,
    ToolCallDelta,
    ToolMessage,
    Usage,
    UserMessage,
    ValidationError,
)
from thinkseal.providers import openai_responses
from thinkseal.testing import respond
from thinkseal.testing.openai_responses import (
    CALL_WITHOUT_OUTPUT,
    ITEM_WITHOUT_REASONING,
    OUTPUT_WITHOUT_CALL,
    PREVIOUS_NOT_FOUND,
    REASONING_WITHOUT_FOLLOWING,
    ResponsesEmulator,
    Turn,
    sdk_request_errors,
)

from .support import responses_create as sdk_create

FIXTURES = Path(__file__).parent / "fixtures" / "openai-responses"
ID = "openai-responses"
MODEL = "o4-mini"
WEATHER = Tool(
    "get_weather",
    "Current weather of a city",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
WEATHER_WIRE = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather of a city",
    "parameters": dict(WEATHER.parameters),
    "strict": True,
}
STATELESS = {"store": False, "include": ["reasoning.encrypted_content"]}
ITEMS = TypeAdapter(ResponseOutputItem)
EVENTS = TypeAdapter(ResponseStreamEvent)


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def adapter(account: str | None = "org-a") -> thinkseal.providers.Provider:
    return thinkseal.provider(ID, account)


def start() -> Conversation:
    return Conversation([SystemMessage("Be brief."), UserMessage("Weather in Paris and Lyon?")], tools=[WEATHER])


def check_request(req: PreparedRequest) -> dict[str, Any]:
    """Its bytes are its body, the path is OpenAI's, and the body validates
    against the SDK's request type."""
    assert json.loads(req.content) == req.body
    assert req.path == "/responses"
    assert req.headers == {}
    errors = sdk_request_errors(req.body)
    assert errors is None, errors
    return dict(req.body)


def send(client: openai.OpenAI, req: PreparedRequest) -> thinkseal.Reply:
    """``req`` through the SDK: its events (validated) into a stream, or its response."""
    body = check_request(req)
    if body.get("stream"):
        acc = req.stream()
        for event in sdk_create(client, body):
            acc.feed(EVENTS.validate_python(event.model_dump()).model_dump())
        return acc.reply
    return req.parse(Response.model_validate(sdk_create(client, body).model_dump()).model_dump())


SCRIPT = [
    Turn(
        reasoning=["**Paris first**", "One city at a time."], tool_calls=[("call_1", "get_weather", {"city": "Paris"})]
    ),
    Turn(reasoning=["**Now Lyon**"], tool_calls=[("call_2", "get_weather", {"city": "Lyon"})]),
    Turn(reasoning=["**Both known**"], content="Paris 20°C, Lyon 18°C.", phase="final_answer"),
]
RESULTS = ["20°C, sunny", "18°C, rain"]


def tool_loop(emu: ResponsesEmulator, *, stream: bool, account: str = "org-a") -> Conversation:
    """Three steps through the emulator: two tool calls, then the answer."""
    for turn in SCRIPT:
        emu.reply(turn)
    client = emu.client(account)
    conv = start()
    for k in range(3):
        req = adapter(account).prepare(conv, model=MODEL, stream=stream)
        assert all(entry.kept for entry in req.report)
        conv = conv.append(send(client, req).message)
        if k < 2:
            conv = conv.append(ToolMessage(RESULTS[k], f"call_{k + 1}"))
    return conv.append(UserMessage("Thanks!"))


@pytest.fixture
def emu() -> Iterator[ResponsesEmulator]:
    with ResponsesEmulator() as server:
        yield server


def input_kinds(body: dict[str, Any]) -> list[str]:
    return [item.get("type") or item["role"] for item in body["input"]]


# -- the documented examples --------------------------------------------------------------------


def test_cookbook_response_parses() -> None:
    """The response printed in OpenAI's cookbook "Better performance from
    reasoning models using the Responses API"
    (https://cookbook.openai.com/examples/responses_api/reasoning_items), copied
    verbatim: a reasoning item without summary, then the message. The page
    predates ``usage.input_tokens_details.cache_write_tokens``, which the
    installed SDK's ``Response`` requires; its output items validate as they are."""
    response = fixture("cookbook_joke.json")
    for item in response["output"]:
        ITEMS.validate_python(item)
    sdk = Response.model_validate(
        {
            **response,
            "usage": {**response["usage"], "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}},
        }
    )
    req = adapter().prepare(Conversation([UserMessage("tell me a joke")]), model=MODEL)
    reply = req.parse(response)
    joke = "Why don\u2019t scientists trust atoms?  \nBecause they make up everything!"
    # A stored response: the reasoning item records the id of the message after it (see
    # test_openai_responses_stored.py).
    reasoning = '{"id":"rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7","summary":[],'
    following = '"thinkseal:following":["msg_6820f3854688819187769ff582b170a60ac5ba57aafcbac7"],"type":"reasoning"}'
    assert reply.message.parts == (ThinkingBlock.Opaque(ID, reasoning + following), joke)
    assert reply.message.thinking_binding is not None
    assert (reply.stop_reason, reply.usage, reply.id, reply.model) == (
        "completed",
        Usage(10, 148, 0, None, 128),
        "resp_6820f382ee1c8191bc096bee70894d040ac5ba57aafcbac7",
        "o4-mini-2025-04-16",
    )
    assert req.parse(sdk.model_dump()).message == reply.message


def test_cookbook_follow_up_request_is_the_documented_one() -> None:
    """The stateless tool loop of the same cookbook page: ``store=False``,
    ``include=["reasoning.encrypted_content"]``, ``context += response.output``
    and a ``function_call_output``. The page prints the encrypted reasoning item
    of its o3 run (copied verbatim) and the function call of its o4-mini run; the
    response around them is ours. thinkseal's follow-up is the documented
    request, except that the function call goes without its server item id and
    status (see the module docstring), and null members are left out."""
    tools = [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Get current temperature for provided coordinates in celsius.",
            "parameters": {
                "type": "object",
                "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}},
                "required": ["latitude", "longitude"],
                "additionalProperties": False,
            },
            "strict": True,
        }
    ]
    reasoning = fixture("cookbook_encrypted_reasoning.json")
    call = fixture("cookbook_function_call.output.json")[1]
    response = {**fixture("cookbook_joke.json"), "model": "o3-2025-04-16", "output": [reasoning, call], "store": False}
    for item in response["output"]:
        ITEMS.validate_python(item)
    tool = Tool(tools[0]["name"], tools[0]["description"], tools[0]["parameters"])
    conv = Conversation([UserMessage("What's the weather like in Paris today?")], [tool])
    req = adapter().prepare(conv, model="o3")
    assert check_request(req) == {
        "model": "o3",
        "input": [{"role": "user", "content": conv[0].content}],
        "tools": tools,
        **STATELESS,
    }
    reply = req.receive(response)
    assert reply.parts == (
        ThinkingBlock.Opaque(
            ID, json.dumps({k: v for k, v in sorted(reasoning.items()) if v is not None}, separators=(",", ":"))
        ),
        ToolCall("call_9ylqPOZUyFEwhxvBwgpNDqPT", "get_weather", {"latitude": 48.8566, "longitude": 2.3522}),
    )
    follow_up = adapter().prepare(conv.append(reply, ToolMessage("20", call["call_id"])), model="o3")
    documented = {
        "model": "o3",
        "input": [
            {"role": "user", "content": "What's the weather like in Paris today?"},
            reasoning,
            call,
            {"type": "function_call_output", "call_id": call["call_id"], "output": "20"},
        ],
        "tools": tools,
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    sent = check_request(follow_up)
    assert sent["input"][1] == {k: v for k, v in reasoning.items() if v is not None}
    assert sent["input"][2] == {k: v for k, v in call.items() if k not in ("id", "status")}
    without = copy.deepcopy(documented)
    without["input"][1] = sent["input"][1]
    without["input"][2] = sent["input"][2]
    assert sent == without


# -- the tool loop ------------------------------------------------------------------------------------


def test_three_step_tool_loop_exact_bodies(emu: ResponsesEmulator) -> None:
    conv = tool_loop(emu, stream=False)
    first, second, third = (r.body for r in emu.requests)
    assert first == {
        "input": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris and Lyon?"},
        ],
        "model": MODEL,
        "tools": [WEATHER_WIRE],
        **STATELESS,
    }
    turn = conv[2]
    assert isinstance(turn, AssistantMessage)
    text, opaque, call = turn.parts
    assert text == ThinkingBlock.Text("**Paris first**\n\nOne city at a time.")
    assert isinstance(opaque, ThinkingBlock.Opaque)
    item = json.loads(opaque.data)
    assert item["id"].startswith("rs_")
    assert item["encrypted_content"].startswith("gAAAAA")
    assert call == ToolCall("call_1", "get_weather", {"city": "Paris"})
    assert second["input"][2:] == [
        item,
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "20°C, sunny"},
    ]
    assert input_kinds(third) == [
        "system", "user", "reasoning", "function_call", "function_call_output",
        "reasoning", "function_call", "function_call_output",
    ]  # fmt: skip
    req = adapter().prepare(conv, model=MODEL)
    assert [e.reason for e in req.report] == ["kept", "kept", "kept"]
    body = check_request(req)
    final = conv[6]
    assert isinstance(final, AssistantMessage)
    summary, reasoning, message = final.parts
    assert summary == ThinkingBlock.Text("**Both known**")
    assert isinstance(reasoning, ThinkingBlock.Opaque)
    assert isinstance(message, Native)  # a message with a phase is kept whole
    assert message.text == final.content == "Paris 20°C, Lyon 18°C."
    assert body["input"][-3:] == [
        json.loads(reasoning.data),
        {"role": "assistant", "content": "Paris 20°C, Lyon 18°C.", "phase": "final_answer"},
        {"role": "user", "content": "Thanks!"},
    ]
    response = sdk_create(emu.client("org-a"), body)
    assert response.input_transformations is None


def test_streamed_loop_equals_the_whole_one() -> None:
    with ResponsesEmulator() as whole_emu, ResponsesEmulator() as stream_emu:
        whole = tool_loop(whole_emu, stream=False)
        streamed = tool_loop(stream_emu, stream=True)
    assert streamed == whole
    assert [m.parts for m in streamed] == [m.parts for m in whole]
    assert [r.body for r in stream_emu.requests] == [{**r.body, "stream": True} for r in whole_emu.requests]


def test_stream_deltas_and_reply() -> None:
    with ResponsesEmulator() as emu:
        emu.reply(SCRIPT[0])
        req = adapter().prepare(start(), model=MODEL, stream=True)
        acc = req.stream()
        deltas = []
        for event in sdk_create(emu.client(), check_request(req)):
            deltas.extend(acc.feed(event.model_dump()))
        message = acc.finish()
    thinking = "".join(d.text for d in deltas if isinstance(d, ThinkingDelta))
    assert thinking == message.thinking_text == "**Paris first**\n\nOne city at a time."
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert (calls[0].index, calls[0].id, calls[0].name) == (1, "call_1", "get_weather")
    assert json.loads("".join(d.arguments for d in calls)) == {"city": "Paris"}
    assert all(d.index == 0 for d in deltas if isinstance(d, ThinkingDelta))
    assert not [d for d in deltas if isinstance(d, TextDelta)]
    assert acc.reply.stop_reason == "completed"
    assert acc.reply.usage.reasoning_tokens == 12


def test_server_side_state_sends_only_the_new_items(emu: ResponsesEmulator) -> None:
    """``previous_response_id``: OpenAI keeps the input and output of a stored
    response; the next request carries only what came after it."""
    for turn in SCRIPT:
        emu.reply(turn)
    client = emu.client()
    conv = start()
    req = adapter().prepare(conv, model=MODEL, store=True)
    assert check_request(req) == {"model": MODEL, "input": req.body["input"], "tools": [WEATHER_WIRE], "store": True}
    reply = send(client, req)
    conv = conv.append(reply.message, ToolMessage(RESULTS[0], "call_1"))
    for k in (1, 2):
        req = adapter().prepare(conv, model=MODEL, previous_response_id=reply.id, stream=k == 2)
        body = check_request(req)
        assert [e.reason for e in req.report] == ["kept"] * k
        assert body["previous_response_id"] == reply.id
        assert "store" not in body
        assert "include" not in body
        assert body["input"] == [{"type": "function_call_output", "call_id": f"call_{k}", "output": RESULTS[k - 1]}]
        reply = send(client, req)
        conv = conv.append(reply.message)
        if k == 1:
            conv = conv.append(ToolMessage(RESULTS[1], "call_2"))
    assert conv[-1].content == "Paris 20°C, Lyon 18°C."  # type: ignore[union-attr]
    # Reasoning received without encrypted content goes back by id, to stored state only.
    assert "encrypted_content" not in json.loads(conv[2].thinking[1].data)  # type: ignore[union-attr]
    full = adapter().prepare(conv.append(UserMessage("Thanks!")), model=MODEL, store=True)
    assert input_kinds(check_request(full)).count("reasoning") == 3
    sdk_create(client, full.body)
    stateless = adapter().prepare(conv.append(UserMessage("Thanks!")), model=MODEL)
    assert input_kinds(check_request(stateless)).count("reasoning") == 0  # nothing OpenAI could look up
    sdk_create(client, stateless.body)


def test_server_side_state_refuses_a_history_the_server_does_not_have(emu: ResponsesEmulator) -> None:
    emu.reply(SCRIPT[0])
    client = emu.client()
    req = adapter().prepare(start(), model=MODEL, store=True)
    reply = send(client, req)
    conv = start().append(reply.message, ToolMessage(RESULTS[0], "call_1"))
    edited = conv.with_messages([SystemMessage("Be verbose."), *conv.messages[1:]])
    with pytest.raises(ReplayError) as err:
        adapter().prepare(edited, model=MODEL, previous_response_id=reply.id)
    assert (err.value.index, err.value.reason) == (2, "prefix-changed")
    with pytest.raises(ReplayError) as err:
        adapter().prepare(conv, model="o3", previous_response_id=reply.id)
    assert err.value.reason == "origin-mismatch"
    unanswered = start().append(reply.message, UserMessage("Never mind."))
    with pytest.raises(ReplayError) as err:
        adapter().prepare(unanswered, model=MODEL, previous_response_id=reply.id)
    assert err.value.reason == "unpaired-tool-call"
    with pytest.raises(ValidationError) as verr:
        adapter().prepare(start(), model=MODEL, previous_response_id=reply.id)
    assert verr.value.path == "previous_response_id"
    with pytest.raises(ValidationError) as verr:
        adapter().prepare(start().append(reply.message), model=MODEL, previous_response_id=reply.id)
    assert "nothing to send" in str(verr.value)
    with pytest.raises(ValidationError) as verr:
        adapter().prepare(conv, model=MODEL, previous_response_id=reply.id, store=False)
    assert verr.value.path == "previous_response_id"
    # Another organisation's response id is unknown to OpenAI.
    other = adapter("org-b").prepare(
        conv.rebind(Origin(ID, MODEL, "org-b")), model=MODEL, previous_response_id=reply.id
    )
    with pytest.raises(openai.BadRequestError) as bad:
        sdk_create(emu.client("org-b"), other.body)
    assert bad.value.body == {
        "message": PREVIOUS_NOT_FOUND.format(id=reply.id),
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": "previous_response_not_found",
    }


# -- histories that no longer hold: reasoning items dropped, the rest kept -------------------------


def reasoning_ids(body: dict[str, Any]) -> list[str]:
    return [item["id"] for item in body["input"] if item.get("type") == "reasoning"]


def without_reasoning(body: dict[str, Any]) -> list[Any]:
    """The input items but reasoning, and without ``phase``: a message's phase is
    part of its output item, kept as a native block that goes out only with a
    kept turn."""
    return [
        {k: v for k, v in item.items() if k != "phase"} for item in body["input"] if item.get("type") != "reasoning"
    ]


@pytest.mark.parametrize(
    ("case", "reasons"),
    [
        ("pruned", ["prefix-changed"] * 3),
        ("system prompt changed", ["prefix-changed"] * 3),
        ("second result edited", ["kept", "kept", "prefix-changed"]),
        ("other model", ["origin-mismatch"] * 3),
        ("other account", ["origin-mismatch"] * 3),
    ],
)
def test_changed_history_unseals_exactly_the_affected_turns(case: str, reasons: list[str]) -> None:
    with ResponsesEmulator() as emu:
        conv = tool_loop(emu, stream=False)
        kept = adapter().prepare(conv, model=MODEL)
        model, account, messages = MODEL, "org-a", list(conv.messages)
        if case == "pruned":
            messages = messages[1:]
        elif case == "system prompt changed":
            messages[0] = SystemMessage("Be verbose.")
        elif case == "second result edited":
            messages[5] = ToolMessage("19°C, rain", "call_2")
        elif case == "other model":
            model = "o3"
        else:
            account = "org-b"
        changed = conv.with_messages(messages)
        req = adapter(account).prepare(changed, model=model)
        assert [e.reason for e in req.report] == reasons
        body = check_request(req)
        issued = reasoning_ids(kept.body)
        assert reasoning_ids(body) == [rid for rid, reason in zip(issued, reasons, strict=True) if reason == "kept"]
        sdk_create(emu.client(account), body)  # OpenAI accepts it
        # A naive client sends the kept request with the same change: every
        # item but the reasoning items is what thinkseal sends, and the stale
        # reasoning is refused or dropped by OpenAI.
        naive = {**body, "model": model, "input": [*kept.body["input"]]}
        if case == "pruned":
            naive["input"] = naive["input"][1:]
        elif case == "system prompt changed":
            naive["input"] = [{"role": "system", "content": "Be verbose."}, *naive["input"][1:]]
        elif case == "second result edited":
            naive["input"] = [
                {**item, "output": "19°C, rain"} if item.get("call_id") == "call_2" and "output" in item else item
                for item in naive["input"]
            ]
        assert without_reasoning(body) == without_reasoning(naive)
        if "kept" not in reasons:
            assert all("phase" not in item for item in body["input"])
        if case in ("other model", "other account"):
            with pytest.raises(openai.BadRequestError) as err:
                sdk_create(emu.client(account), naive)
            assert err.value.body["code"] == "invalid_encrypted_content"  # type: ignore[index]
            assert err.value.body["message"].startswith("The encrypted content gAAA...")  # type: ignore[index]
            assert err.value.body["message"].endswith(" could not be verified.")  # type: ignore[index]
        else:
            answered = sdk_create(emu.client(account), naive)
            dropped = [t.reason for t in answered.input_transformations or []]
            assert dropped == ["prefix_mismatch"] * reasons.count("prefix-changed")


def test_an_edited_turn_keeps_its_items_without_its_reasoning() -> None:
    with ResponsesEmulator() as emu:
        conv = tool_loop(emu, stream=False)
        turn = conv[4]
        assert isinstance(turn, AssistantMessage)
        edited = turn.with_content("Checking Lyon.")
        req = adapter().prepare(conv.with_messages([*conv.messages[:4], edited, *conv.messages[5:]]), model=MODEL)
        assert [e.reason for e in req.report] == ["kept", "no-sealed-thinking", "prefix-changed"]
        body = check_request(req)
        assert input_kinds(body)[2:] == [
            "reasoning", "function_call", "function_call_output",
            "assistant", "function_call", "function_call_output",
            "assistant", "user",
        ]  # fmt: skip
        sdk_create(emu.client(), body)


def test_reasoning_goes_to_no_other_provider() -> None:
    with ResponsesEmulator() as emu:
        conv = tool_loop(emu, stream=False)
    secrets = [
        json.loads(b.data)["encrypted_content"]
        for m in conv
        if isinstance(m, AssistantMessage)
        for b in m.thinking
        if isinstance(b, ThinkingBlock.Opaque)
    ]
    assert len(secrets) == 3
    for other in ("openai", "openrouter", "deepseek", "zai"):
        req = thinkseal.provider(other).prepare(conv, model=MODEL)
        for secret in secrets:
            assert secret.encode() not in req.content
    deepseek = thinkseal.provider("deepseek").prepare(conv, model="deepseek-chat").body
    assert [m.get("reasoning_content") for m in deepseek["messages"] if m["role"] == "assistant"] == [
        "**Paris first**\n\nOne city at a time.",
        "**Now Lyon**",
        "**Both known**",
    ]


# -- the emulator refuses what OpenAI refuses -----------------------------------------------------


def error(message: str, param: str | None = "input", code: str | None = None) -> dict[str, Any]:
    return {"message": message, "type": "invalid_request_error", "param": param, "code": code}


def test_emulator_rejects_broken_replays(emu: ResponsesEmulator) -> None:
    conv = tool_loop(emu, stream=False)
    client = emu.client()
    body = adapter().prepare(conv, model=MODEL).body
    sdk_create(client, body)
    items = [*body["input"]]
    reasoning = items[2]
    first = emu.requests[0].body
    emu.reply(SCRIPT[0])
    call_with_id = sdk_create(client, first).output  # as the model produced it: with its item ids
    cases = [
        # A reasoning item without the item that followed it.
        ([*items[:3], *items[4:]], error(REASONING_WITHOUT_FOLLOWING.format(id=reasoning["id"]))),
        ([*items[:3]], error(REASONING_WITHOUT_FOLLOWING.format(id=reasoning["id"]))),
        # A function call output whose call is gone.
        ([*items[:2], items[4], *items[5:]], error(OUTPUT_WITHOUT_CALL.format(call_id="call_1"))),
        # A call without its output.
        ([*items[:4], *items[5:]], error(CALL_WITHOUT_OUTPUT.format(call_id="call_1"))),
    ]
    for bad, expected in cases:
        with pytest.raises(openai.BadRequestError) as err:
            sdk_create(client, {**body, "input": bad})
        assert err.value.body == expected
    # An output item id replayed without the reasoning item before it.
    output = [item.model_dump(exclude_none=True) for item in call_with_id]
    assert [item["type"] for item in output] == ["reasoning", "function_call"]
    replay = [*first["input"], output[1], {"type": "function_call_output", "call_id": "call_1", "output": "x"}]
    with pytest.raises(openai.BadRequestError) as err:
        sdk_create(client, {**body, "input": replay})
    assert err.value.body == error(
        ITEM_WITHOUT_REASONING.format(id=output[1]["id"], type="function_call", reasoning=output[0]["id"])
    )
    # Its reasoning without encrypted content: nothing stored to look up.
    stripped = {k: v for k, v in reasoning.items() if k != "encrypted_content"}
    with pytest.raises(openai.BadRequestError) as err:
        sdk_create(client, {**body, "input": [*items[:2], stripped, *items[3:]]})
    assert err.value.body["message"].startswith(f"Item with id '{reasoning['id']}' not found.")  # type: ignore[index]


def test_raw_request_bytes_are_accepted(emu: ResponsesEmulator) -> None:
    conv = tool_loop(emu, stream=False)
    req = adapter().prepare(conv, model=MODEL)
    response = httpx.post(emu.url(req.path), content=req.content, headers={"authorization": "Bearer org-a"})
    assert response.status_code == 200, response.text
    assert emu.requests[-1].raw == req.content
    assert req.receive(response.json()).content == "Done."


# -- requests ---------------------------------------------------------------------------------------


def test_content_parts() -> None:
    png, pdf = b"\x89PNG\r\n\x1a\nfake", b"%PDF-1.7 fake"
    conv = Conversation(
        [
            SystemMessage(["Read carefully.", CacheBreakpoint("1h")]),
            UserMessage(
                [
                    "Compare",
                    Image(png, "image/png"),
                    Image(url="https://example.com/a.png"),
                    Document(data=pdf, title="report.pdf"),
                    Document(url="https://example.com/b.pdf"),
                    Document(text="plain notes"),
                    CacheBreakpoint(),
                ]
            ),
            AssistantMessage(None, [ToolCall("c1", "get_weather", {"city": "Paris"})]),
            ToolMessage(["Chart:", Image(png, "image/png")], "c1", is_error=True),
        ],
        tools=[WEATHER],
    )
    body = check_request(adapter().prepare(conv, model=MODEL))
    png_url = "data:image/png;base64,iVBORw0KGgpmYWtl"
    assert body["input"][0] == {"role": "system", "content": "Read carefully."}
    assert body["input"][1] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Compare"},
            {"type": "input_image", "image_url": png_url, "detail": "auto"},
            {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "auto"},
            {
                "type": "input_file",
                "filename": "report.pdf",
                "file_data": "data:application/pdf;base64,JVBERi0xLjcgZmFrZQ==",
            },
            {"type": "input_file", "file_url": "https://example.com/b.pdf"},
            {"type": "input_text", "text": "plain notes"},
        ],
    }
    assert body["input"][3] == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": [
            {"type": "input_text", "text": "[tool error] Chart:"},
            {"type": "input_image", "image_url": png_url, "detail": "auto"},
        ],
    }
    # Breakpoints are ignored: the same bytes without them.
    plain = Conversation(
        [SystemMessage("Read carefully."), UserMessage(["Compare", Image(png, "image/png")])], tools=[WEATHER]
    )
    marked = Conversation(
        [
            SystemMessage(["Read carefully.", CacheBreakpoint()]),
            UserMessage(["Compare", Image(png, "image/png"), CacheBreakpoint("1h")]),
        ],
        tools=[Tool(WEATHER.name, WEATHER.description, WEATHER.parameters, cache=CacheBreakpoint())],
    )
    assert adapter().prepare(plain, model=MODEL).content == adapter().prepare(marked, model=MODEL).content


def test_tools_are_strict_only_when_strict_mode_takes_their_schema() -> None:
    loose = Tool("lookup", "Look up", {"type": "object", "properties": {"q": {"type": "string"}}})
    nested = Tool(
        "plan",
        "Plan",
        {
            "type": "object",
            "properties": {"step": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
            "required": ["step"],
            "additionalProperties": False,
        },
    )
    body = check_request(
        adapter().prepare(Conversation([UserMessage("hi")], [WEATHER, loose, nested, Tool("t")]), model=MODEL)
    )
    assert [t["strict"] for t in body["tools"]] == [True, False, False, False]


@pytest.mark.parametrize(
    ("fmt", "wire"),
    [
        ({"type": "text"}, {"type": "text"}),
        ({"type": "json_object"}, {"type": "json_object"}),
        (
            {"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "object"}, "strict": True}},
            {"type": "json_schema", "name": "w", "schema": {"type": "object"}, "strict": True},
        ),
    ],
)
def test_response_format_becomes_text_format(fmt: dict[str, Any], wire: dict[str, Any]) -> None:
    conv = start().with_response_format(fmt)
    body = check_request(adapter().prepare(conv, model=MODEL, text={"verbosity": "low"}))
    assert body["text"] == {"verbosity": "low", "format": wire}


def test_options() -> None:
    options: dict[str, Any] = {
        "reasoning": {"effort": "high", "summary": "auto"},
        "max_output_tokens": 4096,
        "include": ["web_search_call.action.sources"],
        "prompt_cache_key": "session-1",
        "metadata": {"run": "1"},
    }
    body = check_request(adapter().prepare(start(), model=MODEL, **options))
    assert body["include"] == ["web_search_call.action.sources", "reasoning.encrypted_content"]
    assert {k: body[k] for k in ("reasoning", "max_output_tokens", "prompt_cache_key", "metadata")} == {
        k: options[k] for k in ("reasoning", "max_output_tokens", "prompt_cache_key", "metadata")
    }
    stored = check_request(adapter().prepare(start(), model=MODEL, store=True, background=True))
    assert (stored["store"], stored["background"], "include" in stored) == (True, True, False)
    streamed = check_request(
        adapter().prepare(start(), model=MODEL, stream=True, stream_options={"include_obfuscation": False})
    )
    assert streamed["stream"] is True


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"input": []}, "input"),
        ({"instructions": "Be brief."}, "instructions"),
        ({"tools": []}, "tools"),
        ({"text": {"format": {"type": "text"}}}, "text.format"),
        ({"text": {"verbosity": "loud"}}, "text.verbosity"),
        ({"reasoning": {"effort": "extreme"}}, "reasoning.effort"),
        ({"reasoning": {"summary": "short"}}, "reasoning.summary"),
        ({"reasoning": "high"}, "reasoning"),
        ({"max_output_tokens": 10}, "max_output_tokens"),
        ({"temperature": 3}, "temperature"),
        ({"include": ["reasoning.summary"]}, "include[0]"),
        ({"include": "reasoning.encrypted_content"}, "include"),
        ({"store": "no"}, "store"),
        ({"truncation": "middle"}, "truncation"),
        ({"background": True}, "background"),
        ({"previous_response_id": " "}, "previous_response_id"),
        ({"stream_options": {"include_obfuscation": True}}, "stream_options"),
    ],
)
def test_invalid_options(options: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as err:
        adapter().prepare(start(), model=MODEL, **options)
    assert err.value.path == path


def test_max_output_tokens_minimum_in_openai_wording() -> None:
    with pytest.raises(ValidationError) as err:
        adapter().prepare(start(), model=MODEL, max_output_tokens=10)
    assert str(err.value) == (
        "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead."
    )


def kept_turn(*parts: Any) -> Conversation:
    turn = AssistantMessage.from_parts(list(parts))
    return respond(start(), Origin(ID, MODEL, "org-a"), turn).append(UserMessage("Next?"))


def reasoning_block(rid: str, encrypted: str | None = "ENC") -> ThinkingBlock.Opaque:
    item: dict[str, Any] = {"id": rid, "summary": [], "type": "reasoning"}
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return ThinkingBlock.Opaque(ID, json.dumps(item, separators=(",", ":")))


def test_a_reasoning_item_goes_only_right_before_an_item() -> None:
    """Two reasoning items in a row: only the second precedes an item, so only
    it goes; a trailing one has nothing after it and stays home."""
    conv = kept_turn(reasoning_block("rs_1"), reasoning_block("rs_2"), "Answer.", reasoning_block("rs_3"))
    req = adapter().prepare(conv, model=MODEL)
    assert [e.reason for e in req.report] == ["kept"]
    assert check_request(req)["input"][2:] == [
        {"id": "rs_2", "summary": [], "type": "reasoning", "encrypted_content": "ENC"},
        {"role": "assistant", "content": "Answer."},
        {"role": "user", "content": "Next?"},
    ]


def test_reasoning_without_encrypted_content_goes_only_to_stored_state() -> None:
    conv = kept_turn(reasoning_block("rs_1", None), "Answer.")
    assert reasoning_ids(adapter().prepare(conv, model=MODEL).body) == []
    assert reasoning_ids(adapter().prepare(conv, model=MODEL, store=True).body) == ["rs_1"]


def test_a_hand_made_opaque_block_that_is_not_json_is_refused() -> None:
    conv = kept_turn(ThinkingBlock.Opaque(ID, "not json"), "Answer.")
    with pytest.raises(ValidationError) as err:
        adapter().prepare(conv, model=MODEL)
    assert err.value.path == "AssistantMessage.parts[0].data"


def test_other_providers_thinking_never_goes_to_openai() -> None:
    turn = AssistantMessage(
        "Sunny.",
        thinking=[
            ThinkingBlock.Text("Claude thinks.", signature="SIG"),
            ThinkingBlock.Redacted("RED"),
            ThinkingBlock.Opaque("openrouter", '{"type":"reasoning.encrypted","data":"OPQ"}'),
        ],
    )
    for origin in (Origin("anthropic", "claude"), Origin(ID, MODEL, "org-a")):
        conv = respond(start(), origin, turn).append(UserMessage("And Lyon?"))
        req = adapter().prepare(conv, model=MODEL)
        assert check_request(req)["input"][2] == {"role": "assistant", "content": "Sunny."}
        for secret in (b"SIG", b"RED", b"OPQ", b"Claude thinks."):
            assert secret not in req.content


def test_unchanged_turns_are_not_encoded_again(emu: ResponsesEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    conv = tool_loop(emu, stream=False)
    first = adapter().prepare(conv, model=MODEL)
    encoded: list[Any] = []
    real = openai_responses.dumps

    def counting(value: Any) -> bytes:
        encoded.append(value)
        return real(value)

    monkeypatch.setattr(openai_responses, "dumps", counting)
    second = adapter().prepare(conv.append(AssistantMessage("You're welcome."), UserMessage("Bye")), model=MODEL)
    items = [v for v in encoded if isinstance(v, dict) and ("role" in v or "type" in v)]
    assert items == [{"role": "assistant", "content": "You're welcome."}, {"role": "user", "content": "Bye"}]
    assert second.content.startswith(first.content[: first.content.index(b'{"role":"user","content":"Thanks!"}')])


# -- replies --------------------------------------------------------------------------------------------


def response(*output: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1767225600,
        "model": "o4-mini-2025-04-16",
        "status": "completed",
        "output": list(output),
        **fields,
    }


MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Hi.", "annotations": []}],
}


def test_unknown_items_annotations_and_phase_are_kept_in_place() -> None:
    search = {
        "id": "ws_1",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "paris"},
    }
    cited = copy.deepcopy(MESSAGE)
    cited["content"][0]["annotations"] = [
        {"type": "url_citation", "start_index": 0, "end_index": 3, "url": "https://example.com", "title": "Ex"}
    ]
    phased = {**copy.deepcopy(MESSAGE), "id": "msg_2", "phase": "commentary"}
    reply = adapter().prepare(start(), model=MODEL).receive(response(search, cited, phased, MESSAGE))
    assert reply.parts == (
        Native(ID, json.dumps(search, sort_keys=True, separators=(",", ":"))),
        Native(ID, json.dumps(cited, sort_keys=True, separators=(",", ":")), "Hi."),
        Native(ID, json.dumps(phased, sort_keys=True, separators=(",", ":")), "Hi."),
        "Hi.",
    )
    assert reply.content == "Hi.Hi.Hi."
    assert reply.thinking_binding is not None  # the items are this provider's own data: sealed
    conv = start().append(reply, UserMessage("More?"))
    body = check_request(adapter().prepare(conv, model=MODEL))
    assert body["input"][2:6] == [
        search,
        {"role": "assistant", "content": "Hi."},
        {"role": "assistant", "content": "Hi.", "phase": "commentary"},
        {"role": "assistant", "content": "Hi."},
    ]
    # Another model: the items give way to their text, as unsealed thinking does.
    other = check_request(adapter().prepare(conv, model="o3"))
    assert other["input"][2:] == [*[{"role": "assistant", "content": "Hi."}] * 3, {"role": "user", "content": "More?"}]
    chat = thinkseal.provider("openai").prepare(conv, model=MODEL).body
    assert chat["messages"][2] == {"role": "assistant", "content": "Hi.Hi.Hi."}


def test_reply_info() -> None:
    usage = {
        "input_tokens": 300,
        "input_tokens_details": {"cached_tokens": 256, "cache_write_tokens": 32},
        "output_tokens": 90,
        "output_tokens_details": {"reasoning_tokens": 64},
        "total_tokens": 390,
    }
    req = adapter().prepare(start(), model=MODEL)
    reply = req.parse(response(MESSAGE, usage=usage))
    assert (reply.stop_reason, reply.usage, reply.id, reply.model) == (
        "completed",
        Usage(300, 90, 256, 32, 64),
        "resp_1",
        "o4-mini-2025-04-16",
    )
    cut = req.parse(response(MESSAGE, status="incomplete", incomplete_details={"reason": "max_output_tokens"}))
    assert cut.stop_reason == "max_output_tokens"
    assert req.parse(response(MESSAGE)).usage == Usage()


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda r: r.pop("output"), "$.output"),
        (lambda r: r.update(output={}), "$.output"),
        (lambda r: r["output"].append("x"), "$.output[1]"),
        (lambda r: r.update(error={"code": "server_error", "message": "boom"}), "$.error"),
        (lambda r: r["output"][0].pop("content"), "$.output[0].content"),
        (lambda r: r["output"][0]["content"][0].update(text=5), "$.output[0].content[0].text"),
        (lambda r: r["output"].append({"type": "reasoning", "summary": []}), "$.output[1].id"),
        (lambda r: r["output"].append({"type": "reasoning", "id": "rs"}), "$.output[1].summary"),
        (
            lambda r: r["output"].append({"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text"}]}),
            "$.output[1].summary[0].text",
        ),
        (
            lambda r: r["output"].append({"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": 1}),
            "$.output[1].encrypted_content",
        ),
        (
            lambda r: r["output"].append({"type": "function_call", "call_id": " ", "name": "f", "arguments": "{}"}),
            "$.output[1].call_id",
        ),
        (
            lambda r: r["output"].append({"type": "function_call", "call_id": "c", "name": "f", "arguments": "[1]"}),
            "$.output[1].arguments",
        ),
        (
            lambda r: r["output"].append({"type": "function_call", "call_id": "c", "arguments": "{}"}),
            "$.output[1].name",
        ),
    ],
)
def test_malformed_response_names_the_path(mutate: Any, path: str) -> None:
    body = response(copy.deepcopy(MESSAGE))
    mutate(body)
    with pytest.raises(ResponseError) as err:
        adapter().prepare(start(), model=MODEL).receive(body)
    assert err.value.path == path


def stream_events() -> list[dict[str, Any]]:
    with ResponsesEmulator() as emu:
        emu.reply(SCRIPT[0])
        req = adapter().prepare(start(), model=MODEL, stream=True)
        return [e.model_dump() for e in sdk_create(emu.client(), req.body)]


def test_error_events_and_cut_streams() -> None:
    events = stream_events()
    req = adapter().prepare(start(), model=MODEL, stream=True)
    acc = req.stream()
    with pytest.raises(ResponseError) as err:
        acc.feed({"type": "error", "code": "server_error", "message": "The server had an error", "param": None})
    assert err.value.path == "$.message"
    failed = {**events[-1], "type": "response.failed"}
    failed["response"] = {**failed["response"], "status": "failed", "error": {"code": "server_error", "message": "x"}}
    with pytest.raises(ResponseError) as err:
        req.stream().feed(failed)
    assert err.value.path == "$.response.error"
    complete = req.stream()
    for event in events:
        complete.feed(event)
    whole = complete.finish()
    for cut in range(len(events) - 1):
        acc = req.stream()
        for event in events[:cut]:
            acc.feed(event)
        with pytest.raises(ResponseError) as err:
            acc.finish()
        assert err.value.path == "$.type"
        partial = acc.partial()
        if partial is not None:
            assert not partial.has_sealed_thinking
            assert partial.thinking_binding is None
            assert partial.tool_calls in ((), whole.tool_calls)
    last = req.stream()
    for event in events[:-1]:
        last.feed(event)
    assert last.partial() == AssistantMessage(None, [ToolCall("call_1", "get_weather", {"city": "Paris"})])
    assert req.stream().partial() is None


def test_a_final_event_without_output_uses_the_items_as_done() -> None:
    events = stream_events()
    events[-1] = {**events[-1], "response": {**events[-1]["response"], "output": []}}
    req = adapter().prepare(start(), model=MODEL, stream=True)
    acc = req.stream()
    for event in events:
        acc.feed(event)
    assert acc.finish().tool_calls == (ToolCall("call_1", "get_weather", {"city": "Paris"}),)


def test_messages_are_kept_as_given() -> None:
    # System messages stay where they stand; a stray tool result is user text.
    messages: list[Message] = [
        UserMessage("hi"),
        AssistantMessage(None, [ToolCall("c1", "get_weather", {"city": "Paris"})]),
        ToolMessage("sunny", "c1"),
        SystemMessage("Answer in French."),
        ToolMessage("late", "c9"),
    ]
    body = check_request(adapter().prepare(Conversation(messages, [WEATHER]), model=MODEL))
    assert body["input"][3:] == [
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "[tool result for call c9]\nlate"},
    ]
