"""The ``anthropic`` adapter, driven through the official ``anthropic`` SDK
against a local Messages API emulator that enforces Claude's thinking rules
(python/thinkseal/testing/anthropic.py)."""

from __future__ import annotations

import copy
import json
import types
import typing
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic.types import Message as SdkMessage
from anthropic.types import RawMessageStreamEvent
from anthropic.types.beta.message_create_params import (
    MessageCreateParamsNonStreaming as BetaParams,
)
from anthropic.types.message_create_params import (
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)
from pydantic import TypeAdapter
from typing_extensions import is_typeddict

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Origin,
    ReplayError,
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
from thinkseal.testing.anthropic import (
    BINDING_BETA,
    BOUND_ELSEWHERE,
    CANNOT_MODIFY,
    INVALID_SIGNATURE,
    LEADING_THINKING,
    MISSING_RESULT,
    PREFIX_DETAIL,
    AnthropicEmulator,
    Call,
    Redact,
    Say,
    Think,
)

FIXTURES = Path(__file__).parent / "fixtures" / "anthropic"
MODEL = "claude-emulated-sonnet"  # not in the SDK's deprecation lists
THINKING = {"type": "enabled", "budget_tokens": 2048}
OPTS: dict[str, Any] = {"max_tokens": 4096, "thinking": THINKING}
WEATHER = Tool(
    "get_weather",
    "Current weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = Tool("get_time", "Local time in a city", {"type": "object", "properties": {"city": {"type": "string"}}})
TOOLS = (WEATHER, TIME)


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


# -- strict checks against the SDK's request types ------------------------------------


def _strict(value: Any, tp: Any, path: str) -> str | None:
    """None if ``value`` fits the SDK type ``tp`` exactly (no extra keys), else why not."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any or tp is object:
        return None
    if origin is typing.Annotated:
        return _strict(value, args[0], path)
    if origin in (typing.Union, types.UnionType):
        errors = [_strict(value, arm, path) for arm in args]
        return None if any(e is None for e in errors) else min((e for e in errors if e), key=len)
    if origin is typing.Literal:
        return None if value in args else f"{path}: {value!r} not in {args}"
    if tp is type(None):
        return None if value is None else f"{path}: expected null"
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return f"{path}: expected object"
        hints = typing.get_type_hints(tp, include_extras=True)
        extra = set(value) - set(hints)
        if extra:
            return f"{path}: unexpected keys {sorted(extra)}"
        missing = set(tp.__required_keys__) - set(value)
        if missing:
            return f"{path}: missing {sorted(missing)}"
        for key, item in value.items():
            hint = hints[key]
            while typing.get_origin(hint) in (typing.Required, typing.NotRequired):
                hint = typing.get_args(hint)[0]
            error = _strict(item, hint, f"{path}.{key}")
            if error:
                return error
        return None
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        if not isinstance(value, dict):
            return f"{path}: expected object"
        return (
            None if not args else next((e for k, v in value.items() if (e := _strict(v, args[1], f"{path}.{k}"))), None)
        )
    if origin is not None and len(args) == 1:  # Iterable, List, Sequence, SequenceNotStr
        if not isinstance(value, list):
            return f"{path}: expected array"
        return next((e for i, v in enumerate(value) if (e := _strict(v, args[0], f"{path}[{i}]"))), None)
    if tp is bool:
        return None if isinstance(value, bool) else f"{path}: expected bool"
    if tp is int:
        return None if isinstance(value, int) and not isinstance(value, bool) else f"{path}: expected int"
    if tp is float:
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else f"{path}: expected number"
    if tp is str:
        return None if isinstance(value, str) else f"{path}: expected str"
    return f"{path}: {tp!r} is not a request type"


# The installed SDK's request types no longer list the sampling fields
# (Anthropic's documentation still has them and their thinking rules; see
# docs/providers.md, Anthropic); they are checked by the emulator instead.
SAMPLING = ("temperature", "top_p", "top_k")


def check_request(req: thinkseal.PreparedRequest, *, beta: bool = False) -> None:
    """The body is exactly what the bytes say, and fits the SDK's request types."""
    assert json.loads(req.content) == req.body
    assert req.path == "/v1/messages"
    assert req.headers["anthropic-version"] == "2023-06-01"
    streaming = req.body.get("stream") is True
    params = BetaParams if beta else (MessageCreateParamsStreaming if streaming else MessageCreateParamsNonStreaming)
    body = {k: v for k, v in req.body.items() if not (beta and k == "stream") and k not in SAMPLING}
    assert _strict(json.loads(json.dumps(body)), params, "$") is None, _strict(body, params, "$")


# -- emulator plumbing -----------------------------------------------------------------


def send(client: anthropic.Anthropic, emulator: AnthropicEmulator, req: Any, *, beta: bool = False) -> AssistantMessage:
    """Send through the SDK; the emulator must receive the body unchanged and accept it."""
    check_request(req, beta=beta)
    message = client.messages.create(**req.body, extra_headers=req.headers)
    assert emulator.requests[-1].body == json.loads(req.content)
    assert isinstance(message, SdkMessage)
    return typing.cast(AssistantMessage, req.receive(message.model_dump()))


def send_stream(client: anthropic.Anthropic, req: Any) -> AssistantMessage:
    check_request(req)
    acc = req.stream()
    for event in client.messages.create(**req.body, extra_headers=req.headers):
        acc.feed(event.model_dump())
    return typing.cast(AssistantMessage, acc.finish())


def post(base_url: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> tuple[int, Any]:
    """A raw HTTP POST (what a naive client would send), bypassing thinkseal."""
    request = urllib.request.Request(
        base_url + "/v1/messages", data=json.dumps(body).encode(), headers=dict(headers), method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def raw_sse(base_url: str, req: Any) -> list[dict[str, Any]]:
    """Every SSE event's data object, pings included, as sent on the wire."""
    request = urllib.request.Request(base_url + "/v1/messages", data=req.content, headers=req.headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def rejected(base_url: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> str:
    status, payload = post(base_url, body, headers)
    assert status == 400, payload
    assert payload["type"] == "error"
    assert payload["error"]["type"] == "invalid_request_error"
    return typing.cast(str, payload["error"]["message"])


def start(*messages: Any) -> Conversation:
    return Conversation([SystemMessage("You are a weather assistant."), *messages], tools=TOOLS)


P = thinkseal.provider("anthropic")


def tool_loop(client: anthropic.Anthropic, emulator: AnthropicEmulator) -> Conversation:
    """user -> [thinking, text, tool_use] -> tool result -> [thinking, text]; all sealed and accepted."""
    conv = start(UserMessage("Weather in Paris?"))
    emulator.script(
        Think("I need the weather first."), Say("Checking."), Call("toolu_1", "get_weather", {"city": "Paris"})
    )
    conv = conv.append(send(client, emulator, P.prepare(conv, model=MODEL, **OPTS)))
    conv = conv.append(ToolMessage("20°C, sunny", "toolu_1"))
    emulator.script(Think("It is sunny."), Say("It is 20°C and sunny in Paris."))
    conv = conv.append(send(client, emulator, P.prepare(conv, model=MODEL, **OPTS)))
    return conv.append(UserMessage("And tomorrow?"))


# -- the full loop ------------------------------------------------------------------------------


def test_full_loop_exact_bodies(anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator) -> None:
    conv = start(UserMessage("Weather in Paris?"))
    req = P.prepare(conv, model=MODEL, **OPTS)
    assert req.body == {
        "model": MODEL,
        "max_tokens": 4096,
        "thinking": THINKING,
        "system": "You are a weather assistant.",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [
            {"name": "get_weather", "description": "Current weather for a city", "input_schema": WEATHER.parameters},
            {"name": "get_time", "description": "Local time in a city", "input_schema": TIME.parameters},
        ],
    }
    assert req.headers == {"anthropic-version": "2023-06-01", "content-type": "application/json"}
    anthropic_emulator.script(Think("I need the weather first."), Call("toolu_1", "get_weather", {"city": "Paris"}))
    reply = send(anthropic_client, anthropic_emulator, req)
    first = reply.thinking[0]
    assert isinstance(first, ThinkingBlock.Text)
    signature = first.signature
    assert signature  # signed by the emulator for this very request
    assert reply.parts == (
        ThinkingBlock.Text("I need the weather first.", signature),
        ToolCall("toolu_1", "get_weather", {"city": "Paris"}),
    )
    assert reply.thinking_binding is not None
    assert reply.thinking_binding.origin == Origin("anthropic", MODEL)

    conv = conv.append(reply, ToolMessage("20°C, sunny", "toolu_1"))
    req = P.prepare(conv, model=MODEL, **OPTS)
    assert [(e.index, e.reason) for e in req.report] == [(2, "kept")]
    assert req.body["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I need the weather first.", "signature": signature},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "20°C, sunny"}]},
    ]
    anthropic_emulator.script(Think("Sunny."), Say("It is 20°C and sunny."))
    final = send(anthropic_client, anthropic_emulator, req)
    assert final.content == "It is 20°C and sunny."
    assert final.has_sealed_thinking
    assert anthropic_emulator.errors == []


def test_multi_round_tool_loop_stays_sealed(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = tool_loop(anthropic_client, anthropic_emulator)
    for n in range(3):
        anthropic_emulator.script(Think(f"round {n}"), Call(f"toolu_r{n}", "get_time", {"city": "Paris"}))
        conv = conv.append(send(anthropic_client, anthropic_emulator, P.prepare(conv, model=MODEL, **OPTS)))
        conv = conv.append(ToolMessage(f"{10 + n}:00", f"toolu_r{n}"))
    req = P.prepare(conv, model=MODEL, **OPTS)
    assert all(e.kept for e in req.report)
    assert len(req.report) == 5
    send(anthropic_client, anthropic_emulator, req)
    assert anthropic_emulator.errors == []


def test_streaming_loop_matches_receive(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = start(UserMessage("Weather and time in Paris?"))
    script = (
        Think("Two tools."),
        Say("Let me look."),
        Call("toolu_1", "get_weather", {"city": "Paris"}),
        Redact("secret reasoning"),
        Think(""),
        Call("toolu_2", "get_time", {"city": "Paris"}),
    )
    anthropic_emulator.script(*script)
    anthropic_emulator.script(*script)
    received = send(anthropic_client, anthropic_emulator, P.prepare(conv, model=MODEL, **OPTS))
    req = P.prepare(conv, model=MODEL, stream=True, **OPTS)
    assert req.body["stream"] is True
    streamed = send_stream(anthropic_client, req)
    assert streamed == received
    assert streamed.parts == received.parts
    assert streamed.thinking_binding == received.thinking_binding

    conv = conv.append(streamed, ToolMessage("20°C", "toolu_1"), ToolMessage("14:00", "toolu_2"))
    anthropic_emulator.script(Think("Done."), Say("20°C at 14:00."))
    anthropic_emulator.script(Think("Done."), Say("20°C at 14:00."))
    again = send(anthropic_client, anthropic_emulator, P.prepare(conv, model=MODEL, **OPTS))
    events = raw_sse(anthropic_emulator.base_url, P.prepare(conv, model=MODEL, stream=True, **OPTS))
    assert {"type": "ping"} in events
    acc = P.prepare(conv, model=MODEL, stream=True, **OPTS).stream()
    for event in events:
        acc.feed(event)
    assert acc.finish() == again
    assert anthropic_emulator.errors == []


def test_sdk_stream_accumulator_agrees(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    """The official SDK's own accumulator (signature_delta replaces, JSON parsed
    at the end) and thinkseal's agree on the same stream."""
    conv = start(UserMessage("Weather?"))
    script = (Think("Hmm."), Redact("r"), Say("Looking."), Call("toolu_1", "get_weather", {"city": "Oslo"}))
    anthropic_emulator.script(*script)
    anthropic_emulator.script(*script)
    req = P.prepare(conv, model=MODEL, stream=True, **OPTS)
    body = {k: v for k, v in req.body.items() if k != "stream"}
    with anthropic_client.messages.stream(**body, extra_headers=req.headers) as stream:
        final = stream.get_final_message()
    mine = send_stream(anthropic_client, req)
    assert req.receive(final.model_dump()) == mine
    assert [type(b) for b in mine.thinking] == [ThinkingBlock.Text, ThinkingBlock.Redacted]
    assert mine.has_sealed_thinking


# -- order and pairing --------------------------------------------------------------------------------


def test_interleaved_thinking_replayed_in_order(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = start(UserMessage("Weather and time?"))
    anthropic_emulator.script(
        Think("first"),
        Say("Looking up the weather."),
        Call("toolu_a", "get_weather", {"city": "Rome"}),
        Think("second"),
        Call("toolu_b", "get_time", {"city": "Rome"}),
    )
    reply = send(anthropic_client, anthropic_emulator, P.prepare(conv, model=MODEL, **OPTS))
    kinds = [type(p).__name__ for p in reply.parts]
    assert kinds == ["Text", "str", "ToolCall", "Text", "ToolCall"]
    # Results appended in the reverse order: they go out in call order, in one user turn.
    conv = conv.append(reply, ToolMessage("10:00", "toolu_b"), ToolMessage("25°C", "toolu_a", is_error=True))
    req = P.prepare(conv, model=MODEL, **OPTS)
    assistant, results = req.body["messages"][1], req.body["messages"][2]
    assert [b["type"] for b in assistant["content"]] == ["thinking", "text", "tool_use", "thinking", "tool_use"]
    assert [b.get("thinking") for b in assistant["content"]] == ["first", None, None, "second", None]
    assert results == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "25°C", "is_error": True},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "10:00"},
        ],
    }
    send(anthropic_client, anthropic_emulator, req)
    assert anthropic_emulator.errors == []

    # A naive client that rebuilds the turn canonically (thinking first) is rejected.
    naive = copy.deepcopy(req.body)
    blocks = naive["messages"][1]["content"]
    naive["messages"][1]["content"] = [blocks[0], blocks[3], blocks[1], blocks[2], blocks[4]]
    message = rejected(anthropic_emulator.base_url, naive, req.headers)
    assert message == BOUND_ELSEWHERE.format(i=1, j=1, detail=PREFIX_DETAIL["messages"])


def test_unpaired_call_dropped_and_stray_result_named(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = start(UserMessage("Weather and time?"))
    anthropic_emulator.script(
        Think("both"), Call("toolu_a", "get_weather", {"city": "Rome"}), Call("toolu_b", "get_time", {"city": "Rome"})
    )
    reply = send(anthropic_client, anthropic_emulator, P.prepare(conv, model=MODEL, **OPTS))
    conv = conv.append(reply, ToolMessage("25°C", "toolu_a"), ToolMessage("late", "toolu_zz"))
    # Dropping the unanswered call changes the turn: with thinking on, that is a ReplayError...
    with pytest.raises(ReplayError) as err:
        P.prepare(conv, model=MODEL, **OPTS)
    assert (err.value.index, err.value.reason) == (2, "unpaired-tool-call")
    # ...and with thinking off the request goes out unsealed and is accepted.
    req = P.prepare(conv, model=MODEL, max_tokens=1024)
    assert [(e.index, e.reason) for e in req.report] == [(2, "unpaired-tool-call")]
    assert req.body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Rome"}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "25°C"},
                {"type": "text", "text": "[tool result for call toolu_zz]\nlate"},
            ],
        },
    ]
    send(anthropic_client, anthropic_emulator, req)
    assert anthropic_emulator.errors == []
    # What a naive client sends (the unanswered call kept) is rejected.
    naive = copy.deepcopy(req.body)
    naive["messages"][1]["content"].append({"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {}})
    assert rejected(anthropic_emulator.base_url, naive, req.headers) == MISSING_RESULT.format(i=1, ids="toolu_b")


def test_stray_result_after_user_text_merges_into_one_turn() -> None:
    conv = start(
        UserMessage("hi"),
        AssistantMessage("Hello!"),
        UserMessage("first"),
        ToolMessage("orphan", "toolu_x", is_error=True),
        SystemMessage("Be brief."),
        UserMessage("second"),
    )
    req = P.prepare(conv, model=MODEL, max_tokens=100)
    check_request(req)
    assert req.body["system"] == [
        {"type": "text", "text": "You are a weather assistant."},
        {"type": "text", "text": "Be brief."},
    ]
    assert req.body["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello!"}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "first"},
                {"type": "text", "text": "[tool result for call toolu_x (error)]\norphan"},
                {"type": "text", "text": "second"},
            ],
        },
    ]


# -- histories that must go out unsealed -------------------------------------------------------------


def _sealed_blocks(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] in ("thinking", "redacted_thinking")
    ]


def test_pruned_history_goes_out_unsealed(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = tool_loop(anthropic_client, anthropic_emulator)
    sealed = P.prepare(conv, model=MODEL, **OPTS)
    assert len(_sealed_blocks(sealed.body)) == 2
    pruned = conv.with_messages([conv[0], conv[1], *conv[3:]])  # the first reply was summarised away
    req = P.prepare(pruned, model=MODEL, **OPTS)
    assert _sealed_blocks(req.body) == []
    assert [e.reason for e in req.report] == ["prefix-changed"]
    send(anthropic_client, anthropic_emulator, req)
    assert anthropic_emulator.errors == []
    # The naive client prunes the same way but keeps the later signature: rejected.
    naive = copy.deepcopy(sealed.body)
    del naive["messages"][1:3]
    naive["messages"][0] = {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}
    message = rejected(anthropic_emulator.base_url, naive, sealed.headers)
    assert message == BOUND_ELSEWHERE.format(i=1, j=0, detail=PREFIX_DETAIL["messages"])


def test_edited_turn_goes_out_unsealed(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = tool_loop(anthropic_client, anthropic_emulator)
    last = conv[4]
    assert isinstance(last, AssistantMessage)
    # An edit through the API unseals the turn; an edit of a stored copy keeps a binding that no longer holds.
    stored = last.to_dict()
    stored["parts"][-1]["text"] = "It is warm."
    for edited_turn, reason in (
        (last.with_content("It is warm."), "no-sealed-thinking"),
        (thinkseal.message_from_dict(stored), "turn-changed"),
    ):
        edited = conv.with_messages([*conv[:4], edited_turn, conv[5]])
        req = P.prepare(edited, model=MODEL, **OPTS)
        assert [e.reason for e in req.report] == ["kept", reason]
        assert len(_sealed_blocks(req.body)) == 1  # the earlier, untouched turn stays sealed
        assert req.body["messages"][3] == {"role": "assistant", "content": [{"type": "text", "text": "It is warm."}]}
        send(anthropic_client, anthropic_emulator, req)
    assert anthropic_emulator.errors == []
    # The naive client edits the thinking text itself and keeps the signature: rejected.
    naive = copy.deepcopy(P.prepare(conv, model=MODEL, **OPTS).body)
    naive["messages"][3]["content"][0]["thinking"] = "It is rainy."
    assert rejected(anthropic_emulator.base_url, naive, req.headers) == CANNOT_MODIFY.format(i=3, j=0)
    naive["messages"][1]["content"][0]["thinking"] = "Edited earlier thinking."
    assert rejected(anthropic_emulator.base_url, naive, req.headers) == INVALID_SIGNATURE.format(i=1, j=0)


def test_changed_system_prompt_goes_out_unsealed(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = tool_loop(anthropic_client, anthropic_emulator)
    changed = conv.append(SystemMessage("Answer in French."))
    req = P.prepare(changed, model=MODEL, **OPTS)
    assert [e.reason for e in req.report] == ["prefix-changed", "prefix-changed"]
    assert _sealed_blocks(req.body) == []
    send(anthropic_client, anthropic_emulator, req)
    naive = copy.deepcopy(P.prepare(conv, model=MODEL, **OPTS).body)
    naive["system"] = req.body["system"]
    message = rejected(anthropic_emulator.base_url, naive, req.headers)
    assert message == BOUND_ELSEWHERE.format(i=1, j=0, detail=PREFIX_DETAIL["system"])
    assert "The block is bound to a different conversation" in message


def test_changed_tools_go_out_unsealed(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = tool_loop(anthropic_client, anthropic_emulator)
    req = P.prepare(conv.with_tools([WEATHER]), model=MODEL, **OPTS)
    assert _sealed_blocks(req.body) == []
    send(anthropic_client, anthropic_emulator, req)
    naive = copy.deepcopy(P.prepare(conv, model=MODEL, **OPTS).body)
    naive["tools"] = req.body["tools"]
    assert rejected(anthropic_emulator.base_url, naive, req.headers) == BOUND_ELSEWHERE.format(
        i=1, j=0, detail=PREFIX_DETAIL["tools"]
    )


def test_retargeted_to_another_model_goes_out_unsealed(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = tool_loop(anthropic_client, anthropic_emulator)
    req = P.prepare(conv, model="claude-emulated-opus", **OPTS)
    assert [e.reason for e in req.report] == ["origin-mismatch", "origin-mismatch"]
    assert _sealed_blocks(req.body) == []
    send(anthropic_client, anthropic_emulator, req)
    assert anthropic_emulator.errors == []
    naive = {**P.prepare(conv, model=MODEL, **OPTS).body, "model": "claude-emulated-opus"}
    assert rejected(anthropic_emulator.base_url, naive, req.headers) == INVALID_SIGNATURE.format(i=1, j=0)


def test_other_account_goes_out_unsealed(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = tool_loop(anthropic_client, anthropic_emulator)
    req = thinkseal.provider("anthropic", account="team-b").prepare(conv, model=MODEL, **OPTS)
    assert {e.reason for e in req.report} == {"origin-mismatch"}
    assert _sealed_blocks(req.body) == []


def test_other_providers_thinking_never_sent() -> None:
    bedrock_origin = Origin("bedrock", MODEL)
    router_origin = Origin("openrouter", "anthropic/claude-sonnet-4.5")
    conv = start(UserMessage("q1"))
    conv = respond(conv, bedrock_origin, AssistantMessage("a1", thinking=[ThinkingBlock.Text("bedrock", "SIG_B")]))
    conv = conv.append(UserMessage("q2"))
    conv = respond(
        conv,
        router_origin,
        AssistantMessage("a2", thinking=[ThinkingBlock.Text("router"), ThinkingBlock.Opaque("openrouter", '{"x":1}')]),
    )
    conv = conv.append(UserMessage("q3"))
    req = P.prepare(conv, model=MODEL, **OPTS)
    check_request(req)
    assert [e.reason for e in req.report] == ["origin-mismatch", "origin-mismatch"]
    assert req.body["messages"][1] == {"role": "assistant", "content": [{"type": "text", "text": "a1"}]}
    assert req.body["messages"][3] == {"role": "assistant", "content": [{"type": "text", "text": "a2"}]}
    for text in ("SIG_B", "router", "bedrock", '{\\"x\\":1}'):
        assert text not in req.content.decode()


def test_opaque_never_sent_even_when_kept() -> None:
    conv = start(UserMessage("q"))
    turn = AssistantMessage.from_parts(
        [ThinkingBlock.Text("t", "SIG"), ThinkingBlock.Opaque("openrouter", "payload"), "answer"]
    )
    conv = conv.append(turn, UserMessage("next")).rebind(Origin("anthropic", MODEL))
    req = P.prepare(conv, model=MODEL, **OPTS)
    assert req.report[0].kept
    assert req.body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "t", "signature": "SIG"},
        {"type": "text", "text": "answer"},
    ]
    assert b"payload" not in req.content


def test_unbound_history_goes_out_unsealed(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    imported = AssistantMessage(
        "It is sunny.", thinking=[ThinkingBlock.Text("from a log", "SIG_FROM_LOG"), ThinkingBlock.Redacted("UkVE")]
    )
    conv = start(UserMessage("Weather?"), imported, UserMessage("Thanks. Tomorrow?"))
    req = P.prepare(conv, model=MODEL, **OPTS)
    assert [e.reason for e in req.report] == ["unbound"]
    assert req.body["messages"][1] == {"role": "assistant", "content": [{"type": "text", "text": "It is sunny."}]}
    assert b"SIG_FROM_LOG" not in req.content
    assert b"UkVE" not in req.content
    send(anthropic_client, anthropic_emulator, req)
    naive = copy.deepcopy(req.body)
    naive["messages"][1]["content"].insert(0, {"type": "thinking", "thinking": "from a log", "signature": "SIG"})
    assert rejected(anthropic_emulator.base_url, naive, req.headers) == INVALID_SIGNATURE.format(i=1, j=0)


def test_unsigned_thinking_never_sent(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = start(
        UserMessage("Weather?"),
        AssistantMessage("Sunny.", thinking=[ThinkingBlock.Text("deepseek reasoning")]),
        UserMessage("Tomorrow?"),
    )
    req = P.prepare(conv, model=MODEL, **OPTS)
    assert b"deepseek reasoning" not in req.content
    send(anthropic_client, anthropic_emulator, req)
    naive = copy.deepcopy(req.body)
    naive["messages"][1]["content"].insert(0, {"type": "thinking", "thinking": "deepseek reasoning"})
    assert (
        rejected(anthropic_emulator.base_url, naive, req.headers)
        == "messages.1.content.0.thinking.signature: Field required"
    )
    naive["messages"][1]["content"][0]["signature"] = ""
    assert rejected(anthropic_emulator.base_url, naive, req.headers) == INVALID_SIGNATURE.format(i=1, j=0)


def test_thinking_only_turn_is_left_out() -> None:
    conv = start(UserMessage("q"))
    conv = respond(conv, Origin("anthropic", MODEL), AssistantMessage(None, thinking=[ThinkingBlock.Text("t", "S")]))
    conv = conv.append(UserMessage("q again"))
    req = P.prepare(conv, model=MODEL, max_tokens=100)
    check_request(req)
    assert req.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "text", "text": "q again"}]}
    ]


# -- ReplayError and the drop_block opt-in ---------------------------------------------------------------


def _unsealed_tool_loop(client: anthropic.Anthropic, emulator: AnthropicEmulator) -> Conversation:
    conv = start(UserMessage("Weather?"))
    emulator.script(Think("call it"), Call("toolu_1", "get_weather", {"city": "Paris"}))
    conv = conv.append(send(client, emulator, P.prepare(conv, model=MODEL, **OPTS)))
    conv = conv.append(ToolMessage("20°C", "toolu_1"))
    # The caller rewrites the system prompt mid-loop: the turn can no longer go out sealed.
    return conv.with_messages([SystemMessage("You are terse."), *conv[1:]])


@pytest.mark.parametrize("thinking", [THINKING, {"type": "adaptive"}])
def test_replay_error_when_tool_loop_turn_would_go_out_unsealed(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator, thinking: dict[str, Any]
) -> None:
    conv = _unsealed_tool_loop(anthropic_client, anthropic_emulator)
    with pytest.raises(ReplayError) as err:
        P.prepare(conv, model=MODEL, max_tokens=4096, thinking=thinking)
    assert err.value.index == 2
    assert err.value.reason == "prefix-changed"
    assert "drop_block" in str(err.value)
    assert "disable thinking" in str(err.value)
    # Without thinking the same request is fine; it is what a naive client would send with thinking on:
    plain = P.prepare(conv, model=MODEL, max_tokens=4096)
    send(anthropic_client, anthropic_emulator, plain)
    naive = {**plain.body, "thinking": thinking}
    assert rejected(anthropic_emulator.base_url, naive, plain.headers) == LEADING_THINKING.format(i=1, found="tool_use")


def test_replay_error_for_a_turn_that_never_had_thinking() -> None:
    conv = start(
        UserMessage("Weather?"),
        AssistantMessage(tool_calls=[ToolCall("toolu_1", "get_weather", {"city": "Paris"})]),
        ToolMessage("20°C", "toolu_1"),
    )
    with pytest.raises(ReplayError) as err:
        P.prepare(conv, model=MODEL, **OPTS)
    assert (err.value.index, err.value.reason) == (2, "no-sealed-thinking")
    # Ending the loop with a user message, or disabling thinking, is fine.
    P.prepare(conv.append(UserMessage("go on")), model=MODEL, **OPTS)
    P.prepare(conv, model=MODEL, max_tokens=4096, thinking={"type": "disabled"})


def test_drop_block_opt_in(anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator) -> None:
    conv = _unsealed_tool_loop(anthropic_client, anthropic_emulator)
    thinking = {**THINKING, "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    req = P.prepare(conv, model=MODEL, max_tokens=4096, thinking=thinking, betas=["interleaved-thinking-2025-05-14"])
    assert req.headers["anthropic-beta"] == f"interleaved-thinking-2025-05-14,{BINDING_BETA}"
    assert req.body["thinking"] == thinking
    assert "betas" not in req.body
    assert _sealed_blocks(req.body) == []
    send(anthropic_client, anthropic_emulator, req, beta=True)
    assert anthropic_emulator.outcomes[-1].degraded
    # block_binding without drop_block still needs the beta header, and keeps the ReplayError.
    with pytest.raises(ReplayError):
        P.prepare(conv, model=MODEL, max_tokens=4096, thinking={**THINKING, "block_binding": {}})
    req = P.prepare(
        conv.append(UserMessage("ok")), model=MODEL, max_tokens=4096, thinking={**THINKING, "block_binding": {}}
    )
    assert req.headers["anthropic-beta"] == BINDING_BETA


def test_drop_block_lets_the_emulator_drop_what_a_naive_client_sends(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = tool_loop(anthropic_client, anthropic_emulator)
    sealed = P.prepare(conv, model=MODEL, **OPTS).body
    naive = {**copy.deepcopy(sealed), "system": "Changed."}
    naive["thinking"] = {**THINKING, "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    headers = {"anthropic-version": "2023-06-01", "content-type": "application/json"}
    assert "requires the `thinking-binding-controls-2026-08-01`" in rejected(
        anthropic_emulator.base_url, naive, headers
    )
    status, payload = post(anthropic_emulator.base_url, naive, {**headers, "anthropic-beta": BINDING_BETA})
    assert status == 200
    assert [t["path"] for t in json.loads(payload)["input_transformations"]] == [
        "messages.1.content.0",
        "messages.3.content.0",
    ]


# -- options -------------------------------------------------------------------------------------------------

ERRORS = [
    ({"thinking": THINKING}, "max_tokens: Field required", "max_tokens"),
    ({"max_tokens": "4096"}, "max_tokens: Input should be a valid integer", "max_tokens"),
    (
        {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 1000}},
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        "thinking.budget_tokens",
    ),
    (
        {"max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 2048}},
        "`max_tokens` must be greater than `thinking.budget_tokens`.",
        "max_tokens",
    ),
    (
        {"max_tokens": 4096, "thinking": {"type": "enabled"}},
        "thinking.enabled.budget_tokens: Field required",
        "thinking.budget_tokens",
    ),
    (
        {**OPTS, "temperature": 0.5},
        "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode",
        "temperature",
    ),
    (
        {"max_tokens": 10, "thinking": {"type": "adaptive"}, "temperature": 0},
        "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode",
        "temperature",
    ),
    ({**OPTS, "top_k": 5}, "`top_k` may not be set when thinking is enabled", "top_k"),
    ({**OPTS, "top_p": 0.9}, "`top_p` must be between 0.95 and 1", "top_p"),
    (
        {**OPTS, "tool_choice": {"type": "any"}},
        "Thinking may not be enabled when tool_choice forces tool use.",
        "tool_choice",
    ),
    (
        {**OPTS, "tool_choice": {"type": "tool", "name": "get_weather"}},
        "Thinking may not be enabled when tool_choice forces tool use.",
        "tool_choice",
    ),
    ({"max_tokens": 10, "thinking": {"type": "on"}}, "does not match any of the expected tags", "thinking.type"),
    ({"max_tokens": 10, "thinking": "enabled"}, "thinking: Input should be a valid dictionary", "thinking"),
    (
        {"max_tokens": 10, "thinking": {"type": "adaptive", "budget_tokens": 2048}},
        "thinking.adaptive.budget_tokens: Extra inputs are not permitted",
        "thinking.budget_tokens",
    ),
    (
        {"max_tokens": 10, "thinking": {"type": "disabled", "display": "omitted"}},
        "thinking.disabled.display: Extra inputs are not permitted",
        "thinking.display",
    ),
    (
        {"max_tokens": 10, "thinking": {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "x"}}},
        "Input should be 'error' or 'drop_block'",
        "thinking.block_binding.prefix_mismatch_behavior",
    ),
    ({**OPTS, "betas": "interleaved-thinking-2025-05-14"}, "expected a list of beta names", "betas"),
    ({**OPTS, "system": "x"}, "system: set by thinkseal", "system"),
    ({**OPTS, "messages": []}, "messages: set by thinkseal", "messages"),
    ({**OPTS, "tools": []}, "tools: set by thinkseal", "tools"),
]


@pytest.mark.parametrize(("options", "message", "path"), ERRORS)
def test_option_validation(options: dict[str, Any], message: str, path: str) -> None:
    with pytest.raises(ValidationError) as err:
        P.prepare(start(UserMessage("q")), model=MODEL, **options)
    assert message in str(err.value)
    assert err.value.path == path


def test_options_that_are_allowed() -> None:
    conv = start(UserMessage("q"))
    # The budget may exceed max_tokens under interleaved thinking (a budget for the whole turn).
    req = P.prepare(
        conv,
        model=MODEL,
        max_tokens=2048,
        thinking={"type": "enabled", "budget_tokens": 4096},
        betas=["interleaved-thinking-2025-05-14"],
    )
    assert req.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    check_request(req)
    for extra in (
        {"temperature": 1, "top_p": 0.95},
        {"tool_choice": {"type": "auto"}},
        {"metadata": {"user_id": "u1"}, "stop_sequences": ["END"]},
    ):
        check_request(P.prepare(conv, model=MODEL, **OPTS, **extra))
    # Forced tool use is documented as fine with adaptive thinking; sampling options are fine without thinking.
    check_request(
        P.prepare(conv, model=MODEL, max_tokens=64, thinking={"type": "adaptive"}, tool_choice={"type": "any"})
    )
    check_request(P.prepare(conv, model=MODEL, max_tokens=64, temperature=0.2, top_k=5, top_p=0.5))


def test_response_format_becomes_output_config() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}
    conv = start(UserMessage("q")).with_response_format(
        {"type": "json_schema", "json_schema": {"name": "weather", "schema": schema, "strict": True}}
    )
    req = P.prepare(conv, model=MODEL, max_tokens=64, output_config={"effort": "high"})
    check_request(req)
    assert req.body["output_config"] == {"effort": "high", "format": {"type": "json_schema", "schema": schema}}
    with pytest.raises(ValidationError, match="give one"):
        P.prepare(conv, model=MODEL, max_tokens=64, output_config={"format": {"type": "json_schema", "schema": {}}})
    with pytest.raises(ValidationError, match="anthropic supports json_schema, text; got 'json_object'") as err:
        P.prepare(conv.with_response_format({"type": "json_object"}), model=MODEL, max_tokens=64)
    assert err.value.path == "Conversation.response_format.type"
    with pytest.raises(ValidationError, match="schema"):
        P.prepare(
            conv.with_response_format({"type": "json_schema", "json_schema": {"name": "x"}}), model=MODEL, max_tokens=64
        )


def test_stream_flag_and_cached_fragments() -> None:
    conv = start(UserMessage("q"))
    conv = respond(conv, Origin("anthropic", MODEL), AssistantMessage("a", thinking=[ThinkingBlock.Text("t", "S")]))
    conv = conv.append(UserMessage("q2"))
    first = P.prepare(conv, model=MODEL, **OPTS)
    second = P.prepare(conv.append(AssistantMessage("b"), UserMessage("q3")), model=MODEL, stream=True, **OPTS)
    assert "stream" not in first.body
    assert second.body["stream"] is True
    check_request(second)
    # The unchanged turns' encoded fragments are reused, not rebuilt (req.body is decoded from them).
    assert second._encoded.items[0] is first._encoded.items[0]
    assert second._encoded.items[1] is first._encoded.items[1]
    assert second.body["messages"][:2] == first.body["messages"][:2]


# -- responses --------------------------------------------------------------------------------------------------


def test_recorded_fixture_parses_with_sdk_and_thinkseal() -> None:
    raw = fixture("message_interleaved.json")
    SdkMessage.model_validate(raw)
    events = fixture("stream_interleaved.json")
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    for event in events:
        if event["type"] != "ping":
            adapter.validate_python(event)
    req = P.prepare(start(UserMessage("Weather and time in Paris?")), model=MODEL, **OPTS)
    received = req.receive(raw)
    assert received.parts == (
        ThinkingBlock.Text("I need the weather in Paris first.", raw["content"][0]["signature"]),
        "Let me check the weather.",
        ToolCall("toolu_01A09q90qw90lq917835lq9", "get_weather", {"city": "Paris", "unit": "celsius"}),
        ThinkingBlock.Redacted(raw["content"][3]["data"]),
        ThinkingBlock.Text("", raw["content"][4]["signature"]),
        ToolCall("toolu_01B7Rz4kq1H9sYw3aQe2vN5", "get_time", {"city": "Paris"}),
    )
    assert req.receive(SdkMessage.model_validate(raw).model_dump()) == received
    acc = req.stream()
    for event in events:
        acc.feed(event)
    assert acc.finish() == received


def test_unknown_extra_fields_are_ignored() -> None:
    raw = fixture("message_interleaved.json")
    noisy = copy.deepcopy(raw)
    noisy["brand_new_field"] = {"x": 1}
    for block in noisy["content"]:
        block["cache_hint"] = None
        block["extra"] = [1, 2]
    req = P.prepare(start(UserMessage("q")), model=MODEL, **OPTS)
    assert req.receive(noisy) == req.receive(raw)
    events = [{**e, "extra": True} for e in fixture("stream_interleaved.json")]
    events.insert(3, {"type": "brand_new_event", "payload": 1})
    acc = req.stream()
    for event in events:
        acc.feed(event)
    assert acc.finish() == req.receive(raw)


def _mutate(path: list[Any], value: Any) -> dict[str, Any]:
    raw = fixture("message_interleaved.json")
    target = raw
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return typing.cast(dict[str, Any], raw)


MALFORMED = [
    (["content"], KeyError, "$.content"),
    (["content"], "text", "$.content"),
    (["content", 1], "text", "$.content[1]"),
    (["content", 1, "type"], KeyError, "$.content[1].type"),
    (["content", 1, "text"], 7, "$.content[1].text"),
    (["content", 0, "signature"], KeyError, "$.content[0].signature"),
    (["content", 0, "signature"], None, "$.content[0].signature"),
    (["content", 0, "thinking"], ["a"], "$.content[0].thinking"),
    (["content", 2, "input"], '{"city": "Paris"}', "$.content[2].input"),
    (["content", 2, "id"], " ", "$.content[2].id"),
    (["content", 2, "name"], KeyError, "$.content[2].name"),
    (["content", 3, "data"], "", "$.content[3].data"),
    (["content", 3, "data"], 5, "$.content[3].data"),
    (["role"], "user", "$.role"),
    (["content", 1, "text"], "\ud800", "$.content[1].text"),
]


@pytest.mark.parametrize(("path", "value", "where"), MALFORMED)
def test_malformed_responses_name_the_path(path: list[Any], value: Any, where: str) -> None:
    req = P.prepare(start(UserMessage("q")), model=MODEL, **OPTS)
    with pytest.raises(ResponseError) as err:
        req.receive(_mutate(path, value))
    assert err.value.path == where


def test_error_bodies_and_non_objects() -> None:
    req = P.prepare(start(UserMessage("q")), model=MODEL, **OPTS)
    with pytest.raises(ResponseError, match="Invalid `signature`") as err:
        req.receive(fixture("error_invalid_signature.json"))
    assert err.value.path == "$.error"
    with pytest.raises(ResponseError):
        req.receive([])  # type: ignore[arg-type]


def _events() -> list[dict[str, Any]]:
    return typing.cast(list[dict[str, Any]], fixture("stream_interleaved.json"))


def _feed(events: list[dict[str, Any]]) -> AssistantMessage:
    acc = P.prepare(start(UserMessage("q")), model=MODEL, **OPTS).stream()
    for event in events:
        acc.feed(event)
    return acc.finish()


def _where(events: list[dict[str, Any]], kind: str, index: int | None = None) -> int:
    return next(i for i, e in enumerate(events) if e["type"] == kind and (index is None or e.get("index") == index))


def test_truncated_streams_raise() -> None:
    events = _events()
    with pytest.raises(ResponseError, match="message_stop") as err:
        _feed([e for e in events if e["type"] != "message_stop"])
    assert err.value.path == "$"
    with pytest.raises(ResponseError, match="never stopped") as err:
        _feed([e for e in events if not (e["type"] == "content_block_stop" and e["index"] == 2)])
    assert err.value.path == "$.content[2]"
    with pytest.raises(ResponseError, match="message_start"):
        _feed(events[1:])
    with pytest.raises(ResponseError, match="message_start"):
        _feed([])


def test_malformed_stream_events_raise() -> None:
    events = _events()
    cases: list[tuple[list[dict[str, Any]], str]] = []
    bad = copy.deepcopy(events)
    del bad[_where(bad, "content_block_start", 1)]["content_block"]["type"]
    cases.append((bad, "$.content_block.type"))
    bad = copy.deepcopy(events)
    bad[_where(bad, "content_block_delta", 1)]["delta"] = {"type": "signature_delta", "signature": "x"}
    cases.append((bad, "$.delta.type"))
    bad = copy.deepcopy(events)
    bad[_where(bad, "content_block_delta", 0)]["index"] = 42
    cases.append((bad, "$.index"))
    bad = copy.deepcopy(events)
    bad[_where(bad, "content_block_delta", 2)]["delta"]["partial_json"] = "{not json"
    cases.append((bad, "$.content[2].input"))
    bad = copy.deepcopy(events)
    bad[_where(bad, "content_block_delta", 0)]["delta"]["thinking"] = 3
    cases.append((bad, "$.delta.thinking"))
    bad = copy.deepcopy(events)
    del bad[_where(bad, "content_block_start", 3)]["content_block"]["data"]
    cases.append((bad, "$.content_block.data"))
    bad = copy.deepcopy(events)
    bad.insert(4, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    cases.append((bad, "$.error"))
    bad = copy.deepcopy(events)
    bad.insert(4, {"index": 0})
    cases.append((bad, "$.type"))
    for broken, where in cases:
        with pytest.raises(ResponseError) as err:
            _feed(broken)
        assert err.value.path == where, broken


def test_signature_delta_replaces_and_unsigned_stream_is_not_sealed() -> None:
    events = _events()
    at = _where(events, "content_block_delta", 0)
    doubled = copy.deepcopy(events)
    doubled.insert(
        at, {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "OLD"}}
    )
    assert _feed(doubled) == _feed(events)
    plain = [
        e
        for e in events
        if e.get("index", 0) in (1, 2) or e["type"] in ("message_start", "message_delta", "message_stop")
    ]
    reply = _feed(plain)
    assert reply.thinking == ()
    assert reply.thinking_binding is None
    no_signature = [
        e
        for e in events
        if e.get("index") != 3  # the redacted block
        and not (e["type"] == "content_block_delta" and e["delta"]["type"] == "signature_delta")
    ]
    reply = _feed(no_signature)
    assert not reply.has_sealed_thinking
    assert reply.thinking == (ThinkingBlock.Text("I need the weather in Paris first."),)
    assert reply.thinking_binding is None


def test_feed_after_finish_is_refused() -> None:
    acc = P.prepare(start(UserMessage("q")), model=MODEL, **OPTS).stream()
    for event in _events():
        acc.feed(event)
    acc.finish()
    with pytest.raises(ValidationError):
        acc.feed({"type": "ping"})
