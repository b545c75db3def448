"""A local stand-in for Mistral's ``/v1/chat/completions`` that enforces the
request rules thinkseal relies on, and answers with scripted replies.

Requests are parsed the way the ``mistralai`` SDK models them
(``ChatCompletionRequest``), with unknown fields refused as Mistral's API does
(422). Then, on top of what the models check:

- tool-call ids must be 9 characters of ``[a-zA-Z0-9]`` (Mistral's error text);
- tool messages need ``tool_call_id`` and must answer the calls of the
  assistant turn before them, all of them, before the conversation goes on;
- an assistant message needs text or tool calls; the last message is a user or
  tool message (or an assistant prefix);
- ``reasoning_effort`` and ``prompt_mode`` take only their documented values;
- a thinking chunk with a ``signature`` must carry exactly the signature the
  emulator issued for that text after that very prefix (an HMAC over the
  model, the tools and every earlier message as parsed), or it is rejected.

Replies are signed when scripted so (``Reply.signed``). Error wording not
quoted from Mistral is the emulator's own.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from mistralai.client.models import (
    AssistantMessage,
    ChatCompletionRequest,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from pydantic import ValidationError as PydanticError

from .ollama import Answer, RequestRejected, ScriptedEmulator

PATH = "/v1/chat/completions"
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
TOOL_CALL_ID = re.compile(r"[A-Za-z0-9]{9}")
SECRET = b"mistral-emulator-signing-key"

_FIELDS = {f.alias or n for n, f in ChatCompletionRequest.model_fields.items()}
_MESSAGE_FIELDS = {
    cls.model_fields["role"].default: {f.alias or n for n, f in cls.model_fields.items()}
    for cls in (AssistantMessage, SystemMessage, ToolMessage, UserMessage)
}


@dataclass
class Reply:
    """A scripted reply. ``signed`` signs its thinking chunk; ``cut`` ends a
    stream without a finish_reason."""

    content: str = ""
    thinking: str = ""
    tool_calls: Sequence[tuple[str, str, dict[str, Any]]] = ()  # id, name, arguments
    signed: bool = False
    cut: bool = False


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signature(model: str, tools: Any, prefix: list[Any], text: str) -> str:
    """The emulator's signature of thinking ``text`` produced after ``prefix``."""
    material = canonical({"model": model, "tools": tools, "prefix": prefix, "thinking": text})
    return base64.b64encode(hmac.new(SECRET, material, hashlib.sha256).digest()).decode()


def _bad_request(message: str, kind: str = "invalid_request_error", code: str | None = None) -> RequestRejected:
    return RequestRejected(400, {"object": "error", "message": message, "type": kind, "param": None, "code": code})


def _unprocessable(loc: list[Any], message: str, kind: str = "value_error") -> RequestRejected:
    return RequestRejected(422, {"object": "error", "detail": [{"type": kind, "loc": ["body", *loc], "msg": message}]})


def parse_request(body: Any) -> dict[str, Any]:
    """``body`` as the SDK's request model reads it (a normalised dict), or ``RequestRejected``."""
    if not isinstance(body, dict):
        raise _unprocessable([], "Input should be a valid dictionary")
    for key in body:
        if key not in _FIELDS:
            raise _unprocessable([key], "Extra inputs are not permitted", "extra_forbidden")
    for i, message in enumerate(body.get("messages") or []):
        allowed = _MESSAGE_FIELDS.get(message.get("role")) if isinstance(message, dict) else None
        if allowed is None:
            continue  # the model reports a bad message below
        for key in message:
            if key not in allowed:
                raise _unprocessable(["messages", i, key], "Extra inputs are not permitted", "extra_forbidden")
    try:
        parsed = ChatCompletionRequest.model_validate(body)
    except PydanticError as exc:
        raise _unprocessable([], str(exc)) from None
    normalised: dict[str, Any] = parsed.model_dump(by_alias=True, mode="json")
    return normalised


def check_request(request: dict[str, Any]) -> None:
    """Mistral's rules on a parsed request (see the module docstring)."""
    effort = request.get("reasoning_effort")
    if effort is not None and effort not in REASONING_EFFORTS:
        raise _unprocessable(["reasoning_effort"], f"Input should be one of {', '.join(REASONING_EFFORTS)}")
    if request.get("prompt_mode") not in (None, "reasoning"):
        raise _unprocessable(["prompt_mode"], "Input should be 'reasoning'")
    messages = request["messages"]
    if not messages:
        raise _bad_request("messages must not be empty")
    open_ids: list[str] = []
    for i, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not call_id:
                raise _bad_request(f"messages[{i}]: tool_call_id is required for tool messages")
            if call_id not in open_ids:
                raise _bad_request(f"messages[{i}]: tool_call_id {call_id!r} answers no call of the turn before")
            open_ids.remove(call_id)
            continue
        if open_ids:
            raise _bad_request("Not the same number of function calls and responses")
        if role == "assistant":
            open_ids = _check_assistant(request, i)
    if open_ids:
        raise _bad_request("Not the same number of function calls and responses")
    last = messages[-1]
    if last["role"] not in ("user", "tool") and not (last["role"] == "assistant" and last.get("prefix")):
        raise _bad_request(
            f"Expected last role User or Tool (or Assistant with prefix True) for serving but got {last['role']}"
        )


def _check_assistant(request: dict[str, Any], index: int) -> list[str]:
    message = request["messages"][index]
    content = message.get("content")
    calls = message.get("tool_calls") or []
    chunks = content if isinstance(content, list) else []
    has_text = (isinstance(content, str) and content != "") or any(
        c.get("type") == "text" and c.get("text") for c in chunks
    )
    if not has_text and not calls:
        raise _bad_request(f"messages[{index}]: an assistant message needs content or tool_calls")
    for j, chunk in enumerate(chunks):
        if chunk.get("type") == "thinking" and chunk.get("signature") is not None:
            text = "".join(t["text"] for t in chunk["thinking"] if t.get("type") == "text")
            expected = signature(request["model"], request.get("tools"), request["messages"][:index], text)
            if not hmac.compare_digest(expected, chunk["signature"]):
                raise _bad_request(
                    f"messages[{index}].content[{j}]: invalid signature for this thinking chunk and conversation"
                )
    ids = []
    for call in calls:
        call_id = call.get("id")
        if not isinstance(call_id, str) or not TOOL_CALL_ID.fullmatch(call_id):
            raise _bad_request(
                f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9.",
                "invalid_function_call",
                "3280",
            )
        arguments = call["function"]["arguments"]
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                raise _bad_request(f"messages[{index}]: tool call arguments are not valid JSON") from None
        if not isinstance(arguments, dict):
            raise _bad_request(f"messages[{index}]: tool call arguments must be a JSON object")
        ids.append(call_id)
    return ids


def _thinking_chunk(text: str, sign: str | None) -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": "thinking", "thinking": [{"type": "text", "text": text}]}
    if sign is not None:
        chunk["signature"] = sign
    return chunk


def _calls_wire(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}, "index": k}
        for k, (i, n, a) in enumerate(reply.tool_calls)
    ]


def _finish_reason(reply: Reply) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


USAGE = {"prompt_tokens": 31, "completion_tokens": 17, "total_tokens": 48}


def reply_body(model: str, reply: Reply, sign: str | None) -> dict[str, Any]:
    """The non-streamed response to ``reply`` (``sign``: its thinking chunk's signature)."""
    content: Any = reply.content
    if reply.thinking:
        content = [_thinking_chunk(reply.thinking, sign)]
        if reply.content:
            content.append({"type": "text", "text": reply.content})
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reply.tool_calls:
        message["tool_calls"] = _calls_wire(reply)
    return {
        "id": "cmpl-emulated",
        "object": "chat.completion",
        "model": model,
        "created": 1764504000,
        "usage": USAGE,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
    }


def stream_events(model: str, reply: Reply, sign: str | None) -> Iterator[dict[str, Any]]:
    """The chunks of ``reply`` streamed: thinking chunks in a list, the switching
    event with the closing thinking chunk and the first text chunk, then string
    fragments, the tool calls and the finish_reason."""

    def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "cmpl-emulated", "object": "chat.completion.chunk", "model": model, "choices": [choice], **extra}

    yield event({"role": "assistant", "content": ""})
    thinking = _split(reply.thinking)
    text = _split(reply.content)
    for piece in thinking[:-1]:
        yield event({"content": [_thinking_chunk(piece, None)]})
    if thinking:
        switch = [_thinking_chunk(thinking[-1], sign)]
        if text:
            switch.append({"type": "text", "text": text.pop(0)})
        yield event({"content": switch})
    for piece in text:
        yield event({"content": piece})
    if reply.tool_calls:
        yield event({"tool_calls": _calls_wire(reply)})
    if not reply.cut:
        yield event({"content": ""}, _finish_reason(reply), usage=USAGE)


def _split(text: str, count: int = 3) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


class MistralEmulator(ScriptedEmulator[Reply]):
    """Scripted replies behind the enforced chat-completions rules. ``requests``
    holds every body received (as sent), accepted or not."""

    def _handle(self, path: str, headers: dict[str, str], body: Any) -> Answer:
        self.requests.append(body)
        if path != PATH:
            return Answer(404, {"object": "error", "message": "Not Found"})
        if not headers.get("authorization", "").startswith("Bearer "):
            return Answer(401, {"object": "error", "message": "Unauthorized"})
        request = parse_request(body)
        check_request(request)
        if not self.replies:
            return Answer(500, {"object": "error", "message": "emulator: no scripted reply left"})
        reply = self.replies.popleft()
        model = request["model"]
        sign = signature(model, request.get("tools"), request["messages"], reply.thinking) if reply.signed else None
        if not request.get("stream"):
            return Answer(body=reply_body(model, reply, sign))
        lines = [b"data: " + json.dumps(e).encode() + b"\n\n" for e in stream_events(model, reply, sign)]
        if not reply.cut:
            lines.append(b"data: [DONE]\n\n")
        return Answer(lines=lines, content_type="text/event-stream")
