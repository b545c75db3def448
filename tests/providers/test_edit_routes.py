"""Leak and tamper properties over every edit route and every adapter (issue
12): random mixed-origin histories (``test_cross_provider.play``), then one
edit by a route chosen at random, then a request to a random adapter.

Whatever the route: each request's replay decision equals an independent
reference model's (``tests/test_properties.reference_replay``: naive, no
caches), so a turn is kept only while it and everything before it go out as
they did when it was bound; and no body carries a secret whose turn is not
kept unchanged for that very origin. Routes: a message replaced, deleted or
inserted; an assistant turn changed with ``with_content``,
``with_tool_calls`` or ``with_thinking``; the system prompt added or changed;
the tools changed; and the stored file edited at any byte (a byte replaced,
when the result still loads).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import thinkseal
from thinkseal import AssistantMessage, Conversation, Message, SystemMessage, Tool, ToolCall, UserMessage
from thinkseal.providers import PROVIDER_IDS

from ..test_properties import reference_replay
from .random_histories import MODELS, History, play, steps
from .sealed import OPTIONS

ROUTES = (
    "replace",
    "delete",
    "insert",
    "with_content",
    "with_tool_calls",
    "with_thinking",
    "system",
    "tools",
    "stored-byte",
)


def _edit(conv: Conversation, route: str, where: int, data: st.DataObject) -> Conversation | None:
    """``conv`` edited by ``route`` at a position chosen from ``where`` (None
    when the route has nothing to act on or the edited file no longer loads)."""
    messages: list[Message] = list(conv)
    i = where % len(messages)
    turns = [k for k, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    turn = turns[where % len(turns)] if turns else None
    if route == "replace":
        messages[i] = UserMessage(f"replaced {where}")
    elif route == "delete":
        del messages[i]
        if not messages:
            return None
    elif route == "insert":
        messages.insert(i, UserMessage(f"inserted {where}"))
    elif route in ("with_content", "with_tool_calls", "with_thinking"):
        if turn is None:
            return None
        message = messages[turn]
        assert isinstance(message, AssistantMessage)
        if route == "with_content":
            messages[turn] = message.with_content(f"changed {where}")
        elif route == "with_tool_calls":
            messages[turn] = message.with_tool_calls([ToolCall(f"x{where}", "lookup", {"q": "changed"})])
        else:
            messages[turn] = message.with_thinking(f"rethought {where}")
    elif route == "system":
        messages.insert(0, SystemMessage(f"system {where}"))
    elif route == "tools":
        return conv.with_tools([*conv.tools, Tool(f"extra{where % 7}")])
    else:
        text = conv.to_json().encode()
        position = data.draw(st.integers(0, len(text) - 1), label="byte")
        replacement = data.draw(st.integers(0x20, 0x7E), label="value")
        edited = text[:position] + bytes([replacement]) + text[position + 1 :]
        try:
            return Conversation.from_json(edited)
        except thinkseal.ValidationError:
            return None
    if not isinstance(messages[-1], UserMessage):
        messages.append(UserMessage("next"))
    return conv.with_messages(messages)


@given(steps, st.sampled_from(ROUTES), st.integers(0, 10_000), st.sampled_from(PROVIDER_IDS), st.data())
def test_every_edit_route_keeps_only_seals_that_hold(
    script: list[tuple[Any, ...]], route: str, where: int, target: str, data: st.DataObject
) -> None:
    h: History = play(script)
    edited = _edit(h.conv, route, where, data)
    if edited is None:
        return
    for model in MODELS:
        try:
            req = thinkseal.provider(target).prepare(edited, model=model, **OPTIONS[target])
        except thinkseal.ReplayError:
            continue  # refused before sending: nothing stale goes out
        reference, _, _ = reference_replay(edited, req.origin)
        assert [(e.index, str(e.reason)) for e in req.report] == [(i, str(r)) for i, r in reference], route
        kept = {entry.index for entry in req.report if entry.kept}
        wire = req.content.decode()
        for token in h.tokens:
            still = token.turn in kept and token.origin == req.origin and edited[token.turn] == h.conv[token.turn]
            if not still:
                assert token.text not in wire, (route, token, target, model)
