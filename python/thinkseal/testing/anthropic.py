"""A local Anthropic Messages API emulator that enforces Claude's thinking rules.

``Claude`` is the rule engine (no HTTP): it signs each thinking block it
returns with an HMAC over the model, the top-level ``system``, the ``tools``,
every message before the reply and the reply's own blocks before the block;
on each later request it verifies every replayed ``thinking`` and
``redacted_thinking`` block against the prefix *as now sent*. Violations are
answered with Anthropic's 400 wording
(docs/providers.md#anthropic-replay-rules-and-the-errors-behind-them, with the
tool-pairing errors). ``AnthropicEmulator`` serves it
over HTTP (``POST /v1/messages``, JSON or SSE) on 127.0.0.1, with the
``anthropic-version`` header checked against the versions Anthropic lists
(``API_VERSIONS``; under 2026-10-21 the removed sampling parameters are
refused as unknown fields).

Replies are scripted with ``Step`` (``emulator.script(Step(thinking=...,
calls=[...]))``), or block by block as Claude returns them:
``emulator.script(Think("..."), Call(...), ...)`` is one reply; ``Raw(block)``
puts any block in the reply as it is (server tool use, cited text). With
thinking off, the scripted thinking is left out of the reply.

The binding is computed over the request's content as Claude reads it: cache
breakpoints (``cache_control``) left out, plain string content (a message's,
the system's, a tool result's) read as one text block, null members and
``is_error: false`` left out, and white-space-only text blocks (which Claude
itself returns before a thinking block, and rejects in requests) left out. So
moving a breakpoint, or sending "x" for ``[{"type": "text", "text": "x"}]``,
keeps a block bound (docs/providers.md, "Which spellings are the same request").

Under adaptive thinking a tool step may come without thinking; the emulator
remembers the tool calls it returned together with thinking, and only a tool
loop over such a call (or over a turn that still has thinking blocks) must
start with its thinking.

The same server also answers Claude on Vertex AI's path,
``POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict``
(``:streamRawPredict``): the same Messages API with the model taken from the
path, ``anthropic_version`` required in the body (``"vertex-2023-10-16"``,
or ``"2026-10-21"`` as the SDK's Vertex client sends it), no ``model`` in it,
and no ``anthropic-version`` header needed. Vertex is another
endpoint with its own ``Claude`` engine (its own signing key): a block signed
by one endpoint fails the other's signature check ("Invalid `signature`").
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote

from ._ids import tool_call_id
from ._server import BodyProblem, Emulator, Request, Response, Step

BINDING_BETA = "thinking-binding-controls-2026-08-01"
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
# Every ``anthropic-version`` Anthropic's versioning page lists (the SDKs
# since October 2026 send 2026-10-21 by default), and the ``anthropic_version``
# body values Claude on Vertex AI takes: its own, and 2026-10-21 (the
# versioning page lists Google Cloud among the platforms that have it; the
# SDK's Vertex client sends it).
API_VERSIONS = ("2023-01-01", "2023-06-01", "2026-10-21")
SAMPLING_REMOVED_IN = "2026-10-21"
VERTEX_VERSION = "vertex-2023-10-16"
VERTEX_VERSIONS = (VERTEX_VERSION, SAMPLING_REMOVED_IN)
VERTEX_PATH = re.compile(
    r"/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/anthropic/models/"
    r"(?P<model>[^/]+):(?P<method>rawPredict|streamRawPredict)"
)

# -- error wording (docs/providers.md, Anthropic) ------------------------------------

LEADING_THINKING = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. "
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
    "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult "
    "our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
CANNOT_MODIFY = (
    "messages.{i}.content.{j}: `thinking` or `redacted_thinking` blocks in the latest assistant message "
    "cannot be modified. These blocks must remain as they were in the original response."
)
INVALID_SIGNATURE = "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
BOUND_ELSEWHERE = (
    "messages.{i}.content.{j}: Invalid `signature` in `thinking` block. The block is bound to a different "
    "conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "
    '"drop_block". That setting requires the `thinking-binding-controls-2026-08-01` value in the '
    "`anthropic-beta` header. {detail}"
)
PREFIX_DETAIL = {
    "system": "The `system` prompt differs from the one this block was created with.",
    "tools": "The `tools` differ from the ones this block was created with.",
    "messages": "The messages before this block differ from the ones it was created with.",
}
SIGNATURE_REQUIRED = "messages.{i}.content.{j}.thinking.signature: Field required"
INVALID_REDACTED = "messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"
MISSING_RESULT = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
UNEXPECTED_RESULT = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
BLANK_TEXT = "{where}: text content blocks must contain non-whitespace text"
EMPTY_TEXT = "{where}: text content blocks must be non-empty"
TOO_MANY_BREAKPOINTS = "A maximum of 4 blocks with cache_control may be provided. Found {n}."
BUDGET_TOO_SMALL = "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
BUDGET_NOT_BELOW_MAX = "`max_tokens` must be greater than `thinking.budget_tokens`."
TEMPERATURE = "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode"
FORCED_TOOL = "Thinking may not be enabled when tool_choice forces tool use."
INVALID_JSON = "The request body is not valid JSON: {detail}"
TOO_LARGE = "Request exceeds the maximum allowed number of bytes."
VERSION_REQUIRED = "anthropic-version: header is required"
VERSION_INVALID = "anthropic-version: {value} is not a valid version"  # the value JSON-quoted
SAMPLING_REMOVED = "{name}: Extra inputs are not permitted"  # under 2026-10-21
# Vertex's wording for these is not documented (docs/providers.md, Claude on Vertex AI): emulator rules.
VERTEX_VERSION_REQUIRED = (
    f"anthropic_version: Input should be {' or '.join(repr(v) for v in VERTEX_VERSIONS)} (emulator rule)"
)
VERTEX_MODEL_IN_BODY = "model: Extra inputs are not permitted; the model is in the endpoint URL (emulator rule)"


class ApiError(Exception):
    """A 400 the emulator answers with (``invalid_request_error``)."""

    def __init__(self, message: str, status: int = 400, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind

    def body(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.kind, "message": self.message}}


# -- scripted reply blocks -----------------------------------------------------------


@dataclass(frozen=True)
class Think:
    text: str


@dataclass(frozen=True)
class Redact:
    secret: str


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    input: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Raw:
    """A block returned as it is (``server_tool_use``, ``web_search_tool_result``, cited text...)."""

    block: Mapping[str, Any]


Scripted = Think | Redact | Say | Call | Raw


# -- hashing -------------------------------------------------------------------------------


def canon(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(value: Any) -> str:
    return hashlib.sha256(canon(value)).hexdigest()


def _b64(value: Any) -> str:
    return base64.b64encode(canon(value)).decode()


def _unb64(text: object) -> dict[str, Any] | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        value = json.loads(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _blank_text(block: Any) -> bool:
    return (
        isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and not block["text"].strip()
    )


# Members that say nothing at their documented default: a tool result is
# not an error unless ``is_error`` says so.
_SILENT_DEFAULTS: Mapping[str, Any] = MappingProxyType({"is_error": False})
_ABSENT = object()


def _read_block(block: Any) -> Any:
    if not isinstance(block, Mapping):
        return block
    out = {
        k: v
        for k, v in block.items()
        if k != "cache_control" and v is not None and _SILENT_DEFAULTS.get(k, _ABSENT) != v
    }
    if out.get("type") == "tool_result" and "content" in out:
        out["content"] = as_read(out["content"])
    return out


def as_read(content: Any) -> Any:
    """Content as Claude reads it for the binding, one spelling for the
    spellings Anthropic documents as the same request (docs/providers.md,
    "Which spellings are the same request"): breakpoints left out, a string as
    one text block (also a tool result's), members that are null or at their
    default (``is_error: false``) left out, white-space-only text blocks left
    out. JSON's own freedom (key order, white space, escapes) is gone once parsed."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [_read_block(b) for b in content if not _blank_text(b)]
    return content


@dataclass
class Outcome:
    """What a checked request led to: blocks dropped under ``drop_block``."""

    dropped: list[str] = field(default_factory=list)
    degraded: bool = False  # the leading-thinking rule was waived (drop_block)


class Claude:
    """The rule engine: signs replies, verifies replayed thinking."""

    def __init__(self, secret: bytes = b"thinkseal-emulator-secret") -> None:
        self._secret = secret
        self._thought_calls: set[str] = set()  # tool_use ids returned together with thinking

    def rotate(self) -> None:
        """A new signing key: every block signed so far fails the signature check."""
        self._secret = hashlib.sha256(self._secret + b"/rotated").digest()

    def _mac(self, *parts: Any) -> str:
        return hmac.new(self._secret, canon(list(parts)), hashlib.sha256).hexdigest()

    # -- context ---------------------------------------------------------------

    @staticmethod
    def context(body: Mapping[str, Any]) -> tuple[str, str]:
        system = body.get("system")
        tools = body.get("tools")
        return (
            digest(None if system is None else as_read(system)),
            digest(None if tools is None else [_read_block(t) for t in tools]),
        )

    @staticmethod
    def prefix(messages: Sequence[Any], preceding: Sequence[Any]) -> str:
        read = [{"role": m["role"], "content": as_read(m["content"])} for m in messages]
        return digest({"messages": read, "preceding": as_read(list(preceding))})

    # -- signing ------------------------------------------------------------------

    def reply(self, body: Mapping[str, Any], script: Sequence[Scripted]) -> list[dict[str, Any]]:
        """The content blocks of a reply to ``body``, thinking signed in place."""
        model = body["model"]
        system, tools = self.context(body)
        messages = body["messages"]
        thinking_on = _thinking_type(body) in ("enabled", "adaptive")
        blocks: list[dict[str, Any]] = []
        for item in script:
            if isinstance(item, (Think, Redact)) and not thinking_on:
                continue
            prefix = self.prefix(messages, blocks)
            if isinstance(item, Think):
                block_mac = self._mac("thinking", model, item.text)
                sig = {"m": model, "b": block_mac, "s": system, "t": tools, "p": prefix}
                sig["x"] = self._mac(model, system, tools, prefix, block_mac)
                blocks.append({"type": "thinking", "thinking": item.text, "signature": _b64(sig)})
            elif isinstance(item, Redact):
                block_mac = self._mac("redacted", model, item.secret)
                data = {"r": item.secret, "m": model, "b": block_mac, "s": system, "t": tools, "p": prefix}
                data["x"] = self._mac(model, system, tools, prefix, block_mac)
                blocks.append({"type": "redacted_thinking", "data": _b64(data)})
            elif isinstance(item, Say):
                blocks.append({"type": "text", "text": item.text})
            elif isinstance(item, Raw):
                blocks.append(json.loads(json.dumps(item.block)))
            else:
                blocks.append({"type": "tool_use", "id": item.id, "name": item.name, "input": dict(item.input)})
        if any(b["type"] in ("thinking", "redacted_thinking") for b in blocks if "type" in b):
            self._thought_calls.update(b["id"] for b in blocks if b.get("type") == "tool_use")
        return blocks

    # -- checking -------------------------------------------------------------------

    def check(self, body: Mapping[str, Any], betas: Sequence[str]) -> Outcome:
        """Raise ``ApiError`` as Claude would; return what ``drop_block`` dropped."""
        _check_params(body, betas)
        messages = body["messages"]
        _check_system(body.get("system"))
        _check_shapes(messages)
        breakpoints = _count_breakpoints(body)
        if breakpoints > 4:
            raise ApiError(TOO_MANY_BREAKPOINTS.format(n=breakpoints))
        _check_tool_pairing(messages)
        thinking = body.get("thinking") or {}
        drop = (
            isinstance(thinking.get("block_binding"), Mapping)
            and thinking["block_binding"].get("prefix_mismatch_behavior") == "drop_block"
        )
        outcome = Outcome()
        self._check_blocks(body, drop, outcome)
        kind = _thinking_type(body)
        if kind in ("enabled", "adaptive"):
            if drop:
                outcome.degraded = True
            else:
                _check_leading_thinking(messages, self._thought_calls if kind == "adaptive" else None)
        return outcome

    def _check_blocks(self, body: Mapping[str, Any], drop: bool, outcome: Outcome) -> None:
        model = body["model"]
        system, tools = self.context(body)
        messages = body["messages"]
        last_assistant = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
        mismatch = False  # once a block fails the prefix check, every later one does
        for i, message in enumerate(messages):
            if message["role"] != "assistant" or not isinstance(message["content"], list):
                continue
            for j, block in enumerate(message["content"]):
                kind = block.get("type")
                if kind not in ("thinking", "redacted_thinking"):
                    continue
                where = {"i": i, "j": j}
                if kind == "thinking":
                    if "signature" not in block:
                        raise ApiError(SIGNATURE_REQUIRED.format(**where))
                    seal = _unb64(block["signature"])
                    invalid = INVALID_SIGNATURE.format(**where)
                    content = ("thinking", block.get("thinking"))
                else:
                    seal = _unb64(block.get("data"))
                    invalid = INVALID_REDACTED.format(**where)
                    content = ("redacted", seal.get("r") if seal else None)
                if seal is None or not all(k in seal for k in "mbstpx"):
                    raise ApiError(invalid)
                recorded = self._mac(seal["m"], seal["s"], seal["t"], seal["p"], seal["b"])
                if not hmac.compare_digest(recorded, str(seal["x"])):
                    raise ApiError(invalid)  # forged fields
                if seal["m"] != model:
                    raise ApiError(invalid)  # produced by another model
                if not hmac.compare_digest(self._mac(content[0], model, content[1]), str(seal["b"])):
                    raise ApiError(CANNOT_MODIFY.format(**where) if i == last_assistant else invalid)
                differs = [
                    name
                    for name, now, then in (
                        ("system", system, seal["s"]),
                        ("tools", tools, seal["t"]),
                        ("messages", self.prefix(messages[:i], message["content"][:j]), seal["p"]),
                    )
                    if now != then
                ]
                if differs or mismatch:
                    mismatch = True
                    if not drop:
                        detail = PREFIX_DETAIL[differs[0] if differs else "messages"]
                        raise ApiError(BOUND_ELSEWHERE.format(detail=detail, **where))
                    outcome.dropped.append(f"messages.{i}.content.{j}")


def _thinking_type(body: Mapping[str, Any]) -> str | None:
    thinking = body.get("thinking")
    return thinking.get("type") if isinstance(thinking, Mapping) else None


def _check_params(body: Mapping[str, Any], betas: Sequence[str]) -> None:
    for key in ("model", "messages", "max_tokens"):
        if key not in body:
            raise ApiError(f"{key}: Field required")
    if not isinstance(body["messages"], list) or not body["messages"]:
        raise ApiError("messages: at least one message is required")
    thinking = body.get("thinking")
    if thinking is None:
        return
    if not isinstance(thinking, Mapping) or thinking.get("type") not in ("enabled", "disabled", "adaptive"):
        raise ApiError("thinking: Input tag found using 'type' does not match any of the expected tags")
    if thinking.get("block_binding") is not None and BINDING_BETA not in betas:
        raise ApiError(f"thinking.block_binding: requires the `{BINDING_BETA}` value in the `anthropic-beta` header")
    if thinking["type"] == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise ApiError(BUDGET_TOO_SMALL)
        if budget >= body["max_tokens"] and INTERLEAVED_BETA not in betas:
            raise ApiError(BUDGET_NOT_BELOW_MAX)
        choice = body.get("tool_choice")
        if isinstance(choice, Mapping) and choice.get("type") in ("any", "tool"):
            raise ApiError(FORCED_TOOL)
    if thinking["type"] in ("enabled", "adaptive"):
        if body.get("temperature", 1) != 1:
            raise ApiError(TEMPERATURE)
        if "top_k" in body:
            raise ApiError("`top_k` may not be set when thinking is enabled")


IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def _check_text(text: object, where: str) -> None:
    if not isinstance(text, str) or not text:
        raise ApiError(EMPTY_TEXT.format(where=where))
    if not text.strip():
        raise ApiError(BLANK_TEXT.format(where=where))


def _check_source(block: Mapping[str, Any], where: str) -> None:
    """The sources Anthropic documents for images and documents."""
    source = block.get("source")
    kind = source.get("type") if isinstance(source, Mapping) else None
    table: dict[str, dict[str, tuple[str, ...] | None]] = {
        "image": {"base64": IMAGE_TYPES, "url": None},
        "document": {"base64": ("application/pdf",), "url": None, "text": ("text/plain",), "content": None},
    }
    allowed = table[block["type"]]
    if not isinstance(kind, str) or kind not in allowed:
        raise ApiError(f"{where}.source.type: Input tag {kind!r} found using 'type' does not match the expected tags")
    assert isinstance(source, Mapping)
    media = allowed[kind]
    if media is not None and source.get("media_type") not in media:
        raise ApiError(f"{where}.source.media_type: Input should be {' or '.join(repr(m) for m in media)}")
    if kind == "base64":
        try:
            base64.b64decode(source.get("data") or "", validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(f"{where}.source.data: invalid base64 data") from None


def _check_content_blocks(content: Sequence[Any], where: str, role: str) -> None:
    for j, block in enumerate(content):
        at = f"{where}.{j}"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text":
            _check_text(block.get("text"), "messages")
        elif kind in ("thinking", "redacted_thinking") and role != "assistant":
            raise ApiError(f"{where.rsplit('.', 1)[0]}: thinking blocks may only appear in assistant messages")
        elif kind in ("image", "document"):
            if role == "assistant":
                raise ApiError(f"{at}: {kind} blocks may only appear in user messages")
            _check_source(block, at)
        elif kind == "tool_result" and isinstance(block.get("content"), list):
            _check_content_blocks(block["content"], f"{at}.content", role)


def _check_shapes(messages: Sequence[Any]) -> None:
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            raise ApiError(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = message.get("content")
        if isinstance(content, str):
            _check_text(content, "messages")
            continue
        if not isinstance(content, list) or (not content and i != len(messages) - 1):
            raise ApiError(
                f"messages.{i}: all messages must have non-empty content except for the optional final "
                "assistant message"
            )
        _check_content_blocks(content, f"messages.{i}.content", message["role"])


def _count_breakpoints(body: Mapping[str, Any]) -> int:
    def count(blocks: Any) -> int:
        if not isinstance(blocks, list):
            return 0
        total = 0
        for block in blocks:
            if isinstance(block, Mapping):
                total += block.get("cache_control") is not None
                if block.get("type") == "tool_result":
                    total += count(block.get("content"))
        return total

    return count(body.get("system")) + count(body.get("tools")) + sum(count(m["content"]) for m in body["messages"])


def _check_system(system: Any) -> None:
    if isinstance(system, str):
        _check_text(system, "system")
    elif isinstance(system, list):
        for block in system:
            _check_text(block.get("text") if isinstance(block, Mapping) else None, "system")


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message["content"]
    return [] if isinstance(content, str) else list(content)


def _check_tool_pairing(messages: Sequence[Any]) -> None:
    for i, message in enumerate(messages):
        if message["role"] == "assistant":
            ids = [b["id"] for b in _blocks(message) if b.get("type") == "tool_use"]
            if not ids:
                continue
            following = messages[i + 1] if i + 1 < len(messages) else None
            answered = (
                {b.get("tool_use_id") for b in _blocks(following) if b.get("type") == "tool_result"}
                if following is not None and following["role"] == "user"
                else set()
            )
            missing = [x for x in ids if x not in answered]
            if missing and following is not None:
                raise ApiError(MISSING_RESULT.format(i=i, ids=", ".join(missing)))
        else:
            previous = messages[i - 1] if i > 0 else None
            calls = (
                {b.get("id") for b in _blocks(previous) if b.get("type") == "tool_use"}
                if previous is not None and previous["role"] == "assistant"
                else set()
            )
            for j, block in enumerate(_blocks(message)):
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in calls:
                    raise ApiError(UNEXPECTED_RESULT.format(i=i, j=j, id=block.get("tool_use_id")))


def _check_leading_thinking(messages: Sequence[Any], thought_calls: set[str] | None) -> None:
    """The tool loop's last assistant turn starts with thinking. ``thought_calls``
    (adaptive thinking): the tool calls returned with thinking; a turn with no
    thinking block and none of those calls was answered without thinking and
    goes back as it came."""
    last = messages[-1]
    results = _blocks(last) if last["role"] == "user" else []
    if not results or any(b.get("type") != "tool_result" for b in results):
        return  # not continuing a tool loop
    if len(messages) < 2 or messages[-2]["role"] != "assistant":
        return
    blocks = _blocks(messages[-2])
    first = blocks[0].get("type") if blocks else "text"
    if first in ("thinking", "redacted_thinking"):
        return
    if thought_calls is not None:
        thought = any(b.get("type") in ("thinking", "redacted_thinking") for b in blocks) or any(
            b.get("id") in thought_calls for b in blocks if b.get("type") == "tool_use"
        )
        if not thought:
            return
    raise ApiError(LEADING_THINKING.format(i=len(messages) - 2, found=first))


# -- responses -----------------------------------------------------------------------------


def message_json(model: str, content: list[dict[str, Any]], outcome: Outcome, number: int) -> dict[str, Any]:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    message: dict[str, Any] = {
        "id": f"msg_emulated_{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 20},
    }
    if outcome.dropped:
        message["input_transformations"] = [
            {"type": "thinking_dropped", "path": p, "reason": "prefix_binding_mismatch"} for p in outcome.dropped
        ]
    return message


def _halves(text: str) -> list[str]:
    cut = len(text) // 2
    return [p for p in (text[:cut], text[cut:]) if p]


def stream_events(message: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The SSE event data objects Anthropic streams for ``message``."""
    start = {k: v for k, v in message.items() if k not in ("content", "stop_reason")}
    yield {"type": "message_start", "message": {**start, "content": [], "stop_reason": None}}
    yield {"type": "ping"}
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "thinking":
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            }
            for piece in _halves(block["thinking"]):
                delta = {"type": "thinking_delta", "thinking": piece}
                yield {"type": "content_block_delta", "index": index, "delta": delta}
            delta = {"type": "signature_delta", "signature": block["signature"]}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        elif kind == "text":
            yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            for piece in _halves(block["text"]):
                yield {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
            for citation in block.get("citations") or []:
                delta = {"type": "citations_delta", "citation": citation}
                yield {"type": "content_block_delta", "index": index, "delta": delta}
        elif kind in ("tool_use", "server_tool_use"):
            head = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
            yield {"type": "content_block_start", "index": index, "content_block": head}
            for piece in _halves(json.dumps(block["input"])):
                delta = {"type": "input_json_delta", "partial_json": piece}
                yield {"type": "content_block_delta", "index": index, "delta": delta}
        else:
            yield {"type": "content_block_start", "index": index, "content_block": dict(block)}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}


# -- the emulator ---------------------------------------------------------------------------------

# Errors Vertex AI's front end answers itself, in Google's shape; the rest come from Claude.
_GOOGLE_STATUS = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class ClaudeScripting(Emulator):
    """Scripting shared by the Claude emulators (Messages API and Bedrock):
    ``Step``s, or the Claude blocks of one reply, turned into reply blocks."""

    provider: str
    _count: int  # requests answered so far (tool-call ids are made from it)

    def script(self, *items: Step | Scripted) -> None:
        """Queue replies: each ``Step`` answers one request; Claude blocks
        (``Think``, ``Say``, ``Call``...) given instead make up one reply."""
        if all(isinstance(item, Step) for item in items):
            super().script(*(item for item in items if isinstance(item, Step)))
        elif any(isinstance(item, Step) for item in items):
            raise TypeError("script takes Steps, or the blocks of one reply, not both")
        else:
            with self._lock:
                self._script.append([item for item in items if not isinstance(item, Step)])

    def _blocks(self) -> list[Scripted]:
        item = self._take()
        if item is None:
            return [Say("Done.")]
        if not isinstance(item, Step):
            return list(item)
        blocks: list[Scripted] = []
        if item.thinking is not None:
            blocks.append(Think(item.thinking))
        if item.text is not None:
            blocks.append(Say(item.text))
        for k, (name, args) in enumerate(item.calls):
            blocks.append(Call(tool_call_id(self.provider, f"{self._count}/{k}/{name}"), name, dict(args)))
        return blocks or [Say("Done.")]


class AnthropicEmulator(ClaudeScripting):
    """``POST /v1/messages`` and Vertex's ``...:rawPredict`` / ``...:streamRawPredict``
    on 127.0.0.1. ``claude`` signs and checks for the Messages API, ``vertex``
    (another key) for Vertex. ``provider`` ("anthropic" or "vertex-anthropic")
    only picks ``options`` and the shape of injected errors: both paths are served.

    ``script`` takes ``Step`` replies, or the blocks of one reply as Claude
    returns them (``Think``, ``Redact``, ``Say``, ``Call``, ``Raw``)."""

    def __init__(
        self,
        provider: str = "anthropic",
        *,
        port: int = 0,
        require_auth: bool = False,
        claude: Claude | None = None,
        vertex: Claude | None = None,
    ) -> None:
        if provider not in ("anthropic", "vertex-anthropic"):
            raise ValueError(f"not a Claude provider: {provider!r}")
        super().__init__(port=port, require_auth=require_auth)
        self.provider = provider
        self.claude = claude or Claude()
        self.vertex = vertex or Claude(b"thinkseal-emulator-secret/vertex")
        self.outcomes: list[Outcome] = []  # per accepted request
        self.errors: list[str] = []  # every 400 message sent
        self._count = 0

    @property
    def options(self) -> Mapping[str, Any]:
        if self.provider == "vertex-anthropic":
            return MappingProxyType({"max_tokens": 1024, "project": "test-project", "region": "us-east5"})
        return MappingProxyType({"max_tokens": 1024})

    @property
    def thinking_options(self) -> Mapping[str, Any]:
        thinking = {"max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}}
        return MappingProxyType({**self.options, **thinking})

    @property
    def paths(self) -> list[str]:
        """The path of every request received, in order (no query string)."""
        return [r.path.split("?")[0] for r in self.requests]

    def _rotate(self) -> None:
        self.claude.rotate()
        self.vertex.rotate()

    # -- handling ------------------------------------------------------------------

    def respond(
        self, body: Mapping[str, Any], headers: Mapping[str, str], *, vertex_model: str | None = None
    ) -> tuple[int, dict[str, Any]]:
        """The status and JSON message (or error) for one request; no HTTP involved.
        ``vertex_model``: the request came to Vertex's path for this model."""
        with self._lock:
            try:
                version: object
                if vertex_model is None:
                    version = _check_version(headers.get("anthropic-version"))
                    engine, checked = self.claude, body
                else:
                    version = body.get("anthropic_version")
                    engine, checked = self.vertex, _vertex_body(body, vertex_model)
                if version == SAMPLING_REMOVED_IN:
                    _check_no_sampling(checked)
                betas = [b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()]
                outcome = engine.check(checked, betas)
            except ApiError as err:
                self.errors.append(err.message)
                return err.status, err.body()
            self._count += 1
            script = self._blocks()
            self.outcomes.append(outcome)
            content = engine.reply(checked, script)
            return 200, message_json(checked["model"], content, outcome, self._count)

    def _serves(self, request: Request) -> bool:
        path = request.path.split("?")[0]
        return path == "/v1/messages" or VERTEX_PATH.fullmatch(path) is not None

    def _invalid_json(self, problem: BodyProblem) -> Response:
        return Response(400, ApiError(INVALID_JSON.format(detail=_json_detail(problem))).body())

    def _too_large(self) -> Response:
        return Response(413, ApiError(TOO_LARGE, 413, "request_too_large").body())

    def _answer(self, request: Request) -> Response:
        path = request.path.split("?")[0]
        vertex = VERTEX_PATH.fullmatch(path)
        if path != "/v1/messages" and vertex is None:
            return Response(404, ApiError("Not found", 404, "not_found_error").body())
        body = request.body
        if not isinstance(body, dict):
            return Response(400, ApiError("There was an issue with the request body: invalid JSON").body())
        model = None if vertex is None else unquote(vertex["model"])
        status, payload = self.respond(body, request.headers, vertex_model=model)
        if status != 200 or not body.get("stream"):
            return Response(status, payload)
        chunks = [
            f"event: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n".encode()
            for event in stream_events(payload)
        ]
        return Response(chunks=chunks, content_type="text/event-stream", headers={"cache-control": "no-cache"})

    def _error(self, status: int, message: str) -> Response:
        if self.provider == "vertex-anthropic" and status in _GOOGLE_STATUS:
            return Response(status, {"error": {"code": status, "message": message, "status": _GOOGLE_STATUS[status]}})
        kind = _ERROR_TYPES.get(status, "api_error")
        return Response(status, ApiError(message, status, kind).body(), headers={"request-id": "req_emulated"})

    def _authorized(self, request: Request) -> bool:
        if VERTEX_PATH.fullmatch(request.path.split("?")[0]) is not None:
            return _bearer(request.headers)
        # The official SDK (2.x) sends its API key as a bearer token; x-api-key is the documented header.
        return bool(request.headers.get("x-api-key")) or _bearer(request.headers)

    def _auth_error(self) -> Response:
        if self.provider == "vertex-anthropic":
            message = (
                "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
                "other valid authentication credential."
            )
            return self._error(401, message)
        return self._error(401, "invalid x-api-key")


def _json_detail(problem: BodyProblem) -> str:
    """What Anthropic's parser says of a body that is not JSON, where: its
    frame is quoted; the reason is the closest of the parser's reasons seen
    ("unexpected character", ...), not a translation of every case."""
    if problem.kind == "depth":
        reason = "recursion limit reached"
    elif problem.detail == "invalid UTF-8":
        reason = "str is not valid UTF-8: surrogates not allowed"
    elif problem.at_end:
        reason = "unexpected end of data"
    elif problem.detail.startswith("Invalid control character"):
        reason = "unexpected control character in string"
    else:
        reason = "unexpected character"
    return f"{reason}: line {problem.line} column {problem.column} (char {problem.position})"


def _bearer(headers: Mapping[str, str]) -> bool:
    value = headers.get("authorization", "")
    return value.startswith("Bearer ") and bool(value.removeprefix("Bearer ").strip())


def _check_version(value: str | None) -> str:
    """The ``anthropic-version`` header's value, checked as Anthropic checks it."""
    if value is None:
        raise ApiError(VERSION_REQUIRED)
    if value not in API_VERSIONS:
        raise ApiError(VERSION_INVALID.format(value=json.dumps(value)))
    return value


def _check_no_sampling(body: Mapping[str, Any]) -> None:
    """API version 2026-10-21 removed the sampling parameters: sent at all
    (even at their defaults), each is an unknown field."""
    for name in ("temperature", "top_p", "top_k"):
        if name in body:
            raise ApiError(SAMPLING_REMOVED.format(name=name))


def _vertex_body(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """A Vertex request body as the Messages API body Claude checks: the
    version checked and left out, the model from the path."""
    if body.get("anthropic_version") not in VERTEX_VERSIONS:
        raise ApiError(VERTEX_VERSION_REQUIRED)
    if "model" in body:
        raise ApiError(VERTEX_MODEL_IN_BODY)
    return {**{k: v for k, v in body.items() if k != "anthropic_version"}, "model": model}
