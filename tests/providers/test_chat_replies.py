"""Reply metadata, typed deltas and cut-off streams on the chat providers
(openrouter, deepseek, zai, mistral, ollama): ``req.parse`` and a finished
stream give equal ``Reply``s for every recorded fixture pair; every streamed
event yields its ``TextDelta``/``ThinkingDelta``/``ToolCallDelta``s; a stream
cut off gives what arrived through ``partial()``."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mistralai.client.models import ChatCompletionResponse, CompletionChunk
from ollama._types import ChatResponse
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Delta,
    PreparedRequest,
    Reply,
    ResponseError,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    Tool,
    ToolCall,
    ToolCallDelta,
    Usage,
    UserMessage,
)
from thinkseal.providers._response import Node
from thinkseal.providers.openrouter import DetailDeltas

FIXTURES = Path(__file__).parent / "fixtures"
TOOLS = [Tool("get_weather"), Tool("get_time")]


def load(name: str) -> Any:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    if name.endswith(".ndjson"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def prepare(provider_id: str, stream: bool = False) -> PreparedRequest:
    return thinkseal.provider(provider_id).prepare(Conversation([UserMessage("Hi")], TOOLS), model="m", stream=stream)


def streamed(req: PreparedRequest, events: list[dict[str, Any]]) -> tuple[Reply, list[Delta]]:
    acc = req.stream()
    deltas: list[Delta] = []
    for event in events:
        deltas.extend(acc.feed(event))
    return acc.reply, deltas


# (provider, whole reply fixture, stream fixture, expected stop reason, usage, id, model)
PAIRS = [
    (
        "openrouter",
        "openrouter/tool_call.json",
        "openrouter/tool_call.stream.json",
        "tool_calls",
        Usage(412, 96, None, None, 64),
        "gen-1767225600-AbCdEfGhIjKlMnOp",
        "anthropic/claude-sonnet-4.5",
    ),
    (
        "deepseek",
        "deepseek/tool_call.json",
        "deepseek/tool_call.stream.json",
        "tool_calls",
        Usage(152, 41, 128, None, 27),
        "b5a3c1d2-0e4f-4a6b-8c9d-1e2f3a4b5c6d",
        "deepseek-v4-pro",
    ),
    (
        "zai",
        "zai/tool_call.json",
        "zai/tool_call.stream.json",
        "tool_calls",
        Usage(98, 35, 0),
        "2026010112000012345678",
        "glm-5.1",
    ),
    (
        "mistral",
        "mistral/reply_tool_call.json",
        "mistral/stream_tool_call.json",
        "tool_calls",
        Usage(212, 96),
        "5f1c2a7e9b3d4e6f8a0b1c2d3e4f5a6b",
        "mistral-medium-3-5",
    ),
    (
        "mistral",
        "mistral/reply_answer.json",
        "mistral/stream_answer.json",
        "stop",
        Usage(371, 58),
        "0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d",
        "mistral-medium-3-5",
    ),
    (
        "ollama",
        "ollama/reply_tool_call.json",
        "ollama/stream_tool_call.ndjson",
        "stop",
        Usage(181, 97),
        None,
        "qwen3:8b",
    ),
    ("ollama", "ollama/reply_answer.json", "ollama/stream_answer.ndjson", "stop", Usage(None, 41), None, "qwen3:8b"),
]
PAIR_IDS = [whole for _, whole, *_ in PAIRS]


@pytest.mark.parametrize(
    ("provider_id", "whole", "stream", "reason", "usage", "reply_id", "model"), PAIRS, ids=PAIR_IDS
)
def test_whole_and_streamed_replies_are_equal(
    provider_id: str, whole: str, stream: str, reason: str, usage: Usage, reply_id: str | None, model: str
) -> None:
    req = prepare(provider_id)
    reply = req.parse(load(whole))
    assert (reply.stop_reason, reply.usage, reply.id, reply.model) == (reason, usage, reply_id, model)
    assert reply.message == req.receive(load(whole))
    from_stream, _ = streamed(prepare(provider_id, stream=True), load(stream))
    assert from_stream == reply


@pytest.mark.parametrize(("provider_id", "whole", "stream"), [p[:3] for p in PAIRS], ids=PAIR_IDS)
def test_sdk_shapes_give_the_same_reply(provider_id: str, whole: str, stream: str) -> None:
    req = prepare(provider_id)
    reply = req.parse(load(whole))
    model: Any
    chunk: Any
    if provider_id == "mistral":
        model, chunk = ChatCompletionResponse, CompletionChunk
    elif provider_id == "ollama":
        model = chunk = ChatResponse
    else:
        model, chunk = ChatCompletion, ChatCompletionChunk
    assert req.parse(model.model_validate(load(whole)).model_dump()) == reply
    events = [chunk.model_validate(e).model_dump() for e in load(stream)]
    assert streamed(prepare(provider_id, stream=True), events)[0] == reply


@pytest.mark.parametrize(("provider_id", "whole", "stream"), [p[:3] for p in PAIRS], ids=PAIR_IDS)
def test_deltas_add_up_to_the_reply(provider_id: str, whole: str, stream: str) -> None:
    reply, deltas = streamed(prepare(provider_id, stream=True), load(stream))
    message = reply.message
    text = "".join(d.text for d in deltas if isinstance(d, TextDelta))
    thinking = "".join(d.text for d in deltas if isinstance(d, ThinkingDelta))
    assert text == message.content
    texts = [b.text for b in message.thinking if isinstance(b, ThinkingBlock.Text)]
    assert thinking == texts[0] if texts else thinking == ""
    calls: dict[int, dict[str, Any]] = {}
    for d in deltas:
        if isinstance(d, ToolCallDelta):
            call = calls.setdefault(d.index, {"id": None, "name": None, "arguments": ""})
            if d.id is not None:
                assert call["id"] is None  # given once, when first known
                call["id"] = d.id
            if d.name is not None:
                assert call["name"] is None
                call["name"] = d.name
            call["arguments"] += d.arguments
    assert [c["name"] for c in calls.values()] == [c.name for c in message.tool_calls]
    assert [json.loads(c["arguments"]) for c in calls.values()] == [dict(c.arguments) for c in message.tool_calls]
    if provider_id != "ollama":  # Ollama's ids are generated once the reply is whole
        assert [c["id"] for c in calls.values()] == [c.id for c in message.tool_calls]
    assert all(d.index == 0 for d in deltas if isinstance(d, (TextDelta, ThinkingDelta)))


# -- usage variants ---------------------------------------------------------------------------------


def completion(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "c",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi."}, "finish_reason": "length"}],
        "usage": usage,
    }


def test_openrouter_cache_reads_and_writes() -> None:
    usage = {
        "prompt_tokens": 2000,
        "completion_tokens": 10,
        "prompt_tokens_details": {"cached_tokens": 1800, "cache_write_tokens": 150},
        "completion_tokens_details": {"reasoning_tokens": None},
    }
    reply = prepare("openrouter").parse(completion(usage))
    assert reply.usage == Usage(2000, 10, 1800, 150, None)
    assert reply.stop_reason == "length"


def test_deepseek_cache_hits_come_from_its_own_field() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 5,
        "prompt_cache_hit_tokens": 64,
        "prompt_cache_miss_tokens": 36,
    }
    assert prepare("deepseek").parse(completion(usage)).usage == Usage(100, 5, 64)


def test_mistral_cached_tokens() -> None:
    body = completion({"prompt_tokens": 300, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 256}})
    body["object"] = "chat.completion"
    body["created"] = 1
    assert prepare("mistral").parse(body).usage == Usage(300, 9, 256)


def test_a_reply_without_usage_has_none_of_it() -> None:
    for provider_id in ("openrouter", "deepseek", "zai", "mistral"):
        body = completion({})
        del body["usage"]
        assert prepare(provider_id).parse(body).usage == Usage()


@pytest.mark.parametrize(
    ("usage", "path"),
    [
        ({"prompt_tokens": "12"}, "$.usage.prompt_tokens"),
        ({"prompt_tokens": -1}, "$.usage.prompt_tokens"),
        ({"completion_tokens": 1.5}, "$.usage.completion_tokens"),
        ({"prompt_tokens_details": {"cached_tokens": True}}, "$.usage.prompt_tokens_details.cached_tokens"),
        ({"prompt_tokens_details": 3}, "$.usage.prompt_tokens_details"),
    ],
)
def test_malformed_usage_names_the_path(usage: dict[str, Any], path: str) -> None:
    for provider_id in ("openrouter", "mistral"):
        with pytest.raises(ResponseError) as err:
            prepare(provider_id).parse(completion(usage))
        assert err.value.path == path


def test_integral_float_counts_are_read() -> None:
    assert prepare("zai").parse(completion({"prompt_tokens": 12.0, "completion_tokens": 3})).usage == Usage(12, 3)


def test_ollama_malformed_counts_name_the_path() -> None:
    body = load("ollama/reply_answer.json") | {"eval_count": "41"}
    with pytest.raises(ResponseError) as err:
        prepare("ollama").parse(body)
    assert err.value.path == "$.eval_count"


# -- cut-off streams -------------------------------------------------------------------------------


@pytest.mark.parametrize(("provider_id", "whole", "stream"), [p[:3] for p in PAIRS], ids=PAIR_IDS)
def test_a_cut_stream_gives_what_arrived(provider_id: str, whole: str, stream: str) -> None:
    events = load(stream)
    complete = streamed(prepare(provider_id, stream=True), events)[0].message
    for cut in range(len(events)):
        acc = prepare(provider_id, stream=True).stream()
        for event in events[:cut]:
            acc.feed(event)
        partial = acc.partial()
        if partial is None:
            continue
        assert partial.thinking_binding is None
        assert not partial.has_sealed_thinking
        assert complete.content.startswith(partial.content)
        # Only complete calls, never one cut in half.
        assert [c.name for c in partial.tool_calls] == [c.name for c in complete.tool_calls][: len(partial.tool_calls)]
        try:
            finished = acc.finish()
        except ResponseError:
            continue
        assert finished == complete  # it had ended already (OpenRouter's usage chunk comes after the finish)
    acc = prepare(provider_id, stream=True).stream()
    assert acc.partial() is None


def test_a_partial_keeps_complete_calls_and_drops_a_half_sent_one() -> None:
    def chunk(delta: dict[str, Any]) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": delta}]}

    acc = prepare("openrouter", stream=True).stream()
    events = [
        chunk({"content": "Checking "}),
        chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "get_weather", "arguments": '{"c": 1}'}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "c2", "function": {"name": "get_time", "arguments": '{"tz": '}}]}),
        chunk({"content": "both. \ud83d"}),  # the stream breaks inside a character
    ]
    for event in events:
        acc.feed(event)
    assert acc.partial() == AssistantMessage("Checking both. ", [ToolCall("c1", "get_weather", {"c": 1})])


def test_a_partial_of_only_thinking_is_none() -> None:
    acc = prepare("deepseek", stream=True).stream()
    acc.feed({"choices": [{"index": 0, "delta": {"reasoning_content": "Let me think"}}]})
    assert acc.partial() is None


# -- deltas of text split inside a character -----------------------------------------------------


@given(cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=5))
def test_deltas_are_whole_characters_however_the_text_is_split(cuts: list[int]) -> None:
    text = "Soleil ☀️ et 😀 à Paris 🌧"
    # The text as a stream of JSON escapes, each character beyond the BMP as two
    # (a surrogate pair): an event may end between the two halves.
    units: list[str] = []
    for char in text:
        if ord(char) > 0xFFFF:
            code = ord(char) - 0x10000
            units += [f"\\u{0xD800 + (code >> 10):04x}", f"\\u{0xDC00 + (code & 0x3FF):04x}"]
        else:
            units.append(json.dumps(char)[1:-1])
    points = sorted({0, len(units), *(c % (len(units) + 1) for c in cuts)})
    pieces = ["".join(units[a:b]) for a, b in itertools.pairwise(points) if b > a]
    for provider_id, field in (("openrouter", "reasoning"), ("zai", "reasoning_content"), ("mistral", None)):
        acc = prepare(provider_id, stream=True).stream()
        deltas: list[Delta] = []
        for piece in pieces:
            decoded = json.loads(f'"{piece}"')
            delta = {"content": decoded} if field is None else {field: decoded, "content": decoded}
            deltas.extend(acc.feed({"choices": [{"index": 0, "delta": delta}]}))
        deltas.extend(acc.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
        assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == text
        assert acc.finish().content == text


# -- linear accumulation ------------------------------------------------------------------------------


def test_openrouter_reasoning_details_keep_their_pieces_in_lists() -> None:
    """Many fragments of one reasoning_details item are kept as a list of pieces
    and joined once at finish (not concatenated per fragment, which is quadratic)."""
    details = DetailDeltas()
    n = 2000
    for _ in range(n):
        fragment = {"type": "reasoning.text", "text": "ab", "index": 0, "format": "f"}
        details.feed(Node({"reasoning": "ab", "reasoning_details": [fragment]}, "$.choices[0].delta"))
    assert len(details._pieces[(0, "reasoning.text")]["text"]) == n
    assert "text" not in details._items[(0, "reasoning.text")]  # nothing concatenated before the end
    blocks = details.blocks()
    assert blocks[0] == ThinkingBlock.Text("ab" * n)
    assert json.loads(blocks[1].data)["text"] == "ab" * n  # type: ignore[attr-defined]
