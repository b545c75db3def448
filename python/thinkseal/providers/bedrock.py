"""Amazon Bedrock Converse / ConverseStream (Claude rules for thinking).

What Bedrock requires, and what thinkseal does about it, is in
docs/providers.md#bedrock (Claude's rules in the Anthropic sections before it:
#anthropic-thinking-options, #anthropic-replay-rules-and-the-errors-behind-them,
#claudes-tool-loop-and-replayerror). In short:

- What Bedrock and Anthropic share (Claude's rules: tool pairing into one user
  turn, which thinking parts go on the wire, the thinking options, the
  tool-loop check) is in ``_claude``; this module is Converse's spelling of it.
- The model id lives in the path (``/converse``, ``/converse-stream``), the
  system messages in ``system``, thinking and Claude's own options in
  ``additionalModelRequestFields``, sampling in ``inferenceConfig``, tools in
  ``toolConfig`` (required whenever tool blocks are sent).
- Thinking goes back as ``reasoningContent`` (signed text, never null, and
  redacted blobs), only in kept turns; unsigned reasoning never goes to Claude.
- Images and documents go as bytes only (Converse takes no URLs), a document
  named by its title or a stable generated name; cache breakpoints are
  ``cachePoint`` blocks (at most 4).
- ``receive`` takes the HTTP JSON (blobs as base64 text) and boto3's dicts
  (bytes); ``req.stream()`` takes ConverseStream events as boto3 yields them;
  ``boto3_params`` turns a body's blobs back into bytes for boto3.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import quote

from .._blocks import ThinkingBlock
from .._content import Document, Image, Native
from .._conversation import Conversation
from .._errors import ResponseError, ValidationError
from .._messages import AssistantMessage, Part, ToolCall, ToolMessage
from .._replay import Replay
from .._reply import Delta, ReplyInfo, TextDelta, ThinkingDelta, ToolCallDelta, Usage
from .._tool import Tool
from . import _claude
from ._base import REPLAY_ERROR_WAYS, Built, Provider, StreamParser
from ._connection import CLAUDE_REJECTIONS, Connection
from ._options import BODY_FIELDS, frozen_options
from ._response import Node, b64_text, check_depth, parse_arguments, valid_text
from ._wire import dumps, splice

_RESERVED: Final[Mapping[str, str]] = MappingProxyType(
    {
        "modelId": "pass model=... (it goes in the path)",
        "messages": BODY_FIELDS["messages"],
        "system": "put SystemMessage(s) in the conversation",
        "stream": "pass stream=True (it selects /converse-stream)",
    }
)
# The other members of botocore's ConverseRequest / ConverseStreamRequest.
_OPTIONS: Final[frozenset[str]] = frozenset(
    {
        "inferenceConfig",
        "toolConfig",
        "guardrailConfig",
        "additionalModelRequestFields",
        "promptVariables",
        "additionalModelResponseFieldPaths",
        "requestMetadata",
        "performanceConfig",
        "serviceTier",
        "outputConfig",
    }
)
_EXCEPTIONS: Final[tuple[str, ...]] = (
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
)


# Usage fields and where Converse reports them.
_USAGE: Final[Mapping[str, str]] = MappingProxyType(
    {
        "input_tokens": "inputTokens",
        "output_tokens": "outputTokens",
        "cache_read_tokens": "cacheReadInputTokens",
        "cache_write_tokens": "cacheWriteInputTokens",
    }
)
# Bedrock's document name rules (DocumentBlock.name): letters and digits, single
# white space, hyphens, parentheses and square brackets; 1 to 200 characters.
_DOCUMENT_NAME: Final = re.compile(r"(?:[A-Za-z0-9\-()\[\]]|\s(?!\s))+")
_NAME_LIMIT: Final[int] = 200


def _cache_point(ttl: str | None) -> dict[str, Any]:
    return {"cachePoint": {"type": "default"} if ttl is None else {"type": "default", "ttl": ttl}}


def _document_name(document: Document) -> str:
    """The title when Bedrock takes it as a name, else a name from the content
    (the same document always gets the same one)."""
    if document.title is not None:
        if len(document.title) > _NAME_LIMIT or not _DOCUMENT_NAME.fullmatch(document.title):
            raise _claude.Refused(
                "Bedrock's document name (thinkseal sends the title) may hold only letters, digits, single "
                "spaces, hyphens, parentheses and square brackets, at most 200 characters; "
                f"got {document.title!r}",
                field="title",
            )
        return document.title
    content = document.data if document.data is not None else (document.text or "").encode()
    return "document-" + hashlib.sha256(content).hexdigest()[:16]


def _no_url(what: str) -> _claude.Refused:
    return _claude.Refused(
        f"Bedrock Converse takes {what} as bytes or an S3 location, not a URL (give the {what} as data)",
        field="url",
    )


# A wire turn's tally (``_Wire.turn_tally``) is its cache points plus, in units
# of _TOOL_TURN (far above any number of cache points in one request), whether
# it uses tools: one running total per cached turn then answers both.
_TOOL_TURN: Final[int] = 1 << 32


class _Wire(_claude.Wire):
    """Converse's spelling of Claude's wire."""

    key = "bedrock"
    name = "Bedrock (Claude)"
    paths = MappingProxyType(
        {
            "max_tokens": "inferenceConfig.maxTokens",
            "temperature": "inferenceConfig.temperature",
            "top_p": "inferenceConfig.topP",
            "top_k": "additionalModelRequestFields.top_k",
            "tool_choice": "toolConfig.toolChoice",
            "thinking": "additionalModelRequestFields.thinking",
        }
    )
    tool_fields = MappingProxyType({"id": "toolUseId", "name": "name", "arguments": "input"})
    format_at = ("outputConfig", "textFormat")

    def text_block(self, text: str) -> dict[str, Any]:
        return {"text": text}

    def image_block(self, image: Image) -> dict[str, Any]:
        if image.data is None:
            raise _no_url("images")
        assert image.media_type is not None
        source = {"bytes": base64.b64encode(image.data).decode()}  # a blob: base64 text in the JSON body
        return {"image": {"format": image.media_type.removeprefix("image/"), "source": source}}

    def document_block(self, document: Document) -> dict[str, Any]:
        if document.url is not None:
            raise _no_url("documents")
        name = _document_name(document)
        # Text goes as its UTF-8 bytes in a "txt" document, as a PDF's bytes go.
        content = document.data if document.data is not None else (document.text or "").encode()
        source = {"bytes": base64.b64encode(content).decode()}
        spec: dict[str, Any] = {"format": "pdf" if document.data is not None else "txt", "name": name, "source": source}
        if document.citations:
            spec["citations"] = {"enabled": True}
        return {"document": spec}

    def marked(self, blocks: list[dict[str, Any]], marks: Sequence[_claude.Mark]) -> list[dict[str, Any]]:
        if not marks:
            return blocks
        out: list[dict[str, Any]] = []
        points = dict(marks)
        for index, block in enumerate(blocks):
            out.append(block)
            if index in points:
                out.append(_cache_point(points[index]))
        return out

    def marks_in(self, blocks: Iterable[Any]) -> int:
        return sum(1 for block in blocks if isinstance(block, Mapping) and block.get("cachePoint") is not None)

    def turn_tally(self, turn: Mapping[str, Any]) -> int:
        return self.turn_marks(turn) + (_TOOL_TURN if _uses_tools(turn) else 0)

    def too_many_marks(self, count: int) -> ValidationError:
        return ValidationError(
            f"cachePoint: Claude on Bedrock takes at most {_claude.MAX_BREAKPOINTS} cache checkpoints in a request; "
            f"this one has {count}",
            path="cachePoint",
        )

    def tool_use_block(self, call: ToolCall) -> dict[str, Any]:
        return {"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments}}

    def thinking_wire(self, block: ThinkingBlock.Text) -> dict[str, Any]:
        return {"reasoningContent": {"reasoningText": {"text": block.text, "signature": block.signature}}}

    def redacted_wire(self, block: ThinkingBlock.Redacted) -> dict[str, Any]:
        return {"reasoningContent": {"redactedContent": block.data}}

    def tool_result_blocks(
        self, message: ToolMessage, blocks: list[dict[str, Any]], marks: Sequence[_claude.Mark]
    ) -> list[dict[str, Any]]:
        result: dict[str, Any] = {"toolUseId": message.tool_call_id, "content": blocks}
        if message.is_error:
            result["status"] = "error"
        # A tool result's content takes no cache point: it goes after the result.
        return [{"toolResult": result}, _cache_point(marks[-1][1])] if marks else [{"toolResult": result}]

    def format_wire(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        # The schema goes as JSON text; a name and description only when not blank.
        definition: dict[str, Any] = {"schema": dumps(spec["schema"]).decode()}
        for key in ("name", "description"):
            if isinstance(spec.get(key), str) and spec[key]:
                definition[key] = spec[key]
        return {"type": "json_schema", "structure": {"jsonSchema": definition}}

    def forces_tool(self, choice: object) -> bool:
        # {"any": {}} and {"tool": {"name": ...}} force a tool.
        return isinstance(choice, Mapping) and ("any" in choice or "tool" in choice)

    def read_block(self, block: Node) -> Part | None:
        block.object()
        present = [k for k in _BLOCK_KINDS if block.value.get(k) is not None]
        if not present:
            return _native(block.value, block.path)  # citationsContent, anything newer
        if len(present) > 1:
            raise ResponseError(f"content block type sets several members: {', '.join(present)}", path=block.path)
        kind = present[0]
        if kind == "text":
            return block.text("text")
        if kind == "toolUse":
            use = block.node("toolUse")
            return self.tool_call(use.text("toolUseId"), use.text("name"), use.get("input", dict), use.path)
        reasoning = block.node("reasoningContent")
        member = _kind(reasoning, ("reasoningText", "redactedContent"), "reasoning content")
        if member == "redactedContent":
            return _redacted(reasoning.value["redactedContent"], f"{reasoning.path}.redactedContent")
        text = reasoning.node("reasoningText")
        signature = valid_text(text.opt("signature", str, ""), f"{text.path}.signature")
        return _claude.thinking_block(text.text("text"), signature)


_WIRE: Final = _Wire()


def _uses_tools(turn: Mapping[str, Any]) -> bool:
    return any("toolUse" in block or "toolResult" in block for block in turn["content"])


def _blobs_to_bytes(block: dict[str, Any]) -> None:
    """The base64 blobs of one content block (in place) as bytes."""
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, dict) and isinstance(reasoning.get("redactedContent"), str):
        reasoning["redactedContent"] = base64.b64decode(reasoning["redactedContent"])
    for kind in ("image", "document"):
        source = block.get(kind, {}).get("source") if isinstance(block.get(kind), dict) else None
        if isinstance(source, dict) and isinstance(source.get("bytes"), str):
            source["bytes"] = base64.b64decode(source["bytes"])
    result = block.get("toolResult")
    if isinstance(result, dict):
        for item in result.get("content") or []:
            if isinstance(item, dict):
                _blobs_to_bytes(item)


def boto3_params(body: Mapping[str, Any]) -> dict[str, Any]:
    """``req.body`` as keyword arguments for boto3's ``converse`` and
    ``converse_stream`` (add ``modelId=``): a copy whose blobs
    (``redactedContent``, image and document ``bytes``) are bytes, since boto3
    base64-encodes blobs itself and would otherwise encode the base64 text a
    second time."""
    params = copy.deepcopy(dict(body))
    for message in params.get("messages", []):
        for block in message["content"]:
            _blobs_to_bytes(block)
    return params


class Adapter(Provider):
    id = _Wire.key
    connection = Connection(
        "https://bedrock-runtime.{region}.amazonaws.com",
        "aws",
        "aws-eventstream",
        key_env=("AWS_BEARER_TOKEN_BEDROCK",),
        rejections=CLAUDE_REJECTIONS,
    )
    replay_error_ways = REPLAY_ERROR_WAYS

    # -- request ---------------------------------------------------------------

    def named_turn(self, replay: Replay, message: str) -> int | None:
        return _WIRE.named_turn(replay, message)

    def resolve_replay_error(self, options: Mapping[str, Any], way: str) -> dict[str, Any]:
        return _claude.resolved_options(options, _WIRE.paths["thinking"], way)

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        extra, thinking = _check_options(options, has_tools=bool(conversation.tools))
        encoded, tally = _WIRE.messages(conversation, replay, thinking)
        tool_turns, marks = divmod(tally, _TOOL_TURN)
        if not conversation.tools and tool_turns:
            raise ValidationError(
                "The toolConfig field must be defined when using toolUse and toolResult content blocks "
                "(give the conversation its tools)",
                path="toolConfig",
            )

        body: dict[str, Any] = {"messages": encoded}
        if conversation.system_prompts:
            body["system"] = _WIRE.system_blocks(conversation.system_messages)
            marks += _WIRE.marks_in(body["system"])
        if conversation.tools:
            tools = [spec for t in conversation.tools for spec in _tool(t)]
            marks += _WIRE.marks_in(tools)
            body["toolConfig"] = {"tools": tools, **extra.pop("toolConfig", {})}
        _WIRE.check_marks(marks)
        _WIRE.put_response_format(extra, conversation.response_format)
        if thinking.block_binding:
            fields = dict(extra["additionalModelRequestFields"])
            fields["anthropic_beta"] = _claude.merge_betas(fields.get("anthropic_beta") or [], [_claude.BINDING_BETA])
            extra["additionalModelRequestFields"] = fields
        body.update(extra)

        action = "converse-stream" if stream else "converse"
        path = f"/model/{quote(model, safe='')}/{action}"
        return Built(body, splice(body, "messages", encoded), path, {"content-type": "application/json"})

    # -- response --------------------------------------------------------------

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        return _WIRE.reply(Node(response).object().node("output").node("message"), role_required=True)

    def reply_info(self, response: Mapping[str, Any]) -> ReplyInfo:
        root = Node(response).object()
        counts: dict[str, int | None] = {}
        _claude.read_counts(root.opt_node("usage"), _USAGE, counts)
        # A Converse reply carries neither a response id nor the served model.
        return ReplyInfo(root.opt("stopReason", str), Usage(**counts))

    def new_stream(self) -> StreamParser:
        return _Stream()


# -- options -----------------------------------------------------------------------


def _mapping(options: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = options.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"{key}: expected an object", path=key)
    return value


def _check_options(options: dict[str, Any], *, has_tools: bool) -> tuple[dict[str, Any], _claude.ThinkingSettings]:
    """The caller's options, checked; returns them (toolConfig without tools)
    and the Claude thinking settings found in additionalModelRequestFields."""
    # Frozen JSON copies: a value that is not JSON (NaN, a set, a lone surrogate,
    # a non-string key) raises at its path, and the body never shares the caller's dicts.
    options.update(frozen_options(options, _RESERVED))
    for key in options:
        if key not in _OPTIONS:
            raise ValidationError(
                f"{key}: not a Converse request field (expected one of {', '.join(sorted(_OPTIONS))})", path=key
            )
    inference = _mapping(options, "inferenceConfig")
    fields = _mapping(options, "additionalModelRequestFields")
    tool_config = _mapping(options, "toolConfig")
    _mapping(options, "outputConfig")
    max_tokens = inference.get("maxTokens")
    if max_tokens is not None and (not _claude.is_int(max_tokens) or max_tokens < 1):
        raise ValidationError("inferenceConfig.maxTokens: expected an integer >= 1", path="inferenceConfig.maxTokens")
    if "tools" in tool_config:
        raise ValidationError(
            "toolConfig.tools: set by thinkseal from Conversation(tools=...); pass only toolChoice",
            path="toolConfig.tools",
        )
    if tool_config and not has_tools:
        raise ValidationError("toolConfig: the conversation has no tools to choose from", path="toolConfig")
    betas = _claude.check_betas(fields.get("anthropic_beta"), "additionalModelRequestFields.anthropic_beta")
    thinking = _WIRE.settings(options, betas)
    extra = dict(options)
    if tool_config:
        extra["toolConfig"] = dict(tool_config)
    return extra, thinking


# -- request pieces -------------------------------------------------------------------


def _tool(tool: Tool) -> list[dict[str, Any]]:
    """A tool definition, followed by its cache point if it has one."""
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description:  # NonEmptyString in the service model
        spec["description"] = tool.description
    spec["inputSchema"] = {"json": tool.parameters}
    entry = {"toolSpec": spec}
    return [entry] if tool.cache is None else [entry, _cache_point(tool.cache.ttl)]


# -- response pieces ---------------------------------------------------------------------

_BLOCK_KINDS: Final[tuple[str, ...]] = ("text", "toolUse", "reasoningContent")


def _kind(node: Node, known: tuple[str, ...], what: str) -> str:
    """The member set in a Converse union object (exactly one of ``known``)."""
    node.object()
    present = [k for k in known if node.value.get(k) is not None]
    if len(present) == 1:
        return present[0]
    if not present:
        others = ", ".join(repr(k) for k in node.value) or "none"
        raise ResponseError(f"unknown {what} (members: {others})", path=node.path)
    raise ResponseError(f"{what} sets several members: {', '.join(present)}", path=node.path)


def _redacted(value: object, path: str) -> ThinkingBlock:
    """Redacted content: base64 text in the HTTP JSON, bytes from boto3."""
    data = b64_text(value, path)
    if not data:
        raise ResponseError("redacted content is empty", path=path)
    return _claude.redacted(data, path)


def _jsonable(value: Any, path: str, depth: int = 1) -> Any:
    """A Converse value as in the HTTP JSON: boto3's blobs (bytes) as base64
    text. Nesting past ``Limits.max_depth`` is a ``ResponseError`` at ``path``
    (the block), not a ``RecursionError``."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, (Mapping, list, tuple)):
        check_depth(depth, path)
        if isinstance(value, Mapping):
            return {k: _jsonable(v, path, depth + 1) for k, v in value.items()}
        return [_jsonable(v, path, depth + 1) for v in value]
    return value


def _native(block: Mapping[str, Any], path: str) -> Native:
    """A content block thinkseal does not read, kept as Bedrock's own. A
    ``citationsContent`` block carries the generated text: that is its text
    for other providers."""
    value = _jsonable(block, path)
    if not any(v is not None for v in value.values()):
        raise ResponseError("unknown content block type (members: none)", path=path)
    text = None
    cited = value.get("citationsContent")
    if isinstance(cited, Mapping):
        pieces = [c.get("text") for c in cited.get("content") or [] if isinstance(c, Mapping)]
        text = "".join(p for p in pieces if isinstance(p, str)) or None
    return _claude.native_part(_WIRE.key, value, path, text=text)


# -- streaming ------------------------------------------------------------------------------


class _Block(_claude.StreamBlock):
    """One content block being streamed (by its ``contentBlockIndex``); ``kind``
    is "text", "reasoning", "toolUse" or "native" (``native`` holds the block
    as it came, completed by its deltas)."""

    __slots__ = ("citations", "input", "native", "redacted")

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.redacted = bytearray()
        self.input: list[str] = []
        self.citations: list[Any] = []
        self.native: dict[str, Any] = {}


_DELTA_KINDS: Final[tuple[str, ...]] = ("text", "toolUse", "reasoningContent")


class _Stream(_claude.Stream[_Block]):
    """Accumulates ConverseStream events (``{"contentBlockDelta": {...}}``, ...)."""

    start_event = "messageStart"
    stop_event = "messageStop"
    content_path = "$.output.message.content"

    def feed(self, event: Mapping[str, Any]) -> list[Delta]:
        root = Node(event).object()
        for name in _EXCEPTIONS:
            if root.has(name):
                raise _claude.provider_error(name, root.value[name], f"$.{name}")
        if root.has("messageStart"):
            root.node("messageStart")
            self._started = True
        elif root.has("contentBlockStart"):
            return self._start(root.node("contentBlockStart"))
        elif root.has("contentBlockDelta"):
            return self._delta(root.node("contentBlockDelta"))
        elif root.has("contentBlockStop"):
            self._stop(root.node("contentBlockStop"))
        elif root.has("messageStop"):
            stop = root.node("messageStop")
            self._require_started(stop)
            self._stopped = True
            self._stop_reason = stop.opt("stopReason", str)
        elif root.has("metadata"):
            _claude.read_counts(root.node("metadata").opt_node("usage"), _USAGE, self._usage)
        # events added later: nothing to keep
        return []

    def _require_started(self, node: Node) -> None:
        if not self._started:
            raise ResponseError("event before messageStart", path=node.path)
        if self._stopped:
            raise ResponseError("event after messageStop", path=node.path)

    def _block(self, node: Node, kind: str | None) -> _Block:
        """The block at the event's index; ``kind`` creates it when new."""
        self._require_started(node)
        index = node.get("contentBlockIndex", int)
        block = self._blocks.get(index)
        if block is None:
            if kind is None:
                raise ResponseError(f"block {index} was never started", path=f"{node.path}.contentBlockIndex")
            block = self._blocks[index] = _Block(kind)
        elif block.stopped:
            raise ResponseError(f"block {index} already stopped", path=f"{node.path}.contentBlockIndex")
        return block

    def _start(self, node: Node) -> list[Delta]:
        index = node.get("contentBlockIndex", int)
        if index in self._blocks:
            raise ResponseError(f"block {index} started twice", path=f"{node.path}.contentBlockIndex")
        start = node.node("start")
        if start.value.get("toolUse") is None:
            members = {k: v for k, v in start.value.items() if v is not None}
            if not members:
                raise ResponseError("unknown content block start (members: none)", path=start.path)
            block = self._block(node, "native")  # a block thinkseal keeps as it came
            block.native = {k: dict(v) if isinstance(v, Mapping) else v for k, v in members.items()}
            return []
        _kind(start, ("toolUse",), "content block start")
        use = start.node("toolUse")
        block = self._block(node, "toolUse")
        block.id = use.text("toolUseId")
        block.name = use.text("name")
        return [ToolCallDelta(index, id=block.id, name=block.name)]

    def _delta(self, node: Node) -> list[Delta]:
        delta = node.node("delta")
        index = node.get("contentBlockIndex", int)
        if not any(delta.has(k) for k in _DELTA_KINDS):
            return self._other_delta(node, delta)
        kind = _kind(delta, _DELTA_KINDS, "delta type")
        wanted = {"text": "text", "toolUse": "toolUse", "reasoningContent": "reasoning"}[kind]
        block = self._block(node, None if kind == "toolUse" else wanted)
        if block.kind != wanted:
            raise ResponseError(f"{kind} delta for a {block.kind} block", path=f"{delta.path}.{kind}")
        if kind == "text":
            piece = delta.text("text")
            block.pieces.append(piece)
            return [TextDelta(index, piece)] if piece else []
        if kind == "toolUse":
            piece = delta.node("toolUse").text("input")
            block.input.append(piece)
            return [ToolCallDelta(index, arguments=piece)] if piece else []
        reasoning = delta.node("reasoningContent")
        member = _kind(reasoning, ("text", "signature", "redactedContent"), "reasoning delta")
        if member == "redactedContent":
            path = f"{reasoning.path}.redactedContent"
            block.redacted += base64.b64decode(b64_text(reasoning.value[member], path))
        elif member == "text":
            piece = reasoning.text("text")
            block.pieces.append(piece)
            return [ThinkingDelta(index, piece)] if piece else []
        else:
            block.signature += reasoning.text("signature")
        return []

    def _other_delta(self, node: Node, delta: Node) -> list[Delta]:
        """A delta with none of the members thinkseal reads: a citation of a
        text block, or more of a block kept as it came."""
        members = {k: v for k, v in delta.object().value.items() if v is not None}
        if "citation" in members:
            block = self._block(node, "text")
            if block.kind == "text":
                block.citations.append(members["citation"])
            return []
        block = self._block(node, "native" if members else None)
        if block.kind != "native":
            return []  # something newer about a block thinkseal reads: not part of the turn it keeps
        for key, value in members.items():
            if isinstance(value, Mapping):
                target = block.native.setdefault(key, {})
                if isinstance(target, dict):
                    target.update(value)
            elif isinstance(value, list):
                target = block.native.setdefault(key, {})
                if isinstance(target, dict):
                    target.setdefault("content", []).extend(value)
        return []

    def _stop(self, node: Node) -> None:
        self._block(node, None).stopped = True

    def part(self, block: _Block, path: str) -> Part | None:
        if block.kind == "text":
            text = block.text
            if block.citations:
                cited = {"citationsContent": {"content": [{"text": text}], "citations": block.citations}}
                return _native(cited, path)
            return text
        if block.kind == "native":
            return _native(block.native, path)
        if block.kind == "toolUse":
            raw = "".join(block.input)
            arguments = parse_arguments(raw, f"{path}.toolUse.input")
            return _WIRE.tool_call(block.id, block.name, arguments, f"{path}.toolUse")
        if block.redacted:
            if block.text or block.signature:
                raise ResponseError(
                    "reasoning block has both redacted content and text", path=f"{path}.reasoningContent"
                )
            return ThinkingBlock.Redacted(base64.b64encode(bytes(block.redacted)).decode())
        return _claude.thinking_block(block.text, block.signature)

    def partial_part(self, block: _Block) -> Part | None:
        if block.kind == "text":
            return block.text
        if block.kind == "toolUse":
            return _claude.complete_call(block, "".join(block.input), {}, _WIRE.tool_call)
        return None


__all__ = ["Adapter"]
