"""The chat-completions surface reads each wire message once, as the Messages
API surface does: a history re-sent with one more step reads only its new
messages (counted), and what it builds equals a fresh read of the same body
(every chat provider, whatever bytes changed)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, UserMessage
from thinkseal.gateway._surfaces import BodyError, surface_of

from ._loops import sealed_loop, sent

CHAT = ["openrouter", "deepseek", "zai", "mistral", "openai", "gemini-openai"]
MODEL = {"gemini-openai": "gemini-3-pro-preview", "mistral": "magistral-medium-latest"}


def wire(provider_id: str, steps: int) -> dict[str, Any]:
    model = MODEL.get(provider_id, "m")
    return sent(sealed_loop(provider_id, model, steps), provider_id, model)


def same_as_fresh(provider_id: str, surface: Any, raw: bytes) -> None:
    cached = surface.read_body(raw, surface.path)
    fresh = surface_of(thinkseal.provider(provider_id)).read(json.loads(raw), surface.path)
    assert cached.conversation == fresh.conversation
    assert cached.conversation.to_json() == fresh.conversation.to_json()
    assert cached.turns == fresh.turns
    assert (cached.model, cached.stream) == (fresh.model, fresh.stream)


@pytest.mark.parametrize("provider_id", CHAT)
def test_a_history_read_before_costs_its_new_messages_only(provider_id: str) -> None:
    surface = surface_of(thinkseal.provider(provider_id))
    bodies = {steps: json.dumps(wire(provider_id, steps)).encode() for steps in (10, 11, 13)}
    surface.read_body(bodies[10], surface.path)
    assert surface._read.reads == 2 + 2 * 10  # every wire message once
    surface.read_body(bodies[11], surface.path)
    assert surface._read.reads == 22 + 2
    surface.read_body(bodies[13], surface.path)
    assert surface._read.reads == 24 + 4
    same_as_fresh(provider_id, surface, bodies[13])


@pytest.mark.parametrize("provider_id", CHAT)
@pytest.mark.parametrize("change", ["none", "system", "tools", "a reasoning text", "a call's arguments", "spacing"])
def test_what_is_read_equals_a_fresh_read(provider_id: str, change: str) -> None:
    surface = surface_of(thinkseal.provider(provider_id))
    surface.read_body(json.dumps(wire(provider_id, 4)).encode(), surface.path)  # fills the cache
    document = wire(provider_id, 4)
    turn = document["messages"][4]
    assert turn["role"] == "assistant"
    if change == "system":
        document["messages"][0]["content"] = "Use the tool twice."
    elif change == "tools":
        document["tools"] = []
    elif change == "a reasoning text":
        reasoning = next((key for key in ("reasoning_content", "reasoning") if isinstance(turn.get(key), str)), None)
        if reasoning is None:
            turn["content"] = "said instead"
        else:
            turn[reasoning] = "edited"
    elif change == "a call's arguments":
        turn["tool_calls"][0]["function"]["arguments"] = '{"q": "edited"}'
    raw = json.dumps(document, indent=1 if change == "spacing" else None).encode()
    same_as_fresh(provider_id, surface, raw)


def test_a_new_element_that_is_no_json_is_refused_and_a_body_naming_messages_twice_read_whole() -> None:
    surface = surface_of(thinkseal.provider("openrouter"))
    surface.read_body(b'{"model":"m","messages":[{"role":"user","content":"a"}]}', surface.path)
    with pytest.raises(BodyError):
        surface.read_body(b'{"model":"m","messages":[{"role":"user","content":"a"},nul]}', surface.path)
    raw = b'{"model":"m","messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"}]}'
    assert surface.read_body(raw, surface.path).conversation == Conversation([UserMessage("b")])
