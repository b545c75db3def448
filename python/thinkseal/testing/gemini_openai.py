"""An emulator of Gemini's OpenAI-compatible endpoint for the gemini-openai adapter.

A real HTTP server on 127.0.0.1 that answers ``POST /v1beta/openai/chat/completions``
(base URL ``<server>/v1beta/openai``) the way Gemini's compatibility layer
does: it reads the chat request as Gemini ``contents`` and applies the
``generateContent`` rules of ``thinkseal.testing.gemini`` to them, answering
with Gemini's own error strings in the layer's error body, a list:
``[{"error": {"code": 400, "message", "status": "INVALID_ARGUMENT"}}]``.

- The request: a body that does not validate against the ``openai`` SDK's
  request TypedDict once Google's extensions are removed (``extra_body`` at the
  top, ``extra_content`` on assistant messages and tool calls); a
  ``reasoning_effort`` together with ``extra_body.google.thinking_config``
  (Google: they overlap and cannot be used at the same time; the wording is the
  emulator's); a ``thinking_config`` with both a budget and a level (Gemini's
  ``BOTH_BUDGET_AND_LEVEL``).
- How messages become contents (the layer's mapping is not documented; this is
  the emulator's reading): system messages the ``systemInstruction``; an
  assistant message one ``model`` content, its text one part carrying the
  message's ``extra_content.google.thought_signature``, each tool call a
  ``functionCall`` part carrying its own; tool messages ``functionResponse``
  parts (named after the call they answer); user content text and
  ``inlineData`` parts; consecutive messages of one role one content.
- Then Gemini's rules on those contents: every signature verified against
  what it was issued over (``CORRUPTED``; the emulator signs over this
  endpoint, the model, the bearer key, the system instruction, the tools, the
  contents before the reply and the parts before the signed one, so no
  signature of the ``gemini`` emulator verifies here), Gemini 3's rule that the
  first function call of each model content in the current turn carries a
  signature (``MISSING``; Google's dummy signatures pass), and call/response
  pairing (``PAIRING``, ``FC_POSITION``).
- Replies, scripted with ``Step`` or ``thinkseal.testing.gemini.Reply``: the
  signature on the first tool call (``tool_calls[0].extra_content``), or on
  the message (``message.extra_content``) of a reply without calls; with
  ``include_thoughts`` the thought summary as a leading ``<thought>…</thought>``
  in the content (how the layer has been seen to return it; the signature
  covers the answer text only: an emulator assumption). Streams are
  ``chat.completion.chunk`` events ending with ``data: [DONE]``: the text in
  fragments, each tool call whole in one delta, the message's signature on the
  last text delta.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ._ids import random_part
from ._server import Emulator, Request, RequestRejected, Response, Step
from .chat import Validate, strict_validator
from .gemini import _GOOGLE_STATUS, Reply, Signer, check_request

if TYPE_CHECKING:
    import openai

BASE_PATH = "/v1beta/openai"
EFFORT_WITH_THINKING_CONFIG = (
    "reasoning_effort and extra_body.google.thinking_config cannot be used at the same time (emulator rule)"
)
THOUGHT_OPEN = "<thought>"
THOUGHT_CLOSE = "</thought>"

# What Google adds to OpenAI's request: removed before the SDK's schema is checked.
_BODY_EXTENSIONS = frozenset({"extra_body"})
_MESSAGE_EXTENSIONS = frozenset({"extra_content"})


def _load_validators() -> tuple[Validate, Validate] | None:
    try:
        from openai.types.chat.completion_create_params import (  # noqa: PLC0415 (optional SDK)
            CompletionCreateParamsNonStreaming,
            CompletionCreateParamsStreaming,
        )
    except ImportError:
        return None
    return strict_validator(CompletionCreateParamsNonStreaming), strict_validator(CompletionCreateParamsStreaming)


_VALIDATORS: list[tuple[Validate, Validate] | None] = []


def without_extensions(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` without Google's extension fields."""
    out = {k: v for k, v in body.items() if k not in _BODY_EXTENSIONS}
    messages = []
    for message in body.get("messages") or []:
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            plain = {k: v for k, v in message.items() if k not in _MESSAGE_EXTENSIONS}
            calls = plain.get("tool_calls")
            if isinstance(calls, list):
                plain["tool_calls"] = [
                    {k: v for k, v in c.items() if k not in _MESSAGE_EXTENSIONS} if isinstance(c, Mapping) else c
                    for c in calls
                ]
            messages.append(plain)
        else:
            messages.append(message)
    out["messages"] = messages
    return out


def sdk_request_errors(body: Mapping[str, Any]) -> str | None:
    """Why ``body`` does not validate against the openai SDK's request
    TypedDict (Google's extensions removed, unknown keys refused), or None
    (also when the openai SDK is not installed)."""
    if not _VALIDATORS:
        _VALIDATORS.append(_load_validators())
    validators = _VALIDATORS[0]
    if validators is None:
        return None
    try:
        (validators[1] if body.get("stream") else validators[0])(without_extensions(body))
    except ValueError as exc:
        return str(exc)
    return None


def _rejected(message: str, code: int = 400) -> RequestRejected:
    return RequestRejected(code, {"error": {"code": code, "message": message, "status": _GOOGLE_STATUS[code]}})


def _signature(holder: Mapping[str, Any]) -> Any:
    extra = holder.get("extra_content")
    google = extra.get("google") if isinstance(extra, Mapping) else None
    return google.get("thought_signature") if isinstance(google, Mapping) else None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(p.get("text", "") for p in parts if isinstance(p, Mapping) and p.get("type") == "text")


def _user_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text":
            parts.append({"text": part.get("text")})
        elif part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            head, _, data = url.partition(",")
            if not head.startswith("data:") or not head.endswith(";base64"):
                raise _rejected("Only base64 data: URLs are supported for image_url (emulator rule)")
            parts.append({"inlineData": {"mimeType": head[5:-7], "data": data}})
    return parts


def as_contents(messages: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system instruction parts, contents) of chat ``messages`` (see the module docstring)."""
    system: list[dict[str, Any]] = []
    contents: list[dict[str, Any]] = []
    names: dict[Any, Any] = {}  # tool call id -> name, of the last assistant message
    for message in messages:
        role = message.get("role")
        parts: list[dict[str, Any]]
        if role in ("system", "developer"):
            system.append({"text": _text(message.get("content"))})
            continue
        if role == "assistant":
            parts = []
            text = _text(message.get("content"))
            signature = _signature(message)
            if text or signature:
                parts.append({"text": text, **({"thoughtSignature": signature} if signature else {})})
            names = {}
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                try:
                    args = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    raise _rejected(f"Invalid JSON in function arguments: {function.get('arguments')!r}") from None
                names[call.get("id")] = function.get("name")
                fc = {"id": call.get("id"), "name": function.get("name"), "args": args}
                part: dict[str, Any] = {"functionCall": fc}
                if _signature(call):
                    part["thoughtSignature"] = _signature(call)
                parts.append(part)
            kind = "model"
        elif role == "tool":
            call_id = message.get("tool_call_id")
            output = {"output": _text(message.get("content"))}
            response = {"id": call_id, "name": names.get(call_id), "response": output}
            parts, kind = [{"functionResponse": response}], "user"
        else:
            parts, kind = _user_parts(message.get("content")), "user"
        if contents and contents[-1]["role"] == kind:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": kind, "parts": parts})
    return system, contents


def _thinking_config(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    extra = body.get("extra_body")
    google = extra.get("google") if isinstance(extra, Mapping) else None
    config = google.get("thinking_config") if isinstance(google, Mapping) else None
    return config if isinstance(config, Mapping) else None


class GeminiOpenAIEmulator(Emulator):
    """Gemini's OpenAI-compatible chat completions, as far as thought
    signatures, thinking options and tool pairing go. The bearer key is the
    account. Script with ``Step``, or ``queue(Reply(...))`` (``thinkseal.testing.gemini.Reply``)."""

    provider = "gemini-openai"
    base_path = BASE_PATH

    def __init__(self, *, port: int = 0, require_auth: bool = False) -> None:
        super().__init__(port=port, require_auth=require_auth)
        self._secret = b"gemini-openai-emulator-secret"
        self._count = 0

    @property
    def thinking_options(self) -> Mapping[str, Any]:
        config = {"thinking_level": "high", "include_thoughts": True}
        return MappingProxyType({"extra_body": {"google": {"thinking_config": config}}})

    def client(self, key: str = "test-key") -> openai.OpenAI:
        """An ``openai.OpenAI`` client of this server (needs the openai SDK)."""
        import openai  # noqa: PLC0415 (the SDK is optional)

        return openai.OpenAI(base_url=self.base_url, api_key=key, max_retries=0)

    def queue(self, *replies: Reply) -> None:
        """Queue provider-native replies (each answers one request)."""
        with self._lock:
            self._script.extend(replies)

    def _reply(self) -> Reply:
        item = self._take()
        if item is None:
            return Reply(text="Done.")
        if isinstance(item, Step):
            return Reply(thought=item.thinking or "", text=item.text or "", calls=list(item.calls), ids=True)
        assert isinstance(item, Reply)
        return item

    def _rotate(self) -> None:
        self._secret = hashlib.sha256(self._secret + b"/rotated").digest()

    def _error(self, status: int, message: str) -> Response:
        google = _GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
        return Response(status, [{"error": {"code": status, "message": message, "status": google}}])

    def _authorized(self, request: Request) -> bool:
        value = request.headers.get("authorization", "")
        return value.startswith("Bearer ") and bool(value.removeprefix("Bearer ").strip())

    def _auth_error(self) -> Response:
        return self._error(401, "API key not valid. Please pass a valid API key.")

    def _answer(self, request: Request) -> Response:
        if request.path.split("?")[0] != BASE_PATH + "/chat/completions":
            return self._error(404, f"Method not found: {request.path}")
        try:
            return self._complete(request)
        except RequestRejected as rejected:
            return Response(rejected.status, [rejected.body])

    def _complete(self, request: Request) -> Response:
        body = request.body
        if not isinstance(body, dict):
            raise _rejected("Invalid JSON payload received. Expected an object.")
        errors = sdk_request_errors(body)
        if errors is not None:
            raise _rejected(f"Invalid JSON payload received. {errors}")
        config = _thinking_config(body)
        if config is not None and body.get("reasoning_effort") is not None:
            raise _rejected(EFFORT_WITH_THINKING_CONFIG)
        system, contents = as_contents(body["messages"])
        native: dict[str, Any] = {"contents": contents}
        if system:
            native["systemInstruction"] = {"parts": system}
        if body.get("tools"):
            native["tools"] = body["tools"]
        if config is not None:
            thinking = {"thinkingBudget": config.get("thinking_budget"), "thinkingLevel": config.get("thinking_level")}
            native["generationConfig"] = {"thinkingConfig": {k: v for k, v in thinking.items() if v is not None}}
        account = "openai-compat/" + request.headers.get("authorization", "")
        with self._lock:
            signer = Signer("gemini", body["model"], account, native, self._secret)
            check_request(native, signer)
            reply = self._reply()
            self._count += 1
            number = self._count
        thoughts = config is not None and config.get("include_thoughts") is True
        response = self._response(body["model"], number, reply, signer, contents, thoughts)
        if not body.get("stream"):
            return Response(body=response)
        events = list(_chunks(response, cut=reply.cut))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**_chunk_base(response), "choices": [], "usage": response["usage"]})
        lines = [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events]
        if not reply.cut:
            lines.append(b"data: [DONE]\n\n")
        return Response(chunks=lines, content_type="text/event-stream")

    def _response(
        self, model: str, number: int, reply: Reply, signer: Signer, contents: list[Any], thoughts: bool
    ) -> dict[str, Any]:
        """The reply as a chat completion, signed as Gemini would sign its parts."""
        parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
        calls = []
        for k, (name, args) in enumerate(reply.calls):
            call_id = "function-call-" + random_part(f"{number}/{k}/{name}", 20, "0123456789")
            calls.append((call_id, name, dict(args)))
            parts.append({"functionCall": {"id": call_id, "name": name, "args": dict(args)}})
        message: dict[str, Any] = {"role": "assistant"}
        thought = f"{THOUGHT_OPEN}{reply.thought}{THOUGHT_CLOSE}" if thoughts and reply.thought else ""
        message["content"] = thought + reply.text if thought or reply.text else None
        signed = next((j for j, p in enumerate(parts) if "functionCall" in p), len(parts) - 1)
        signature = signer.sign(contents, parts[:signed], parts[signed]) if parts else None
        wires = []
        for k, (call_id, name, args) in enumerate(calls):
            wire: dict[str, Any] = {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            if k == 0 and signature is not None:  # Gemini 3 signs the first call of a reply
                wire["extra_content"] = {"google": {"thought_signature": signature}}
            wires.append(wire)
        if wires:
            message["tool_calls"] = wires
        elif signature is not None:
            message["extra_content"] = {"google": {"thought_signature": signature}}
        return {
            "id": base64.urlsafe_b64encode(hashlib.sha256(f"{model}/{number}".encode()).digest()[:12]).decode(),
            "object": "chat.completion",
            "created": 1767225600 + number,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if wires else "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 37, "total_tokens": 49},
        }


def _chunk_base(response: Mapping[str, Any]) -> dict[str, Any]:
    fields = ("id", "created", "model")
    return {"object": "chat.completion.chunk", **{name: response[name] for name in fields}}


def _pieces(text: str, n: int = 3) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _chunks(response: Mapping[str, Any], *, cut: bool = False) -> Iterator[dict[str, Any]]:
    """``response`` streamed: the text in fragments (the message's signature on
    the last), each tool call whole, the finishing chunk last (none when ``cut``)."""
    base = _chunk_base(response)
    choice = response["choices"][0]
    message = copy.deepcopy(choice["message"])

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    pieces = _pieces(message.get("content") or "")
    for k, piece in enumerate(pieces):
        delta: dict[str, Any] = {"content": piece, "role": "assistant"}
        if k == len(pieces) - 1 and "extra_content" in message:
            delta["extra_content"] = message["extra_content"]
        yield chunk(delta)
    for k, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"role": "assistant", "tool_calls": [{**call, "index": k}]})
    if not cut:
        yield {**chunk({}, choice["finish_reason"]), "usage": response["usage"]}
