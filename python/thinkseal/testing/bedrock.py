"""A local Bedrock Converse / ConverseStream emulator for Claude models.

Bedrock forwards a Converse request to Claude, which applies its own thinking
checks; so does this emulator: it translates the Converse body to the
Messages shape, runs the same ``Claude`` rule engine as the Anthropic
emulator, and translates the reply back. Claude's errors come back as Bedrock
does it: HTTP 400, ``x-amzn-ErrorType: ValidationException``,
``{"message": "The model returned the following errors: ..."}``; Bedrock's
own schema checks (docs/providers.md, Bedrock) come back without that prefix.

``POST /model/{modelId}/converse`` answers JSON (``redactedContent`` as base64
text); ``/converse-stream`` answers ``application/vnd.amazon.eventstream``
frames, so boto3 can drive both.

Images, documents, ``citationsContent`` and ``cachePoint`` blocks are
translated to their Messages form (a cache point becomes ``cache_control`` on
the block before it), so Claude's rules apply to them too; a blank text block
gets Bedrock's own answer. A scripted ``Raw`` block without a ``type`` is a
Converse block returned as it is.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote

from ._server import BodyProblem, Request, Response
from .anthropic import ApiError, Claude, ClaudeScripting, Outcome

MODEL_ERRORS = "The model returned the following errors: "
NULL_TEXT = (
    "Value at 'messages.{i}.member.content.{j}.member.reasoningContent.reasoningText.text' failed to satisfy "
    "constraint: Member must not be null"
)
MALFORMED = "Malformed input request: {detail}, please reformat your input and try again."
TOOL_CONFIG = "The toolConfig field must be defined when using toolUse and toolResult content blocks."
BLANK_TEXT = (
    "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. "
    "Add text to the text field, and try again."
)


class BedrockError(Exception):
    def __init__(self, message: str, kind: str = "ValidationException") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


# -- Converse <-> Messages ---------------------------------------------------------


def to_messages_body(model: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The Messages body Claude sees for a Converse body, and the betas."""
    fields = dict(body.get("additionalModelRequestFields") or {})
    betas = list(fields.pop("anthropic_beta", []) or [])
    inference = body.get("inferenceConfig") or {}
    out: dict[str, Any] = {"model": model, "max_tokens": inference.get("maxTokens", 4096)}
    if body.get("system"):
        out["system"] = _with_points(body["system"], lambda j, s: {"type": "text", "text": s["text"]})
    tools = (body.get("toolConfig") or {}).get("tools")
    if tools:
        out["tools"] = _with_points(
            tools,
            lambda j, t: {
                k: v
                for k, v in (
                    ("name", t["toolSpec"]["name"]),
                    ("description", t["toolSpec"].get("description")),
                    ("input_schema", t["toolSpec"]["inputSchema"]["json"]),
                )
                if v is not None
            },
        )
    messages = [
        {"role": m["role"], "content": _with_points(m["content"], lambda j, b, i=i: _to_block(i, j, b))}
        for i, m in enumerate(body.get("messages") or [])
    ]
    uses_tools = any(b["type"] in ("tool_use", "tool_result") for m in messages for b in m["content"])
    if uses_tools and not tools:
        raise BedrockError(TOOL_CONFIG)
    out["messages"] = messages
    if "thinking" in fields:
        out["thinking"] = fields.pop("thinking")
    if "temperature" in inference:
        out["temperature"] = inference["temperature"]
    if "top_k" in fields:
        out["top_k"] = fields["top_k"]
    choice = (body.get("toolConfig") or {}).get("toolChoice")
    if isinstance(choice, Mapping) and ("any" in choice or "tool" in choice):
        out["tool_choice"] = {"type": "any" if "any" in choice else "tool"}
    return out, betas


def _with_points(blocks: list[Any], convert: Any) -> list[dict[str, Any]]:
    """Converse blocks in the Messages shape, each ``cachePoint`` as
    ``cache_control`` on the block before it."""
    out: list[dict[str, Any]] = []
    for j, block in enumerate(blocks):
        if "cachePoint" in block:
            point = block["cachePoint"]
            control = {"type": "ephemeral", **({"ttl": point["ttl"]} if "ttl" in point else {})}
            if out:
                out[-1] = {**out[-1], "cache_control": control}
            continue
        out.append(convert(j, block))
    return out


def _media(block: Mapping[str, Any]) -> dict[str, Any]:
    """An image or document block in the Messages shape (bytes as base64 text)."""
    if "image" in block:
        image = block["image"]
        source = {"type": "base64", "media_type": f"image/{image['format']}", "data": image["source"]["bytes"]}
        return {"type": "image", "source": source}
    document = block["document"]
    data = document["source"]["bytes"]
    if document.get("format") == "txt":
        text = base64.b64decode(data).decode()
        out: dict[str, Any] = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    else:
        out = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}}
    out["title"] = document["name"]
    if document.get("citations"):
        out["citations"] = document["citations"]
    return out


def _to_block(i: int, j: int, block: Mapping[str, Any]) -> dict[str, Any]:
    """One Converse content block in the Messages shape."""
    if "text" in block:
        if not block["text"].strip():
            raise BedrockError(BLANK_TEXT.format(i=i, j=j))
        return {"type": "text", "text": block["text"]}
    if "image" in block or "document" in block:
        return _media(block)
    if "citationsContent" in block:
        cited = block["citationsContent"]
        text = "".join(c.get("text", "") for c in cited.get("content", []))
        return {"type": "text", "text": text, "citations": cited.get("citations", [])}
    if "toolUse" in block:
        use = block["toolUse"]
        return {"type": "tool_use", "id": use["toolUseId"], "name": use["name"], "input": use["input"]}
    if "toolResult" in block:
        result = block["toolResult"]
        # Each Converse block one Messages block: two text blocks are not the
        # one text block of their joined text.
        content = [
            _media(c) if "image" in c or "document" in c else {"type": "text", "text": c.get("text", "")}
            for c in result["content"]
        ]
        item = {"type": "tool_result", "tool_use_id": result["toolUseId"], "content": content}
        if result.get("status") == "error":
            item["is_error"] = True
        return item
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"]
        if "redactedContent" in reasoning:
            return {"type": "redacted_thinking", "data": reasoning["redactedContent"]}
        text_block = reasoning.get("reasoningText") or {}
        if text_block.get("text") is None:
            raise BedrockError(NULL_TEXT.format(i=i + 1, j=j + 1))  # AWS counts members from 1
        thinking = {"type": "thinking", "thinking": text_block["text"]}
        if text_block.get("signature"):  # Bedrock fails "" like a missing field
            thinking["signature"] = text_block["signature"]
        return thinking
    raise BedrockError(f"messages.{i}.content.{j}: unsupported content block")


def to_converse_content(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for block in blocks:
        kind = block["type"]
        if kind == "thinking":
            reasoning = {"reasoningText": {"text": block["thinking"], "signature": block["signature"]}}
            content.append({"reasoningContent": reasoning})
        elif kind == "redacted_thinking":
            content.append({"reasoningContent": {"redactedContent": block["data"]}})
        elif kind == "text" and block.get("citations"):
            content.append(
                {"citationsContent": {"content": [{"text": block["text"]}], "citations": block["citations"]}}
            )
        elif kind == "text":
            content.append({"text": block["text"]})
        elif "type" not in block:
            content.append(block)  # a scripted Converse block, as it is
        else:
            content.append({"toolUse": {"toolUseId": block["id"], "name": block["name"], "input": block["input"]}})
    return content


def converse_response(content: list[dict[str, Any]]) -> dict[str, Any]:
    stop = "tool_use" if any("toolUse" in b for b in content) else "end_turn"
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30},
        "metrics": {"latencyMs": 5},
    }


def _halves(text: str) -> list[str]:
    cut = len(text) // 2
    return [p for p in (text[:cut], text[cut:]) if p]


def stream_events(response: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """ConverseStream events for a Converse response, as boto3 yields them (base64 text for blobs)."""
    yield {"messageStart": {"role": "assistant"}}
    for index, block in enumerate(response["output"]["message"]["content"]):
        if "toolUse" in block:
            use = block["toolUse"]
            start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
            yield {"contentBlockStart": {"contentBlockIndex": index, "start": start}}
            for piece in _halves(json.dumps(use["input"])):
                yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}}
        elif "text" in block:
            for piece in _halves(block["text"]):
                yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": piece}}}
        elif "citationsContent" in block:
            cited = block["citationsContent"]
            for piece in cited["content"]:
                yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": piece["text"]}}}
            for citation in cited["citations"]:
                yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"citation": citation}}}
        elif "reasoningContent" not in block:
            yield {"contentBlockStart": {"contentBlockIndex": index, "start": dict(block)}}
        else:
            reasoning = block["reasoningContent"]
            if "redactedContent" in reasoning:
                deltas = [{"redactedContent": reasoning["redactedContent"]}]
            else:
                text = reasoning["reasoningText"]
                deltas = [{"text": t} for t in _halves(text["text"])] + [{"signature": text["signature"]}]
            for delta in deltas:
                yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"reasoningContent": delta}}}
        yield {"contentBlockStop": {"contentBlockIndex": index}}
    yield {"messageStop": {"stopReason": response["stopReason"]}}
    yield {"metadata": {"usage": response["usage"], "metrics": response["metrics"]}}


def eventstream_frame(event_type: str, payload: Mapping[str, Any]) -> bytes:
    """One ``application/vnd.amazon.eventstream`` message (string headers, CRC32s)."""
    return _frame(event_type, json.dumps(payload).encode())


def _frame(event_type: str, body: bytes) -> bytes:
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    head = b"".join(
        len(k).to_bytes(1, "big") + k.encode() + b"\x07" + len(v.encode()).to_bytes(2, "big") + v.encode()
        for k, v in headers.items()
    )
    total = 12 + len(head) + len(body) + 4
    prelude = total.to_bytes(4, "big") + len(head).to_bytes(4, "big")
    message = prelude + zlib.crc32(prelude).to_bytes(4, "big") + head + body
    return message + zlib.crc32(message).to_bytes(4, "big")


_BEDROCK_ERRORS = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}


class BedrockEmulator(ClaudeScripting):
    """Converse and ConverseStream on 127.0.0.1 (``base_url`` is the endpoint URL).

    ``script`` takes ``Step`` replies, or the blocks of one reply as Claude
    returns them (``Think``, ``Redact``, ``Say``, ``Call``, ``Raw``)."""

    provider = "bedrock"
    stream_content_type = "application/vnd.amazon.eventstream"

    def __init__(self, *, port: int = 0, require_auth: bool = False, claude: Claude | None = None) -> None:
        super().__init__(port=port, require_auth=require_auth)
        self.claude = claude or Claude()
        self.outcomes: list[Outcome] = []
        self.errors: list[str] = []
        self._count = 0

    @property
    def thinking_options(self) -> Mapping[str, Any]:
        return MappingProxyType(
            {
                "inferenceConfig": {"maxTokens": 2048},
                "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
            }
        )

    def _rotate(self) -> None:
        self.claude.rotate()

    def respond(self, model: str, body: Mapping[str, Any]) -> tuple[int, dict[str, Any], str | None]:
        """(status, JSON, error type) for one Converse body; no HTTP involved."""
        with self._lock:
            try:
                messages_body, betas = to_messages_body(model, body)
                outcome = self.claude.check(messages_body, betas)
            except BedrockError as err:
                self.errors.append(err.message)
                return 400, {"message": err.message}, err.kind
            except ApiError as err:
                self.errors.append(err.message)
                return 400, {"message": MODEL_ERRORS + err.message}, "ValidationException"
            self.outcomes.append(outcome)
            self._count += 1
            content = to_converse_content(self.claude.reply(messages_body, self._blocks()))
            return 200, converse_response(content), None

    def _streaming(self, request: Request) -> bool:
        return request.path.split("?")[0].endswith("/converse-stream")

    def _serves(self, request: Request) -> bool:
        parts = request.path.split("?")[0].split("/")
        return len(parts) == 4 and parts[1] == "model" and parts[3] in ("converse", "converse-stream")

    def _invalid_json(self, problem: BodyProblem) -> Response:
        # Bedrock's wording for a body that is not JSON is not documented:
        # InvokeModel's "Malformed input request" frame, with the emulator's detail.
        detail = f"{problem.detail} at line {problem.line} column {problem.column}"
        return _bedrock_error(400, MALFORMED.format(detail=detail), "ValidationException")

    def _too_large(self) -> Response:
        return _bedrock_error(413, "Input is too long for requested model.", "ValidationException")

    def _answer(self, request: Request) -> Response:
        parts = request.path.split("?")[0].split("/")
        if len(parts) != 4 or parts[1] != "model" or parts[3] not in ("converse", "converse-stream"):
            return _bedrock_error(404, "Not found", "ResourceNotFoundException")
        model = unquote(parts[2])
        body = request.body if isinstance(request.body, dict) else {}
        status, payload, kind = self.respond(model, body)
        if status != 200 or parts[3] == "converse":
            response = Response(status, payload)
            if kind:
                response.headers["x-amzn-ErrorType"] = kind
            return response
        chunks = []
        for event in stream_events(payload):
            ((name, inner),) = event.items()
            chunks.append(eventstream_frame(name, inner))
        return Response(chunks=chunks, content_type=self.stream_content_type)

    def _error(self, status: int, message: str) -> Response:
        return _bedrock_error(status, message, _BEDROCK_ERRORS.get(status, "InternalServerException"))

    def _authorized(self, request: Request) -> bool:
        value = request.headers.get("authorization", "")
        return value.startswith("AWS4-HMAC-SHA256 ") or (
            value.startswith("Bearer ") and bool(value.removeprefix("Bearer ").strip())
        )

    def _auth_error(self) -> Response:
        return _bedrock_error(
            401, "The security token included in the request is invalid.", "UnrecognizedClientException"
        )

    def _malformed_stream(self) -> list[bytes]:
        return [_frame("messageStart", b'{"role": "assis')]


def _bedrock_error(status: int, message: str, kind: str) -> Response:
    return Response(status, {"message": message}, headers={"x-amzn-ErrorType": kind})
