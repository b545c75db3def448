"""A local stand-in for Mistral's ``/v1/chat/completions`` that enforces the
request rules thinkseal relies on, and answers with scripted replies.

Requests are parsed the way the ``mistralai`` SDK models them
(``ChatCompletionRequest``), with unknown fields refused as Mistral's API does
(422). Then, on top of what the models check:

- Mistral's tool-call id rule (docs/providers.md#mistral), with its error text;
- tool messages need ``tool_call_id`` and must answer the calls of the
  assistant turn before them, all of them, before the conversation goes on;
- an assistant message needs text or tool calls; the last message is a user or
  tool message (or an assistant prefix);
- ``reasoning_effort`` and ``prompt_mode`` take only their documented values;
- a thinking chunk with a ``signature`` must carry exactly the signature the
  emulator issued for that text after that very prefix (an HMAC over the
  model, the tools and every earlier message, each read as one spelling:
  ``read_message``), or it is rejected.

Replies are scripted with ``Step`` (thinking signed) or the provider-native
``Reply`` (signed when ``Reply.signed``). Error wording not quoted from
Mistral is the emulator's own. The request is parsed with the ``mistralai``
SDK's model only when that SDK is installed; without it the rules above are
checked on the body as sent.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ._ids import tool_call_id
from ._server import BodyProblem, Emulator, Request, RequestRejected, Response, Step, load_once
from .chat import read_arguments, read_chat_tool, read_text_content

PATH = "/v1/chat/completions"
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
TOOL_CALL_ID = re.compile(r"[A-Za-z0-9]{9}")
SECRET = b"mistral-emulator-signing-key"


def _load_sdk() -> tuple[Any, set[str], dict[str, set[str]]] | None:
    """The mistralai SDK's request model, its fields and each message role's
    fields, or None when the SDK is not installed."""
    try:
        from mistralai.client.models import (  # noqa: PLC0415 (the SDK check runs only when it is installed)
            AssistantMessage,
            ChatCompletionRequest,
            SystemMessage,
            ToolMessage,
            UserMessage,
        )
    except ImportError:
        return None
    fields = {f.alias or n for n, f in ChatCompletionRequest.model_fields.items()}
    messages = {
        cls.model_fields["role"].default: {f.alias or n for n, f in cls.model_fields.items()}
        for cls in (AssistantMessage, SystemMessage, ToolMessage, UserMessage)
    }
    return ChatCompletionRequest, fields, messages


@dataclass
class Reply:
    """A scripted reply. ``signed`` signs its thinking chunk; ``cut`` ends a
    stream without a finish_reason."""

    content: str = ""
    thinking: str = ""
    tool_calls: Sequence[tuple[str, str, dict[str, Any]]] = ()  # id, name, arguments
    signed: bool = False
    cut: bool = False


_sdk = load_once(_load_sdk)


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def read_message(message: Any) -> Any:
    """A chat message as Mistral reads it (docs/providers.md, "Which spellings
    are the same request"): null members and ``prefix: false`` left out,
    content as one spelling (a string as one text chunk, "" as none), each
    tool call by id, name and the value of its arguments."""
    if not isinstance(message, dict):
        return message
    out = {k: v for k, v in message.items() if v is not None and not (k == "prefix" and v is False)}
    if "content" in message:
        out["content"] = read_text_content(message.get("content"))
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [
            {
                "id": call.get("id"),
                "name": (call.get("function") or {}).get("name"),
                "arguments": read_arguments((call.get("function") or {}).get("arguments")),
            }
            if isinstance(call, dict)
            else call
            for call in calls
        ]
        if not out["tool_calls"]:
            del out["tool_calls"]
    return out


def signature(model: str, tools: Any, prefix: list[Any], text: str, secret: bytes = SECRET) -> str:
    """The emulator's signature of thinking ``text`` produced after ``prefix``
    (each message read as ``read_message``)."""
    read_tools = [read_chat_tool(t) for t in tools] if isinstance(tools, list) else tools
    material = canonical(
        {"model": model, "tools": read_tools, "prefix": [read_message(m) for m in prefix], "thinking": text}
    )
    return base64.b64encode(hmac.new(secret, material, hashlib.sha256).digest()).decode()


def _bad_request(message: str, kind: str = "invalid_request_error", code: str | None = None) -> RequestRejected:
    return RequestRejected(400, {"object": "error", "message": message, "type": kind, "param": None, "code": code})


def _unprocessable(loc: list[Any], message: str, kind: str = "value_error") -> RequestRejected:
    return RequestRejected(422, {"object": "error", "detail": [{"type": kind, "loc": ["body", *loc], "msg": message}]})


def parse_request(body: Any) -> dict[str, Any]:
    """``body`` as the SDK's request model reads it (a normalised dict), or
    ``RequestRejected``. Without the mistralai SDK installed, the body is
    taken as it is, after a check of its outline."""
    if not isinstance(body, dict):
        raise _unprocessable([], "Input should be a valid dictionary")
    _check_enums(body)  # before the SDK's model, which reads an unknown value as None
    sdk = _sdk()
    if sdk is None:
        return _outline(body)
    model, fields, message_fields = sdk
    for key in body:
        if key not in fields:
            raise _unprocessable([key], "Extra inputs are not permitted", "extra_forbidden")
    for i, message in enumerate(body.get("messages") or []):
        allowed = message_fields.get(str(message.get("role"))) if isinstance(message, dict) else None
        if allowed is None:
            continue  # the model reports a bad message below
        for key in message:
            if key not in allowed:
                raise _unprocessable(["messages", i, key], "Extra inputs are not permitted", "extra_forbidden")
    try:
        parsed = model.model_validate(body)
    except ValueError as exc:  # pydantic's ValidationError
        raise _unprocessable([], str(exc)) from None
    normalised: dict[str, Any] = parsed.model_dump(by_alias=True, mode="json")
    return normalised


def _outline(body: dict[str, Any]) -> dict[str, Any]:
    """The checks the SDK's model makes that the rules below rely on."""
    if not isinstance(body.get("model"), str):
        raise _unprocessable(["model"], "Field required", "missing")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise _unprocessable(["messages"], "Field required", "missing")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant", "tool"):
            raise _unprocessable(
                ["messages", i], "Input tag found using 'role' does not match any of the expected tags"
            )
        for call in message.get("tool_calls") or []:
            if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
                raise _unprocessable(["messages", i, "tool_calls"], "Input should be a valid dictionary")
    return body


def _check_enums(request: dict[str, Any]) -> None:
    effort = request.get("reasoning_effort")
    if effort is not None and effort not in REASONING_EFFORTS:
        raise _unprocessable(["reasoning_effort"], f"Input should be one of {', '.join(REASONING_EFFORTS)}")
    if request.get("prompt_mode") not in (None, "reasoning"):
        raise _unprocessable(["prompt_mode"], "Input should be 'reasoning'")


def check_request(request: dict[str, Any], secret: bytes = SECRET) -> None:
    """Mistral's rules on a parsed request (see the module docstring)."""
    _check_enums(request)
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
            open_ids = _check_assistant(request, i, secret)
    if open_ids:
        raise _bad_request("Not the same number of function calls and responses")
    last = messages[-1]
    if last["role"] not in ("user", "tool") and not (last["role"] == "assistant" and last.get("prefix")):
        raise _bad_request(
            f"Expected last role User or Tool (or Assistant with prefix True) for serving but got {last['role']}"
        )


def _check_assistant(request: dict[str, Any], index: int, secret: bytes) -> list[str]:
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
            expected = signature(request["model"], request.get("tools"), request["messages"][:index], text, secret)
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


_ERROR_TYPES = {401: "unauthorized", 403: "forbidden", 404: "not_found", 429: "rate_limited"}


class MistralEmulator(Emulator):
    """Scripted replies behind the enforced chat-completions rules. A ``Step``'s
    thinking comes back as a signed thinking chunk; the provider-native
    ``Reply`` (``queue(Reply(...))``) can leave it unsigned or cut a stream."""

    provider = "mistral"

    def __init__(self, *, port: int = 0, require_auth: bool = False) -> None:
        super().__init__(port=port, require_auth=require_auth)
        self._secret = SECRET
        self._count = 0

    @property
    def thinking_options(self) -> Mapping[str, Any]:
        return MappingProxyType({"reasoning_effort": "high"})

    def queue(self, *replies: Reply) -> None:
        """Queue provider-native replies (each answers one request)."""
        with self._lock:
            self._script.extend(replies)

    def _reply(self) -> Reply:
        item = self._take()
        self._count += 1
        if item is None:
            return Reply(content="Done.")
        if isinstance(item, Step):
            calls = [
                (tool_call_id(self.provider, f"{self._count}/{k}/{name}"), name, dict(args))
                for k, (name, args) in enumerate(item.calls)
            ]
            return Reply(content=item.text or "", thinking=item.thinking or "", tool_calls=calls, signed=True)
        assert isinstance(item, Reply)
        return item

    def _rotate(self) -> None:
        self._secret = hashlib.sha256(self._secret + b"/rotated").digest()

    def _error(self, status: int, message: str) -> Response:
        kind = _ERROR_TYPES.get(status, "internal_server_error" if status >= 500 else "invalid_request_error")
        return Response(status, {"object": "error", "message": message, "type": kind, "param": None, "code": None})

    def _authorized(self, request: Request) -> bool:
        value = request.headers.get("authorization", "")
        return value.startswith("Bearer ") and bool(value.removeprefix("Bearer ").strip())

    def _auth_error(self) -> Response:
        return Response(401, {"message": "Unauthorized", "request_id": "emulated"})

    def _serves(self, request: Request) -> bool:
        return request.path.split("?")[0] == PATH

    def _prepare(self) -> None:
        _sdk()

    def _invalid_json(self, problem: BodyProblem) -> Response:
        # Mistral's validation layer reports a body that is not JSON as one
        # more 422 detail; the type and msg are its framework's, not confirmed from Mistral.
        detail = {
            "type": "json_invalid",
            "loc": ["body", problem.position],
            "msg": "JSON decode error",
            "input": {},
            "ctx": {"error": problem.detail},
        }
        return Response(422, {"object": "error", "detail": [detail]})

    def _invalid_shape(self, error: Exception) -> Response:
        detail = f"{type(error).__name__}: {error}"[:300]
        return Response(422, {"object": "error", "detail": [{"type": "value_error", "loc": ["body"], "msg": detail}]})

    def _too_large(self) -> Response:
        return self._error(413, "Request Entity Too Large (emulator wording)")

    def _answer(self, request: Request) -> Response:
        if request.path.split("?")[0] != PATH:
            return Response(404, {"object": "error", "message": "Not Found"})
        request_body = parse_request(request.body)
        with self._lock:
            check_request(request_body, self._secret)
            reply = self._reply()
            model = request_body["model"]
            sign = (
                signature(model, request_body.get("tools"), request_body["messages"], reply.thinking, self._secret)
                if reply.signed and reply.thinking
                else None
            )
        if not request_body.get("stream"):
            return Response(body=reply_body(model, reply, sign))
        lines = [b"data: " + json.dumps(e).encode() + b"\n\n" for e in stream_events(model, reply, sign)]
        if not reply.cut:
            lines.append(b"data: [DONE]\n\n")
        return Response(chunks=lines, content_type="text/event-stream")
