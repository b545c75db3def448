"""The peers thinkseal is measured against, side by side in one process:
pydantic-ai (``ModelMessagesTypeAdapter.validate_json`` + its Anthropic model's
message mapping + JSON bytes) and LiteLLM (its Anthropic prompt transformation +
JSON bytes). Both are optional bench dependencies (``pip install -e '.[bench]'``);
``available()`` says which are installed.

Every path starts from what a stateless worker receives (the stored
conversation as JSON text) and ends at the request body's bytes; the *full*
paths go on through each library's own client (thinkseal's ``Client``,
pydantic-ai's ``AnthropicModel.request`` over the ``anthropic`` SDK) to an
in-process HTTP transport that reads the whole body and answers with one short
Anthropic message, which the library then reads."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from collections.abc import Callable
from typing import Any

from thinkseal import AssistantMessage, Client, Conversation, Origin, ThinkingBlock, ToolMessage, provider

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


# What the transport answers: one short message, the same for every library.
REPLY = {
    "id": "msg_bench",
    "type": "message",
    "role": "assistant",
    "model": ORIGIN.model,
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
JSON = {"content-type": "application/json"}


class Received:
    """The bodies the in-process transport was sent (their sizes), so a bench
    can check that the request it timed carried the whole history."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def answer(self, content: bytes) -> bytes:
        self.sizes.append(len(content))
        return json.dumps(REPLY).encode()


def thinkseal_full(stored: str, received: Received) -> Callable[[], Any]:
    """thinkseal's full request path: ``from_json``, then ``Client.send``."""
    import httpx  # noqa: PLC0415 (the client's own dependency, imported when a client is made)

    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=received.answer(request.read()), headers=JSON)

    client = Client("anthropic", api_key="bench", http_client=httpx.Client(transport=httpx.MockTransport(handle)))

    def run() -> Any:
        return client.send(Conversation.from_json(stored), model=ORIGIN.model, max_tokens=1024)

    return run


def pydantic_ai_full(stored: bytes, received: Received) -> Callable[[], Any]:
    """pydantic-ai's full request path: ``validate_json``, then
    ``AnthropicModel.request`` (its mapping, the ``anthropic`` SDK's request)."""
    import httpx2  # noqa: PLC0415 (optional bench dependency: pydantic-ai's HTTP client)
    from pydantic_ai.messages import ModelMessagesTypeAdapter  # noqa: PLC0415 (optional bench dependency)
    from pydantic_ai.models import ModelRequestParameters  # noqa: PLC0415 (optional bench dependency)
    from pydantic_ai.models.anthropic import AnthropicModel  # noqa: PLC0415 (optional bench dependency)
    from pydantic_ai.providers.anthropic import AnthropicProvider  # noqa: PLC0415 (optional bench dependency)

    def handle(request: Any) -> Any:
        return httpx2.Response(200, content=received.answer(request.read()), headers=JSON)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handle))
    model = AnthropicModel(ORIGIN.model, provider=AnthropicProvider(api_key="bench", http_client=http))
    params = ModelRequestParameters()
    loop = asyncio.new_event_loop()

    def run() -> Any:
        messages = ModelMessagesTypeAdapter.validate_json(stored)
        return loop.run_until_complete(model.request(messages, {"max_tokens": 1024}, params))

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
