"""The client against every provider's enforcing emulator, over real loopback
HTTP, sync and async, streamed and not: a three-step tool loop with reasoning
replayed; then history pruned, the system prompt changed and the model
switched, each still accepted because the library unseals; as a control, the
stale seal sent anyway (the caller wrongly vouching with ``rebind``) is
rejected with the provider's own error; and a signature rejection forced by
rotating the emulator's keys is recovered by one retry."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, Origin, ProviderError, SystemMessage, Tool, UserMessage
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import EMULATOR_IDS, Step

from .drive import Driver, answered, secrets

MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "vertex-anthropic": "claude-sonnet-4-5",
    "bedrock": "anthropic.claude-sonnet-4-5-20250929-v1:0",
    "openrouter": "anthropic/claude-sonnet-4.5",
    "deepseek": "deepseek-reasoner",
    "zai": "glm-4.6",
    "ollama": "qwen3",
    "mistral": "magistral-medium-latest",
    "gemini": "gemini-2.5-pro",
    "vertex-gemini": "gemini-2.5-pro",
    "gemini-openai": "gemini-3-pro-preview",
    "openai": "gpt-5",
    "openai-responses": "gpt-5",
}
OTHER_MODEL = {
    provider: model.replace("sonnet", "opus").replace("pro", "flash").replace("gpt-5", "gpt-5-mini")
    for provider, model in MODELS.items()
}
# Providers whose replies carry sealed data (signatures, encrypted or opaque items).
SEALING = (
    "anthropic",
    "vertex-anthropic",
    "bedrock",
    "openrouter",
    "mistral",
    "gemini",
    "vertex-gemini",
    "gemini-openai",
    "openai-responses",
)
# Of those, the ones whose rejection of stale thinking is documented (Connection.rejections).
RECOVERABLE = tuple(p for p in SEALING if thinkseal.provider(p).connection.rejections)
LOOKUP = Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "integer"}}})


def test_every_provider_has_an_emulator_and_a_model() -> None:
    assert set(EMULATOR_IDS) == set(PROVIDER_IDS) == set(MODELS)
    assert set(RECOVERABLE) == {"anthropic", "vertex-anthropic", "bedrock", "openrouter", "gemini"} | {
        "vertex-gemini",
        "gemini-openai",
        "openai-responses",
    }


def _start() -> Conversation:
    return Conversation([SystemMessage("Be brief."), UserMessage("What is q?")], tools=[LOOKUP])


def _loop(provider: str, emu: Any, driver: Driver) -> tuple[Conversation, list[thinkseal.Reply]]:
    """Three steps: two tool calls with thinking, then the answer."""
    emu.script(
        Step(thinking="First I look up 1.", calls=[("lookup", {"q": 1})]),
        Step(thinking="Then 2.", calls=[("lookup", {"q": 2})]),
        Step(thinking="Now I know.", text="q is 3."),
    )
    conversation, replies = _start(), []
    options = {**emu.options, **emu.thinking_options}
    for _ in range(3):
        reply = driver.call(provider, emu.base_url, conversation, MODELS[provider], options=options)
        replies.append(reply)
        conversation = answered(conversation, reply)
    return conversation, replies


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_three_step_tool_loop_replays_thinking(provider: str, driver: Driver, emulator_of: Any) -> None:
    emu = emulator_of(provider)
    conversation, replies = _loop(provider, emu, driver)
    assert [len(r.message.tool_calls) for r in replies] == [1, 1, 0]
    assert replies[2].message.content == "q is 3."
    assert conversation[-1] == replies[2].message
    accepted = emu.requests
    assert len(accepted) == 3  # one request per reply: each was accepted as first sent
    if provider in SEALING:
        for step in (0, 1):
            sealed = secrets(replies[step])
            assert sealed, f"step {step} of {provider} came back without sealed thinking"
            later = accepted[step + 1].raw.decode()
            assert all(secret in later for secret in sealed), f"{provider}: step {step}'s seal was not replayed"
    if provider != "openai":  # OpenAI chat returns no reasoning at all
        assert all(r.message.thinking for r in replies)


def _edits(conversation: Conversation) -> dict[str, Conversation]:
    ask = UserMessage("And q + 1?")
    pruned = conversation.with_messages([conversation[0], conversation[1], *conversation[4:]]).append(ask)
    system = conversation.with_messages([SystemMessage("Be very brief."), *conversation[1:]]).append(ask)
    return {"pruned": pruned, "system": system, "same": conversation.append(ask)}


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_pruning_a_new_system_prompt_and_a_model_switch_are_accepted(
    provider: str, driver: Driver, emulator_of: Any
) -> None:
    emu = emulator_of(provider)
    conversation, _ = _loop(provider, emu, driver)
    options = {**emu.options, **emu.thinking_options}
    edits = _edits(conversation)
    cases = [(edits["pruned"], MODELS[provider]), (edits["system"], MODELS[provider])]
    cases.append((edits["same"], OTHER_MODEL[provider]))
    for edited, model in cases:
        before = len(emu.requests)
        reply = driver.call(provider, emu.base_url, edited, model, options=options)
        assert reply.message.content
        assert len(emu.requests) == before + 1  # accepted as first sent: no recovery needed
        assert reply.recoveries == ()


@pytest.mark.parametrize("provider", SEALING)
def test_control_the_stale_seal_sent_by_hand_is_rejected(provider: str, emulator_of: Any) -> None:
    emu = emulator_of(provider)
    conversation, _ = _loop(provider, emu, Driver(asynchronous=False, streamed=False))
    if provider == "openai-responses":
        # Encrypted reasoning is bound to the organisation and the model, not the prefix.
        edited, model = _edits(conversation)["same"], OTHER_MODEL[provider]
    else:
        edited, model = _edits(conversation)["pruned"], MODELS[provider]
    # The caller vouches for history that did change: thinkseal now replays the old seals.
    options = {**emu.options, **emu.thinking_options}
    stale = thinkseal.provider(provider).prepare(edited.rebind(Origin(provider, model)), model=model, **options)
    assert any(entry.kept for entry in stale.report)
    status, body = _post(emu.base_url + stale.path, stale.content, {**stale.headers, **_auth(provider)})
    assert status == 400, body
    error = thinkseal.client._errors.provider_error(provider, status, {}, body)
    assert error.message
    assert error.message != body.decode()
    if provider in RECOVERABLE:  # the documented wording the client recovers from
        assert thinkseal.provider(provider).connection.rejects_thinking(error.message), error.message


@pytest.mark.parametrize("provider", RECOVERABLE)
def test_a_signature_rejection_is_recovered_by_one_retry(provider: str, driver: Driver, emulator_of: Any) -> None:
    emu = emulator_of(provider)
    conversation, _ = _loop(provider, emu, driver)
    emu.rotate_keys()  # every seal issued so far stops verifying
    before = len(emu.requests)
    reply = driver.call(
        provider, emu.base_url, conversation.append(UserMessage("Again?")), MODELS[provider], options=emu.options
    )
    assert len(emu.requests) == before + 2  # rejected once, then accepted
    (recovery,) = reply.recoveries
    assert recovery.kind == "provider-rejected"
    assert isinstance(recovery.error, ProviderError)
    assert recovery.error.status == 400
    (index,) = recovery.unsealed
    assert not reply.conversation[index].has_sealed_thinking  # never sent sealed again
    # The next request from reply.conversation is accepted at once.
    again = driver.call(
        provider, emu.base_url, reply.conversation.append(UserMessage("Thanks")), MODELS[provider], options=emu.options
    )
    assert again.recoveries == ()


def test_mistral_signatures_have_no_documented_rejection_so_no_retry(emulator_of: Any) -> None:
    emu = emulator_of("mistral")
    conversation, _ = _loop("mistral", emu, Driver(asynchronous=False, streamed=False))
    emu.rotate_keys()
    with pytest.raises(ProviderError) as caught:
        Driver(False, False).call(
            "mistral", emu.base_url, conversation.append(UserMessage("Again?")), MODELS["mistral"], options=emu.options
        )
    assert caught.value.status == 400


def _auth(provider: str) -> dict[str, str]:
    if provider in ("anthropic",):
        return {"x-api-key": "test-key"}
    if provider == "gemini":
        return {"x-goog-api-key": "test-key"}
    return {"authorization": "Bearer test-key"}


def _post(url: str, content: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=content, headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_secrets_helper_reads_json_items() -> None:
    block = thinkseal.ThinkingBlock.Opaque(
        "openrouter", json.dumps({"type": "reasoning.encrypted", "data": "SECRET-123"})
    )
    reply = thinkseal.Reply(thinkseal.AssistantMessage("x", thinking=[block]), thinkseal._reply.ReplyInfo())
    assert secrets(reply) == ["SECRET-123"]
