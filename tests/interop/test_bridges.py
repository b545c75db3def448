"""The SDK bridges against the enforcing emulators over loopback HTTP, with the
official clients: a two-step tool loop with thinking, sync and async,
streamed and not. The second request must carry the first reply's sealed
thinking (the emulators reject a stale or missing seal), and, for the
Stainless clients, go out as ``req.content`` byte for byte."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import boto3  # type: ignore[import-untyped]
import botocore.client  # type: ignore[import-untyped]
import botocore.exceptions  # type: ignore[import-untyped]
import openai
import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Reply,
    ThinkingBlock,
    Tool,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.interop import anthropic as ts_anthropic
from thinkseal.interop import bedrock as ts_bedrock
from thinkseal.interop import openai as ts_openai
from thinkseal.testing import Emulator, Fault, Step
from thinkseal.testing.pytest_plugin import EmulatorFactory

MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "bedrock": "anthropic.claude-sonnet-4-5",
    "openai-responses": "o4-mini",
    "openrouter": "anthropic/claude-sonnet-4.5",
    "openai": "gpt-5",
}


def anthropic_client(emu: Emulator, use_async: bool) -> Any:
    cls = anthropic.AsyncAnthropic if use_async else anthropic.Anthropic
    return cls(base_url=emu.base_url, api_key="test", max_retries=0)


def openai_client(emu: Emulator, use_async: bool) -> Any:
    cls = openai.AsyncOpenAI if use_async else openai.OpenAI
    return cls(base_url=emu.base_url, api_key="org-a", max_retries=0)


def bedrock_client(emu: Emulator, use_async: bool) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=emu.base_url,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=botocore.client.Config(retries={"max_attempts": 1}),
    )


BRIDGES: dict[str, tuple[Any, Callable[[Emulator, bool], Any]]] = {
    "anthropic": (ts_anthropic, anthropic_client),
    "bedrock": (ts_bedrock, bedrock_client),
    "openai-responses": (ts_openai, openai_client),
    "openrouter": (ts_openai, openai_client),
}


@pytest.fixture
def emulator_of(thinkseal_emulator: EmulatorFactory) -> EmulatorFactory:
    """Started emulators, stopped at teardown (``thinkseal.testing``'s pytest fixture)."""
    return thinkseal_emulator


def call(
    bridge: Any,
    make: Callable[[], Any],
    req: thinkseal.PreparedRequest,
    *,
    use_async: bool,
    streamed: bool,
    **options: Any,
) -> tuple[Reply, list[Any]]:
    """The reply through ``bridge`` the chosen way, and the deltas it yielded
    (an async client belongs to one event loop: each run makes its own)."""
    client = make()
    if not use_async:
        if not streamed:
            return bridge.send(client, req, **options), []
        items = list(bridge.stream(client, req, **options))
        return items[-1], items[:-1]

    async def run() -> tuple[Reply, list[Any]]:
        if not streamed:
            return await bridge.send_async(client, req, **options), []
        stream: AsyncIterator[Any] = bridge.stream_async(client, req, **options)
        items = [item async for item in stream]
        return items[-1], items[:-1]

    return asyncio.run(run())


def sealed_thinking_sent(provider: str, first: AssistantMessage, body: dict[str, Any]) -> bool:
    """Whether ``body`` (the second request as the emulator received it) carries ``first``'s sealed thinking."""
    if provider == "anthropic":
        signed = [b for b in first.thinking if b.is_sealed]
        sent = [b for b in body["messages"][1]["content"] if b["type"] == "thinking"]
        return bool(signed) and [(b.text, b.signature) for b in signed] == [
            (s["thinking"], s["signature"]) for s in sent
        ]  # type: ignore[union-attr]
    if provider == "bedrock":
        signed = [b for b in first.thinking if b.is_sealed]
        sent = [
            b["reasoningContent"]["reasoningText"] for b in body["messages"][1]["content"] if "reasoningContent" in b
        ]
        return bool(signed) and [(b.text, b.signature) for b in signed] == [(s["text"], s["signature"]) for s in sent]  # type: ignore[union-attr]
    opaque = [json.loads(b.data) for b in first.thinking if isinstance(b, ThinkingBlock.Opaque)]
    if provider == "openai-responses":
        return bool(opaque) and [i for i in body["input"] if i.get("type") == "reasoning"] == opaque
    return bool(opaque) and body["messages"][1].get("reasoning_details") == opaque


@pytest.mark.parametrize("provider", sorted(BRIDGES))
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_tool_loop_with_thinking_replayed(
    emulator_of: Callable[[str], Emulator], provider: str, use_async: bool, streamed: bool
) -> None:
    bridge, make_client = BRIDGES[provider]
    emu = emulator_of(provider)
    emu.script(
        Step(thinking="I need the weather first.", calls=[("get_weather", {"city": "Paris"})]),
        Step(thinking="Report it.", text="Sunny, 18°C."),
    )
    adapter = thinkseal.provider(provider)
    model = MODELS[provider]
    conv = Conversation([UserMessage("Weather in Paris?")], tools=[Tool("get_weather")])

    req = adapter.prepare(conv, model=model, stream=streamed, **emu.thinking_options)
    first, deltas = call(bridge, lambda: make_client(emu, use_async), req, use_async=use_async, streamed=streamed)
    assert first.message.has_sealed_thinking
    assert first.message.thinking_binding is not None
    assert first.message.tool_calls[0].arguments == {"city": "Paris"}
    if streamed:
        assert any(isinstance(d, thinkseal.ToolCallDelta) for d in deltas)

    conv = conv.append(first.message, ToolMessage("18°C", first.message.tool_calls[0].id))
    req = adapter.prepare(conv, model=model, stream=streamed, **emu.thinking_options)
    assert req.report[0].kept
    second, _ = call(bridge, lambda: make_client(emu, use_async), req, use_async=use_async, streamed=streamed)
    assert second.message.content == "Sunny, 18°C."

    sent = emu.requests[1]
    assert sealed_thinking_sent(provider, first.message, sent.body)
    if provider == "bedrock":
        # boto3 encodes the request itself: the same JSON, not the same bytes.
        assert sent.body == json.loads(req.content)
    else:
        assert sent.raw == req.content
        assert all(sent.headers[k.lower()] == v for k, v in req.headers.items())


@pytest.mark.parametrize("provider", sorted(BRIDGES))
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_bridge_given_a_ledger_records_the_reply(
    emulator_of: Callable[[str], Emulator], provider: str, use_async: bool, streamed: bool
) -> None:
    """The history comes back without bindings (held elsewhere): the ledger
    the bridge recorded into recognises the sealed turn; without it the turn
    is unknown."""
    bridge, make_client = BRIDGES[provider]
    emu = emulator_of(provider)
    emu.script(Step(thinking="I need the weather first.", calls=[("get_weather", {"city": "Paris"})]))
    conv = Conversation([UserMessage("Weather in Paris?")], tools=[Tool("get_weather")])
    req = thinkseal.provider(provider).prepare(conv, model=MODELS[provider], stream=streamed, **emu.thinking_options)
    ledger = thinkseal.Ledger()
    reply, _ = call(
        bridge, lambda: make_client(emu, use_async), req, use_async=use_async, streamed=streamed, ledger=ledger
    )
    held = conv.append(reply.message._bound(None), ToolMessage("18°C", reply.message.tool_calls[0].id))
    assert [t.status for t in ledger.attach(held).turns] == ["recognised"]
    assert [t.status for t in thinkseal.Ledger().attach(held).turns] == ["unknown"]


def test_the_openai_chat_bridge_sends_plain_chat(emulator_of: Callable[[str], Emulator]) -> None:
    emu = emulator_of("openai")
    emu.script(Step(text="Hello."))
    req = thinkseal.provider("openai").prepare(Conversation([UserMessage("Hi")]), model="gpt-5")
    reply = ts_openai.send(openai_client(emu, False), req)
    assert reply.message.content == "Hello."
    assert emu.requests[0].raw == req.content
    assert emu.requests[0].path.endswith("/chat/completions")


def test_sdk_errors_pass_through(emulator_of: Callable[[str], Emulator]) -> None:
    conv = Conversation([UserMessage("Hi")])
    emu = emulator_of("anthropic")
    emu.fault(Fault.error(429))
    req = thinkseal.provider("anthropic").prepare(conv, model=MODELS["anthropic"], **emu.options)
    with pytest.raises(anthropic.RateLimitError):
        ts_anthropic.send(anthropic_client(emu, False), req)

    emu = emulator_of("openai-responses")
    emu.fault(Fault.error(500))
    req = thinkseal.provider("openai-responses").prepare(conv, model=MODELS["openai-responses"])
    with pytest.raises(openai.InternalServerError):
        ts_openai.send(openai_client(emu, False), req)

    emu = emulator_of("bedrock")
    emu.fault(Fault.error(400))
    req = thinkseal.provider("bedrock").prepare(conv, model=MODELS["bedrock"])
    with pytest.raises(botocore.exceptions.ClientError):
        ts_bedrock.send(bedrock_client(emu, False), req)


def test_streaming_a_request_not_prepared_to_stream_is_refused() -> None:
    conv = Conversation([UserMessage("Hi")])
    req = thinkseal.provider("anthropic").prepare(conv, model="m", max_tokens=10)
    with pytest.raises(ValidationError, match="stream=True"):
        ts_anthropic.stream(object(), req)
    with pytest.raises(ValidationError, match="stream=True"):
        ts_bedrock.stream(object(), thinkseal.provider("bedrock").prepare(conv, model="m"))
    with pytest.raises(ValidationError, match="bedrock adapter"):
        ts_bedrock.send(object(), req)
    with pytest.raises(ValidationError, match="PreparedRequest"):
        ts_openai.send(object(), {"messages": []})  # type: ignore[arg-type]


def test_an_sdk_without_raw_content_gets_the_body() -> None:
    """Older Stainless clients' ``post`` has no ``content``: the bridge passes the body instead."""
    reply_body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "Hi."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    seen: dict[str, Any] = {}

    class OldClient:
        def post(self, path: str, *, cast_to: Any, body: Any = None, options: Any = None) -> Any:
            seen.update(path=path, cast_to=cast_to, body=body, options=options)
            return reply_body

    req = thinkseal.provider("anthropic").prepare(Conversation([UserMessage("Hi")]), model="m", max_tokens=10)
    reply = ts_anthropic.send(OldClient(), req)
    assert reply.message.content == "Hi."
    assert seen["path"] == "/v1/messages"
    assert seen["body"] == json.loads(req.content)
    assert seen["options"] == {"headers": req.headers}
