"""Two wire bugs of Claude's adapters, each pinned with the reply shape that
showed it, through the official SDKs and the enforcing emulators.

(a) Under adaptive thinking, claude-opus-4-6 answered with a text block that
    is only white space before its signed thinking::

        "content": [{"type": "text", "text": "\\n\\n"},
                    {"type": "thinking", "thinking": "...", "signature": "..."},
                    {"type": "text", "text": "answer"}]

    Sending that block back is a 400 from Anthropic ("messages: text content
    blocks must contain non-whitespace text"), and Bedrock refuses blank text
    too ("The text field in the ContentBlock object at messages.N.content.M is
    blank. Add text to the text field, and try again."). The turn keeps the
    block (its fingerprint does not change); the wire leaves it out.

(b) With ``thinking: {"type": "adaptive"}`` Claude may answer a tool step
    without thinking::

        "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {...}}]

    Continuing that tool loop raised ``ReplayError`` (``no-sealed-thinking``)
    although the turn goes back exactly as it came. Only a turn received with
    sealed thinking that cannot be replayed is an error now.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import anthropic
import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Origin,
    ReplayError,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from thinkseal.testing import respond
from thinkseal.testing.anthropic import BLANK_TEXT, LEADING_THINKING, AnthropicEmulator, Call, Say, Think
from thinkseal.testing.bedrock import BLANK_TEXT as BEDROCK_BLANK
from thinkseal.testing.bedrock import MODEL_ERRORS, BedrockEmulator

from .test_anthropic import check_request as check_anthropic
from .test_bedrock import check_request as check_bedrock
from .test_bedrock import for_boto3, model_of

A_MODEL = "claude-emulated-opus"
B_MODEL = "us.anthropic.claude-opus-4-6-v1:0"
ADAPTIVE = {"type": "adaptive"}
ENABLED = {"type": "enabled", "budget_tokens": 2048}
WEATHER = Tool("get_weather", "Current weather", {"type": "object", "properties": {"city": {"type": "string"}}})
A = thinkseal.provider("anthropic")
B = thinkseal.provider("bedrock")


def a_options(thinking: dict[str, Any]) -> dict[str, Any]:
    return {"max_tokens": 4096, "thinking": thinking}


def b_options(thinking: dict[str, Any]) -> dict[str, Any]:
    return {"inferenceConfig": {"maxTokens": 4096}, "additionalModelRequestFields": {"thinking": thinking}}


def start(question: str) -> Conversation:
    return Conversation([SystemMessage("You are a weather assistant."), UserMessage(question)], tools=[WEATHER])


def a_send(client: anthropic.Anthropic, req: Any) -> AssistantMessage:
    check_anthropic(req)
    return req.receive(client.messages.create(**req.body, extra_headers=req.headers).model_dump())


def b_send(client: Any, req: Any) -> AssistantMessage:
    check_bedrock(req)
    return req.receive(client.converse(modelId=model_of(req), **for_boto3(req.body)))


# -- (a) white-space-only text before thinking -----------------------------------------------------------


def test_blank_text_is_kept_but_not_sent_back_to_anthropic(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = start("Weather in Paris?")
    anthropic_emulator.script(Say("\n\n"), Think("It is sunny in Paris."), Say("It is sunny."))
    reply = a_send(anthropic_client, A.prepare(conv, model=A_MODEL, **a_options(ADAPTIVE)))
    assert [type(p).__name__ for p in reply.parts] == ["str", "Text", "str"]
    assert reply.parts[0] == "\n\n"  # kept as received: the fingerprint does not change
    assert reply.has_sealed_thinking
    conv = conv.append(reply, UserMessage("And tomorrow?"))
    req = A.prepare(conv, model=A_MODEL, **a_options(ADAPTIVE))
    assert req.report[0].kept
    assert [b["type"] for b in req.body["messages"][1]["content"]] == ["thinking", "text"]
    anthropic_emulator.script(Think("Rain."), Say("Rain tomorrow."))
    assert a_send(anthropic_client, req).content == "Rain tomorrow."
    assert anthropic_emulator.errors == []
    # What a naive client sends back (the reply as it came) is Anthropic's 400.
    naive = copy.deepcopy(req.body)
    naive["messages"][1]["content"].insert(0, {"type": "text", "text": "\n\n"})
    status, payload = anthropic_emulator.respond(naive, req.headers)
    assert status == 400
    assert payload["error"]["message"] == BLANK_TEXT.format(where="messages")
    assert payload["error"]["message"] == "messages: text content blocks must contain non-whitespace text"


def test_blank_text_before_thinking_in_a_tool_loop(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    """Left out, the blank block no longer stands before the thinking: the tool
    loop's turn starts with its thinking, as Claude requires."""
    conv = start("Weather in Paris?")
    anthropic_emulator.script(Say("\n\n"), Think("Check it."), Call("toolu_1", "get_weather", {"city": "Paris"}))
    conv = conv.append(a_send(anthropic_client, A.prepare(conv, model=A_MODEL, **a_options(ADAPTIVE))))
    conv = conv.append(ToolMessage("18°C", "toolu_1"))
    req = A.prepare(conv, model=A_MODEL, **a_options(ADAPTIVE))
    assert [b["type"] for b in req.body["messages"][1]["content"]] == ["thinking", "tool_use"]
    anthropic_emulator.script(Think("Mild."), Say("18°C."))
    assert a_send(anthropic_client, req).content == "18°C."
    assert anthropic_emulator.errors == []


def test_blank_text_is_not_sent_back_to_bedrock(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = start("Weather in Paris?")
    bedrock_emulator.script(Say("\n\n"), Think("It is sunny in Paris."), Say("It is sunny."))
    reply = b_send(bedrock_client, B.prepare(conv, model=B_MODEL, **b_options(ADAPTIVE)))
    assert reply.parts[0] == "\n\n"
    conv = conv.append(reply, UserMessage("And tomorrow?"))
    req = B.prepare(conv, model=B_MODEL, **b_options(ADAPTIVE))
    assert req.report[0].kept
    assert [next(iter(b)) for b in req.body["messages"][1]["content"]] == ["reasoningContent", "text"]
    bedrock_emulator.script(Think("Rain."), Say("Rain tomorrow."))
    assert b_send(bedrock_client, req).content == "Rain tomorrow."
    assert bedrock_emulator.errors == []
    naive = copy.deepcopy(req.body)
    naive["messages"][1]["content"].insert(0, {"text": "\n\n"})
    status, payload, kind = bedrock_emulator.respond(B_MODEL, json.loads(json.dumps(naive)))
    assert (status, kind) == (400, "ValidationException")
    assert payload["message"] == BEDROCK_BLANK.format(i=1, j=0)


# -- (b) a tool step answered without thinking under adaptive thinking -------------------------------------


def test_adaptive_tool_step_without_thinking_continues_on_anthropic(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = start("Weather in Paris?")
    anthropic_emulator.script(Call("toolu_1", "get_weather", {"city": "Paris"}))  # adaptive: no thinking this time
    reply = a_send(anthropic_client, A.prepare(conv, model=A_MODEL, **a_options(ADAPTIVE)))
    assert reply.thinking == ()
    assert reply.thinking_binding is None  # nothing sealed: not bound, as it came
    conv = conv.append(reply, ToolMessage("18°C", "toolu_1"))
    req = A.prepare(conv, model=A_MODEL, **a_options(ADAPTIVE))
    assert [e.reason for e in req.report] == ["no-sealed-thinking"]
    assert req.body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
    ]
    anthropic_emulator.script(Think("Mild."), Say("18°C in Paris."))
    assert a_send(anthropic_client, req).content == "18°C in Paris."
    assert anthropic_emulator.errors == []
    # Manual thinking never skips thinking: there the same turn still cannot continue the loop.
    with pytest.raises(ReplayError) as err:
        A.prepare(conv, model=A_MODEL, **a_options(ENABLED))
    assert err.value.reason == "no-sealed-thinking"
    status, payload = anthropic_emulator.respond({**req.body, "thinking": ENABLED}, req.headers)
    assert status == 400
    assert payload["error"]["message"] == LEADING_THINKING.format(i=1, found="tool_use")


def test_adaptive_tool_step_without_thinking_continues_on_bedrock(
    bedrock_client: Any, bedrock_emulator: BedrockEmulator
) -> None:
    conv = start("Weather in Paris?")
    bedrock_emulator.script(Call("tooluse_1", "get_weather", {"city": "Paris"}))
    conv = conv.append(b_send(bedrock_client, B.prepare(conv, model=B_MODEL, **b_options(ADAPTIVE))))
    conv = conv.append(ToolMessage("18°C", "tooluse_1"))
    req = B.prepare(conv, model=B_MODEL, **b_options(ADAPTIVE))
    bedrock_emulator.script(Think("Mild."), Say("18°C in Paris."))
    assert b_send(bedrock_client, req).content == "18°C in Paris."
    assert bedrock_emulator.errors == []
    with pytest.raises(ReplayError):
        B.prepare(conv, model=B_MODEL, **b_options(ENABLED))


@pytest.mark.parametrize("provider_id", ["anthropic", "bedrock"])
def test_adaptive_still_refuses_sealed_thinking_that_cannot_go_back(provider_id: str) -> None:
    """A tool step received WITH signed thinking, whose thinking no longer
    holds (the system prompt changed), is still a ReplayError under adaptive
    thinking: Claude would see the loop's turn without the thinking it had."""
    adapter, model, options = (
        (A, A_MODEL, a_options(ADAPTIVE)) if provider_id == "anthropic" else (B, B_MODEL, b_options(ADAPTIVE))
    )
    conv = start("Weather in Paris?")
    turn = AssistantMessage.from_parts(
        [ThinkingBlock.Text("Check it.", "SIG"), ToolCall("toolu_1", "get_weather", {"city": "Paris"})]
    )
    conv = respond(conv, Origin(provider_id, model), turn)
    conv = conv.append(ToolMessage("18°C", "toolu_1"))
    adapter.prepare(conv, model=model, **options)  # kept: fine
    edited = conv.with_messages([SystemMessage("You are terse."), *conv[1:]])
    with pytest.raises(ReplayError) as err:
        adapter.prepare(edited, model=model, **options)
    assert (err.value.index, err.value.reason) == (2, "prefix-changed")


def test_bedrock_naive_blank_text_through_boto3_names_the_block(bedrock_emulator: BedrockEmulator) -> None:
    """The Bedrock error names the message and block (indices as the request has them)."""
    body = {"messages": [{"role": "user", "content": [{"text": "Hi"}, {"text": "  "}]}]}
    status, payload, _ = bedrock_emulator.respond(B_MODEL, body)
    assert status == 400
    assert payload["message"] == BEDROCK_BLANK.format(i=0, j=1)
    assert not payload["message"].startswith(MODEL_ERRORS)
