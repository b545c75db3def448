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
