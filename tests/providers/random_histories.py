"""Random histories mixing turns from every provider (two models each), with
edits of earlier messages: the hypothesis strategy ``steps`` and ``play``, which
turns a script of steps into a conversation and the secrets in it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from thinkseal import AssistantMessage, Conversation, Message, Origin, Tool, ToolCall, ToolMessage, UserMessage
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import respond

from .sealed import NATIVE, SEALED

MODELS = ("model-a", "model-b")
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
            blocks, secrets = SEALED[provider](k)
            calls = [ToolCall(f"call{k:05d}x", "lookup", {"q": str(k)})] if with_call else []
            origin = Origin(provider, model)
            text = [] if with_call else [f"answer {k}"]
            native = NATIVE[provider]
            if native is None:
                reply = AssistantMessage.from_parts([*blocks, *text, *calls])
            else:
                block, secret = native(k)
                secrets = [*secrets, secret]
                reply = AssistantMessage.from_parts([*blocks, block, *text, *calls])
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
