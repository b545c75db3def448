"""The adapters' wire caches (providers/_wire.py) never change a body: a body
built through caches shared with other conversations equals one built fresh."""

from __future__ import annotations

import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation, Tool, ToolCall, ToolMessage, UserMessage
from thinkseal.providers import PROVIDER_IDS

OPTIONS = {
    "anthropic": {"max_tokens": 1024},
    "vertex-anthropic": {"max_tokens": 1024, "project": "p", "region": "r"},
    "vertex-gemini": {"project": "p", "location": "global"},
}


def fresh(conversation: Conversation) -> Conversation:
    return Conversation(list(conversation), conversation.tools, conversation.response_format)


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_cache_of_another_history_is_not_reused_after_with_messages(provider_id: str) -> None:
    # A cached cut point where an assistant turn used to stand must not split
    # the user turn that stands there now (Bedrock rejects two user turns in a row).
    adapter = thinkseal.provider(provider_id)
    options = OPTIONS.get(provider_id, {})
    conv = Conversation(
        [UserMessage("start"), AssistantMessage(None, [ToolCall("c1", "lookup", {})]), ToolMessage("r", "c1")],
        tools=[Tool("lookup")],
    )
    adapter.prepare(conv, model="m", **options)
    nxt = conv.with_messages([conv[0], UserMessage("summary"), conv[2]]).append(
        AssistantMessage("ok"), UserMessage("next")
    )
    cached = adapter.prepare(nxt, model="m", **options)
    built = adapter.prepare(fresh(nxt), model="m", **options)
    assert cached.content == built.content
    assert cached.body == built.body


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_alternating_branches_build_their_own_bodies(provider_id: str) -> None:
    adapter = thinkseal.provider(provider_id)
    options = OPTIONS.get(provider_id, {})
    base = Conversation([UserMessage("q")]).append(AssistantMessage("a"), UserMessage("q2"))
    left = base.append(AssistantMessage("left"), UserMessage("l"))
    right = base.append(AssistantMessage("right"), UserMessage("r"))  # a branch: its own storage
    for _ in range(2):
        for branch in (left, right, left.append(AssistantMessage("more"), UserMessage("m"))):
            assert adapter.prepare(branch, model="m", **options).content == (
                adapter.prepare(fresh(branch), model="m", **options).content
            )
