"""Which turn a provider's rejection of replayed thinking names
(``Provider.rejected_turn``, asked by the client's recovery and by the
gateway): Claude's ``messages.N`` is an index into the request's wire turns,
directly (anthropic, bedrock, vertex-anthropic) or relayed by OpenRouter,
whose ``messages`` list counts the system message too."""

from __future__ import annotations

import json

import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation, SystemMessage, ThinkingBlock, UserMessage

from .sealed import OPTIONS

REJECTION = "messages.{}.content.0: Invalid `signature` in `thinking` block"


def _two_kept_turns(provider: str, model: str) -> thinkseal.PreparedRequest:
    adapter = thinkseal.provider(provider)
    conv = Conversation([SystemMessage("Be brief."), UserMessage("q1")])
    for k in (1, 2):
        req = adapter.prepare(conv, model=model, **OPTIONS[provider])
        if provider == "openrouter":
            item = json.dumps({"type": "reasoning.text", "text": f"t{k}", "signature": f"SIG-{k}", "index": 0})
            thinking = [ThinkingBlock.Text(f"t{k}"), ThinkingBlock.Opaque("openrouter", item)]
        else:
            thinking = [ThinkingBlock.Text(f"t{k}", f"SIG-{k}")]
        conv = conv.append(req.replay.bind(AssistantMessage(f"a{k}", thinking=thinking)), UserMessage(f"q{k + 1}"))
    req = adapter.prepare(conv, model=model, **OPTIONS[provider])
    assert [e.index for e in req.report if e.kept] == [2, 4]
    return req


@pytest.mark.parametrize(
    ("provider", "model", "wire_of"),
    [
        # Claude's messages hold no system message: turns 2 and 4 are wire turns 1 and 3.
        ("anthropic", "claude-sonnet-4-5", {2: 1, 4: 3}),
        ("openrouter", "anthropic/claude-sonnet-4.5", {2: 2, 4: 4}),
    ],
)
def test_the_named_turn_is_unsealed(provider: str, model: str, wire_of: dict[int, int]) -> None:
    req = _two_kept_turns(provider, model)
    adapter = thinkseal.provider(provider)
    for index, wire in wire_of.items():
        assert adapter.rejected_turn(req.replay, REJECTION.format(wire)) == index
    # A user turn, an index past the end, or no index at all: the first kept turn.
    for message in (REJECTION.format(0), REJECTION.format(99), "Invalid `signature` in `thinking` block"):
        assert adapter.rejected_turn(req.replay, message) == 2
    # Not a rejection of thinking: nothing to unseal.
    assert adapter.rejected_turn(req.replay, "max_tokens: Field required") is None
