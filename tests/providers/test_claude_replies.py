"""What Claude's two wires read from a reply besides text, tool calls and
thinking: blocks thinkseal does not read (kept as ``Native`` parts in their
place), the reply's metadata (``req.parse`` -> ``Reply``), the typed deltas a
stream yields, and the partial message of a cut stream.

The web search reply is Anthropic's own example, copied from the response
section of https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool
(``server_tool_use``, ``web_search_tool_result``, a text block with
``web_search_result_location`` citations), with the envelope fields the SDK's
``Message`` model requires (``type``, ``model``, ``stop_sequence``) added; its
stream follows the streaming section of the same page (the
``server_tool_use`` query arrives as ``input_json_delta``, the results whole in
their ``content_block_start``), with ``citations_delta`` for the cited text.
The Bedrock ``citationsContent`` reply is built from botocore's Converse output
shapes (CitationsContentBlock, CitationsDelta).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic.types import Message as SdkMessage
from anthropic.types import RawMessageStreamEvent
from pydantic import TypeAdapter

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Native,
    Reply,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    ToolMessage,
    UserMessage,
)
from thinkseal.testing.anthropic import AnthropicEmulator, Raw, Say

from .test_anthropic import check_request as check_anthropic
from .test_bedrock import botocore_parse
from .test_bedrock import check_request as check_bedrock

FIXTURES = Path(__file__).parent / "fixtures"
A_MODEL = "claude-emulated-sonnet"
B_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
A = thinkseal.provider("anthropic")
B = thinkseal.provider("bedrock")
QUESTION = Conversation([UserMessage("When was Claude Shannon born?")])


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def native(provider: str, block: Any, text: str | None = None) -> Native:
    """A received block as thinkseal keeps it: compact JSON, keys sorted."""
    return Native(provider, json.dumps(block, ensure_ascii=False, separators=(",", ":"), sort_keys=True), text)


def sdk_message(raw: dict[str, Any]) -> SdkMessage:
    # The installed SDK also requires usage.server_tool_use.web_fetch_requests, which the page's example leaves out.
    usage = raw["usage"]
    if "server_tool_use" in usage:
        usage = {**usage, "server_tool_use": {"web_fetch_requests": 0, **usage["server_tool_use"]}}
    return SdkMessage.model_validate({**raw, "usage": usage})


def a_request(stream: bool = False) -> thinkseal.PreparedRequest:
    return A.prepare(QUESTION, model=A_MODEL, max_tokens=1024, stream=stream)


def b_request(stream: bool = False) -> thinkseal.PreparedRequest:
    return B.prepare(QUESTION, model=B_MODEL, stream=stream)


def streamed(req: thinkseal.PreparedRequest, events: list[Any]) -> tuple[Reply, list[Any]]:
    acc = req.stream()
    deltas = [delta for event in events for delta in acc.feed(event)]
    return acc.reply, deltas


# -- blocks thinkseal does not read ------------------------------------------------------------


def test_web_search_reply_is_kept_block_for_block() -> None:
    raw = fixture("anthropic/message_web_search.json")
    sdk = sdk_message(raw)
    reply = a_request().parse(raw)
    blocks = raw["content"]
    cited = blocks[4]["text"]
    assert reply.message.parts == (
        blocks[0]["text"],
        native("anthropic", blocks[1]),
        native("anthropic", blocks[2]),
        blocks[3]["text"],
        native("anthropic", blocks[4], text=cited),
    )
    assert reply.message.content == blocks[0]["text"] + blocks[3]["text"] + cited
    assert [p.value for p in reply.message.parts if isinstance(p, Native)] == [blocks[1], blocks[2], blocks[4]]
    # The SDK's model_dump() (every absent optional member as null) gives the same reply.
    assert a_request().parse(sdk.model_dump()) == reply
    # So does the stream, and the stream as the page shows it (no input at the server_tool_use start).
    events = fixture("anthropic/stream_web_search.json")
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    for event in events:
        adapter.validate_python(event)
    assert streamed(a_request(stream=True), events)[0] == reply
    literal = copy.deepcopy(events)
    start = next(e["content_block"] for e in literal if e.get("content_block", {}).get("type") == "server_tool_use")
    del start["input"]
    assert streamed(a_request(stream=True), literal)[0] == reply


def test_web_search_blocks_go_back_only_to_anthropic(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    raw = fixture("anthropic/message_web_search.json")
    reply = a_request().receive(raw)
    conv = QUESTION.append(reply, UserMessage("And where did he work?"))
    req = A.prepare(conv, model=A_MODEL, max_tokens=1024)
    check_anthropic(req)
    assert req.body["messages"][1] == {"role": "assistant", "content": raw["content"]}
    message = anthropic_client.messages.create(**req.body, extra_headers=req.headers)
    assert req.receive(message.model_dump()).content == "Done."
    assert anthropic_emulator.errors == []
    for provider_id in ("bedrock", "openrouter", "deepseek"):
        body = thinkseal.provider(provider_id).prepare(conv, model="m").content.decode()
        for secret in ("srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", "EqgfCioIARgB", "Eo8BCioIAhgB", "server_tool_use"):
            assert secret not in body, (provider_id, secret)
        assert "Claude Shannon was born on April 30, 1916, in Petoskey, Michigan" in body  # the cited text
    check_bedrock(B.prepare(conv, model=B_MODEL))


def test_web_search_streamed_through_the_sdk(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    raw = fixture("anthropic/message_web_search.json")
    script = [
        Raw(block) if "citations" in block or block["type"] != "text" else Say(block["text"])
        for block in raw["content"]
    ]
    anthropic_emulator.script(*script)
    anthropic_emulator.script(*script)
    first = a_request()
    received = first.receive(anthropic_client.messages.create(**first.body, extra_headers=first.headers).model_dump())
    req = a_request(stream=True)
    acc = req.stream()
    for event in anthropic_client.messages.create(**req.body, extra_headers=req.headers):
        acc.feed(event.model_dump())
    assert acc.finish() == received
    assert received.parts == a_request().receive(raw).parts


UNKNOWN = [
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": {"code": "print(1)"}},
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
    },
    {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_2",
        "content": {"type": "web_fetch_result", "url": "https://example.com"},
    },
    {
        "type": "code_execution_tool_result",
        "tool_use_id": "srvtoolu_3",
        "content": {"type": "code_execution_result", "stdout": "1\n", "stderr": "", "return_code": 0, "content": []},
    },
    {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "lookup", "server_name": "kb", "input": {"q": "x"}},
    {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_1",
        "is_error": False,
        "content": [{"type": "text", "text": "ok"}],
    },
    {"type": "container_upload", "file_id": "file_011"},
    {"type": "compaction", "content": "Summary of the earlier turns."},
    {"type": "from_the_future", "payload": {"nested": [1, 2, {"deep": None}]}},
]


@pytest.mark.parametrize("block", UNKNOWN, ids=[b["type"] for b in UNKNOWN])
def test_unknown_blocks_never_break_a_reply(block: dict[str, Any]) -> None:
    raw = copy.deepcopy(fixture("anthropic/message_interleaved.json"))
    raw["content"].insert(2, block)
    reply = a_request().receive(raw)
    assert reply.parts[2] == native("anthropic", block)
    assert reply.thinking_binding is not None  # the signed thinking around it is still sealed
    # Streamed whole in its content_block_start (a newer delta type for it is ignored).
    events = fixture("anthropic/stream_interleaved.json")
    at = next(i for i, e in enumerate(events) if e["type"] == "content_block_start" and e["index"] == 2)
    shifted = [{**e, "index": e["index"] + 1} if e.get("index", -1) >= 2 else e for e in copy.deepcopy(events)]
    shifted[at:at] = [
        {"type": "content_block_start", "index": 2, "content_block": block},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "brand_new_delta", "x": 1}},
        {"type": "content_block_stop", "index": 2},
    ]
    acc = a_request(stream=True).stream()
    for event in shifted:
        acc.feed(event)
    assert acc.finish() == reply
    # Replayed as it came with its kept turn, to Anthropic only.
    answered = QUESTION.append(reply, *[ToolMessage("ok", call.id) for call in reply.tool_calls])
    req = A.prepare(answered, model=A_MODEL, max_tokens=1024)
    assert [e.reason for e in req.report] == ["kept"]
    assert block in req.body["messages"][1]["content"]
    # Sealed data like the thinking around it: withheld once the turn is not kept.
    unpaired = QUESTION.append(reply, UserMessage("Go on."))
    assert block["type"] not in B.prepare(unpaired, model=B_MODEL).content.decode()
    req = A.prepare(unpaired, model=A_MODEL, max_tokens=1024)
    assert [e.reason for e in req.report] == ["unpaired-tool-call"]
    assert block["type"] not in req.content.decode()


def test_bedrock_citations_content_is_kept() -> None:
    raw = fixture("bedrock/converse_citations.json")
    parsed = botocore_parse(raw)  # the shape botocore's Converse model reads
    reply = b_request().parse(raw)
    cited = raw["output"]["message"]["content"][1]
    assert reply.message.parts == (
        "According to the report, ",
        native("bedrock", cited, text="it will rain in Paris on Tuesday."),
    )
    assert b_request().parse(parsed) == reply
    assert streamed(b_request(stream=True), fixture("bedrock/stream_citations.json"))[0] == reply
    conv = QUESTION.append(reply.message, UserMessage("Thanks."))
    req = B.prepare(conv, model=B_MODEL)
    check_bedrock(req)
    assert req.body["messages"][1]["content"][1] == cited
    req = A.prepare(conv, model=A_MODEL, max_tokens=64)
    check_anthropic(req)
    assert req.body["messages"][1]["content"] == [
        {"type": "text", "text": "According to the report, "},
        {"type": "text", "text": "it will rain in Paris on Tuesday."},
    ]


def test_bedrock_unknown_blocks_never_break_a_reply() -> None:
    raw = copy.deepcopy(fixture("bedrock/converse_interleaved.json"))
    image = {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}}
    raw["output"]["message"]["content"].insert(2, image)
    reply = b_request().receive(raw)
    assert reply.parts[2] == native("bedrock", image)
    assert reply.thinking_binding is not None
    events = fixture("bedrock/stream_interleaved.json")
    at = next(i for i, e in enumerate(events) if e.get("contentBlockStart", {}).get("contentBlockIndex") == 2)
    extra = [
        {"contentBlockStart": {"contentBlockIndex": 9, "start": {"image": {"format": "png"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 9, "delta": {"image": {"source": {"bytes": "iVBORw0KGgo="}}}}},
        {"contentBlockStop": {"contentBlockIndex": 9}},
    ]
    acc = b_request(stream=True).stream()
    for event in events[:at] + extra + events[at:]:
        acc.feed(event)
    assert acc.finish().parts[-1] == native("bedrock", image)  # block 9 stands last


# -- Reply: stop reason, usage, id, model -------------------------------------------------------------

PAIRS = [
    ("anthropic", "anthropic/message_interleaved.json", "anthropic/stream_interleaved.json"),
    ("anthropic", "anthropic/message_web_search.json", "anthropic/stream_web_search.json"),
    ("bedrock", "bedrock/converse_interleaved.json", "bedrock/stream_interleaved.json"),
    ("bedrock", "bedrock/converse_citations.json", "bedrock/stream_citations.json"),
]


@pytest.mark.parametrize(("provider_id", "whole", "stream"), PAIRS)
def test_whole_and_streamed_replies_are_equal(provider_id: str, whole: str, stream: str) -> None:
    make = a_request if provider_id == "anthropic" else b_request
    received = make().parse(fixture(whole))
    assert streamed(make(stream=True), fixture(stream))[0] == received


def test_reply_fields() -> None:
    reply = a_request().parse(fixture("anthropic/message_interleaved.json"))
    assert (reply.stop_reason, reply.id, reply.model) == (
        "tool_use",
        "msg_01XFDUDYJgAACzvnptvVoYEL",
        "claude-sonnet-4-5",
    )
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.reasoning_tokens) == (472, 348, 312)
    assert (reply.usage.cache_read_tokens, reply.usage.cache_write_tokens) == (None, None)
    cached = {**fixture("anthropic/message_web_search.json")}
    cached["usage"] = {**cached["usage"], "cache_read_input_tokens": 7123, "cache_creation_input_tokens": 7345}
    usage = a_request().parse(cached).usage
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.reasoning_tokens) == (7123, 7345, None)
    reply = b_request().parse(fixture("bedrock/converse_citations.json"))
    assert (reply.stop_reason, reply.id, reply.model) == ("end_turn", None, None)
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (1520, 41)
    assert (reply.usage.cache_read_tokens, reply.usage.cache_write_tokens, reply.usage.reasoning_tokens) == (
        1200,
        300,
        None,
    )
    assert b_request().parse(fixture("bedrock/converse_final.json")).usage.cache_read_tokens is None


def test_reply_through_the_sdk(anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator) -> None:
    anthropic_emulator.script(Say("Born in 1916."))
    req = a_request()
    reply = req.parse(anthropic_client.messages.create(**req.body, extra_headers=req.headers).model_dump())
    assert (reply.stop_reason, reply.id, reply.model) == ("end_turn", "msg_emulated_0001", A_MODEL)
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (10, 20)
    assert reply.message == AssistantMessage("Born in 1916.")


# -- deltas and cut streams ---------------------------------------------------------------------------------


def joined(deltas: list[Any], kind: type) -> dict[int, str]:
    out: dict[int, str] = {}
    for delta in deltas:
        if isinstance(delta, kind):
            out[delta.index] = out.get(delta.index, "") + (delta.arguments if kind is ToolCallDelta else delta.text)
    return out


@pytest.mark.parametrize(
    ("provider_id", "events"),
    [("anthropic", "anthropic/stream_interleaved.json"), ("bedrock", "bedrock/stream_interleaved.json")],
)
def test_stream_deltas_add_up_to_the_reply(provider_id: str, events: str) -> None:
    make = a_request if provider_id == "anthropic" else b_request
    reply, deltas = streamed(make(stream=True), fixture(events))
    assert {type(d) for d in deltas} == {TextDelta, ThinkingDelta, ToolCallDelta}
    assert joined(deltas, TextDelta) == {1: "Let me check the weather."}
    assert joined(deltas, ThinkingDelta) == {0: "I need the weather in Paris first."}
    starts = [(d.index, d.id, d.name) for d in deltas if isinstance(d, ToolCallDelta) and d.id is not None]
    calls = reply.message.tool_calls
    assert starts == [(2, calls[0].id, calls[0].name), (5, calls[1].id, calls[1].name)]
    arguments = joined(deltas, ToolCallDelta)
    assert [json.loads(arguments[2]), json.loads(arguments[5])] == [dict(c.arguments) for c in calls]


@pytest.mark.parametrize(
    ("provider_id", "events"),
    [("anthropic", "anthropic/stream_interleaved.json"), ("bedrock", "bedrock/stream_interleaved.json")],
)
def test_a_cut_stream_gives_what_arrived(provider_id: str, events: str) -> None:
    make = a_request if provider_id == "anthropic" else b_request
    all_events = fixture(events)
    # Cut in the middle of the second tool call's arguments.
    last_args = max(
        i
        for i, e in enumerate(all_events)
        if (e.get("delta") or {}).get("type") == "input_json_delta"
        or "toolUse" in (e.get("contentBlockDelta") or {}).get("delta", {})
    )
    acc = make(stream=True).stream()
    assert acc.partial() is None
    for event in all_events[:last_args]:
        acc.feed(event)
    partial = acc.partial()
    assert partial is not None
    assert partial.parts == ("Let me check the weather.", ToolCall(*_first_call(provider_id)))
    assert not partial.has_sealed_thinking
    assert partial.thinking_binding is None


def _first_call(provider_id: str) -> tuple[str, str, dict[str, Any]]:
    if provider_id == "anthropic":
        return ("toolu_01A09q90qw90lq917835lq9", "get_weather", {"city": "Paris", "unit": "celsius"})
    return ("tooluse_abc123", "get_weather", {"city": "Paris", "unit": "celsius"})


def test_stream_text_is_joined_once() -> None:
    """Text pieces are kept in a list and joined at the end (linear in the
    reply's length), the same for many small pieces as for one."""
    events = fixture("anthropic/stream_interleaved.json")
    at = next(i for i, e in enumerate(events) if e["type"] == "content_block_start" and e["index"] == 1)
    text = "x" * 20_000
    pieces = [{"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "x"}}] * len(text)
    stop = next(i for i, e in enumerate(events) if e["type"] == "content_block_stop" and e["index"] == 1)
    many = events[: at + 1] + pieces + events[stop:]
    acc = a_request(stream=True).stream()
    for event in many:
        acc.feed(event)
    assert acc.finish().parts[1] == text
    assert isinstance(acc.finish().parts[0], ThinkingBlock)


def test_partial_is_none_without_text_or_complete_calls() -> None:
    events = fixture("anthropic/stream_interleaved.json")
    acc = a_request(stream=True).stream()
    for event in events[:4]:  # message_start, ping, thinking start and a thinking delta
        acc.feed(event)
    assert acc.partial() is None
