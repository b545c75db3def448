"""Workloads shared by the benchmarks: 1.6 KB messages, and a pure-Python
chain (orjson + the blake3 package) as the baseline thinkseal is measured against."""

from __future__ import annotations

import pickle
from typing import Any

import blake3
import orjson

from thinkseal import AssistantMessage, Conversation, Message, ThinkingBlock, ToolCall, ToolMessage, UserMessage
from thinkseal.testing import respond

PAD = "lorem ipsum dolor sit amet " * 20  # 540 characters


def message(i: int) -> Message:
    """About 1.6 KB of content per message, cycling through the shapes of an agent loop."""
    kind = i % 3
    if kind == 0:
        return UserMessage(f"request {i}: {PAD * 3}")
    if kind == 1:
        return AssistantMessage(
            f"answer {i}: {PAD}",
            [ToolCall(f"call_{i}", "search", {"query": PAD[:200], "page": i})],
            [ThinkingBlock.Text(PAD + PAD[:200], "sig" * 40)],
        )
    return ToolMessage(f"result {i}: {PAD * 3}", f"call_{i - 1}")


def history(n: int) -> list[Message]:
    return [message(i) for i in range(n)]


def bound_history(n: int, origin: Any) -> list[Message]:
    """``history(n)`` with every assistant turn bound as its provider would bind it."""
    conv = Conversation()
    for m in history(n):
        conv = respond(conv, origin, m) if isinstance(m, AssistantMessage) else conv.append(m)
    return list(conv)


def as_dict(m: Message) -> dict[str, Any]:
    """What a pure-Python implementation would serialise per message."""
    if isinstance(m, AssistantMessage):
        return {
            "role": "assistant",
            "content": m.content_opt,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": dict(c.arguments)} for c in m.tool_calls],
            "thinking": [
                {"text": b.text, "signature": b.signature} for b in m.thinking if isinstance(b, ThinkingBlock.Text)
            ],
        }
    if isinstance(m, ToolMessage):
        return {"role": "tool", "content": m.content, "tool_call_id": m.tool_call_id, "is_error": m.is_error}
    return {"role": m.role, "content": m.content}  # type: ignore[attr-defined]


MESSAGE_KEY = blake3.blake3(b"", derive_key_context="baseline message").digest()
CHAIN_KEY = blake3.blake3(b"", derive_key_context="baseline chain").digest()


def python_chain(messages: list[Message]) -> bytes:
    """Baseline: orjson (sorted keys) + blake3 per message, then one keyed hash per prefix."""
    chain = bytes(32)
    for m in messages:
        digest = blake3.blake3(orjson.dumps(as_dict(m), option=orjson.OPT_SORT_KEYS), key=MESSAGE_KEY).digest()
        chain = blake3.blake3(chain + digest, key=CHAIN_KEY).digest()
    return chain


def fresh_copies(messages: list[Message]) -> list[Message]:
    """New objects with no cached digest (the cold case)."""
    copies: list[Message] = pickle.loads(pickle.dumps(messages))
    return copies
