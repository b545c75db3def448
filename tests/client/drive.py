"""Driving ``thinkseal.Client`` and ``AsyncClient`` the same way in tests:
``Driver`` sends or streams, sync or async, and returns the ``Reply``; and
what the tests read off replies."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any

import httpx

import thinkseal
from thinkseal import Conversation, Reply, ToolMessage


@dataclass(frozen=True)
class Driver:
    """One way of calling a client: ``asynchronous`` and/or ``streamed``."""

    asynchronous: bool
    streamed: bool

    def __str__(self) -> str:
        return ("async" if self.asynchronous else "sync") + ("-stream" if self.streamed else "-send")

    def call(self, provider: str, base_url: str, conversation: Conversation, model: str, **kw: Any) -> Reply:
        """The reply; ``options`` are the request's, ``http`` the options of an
        httpx client made for the call (``follow_redirects=True``, ...), the
        rest the client's arguments (``api_key="test-key"`` unless given)."""
        options = kw.pop("options", {})
        http = kw.pop("http", None)
        kw = {"api_key": "test-key", **kw}
        if self.asynchronous:
            return asyncio.run(self._call_async(provider, base_url, conversation, model, options, http, kw))
        with contextlib.ExitStack() as stack:
            if http is not None:
                kw["http_client"] = stack.enter_context(httpx.Client(**http))
            client = stack.enter_context(thinkseal.Client(provider, base_url=base_url, **kw))
            if not self.streamed:
                return client.send(conversation, model=model, **options)
            items = list(client.stream(conversation, model=model, **options))
            return _last_reply(items)

    async def _call_async(
        self, provider: str, base_url: str, conversation: Conversation, model: str, options: Any, http: Any, kw: Any
    ) -> Reply:
        async with contextlib.AsyncExitStack() as stack:
            if http is not None:
                kw["http_client"] = await stack.enter_async_context(httpx.AsyncClient(**http))
            client = await stack.enter_async_context(thinkseal.AsyncClient(provider, base_url=base_url, **kw))
            if not self.streamed:
                return await client.send(conversation, model=model, **options)
            items = [item async for item in client.stream(conversation, model=model, **options)]
            return _last_reply(items)


def _last_reply(items: list[Any]) -> Reply:
    """The stream's last item, which must be its only ``Reply``; every other item a delta."""
    assert items, "the stream yielded nothing"
    *deltas, reply = items
    assert isinstance(reply, Reply)
    assert all(isinstance(d, thinkseal.TextDelta | thinkseal.ThinkingDelta | thinkseal.ToolCallDelta) for d in deltas)
    return reply


DRIVERS = [Driver(a, s) for a in (False, True) for s in (False, True)]


def answered(conversation: Conversation, reply: Reply, result: str = "sunny") -> Conversation:
    """``reply.conversation`` with a tool result for each of the reply's calls."""
    conversation = reply.conversation
    for call in reply.message.tool_calls:
        conversation = conversation.append(ToolMessage(f"{result} ({call.name})", call.id))
    return conversation


def secrets(reply: Reply) -> list[str]:
    """The sealed data of a reply's thinking, as it appears in a request body:
    signatures, redacted data, and the long strings inside opaque items."""
    found: list[str] = []
    for block in reply.message.thinking:
        if isinstance(block, thinkseal.ThinkingBlock.Text) and block.signature:
            found.append(block.signature)
        elif isinstance(block, thinkseal.ThinkingBlock.Redacted):
            found.append(block.data)
        elif isinstance(block, thinkseal.ThinkingBlock.Opaque):
            stack = [json.loads(block.data)]
            while stack:
                item = stack.pop()
                if isinstance(item, str) and len(item) >= 8 and not item.startswith(("reasoning", "rs_", "fc_")):
                    found.append(item)
                elif isinstance(item, dict):
                    stack.extend(item.values())
                elif isinstance(item, list):
                    stack.extend(item)
    return found
