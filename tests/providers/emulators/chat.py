"""A chat-completions emulator for the openrouter, deepseek, zai and openai adapters.

A real HTTP server on 127.0.0.1 (an ephemeral port) that answers
``POST <base path>/chat/completions`` the way each provider does, and rejects,
with the provider's 400 error, every request the provider would reject:

- every provider: a body that does not validate against the ``openai`` SDK's
  request TypedDict once the provider's documented extensions are removed
  (``EXTENSIONS``; extra keys are errors, not ignored); OpenAI's tool pairing
  rule (a tool message must answer a call of the assistant message it follows,
  and every call of an assistant message must be answered by the tool messages
  right after it);
- every provider: content parts of the types and in the roles its
  documentation lists (``CONTENT``): OpenRouter's text, image and file parts in
  user and tool messages (and its audio and video parts), ``cache_control`` on
  text parts and tools; DeepSeek's
  text and image parts in user messages; Z.ai's text, image and ``file_url``
  parts in user messages (not a file with an image), strings elsewhere;
  OpenAI's text, image, audio and file parts in user messages, text elsewhere. Part
  shapes OpenAI's schema has not (Z.ai's ``file_url``, OpenRouter's non-text
  tool-result parts) are checked against the provider's documented shape. The
  error strings of these rules are the emulator's own, marked "(emulator rule)";
- deepseek: in thinking mode (the default), an assistant turn with tool calls
  that lacks ``reasoning_content`` (the V4 error string);
- openrouter: replayed ``reasoning_details`` that differ from what it issued for
  that exact prefix. Like Claude behind OpenRouter, it signs each
  ``reasoning.text`` (``signature``) and ``reasoning.encrypted`` (``data``) item
  over the model, the tools and every message before the turn, and rejects items
  it never issued, items changed, reordered or partly dropped, items replayed to
  another model, and items replayed after their prefix changed;
- openai: nothing beyond OpenAI's schema (so a ``reasoning_content`` sent back is
  refused like any unknown field) and the tool pairing rule; its replies carry
  ``usage.prompt_tokens_details.cached_tokens`` and
  ``completion_tokens_details.reasoning_tokens``, and scripted reasoning comes as
  ``reasoning_content``, the way an OpenAI-compatible server returns it;
- zai: under preserved thinking (``thinking.clear_thinking: false``), an
  assistant turn it issued whose ``reasoning_content`` comes back changed or
  missing. (Z.ai documents this as a requirement but only degrades; the
  emulator is stricter so that a test fails.)

Tests script the model's replies with ``ChatEmulator.reply`` and drive it with
the official ``openai`` SDK (``sdk_create``) or with raw bytes.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import inspect
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import openai
import pydantic_core
from openai.types.chat import ChatCompletionContentPartParam
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from pydantic import TypeAdapter

# -- what each provider adds to OpenAI's request -----------------------------------

# Provider extensions of the request body: top-level fields, and fields of
# assistant messages, that OpenAI's schema does not have. They are removed
# before the body is validated against the openai SDK's request TypedDict.
# Content parts: "part" fields of text parts and "tool" fields of tool
# definitions the provider adds (OpenRouter's cache_control).
EXTENSIONS: dict[str, dict[str, frozenset[str]]] = {
    "deepseek": {"body": frozenset({"thinking"}), "assistant": frozenset({"reasoning_content"})},
    "zai": {
        "body": frozenset({"thinking", "do_sample", "tool_stream", "request_id", "user_id"}),
        "assistant": frozenset({"reasoning_content"}),
    },
    "openai": {"body": frozenset(), "assistant": frozenset()},
    "openrouter": {
        "body": frozenset({"reasoning", "include_reasoning", "provider", "transforms", "models", "usage", "top_k"}),
        "assistant": frozenset({"reasoning", "reasoning_details", "annotations"}),
        "part": frozenset({"cache_control"}),
        "tool": frozenset({"cache_control"}),
    },
}

# The content-part types each provider documents, per role; a role missing
# from a provider's table takes a string only.
CONTENT: dict[str, dict[str, frozenset[str]]] = {
    "openrouter": {
        "system": frozenset({"text"}),
        "user": frozenset({"text", "image_url", "file", "input_audio", "video_url", "input_video"}),
        "tool": frozenset({"text", "image_url", "file", "input_audio", "video_url", "input_video"}),
        "assistant": frozenset({"text"}),
    },
    "deepseek": {
        "system": frozenset({"text"}),
        "user": frozenset({"text", "image_url"}),
        "tool": frozenset({"text"}),
        "assistant": frozenset({"text"}),
    },
    "zai": {"user": frozenset({"text", "image_url", "video_url", "file_url"})},
    "openai": {
        "system": frozenset({"text"}),
        "user": frozenset({"text", "image_url", "input_audio", "file"}),
        "tool": frozenset({"text"}),
        "assistant": frozenset({"text", "refusal"}),
    },
}
CACHE_CONTROL_TTLS = ("5m", "1h")

# Base path of each provider's documented base URL (the adapter's path is relative to it).
BASE_PATHS = {"deepseek": "", "zai": "/api/paas/v4", "openrouter": "/api/v1", "openai": "/v1"}

DEEPSEEK_MISSING_REASONING = "The `reasoning_content` in the thinking mode must be passed back to the API."
OPENAI_UNANSWERED_CALLS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
OPENAI_ORPHAN_TOOL = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
)
ANTHROPIC_INVALID_SIGNATURE = "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
ANTHROPIC_BOUND_ELSEWHERE = (
    "messages.{i}.content.{j}: Invalid `signature` in `thinking` block. The block is bound to a different conversation."
)
ANTHROPIC_MODIFIED = (
    "messages.{i}.content.{j}: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be "
    "modified. These blocks must remain as they were in the original response."
)
ZAI_PRESERVED_CHANGED = (
    "messages.{i}.reasoning_content: preserved thinking needs the complete, unmodified reasoning_content"
    " (emulator rule)"
)


# -- the openai SDK's request schema, strict ---------------------------------------------


def _forbid_extra(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "typed-dict":
            node["extra_behavior"] = "forbid"
        for value in node.values():
            _forbid_extra(value)
    elif isinstance(node, list):
        for value in node:
            _forbid_extra(value)


def _strict(typed_dict: Any) -> pydantic_core.SchemaValidator:
    """A validator of ``typed_dict`` that rejects unknown keys at every level
    (pydantic ignores them in TypedDicts by default, which would hide a typo)."""
    schema = copy.deepcopy(TypeAdapter(typed_dict).core_schema)
    _forbid_extra(schema)
    return pydantic_core.SchemaValidator(schema)


_NON_STREAMING = _strict(CompletionCreateParamsNonStreaming)
_STREAMING = _strict(CompletionCreateParamsStreaming)


def _drain(value: Any) -> Any:
    # Iterable[...] fields validate lazily: iterate them so their errors surface.
    if isinstance(value, Mapping):
        return {k: _drain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, Iterator)) or type(value).__name__ == "ValidatorIterator":
        return [_drain(v) for v in value]
    return value


_USER_PART = _strict(ChatCompletionContentPartParam)


def _without(value: Any, fields: frozenset[str]) -> Any:
    return {k: v for k, v in value.items() if k not in fields} if isinstance(value, Mapping) and fields else value


def _sdk_content(message: Mapping[str, Any], provider: str, errors: list[str], where: str) -> Any:
    """A message's content as the openai SDK's type sees it: text parts without
    the provider's extension fields; parts OpenAI's type for the role has not
    (Z.ai's file_url, OpenRouter's non-text tool-result parts) checked here
    against the provider's documented shape and left out."""
    content = message.get("content")
    if not isinstance(content, list):
        return content
    ext = EXTENSIONS[provider].get("part", frozenset())
    kept = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            kept.append(_without(part, ext))
        elif provider == "zai" and kind in ("file_url", "video_url"):
            inner = part.get(kind)
            if set(part) != {"type", kind} or not isinstance(inner, Mapping) or set(inner) != {"url"}:
                errors.append(f"{where}.content.{j}: expected {{'type': {kind!r}, {kind!r}: {{'url': ...}}}}")
            elif not isinstance(inner["url"], str):
                errors.append(f"{where}.content.{j}.{kind}.url: expected a string")
        elif provider == "openrouter" and message.get("role") == "tool":
            try:
                _USER_PART.validate_python(part)
            except pydantic_core.ValidationError as exc:
                errors.append(f"{where}.content.{j}: {exc}")
        else:
            kept.append(part)
    return kept or ""


def without_extensions(body: Mapping[str, Any], provider: str, errors: list[str] | None = None) -> dict[str, Any]:
    """``body`` minus the provider's documented extensions (``EXTENSIONS``), with
    content parts OpenAI's types have not checked into ``errors``."""
    ext = EXTENSIONS[provider]
    problems: list[str] = [] if errors is None else errors
    out = {k: v for k, v in body.items() if k not in ext["body"]}
    messages = []
    for i, message in enumerate(body.get("messages", [])):
        m = message
        if isinstance(m, Mapping) and m.get("role") == "assistant":
            m = {k: v for k, v in m.items() if k not in ext["assistant"]}
        if isinstance(m, Mapping) and isinstance(m.get("content"), list):
            m = {**m, "content": _sdk_content(m, provider, problems, f"messages.{i}")}
        messages.append(m)
    out["messages"] = messages
    if "tools" in body and isinstance(body["tools"], list):
        out["tools"] = [_without(t, ext.get("tool", frozenset())) for t in body["tools"]]
    return out


def sdk_request_errors(body: Mapping[str, Any], provider: str) -> str | None:
    """Why ``body`` does not validate against the openai SDK's request TypedDict
    (provider extensions removed), or None when it does."""
    validator = _STREAMING if body.get("stream") else _NON_STREAMING
    errors: list[str] = []
    try:
        _drain(validator.validate_python(without_extensions(body, provider, errors)))
    except pydantic_core.ValidationError as exc:
        errors.append(str(exc))
    return "; ".join(errors) or None


def content_errors(body: Mapping[str, Any], provider: str) -> str | None:
    """The first content part the provider does not document for its message's
    role (``CONTENT``), or a cache mark it does not take, as the emulator's error."""
    table = CONTENT[provider]
    for i, message in enumerate(body.get("messages") or []):
        role = message.get("role")
        content = message.get("content")
        if not isinstance(content, list):
            continue
        allowed = table.get(role)
        if allowed is None:
            return f"messages.{i}.content: a {role} message takes a string (emulator rule)"
        kinds = [part.get("type") if isinstance(part, dict) else None for part in content]
        for j, kind in enumerate(kinds):
            if kind not in allowed:
                return (
                    f"messages.{i}.content.{j}: {provider} takes no {kind!r} part in a {role} message (emulator rule)"
                )
            mark = content[j].get("cache_control")
            if mark is not None and not isinstance(mark, dict):
                return f"messages.{i}.content.{j}.cache_control: expected an object (emulator rule)"
            if mark is not None and (
                mark.get("type") != "ephemeral" or mark.get("ttl", "5m") not in CACHE_CONTROL_TTLS
            ):
                return f"messages.{i}.content.{j}.cache_control: expected ephemeral, ttl 5m or 1h (emulator rule)"
        if provider == "zai" and "file_url" in kinds and {"image_url", "video_url"} & set(kinds):
            return f"messages.{i}.content: file_url cannot be passed with image_url or video_url (emulator rule)"
    return None


# -- driving it with the SDK --------------------------------------------------------------

# Arguments of an SDK method that are not body fields.
_NOT_BODY = frozenset({"self", "extra_body", "extra_headers", "extra_query", "timeout"})


def sdk_call(create: Callable[..., Any], body: Mapping[str, Any]) -> Any:
    """The SDK method ``create`` with ``body``: the fields it knows as arguments,
    anything else (a provider's own fields) through ``extra_body``."""
    known_names = frozenset(inspect.signature(create).parameters) - _NOT_BODY
    known = {k: v for k, v in body.items() if k in known_names}
    extra = {k: v for k, v in body.items() if k not in known_names}
    return create(**known, extra_body=extra or None)


def sdk_create(client: openai.OpenAI, body: Mapping[str, Any]) -> Any:
    """``client.chat.completions.create`` with ``body`` (see ``sdk_call``)."""
    return sdk_call(client.chat.completions.create, body)


# -- scripted replies ----------------------------------------------------------------------


@dataclass
class Turn:
    """One scripted model reply."""

    content: str | None = None
    reasoning: str | None = None
    tool_calls: Sequence[tuple[str, str, Mapping[str, Any]]] = ()
    encrypted: bool = False  # openrouter: add a reasoning.encrypted item after the text item
    annotations: Sequence[Mapping[str, Any]] = ()  # openrouter: message.annotations (url citations)


@dataclass
class _Issued:
    reply: str  # the signature of the first item of the turn
    position: int
    count: int
    item: bytes
    model: str
    prefix: bytes


@dataclass
class Received:
    path: str
    raw: bytes
    body: Any


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _pieces(text: str, n: int = 3) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass
class _State:
    replies: deque[Turn] = field(default_factory=deque)
    issued: dict[str, _Issued] = field(default_factory=dict)  # openrouter: signature or data -> record
    reasoning_by_turn: dict[tuple[str, tuple[str, ...]], str] = field(default_factory=dict)  # zai
    requests: list[Received] = field(default_factory=list)
    count: int = 0


class LocalServer:
    """A real HTTP server on 127.0.0.1 (an ephemeral port) that answers each POST
    with ``answer(path, body bytes, headers)``: (status, payload, whether it is
    an SSE stream). ``base_url`` is the server's address and ``base_path``."""

    base_path = ""

    def __init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None

    def answer(self, path: str, raw: bytes, headers: Mapping[str, str]) -> tuple[int, bytes, bool]:
        raise NotImplementedError

    def start(self) -> Self:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, payload, sse = server.answer(self.path, raw, self.headers)
                self.send_response(status)
                self.send_header("Content-Type", "text/event-stream" if sse else "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The provider's base URL on this server (give it to ``openai.OpenAI``)."""
        assert self._server is not None, "emulator not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.base_path}"

    def url(self, path: str) -> str:
        return self.base_url + path


class ChatEmulator(LocalServer):
    """The emulated provider ``provider`` ("openrouter", "deepseek", "zai" or "openai")."""

    def __init__(self, provider: str) -> None:
        if provider not in BASE_PATHS:
            raise ValueError(provider)
        super().__init__()
        self.provider = provider
        self.base_path = BASE_PATHS[provider]
        self._secret = b"emulator-secret-" + provider.encode()
        self._state = _State()
        self._lock = threading.Lock()

    def answer(self, path: str, raw: bytes, headers: Mapping[str, str]) -> tuple[int, bytes, bool]:
        return self.handle(path, raw)

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.base_url, api_key="test", max_retries=0)

    # -- scripting and inspection ---------------------------------------------

    def reply(self, turn: Turn | None = None, /, **fields: Any) -> None:
        """Queue the model's next reply (``Turn`` fields as keywords)."""
        with self._lock:
            self._state.replies.append(turn or Turn(**fields))

    @property
    def requests(self) -> list[Received]:
        with self._lock:
            return list(self._state.requests)

    # -- the provider --------------------------------------------------------------

    def handle(self, path: str, raw: bytes) -> tuple[int, bytes, bool]:
        with self._lock:
            if path != BASE_PATHS[self.provider] + "/chat/completions":
                return 404, _canonical({"error": {"message": f"no route {path}", "code": 404}}), False
            try:
                body = json.loads(raw)
            except ValueError as exc:
                return self._error(f"invalid JSON body: {exc}")
            self._state.requests.append(Received(path, raw, body))
            problem = self._check(body)
            if problem is not None:
                return self._error(problem)
            turn = self._state.replies.popleft() if self._state.replies else Turn(content="ok")
            response = self._respond(body, turn)
            if body.get("stream"):
                return 200, self._sse(body, response), True
            return 200, _canonical(response), False

    def _error(self, message: str) -> tuple[int, bytes, bool]:
        error = {"message": message, "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}
        return 400, _canonical({"error": error}), False

    def _check(self, body: Any) -> str | None:
        if not isinstance(body, dict):
            return "the body must be a JSON object"
        messages = body.get("messages")
        if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
            problem = content_errors(body, self.provider)  # the provider's own content rules first
            if problem is not None:
                return problem
        errors = sdk_request_errors(body, self.provider)
        if errors is not None:
            return f"the body does not match the chat-completions schema: {errors}"
        problem = _check_pairing(body["messages"])
        if problem is not None:
            return problem
        if self.provider == "deepseek":
            return self._check_deepseek(body)
        if self.provider == "openrouter":
            return self._check_openrouter(body)
        if self.provider == "openai":
            return None  # OpenAI's own rules are its schema and the pairing above
        return self._check_zai(body)

    def _check_deepseek(self, body: dict[str, Any]) -> str | None:
        if (body.get("thinking") or {}).get("type") == "disabled":
            return None
        for message in body["messages"]:
            if message["role"] == "assistant" and message.get("tool_calls") and "reasoning_content" not in message:
                return DEEPSEEK_MISSING_REASONING
        return None

    def _check_zai(self, body: dict[str, Any]) -> str | None:
        if (body.get("thinking") or {}).get("clear_thinking") is not False:
            return None  # standard endpoint default: earlier reasoning is cleared anyway
        for i, message in enumerate(body["messages"]):
            if message["role"] != "assistant":
                continue
            issued = self._state.reasoning_by_turn.get(_turn_key(message))
            if issued is not None and message.get("reasoning_content") != issued:
                return ZAI_PRESERVED_CHANGED.format(i=i)
        return None

    def _check_openrouter(self, body: dict[str, Any]) -> str | None:
        messages = body["messages"]
        for i, message in enumerate(messages):
            details = message.get("reasoning_details") if message["role"] == "assistant" else None
            if details is None:
                continue
            if not isinstance(details, list):
                return f"messages.{i}.reasoning_details: expected an array"
            first: _Issued | None = None
            for j, item in enumerate(details):
                token = item.get("signature") or item.get("data") if isinstance(item, dict) else None
                record = self._state.issued.get(token) if isinstance(token, str) else None
                if record is None or record.model != body["model"]:
                    return ANTHROPIC_INVALID_SIGNATURE.format(i=i, j=j)
                first = first or record
                if (
                    _canonical(item) != record.item
                    or record.reply != first.reply
                    or record.position != j
                    or len(details) != record.count
                ):
                    return ANTHROPIC_MODIFIED.format(i=i, j=j)
                if record.prefix != self._prefix(body, i):
                    return ANTHROPIC_BOUND_ELSEWHERE.format(i=i, j=j)
        return None

    def _prefix(self, body: Mapping[str, Any], end: int) -> bytes:
        """What OpenRouter's upstream signs a turn's thinking over: the model,
        the tools and every message before the turn."""
        return hashlib.sha256(
            _canonical({"model": body["model"], "tools": body.get("tools"), "messages": body["messages"][:end]})
        ).digest()

    def _sign(self, *parts: bytes) -> str:
        return base64.b64encode(hmac.new(self._secret, b"\x00".join(parts), hashlib.sha256).digest()).decode()

    # -- replies ---------------------------------------------------------------------

    def _respond(self, body: Mapping[str, Any], turn: Turn) -> dict[str, Any]:
        self._state.count += 1
        n = self._state.count
        message: dict[str, Any] = {"role": "assistant", "content": turn.content or ""}
        if self.provider == "openrouter":
            message["refusal"] = None
            message["reasoning"] = turn.reasoning
            details = self._details(body, turn)
            if details:
                message["reasoning_details"] = details
            if turn.annotations:
                message["annotations"] = [dict(a) for a in turn.annotations]
        elif turn.reasoning is not None:
            message["reasoning_content"] = turn.reasoning
        if turn.tool_calls:
            message["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for cid, name, args in turn.tool_calls
            ]
        if self.provider == "zai" and turn.reasoning:
            self._state.reasoning_by_turn[_turn_key(message)] = turn.reasoning
        choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "finish_reason": "tool_calls" if turn.tool_calls else "stop",
        }
        if self.provider == "openrouter":
            choice["native_finish_reason"] = "tool_use" if turn.tool_calls else "end_turn"  # an unknown extra field
        usage: dict[str, Any] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if self.provider == "openai":
            usage["prompt_tokens_details"] = {"cached_tokens": 4, "audio_tokens": 0}
            usage["completion_tokens_details"] = {"reasoning_tokens": 3, "audio_tokens": 0}
        return {
            "id": f"chatcmpl-{self.provider}-{n}",
            "object": "chat.completion",
            "created": 1767225600 + n,
            "model": body["model"],
            "choices": [choice],
            "usage": usage,
        }

    def _details(self, body: Mapping[str, Any], turn: Turn) -> list[dict[str, Any]]:
        if not turn.reasoning:
            return []
        prefix = self._prefix(body, len(body["messages"]))
        count = 2 if turn.encrypted else 1

        def sign(*parts: bytes) -> str:
            # Over the prefix, the item and how many items the turn has, so the
            # same reply to the same request gets the same items.
            return self._sign(prefix, str(count).encode(), *parts)

        items: list[dict[str, Any]] = [
            {
                "type": "reasoning.text",
                "text": turn.reasoning,
                "signature": sign(b"text", turn.reasoning.encode()),
                "format": "anthropic-claude-v1",
                "index": 0,
            }
        ]
        if turn.encrypted:
            items.append(
                {
                    "type": "reasoning.encrypted",
                    "data": sign(b"encrypted", turn.reasoning.encode()),
                    "id": "rs_" + sign(b"id")[:12],
                    "format": "anthropic-claude-v1",
                    "index": 1,
                }
            )
        group = items[0]["signature"]
        for position, item in enumerate(items):
            token = item.get("signature") or item["data"]
            self._state.issued[token] = _Issued(group, position, count, _canonical(item), body["model"], prefix)
        return items

    def _sse(self, body: Mapping[str, Any], response: Mapping[str, Any]) -> bytes:
        events = [*self._chunks(response)]
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**_chunk_base(response), "choices": [], "usage": response["usage"]})
        lines = [b"data: " + _canonical(e) + b"\n\n" for e in events]
        if self.provider == "openrouter":
            lines.insert(0, b": OPENROUTER PROCESSING\n\n")
        return b"".join(lines) + b"data: [DONE]\n\n"

    def _chunks(self, response: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """The streamed form of ``response``, split the way the provider streams."""
        base = _chunk_base(response)
        choice = response["choices"][0]
        message = choice["message"]

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        yield chunk({"role": "assistant", "content": ""})
        if self.provider == "openrouter":
            details = message.get("reasoning_details") or []
            text_item = details[0] if details else None
            for piece in _pieces(message.get("reasoning") or ""):
                delta: dict[str, Any] = {"content": "", "reasoning": piece}
                if text_item is not None:
                    delta["reasoning_details"] = [
                        {"type": "reasoning.text", "text": piece, "format": text_item["format"], "index": 0}
                    ]
                yield chunk(delta)
            if text_item is not None:
                # The signature arrives alone, in a text-less fragment of the same item.
                signature = {"type": "reasoning.text", "text": "", "signature": text_item["signature"]}
                yield chunk({"reasoning_details": [{**signature, "format": text_item["format"], "index": 0}]})
            for item in details[1:]:
                yield chunk({"reasoning_details": [item]})
        else:
            for piece in _pieces(message.get("reasoning_content") or ""):
                yield chunk({"reasoning_content": piece, "content": None})
        for piece in _pieces(message.get("content") or ""):
            yield chunk({"content": piece})
        if message.get("annotations"):
            yield chunk({"annotations": message["annotations"]})
        for k, call in enumerate(message.get("tool_calls") or []):
            function = call["function"]
            start = {
                "index": k,
                "id": call["id"],
                "type": "function",
                "function": {"name": function["name"], "arguments": ""},
            }
            yield chunk({"tool_calls": [start]})
            for piece in _pieces(function["arguments"]):
                yield chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
        yield chunk({}, choice["finish_reason"])


def _chunk_base(response: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": response["id"],
        "object": "chat.completion.chunk",
        "created": response["created"],
        "model": response["model"],
    }


def _turn_key(message: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    calls = tuple(c.get("id", "") for c in message.get("tool_calls") or [])
    return (message.get("content") or "", calls)


def _check_pairing(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """OpenAI's rule: the tool messages right after an assistant message answer
    each of its calls, and a tool message answers a call of that message."""
    open_calls: set[str] = set()
    pending: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                return OPENAI_ORPHAN_TOOL
            open_calls.discard(call_id)
            continue
        if open_calls:
            return OPENAI_UNANSWERED_CALLS.format(ids=", ".join(c for c in pending if c in open_calls))
        if role == "assistant":
            pending = [c["id"] for c in message.get("tool_calls") or []]
            open_calls = set(pending)
    if open_calls:
        return OPENAI_UNANSWERED_CALLS.format(ids=", ".join(c for c in pending if c in open_calls))
    return None


# -- test support shared by the chat-provider tests ------------------------------------------

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(provider: str, name: str) -> Any:
    """A recorded response (``<name>.json``) or stream (``<name>.stream.json``)."""
    return json.loads((FIXTURES / provider / f"{name}.json").read_text(encoding="utf-8"))


def check_request(req: Any, provider: str) -> dict[str, Any]:
    """The checks every prepared request must pass: its bytes are its body, the
    path is the provider's, and the body validates against the openai SDK's
    request type once the provider's extensions (``EXTENSIONS``) are removed."""
    assert json.loads(req.content) == req.body
    assert req.path == "/chat/completions"
    errors = sdk_request_errors(req.body, provider)
    assert errors is None, errors
    return dict(req.body)
