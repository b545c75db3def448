"""The ``bedrock`` adapter: every body checked with botocore's ParamValidator
against the Converse / ConverseStream input shapes, recorded fixtures parsed
(as HTTP JSON and through botocore's own response parser), and tool loops
driven with boto3 against a local Converse emulator that runs Claude's rules
(python/thinkseal/testing/bedrock.py)."""

from __future__ import annotations

import base64
import copy
import json
import typing
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from botocore.exceptions import ClientError  # type: ignore[import-untyped]
from botocore.parsers import RestJSONParser  # type: ignore[import-untyped]
from botocore.session import get_session  # type: ignore[import-untyped]
from botocore.validate import ParamValidator  # type: ignore[import-untyped]

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Native,
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
from thinkseal.providers.bedrock import boto3_params
from thinkseal.testing import respond
from thinkseal.testing.anthropic import (
    BINDING_BETA,
    BOUND_ELSEWHERE,
    CANNOT_MODIFY,
    INVALID_SIGNATURE,
    LEADING_THINKING,
    MISSING_RESULT,
    PREFIX_DETAIL,
    Call,
    Redact,
    Say,
    Think,
)
from thinkseal.testing.bedrock import MODEL_ERRORS, NULL_TEXT, TOOL_CONFIG, BedrockEmulator

FIXTURES = Path(__file__).parent / "fixtures" / "bedrock"
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
THINKING = {"type": "enabled", "budget_tokens": 2048}
OPTS: dict[str, Any] = {
    "inferenceConfig": {"maxTokens": 4096},
    "additionalModelRequestFields": {"thinking": THINKING},
}
WEATHER = Tool(
    "get_weather",
    "Current weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = Tool("get_time", "", {"type": "object", "properties": {"city": {"type": "string"}}})
TOOLS = (WEATHER, TIME)
P = thinkseal.provider("bedrock")
SERVICE = get_session().get_service_model("bedrock-runtime")


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def start(*messages: Any) -> Conversation:
    return Conversation([SystemMessage("You are a weather assistant."), *messages], tools=TOOLS)


def with_thinking(thinking: Mapping[str, Any], **fields: Any) -> dict[str, Any]:
    return {"inferenceConfig": {"maxTokens": 4096}, "additionalModelRequestFields": {"thinking": thinking, **fields}}


# -- checks against botocore ------------------------------------------------------------------


def check_request(req: thinkseal.PreparedRequest) -> None:
    """The bytes are the body, and the body (plus modelId, which lives in the
    path) validates against botocore's Converse/ConverseStream input shape."""
    assert json.loads(req.content) == req.body
    assert "modelId" not in req.body
    assert "stream" not in req.body
    _, model_segment, encoded_model, action = req.path.split("/")
    assert model_segment == "model"
    assert action in ("converse", "converse-stream")
    operation = SERVICE.operation_model("Converse" if action == "converse" else "ConverseStream")
    report = ParamValidator().validate({"modelId": unquote(encoded_model), **req.body}, operation.input_shape)
    assert not report.has_errors(), report.generate_report()


def botocore_parse(raw: Mapping[str, Any]) -> dict[str, Any]:
    """What boto3's ``converse`` returns for this HTTP JSON (blobs decoded to bytes)."""
    operation = SERVICE.operation_model("Converse")
    response = {"body": json.dumps(raw).encode(), "headers": {}, "status_code": 200}
    return typing.cast(dict[str, Any], RestJSONParser().parse(response, operation.output_shape))


def for_boto3(body: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body as boto3 parameters (the public helper, checked here against real boto3)."""
    return boto3_params(body)


def as_boto3_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(events)
    for event in out:
        delta = event.get("contentBlockDelta", {}).get("delta", {}).get("reasoningContent", {})
        if "redactedContent" in delta:
            delta["redactedContent"] = base64.b64decode(delta["redactedContent"])
    return out


# -- emulator plumbing ------------------------------------------------------------------------------


def model_of(req: thinkseal.PreparedRequest) -> str:
    return unquote(req.path.split("/")[2])


def send(client: Any, emulator: BedrockEmulator, req: thinkseal.PreparedRequest) -> AssistantMessage:
    """boto3 ``converse``; the emulator must receive exactly the JSON body and accept it."""
    check_request(req)
    response = client.converse(modelId=model_of(req), **for_boto3(req.body))
    assert (unquote(emulator.requests[-1].path.split("/")[2]), emulator.requests[-1].body) == (
        model_of(req),
        json.loads(req.content),
    )
    return req.receive(response)


def send_stream(client: Any, req: thinkseal.PreparedRequest) -> AssistantMessage:
    check_request(req)
    response = client.converse_stream(modelId=model_of(req), **for_boto3(req.body))
    acc = req.stream()
    for event in response["stream"]:
        acc.feed(event)
    return acc.finish()


def post(base_url: str, path: str, body: Mapping[str, Any] | bytes) -> tuple[int, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        base_url + path, data=data, headers={"content-type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def rejected(base_url: str, path: str, body: Mapping[str, Any]) -> str:
    status, payload = post(base_url, path, body)
    assert status == 400, payload
    return typing.cast(str, payload["message"])


def _sealed_blocks(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] for b in m["content"] if "reasoningContent" in b]


def tool_loop(client: Any, emulator: BedrockEmulator) -> Conversation:
    conv = start(UserMessage("Weather in Paris?"))
    emulator.script(Think("weather first"), Say("Checking."), Call("tooluse_1", "get_weather", {"city": "Paris"}))
    conv = conv.append(send(client, emulator, P.prepare(conv, model=MODEL, **OPTS)))
    conv = conv.append(ToolMessage("20°C, sunny", "tooluse_1"))
    emulator.script(Redact("classified"), Think("sunny"), Say("It is 20°C and sunny."))
    conv = conv.append(send(client, emulator, P.prepare(conv, model=MODEL, **OPTS)))
    return conv.append(UserMessage("And tomorrow?"))


# -- the full loop, from recorded fixtures ----------------------------------------------------------------


def test_full_loop_exact_bodies_from_fixtures() -> None:
    conv = start(UserMessage("Weather and time in Paris?"))
    req = P.prepare(conv, model=MODEL, **OPTS)
    check_request(req)
    assert req.path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
    assert req.headers == {"content-type": "application/json"}
    assert req.body == {
        "messages": [{"role": "user", "content": [{"text": "Weather and time in Paris?"}]}],
        "system": [{"text": "You are a weather assistant."}],
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "get_weather",
                        "description": "Current weather for a city",
                        "inputSchema": {"json": WEATHER.parameters},
                    }
                },
                {"toolSpec": {"name": "get_time", "inputSchema": {"json": TIME.parameters}}},
            ]
        },
        "inferenceConfig": {"maxTokens": 4096},
        "additionalModelRequestFields": {"thinking": THINKING},
    }
    raw = fixture("converse_interleaved.json")
    reply = req.receive(raw)
    assert reply.parts == (
        ThinkingBlock.Text("I need the weather in Paris first.", "EqoBCkgIARABGAIiQLlH3t0vGk3Q"),
        "Let me check the weather.",
        ToolCall("tooluse_abc123", "get_weather", {"city": "Paris", "unit": "celsius"}),
        ThinkingBlock.Redacted("RXJuZXN0IEhlbWluZ3dheQ=="),
        ThinkingBlock.Text("", "EosnCkYICxIMMb3LzNrMu2X0aJ9k"),
        ToolCall("tooluse_def456", "get_time", {"city": "Paris"}),
    )
    assert reply.thinking_binding is not None
    assert reply.thinking_binding.origin == Origin("bedrock", MODEL)

    # Results appended out of order go out in one user turn, in call order.
    conv = conv.append(reply, ToolMessage("14:00", "tooluse_def456"), ToolMessage("20°C", "tooluse_abc123"))
    req = P.prepare(conv, model=MODEL, **OPTS)
    check_request(req)
    assert [(e.index, e.reason) for e in req.report] == [(2, "kept")]
    assert req.body["messages"][1:] == [
        {
            "role": "assistant",
            "content": raw["output"]["message"]["content"],  # exactly as received, in order
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_abc123", "content": [{"text": "20°C"}]}},
                {"toolResult": {"toolUseId": "tooluse_def456", "content": [{"text": "14:00"}]}},
            ],
        },
    ]
    final = req.receive(fixture("converse_final.json"))
    assert final.content == "It is 20°C and sunny in Paris, and 14:00 local time."
    assert final.has_sealed_thinking


def test_boto3_dicts_and_http_json_give_identical_messages() -> None:
    req = P.prepare(start(UserMessage("q")), model=MODEL, **OPTS)
    raw = fixture("converse_interleaved.json")
    parsed = botocore_parse(raw)
    assert parsed["output"]["message"]["content"][3]["reasoningContent"]["redactedContent"] == b"Ernest Hemingway"
    parsed["ResponseMetadata"] = {"HTTPStatusCode": 200, "RequestId": "r-1"}
    assert req.receive(parsed) == req.receive(raw)
    botocore_parse(fixture("converse_final.json"))


def test_stream_fixture_matches_receive() -> None:
    req = P.prepare(start(UserMessage("q")), model=MODEL, stream=True, **OPTS)
    assert req.path.endswith("/converse-stream")
    check_request(req)
    expected = req.receive(fixture("converse_interleaved.json"))
    for events in (fixture("stream_interleaved.json"), as_boto3_events(fixture("stream_interleaved.json"))):
        acc = req.stream()
        for event in events:
            acc.feed(event)
        streamed = acc.finish()
        assert streamed == expected
        assert streamed.parts == expected.parts


# -- the loop against the emulator, through boto3 ------------------------------------------------------------


def test_tool_loop_through_boto3_stays_sealed(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = tool_loop(bedrock_client, bedrock_emulator)
    for n in range(2):
        bedrock_emulator.script(Think(f"round {n}"), Call(f"tooluse_r{n}", "get_time", {"city": "Paris"}))
        conv = conv.append(send(bedrock_client, bedrock_emulator, P.prepare(conv, model=MODEL, **OPTS)))
        conv = conv.append(ToolMessage(f"1{n}:00", f"tooluse_r{n}"))
    req = P.prepare(conv, model=MODEL, **OPTS)
    assert [e.reason for e in req.report] == ["kept"] * 4
    send(bedrock_client, bedrock_emulator, req)
    # The JSON bytes themselves are what Bedrock's HTTP API takes (redactedContent as base64 text).
    status, payload = post(bedrock_emulator.base_url, req.path, req.content)
    assert status == 200, payload
    assert req.receive(payload).content == "Done."
    assert bedrock_emulator.errors == []


def test_streaming_through_boto3_matches_converse(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = start(UserMessage("Weather and time?"))
    script = (
        Think("two tools"),
        Say("Looking."),
        Call("tooluse_a", "get_weather", {"city": "Rome"}),
        Redact("hidden"),
        Think(""),
        Call("tooluse_b", "get_time", {"city": "Rome"}),
    )
    bedrock_emulator.script(*script)
    bedrock_emulator.script(*script)
    received = send(bedrock_client, bedrock_emulator, P.prepare(conv, model=MODEL, **OPTS))
    streamed = send_stream(bedrock_client, P.prepare(conv, model=MODEL, stream=True, **OPTS))
    assert streamed == received
    assert streamed.parts == received.parts
    conv = conv.append(streamed, ToolMessage("25°C", "tooluse_a"), ToolMessage("10:00", "tooluse_b"))
    bedrock_emulator.script(Think("ok"), Say("25°C at 10:00."))
    assert send_stream(bedrock_client, P.prepare(conv, model=MODEL, stream=True, **OPTS)).content == "25°C at 10:00."
    assert bedrock_emulator.errors == []


def test_interleaved_turn_replayed_in_order(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = start(UserMessage("Weather and time?"))
    bedrock_emulator.script(
        Think("first"),
        Say("Weather first."),
        Call("tooluse_a", "get_weather", {"city": "Rome"}),
        Think("second"),
        Call("tooluse_b", "get_time", {"city": "Rome"}),
    )
    reply = send(bedrock_client, bedrock_emulator, P.prepare(conv, model=MODEL, **OPTS))
    conv = conv.append(reply, ToolMessage("10:00", "tooluse_b"), ToolMessage("bad city", "tooluse_a", is_error=True))
    req = P.prepare(conv, model=MODEL, **OPTS)
    content = req.body["messages"][1]["content"]
    assert [next(iter(b)) for b in content] == ["reasoningContent", "text", "toolUse", "reasoningContent", "toolUse"]
    assert req.body["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "bad city"}], "status": "error"}},
        {"toolResult": {"toolUseId": "tooluse_b", "content": [{"text": "10:00"}]}},
    ]
    send(bedrock_client, bedrock_emulator, req)
    naive = copy.deepcopy(req.body)
    naive["messages"][1]["content"] = [content[0], content[3], content[1], content[2], content[4]]
    assert rejected(bedrock_emulator.base_url, req.path, naive) == MODEL_ERRORS + BOUND_ELSEWHERE.format(
        i=1, j=1, detail=PREFIX_DETAIL["messages"]
    )


def test_unpaired_call_dropped_and_stray_result_named(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = start(UserMessage("Weather and time?"))
    bedrock_emulator.script(
        Think("both"),
        Call("tooluse_a", "get_weather", {"city": "Rome"}),
        Call("tooluse_b", "get_time", {"city": "Rome"}),
    )
    conv = conv.append(send(bedrock_client, bedrock_emulator, P.prepare(conv, model=MODEL, **OPTS)))
    conv = conv.append(ToolMessage("25°C", "tooluse_a"), ToolMessage("late", "tooluse_zz", is_error=True))
    with pytest.raises(ReplayError) as err:
        P.prepare(conv, model=MODEL, **OPTS)
    assert (err.value.index, err.value.reason) == (2, "unpaired-tool-call")
    assert "additionalModelRequestFields.thinking.block_binding" in str(err.value)
    req = P.prepare(conv, model=MODEL, inferenceConfig={"maxTokens": 512})
    assert req.body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "tooluse_a", "name": "get_weather", "input": {"city": "Rome"}}}],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "25°C"}]}},
                {"text": "[tool result for call tooluse_zz (error)]\nlate"},
            ],
        },
    ]
    send(bedrock_client, bedrock_emulator, req)
    naive = copy.deepcopy(req.body)
    naive["messages"][1]["content"].append({"toolUse": {"toolUseId": "tooluse_b", "name": "get_time", "input": {}}})
    assert rejected(bedrock_emulator.base_url, req.path, naive) == MODEL_ERRORS + MISSING_RESULT.format(
        i=1, ids="tooluse_b"
    )


# -- histories that must go out unsealed ------------------------------------------------------------------


def test_pruned_history_goes_out_unsealed(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = tool_loop(bedrock_client, bedrock_emulator)
    sealed = P.prepare(conv, model=MODEL, **OPTS)
    assert len(_sealed_blocks(sealed.body)) == 3
    pruned = conv.with_messages([conv[0], conv[1], *conv[3:]])
    req = P.prepare(pruned, model=MODEL, **OPTS)
    assert [e.reason for e in req.report] == ["prefix-changed"]
    assert _sealed_blocks(req.body) == []
    send(bedrock_client, bedrock_emulator, req)
    naive = copy.deepcopy(sealed.body)
    del naive["messages"][1:3]  # the same pruning, signatures kept: the redacted block now leads the turn
    assert rejected(bedrock_emulator.base_url, sealed.path, naive) == MODEL_ERRORS + BOUND_ELSEWHERE.format(
        i=1, j=0, detail=PREFIX_DETAIL["messages"]
    )


def test_edited_turn_goes_out_unsealed(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = tool_loop(bedrock_client, bedrock_emulator)
    last = conv[4]
    assert isinstance(last, AssistantMessage)
    stored = last.to_dict()
    stored["parts"][-1]["text"] = "It is warm."
    for edited_turn, reason in (
        (last.with_content("It is warm."), "no-sealed-thinking"),
        (thinkseal.message_from_dict(stored), "turn-changed"),
    ):
        req = P.prepare(conv.with_messages([*conv[:4], edited_turn, conv[5]]), model=MODEL, **OPTS)
        assert [e.reason for e in req.report] == ["kept", reason]
        assert req.body["messages"][3] == {"role": "assistant", "content": [{"text": "It is warm."}]}
        send(bedrock_client, bedrock_emulator, req)
    naive = copy.deepcopy(P.prepare(conv, model=MODEL, **OPTS).body)
    naive["messages"][3]["content"][1]["reasoningContent"]["reasoningText"]["text"] = "rainy"
    path = P.prepare(conv, model=MODEL, **OPTS).path
    assert rejected(bedrock_emulator.base_url, path, naive) == MODEL_ERRORS + CANNOT_MODIFY.format(i=3, j=1)


def test_changed_system_prompt_goes_out_unsealed(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = tool_loop(bedrock_client, bedrock_emulator)
    req = P.prepare(conv.append(SystemMessage("Answer in French.")), model=MODEL, **OPTS)
    assert [e.reason for e in req.report] == ["prefix-changed", "prefix-changed"]
    assert _sealed_blocks(req.body) == []
    assert req.body["system"] == [{"text": "You are a weather assistant."}, {"text": "Answer in French."}]
    send(bedrock_client, bedrock_emulator, req)
    naive = {**P.prepare(conv, model=MODEL, **OPTS).body, "system": req.body["system"]}
    assert rejected(bedrock_emulator.base_url, req.path, naive) == MODEL_ERRORS + BOUND_ELSEWHERE.format(
        i=1, j=0, detail=PREFIX_DETAIL["system"]
    )


def test_retargeted_to_another_model_goes_out_unsealed(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = tool_loop(bedrock_client, bedrock_emulator)
    other = "anthropic.claude-opus-4-5-20251101-v1:0"
    req = P.prepare(conv, model=other, **OPTS)
    assert [e.reason for e in req.report] == ["origin-mismatch", "origin-mismatch"]
    assert _sealed_blocks(req.body) == []
    send(bedrock_client, bedrock_emulator, req)
    naive = P.prepare(conv, model=MODEL, **OPTS).body
    assert rejected(bedrock_emulator.base_url, req.path, naive) == MODEL_ERRORS + INVALID_SIGNATURE.format(i=1, j=0)
    with pytest.raises(ClientError) as err:  # the same through boto3
        bedrock_client.converse(modelId=other, **for_boto3(naive))
    assert err.value.response["Error"]["Code"] == "ValidationException"
    assert err.value.response["Error"]["Message"] == MODEL_ERRORS + INVALID_SIGNATURE.format(i=1, j=0)


def test_other_providers_thinking_never_sent() -> None:
    conv = start(UserMessage("q1"))
    conv = respond(
        conv,
        Origin("anthropic", "claude-sonnet-4-5"),
        AssistantMessage(
            "a1", thinking=[ThinkingBlock.Text("from anthropic", "SIG_A"), ThinkingBlock.Redacted("UkVE")]
        ),
    )
    conv = conv.append(UserMessage("q2"))
    conv = respond(
        conv,
        Origin("deepseek", "deepseek-v4"),
        AssistantMessage("a2", thinking=[ThinkingBlock.Text("deepseek reasoning")]),
    )
    conv = conv.append(UserMessage("q3"))
    req = P.prepare(conv, model=MODEL, **OPTS)
    check_request(req)
    assert [e.reason for e in req.report] == ["origin-mismatch", "no-sealed-thinking"]
    assert req.body["messages"][1] == {"role": "assistant", "content": [{"text": "a1"}]}
    assert req.body["messages"][3] == {"role": "assistant", "content": [{"text": "a2"}]}
    for text in (b"SIG_A", b"UkVE", b"from anthropic", b"deepseek reasoning"):
        assert text not in req.content


def test_unbound_and_unsigned_history_goes_out_unsealed(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = start(
        UserMessage("Weather?"),
        AssistantMessage("Sunny.", thinking=[ThinkingBlock.Text("imported", "SIG_LOG"), ThinkingBlock.Text("r1 text")]),
        UserMessage("Tomorrow?"),
    )
    req = P.prepare(conv, model=MODEL, **OPTS)
    assert [e.reason for e in req.report] == ["unbound"]
    assert req.body["messages"][1] == {"role": "assistant", "content": [{"text": "Sunny."}]}
    send(bedrock_client, bedrock_emulator, req)
    naive = copy.deepcopy(req.body)
    naive["messages"][1]["content"].insert(0, {"reasoningContent": {"reasoningText": {"text": "r1 text"}}})
    assert rejected(bedrock_emulator.base_url, req.path, naive) == (
        MODEL_ERRORS + "messages.1.content.0.thinking.signature: Field required"
    )
    naive["messages"][1]["content"][0]["reasoningContent"]["reasoningText"] = {"text": None, "signature": "S"}
    assert rejected(bedrock_emulator.base_url, req.path, naive) == NULL_TEXT.format(i=2, j=1)


# -- ReplayError and drop_block -------------------------------------------------------------------------------


def _unsealed_tool_loop(client: Any, emulator: BedrockEmulator) -> Conversation:
    conv = start(UserMessage("Weather?"))
    emulator.script(Think("call it"), Call("tooluse_1", "get_weather", {"city": "Paris"}))
    conv = conv.append(send(client, emulator, P.prepare(conv, model=MODEL, **OPTS)))
    return conv.append(ToolMessage("20°C", "tooluse_1")).with_tools([WEATHER])


def test_replay_error_and_drop_block_opt_in(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = _unsealed_tool_loop(bedrock_client, bedrock_emulator)
    for thinking in (THINKING, {"type": "adaptive"}):
        with pytest.raises(ReplayError) as err:
            P.prepare(conv, model=MODEL, **with_thinking(thinking))
        assert (err.value.index, err.value.reason) == (2, "prefix-changed")
    plain = P.prepare(conv, model=MODEL, inferenceConfig={"maxTokens": 4096})
    send(bedrock_client, bedrock_emulator, plain)
    naive = {**plain.body, "additionalModelRequestFields": {"thinking": THINKING}}
    assert rejected(bedrock_emulator.base_url, plain.path, naive) == MODEL_ERRORS + LEADING_THINKING.format(
        i=1, found="tool_use"
    )
    opt_in = {**THINKING, "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    req = P.prepare(
        conv,
        model=MODEL,
        **with_thinking(opt_in, anthropic_beta=["interleaved-thinking-2025-05-14"], context_management=None),
    )
    assert req.body["additionalModelRequestFields"] == {
        "thinking": opt_in,
        "anthropic_beta": ["interleaved-thinking-2025-05-14", BINDING_BETA],
        "context_management": None,
    }
    assert req.headers == {"content-type": "application/json"}
    check_request(req)
    send(bedrock_client, bedrock_emulator, req)
    assert bedrock_emulator.outcomes[-1].degraded


def test_block_binding_without_drop_adds_the_beta_but_keeps_the_error() -> None:
    conv = start(
        UserMessage("Weather?"),
        AssistantMessage(tool_calls=[ToolCall("tooluse_1", "get_weather", {"city": "Paris"})]),
        ToolMessage("20°C", "tooluse_1"),
    )
    fields = with_thinking({**THINKING, "block_binding": {}})
    with pytest.raises(ReplayError) as err:
        P.prepare(conv, model=MODEL, **fields)
    assert err.value.reason == "no-sealed-thinking"
    req = P.prepare(conv.append(UserMessage("go on")), model=MODEL, **fields)
    assert req.body["additionalModelRequestFields"]["anthropic_beta"] == [BINDING_BETA]


# -- options and request shapes --------------------------------------------------------------------------------

ERRORS = [
    (
        with_thinking({"type": "enabled", "budget_tokens": 512}),
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        "additionalModelRequestFields.thinking.budget_tokens",
    ),
    (
        {"inferenceConfig": {"maxTokens": 2048}, "additionalModelRequestFields": {"thinking": THINKING}},
        "`max_tokens` must be greater than `thinking.budget_tokens`.",
        "inferenceConfig.maxTokens",
    ),
    (
        {
            "inferenceConfig": {"maxTokens": 4096, "temperature": 0.3},
            "additionalModelRequestFields": {"thinking": THINKING},
        },
        "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode",
        "inferenceConfig.temperature",
    ),
    (
        {"inferenceConfig": {"maxTokens": 4096, "topP": 0.5}, "additionalModelRequestFields": {"thinking": THINKING}},
        "`top_p` must be between 0.95 and 1",
        "inferenceConfig.topP",
    ),
    (
        with_thinking(THINKING, top_k=10),
        "`top_k` may not be set when thinking is enabled",
        "additionalModelRequestFields.top_k",
    ),
    (
        {**OPTS, "toolConfig": {"toolChoice": {"any": {}}}},
        "Thinking may not be enabled when tool_choice forces tool use.",
        "toolConfig.toolChoice",
    ),
    (
        {**OPTS, "toolConfig": {"tools": []}},
        "toolConfig.tools: set by thinkseal",
        "toolConfig.tools",
    ),
    ({**OPTS, "modelId": MODEL}, "modelId: set by thinkseal", "modelId"),
    ({**OPTS, "system": [{"text": "x"}]}, "system: set by thinkseal", "system"),
    ({**OPTS, "max_tokens": 10}, "max_tokens: not a Converse request field", "max_tokens"),
    (
        {"inferenceConfig": {"maxTokens": 0}},
        "inferenceConfig.maxTokens: expected an integer >= 1",
        "inferenceConfig.maxTokens",
    ),
    ({"inferenceConfig": "fast"}, "inferenceConfig: expected an object", "inferenceConfig"),
    (
        with_thinking(THINKING, anthropic_beta="interleaved-thinking-2025-05-14"),
        "expected a list of beta names",
        "additionalModelRequestFields.anthropic_beta",
    ),
    (
        with_thinking({"type": "maybe"}),
        "does not match any of the expected tags",
        "additionalModelRequestFields.thinking.type",
    ),
]


@pytest.mark.parametrize(("options", "message", "path"), ERRORS)
def test_option_validation(options: dict[str, Any], message: str, path: str) -> None:
    with pytest.raises(ValidationError) as err:
        P.prepare(start(UserMessage("q")), model=MODEL, **options)
    assert message in str(err.value)
    assert err.value.path == path


def test_options_that_are_allowed() -> None:
    conv = start(UserMessage("q"))
    allowed: list[dict[str, Any]] = [
        # Interleaved thinking: the budget covers the whole turn and may exceed maxTokens.
        {
            "inferenceConfig": {"maxTokens": 2048},
            "additionalModelRequestFields": {
                "thinking": {"type": "enabled", "budget_tokens": 4096},
                "anthropic_beta": ["interleaved-thinking-2025-05-14"],
            },
        },
        {"inferenceConfig": {"maxTokens": 64, "temperature": 1, "topP": 0.95, "stopSequences": ["END"]}},
        {**OPTS, "toolConfig": {"toolChoice": {"auto": {}}}},
        {"toolConfig": {"toolChoice": {"tool": {"name": "get_weather"}}}, "inferenceConfig": {"temperature": 0.1}},
        {
            "additionalModelRequestFields": {"thinking": {"type": "adaptive", "display": "omitted"}},
            "requestMetadata": {"session": "s1"},
            "performanceConfig": {"latency": "standard"},
            "additionalModelResponseFieldPaths": ["/stop_sequence"],
        },
        {"additionalModelRequestFields": {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "low"}}},
    ]
    for options in allowed:
        req = P.prepare(conv, model=MODEL, **options)
        check_request(req)
        for key, value in options.items():
            if key != "toolConfig":
                assert req.body[key] == value
    req = P.prepare(conv, model=MODEL, toolConfig={"toolChoice": {"auto": {}}})
    assert req.body["toolConfig"]["toolChoice"] == {"auto": {}}
    assert len(req.body["toolConfig"]["tools"]) == 2
    with pytest.raises(ValidationError, match="no tools"):
        P.prepare(conv.with_tools([]), model=MODEL, toolConfig={"toolChoice": {"auto": {}}})


def test_tool_history_needs_tool_config() -> None:
    conv = Conversation(
        [
            UserMessage("q"),
            AssistantMessage(tool_calls=[ToolCall("tooluse_1", "get_weather", {})]),
            ToolMessage("r", "tooluse_1"),
        ]
    )
    with pytest.raises(ValidationError) as err:
        P.prepare(conv, model=MODEL)
    assert TOOL_CONFIG.rstrip(".") in str(err.value)
    check_request(P.prepare(conv.with_tools(TOOLS), model=MODEL))


def test_model_id_is_quoted_into_the_path() -> None:
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-v1:0"
    req = P.prepare(start(UserMessage("q")), model=arn, stream=True)
    assert req.path == (
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2F"
        "us.anthropic.claude-sonnet-4-5-v1%3A0/converse-stream"
    )
    check_request(req)
    assert req.origin == Origin("bedrock", arn)


def test_response_format_becomes_output_config() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"temp": {"type": "number"}}}
    conv = start(UserMessage("q")).with_response_format(
        {"type": "json_schema", "json_schema": {"name": "weather", "description": "A report", "schema": schema}}
    )
    req = P.prepare(conv, model=MODEL)
    check_request(req)
    assert req.body["outputConfig"] == {
        "textFormat": {
            "type": "json_schema",
            "structure": {
                "jsonSchema": {
                    "schema": '{"type":"object","properties":{"temp":{"type":"number"}}}',
                    "name": "weather",
                    "description": "A report",
                }
            },
        }
    }
    with pytest.raises(ValidationError, match="give one"):
        P.prepare(conv, model=MODEL, outputConfig={"textFormat": {"type": "json_schema"}})
    with pytest.raises(ValidationError, match="bedrock supports json_schema, text; got 'json_object'"):
        P.prepare(conv.with_response_format({"type": "json_object"}), model=MODEL)


def test_signed_empty_reasoning_goes_out_as_empty_text_and_turn_fragments_are_cached() -> None:
    conv = start(UserMessage("q"))
    turn = AssistantMessage.from_parts([ThinkingBlock.Text("", "SIG"), "a"])
    conv = respond(conv, Origin("bedrock", MODEL), turn).append(UserMessage("q2"))
    first = P.prepare(conv, model=MODEL, **OPTS)
    check_request(first)
    assert first.body["messages"][1]["content"][0] == {
        "reasoningContent": {"reasoningText": {"text": "", "signature": "SIG"}}
    }
    later = P.prepare(conv.append(AssistantMessage("b"), UserMessage("q3")), model=MODEL, **OPTS)
    assert later._encoded.items[1] is first._encoded.items[1]  # the turn's fragment, not encoded again
    assert later.body["messages"][1] == first.body["messages"][1]


def test_thinking_only_turn_is_left_out() -> None:
    conv = start(UserMessage("q"))
    conv = respond(conv, Origin("bedrock", MODEL), AssistantMessage(None, thinking=[ThinkingBlock.Text("t", "S")]))
    req = P.prepare(conv.append(UserMessage("again")), model=MODEL)
    check_request(req)
    assert req.body["messages"] == [{"role": "user", "content": [{"text": "q"}, {"text": "again"}]}]


# -- malformed responses --------------------------------------------------------------------------------------------


def _mutate(path: list[Any], value: Any) -> dict[str, Any]:
    raw = fixture("converse_interleaved.json")
    target = raw
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return typing.cast(dict[str, Any], raw)


C = ["output", "message", "content"]
W = "$.output.message.content"
MALFORMED = [
    (["output"], KeyError, "$.output"),
    (["output", "message"], [], "$.output.message"),
    (["output", "message", "role"], "user", "$.output.message.role"),
    (C, {"text": "x"}, W),
    ([*C, 1], {"image": None}, f"{W}[1]"),
    ([*C, 1], {"text": "x", "toolUse": {}}, f"{W}[1]"),
    ([*C, 1, "text"], 3, f"{W}[1].text"),
    ([*C, 0, "reasoningContent", "reasoningText", "text"], KeyError, f"{W}[0].reasoningContent.reasoningText.text"),
    ([*C, 0, "reasoningContent", "reasoningText", "signature"], 5, f"{W}[0].reasoningContent.reasoningText.signature"),
    ([*C, 0, "reasoningContent"], {"somethingNew": 1}, f"{W}[0].reasoningContent"),
    (
        [*C, 0, "reasoningContent", "reasoningText", "signature"],
        "\ud800",
        f"{W}[0].reasoningContent.reasoningText.signature",
    ),
    ([*C, 3, "reasoningContent", "redactedContent"], "not base64!", f"{W}[3].reasoningContent.redactedContent"),
    ([*C, 3, "reasoningContent", "redactedContent"], "", f"{W}[3].reasoningContent.redactedContent"),
    ([*C, 3, "reasoningContent", "redactedContent"], 7, f"{W}[3].reasoningContent.redactedContent"),
    ([*C, 2, "toolUse", "input"], "[1]", f"{W}[2].toolUse.input"),
    ([*C, 2, "toolUse", "toolUseId"], KeyError, f"{W}[2].toolUse.toolUseId"),
    ([*C, 2, "toolUse", "name"], "", f"{W}[2].toolUse.name"),
]


@pytest.mark.parametrize(("path", "value", "where"), MALFORMED)
def test_malformed_responses_name_the_path(path: list[Any], value: Any, where: str) -> None:
    req = P.prepare(start(UserMessage("q")), model=MODEL, **OPTS)
    with pytest.raises(ResponseError) as err:
        req.receive(_mutate(path, value))
    assert err.value.path == where


def test_unknown_extra_fields_are_ignored_and_unsigned_reasoning_is_kept_unsealed() -> None:
    req = P.prepare(start(UserMessage("q")), model=MODEL, **OPTS)
    raw = fixture("converse_interleaved.json")
    noisy = copy.deepcopy(raw)
    noisy["newTopLevel"] = {"a": 1}
    noisy["output"]["message"]["content"][1]["cachePointHint"] = None
    noisy["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"]["extra"] = True
    noisy["output"]["message"]["content"][2]["toolUse"]["type"] = "server_tool_use"
    assert req.receive(noisy) == req.receive(raw)
    # DeepSeek-R1 on Bedrock: reasoning without a signature is plain, unsealed thinking.
    r1 = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "think"}}},
                    {"reasoningContent": {"reasoningText": {"text": ""}}},
                    {"text": "answer"},
                ],
            }
        }
    }
    reply = req.receive(r1)
    assert reply.parts == (ThinkingBlock.Text("think"), "answer")
    assert reply.thinking_binding is None


def _events() -> list[dict[str, Any]]:
    return typing.cast(list[dict[str, Any]], fixture("stream_interleaved.json"))


def _feed(events: list[dict[str, Any]]) -> AssistantMessage:
    acc = P.prepare(start(UserMessage("q")), model=MODEL, stream=True, **OPTS).stream()
    for event in events:
        acc.feed(event)
    return acc.finish()


def test_malformed_and_truncated_streams_raise() -> None:
    events = _events()
    cases: list[tuple[list[dict[str, Any]], str, str]] = [
        ([e for e in events if "messageStop" not in e], "$", "messageStop"),
        (
            [e for e in events if e.get("contentBlockStop", {}).get("contentBlockIndex") != 2],
            W + "[2]",
            "never stopped",
        ),
        (events[1:], "$.contentBlockDelta", "messageStart"),
        ([], "$", "messageStart"),
    ]
    bad = copy.deepcopy(events)
    bad.insert(5, {"modelStreamErrorException": {"message": "Model stream error", "originalStatusCode": 500}})
    cases.append((bad, "$.modelStreamErrorException", "Model stream error"))
    bad = copy.deepcopy(events)
    bad[8]["contentBlockStart"]["start"] = {"toolUse": None}
    cases.append((bad, "$.contentBlockStart.start", "unknown content block start"))
    bad = copy.deepcopy(events)
    bad[6]["contentBlockDelta"]["delta"] = {"reasoningContent": {"text": "x"}}
    cases.append((bad, "$.contentBlockDelta.delta.reasoningContent", "reasoningContent delta for a text block"))
    bad = copy.deepcopy(events)
    bad[9]["contentBlockDelta"]["contentBlockIndex"] = 7
    cases.append((bad, "$.contentBlockDelta.contentBlockIndex", "never started"))
    bad = copy.deepcopy(events)
    bad[10]["contentBlockDelta"]["delta"]["toolUse"]["input"] = "oops"
    cases.append((bad, W + "[2].toolUse.input", "not valid JSON"))
    bad = copy.deepcopy(events)
    bad[12]["contentBlockDelta"]["delta"]["reasoningContent"]["redactedContent"] = 12
    cases.append((bad, "$.contentBlockDelta.delta.reasoningContent.redactedContent", "bytes or base64"))
    bad = copy.deepcopy(events)
    bad[1]["contentBlockDelta"]["contentBlockIndex"] = "0"
    cases.append((bad, "$.contentBlockDelta.contentBlockIndex", "expected integer"))
    bad = copy.deepcopy(events)
    bad.insert(14, {"contentBlockDelta": {"contentBlockIndex": 3, "delta": {"reasoningContent": {"text": "x"}}}})
    cases.append((bad, "$.contentBlockDelta.contentBlockIndex", "already stopped"))
    for broken, where, words in cases:
        with pytest.raises(ResponseError) as err:
            _feed(broken)
        assert err.value.path == where, (where, str(err.value))
        assert words in str(err.value)


def test_stream_extras_ignored_and_unsigned_stream_not_sealed() -> None:
    events = _events()
    noisy = [*copy.deepcopy(events[:3]), {"somethingNew": {"x": 1}}, *copy.deepcopy(events[3:])]
    noisy[1]["contentBlockDelta"]["p"] = "abcdefg"  # Bedrock's padding field
    assert _feed(noisy) == _feed(events)
    # A citation delta is kept: its text block becomes a citationsContent native block.
    cited = copy.deepcopy(events)
    cited.insert(6, {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"citation": {"title": "t"}}}})
    reply = _feed(cited)
    assert reply.content == _feed(events).content
    native = reply.parts[1]
    assert isinstance(native, Native)
    assert native.provider == "bedrock"
    assert native.value == {
        "citationsContent": {"citations": [{"title": "t"}], "content": [{"text": "Let me check the weather."}]}
    }
    unsigned = [
        e
        for e in events
        if "signature" not in e.get("contentBlockDelta", {}).get("delta", {}).get("reasoningContent", {})
        and e.get("contentBlockDelta", e.get("contentBlockStop", {})).get("contentBlockIndex") not in (3, 4)
    ]
    reply = _feed(unsigned)
    assert reply.thinking == (ThinkingBlock.Text("I need the weather in Paris first."),)
    assert reply.thinking_binding is None
