"""Native blocks across every registered adapter: a provider's own block
(``Native(provider, data, text)``) reaches that provider verbatim and no other;
every other provider gets its ``text`` when it has one, and nothing of its data.
Random histories put native blocks of every provider in user content, tool
results and assistant turns."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Message,
    Native,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.providers import PROVIDER_IDS

from .sealed import OPTIONS

TOOL = Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "string"}}})


def native(provider: str, k: int, with_text: bool) -> Native:
    return Native.of(provider, {"type": "kept_block", "marker": f"NAT{k}X"}, text=f"shown{k}z" if with_text else None)


natives = st.tuples(st.sampled_from(PROVIDER_IDS), st.booleans())
steps = st.lists(
    st.tuples(st.sampled_from(["user", "assistant", "tool"]), natives),
    min_size=1,
    max_size=6,
)


def history(plan: list[tuple[str, tuple[str, bool]]]) -> tuple[Conversation, list[tuple[Native, int]]]:
    messages: list[Message] = [UserMessage("start")]
    placed: list[tuple[Native, int]] = []
    for k, (where, (provider, with_text)) in enumerate(plan):
        block = native(provider, k, with_text)
        placed.append((block, k))
        if where == "user":
            messages.append(UserMessage([f"question {k}", block]))
        elif where == "assistant":
            messages.append(AssistantMessage.from_parts([f"answer {k} ", block]))
            messages.append(UserMessage(f"next {k}"))
        else:
            messages.append(AssistantMessage(None, [ToolCall(f"call{k}", "lookup", {"q": "x"})]))
            messages.append(ToolMessage([f"result {k}", block], f"call{k}"))
            messages.append(UserMessage(f"after {k}"))
    return Conversation(messages, [TOOL]), placed


@given(steps)
def test_native_blocks_reach_their_own_provider_only(plan: list[Any]) -> None:
    conv, placed = history(plan)
    for provider_id in PROVIDER_IDS:
        adapter = thinkseal.provider(provider_id)
        own = any(block.provider == provider_id for block, _ in placed)
        try:
            body = adapter.prepare(conv, model="m", **OPTIONS[provider_id]).content.decode()
        except ValidationError as err:
            refused: ValidationError | None = err
        else:
            refused = None
        if refused is not None:
            # Only a block of this provider's own may be one it cannot place, and it says where.
            assert own, (provider_id, refused)
            assert refused.path
            continue
        for block, k in placed:
            if block.provider == provider_id:
                assert f"NAT{k}X" in body, (provider_id, k)
            else:
                assert f"NAT{k}X" not in body, (provider_id, block.provider, k)
                if block.text is not None:
                    assert block.text in body, (provider_id, k)
