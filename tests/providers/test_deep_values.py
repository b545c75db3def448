"""Deeply nested values in provider responses (depth 1,000, which orjson and
pydantic hand over) give a ``ResponseError``, never a ``RecursionError``: in
error bodies, error events and OpenRouter reasoning details, for every adapter,
whole and streamed."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, ResponseError, UserMessage
from thinkseal.providers import PROVIDER_IDS

from .sealed import OPTIONS


def nested(depth: int, kind: str) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value} if kind == "object" else [value]
    return value


def bodies(deep: Any) -> list[dict[str, Any]]:
    return [
        {"error": deep},
        {"error": {"message": deep, "type": deep}},
        {"type": "error", "error": {"type": "overloaded_error", "message": deep}},
        {"choices": [{"message": {"role": "assistant", "content": "x", "reasoning_details": [deep]}}]},
        {"message": {"role": "assistant", "content": "x"}, "error": deep, "done": True},
    ]


@pytest.mark.parametrize("kind", ["object", "array"])
@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_deep_values_give_response_errors(provider_id: str, kind: str) -> None:
    req = thinkseal.provider(provider_id).prepare(Conversation([UserMessage("hi")]), model="m", **OPTIONS[provider_id])
    for body in bodies(nested(1000, kind)):
        for read in (req.receive, lambda event: req.stream().feed(event)):
            # A ResponseError is the expected outcome for an error body; any
            # other exception (RecursionError included) fails the test.
            with contextlib.suppress(ResponseError):
                read(body)


# -- unknown blocks in replies: kept as native blocks within the limits, refused past them ------------


def _claude(deep: Any) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "hi"}, {"type": "from_the_future", "v": deep}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _bedrock(deep: Any) -> dict[str, Any]:
    content = [{"text": "hi"}, {"unknownBlock": {"v": deep}}]
    usage = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
    return {"output": {"message": {"role": "assistant", "content": content}}, "stopReason": "end_turn", "usage": usage}


def _chat(deep: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"type": "text", "text": "hi"}, {"type": "future", "v": deep}]}
    return {"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": message}]}


def _gemini(deep: Any) -> dict[str, Any]:
    parts = [{"text": "hi"}, {"futurePart": {"v": deep}}]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}


def _responses(deep: Any) -> dict[str, Any]:
    text = {"type": "output_text", "text": "hi", "annotations": []}
    message = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [text]}
    output = [{"type": "future_item", "id": "fi_1", "v": deep}, message]
    return {"id": "resp_1", "object": "response", "status": "completed", "model": "m", "output": output}


# A reply with a block of a kind the adapter does not read, per wire format (Ollama's messages have none).
UNKNOWN_BLOCK_REPLIES = {
    "anthropic": _claude,
    "vertex-anthropic": _claude,
    "bedrock": _bedrock,
    "openrouter": _chat,
    "deepseek": _chat,
    "zai": _chat,
    "openai": _chat,
    "mistral": _chat,
    "gemini": _gemini,
    "vertex-gemini": _gemini,
    "openai-responses": _responses,
    "gemini-openai": _chat,
}


def test_unknown_block_replies_cover_every_adapter_with_blocks() -> None:
    assert set(UNKNOWN_BLOCK_REPLIES) == set(PROVIDER_IDS) - {"ollama"}


@pytest.mark.parametrize("depth", [5, 127, 129, 1000, 100_000])
@pytest.mark.parametrize("provider_id", sorted(UNKNOWN_BLOCK_REPLIES))
def test_an_unknown_block_is_kept_within_the_depth_limit_and_refused_past_it(provider_id: str, depth: int) -> None:
    """The unknown block is a native part when its value nests within
    ``Limits.max_depth`` (128 levels, counting the block itself), and a
    ``ResponseError`` naming the block past it, never a ``RecursionError`` or
    a ``ValidationError`` from deep inside."""
    req = thinkseal.provider(provider_id).prepare(Conversation([UserMessage("hi")]), model="m", **OPTIONS[provider_id])
    body = UNKNOWN_BLOCK_REPLIES[provider_id](nested(depth, "array"))
    if depth < 127:
        reply = req.receive(body)
        assert sum(isinstance(p, thinkseal.Native) for p in reply.parts) == 1
        assert reply.thinking_binding is not None  # a native part is sealed: the reply is bound
    elif depth > 127:
        with pytest.raises(ResponseError) as err:
            req.receive(body)
        assert err.value.path is not None
        assert err.value.path.startswith("$.")
    else:  # at the limit: kept or refused, depending on how the adapter nests the block, but never a crash
        with contextlib.suppress(ResponseError):
            req.receive(body)
