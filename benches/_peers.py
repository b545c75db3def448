"""The peers thinkseal is measured against, side by side in one process:
pydantic-ai (``ModelMessagesTypeAdapter.validate_json`` + its Anthropic model's
message mapping + JSON bytes) and LiteLLM (its Anthropic prompt transformation +
JSON bytes). Both are optional bench dependencies (``pip install -e '.[bench]'``);
``available()`` says which are installed.

Every path starts from what a stateless worker receives (the stored
conversation as JSON text) and ends at the request body's bytes."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from collections.abc import Callable
from typing import Any

from thinkseal import AssistantMessage, Conversation, Origin, ThinkingBlock, ToolMessage, provider

ORIGIN = Origin("anthropic", "claude-sonnet-4-5")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import


def available() -> dict[str, bool]:
    return {name: importlib.util.find_spec(module) is not None for name, module in PEERS.items()}


PEERS = {"pydantic-ai": "pydantic_ai", "litellm": "litellm"}


def thinkseal_stateless(stored: str) -> Callable[[], bytes]:
    adapter = provider("anthropic")

    def run() -> bytes:
        conv = Conversation.from_json(stored)
        return adapter.prepare(conv, model=ORIGIN.model, max_tokens=1024).content

    return run


def pydantic_ai_stored(conv: Conversation) -> bytes:
    from pydantic_ai.messages import ModelMessagesTypeAdapter  # noqa: PLC0415 (optional bench dependency)

    from thinkseal.interop.pydantic_ai import export_messages  # noqa: PLC0415 (optional bench dependency)

    return ModelMessagesTypeAdapter.dump_json(export_messages(conv))


def pydantic_ai_stateless(stored: bytes) -> Callable[[], bytes]:
    """pydantic-ai's lean path: validate the stored messages, map them to
    Anthropic's message params, write the JSON bytes."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter  # noqa: PLC0415 (optional bench dependency)
    from pydantic_ai.models import ModelRequestParameters  # noqa: PLC0415 (optional bench dependency)
    from pydantic_ai.models.anthropic import AnthropicModel  # noqa: PLC0415 (optional bench dependency)
    from pydantic_ai.providers.anthropic import AnthropicProvider  # noqa: PLC0415 (optional bench dependency)

    model = AnthropicModel(ORIGIN.model, provider=AnthropicProvider(api_key="bench"))
    params = ModelRequestParameters()
    loop = asyncio.new_event_loop()

    def run() -> bytes:
        messages = ModelMessagesTypeAdapter.validate_json(stored)
        system, wire = loop.run_until_complete(model._map_message(messages, params, {}))
        body = {"model": ORIGIN.model, "max_tokens": 1024, "system": system, "messages": wire}
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str).encode()

    return run


def litellm_stored(conv: Conversation) -> str:
    """The history as LiteLLM keeps it: OpenAI chat messages, signed thinking in
    its ``thinking_blocks`` field."""
    out: list[dict[str, Any]] = []
    for m in conv:
        if isinstance(m, AssistantMessage):
            out.append(
                {
                    "role": "assistant",
                    "content": m.content_opt,
                    "thinking_blocks": [
                        {"type": "thinking", "thinking": b.text, "signature": b.signature}
                        for b in m.thinking
                        if isinstance(b, ThinkingBlock.Text)
                    ],
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments))},
                        }
                        for c in m.tool_calls
                    ],
                }
            )
        elif isinstance(m, ToolMessage):
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        else:
            out.append({"role": m.role, "content": getattr(m, "content", None)})
    return json.dumps(out, ensure_ascii=False)


def litellm_stateless(stored: str) -> Callable[[], bytes]:
    """LiteLLM's path: load the OpenAI-format history it stores, transform it to
    Anthropic's messages (its prompt factory, no network), write the JSON bytes."""
    from litellm.litellm_core_utils.prompt_templates.factory import anthropic_messages_pt  # noqa: PLC0415 (optional bench dependency)

    def run() -> bytes:
        messages: list[Any] = json.loads(stored)
        wire = anthropic_messages_pt([m for m in messages if m["role"] != "system"], ORIGIN.model, "anthropic")
        body = {"model": ORIGIN.model, "max_tokens": 1024, "messages": wire}
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str).encode()

    return run
