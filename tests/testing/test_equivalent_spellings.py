"""The signing emulators judge a replayed turn's prefix by what the provider
reads, not by how the JSON was spelled (docs/providers.md, "Which spellings
are the same request"). For each: a signed tool turn after a tool result
(the case of a history imported from another library and re-bound), then
its replay with that prefix spelled as sent, spelled another equivalent way
(accepted), and changed in substance (its text changed, a block added:
refused). Raw JSON over HTTP, so each spelling is exactly the one written."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
from pydantic_ai.providers.anthropic import AnthropicProvider

import thinkseal
from thinkseal import Conversation, Origin, Tool, UserMessage
from thinkseal.interop.pydantic_ai import import_messages
from thinkseal.testing import Emulator, Step, emulate

from .test_emulators import post

SPELLINGS = ("as-sent", "equivalent", "changed", "added")
TOOL_SCHEMA = {"type": "object", "properties": {"q": {"type": "integer"}}}
MODEL = "claude-sonnet-4-5"


@dataclass
class Family:
    """How one wire format spells the three requests of the scenario.

    ``first()`` asks the question; ``second(spelling, reply1)`` sends the
    first reply back with its tool result (so the second reply is signed over
    that spelling); ``third(spelling, reply1, reply2)`` replays both turns with
    the first tool result spelled ``spelling``; ``refused(status, answer)``
    says whether the provider refused the replayed turn's seal."""

    path: Callable[[Emulator], str]
    headers: dict[str, str]
    first: Callable[[], dict[str, Any]]
    second: Callable[[str, Any], dict[str, Any]]
    third: Callable[[str, Any, Any], dict[str, Any]]
    refused: Callable[[int, Any], bool]


# -- Claude's Messages API (and Vertex, the same body without model) --------------------


def claude_user(spelling: str) -> Any:
    if spelling == "equivalent":  # one text block with a cache mark, for the plain string
        return [{"text": "Look up 1.", "type": "text", "cache_control": {"type": "ephemeral"}}]
    return "Look up 1."


def claude_result(spelling: str, tool_id: str) -> dict[str, Any]:
    if spelling == "equivalent":  # a string for one text block, no is_error, other key order
        return {"content": "one", "tool_use_id": tool_id, "type": "tool_result"}
    text = {"changed": [{"type": "text", "text": "two"}], "added": [{"type": "text", "text": "on"}]}
    content = [{"type": "text", "text": "one"}] if spelling == "as-sent" else text[spelling]
    if spelling == "added":
        content = [*content, {"type": "text", "text": "e"}]
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": False}


def claude_calls(reply: Any) -> list[str]:
    return [b["id"] for b in reply["content"] if b["type"] == "tool_use"]


def claude_family(vertex: bool) -> Family:
    def body(messages: list[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "max_tokens": 2048,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "system": "Be brief.",
            "tools": [{"name": "lookup", "description": "Look it up", "input_schema": TOOL_SCHEMA}],
            "messages": messages,
        }
        return {**out, "anthropic_version": "vertex-2023-10-16"} if vertex else {**out, "model": MODEL}

    def second(spelling: str, reply1: Any) -> dict[str, Any]:
        (tool_id,) = claude_calls(reply1)
        assistant = {"role": "assistant", "content": reply1["content"]}
        result = {"role": "user", "content": [claude_result(spelling, tool_id)]}
        return body([{"role": "user", "content": claude_user(spelling)}, assistant, result])

    def third(spelling: str, reply1: Any, reply2: Any) -> dict[str, Any]:
        messages = second(spelling, reply1)["messages"]
        (tool_id,) = claude_calls(reply2)
        last = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "one"}]}
        return body([*messages, {"role": "assistant", "content": reply2["content"]}, last])

    path = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/" + MODEL + ":rawPredict"
    return Family(
        path=lambda emu: emu.url(path if vertex else "/v1/messages"),
        headers={"authorization": "Bearer t"} if vertex else {"x-api-key": "k", "anthropic-version": "2023-06-01"},
        first=lambda: body([{"role": "user", "content": claude_user("as-sent")}]),
        second=second,
        third=third,
        refused=lambda status, answer: status == 400 and "bound to a different conversation" in json.dumps(answer),
    )


# -- Bedrock Converse ----------------------------------------------------------------------


def converse_result(spelling: str, tool_id: str) -> dict[str, Any]:
    texts = {"as-sent": ["one"], "equivalent": ["one"], "changed": ["two"], "added": ["on", "e"]}
    result: dict[str, Any] = {"toolUseId": tool_id, "content": [{"text": t} for t in texts[spelling]]}
    if spelling == "equivalent":
        return {"content": result["content"], "toolUseId": tool_id}  # no status: "success", other key order
    return {**result, "status": "success"}


def bedrock_family() -> Family:
    def body(messages: list[Any]) -> dict[str, Any]:
        return {
            "messages": messages,
            "system": [{"text": "Be brief."}],
            "inferenceConfig": {"maxTokens": 2048},
            "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
            "toolConfig": {"tools": [{"toolSpec": {"name": "lookup", "inputSchema": {"json": TOOL_SCHEMA}}}]},
        }

    def user(spelling: str) -> dict[str, Any]:
        content: list[Any] = [{"text": "Look up 1."}]
        if spelling == "equivalent":
            content.append({"cachePoint": {"type": "default"}})
        return {"role": "user", "content": content}

    def calls(reply: Any) -> list[str]:
        return [b["toolUse"]["toolUseId"] for b in reply["output"]["message"]["content"] if "toolUse" in b]

    def second(spelling: str, reply1: Any) -> dict[str, Any]:
        (tool_id,) = calls(reply1)
        result = {"role": "user", "content": [{"toolResult": converse_result(spelling, tool_id)}]}
        return body([user(spelling), reply1["output"]["message"], result])

    def third(spelling: str, reply1: Any, reply2: Any) -> dict[str, Any]:
        (tool_id,) = calls(reply2)
        last = {"role": "user", "content": [{"toolResult": {"toolUseId": tool_id, "content": [{"text": "one"}]}}]}
        return body([*second(spelling, reply1)["messages"], reply2["output"]["message"], last])

    return Family(
        path=lambda emu: emu.url(f"/model/{MODEL}/converse"),
        headers={"authorization": "Bearer t"},
        first=lambda: body([user("as-sent")]),
        second=second,
        third=third,
        refused=lambda status, answer: status == 400 and "bound to a different conversation" in json.dumps(answer),
    )


# -- chat completions: OpenRouter, Mistral ------------------------------------------------------


def chat_user(spelling: str, marks: bool) -> dict[str, Any]:
    if spelling == "equivalent":
        part: dict[str, Any] = {"type": "text", "text": "Look up 1."}
        return {"content": [{**part, "cache_control": {"type": "ephemeral"}} if marks else part], "role": "user"}
    return {"role": "user", "content": "Look up 1."}


def chat_tool_result(spelling: str, tool_id: str) -> dict[str, Any]:
    if spelling == "equivalent":
        return {"content": [{"type": "text", "text": "one"}], "tool_call_id": tool_id, "role": "tool"}
    if spelling == "added":
        parts = [{"type": "text", "text": "on"}, {"type": "text", "text": "e"}]
        return {"role": "tool", "tool_call_id": tool_id, "content": parts}
    return {"role": "tool", "tool_call_id": tool_id, "content": "two" if spelling == "changed" else "one"}


def chat_assistant(spelling: str, message: dict[str, Any], mistral: bool) -> dict[str, Any]:
    """The assistant message as returned, or (equivalent) with its null members
    left out and its calls' arguments spelled another way."""
    if spelling != "equivalent":
        return message
    out = {k: v for k, v in message.items() if v is not None}
    calls = []
    for call in out.get("tool_calls") or []:
        arguments = json.loads(call["function"]["arguments"])
        respelled: Any = arguments if mistral else json.dumps(arguments, separators=(",", ":"), indent=None)
        function = {"arguments": respelled, "name": call["function"]["name"]}
        calls.append({"function": function, "id": call["id"], "type": "function"})
    out["tool_calls"] = calls
    if mistral:
        out["prefix"] = False
    return out


def chat_family(mistral: bool) -> Family:
    def body(messages: list[Any]) -> dict[str, Any]:
        tool = {
            "type": "function",
            "function": {"name": "lookup", "description": "Look it up", "parameters": TOOL_SCHEMA},
        }
        out: dict[str, Any] = {"model": MODEL, "messages": messages, "tools": [tool]}
        return {**out, "reasoning_effort": "high"} if mistral else {**out, "reasoning": {"effort": "medium"}}

    def message(reply: Any) -> dict[str, Any]:
        found: dict[str, Any] = reply["choices"][0]["message"]
        return found

    def second(spelling: str, reply1: Any) -> dict[str, Any]:
        assistant = message(reply1)
        (call,) = assistant["tool_calls"]
        return body(
            [
                chat_user(spelling, marks=not mistral),
                chat_assistant(spelling, assistant, mistral),
                chat_tool_result(spelling, call["id"]),
            ]
        )

    def third(spelling: str, reply1: Any, reply2: Any) -> dict[str, Any]:
        assistant = message(reply2)
        (call,) = assistant["tool_calls"]
        last = {"role": "tool", "tool_call_id": call["id"], "content": "one"}
        return body([*second(spelling, reply1)["messages"], assistant, last])

    def refused(status: int, answer: Any) -> bool:
        text = json.dumps(answer)
        if mistral:
            return status == 400 and "invalid signature for this thinking chunk" in text
        return status == 400 and "bound to a different conversation" in text

    return Family(
        path=lambda emu: emu.url("/v1/chat/completions" if mistral else "/chat/completions"),
        headers={"authorization": "Bearer t"},
        first=lambda: body([chat_user("as-sent", marks=not mistral)]),
        second=second,
        third=third,
        refused=refused,
    )


# -- Gemini and Vertex ------------------------------------------------------------------------------


def gemini_family(vertex: bool) -> Family:
    def body(contents: list[Any]) -> dict[str, Any]:
        declaration = {"name": "lookup", "description": "Look it up", "parameters": TOOL_SCHEMA}
        return {
            "contents": contents,
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "tools": [{"functionDeclarations": [declaration]}],
            "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
        }

    def user(spelling: str) -> dict[str, Any]:
        if spelling == "added":
            return {"role": "user", "parts": [{"text": "Look up 1."}, {"text": "Please."}]}
        if spelling == "equivalent":
            return {"parts": [{"text": "Look up 1.", "thought": False}], "role": "user"}
        return {"role": "user", "parts": [{"text": "Look up 1."}]}

    def result(spelling: str) -> dict[str, Any]:
        value = {"result": "two" if spelling == "changed" else "one"}
        if spelling == "equivalent":  # the protobuf field names, as the SDK writes some
            return {"role": "user", "parts": [{"function_response": {"name": "lookup", "response": value}}]}
        return {"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": value}}]}

    def content(reply: Any) -> dict[str, Any]:
        found: dict[str, Any] = reply["candidates"][0]["content"]
        return found

    def model_turn(spelling: str, turn: dict[str, Any]) -> dict[str, Any]:
        if spelling != "equivalent":
            return turn
        respelled = []
        for original in turn["parts"]:
            part = dict(original)
            if "thoughtSignature" in part:  # URL-safe base64 without padding, snake_case
                signature = part.pop("thoughtSignature")
                part["thought_signature"] = signature.replace("+", "-").replace("/", "_").rstrip("=")
            respelled.append(part)
        return {"parts": respelled, "role": "model"}

    def second(spelling: str, reply1: Any) -> dict[str, Any]:
        return body([user(spelling), model_turn(spelling, content(reply1)), result(spelling)])

    def third(spelling: str, reply1: Any, reply2: Any) -> dict[str, Any]:
        return body([*second(spelling, reply1)["contents"], content(reply2), result("as-sent")])

    model_path = "models/gemini-3-pro:generateContent"
    path = "/v1/projects/p/locations/us-central1/publishers/google/" + model_path if vertex else "/v1beta/" + model_path
    marker = "Thought signature is not valid" if vertex else "Corrupted thought signature."
    return Family(
        path=lambda emu: emu.url(path),
        headers={"authorization": "Bearer t"} if vertex else {"x-goog-api-key": "k"},
        first=lambda: body([user("as-sent")]),
        second=second,
        third=third,
        refused=lambda status, answer: status == 400 and marker in json.dumps(answer),
    )


# -- OpenAI Responses ---------------------------------------------------------------------------------


def responses_family() -> Family:
    def body(items: list[Any], spelling: str = "as-sent") -> dict[str, Any]:
        tool: dict[str, Any] = {"type": "function", "name": "lookup", "parameters": TOOL_SCHEMA, "strict": True}
        if spelling == "equivalent":
            del tool["strict"]  # the API's default
        return {
            "model": "gpt-5",
            "input": items,
            "instructions": "Be brief.",
            "tools": [tool],
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "reasoning": {"effort": "medium", "summary": "auto"},
        }

    def user(spelling: str) -> dict[str, Any]:
        if spelling == "equivalent":
            return {"type": "message", "content": [{"type": "input_text", "text": "Look up 1."}], "role": "user"}
        return {"role": "user", "content": "Look up 1."}

    def output(spelling: str, call_id: str) -> dict[str, Any]:
        texts = {"as-sent": "one", "equivalent": "one", "changed": "two"}
        if spelling == "equivalent":
            return {
                "type": "function_call_output",
                "call_id": call_id,
                "output": [{"type": "input_text", "text": "one"}],
            }
        if spelling == "added":
            parts = [{"type": "input_text", "text": "on"}, {"type": "input_text", "text": "e"}]
            return {"type": "function_call_output", "call_id": call_id, "output": parts}
        return {"type": "function_call_output", "call_id": call_id, "output": texts[spelling]}

    def items_of(reply: Any) -> list[Any]:
        return [{k: v for k, v in item.items() if k != "status"} for item in reply["output"]]

    def call_id(reply: Any) -> str:
        (found,) = [i["call_id"] for i in reply["output"] if i["type"] == "function_call"]
        return str(found)

    def second(spelling: str, reply1: Any) -> dict[str, Any]:
        return body([user(spelling), *items_of(reply1), output(spelling, call_id(reply1))], spelling)

    def third(spelling: str, reply1: Any, reply2: Any) -> dict[str, Any]:
        items = second(spelling, reply1)["input"]
        last = {"type": "function_call_output", "call_id": call_id(reply2), "output": "one"}
        return body([*items, *items_of(reply2), last], spelling)

    # The Responses API drops a reasoning item whose prefix changed, and says so.
    def refused(status: int, answer: Any) -> bool:
        return status == 200 and any(t["reason"] == "prefix_mismatch" for t in answer.get("input_transformations", []))

    return Family(
        path=lambda emu: emu.url("/responses"),
        headers={"authorization": "Bearer org-a"},
        first=lambda: body([user("as-sent")]),
        second=second,
        third=third,
        refused=refused,
    )


FAMILIES: dict[str, Callable[[], Family]] = {
    "anthropic": lambda: claude_family(vertex=False),
    "vertex-anthropic": lambda: claude_family(vertex=True),
    "bedrock": bedrock_family,
    "openrouter": lambda: chat_family(mistral=False),
    "mistral": lambda: chat_family(mistral=True),
    "gemini": lambda: gemini_family(vertex=False),
    "vertex-gemini": lambda: gemini_family(vertex=True),
    "openai-responses": responses_family,
}


@pytest.fixture(params=sorted(FAMILIES))
def provider_id(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture
def emu(provider_id: str) -> Iterator[Emulator]:
    with emulate(provider_id) as running:
        yield running


def send(emu: Emulator, family: Family, body: dict[str, Any]) -> tuple[int, Any]:
    status, _, raw = post(
        family.path(emu), json.dumps(body).encode(), {"content-type": "application/json", **family.headers}
    )
    return status, json.loads(raw)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_replayed_prefix_is_judged_by_what_it_says(provider_id: str, emu: Emulator, spelling: str) -> None:
    family = FAMILIES[provider_id]()
    emu.script(
        Step(thinking="Look it up.", calls=[("lookup", {"q": 1})]),
        Step(thinking="Check once more.", calls=[("lookup", {"q": 2})]),
    )
    status, reply1 = send(emu, family, family.first())
    assert status == 200, reply1
    status, reply2 = send(emu, family, family.second("as-sent", reply1))
    assert status == 200, reply2
    assert not family.refused(status, reply2)
    status, answer = send(emu, family, family.third(spelling, reply1, reply2))
    if spelling in ("as-sent", "equivalent"):
        assert status == 200, answer
        assert not family.refused(status, answer), answer
    else:
        assert family.refused(status, answer), (status, answer)


def test_a_pydantic_ai_history_imported_and_rebound_replays_after_its_tool_result() -> None:
    # pydantic-ai sends a tool result as text blocks with is_error: false;
    # thinkseal sends the same result back as a string.
    with emulate("anthropic") as emu:
        emu.script(Step(thinking="Look it up.", calls=[("lookup", {"q": 1})]), Step(thinking="Got it.", text="One."))
        model = AnthropicModel(MODEL, provider=AnthropicProvider(base_url=emu.base_url, api_key="k"))
        thinking = {"type": "enabled", "budget_tokens": 1024}
        agent = Agent(model, model_settings=AnthropicModelSettings(anthropic_thinking=thinking, max_tokens=2048))

        @agent.tool_plain
        def lookup(q: int) -> str:
            """Look it up."""
            return "one"

        result = agent.run_sync("Look up 1.")
        sent_result = emu.requests[1].body["messages"][2]["content"][0]
        assert sent_result["content"] == [{"text": "one", "type": "text"}]
        assert sent_result["is_error"] is False
        tool = emu.requests[0].body["tools"][0]
        imported = Conversation(
            list(import_messages(result.all_messages())),
            tools=[Tool(tool["name"], tool["description"], tool["input_schema"])],
        )
        conversation = imported.rebind(Origin("anthropic", MODEL)).append(UserMessage("And 2?"))
        req = thinkseal.provider("anthropic").prepare(conversation, model=MODEL, max_tokens=2048, thinking=thinking)
        assert req.body["messages"][2]["content"][0]["content"] == "one"
        status, _, raw = post(emu.base_url + req.path, req.content, {**req.headers, "x-api-key": "k"})
    assert status == 200, raw
