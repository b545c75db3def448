"""A tool loop with each provider's own sealed thinking (``tests/providers/sealed.py``),
every turn bound as that provider's reply would be, and the body a client
holding it sends: the histories the read-cache tests re-send step by step."""

from __future__ import annotations

import json
from typing import Any

import thinkseal
from thinkseal import AssistantMessage, Conversation, Origin, SystemMessage, Tool, ToolCall, ToolMessage, UserMessage
from thinkseal.testing import respond

from ..providers.sealed import SEALED


def sealed_loop(provider_id: str, model: str, steps: int, text: str | None = None) -> Conversation:
    """``steps`` signed tool calls and their results (each turn saying ``text``, with the step, if given)."""
    origin = Origin(provider_id, model)
    conv = Conversation([SystemMessage("Use the tool."), UserMessage("Go.")], [Tool("lookup")])
    for k in range(steps):
        thinking, _ = SEALED[provider_id](k)
        said = None if text is None else f"{text} {k}"
        turn = AssistantMessage(said, [ToolCall(f"call_{k}", "lookup", {"q": k})], thinking)
        conv = respond(conv, origin, turn).append(ToolMessage(str(k), f"call_{k}"))
    return conv


def sent(conv: Conversation, provider_id: str, model: str, **options: Any) -> dict[str, Any]:
    """The request body thinkseal's adapter writes for ``conv``, decoded."""
    req = thinkseal.provider(provider_id).prepare(conv, model=model, **options)
    return json.loads(req.content)  # type: ignore[no-any-return]
