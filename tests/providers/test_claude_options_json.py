"""Anthropic and Bedrock options are JSON like every other adapter's: a value
that is not JSON raises ValidationError at its path (never a bare ValueError,
TypeError or UnicodeEncodeError, and never a silent coercion such as an int key
sent as a string), and the body keeps no reference to the caller's dicts."""

from __future__ import annotations

from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, UserMessage, ValidationError

CONV = Conversation([UserMessage("hi")])
BAD: list[tuple[str, Any]] = [
    ("temperature", float("nan")),
    ("temperature", float("inf")),
    ("temperature", {1, 2}),
    ("metadata", {1: "x"}),
    ("metadata", {"user_id": "\ud800"}),
    ("metadata", {"user_id": b"bytes"}),
]


@pytest.mark.parametrize(("key", "value"), BAD)
def test_anthropic_options_that_are_not_json_are_refused_at_their_path(key: str, value: Any) -> None:
    with pytest.raises(ValidationError) as info:
        thinkseal.provider("anthropic").prepare(CONV, model="m", max_tokens=16, **{key: value})
    assert info.value.path is not None
    assert info.value.path.startswith(key)


@pytest.mark.parametrize(("key", "value"), BAD)
def test_bedrock_options_that_are_not_json_are_refused_at_their_path(key: str, value: Any) -> None:
    with pytest.raises(ValidationError) as info:
        thinkseal.provider("bedrock").prepare(CONV, model="m", additionalModelRequestFields={key: value})
    assert info.value.path is not None
    assert info.value.path.startswith(f"additionalModelRequestFields.{key}")


def test_the_body_does_not_share_the_callers_dicts() -> None:
    metadata = {"user_id": "u1"}
    req = thinkseal.provider("anthropic").prepare(CONV, model="m", max_tokens=16, metadata=metadata)
    metadata["user_id"] = "changed"
    assert req.body["metadata"] == {"user_id": "u1"}
    assert b'"user_id":"u1"' in req.content
