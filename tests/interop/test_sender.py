"""The part every framework adapter shares (``interop._sender.Sender``): a
converted history is attached, sent through thinkseal's client and the reply
recorded, with a client it made or one it was given, sync and async."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation, SystemMessage, Tool, ToolMessage, UserMessage
from thinkseal.interop._sender import Sender
from thinkseal.ledger import AsyncLedger, Ledger
from thinkseal.testing import Step, emulate

MODEL = "claude-sonnet-4-5"
LOOKUP = Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "integer"}}})


def stripped(conv: Conversation) -> Conversation:
    return Conversation([m._bound(None) if isinstance(m, AssistantMessage) else m for m in conv], conv.tools)


def start() -> Conversation:
    return Conversation([SystemMessage("Be brief."), UserMessage("What is q?")], tools=[LOOKUP])


@pytest.mark.parametrize("given_client", [False, True])
def test_a_stripped_history_goes_on_sealed(given_client: bool) -> None:
    with emulate("anthropic") as emu:
        emu.script(Step(thinking="Look up q.", calls=[("lookup", {"q": 1})]), Step(thinking="So.", text="q is 1."))
        options = {**emu.options, **emu.thinking_options}
        ledger = Ledger()
        client = thinkseal.Client("anthropic", base_url=emu.base_url, api_key="k") if given_client else None
        sender = Sender("anthropic", MODEL, ledger=ledger, client=client, base_url=emu.base_url, api_key="k")
        first = sender.send(start(), options)
        held = stripped(first.conversation.append(ToolMessage("1", first.message.tool_calls[0].id)))
        assert ledger.attach(held).recognised == 1  # recorded, by the client made here or by the sender
        second = sender.send(held, options)
        assert second.message.content == "q is 1."
        assert len(emu.requests) == 2  # accepted as first sent: the seal went back
        sender.close()
        if client is not None:
            client.close()


def test_without_a_ledger_the_stripped_history_is_refused_before_sending() -> None:
    """The control: Claude's tool loop cannot go on without its thinking."""
    with emulate("anthropic") as emu:
        emu.script(Step(thinking="Look up q.", calls=[("lookup", {"q": 1})]))
        options = {**emu.options, **emu.thinking_options}
        sender = Sender("anthropic", MODEL, base_url=emu.base_url, api_key="k")
        first = sender.send(start(), options)
        held = stripped(first.conversation.append(ToolMessage("1", first.message.tool_calls[0].id)))
        with pytest.raises(thinkseal.ReplayError):
            sender.send(held, options)
        sender.close()


def test_streams_and_async_sends_attach_and_record(tmp_path: Any) -> None:
    with emulate("anthropic") as emu:
        emu.script(
            Step(thinking="Look up q.", calls=[("lookup", {"q": 1})]),
            Step(thinking="So.", text="q is 1."),
            Step(thinking="Again.", calls=[("lookup", {"q": 2})]),
            Step(thinking="So.", text="q is 2."),
        )
        options = {**emu.options, **emu.thinking_options}
        sender = Sender("anthropic", MODEL, ledger=Ledger(), base_url=emu.base_url, api_key="k")
        *_, first = list(sender.stream(start(), options))
        assert isinstance(first, thinkseal.Reply)
        held = stripped(first.conversation.append(ToolMessage("1", first.message.tool_calls[0].id)))
        *_, second = list(sender.stream(held, options))
        assert second.message.content == "q is 1."  # type: ignore[union-attr]
        sender.close()

        async def main() -> None:
            for ledger in (Ledger(), AsyncLedger.sqlite(str(tmp_path / "l.db"))):
                async_sender = Sender("anthropic", MODEL, ledger=ledger, base_url=emu.base_url, api_key="k")
                items = [item async for item in async_sender.stream_async(start(), options)]
                reply = items[-1]
                assert isinstance(reply, thinkseal.Reply)
                held = stripped(reply.conversation.append(ToolMessage("2", reply.message.tool_calls[0].id)))
                answer = await async_sender.send_async(held, options)
                assert answer.message.content == "q is 2."
                await async_sender.aclose()
                emu.script(Step(thinking="Again.", calls=[("lookup", {"q": 2})]), Step(thinking="So.", text="q is 2."))

        asyncio.run(main())


def test_bad_arguments() -> None:
    with pytest.raises(thinkseal.ValidationError, match="unknown id"):
        Sender("nope", MODEL)
    with pytest.raises(thinkseal.ValidationError, match="model"):
        Sender("anthropic", "")
    with pytest.raises(thinkseal.ValidationError, match="ledger"):
        Sender("anthropic", MODEL, ledger={})  # type: ignore[arg-type]
    with pytest.raises(thinkseal.ValidationError, match="AsyncLedger"):
        Sender("anthropic", MODEL, ledger=AsyncLedger(), api_key="k").send(start(), {})


def test_each_event_loop_gets_its_own_async_client() -> None:
    """A framework may run each call in a new event loop (``run_sync``,
    ``asyncio.run``): an httpx async client made in one cannot serve another, so
    the sender makes one per loop, and ``aclose`` closes the running loop's."""
    with emulate("anthropic") as emu:
        emu.script(Step(text="One."), Step(text="Two."))
        sender = Sender("anthropic", MODEL, base_url=emu.base_url, api_key="k")
        made = []

        async def call(prompt: str) -> str:
            reply = await sender.send_async(Conversation([UserMessage(prompt)]), emu.options)
            made.append(sender.async_client)
            return reply.message.content

        assert asyncio.run(call("1")) == "One."
        assert asyncio.run(call("2")) == "Two."  # a second loop: its own client
        assert made[0] is not made[1]

        async def same_loop() -> bool:
            first = sender.async_client
            await sender.aclose()
            return first is not sender.async_client  # closed and forgotten: a new one next time

        assert asyncio.run(same_loop())


def test_a_given_client_of_either_kind_is_used_and_anything_else_refused() -> None:
    with emulate("anthropic") as emu:
        emu.script(Step(text="Sync."), Step(text="Async."))
        given_sync = thinkseal.Client("anthropic", base_url=emu.base_url, api_key="k")
        given_async = thinkseal.AsyncClient("anthropic", base_url=emu.base_url, api_key="k")
        conv = Conversation([UserMessage("Hi")])
        sync_sender = Sender("anthropic", MODEL, client=given_sync)
        assert sync_sender.client is given_sync
        assert sync_sender.send(conv, emu.options).message.content == "Sync."

        async def via_async() -> str:
            sender = Sender("anthropic", MODEL, client=given_async)
            assert sender.async_client is given_async
            reply = await sender.send_async(conv, emu.options)
            await given_async.aclose()
            return reply.message.content

        assert asyncio.run(via_async()) == "Async."
        given_sync.close()
    with pytest.raises(thinkseal.ValidationError) as info:
        Sender("anthropic", MODEL, client=object())  # type: ignore[arg-type]
    assert info.value.path == "client"


def test_a_given_sync_client_serves_the_asyncio_calls_too() -> None:
    # pydantic-ai and LangChain's async calls with only a sync client given used to make an
    # AsyncClient of their own, without the given client's base URL and key.
    with emulate("anthropic") as emu:
        emu.script(Step(text="Sent."), Step(text="Streamed."))
        given = thinkseal.Client("anthropic", base_url=emu.base_url, api_key="k")
        sender = Sender("anthropic", MODEL, client=given)
        conv = Conversation([UserMessage("Hi")])

        async def both() -> tuple[str, str]:
            sent = await sender.send_async(conv, emu.options)
            streamed = [item async for item in sender.stream_async(conv, emu.options)]
            assert not sender._per_loop  # no async client was made
            last = streamed[-1]
            assert isinstance(last, thinkseal.Reply)
            return sent.message.content, last.message.content

        assert asyncio.run(both()) == ("Sent.", "Streamed.")
        assert len(emu.requests) == 2
        given.close()
