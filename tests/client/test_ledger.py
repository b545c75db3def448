"""``Client(..., ledger=...)`` and ``AsyncClient``: every reply the client
returns is recorded, so the history can leave thinkseal (stripped of its
bindings, as another program holds it) and come back: attached, the tool
loop goes on with its seals replayed, against every sealing provider's
enforcing emulator, sync and async, sent and streamed."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation
from thinkseal.ledger import AsyncLedger, Ledger
from thinkseal.testing import Step

from .drive import Driver, answered, secrets
from .test_loop import MODELS, SEALING, _start


def stripped(conv: Conversation) -> Conversation:
    messages = [m._bound(None) if isinstance(m, AssistantMessage) else m for m in conv]
    return Conversation(messages, conv.tools, conv.response_format)


@pytest.mark.parametrize("provider", SEALING)
def test_a_history_that_left_and_came_back_is_replayed_sealed(provider: str, driver: Driver, emulator_of: Any) -> None:
    emu = emulator_of(provider)
    emu.script(
        Step(thinking="First I look up 1.", calls=[("lookup", {"q": 1})]),
        Step(thinking="Now I know.", text="q is 1."),
    )
    options = {**emu.options, **emu.thinking_options}
    ledger = Ledger()
    first = driver.call(provider, emu.base_url, _start(), MODELS[provider], options=options, ledger=ledger)
    sealed = secrets(first)
    assert sealed
    # The history goes out of thinkseal and back: no bindings any more.
    held = stripped(answered(_start(), first))
    attached = ledger.attach(held)
    assert [t.status for t in attached.turns] == ["recognised"]
    second = driver.call(provider, emu.base_url, attached.conversation, MODELS[provider], options=options)
    assert second.message.content == "q is 1."
    assert second.recoveries == ()
    request = emu.requests[-1].raw.decode()
    assert all(secret in request for secret in sealed), "the recognised turn went out sealed"


@pytest.mark.parametrize("provider", ["anthropic", "bedrock", "gemini", "openai-responses"])
def test_without_the_ledger_the_same_history_goes_out_unsealed(provider: str, emulator_of: Any) -> None:
    """The control: what came back with no binding is not replayed sealed."""
    emu = emulator_of(provider)
    emu.script(Step(thinking="First I look up 1.", calls=[("lookup", {"q": 1})]), Step(text="q is 1."))
    options = {**emu.options, **emu.thinking_options}
    driver = Driver(asynchronous=False, streamed=False)
    first = driver.call(provider, emu.base_url, _start(), MODELS[provider], options=options)
    held = stripped(answered(_start(), first))
    req = thinkseal.provider(provider).prepare(held, model=MODELS[provider], **emu.options)
    assert [e.reason for e in req.report] == ["unbound"]
    assert not any(secret in req.content.decode() for secret in secrets(first))


def test_an_async_client_records_into_an_async_ledger(emulator_of: Any, tmp_path: Any) -> None:
    emu = emulator_of("anthropic")
    emu.script(Step(thinking="Look it up.", calls=[("lookup", {"q": 1})]))
    options = {**emu.options, **emu.thinking_options}

    async def main() -> None:
        ledger = AsyncLedger.sqlite(str(tmp_path / "ledger.db"))
        async with thinkseal.AsyncClient("anthropic", base_url=emu.base_url, api_key="k", ledger=ledger) as client:
            reply = await client.send(_start(), model=MODELS["anthropic"], **options)
        attached = await ledger.attach(stripped(reply.conversation))
        assert attached.recognised == 1
        await ledger.close()

    asyncio.run(main())


def test_a_ledger_that_cannot_be_written_is_logged_and_the_reply_returned(
    emulator_of: Any, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    emu = emulator_of("anthropic")
    emu.script(Step(thinking="Look it up.", text="Done."))
    ledger = Ledger.sqlite(str(tmp_path / "ledger.db"))
    ledger.close()  # every write now fails
    with (
        caplog.at_level(logging.WARNING, logger="thinkseal.ledger"),
        thinkseal.Client("anthropic", base_url=emu.base_url, api_key="k", ledger=ledger) as client,
    ):
        reply = client.send(_start(), model=MODELS["anthropic"], **{**emu.options, **emu.thinking_options})
    assert reply.message.content == "Done."
    assert "could not be recorded" in caplog.text


def test_a_ledger_of_the_wrong_kind_is_refused() -> None:
    with pytest.raises(thinkseal.ValidationError, match="ledger"):
        thinkseal.Client("anthropic", api_key="k", ledger=AsyncLedger())  # type: ignore[arg-type]
    with pytest.raises(thinkseal.ValidationError, match="ledger"):
        thinkseal.AsyncClient("anthropic", api_key="k", ledger={})  # type: ignore[arg-type]
