"""The ``vertex-anthropic`` adapter (Claude on Vertex AI), driven through the
official SDK's ``AnthropicVertex`` client (a static access token: no Google
credentials) against the local emulator, which serves Vertex's path with its
own signing key (python/thinkseal/testing/anthropic.py).

The adapter is the ``anthropic`` adapter routed to Vertex: the same Messages
body without ``model`` (it is in the path) and with ``anthropic_version:
"vertex-2023-10-16"``; no ``anthropic-version`` header. Its turns are its own
origin: they never cross with ``anthropic``'s, whose signatures Vertex rejects.
"""

from __future__ import annotations

import json
import re
import typing
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

import anthropic
import pytest
from anthropic.types import Message as SdkMessage
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming as BetaParams
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming, MessageCreateParamsStreaming

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Native,
    Origin,
    ReplayError,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.testing.anthropic import (
    BINDING_BETA,
    INVALID_SIGNATURE,
    VERTEX_MODEL_IN_BODY,
    VERTEX_VERSION,
    VERTEX_VERSION_REQUIRED,
    AnthropicEmulator,
    Call,
    Raw,
    Redact,
    Say,
    Think,
)

from .test_anthropic import OPTS, SAMPLING, TOOLS, _strict, start
from .test_anthropic import send as send_anthropic
from .test_claude_replies import fixture, native, sdk_message

MODEL = "claude-emulated-sonnet@20250929"  # a Vertex-style dated id: "@" stays in the path
OTHER_MODEL = "claude-emulated-opus@20251101"
PROJECT = "test-project"
REGION = "us-east5"
ROUTE: dict[str, Any] = {"project": PROJECT, "region": REGION}
VOPTS: dict[str, Any] = {**OPTS, **ROUTE}
V = thinkseal.provider("vertex-anthropic")
A = thinkseal.provider("anthropic")
PATH = re.compile(
    r"/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/anthropic/models/"
    r"(?P<model>[^/]+):(?P<method>rawPredict|streamRawPredict)"
)


# -- the request against the SDK's types ---------------------------------------------------------


def check_request(req: thinkseal.PreparedRequest, *, beta: bool = False) -> None:
    """The body is exactly what the bytes say; it is the Messages API body
    (checked against the SDK's request types) less ``model``, plus
    ``anthropic_version``; the path routes it and the headers have no version."""
    assert json.loads(req.content) == req.body
    route = PATH.fullmatch(req.path)
    assert route is not None, req.path
    streaming = req.body.get("stream") is True
    assert route["method"] == ("streamRawPredict" if streaming else "rawPredict")
    assert "anthropic-version" not in req.headers
    assert req.headers["content-type"] == "application/json"
    assert req.body["anthropic_version"] == VERTEX_VERSION
    assert "model" not in req.body
    params = BetaParams if beta else (MessageCreateParamsStreaming if streaming else MessageCreateParamsNonStreaming)
    body = {
        k: v
        for k, v in req.body.items()
        if k != "anthropic_version" and not (beta and k == "stream") and k not in SAMPLING
    }
    body["model"] = route["model"]
    assert _strict(json.loads(json.dumps(body)), params, "$") is None, _strict(body, params, "$")


# -- the SDK against the emulator -----------------------------------------------------------------


@pytest.fixture
def vertex_client(anthropic_emulator: AnthropicEmulator) -> anthropic.AnthropicVertex:
    # AnthropicVertex's base URL ends in /v1 (its default: https://{region}-aiplatform.googleapis.com/v1).
    return anthropic.AnthropicVertex(
        region=REGION,
        project_id=PROJECT,
        access_token="test-token",
        base_url=anthropic_emulator.base_url + "/v1",
        max_retries=0,
    )


def sdk_arguments(req: thinkseal.PreparedRequest, model: str) -> dict[str, Any]:
    """``messages.create`` arguments for ``req``: the SDK takes the model as an
    argument (it moves it to the path) and ``anthropic_version`` only as an
    extra body field (its own default is not Vertex's documented version)."""
    body = {k: v for k, v in req.body.items() if k != "anthropic_version"}
    return {
        "model": model,
        **body,
        "extra_body": {"anthropic_version": req.body["anthropic_version"]},
        "extra_headers": req.headers,
    }


def send(
    client: anthropic.AnthropicVertex, emulator: AnthropicEmulator, req: Any, model: str = MODEL
) -> AssistantMessage:
    """Send through the SDK: the emulator must receive thinkseal's body and path unchanged, and accept it."""
    check_request(req)
    message = client.messages.create(**sdk_arguments(req, model))
    assert emulator.requests[-1].body == json.loads(req.content)
    assert emulator.paths[-1] == req.path
    assert isinstance(message, SdkMessage)
    return typing.cast(AssistantMessage, req.receive(message.model_dump()))


def send_stream(
    client: anthropic.AnthropicVertex, emulator: AnthropicEmulator, req: Any, model: str = MODEL
) -> AssistantMessage:
    check_request(req)
    acc = req.stream()
    for event in client.messages.create(**sdk_arguments(req, model)):
        acc.feed(event.model_dump())
    assert emulator.requests[-1].body == json.loads(req.content)
    assert emulator.paths[-1] == req.path
    return typing.cast(AssistantMessage, acc.finish())


def post(base_url: str, path: str, content: bytes, headers: Mapping[str, str]) -> tuple[int, Any]:
    """A raw HTTP POST of exactly these bytes (what a client without the SDK sends)."""
    request = urllib.request.Request(base_url + path, data=content, headers=dict(headers), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def rejected(base_url: str, path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> str:
    status, payload = post(base_url, path, json.dumps(body).encode(), headers)
    assert status == 400, payload
    assert payload["error"]["type"] == "invalid_request_error"
    return typing.cast(str, payload["error"]["message"])


# The three steps of one tool loop: two tool calls, then the answer.
STEPS = (
    (Think("I need the weather first."), Say("Checking."), Call("toolu_1", "get_weather", {"city": "Paris"})),
    (Think("Now the time."), Redact("hidden reasoning"), Call("toolu_2", "get_time", {"city": "Paris"})),
    (Think("Both known."), Say("It is 20°C and sunny in Paris, at 14:00.")),
)
RESULTS = (ToolMessage("20°C, sunny", "toolu_1"), ToolMessage("14:00", "toolu_2"))


def tool_loop(
    client: anthropic.AnthropicVertex, emulator: AnthropicEmulator, *, stream: bool = False
) -> tuple[Conversation, list[thinkseal.PreparedRequest]]:
    """prepare -> receive -> prepare over the three steps, thinking on throughout."""
    conv = start(UserMessage("Weather and time in Paris?"))
    requests = []
    for step, script in enumerate(STEPS):
        emulator.script(*script)
        req = V.prepare(conv, model=MODEL, stream=stream, **VOPTS)
        requests.append(req)
        reply = send_stream(client, emulator, req) if stream else send(client, emulator, req)
        conv = conv.append(reply)
        if step < len(RESULTS):
            conv = conv.append(RESULTS[step])
    return conv, requests


def signature(turn: Any, k: int = 0) -> str:
    block = turn.thinking[k]
    assert isinstance(block, ThinkingBlock.Text)
    assert block.signature
    return block.signature


def redacted_data(turn: Any) -> str:
    block = next(b for b in turn.thinking if isinstance(b, ThinkingBlock.Redacted))
    return block.data


def secrets_of(turn: Any) -> list[str]:
    out = []
    for block in turn.thinking:
        out.append(block.signature if isinstance(block, ThinkingBlock.Text) else block.data)
    return out


# -- the full loop --------------------------------------------------------------------------------


def test_three_step_tool_loop_exact_bodies(
    vertex_client: anthropic.AnthropicVertex, anthropic_emulator: AnthropicEmulator
) -> None:
    conv, requests = tool_loop(vertex_client, anthropic_emulator)
    first, second, third = requests
    path = f"/v1/projects/{PROJECT}/locations/{REGION}/publishers/anthropic/models/{MODEL}:rawPredict"
    assert [r.path for r in requests] == [path] * 3
    assert first.headers == {"content-type": "application/json"}
    assert first.origin == Origin("vertex-anthropic", MODEL)
    system = "You are a weather assistant."
    tools = [
        {
            "name": "get_weather",
            "description": "Current weather for a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
        {
            "name": "get_time",
            "description": "Local time in a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    ]
    question = {"role": "user", "content": "Weather and time in Paris?"}
    assert first.body == {
        "anthropic_version": "vertex-2023-10-16",
        "messages": [question],
        "system": system,
        "tools": tools,
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }
    step1, step2, step3 = conv[2], conv[4], conv[6]
    turn1 = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "I need the weather first.", "signature": signature(step1)},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        ],
    }
    result1 = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "20°C, sunny"}]}
    assert second.body["messages"] == [question, turn1, result1]
    turn2 = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Now the time.", "signature": signature(step2)},
            {"type": "redacted_thinking", "data": redacted_data(step2)},
            {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {"city": "Paris"}},
        ],
    }
    result2 = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "14:00"}]}
    assert third.body["messages"] == [question, turn1, result1, turn2, result2]
    assert [(e.index, e.reason) for e in third.report] == [(2, "kept"), (4, "kept")]
    assert step3.content == "It is 20°C and sunny in Paris, at 14:00."
    assert step3.has_sealed_thinking
    assert step3.thinking_binding is not None
    assert step3.thinking_binding.origin == Origin("vertex-anthropic", MODEL)
    # Every turn goes back sealed in the next request, and Vertex's emulator accepts each.
    conv = conv.append(UserMessage("And tomorrow?"))
    req = V.prepare(conv, model=MODEL, **VOPTS)
    assert [e.reason for e in req.report] == ["kept"] * 3
    send(vertex_client, anthropic_emulator, req)
    assert anthropic_emulator.errors == []


def test_streamed_loop_equals_the_whole_one(
    vertex_client: anthropic.AnthropicVertex, anthropic_emulator: AnthropicEmulator
) -> None:
    whole, whole_requests = tool_loop(vertex_client, anthropic_emulator)
    streamed, requests = tool_loop(vertex_client, anthropic_emulator, stream=True)
    assert streamed == whole
    for a, b in zip(streamed, whole, strict=True):
        if isinstance(a, AssistantMessage):
            assert isinstance(b, AssistantMessage)
            assert a.parts == b.parts
            assert a.thinking_binding == b.thinking_binding
    # Each streamed request is the whole one's, to :streamRawPredict with "stream": true.
    for req, whole_req in zip(requests, whole_requests, strict=True):
        assert req.path == whole_req.path.replace(":rawPredict", ":streamRawPredict")
        assert req.body == {**whole_req.body, "stream": True}
    assert anthropic_emulator.errors == []


def test_thinkseal_bytes_go_through_plain_http(anthropic_emulator: AnthropicEmulator) -> None:
    """Without the SDK: req.content POSTed to base URL + req.path, with only credentials added."""
    conv = start(UserMessage("Weather in Paris?"))
    anthropic_emulator.script(*STEPS[0])
    req = V.prepare(conv, model=MODEL, **VOPTS)
    status, response = post(
        anthropic_emulator.base_url, req.path, req.content, {**req.headers, "authorization": "Bearer test-token"}
    )
    assert status == 200, response
    reply = req.receive(response)
    conv = conv.append(reply, RESULTS[0])
    anthropic_emulator.script(*STEPS[2])
    req = V.prepare(conv, model=MODEL, stream=True, **VOPTS)
    request = urllib.request.Request(
        anthropic_emulator.base_url + req.path, data=req.content, headers=req.headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        lines = answer.read().decode().splitlines()
    acc = req.stream()
    for line in lines:
        if line.startswith("data: "):
            acc.feed(json.loads(line[6:]))
    assert acc.finish().has_sealed_thinking
    assert anthropic_emulator.errors == []


# -- what unseals, and only it --------------------------------------------------------------------


def two_rounds(client: anthropic.AnthropicVertex, emulator: AnthropicEmulator) -> Conversation:
    """Two questions, each a tool call and an answer: sealed turns at 2, 4, 6 and 8
    (the second question at 5, its tool call at 6 and result at 7)."""
    conv = start(UserMessage("Weather in Paris?"))
    for city, call in (("Paris", "toolu_p"), ("Lyon", "toolu_l")):
        if city == "Lyon":
            conv = conv.append(UserMessage("And in Lyon?"))
        emulator.script(Think(f"Look up {city}."), Call(call, "get_weather", {"city": city}))
        conv = conv.append(send(client, emulator, V.prepare(conv, model=MODEL, **VOPTS)))
        conv = conv.append(ToolMessage("20°C", call))
        emulator.script(Think(f"{city} known."), Say(f"20°C in {city}."))
        conv = conv.append(send(client, emulator, V.prepare(conv, model=MODEL, **VOPTS)))
    return conv.append(UserMessage("Thanks. Anything else?"))


def assert_sent_only_kept(req: thinkseal.PreparedRequest, conv: Conversation) -> None:
    kept = {e.index for e in req.report if e.kept}
    wire = req.content.decode()
    for index, message in enumerate(conv):
        if isinstance(message, AssistantMessage):
            for secret in secrets_of(message):
                assert (secret in wire) == (index in kept), (index, req.report)


def test_pruning_system_prompt_model_and_account_unseal_exactly_the_affected_turns(
    vertex_client: anthropic.AnthropicVertex, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = two_rounds(vertex_client, anthropic_emulator)
    assert [(e.index, e.reason) for e in V.prepare(conv, model=MODEL, **VOPTS).report] == [
        (2, "kept"),
        (4, "kept"),
        (6, "kept"),
        (8, "kept"),
    ]
    anthropic_emulator.script(Say("Nothing else."))

    # Pruning the second round's tool exchange: the answer after it unseals, the first round stays sealed.
    pruned = conv.with_messages([m for i, m in enumerate(conv) if i not in (6, 7)])
    req = V.prepare(pruned, model=MODEL, **VOPTS)
    assert [(e.index, e.reason) for e in req.report] == [(2, "kept"), (4, "kept"), (6, "prefix-changed")]
    assert_sent_only_kept(req, pruned)
    send(vertex_client, anthropic_emulator, req)

    # A changed system prompt: every turn.
    edited = conv.with_messages([SystemMessage("You are terse."), *conv.messages[1:]])
    req = V.prepare(edited, model=MODEL, **VOPTS)
    assert [e.reason for e in req.report] == ["prefix-changed"] * 4
    assert_sent_only_kept(req, edited)
    send(vertex_client, anthropic_emulator, req)

    # Another model: every turn (origin-mismatch); then that model's own turn is kept beside them.
    anthropic_emulator.script(Think("Other model."), Say("Nothing else."))
    req = V.prepare(conv, model=OTHER_MODEL, **VOPTS)
    assert [e.reason for e in req.report] == ["origin-mismatch"] * 4
    assert_sent_only_kept(req, conv)
    switched = conv.append(send(vertex_client, anthropic_emulator, req, model=OTHER_MODEL))
    switched = switched.append(UserMessage("One more?"))
    req = V.prepare(switched, model=OTHER_MODEL, **VOPTS)
    assert [e.reason for e in req.report] == ["origin-mismatch"] * 4 + ["kept"]
    assert_sent_only_kept(req, switched)
    send(vertex_client, anthropic_emulator, req, model=OTHER_MODEL)
    # ...and back on the first model, the first four are kept and the other model's turn is not.
    req = V.prepare(switched, model=MODEL, **VOPTS)
    assert [e.reason for e in req.report] == ["kept"] * 4 + ["origin-mismatch"]
    send(vertex_client, anthropic_emulator, req)

    # Another account: every turn.
    req = thinkseal.provider("vertex-anthropic", account="other-project").prepare(conv, model=MODEL, **VOPTS)
    assert req.origin == Origin("vertex-anthropic", MODEL, "other-project")
    assert [e.reason for e in req.report] == ["origin-mismatch"] * 4
    assert_sent_only_kept(req, conv)
    send(vertex_client, anthropic_emulator, req)
    assert anthropic_emulator.errors == []


def test_a_re_targeted_tool_loop_is_a_replay_error_as_on_anthropic(
    vertex_client: anthropic.AnthropicVertex, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = start(UserMessage("Weather in Paris?"))
    anthropic_emulator.script(*STEPS[0])
    conv = conv.append(send(vertex_client, anthropic_emulator, V.prepare(conv, model=MODEL, **VOPTS)), RESULTS[0])
    with pytest.raises(ReplayError) as err:
        V.prepare(conv, model=OTHER_MODEL, **VOPTS)
    assert (err.value.index, err.value.reason) == (2, "origin-mismatch")
    assert "Claude on Vertex AI rejects that" in str(err.value)
    # Opting into drop_block sends it, with the beta as a header.
    thinking = {**OPTS["thinking"], "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    req = V.prepare(conv, model=OTHER_MODEL, **{**VOPTS, "thinking": thinking})
    assert req.headers == {"content-type": "application/json", "anthropic-beta": BINDING_BETA}
    check_request(req, beta=True)


# -- anthropic and vertex-anthropic never cross ------------------------------------------------------


def test_anthropic_turns_and_vertex_turns_never_cross(
    anthropic_client: anthropic.Anthropic,
    vertex_client: anthropic.AnthropicVertex,
    anthropic_emulator: AnthropicEmulator,
) -> None:
    # One step through the Messages API, one through Vertex, same model name.
    conv = start(UserMessage("Weather in Paris?"))
    anthropic_emulator.script(Think("Direct."), Say("20°C."))
    a_turn = send_anthropic(anthropic_client, anthropic_emulator, A.prepare(conv, model=MODEL, **OPTS))
    conv = conv.append(a_turn, UserMessage("And in Lyon?"))
    anthropic_emulator.script(Think("Through Vertex."), Say("18°C."))
    v_turn = send(vertex_client, anthropic_emulator, V.prepare(conv, model=MODEL, **VOPTS))
    conv = conv.append(v_turn, UserMessage("Thanks."))
    assert a_turn.thinking_binding is not None
    assert a_turn.thinking_binding.origin == Origin("anthropic", MODEL)
    assert v_turn.thinking_binding is not None
    assert v_turn.thinking_binding.origin == Origin("vertex-anthropic", MODEL)

    to_vertex = V.prepare(conv, model=MODEL, **VOPTS)
    to_anthropic = A.prepare(conv, model=MODEL, **OPTS)
    assert [e.reason for e in to_vertex.report] == ["origin-mismatch", "kept"]
    assert [e.reason for e in to_anthropic.report] == ["kept", "origin-mismatch"]
    assert signature(a_turn) not in to_vertex.content.decode()
    assert signature(v_turn) not in to_anthropic.content.decode()
    send(vertex_client, anthropic_emulator, to_vertex)
    send_anthropic(anthropic_client, anthropic_emulator, to_anthropic)
    assert anthropic_emulator.errors == []

    # What a naive client sends (each turn signed, whatever endpoint signed it) is rejected by both.
    naive = json.loads(to_vertex.content)  # a mutable copy
    naive["messages"][1]["content"].insert(
        0, {"type": "thinking", "thinking": "Direct.", "signature": signature(a_turn)}
    )
    assert rejected(anthropic_emulator.base_url, to_vertex.path, naive, to_vertex.headers) == (
        INVALID_SIGNATURE.format(i=1, j=0)
    )
    naive = json.loads(to_anthropic.content)
    naive["messages"][3]["content"].insert(
        0, {"type": "thinking", "thinking": "Through Vertex.", "signature": signature(v_turn)}
    )
    assert rejected(anthropic_emulator.base_url, "/v1/messages", naive, to_anthropic.headers) == (
        INVALID_SIGNATURE.format(i=3, j=0)
    )


def test_the_emulator_holds_vertex_to_its_request_shape(anthropic_emulator: AnthropicEmulator) -> None:
    req = V.prepare(start(UserMessage("Hi")), model=MODEL, **VOPTS)
    without_version = {k: v for k, v in req.body.items() if k != "anthropic_version"}
    assert rejected(anthropic_emulator.base_url, req.path, without_version, req.headers) == VERTEX_VERSION_REQUIRED
    with_model = {**req.body, "model": MODEL}
    assert rejected(anthropic_emulator.base_url, req.path, with_model, req.headers) == VERTEX_MODEL_IN_BODY
    status, _ = post(anthropic_emulator.base_url, req.path, req.content, req.headers)
    assert status == 200


# -- the rest is anthropic's -----------------------------------------------------------------------


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


def rich() -> Conversation:
    """Parts, breakpoints, every kind of thinking block and a native block of each endpoint."""
    turn = AssistantMessage.from_parts(
        [
            ThinkingBlock.Text("t", signature="SIG"),
            ThinkingBlock.Redacted("UkVE"),
            "Looking.",
            ToolCall("toolu_1", "get_weather", {"city": "Oslo"}),
        ]
    )
    return Conversation(
        [
            SystemMessage(["Be brief.", CacheBreakpoint()]),
            UserMessage(
                ["Here:", Image(PNG, "image/png"), Document(text="notes", title="Notes"), CacheBreakpoint("1h")]
            ),
            turn,
            ToolMessage(["-3°C", Image(url="https://example.com/sky.png")], "toolu_1"),
            UserMessage(
                [
                    "More?",
                    Native.of("anthropic", {"type": "search_result", "title": "a"}, text="from anthropic"),
                    Native.of("vertex-anthropic", {"type": "search_result", "title": "v"}, text="from vertex"),
                ]
            ),
        ],
        tools=TOOLS,
        response_format={"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "object"}}},
    )


def test_the_body_is_anthropics_less_the_model_plus_the_version() -> None:
    conv = rich()
    for stream in (False, True):
        a = A.prepare(conv.rebind(Origin("anthropic", MODEL)), model=MODEL, stream=stream, **OPTS)
        v = V.prepare(conv.rebind(Origin("vertex-anthropic", MODEL)), model=MODEL, stream=stream, **VOPTS)
        assert [e.reason for e in a.report] == [e.reason for e in v.report] == ["kept"]
        # Each endpoint takes its own native block verbatim and the other's as text.
        expected = json.loads(a.content)  # a mutable copy of the body
        del expected["model"]
        last = expected["messages"][-1]["content"]  # the tool result and the user message, one user turn
        assert last[-2] == {"title": "a", "type": "search_result"}
        assert last[-1] == {"type": "text", "text": "from vertex"}
        last[-2], last[-1] = {"type": "text", "text": "from anthropic"}, {"title": "v", "type": "search_result"}
        assert v.body == {"anthropic_version": VERTEX_VERSION, **expected}
        assert a.headers == {"anthropic-version": "2023-06-01", "content-type": "application/json"}
        assert v.headers == {"content-type": "application/json"}


def test_unknown_reply_blocks_are_native_to_vertex(
    vertex_client: anthropic.AnthropicVertex, anthropic_emulator: AnthropicEmulator
) -> None:
    raw = fixture("anthropic/message_web_search.json")
    question = Conversation([UserMessage("When was Claude Shannon born?")])
    req = V.prepare(question, model=MODEL, max_tokens=1024, **ROUTE)
    reply = req.parse(raw)
    blocks = raw["content"]
    cited = blocks[4]["text"]
    assert reply.message.parts == (
        blocks[0]["text"],
        native("vertex-anthropic", blocks[1]),
        native("vertex-anthropic", blocks[2]),
        blocks[3]["text"],
        native("vertex-anthropic", blocks[4], text=cited),
    )
    assert req.parse(sdk_message(raw).model_dump()) == reply
    acc = V.prepare(question, model=MODEL, max_tokens=1024, stream=True, **ROUTE).stream()
    for event in fixture("anthropic/stream_web_search.json"):
        acc.feed(event)
    assert acc.reply == reply
    assert (reply.stop_reason, reply.id) == (raw["stop_reason"], raw["id"])

    # They go back verbatim to Vertex (accepted there), and to Anthropic only as their text.
    conv = question.append(reply.message, UserMessage("And where did he work?"))
    back = V.prepare(conv, model=MODEL, max_tokens=1024, **ROUTE)
    assert back.body["messages"][1] == {"role": "assistant", "content": blocks}
    send(vertex_client, anthropic_emulator, back)
    to_anthropic = A.prepare(conv, model=MODEL, max_tokens=1024).content.decode()
    for secret in ("srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", "server_tool_use", "web_search_tool_result"):
        assert secret not in to_anthropic
    assert cited in to_anthropic

    # Through the SDK, whole and streamed, the emulator's reply with a server block.
    script = (Raw(blocks[1]), Say("Done."))
    anthropic_emulator.script(*script)
    anthropic_emulator.script(*script)
    whole = send(vertex_client, anthropic_emulator, V.prepare(question, model=MODEL, max_tokens=1024, **ROUTE))
    streamed = send_stream(
        vertex_client,
        anthropic_emulator,
        V.prepare(question, model=MODEL, max_tokens=1024, stream=True, **ROUTE),
    )
    assert streamed == whole
    assert whole.parts[0] == native("vertex-anthropic", blocks[1])
    assert anthropic_emulator.errors == []


# -- options ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"max_tokens": 10, "region": REGION}, "project"),
        ({"max_tokens": 10, "project": PROJECT}, "region"),
        ({"max_tokens": 10, "project": " ", "region": REGION}, "project"),
        ({"max_tokens": 10, "project": PROJECT, "region": 5}, "region"),
        ({"max_tokens": 10, "project": "..", "region": REGION}, "project"),
        ({"max_tokens": 10, "location": REGION, "region": REGION, "project": PROJECT}, "location"),
        ({"max_tokens": 10, "location": "", "project": PROJECT}, "location"),
        ({"max_tokens": 10, "anthropic_version": "vertex-2023-10-16", **ROUTE}, "anthropic_version"),
        ({"max_tokens": 10, "anthropic_beta": ["x"], **ROUTE}, "anthropic_beta"),
        ({"max_tokens": 10, "messages": [], **ROUTE}, "messages"),
        (ROUTE, "max_tokens"),
        (
            {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 512}, **ROUTE},
            "thinking.budget_tokens",
        ),
        (
            {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048}, "temperature": 0.5, **ROUTE},
            "temperature",
        ),
    ],
)
def test_options_are_checked(options: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as err:
        V.prepare(start(UserMessage("Hi")), model=MODEL, **options)
    assert err.value.path == path


def test_max_tokens_is_required_in_the_endpoints_name() -> None:
    with pytest.raises(ValidationError, match=r"Claude on Vertex AI requires max_tokens"):
        V.prepare(start(UserMessage("Hi")), model=MODEL, **ROUTE)


def test_route_options_never_reach_the_body_and_betas_are_a_header() -> None:
    req = V.prepare(start(UserMessage("Hi")), model="claude sonnet;x", betas=["b1", "b2"], max_tokens=10, **ROUTE)
    assert "project" not in req.body
    assert "region" not in req.body
    assert PROJECT not in req.content.decode()
    assert req.path.endswith("/models/claude%20sonnet%3Bx:rawPredict")
    assert req.headers == {"content-type": "application/json", "anthropic-beta": "b1,b2"}
    glob = V.prepare(start(UserMessage("Hi")), model=MODEL, max_tokens=10, project="p-1", region="global")
    assert glob.path.startswith("/v1/projects/p-1/locations/global/publishers/anthropic/models/")
    # "location" (the path's name for it, and vertex-gemini's option) is the same as "region".
    located = V.prepare(start(UserMessage("Hi")), model=MODEL, max_tokens=10, project="p-1", location="global")
    assert located.path == glob.path
    assert located.content == glob.content


def test_the_registry_and_repr() -> None:
    assert "vertex-anthropic" in thinkseal.providers.PROVIDER_IDS
    assert V.id == "vertex-anthropic"
    assert repr(V) == "thinkseal.provider('vertex-anthropic')"
