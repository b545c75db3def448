"""``on_replay_error``: what the client does when ``prepare`` raises
``ReplayError`` (Claude's tool loop continued with its leading thinking
unsealed): raise (the default, nothing sent), or take one of the ways out the
error names, recorded on the ``Reply``."""

from __future__ import annotations

import json
from typing import Any

import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    ReplayError,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.testing import Step

from .drive import Driver, answered
from .test_loop import LOOKUP, MODELS

CLAUDE = ("anthropic", "bedrock", "vertex-anthropic")


def _mid_loop(provider: str, emu: Any) -> Conversation:
    """A tool loop whose sealed turn can no longer go out sealed: the system
    prompt changed after the call, and only its tool result follows it."""
    emu.script(Step(thinking="Look it up.", calls=[("lookup", {"q": 1})]))
    start = Conversation([SystemMessage("Be brief."), thinkseal.UserMessage("q?")], tools=[LOOKUP])
    reply = Driver(False, False).call(
        provider, emu.base_url, start, MODELS[provider], options={**emu.options, **emu.thinking_options}
    )
    loop = answered(start, reply)
    return loop.with_messages([SystemMessage("Be very brief."), *loop[1:]])


@pytest.mark.parametrize("provider", CLAUDE)
def test_the_default_raises_and_sends_nothing(provider: str, emulator_of: Any) -> None:
    emu = emulator_of(provider)
    edited = _mid_loop(provider, emu)
    sent = len(emu.requests)
    with pytest.raises(ReplayError) as caught:
        Driver(False, False).call(
            provider, emu.base_url, edited, MODELS[provider], options={**emu.options, **emu.thinking_options}
        )
    assert caught.value.index == 2
    assert len(emu.requests) == sent


@pytest.mark.parametrize("provider", CLAUDE)
@pytest.mark.parametrize("way", ["drop_block", "disable_thinking"])
def test_a_way_out_is_taken_and_recorded(provider: str, way: str, driver: Driver, emulator_of: Any) -> None:
    emu = emulator_of(provider)
    edited = _mid_loop(provider, emu)
    emu.script(Step(thinking="Done thinking.", text="q is 1."))
    options = {**emu.options, **emu.thinking_options}
    reply = driver.call(provider, emu.base_url, edited, MODELS[provider], options=options, on_replay_error=way)
    assert reply.message.content == "q is 1."
    (recovery,) = reply.recoveries
    assert recovery.kind == "replay-error"
    assert recovery.way == way
    assert isinstance(recovery.error, ReplayError)
    body = emu.requests[-1].body
    thinking = body["additionalModelRequestFields"]["thinking"] if provider == "bedrock" else body["thinking"]
    if way == "drop_block":
        assert thinking["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
    else:
        assert thinking == {"type": "disabled"}
    assert "thinking" not in options or "block_binding" not in options["thinking"]  # the caller's options untouched


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ValidationError, match="on_replay_error"):
        thinkseal.Client("anthropic", api_key="k", on_replay_error="ignore")  # type: ignore[arg-type]


def test_adapters_without_replay_errors_have_no_way_out() -> None:
    with pytest.raises(ValidationError, match="nothing to resolve"):
        thinkseal.provider("openai").resolve_replay_error({}, "drop_block")


def test_a_way_the_adapter_does_not_offer_leaves_the_replay_error() -> None:
    """Responses raises ``ReplayError`` for a ``previous_response_id`` whose turn
    no longer holds, and offers no way out: the client asks the adapter
    (``replay_error_ways``) and raises the error itself, not a complaint that
    there is nothing to resolve."""
    item = json.dumps({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"})
    turn = AssistantMessage(
        tool_calls=[ToolCall("call_1", "f", {})], thinking=[ThinkingBlock.Opaque("openai-responses", item)]
    )
    conv = Conversation([UserMessage("q?"), turn, ToolMessage("1", "call_1")])
    assert thinkseal.provider("openai-responses").replay_error_ways == ()
    with (
        thinkseal.Client(
            "openai-responses", api_key="k", base_url="http://127.0.0.1:9", on_replay_error="drop_block", max_retries=0
        ) as client,
        pytest.raises(ReplayError) as caught,
    ):
        client.send(conv, model="o3", previous_response_id="resp_1")
    assert (caught.value.index, caught.value.reason) == (1, "unbound")
