"""A prepared body is the shared fragments of the history, not a copy: its
pieces are joined only when ``content`` is read, ``chunks()`` gives the same
bytes in pieces, ``content_length`` is known without joining, and the next
request reuses the very fragment objects of the unchanged messages."""

from __future__ import annotations

import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation, SystemMessage, Tool, ToolCall, ToolMessage, UserMessage
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import emulator

TOOL = Tool("lookup", "Look up", {"type": "object", "properties": {"q": {"type": "integer"}}})


def _history(steps: int) -> Conversation:
    messages: list[thinkseal.Message] = [SystemMessage("Be brief."), UserMessage("Start ünïcode")]
    for i in range(steps):
        messages.append(AssistantMessage(f"Step {i}", [ToolCall(f"call_{i}", "lookup", {"q": i})]))
        messages.append(ToolMessage(f"result {i} " * 60, f"call_{i}"))
    messages.append(UserMessage("Go on"))
    return Conversation(messages, tools=[TOOL])


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_chunks_are_the_content_without_a_join(provider: str) -> None:
    adapter = thinkseal.provider(provider)
    options = dict(emulator(provider).options)
    conversation = _history(300)
    req = adapter.prepare(conversation, model="m", **options)
    body = req._encoded
    assert isinstance(body, thinkseal.providers._wire.Body)
    pieces = list(req.chunks())
    assert body._joined is None  # neither chunks() nor content_length joined the body
    assert req.content_length == sum(map(len, pieces))
    assert req.content_length > 1 << 17
    assert len(pieces) > 1  # a long body goes out in several pieces, not one copy
    assert b"".join(pieces) == req.content
    assert len(req.content) == req.content_length


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_the_next_request_shares_the_fragments_of_unchanged_messages(provider: str) -> None:
    adapter = thinkseal.provider(provider)
    options = dict(emulator(provider).options)
    conversation = _history(100)
    adapter.prepare(conversation, model="m", **options)  # maps the history once
    first = adapter.prepare(conversation, model="m", **options)._encoded
    grown = conversation.append(AssistantMessage("More"), UserMessage("And?"))
    second = adapter.prepare(grown, model="m", **options)._encoded
    shared = sum(1 for a, b in zip(first.items, second.items, strict=False) if a is b)
    assert shared >= len(first.items) - 3  # all but the last few fragments are the same objects
