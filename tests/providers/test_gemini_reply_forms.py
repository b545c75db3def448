"""One Gemini reply in every form ``receive`` and ``stream().feed`` accept gives
one message and one digest (``gemini`` and ``vertex-gemini``).

The forms: the HTTP JSON (camelCase, standard base64), the ``google-genai``
SDK's ``GenerateContentResponse`` object (thinkseal dumps it with its aliases:
camelCase, URL-safe base64), its ``model_dump()`` (snake_case, ``bytes``), its
``model_dump(mode="json")`` (snake_case, URL-safe base64), and the same reply
streamed as JSON chunks and as SDK chunk objects. The signatures and the image
are bytes whose base64 has ``+`` and ``/``, the two letters the alphabets spell
differently.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types

import thinkseal
from thinkseal import AssistantMessage, Conversation, Native, ThinkingBlock, Tool, ToolCall, UserMessage

OPTIONS = {"gemini": {}, "vertex-gemini": {"project": "test-project", "location": "us-central1"}}
LOOKUP = Tool("lookup", "Look a word up.", {"type": "object", "properties": {"word": {"type": "string"}}})

# Bytes whose standard base64 holds "+" and "/" (URL-safe: "-" and "_").
TEXT_SIGNATURE = base64.b64encode(b"\xfb\xef\xbe\xff\xfe\xfd text part").decode()
CALL_SIGNATURE = base64.b64encode(b"\xfb\xff\xbf\x3e\x3f call part").decode()
IMAGE = b"\x89PNG\r\n\x1a\n\xfb\xff\xfe\xfd\xfc"
IMAGE_BASE64 = base64.b64encode(IMAGE).decode()

PARTS: list[dict[str, Any]] = [
    {"text": "The user wants a definition.", "thought": True},
    {"text": "Here is the word and a picture.", "thoughtSignature": TEXT_SIGNATURE},
    {"inlineData": {"mimeType": "image/png", "data": IMAGE_BASE64}},
    {"functionCall": {"id": "call-1", "name": "lookup", "args": {"word": "seal"}}, "thoughtSignature": CALL_SIGNATURE},
]
RESPONSE: dict[str, Any] = {
    "candidates": [{"content": {"role": "model", "parts": PARTS}, "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 4, "thoughtsTokenCount": 6},
    "responseId": "resp-1",
    "modelVersion": "gemini-3-pro-preview",
}


def chunks() -> list[dict[str, Any]]:
    """``RESPONSE`` streamed: one part per chunk, the last chunk finishing it."""
    out = []
    for k, part in enumerate(PARTS):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], "responseId": "resp-1"}
        if k == len(PARTS) - 1:
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = RESPONSE["usageMetadata"]
            chunk["modelVersion"] = "gemini-3-pro-preview"
        out.append(chunk)
    return out


def sdk(value: dict[str, Any]) -> types.GenerateContentResponse:
    return types.GenerateContentResponse.model_validate(value)


FORMS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "http-json": lambda value: value,
    "sdk-object": sdk,
    "model_dump": lambda value: sdk(value).model_dump(),
    "model_dump-json": lambda value: sdk(value).model_dump(mode="json"),
}


def prepare(provider_id: str, *, stream: bool = False) -> thinkseal.PreparedRequest:
    conv = Conversation([UserMessage("Define seal, with a picture.")], tools=[LOOKUP])
    adapter = thinkseal.provider(provider_id, account="key-A")
    return adapter.prepare(conv, model="gemini-3-pro-preview", stream=stream, **OPTIONS[provider_id])


def expected(provider_id: str) -> AssistantMessage:
    def signature(value: str) -> ThinkingBlock.Opaque:
        return ThinkingBlock.Opaque(provider_id, '{"thoughtSignature":"' + value + '"}')

    image = Native(provider_id, '{"inlineData":{"data":"' + IMAGE_BASE64 + '","mimeType":"image/png"}}')
    return AssistantMessage.from_parts(
        [
            ThinkingBlock.Text("The user wants a definition."),
            signature(TEXT_SIGNATURE),
            "Here is the word and a picture.",
            image,
            signature(CALL_SIGNATURE),
            ToolCall("call-1", "lookup", {"word": "seal"}),
        ]
    )


def test_the_fixture_spells_both_alphabets_differently() -> None:
    """The reply really tells the alphabets apart (else the test below proves nothing)."""
    dumped = sdk(RESPONSE).model_dump(mode="json", by_alias=True)
    parts = dumped["candidates"][0]["content"]["parts"]
    assert parts[1]["thoughtSignature"] != TEXT_SIGNATURE
    assert parts[2]["inlineData"]["data"] != IMAGE_BASE64
    assert {"+", "/"} <= set(TEXT_SIGNATURE + CALL_SIGNATURE + IMAGE_BASE64)


@pytest.mark.parametrize("provider_id", ["gemini", "vertex-gemini"])
@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_of_one_reply_gives_one_message(provider_id: str, form: str) -> None:
    req = prepare(provider_id)
    reference = req.parse(RESPONSE)
    assert reference.message.parts == expected(provider_id).parts
    reply = req.parse(FORMS[form](RESPONSE))
    assert reply.message == reference.message
    assert reply.message.digest == reference.message.digest
    assert reply == reference


@pytest.mark.parametrize("provider_id", ["gemini", "vertex-gemini"])
@pytest.mark.parametrize("form", ["http-json", "sdk-object"])
def test_every_form_of_one_stream_gives_the_same_message(provider_id: str, form: str) -> None:
    whole = prepare(provider_id).parse(RESPONSE)
    acc = prepare(provider_id, stream=True).stream()
    for chunk in chunks():
        acc.feed(FORMS[form](chunk))
    assert acc.finish() == whole.message
    assert acc.finish().digest == whole.message.digest
    assert acc.reply.usage == whole.usage


@pytest.mark.parametrize("provider_id", ["gemini", "vertex-gemini"])
def test_a_kept_turn_goes_back_in_the_wire_alphabet(provider_id: str) -> None:
    req = prepare(provider_id)
    message = req.receive(sdk(RESPONSE))
    conv = Conversation([UserMessage("Define seal, with a picture.")], tools=[LOOKUP]).append(message)
    conv = conv.append(thinkseal.ToolMessage('{"meaning": "a marine mammal"}', "call-1"))
    body = prepare_next(provider_id, conv)
    model = body["contents"][1]["parts"]
    assert model[0] == {"text": "The user wants a definition.", "thought": True}
    assert model[1] == {"text": "Here is the word and a picture.", "thoughtSignature": TEXT_SIGNATURE}
    assert model[2] == {"inlineData": {"data": IMAGE_BASE64, "mimeType": "image/png"}}
    assert model[3]["thoughtSignature"] == CALL_SIGNATURE


def prepare_next(provider_id: str, conv: Conversation) -> Any:
    adapter = thinkseal.provider(provider_id, account="key-A")
    return adapter.prepare(conv, model="gemini-3-pro-preview", **OPTIONS[provider_id]).body
