"""The client against an emulator answering badly: provider errors (retried
or not, read out of each provider's own error body), malformed, truncated,
slow and hanging answers. Each ends in a clear thinkseal error or a timeout,
never a hang, and never a partial message returned as if complete."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, ProviderError, ResponseError, UserMessage
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import Fault, Step

from .drive import Driver
from .test_loop import MODELS

HELLO = Conversation([UserMessage("Hello")])


def _call(driver: Driver, provider: str, emu: Any, **kw: Any) -> thinkseal.Reply:
    return driver.call(provider, emu.base_url, HELLO, MODELS[provider], options=dict(emu.options), **kw)


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_an_error_body_is_read_into_provider_error(provider: str, emulator_of: Any) -> None:
    emu = emulator_of(provider)
    emu.fault(Fault.error(400))
    with pytest.raises(ProviderError) as caught:
        _call(Driver(False, False), provider, emu)
    error = caught.value
    assert error.status == 400
    assert error.provider == provider
    assert error.message
    assert not error.message.lstrip().startswith("{")  # the message, not the raw JSON
    assert len(emu.requests) == 1  # a 400 is not retried


@pytest.mark.parametrize("provider", PROVIDER_IDS)
@pytest.mark.parametrize("status", [429, 500, 503])
def test_rate_limits_and_server_errors_are_retried(provider: str, status: int, emulator_of: Any) -> None:
    emu = emulator_of(provider)
    emu.fault(Fault.error(status, retry_after=0, times=2))
    reply = _call(Driver(False, False), provider, emu, max_retries=2)
    assert reply.message.content
    assert len(emu.requests) == 3


def test_retries_run_out_with_the_last_error(emulator_of: Any) -> None:
    emu = emulator_of("anthropic")
    emu.fault(Fault.error(529, retry_after=0, times=3))
    with pytest.raises(ProviderError) as caught:
        _call(Driver(False, False), "anthropic", emu, max_retries=2)
    assert caught.value.status == 529
    assert caught.value.type == "overloaded_error"
    assert caught.value.retry_after == 0
    assert len(emu.requests) == 3


def test_retry_after_is_honoured(emulator_of: Any) -> None:
    emu = emulator_of("openai")
    emu.fault(Fault.error(429, retry_after=0.4))
    started = time.monotonic()
    _call(Driver(False, False), "openai", emu)
    assert time.monotonic() - started >= 0.4  # waited at least as asked (a lower bound, not a timing budget)


@pytest.mark.parametrize("driver", [Driver(a, s) for a in (False, True) for s in (False, True)], ids=str)
def test_malformed_json_is_a_response_error(driver: Driver, emulator_of: Any) -> None:
    emu = emulator_of("anthropic")
    emu.fault(Fault.malformed())
    with pytest.raises(ResponseError, match="JSON"):
        _call(driver, "anthropic", emu)
    assert len(emu.requests) == 1  # not retried: the provider answered


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_a_truncated_body_is_retried_then_reported(provider: str, emulator_of: Any) -> None:
    emu = emulator_of(provider)
    emu.fault(Fault.truncated())
    assert _call(Driver(False, False), provider, emu, max_retries=1).message.content
    emu.fault(Fault.truncated())
    with pytest.raises(ProviderError) as caught:
        _call(Driver(False, False), provider, emu, max_retries=0)
    assert caught.value.type == "connection_error"
    assert caught.value.status is None


@pytest.mark.parametrize("provider", PROVIDER_IDS)
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_cut_stream_gives_no_reply(provider: str, asynchronous: bool, emulator_of: Any) -> None:
    emu = emulator_of(provider)
    emu.script(Step(thinking="Long thought.", text="A long answer that is cut off."))
    emu.fault(Fault.truncated())
    with pytest.raises((ResponseError, ProviderError)):
        _call(Driver(asynchronous, True), provider, emu, max_retries=0)


def test_a_cut_stream_yields_deltas_but_never_the_reply(emulator_of: Any) -> None:
    emu = emulator_of("anthropic")
    emu.script(Step(text="A long answer that is cut off."))
    emu.fault(Fault.truncated())
    items: list[Any] = []
    with thinkseal.Client("anthropic", base_url=emu.base_url, api_key="k", max_retries=0) as client:
        stream = client.stream(HELLO, model=MODELS["anthropic"], **emu.options)
        with pytest.raises((ResponseError, ProviderError)):
            items.extend(stream)
    assert items  # deltas arrived before the cut
    assert not any(isinstance(item, thinkseal.Reply) for item in items)
    assert stream.reply is None


def test_slow_answers_arrive_within_the_timeout(emulator_of: Any) -> None:
    emu = emulator_of("gemini")
    emu.fault(Fault.slow(0.3))
    assert _call(Driver(False, False), "gemini", emu, timeout=5).message.content


@pytest.mark.parametrize("driver", [Driver(a, s) for a in (False, True) for s in (False, True)], ids=str)
def test_a_hanging_provider_times_out(driver: Driver, emulator_of: Any) -> None:
    emu = emulator_of("openai-responses")
    emu.fault(Fault.hang())
    with pytest.raises(ProviderError) as caught:
        _call(driver, "openai-responses", emu, timeout=0.5, max_retries=0)
    assert caught.value.type == "timeout"


def test_async_streams_can_be_closed_early(emulator_of: Any) -> None:
    emu = emulator_of("anthropic")
    emu.script(Step(text="one two three four five six"))

    async def first_delta() -> Any:
        async with (
            thinkseal.AsyncClient("anthropic", base_url=emu.base_url, api_key="k") as client,
            client.stream(HELLO, model=MODELS["anthropic"], **emu.options) as stream,
        ):
            async for item in stream:
                return item
        return None

    assert isinstance(asyncio.run(first_delta()), thinkseal.TextDelta)
