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
  over the model, the tools and every message before the turn (read as one
  spelling: ``read_chat_message``), and rejects items it never issued, items
  changed, reordered or partly dropped, items replayed to another model, and
  items replayed after their prefix changed;
- openai: nothing beyond OpenAI's schema (so a ``reasoning_content`` sent back is
  refused like any unknown field) and the tool pairing rule; its replies carry
  ``usage.prompt_tokens_details.cached_tokens`` and
  ``completion_tokens_details.reasoning_tokens``, and scripted reasoning comes as
  ``reasoning_content``, the way an OpenAI-compatible server returns it;
- zai: under preserved thinking (``thinking.clear_thinking: false``), an
  assistant turn it issued whose ``reasoning_content`` comes back changed or
  missing. (Z.ai documents this as a requirement but only degrades; the
  emulator is stricter so that a test fails.)

Replies are scripted with ``Step`` (or the provider-native ``Turn``, through
``ChatEmulator.reply``). The check against the ``openai`` SDK's request
TypedDict runs only when the openai SDK (and so pydantic) is installed;
without it the provider's own rules above are still enforced.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ._ids import tool_call_id
from ._server import BodyProblem, Emulator, Request, Response, Step, load_once, parse_body

if TYPE_CHECKING:
    import openai

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
# OpenAI's answer to a body that is not JSON, whatever is wrong with it.
OPENAI_INVALID_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library "
    "correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble "
    "figuring out how to fix this, please contact us through our help center at help.openai.com.)"
)
# DeepSeek's server reports a body it cannot read as its framework does; the
# wording for one that is not JSON at all is that framework's, not confirmed from DeepSeek.
DEEPSEEK_INVALID_JSON = "Failed to parse the request body as JSON: {detail} at line {line} column {column}"
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


# -- the openai SDK's request schema, strict (only when the SDK is installed) ---------------


def _forbid_extra(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "typed-dict":
            node["extra_behavior"] = "forbid"
        for value in node.values():
            _forbid_extra(value)
    elif isinstance(node, list):
        for value in node:
            _forbid_extra(value)


Validate = Callable[[Any], Any]


def strict_validator(typed_dict: Any) -> Validate:
    """A validator of ``typed_dict`` that rejects unknown keys at every level
    (pydantic ignores them in TypedDicts by default, which would hide a typo);
    it raises ``ValueError`` (pydantic's ``ValidationError``). Needs pydantic."""
    import pydantic  # noqa: PLC0415 (the SDK check runs only when the SDK is installed)
    import pydantic_core  # noqa: PLC0415

    schema = copy.deepcopy(pydantic.TypeAdapter(typed_dict).core_schema)
    _forbid_extra(schema)
    validator = pydantic_core.SchemaValidator(schema)

    def validate(value: Any) -> Any:
        return drain(validator.validate_python(value))

    return validate


def drain(value: Any) -> Any:
    """A validated value with its lazily validated ``Iterable`` fields iterated,
    so their errors surface."""
    if isinstance(value, Mapping):
        return {k: drain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, Iterator)) or type(value).__name__ == "ValidatorIterator":
        return [drain(v) for v in value]
    return value


def _load_chat_validators() -> tuple[Validate, Validate, Validate] | None:
    """(non-streaming body, streaming body, user content part) validators from
    the openai SDK's request types, or None when the SDK is not installed."""
    try:
        from openai.types.chat import ChatCompletionContentPartParam  # noqa: PLC0415
        from openai.types.chat.completion_create_params import (  # noqa: PLC0415
            CompletionCreateParamsNonStreaming,
            CompletionCreateParamsStreaming,
        )
    except ImportError:
        return None
    return (
        strict_validator(CompletionCreateParamsNonStreaming),
        strict_validator(CompletionCreateParamsStreaming),
        strict_validator(ChatCompletionContentPartParam),
    )


_chat_validators = load_once(_load_chat_validators)


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
    validators = _chat_validators()
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
            if validators is not None:
                try:
                    validators[2](part)
                except ValueError as exc:
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
    (provider extensions removed), or None when it does. Without the openai
    SDK installed, only the provider's own part shapes are checked."""
    validators = _chat_validators()
    errors: list[str] = []
    stripped = without_extensions(body, provider, errors)
    if validators is not None:
        try:
            (validators[1] if body.get("stream") else validators[0])(stripped)
        except ValueError as exc:
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


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _pieces(text: str, n: int = 3) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


# The options that turn reasoning on, in each provider's own names.
_THINKING_OPTIONS: dict[str, dict[str, Any]] = {
    "openrouter": {"reasoning": {"effort": "medium"}},
    "deepseek": {"thinking": {"type": "enabled"}},
    "zai": {"thinking": {"type": "enabled"}},
    "openai": {"reasoning_effort": "medium"},
}

# What each provider calls its error types (fault injection and auth errors).
_OPENAI_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}


class ChatEmulator(Emulator):
    """The emulated provider ``provider`` ("openrouter", "deepseek", "zai" or "openai").

    Script replies with ``Step``, or with the provider-native ``Turn``
    (``reply(Turn(...))``) for what a ``Step`` cannot say (OpenRouter's
    encrypted items and annotations, reasoning for OpenAI-compatible servers)."""

    def __init__(self, provider: str, *, port: int = 0, require_auth: bool = False) -> None:
        if provider not in BASE_PATHS:
            raise ValueError(provider)
        super().__init__(port=port, require_auth=require_auth)
        self.provider = provider
        self.base_path = BASE_PATHS[provider]
        self._secret = b"emulator-secret-" + provider.encode()
        self._issued: dict[str, _Issued] = {}  # openrouter: signature or data -> record
        self._reasoning_by_turn: dict[tuple[str, tuple[str, ...]], str] = {}  # zai
        self._count = 0

    @property
    def thinking_options(self) -> Mapping[str, Any]:
        return MappingProxyType(_THINKING_OPTIONS[self.provider])

    def client(self) -> openai.OpenAI:
        """An ``openai.OpenAI`` client of this server (needs the openai SDK)."""
        import openai  # noqa: PLC0415 (the SDK is optional)

        return openai.OpenAI(base_url=self.base_url, api_key="test", max_retries=0)

    # -- scripting -------------------------------------------------------------------

    def reply(self, turn: Turn | None = None, /, **fields: Any) -> None:
        """Queue the model's next reply as a provider-native ``Turn`` (or its fields as keywords)."""
        with self._lock:
            self._script.append(turn or Turn(**fields))

    def _turn(self) -> Turn:
        item = self._take()
        if item is None:
            return Turn(content="Done.")
        if not isinstance(item, Step):
            assert isinstance(item, Turn)
            return item
        calls = [
            (tool_call_id(self.provider, f"{self._count}/{k}/{name}"), name, args)
            for k, (name, args) in enumerate(item.calls)
        ]
        # OpenAI's chat completions return no reasoning: its cost only (usage).
        reasoning = None if self.provider == "openai" else item.thinking
        return Turn(content=item.text, reasoning=reasoning, tool_calls=calls)

    def _rotate(self) -> None:
        self._issued.clear()  # OpenRouter verifies replayed items against what it issued
        self._secret = hashlib.sha256(self._secret).digest()

    # -- HTTP --------------------------------------------------------------------------

    def _serves(self, request: Request) -> bool:
        return request.path.split("?")[0] == BASE_PATHS[self.provider] + "/chat/completions"

    def _prepare(self) -> None:
        _chat_validators()

    def _invalid_json(self, problem: BodyProblem) -> Response:
        if self.provider == "openai":
            error = {"message": OPENAI_INVALID_JSON, "type": "invalid_request_error", "param": None, "code": None}
            return Response(400, {"error": error})
        if self.provider == "deepseek":
            message = DEEPSEEK_INVALID_JSON.format(detail=problem.detail, line=problem.line, column=problem.column)
            kind = "invalid_request_error"
            return Response(400, {"error": {"message": message, "type": kind, "param": None, "code": kind}})
        # OpenRouter's and Z.ai's wording for it is not known: the emulator's, in their error shape.
        return self._error(400, f"Invalid JSON in request body: {problem.detail} (emulator wording)")

    def _answer(self, request: Request) -> Response:
        status, payload, chunks = self._handle(request)
        if chunks is not None:
            return Response(chunks=chunks, content_type="text/event-stream")
        return Response(status, data=payload)

    def handle(self, path: str, raw: bytes) -> tuple[int, bytes, bool]:
        """(status, body, whether it is a stream) for one request; no HTTP involved."""
        request = Request("POST", path, MappingProxyType({}), raw, None)
        self._record(request)
        status, payload, chunks = self._handle(request)
        return (status, b"".join(chunks), True) if chunks is not None else (status, payload, False)

    def _error(self, status: int, message: str) -> Response:
        if self.provider == "openrouter":
            return Response(status, {"error": {"code": status, "message": message, "metadata": {}}})
        if self.provider == "zai":
            codes = {401: "1000", 429: "1302", 500: "500", 503: "1305"}
            return Response(status, {"error": {"code": codes.get(status, str(status)), "message": message}})
        kind, code = _OPENAI_TYPES.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
        return Response(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})

    def _authorized(self, request: Request) -> bool:
        value = request.headers.get("authorization", "")
        return value.startswith("Bearer ") and bool(value.removeprefix("Bearer ").strip())

    def _auth_error(self) -> Response:
        if self.provider == "openrouter":
            return self._error(401, "No auth credentials found")
        if self.provider == "zai":
            return self._error(401, "Authorization Token Missing")
        return self._error(
            401,
            "You didn't provide an API key. You need to provide your API key in an Authorization header using "
            "Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        )

    # -- the provider --------------------------------------------------------------

    def _handle(self, request: Request) -> tuple[int, bytes, list[bytes] | None]:
        with self._lock:
            path = request.path.split("?")[0]
            if path != BASE_PATHS[self.provider] + "/chat/completions":
                return 404, _canonical({"error": {"message": f"no route {path}", "code": 404}}), None
            body, unreadable = parse_body(request.raw, self.max_depth)
            if unreadable is not None:
                refused = self._invalid_json(unreadable)
                return refused.status, refused.payload(), None
            problem = self._check(body)
            if problem is not None:
                return self._bad_request(problem)
            turn = self._turn()
            response = self._respond(body, turn)
            if body.get("stream"):
                return 200, b"", self._sse(body, response)
            return 200, _canonical(response), None

    def _bad_request(self, message: str) -> tuple[int, bytes, None]:
        error = {"message": message, "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}
        return 400, _canonical({"error": error}), None

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
            issued = self._reasoning_by_turn.get(_turn_key(message))
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
                record = self._issued.get(token) if isinstance(token, str) else None
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
        the tools and every message before the turn, each read as the
        upstream reads it (``read_chat_message``)."""
        tools = body.get("tools")
        read = {
            "model": body["model"],
            "tools": [read_chat_tool(t) for t in tools] if isinstance(tools, list) else None,
            "messages": [read_chat_message(m) for m in body["messages"][:end]],
        }
        return hashlib.sha256(_canonical(read)).digest()

    def _sign(self, *parts: bytes) -> str:
        return base64.b64encode(hmac.new(self._secret, b"\x00".join(parts), hashlib.sha256).digest()).decode()

    # -- replies ---------------------------------------------------------------------

    def _respond(self, body: Mapping[str, Any], turn: Turn) -> dict[str, Any]:
        self._count += 1
        n = self._count
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
            self._reasoning_by_turn[_turn_key(message)] = turn.reasoning
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
        response: dict[str, Any] = {
            "id": f"chatcmpl-{self.provider}-{n}",
            "object": "chat.completion",
            "created": 1767225600 + n,
            "model": body["model"],
            "choices": [choice],
            "usage": usage,
        }
        if self.provider == "openrouter":
            # OpenRouter names the upstream that served the request (its recorded replies do).
            response["id"] = f"gen-{response['created']}-{n:016d}"
            response["provider"] = _served_by(body["model"])
        return response

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
                "id": "reasoning-text-" + sign(b"text-id")[:12],  # OpenRouter names each item
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
            self._issued[token] = _Issued(group, position, count, _canonical(item), body["model"], prefix)
        return items

    def _sse(self, body: Mapping[str, Any], response: Mapping[str, Any]) -> list[bytes]:
        events = [*self._chunks(response)]
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**_chunk_base(response), "choices": [], "usage": response["usage"]})
        lines = [b"data: " + _canonical(e) + b"\n\n" for e in events]
        if self.provider == "openrouter":
            lines.insert(0, b": OPENROUTER PROCESSING\n\n")
        return [*lines, b"data: [DONE]\n\n"]

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
            for k, piece in enumerate(_pieces(message.get("reasoning") or "")):
                delta: dict[str, Any] = {"content": "", "reasoning": piece}
                if text_item is not None:
                    fragment = {"type": "reasoning.text", "text": piece, "format": text_item["format"], "index": 0}
                    if k == 0:  # the item's id comes with its first fragment
                        fragment = {**fragment, "id": text_item["id"]}
                    delta["reasoning_details"] = [fragment]
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


def _present(value: Mapping[str, Any], *, drop: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``value`` without its null members (and those in ``drop``)."""
    return {k: v for k, v in value.items() if v is not None and k not in drop}


def read_text_content(content: Any) -> Any:
    """Chat content as one spelling: a string as one text part, the empty
    string as no part, text parts without their cache marks."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [_present(p, drop=frozenset({"cache_control"})) if isinstance(p, Mapping) else p for p in content]
    return content


def read_arguments(arguments: Any) -> Any:
    """Tool-call arguments by their value: a JSON string as what it encodes."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def read_chat_message(message: Any) -> Any:
    """A chat-completions message the way OpenRouter hands it to the model
    (docs/providers.md, "Which spellings are the same request"): null members
    left out, content as ``read_text_content``, each tool call by id, name and
    the value of its arguments (``index`` is a streaming field, ``type`` is
    always "function")."""
    if not isinstance(message, Mapping):
        return message
    out = _present(message)
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
            if isinstance(call, Mapping)
            else call
            for call in calls
        ]
        if not out["tool_calls"]:
            del out["tool_calls"]
    return out


def read_chat_tool(tool: Any) -> Any:
    """A tool definition without its cache mark and null members."""
    if not isinstance(tool, Mapping):
        return tool
    out = _present(tool, drop=frozenset({"cache_control"}))
    if isinstance(out.get("function"), Mapping):
        out["function"] = _present(out["function"])
    return out


def _chunk_base(response: Mapping[str, Any]) -> dict[str, Any]:
    base = {
        "id": response["id"],
        "object": "chat.completion.chunk",
        "created": response["created"],
        "model": response["model"],
    }
    if "provider" in response:
        base["provider"] = response["provider"]
    return base


def _served_by(model: object) -> str:
    """The upstream OpenRouter reports for ``model`` ("anthropic/claude-..." -> "Anthropic")."""
    vendor = model.split("/", 1)[0] if isinstance(model, str) and "/" in model else "OpenAI"
    return {"openai": "OpenAI", "google": "Google", "x-ai": "xAI", "deepseek": "DeepSeek"}.get(vendor, vendor.title())


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
