"""Properties across all seven adapters.

1. Isolation: for random conversations mixing turns from every provider (two
   models each), with edits of earlier messages, no body for provider X carries
   a signature, redacted data or opaque payload produced by another provider, by
   X under another model, or by a turn the replay decision did not keep (an
   edit earlier in the history unseals every later turn). Kept sealed turns do
   carry theirs.
2. Shared wire caches: a body prepared from a conversation grown by appends
   (and branched) is exactly the body prepared from a fresh, cache-less copy.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Message,
    Origin,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from thinkseal._testing import respond
from thinkseal.providers import PROVIDER_IDS

MODELS = ("model-a", "model-b")
OPTIONS: dict[str, dict[str, Any]] = {"anthropic": {"max_tokens": 1024}}
TOOL = Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "string"}}})


@dataclass
class Token:
    """One secret a provider returned: where it is, who produced it."""

    text: str  # as it appears in a request body
    origin: Origin
    turn: int  # index of its assistant turn


@dataclass
class History:
    conv: Conversation = field(default_factory=lambda: Conversation([UserMessage("start")], [TOOL]))
    tokens: list[Token] = field(default_factory=list)


def sealed_blocks(provider: str, k: int) -> tuple[list[ThinkingBlock], list[str]]:
    """Thinking as ``provider`` returns it, and the secrets in it as they go on the wire."""
    if provider in ("anthropic", "bedrock"):
        redacted = base64.b64encode(f"RED-{k}".encode()).decode()
        return [ThinkingBlock.Text(f"think {k}", f"SIG-{k}"), ThinkingBlock.Redacted(redacted)], [f"SIG-{k}", redacted]
    if provider == "openrouter":
        item = json.dumps({"type": "reasoning.encrypted", "data": f"OPQ-{k}", "index": 0}, separators=(",", ":"))
        return [ThinkingBlock.Text(f"think {k}"), ThinkingBlock.Opaque("openrouter", item)], [f"OPQ-{k}"]
    if provider == "mistral":
        return [ThinkingBlock.Text(f"think {k}", f"MSIG-{k}")], [f"MSIG-{k}"]
    return [ThinkingBlock.Text(f"think {k}")], []  # plain-text providers: nothing sealed


steps = st.lists(
    st.one_of(
        st.tuples(st.just("reply"), st.sampled_from(PROVIDER_IDS), st.sampled_from(MODELS), st.booleans()),
        st.tuples(st.just("user")),
        st.tuples(st.just("edit"), st.integers(min_value=0, max_value=50)),
    ),
    min_size=1,
    max_size=12,
)


def play(script: list[tuple[Any, ...]]) -> History:
    h = History()
    for k, step in enumerate(script):
        if step[0] == "reply":
            _, provider, model, with_call = step
            blocks, secrets = sealed_blocks(provider, k)
            calls = [ToolCall(f"call{k:05d}x", "lookup", {"q": str(k)})] if with_call else []
            origin = Origin(provider, model)
            reply = AssistantMessage(None if with_call else f"answer {k}", calls, blocks)
            h.tokens += [Token(s, origin, len(h.conv)) for s in secrets]
            h.conv = respond(h.conv, origin, reply)
            if with_call:
                h.conv = h.conv.append(ToolMessage(f"result {k}", calls[0].id))
        elif step[0] == "user":
            h.conv = h.conv.append(UserMessage(f"user {k}"))
        else:
            users = [i for i, m in enumerate(h.conv) if isinstance(m, UserMessage)]
            target = users[step[1] % len(users)]
            messages: list[Message] = list(h.conv)
            messages[target] = UserMessage(f"edited {k}")
            h.conv = h.conv.with_messages(messages)
    if not isinstance(h.conv[-1], UserMessage):
        h.conv = h.conv.append(UserMessage("next"))
    return h


@given(steps, st.sampled_from(PROVIDER_IDS), st.sampled_from(MODELS))
def test_no_body_carries_secrets_it_must_not(script: list[tuple[Any, ...]], target: str, model: str) -> None:
    h = play(script)
    req = thinkseal.provider(target).prepare(h.conv, model=model, **OPTIONS.get(target, {}))
    kept = {entry.index for entry in req.report if entry.kept}
    wire = req.content.decode()
    for token in h.tokens:
        if token.origin != req.origin or token.turn not in kept:
            assert token.text not in wire, (token, target, model)
        else:
            assert token.text in wire, (token, target, model)
    # Kept turns are an unbroken run of the sealed turns bound to this origin.
    for entry in req.report:
        if entry.kept:
            turn = h.conv[entry.index]
            assert isinstance(turn, AssistantMessage)
            assert turn.thinking_binding is not None
            assert turn.thinking_binding.origin == req.origin


@given(steps, st.sampled_from(PROVIDER_IDS))
def test_cached_wire_form_equals_a_fresh_build(script: list[tuple[Any, ...]], target: str) -> None:
    h = play(script)
    adapter = thinkseal.provider(target)
    options = OPTIONS.get(target, {})
    line = [Conversation([h.conv[0]], h.conv.tools)]
    for message in h.conv.messages[1:]:
        line.append(line[-1].append(message))  # each shares its storage and caches with the next
    # The longest first, so the shorter ones find shared caches that reach past their end.
    adapter.prepare(line[-1], model=MODELS[0], **options)
    for conv in line:
        # A branch that is prepared and then abandoned must not disturb the main line.
        adapter.prepare(conv.append(UserMessage("branch")), model=MODELS[0], **options)
        cached = adapter.prepare(conv, model=MODELS[0], **options)
        fresh = adapter.prepare(Conversation(list(conv), conv.tools), model=MODELS[0], **options)
        assert cached.body == fresh.body
        assert cached.content == fresh.content
        assert json.loads(cached.content) == cached.body
