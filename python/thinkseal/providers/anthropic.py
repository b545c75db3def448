"""Anthropic Messages API (``POST /v1/messages``).

What Anthropic requires, and what thinkseal does about it, is in
docs/providers.md (#anthropic-the-request, then #anthropic-thinking-options,
#anthropic-replay-rules-and-the-errors-behind-them,
#claudes-tool-loop-and-replayerror and
#anthropic-content-parts-caching-and-replies). In short:

- ``max_tokens`` is required; ``anthropic-version: 2023-06-01``; the ``betas``
  option (and the binding-controls beta) in ``anthropic-beta``.
- Claude's rules, shared with Bedrock, are in ``_claude``: tool pairing into
  one user turn, which thinking parts go on the wire (signed and redacted, in
  the order received, only in kept turns), the thinking options and the
  tool-loop check. This module is Anthropic's spelling of them: block shapes,
  ``cache_control``, ``output_config.format``, the reply's usage fields and the
  SSE events (``req.stream()`` gives the same message as the reply received
  whole).
- Claude on Vertex AI takes the same Messages API at another endpoint:
  ``vertex_anthropic`` is this adapter with its own provider id and
  ``Adapter.route`` (path, body head, headers).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final

from .. import _core
from .._blocks import ThinkingBlock
from .._content import Document, Image
from .._conversation import Conversation
from .._errors import ResponseError, ValidationError
from .._messages import AssistantMessage, Message, Part, SystemMessage, ToolCall, ToolMessage, UserMessage
from .._replay import Replay
from .._reply import Delta, ReplyInfo, TextDelta, ThinkingDelta, ToolCallDelta, Usage
from .._tool import Tool
from . import _claude
from ._base import REPLAY_ERROR_WAYS, Built, Provider, StreamParser
from ._connection import CLAUDE_REJECTIONS, Connection
from ._options import BODY_FIELDS, frozen_options
from ._response import Node, parse_arguments
from ._wire import splice

PATH: Final[str] = "/v1/messages"
API_VERSION: Final[str] = "2023-06-01"

# Body fields thinkseal builds from the conversation; an option may not set them.
_RESERVED: Final[Mapping[str, str]] = MappingProxyType(
    {**BODY_FIELDS, "system": "put SystemMessage(s) in the conversation"}
)

# Usage fields and where Anthropic reports them.
_USAGE: Final[Mapping[str, str]] = MappingProxyType(
    {
        "input_tokens": "input_tokens",
        "output_tokens": "output_tokens",
        "cache_read_tokens": "cache_read_input_tokens",
        "cache_write_tokens": "cache_creation_input_tokens",
    }
)
_REASONING: Final[Mapping[str, str]] = MappingProxyType({"reasoning_tokens": "thinking_tokens"})


def _cache_control(ttl: str | None) -> dict[str, Any]:
    return {"type": "ephemeral"} if ttl is None else {"type": "ephemeral", "ttl": ttl}


def _plain_text(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "text" and len(block) == 2


# What the native turn writer (rust/python/src/claude.rs) checks a turn's
# messages and parts against, exactly, in the order it reads them.
_TURN_KIT: Final[tuple[type, ...]] = (
    AssistantMessage,
    UserMessage,
    ToolMessage,
    ToolCall,
    ThinkingBlock.Text,
    ThinkingBlock.Redacted,
    ThinkingBlock.Opaque,
    SystemMessage,
)


class _Wire(_claude.Wire):
    """The Messages API's spelling of Claude's wire."""

    key = "anthropic"
    name = "Anthropic"
    paths = MappingProxyType({option: option for option in _claude.OPTION_NAMES})  # Claude's own names, top level
    tool_fields = MappingProxyType({"id": "id", "name": "name", "arguments": "input"})
    format_at = ("output_config", "format")  # Anthropic's native structured output

    def native_turn(self, role: str, group: list[Message]) -> bytes | None:
        return _core.claude_turn(role, group, _TURN_KIT)

    def native_turns(self, sent: Sequence[Message]) -> tuple[list[bytes], list[int]] | None:
        if type(sent) is not list:
            return None
        return _core.claude_turns(sent, self.memo_keys, _TURN_KIT)

    def text_block(self, text: str) -> dict[str, Any]:
        return {"type": "text", "text": text}

    def image_block(self, image: Image) -> dict[str, Any]:
        if image.url is not None:
            return {"type": "image", "source": {"type": "url", "url": image.url}}
        assert image.data is not None
        data = base64.b64encode(image.data).decode()
        return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": data}}

    def document_block(self, document: Document) -> dict[str, Any]:
        if document.text is not None:
            source = {"type": "text", "media_type": "text/plain", "data": document.text}
        elif document.url is not None:
            source = {"type": "url", "url": document.url}
        else:
            assert document.data is not None
            data = base64.b64encode(document.data).decode()
            source = {"type": "base64", "media_type": "application/pdf", "data": data}
        block: dict[str, Any] = {"type": "document", "source": source}
        if document.title is not None:
            block["title"] = document.title
        if document.citations:
            block["citations"] = {"enabled": True}
        return block

    def marked(self, blocks: list[dict[str, Any]], marks: Sequence[_claude.Mark]) -> list[dict[str, Any]]:
        if not marks:
            return blocks
        out = list(blocks)
        for index, ttl in marks:
            out[index] = {**out[index], "cache_control": _cache_control(ttl)}
        return out

    def marks_in(self, blocks: Iterable[Any]) -> int:
        count = 0
        for block in blocks:
            if not isinstance(block, Mapping):
                continue
            if block.get("cache_control") is not None:
                count += 1
            inner = block.get("content") if block.get("type") == "tool_result" else None
            if isinstance(inner, list):
                count += self.marks_in(inner)
        return count

    def too_many_marks(self, count: int) -> ValidationError:
        # Anthropic's wording (docs/providers.md, Anthropic).
        return ValidationError(
            f"A maximum of {_claude.MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {count}.",
            path="cache_control",
        )

    def tool_use_block(self, call: ToolCall) -> dict[str, Any]:
        return {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}

    def thinking_wire(self, block: ThinkingBlock.Text) -> dict[str, Any]:
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}

    def redacted_wire(self, block: ThinkingBlock.Redacted) -> dict[str, Any]:
        return {"type": "redacted_thinking", "data": block.data}

    def tool_result_blocks(
        self, message: ToolMessage, blocks: list[dict[str, Any]], marks: Sequence[_claude.Mark]
    ) -> list[dict[str, Any]]:
        # One plain text goes as a string, as plain text content always did.
        content: Any = blocks[0]["text"] if len(blocks) == 1 and not marks and _plain_text(blocks[0]) else None
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": content if content is not None else self.marked(blocks, marks),
        }
        if message.is_error:
            block["is_error"] = True
        return [block]

    def format_wire(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        return {"type": "json_schema", "schema": spec["schema"]}

    def user_wire(self, group: list[Message]) -> dict[str, Any]:
        # A lone user message goes out as plain string content when it is one text.
        if len(group) == 1 and isinstance(group[0], UserMessage):
            return {"role": "user", "content": self.user_content(group[0])}
        return super().user_wire(group)

    def user_content(self, message: UserMessage) -> str | list[dict[str, Any]]:
        if isinstance(message.content, str):
            return message.content
        blocks, marks = self.content_of(message.parts)
        if not blocks:
            raise self.nothing_to_send(message)
        if len(blocks) == 1 and not marks and _plain_text(blocks[0]):
            return str(blocks[0]["text"])
        return self.marked(blocks, marks)

    def forces_tool(self, choice: object) -> bool:
        # {"type": "any"} and {"type": "tool"} force a tool.
        return isinstance(choice, Mapping) and choice.get("type") in ("any", "tool")

    def read_block(self, block: Node) -> Part | None:
        kind = block.get("type", str)
        if kind == "text":
            text = block.text("text")
            if block.opt("citations", list):
                return _claude.native_part(self.key, block.value, block.path, text=text)
            return text
        if kind == "thinking":
            return _claude.thinking_block(block.text("thinking"), block.text("signature"))
        if kind == "redacted_thinking":
            return _claude.redacted(block.text("data"), f"{block.path}.data")
        if kind == "tool_use":
            return self.tool_call(block.text("id"), block.text("name"), block.get("input", dict), block.path)
        # Server tool use and results, container uploads, anything newer: kept as they came.
        return _claude.native_part(self.key, block.value, block.path)


_WIRE: Final = _Wire()


class Adapter(Provider):
    id = _Wire.key
    connection = Connection(
        "https://api.anthropic.com",
        "x-api-key",
        key_env=("ANTHROPIC_API_KEY",),
        base_url_env=("ANTHROPIC_BASE_URL",),
        rejections=CLAUDE_REJECTIONS,
    )
    # Another endpoint of the Messages API (``vertex_anthropic``) subclasses this
    # adapter with its own wire (its provider id), reserved fields and ``route``.
    wire: ClassVar[_Wire] = _WIRE
    reserved: ClassVar[Mapping[str, str]] = _RESERVED
    replay_error_ways = REPLAY_ERROR_WAYS

    # -- request ---------------------------------------------------------------

    def named_turn(self, replay: Replay, message: str) -> int | None:
        return self.wire.named_turn(replay, message)

    def resolve_replay_error(self, options: Mapping[str, Any], way: str) -> dict[str, Any]:
        return _claude.resolved_options(options, self.wire.paths["thinking"], way)

    def route(self, model: str, stream: bool, options: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, str]]:
        """The request's path, the body fields before ``messages`` and the
        headers, for this endpoint; an endpoint that routes by options pops them
        from ``options`` here, so they never reach the body."""
        return PATH, {"model": model}, {"anthropic-version": API_VERSION, "content-type": "application/json"}

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        path, body, headers = self.route(model, stream, options)
        wire = self.wire
        betas = _claude.check_betas(options.pop("betas", None), "betas")
        thinking = self.check_options(options, betas)
        encoded, marks = wire.messages(conversation, replay, thinking)
        body["messages"] = encoded
        if conversation.system_prompts:
            systems = conversation.system_messages
            if len(systems) == 1 and isinstance(systems[0].content, str):
                body["system"] = systems[0].content
            else:
                body["system"] = wire.system_blocks(systems)
                marks += wire.marks_in(body["system"])
        if conversation.tools:
            body["tools"] = [_tool(t) for t in conversation.tools]
            marks += wire.marks_in(body["tools"])
        wire.check_marks(marks)
        wire.put_response_format(options, conversation.response_format)
        body.update(options)
        if stream:
            body["stream"] = True

        if thinking.block_binding:
            betas = _claude.merge_betas(betas, [_claude.BINDING_BETA])
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
        return Built(body, splice(body, "messages", encoded), path, headers)

    def check_options(self, options: dict[str, Any], betas: list[str]) -> _claude.ThinkingSettings:
        # Frozen JSON copies: a value that is not JSON (NaN, a set, a lone surrogate,
        # a non-string key) raises at its path, and the body never shares the caller's dicts.
        options.update(frozen_options(options, self.reserved))
        if "max_tokens" not in options:
            raise ValidationError(
                f"max_tokens: Field required ({self.wire.name} requires max_tokens)", path="max_tokens"
            )
        max_tokens = options["max_tokens"]
        if not _claude.is_int(max_tokens) or max_tokens < 0:
            raise ValidationError("max_tokens: Input should be a valid integer (>= 0)", path="max_tokens")
        return self.wire.settings(options, betas)

    # -- response --------------------------------------------------------------

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        root = Node(response).object()
        if root.value.get("type") == "error":
            raise _error_event(root)
        return self.wire.reply(root, role_required=False)

    def reply_info(self, response: Mapping[str, Any]) -> ReplyInfo:
        root = Node(response).object()
        counts: dict[str, int | None] = {}
        _read_usage(root.opt_node("usage"), counts)
        return ReplyInfo(root.opt("stop_reason", str), Usage(**counts), root.opt("id", str), root.opt("model", str))

    def new_stream(self) -> StreamParser:
        return _Stream(self.wire)


# -- request pieces -------------------------------------------------------------


def _tool(tool: Tool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description:
        spec["description"] = tool.description
    spec["input_schema"] = tool.parameters
    if tool.cache is not None:
        spec["cache_control"] = _cache_control(tool.cache.ttl)
    return spec


# -- response pieces -------------------------------------------------------------


def _error_event(node: Node) -> ResponseError:
    error = node.opt("error", dict) or {}
    return _claude.provider_error(error.get("type", "error"), error, f"{node.path}.error")


def _read_usage(usage: Node | None, counts: dict[str, int | None]) -> None:
    """A ``usage`` object (a message's, or a ``message_delta``'s cumulative one) into ``counts``."""
    _claude.read_counts(usage, _USAGE, counts)
    if usage is not None:
        _claude.read_counts(usage.opt_node("output_tokens_details"), _REASONING, counts)


# -- streaming -------------------------------------------------------------------


class _Block(_claude.StreamBlock):
    """One content block being streamed (by its ``index``). ``start`` is its
    ``content_block`` (for text and native blocks); ``citations`` what
    ``citations_delta`` brought."""

    __slots__ = ("citations", "data", "json", "start", "start_input", "texted")

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.data = ""
        self.json: list[str] = []
        self.start_input: dict[str, Any] = {}
        self.start: dict[str, Any] = {}
        self.citations: list[Any] | None = None
        self.texted = False  # a native block got text_delta


# The kinds of block each delta type belongs to ("native": any block kept as it came).
_DELTA_KIND: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "text_delta": ("text", "native"),
        "citations_delta": ("text", "native"),
        "thinking_delta": ("thinking",),
        "signature_delta": ("thinking",),
        "input_json_delta": ("tool_use", "native"),
    }
)
_KNOWN: Final[frozenset[str]] = frozenset({"text", "thinking", "redacted_thinking", "tool_use"})


class _Stream(_claude.Stream[_Block]):
    """Accumulates the data objects of Anthropic's SSE events (``wire``: the
    endpoint's, whose provider id its native blocks carry)."""

    start_event = "message_start"
    stop_event = "message_stop"
    content_path = "$.content"

    def __init__(self, wire: _Wire) -> None:
        super().__init__()
        self._wire = wire

    def feed(self, event: Mapping[str, Any]) -> list[Delta]:
        node = Node(event).object()
        kind = node.get("type", str)
        if kind == "error":
            raise _error_event(node)
        if kind == "ping":
            return []
        if kind == "message_start":
            message = node.node("message")
            self._started = True
            self._id = message.opt("id", str)
            self._model = message.opt("model", str)
            self._stop_reason = message.opt("stop_reason", str)
            _read_usage(message.opt_node("usage"), self._usage)
            return []
        if kind not in ("content_block_start", "content_block_delta", "content_block_stop", "message_delta"):
            if kind == "message_stop":
                self._require_started(node)
                self._stopped = True
            return []  # other event types may be added; Anthropic asks clients to ignore them
        self._require_started(node)
        if self._stopped:
            raise ResponseError(f"{kind} after message_stop", path="$.type")
        if kind == "message_delta":
            delta = node.node("delta")
            self._stop_reason = delta.opt("stop_reason", str) or self._stop_reason
            _read_usage(node.opt_node("usage"), self._usage)  # cumulative counts
            return []
        index = node.get("index", int)
        if kind == "content_block_start":
            return self._start(index, node.node("content_block"))
        block = self._blocks.get(index)
        if block is None:
            raise ResponseError(f"{kind} for block {index}, which was never started", path="$.index")
        if block.stopped:
            raise ResponseError(f"{kind} for block {index}, which already stopped", path="$.index")
        if kind == "content_block_stop":
            block.stopped = True
            return []
        return self._delta(index, block, node.node("delta"))

    def _require_started(self, node: Node) -> None:
        if not self._started:
            raise ResponseError(f"{node.value['type']} before message_start", path="$.type")

    def _start(self, index: int, content: Node) -> list[Delta]:
        if index in self._blocks:
            raise ResponseError(f"block {index} started twice", path="$.index")
        kind = content.get("type", str)
        block = _Block(kind if kind in _KNOWN else "native")
        deltas: list[Delta] = []
        if kind == "text":
            text = content.text("text")
            block.pieces.append(text)
            block.start = dict(content.value)
            citations = content.opt("citations", list)
            block.citations = list(citations) if citations is not None else None
            if text:
                deltas.append(TextDelta(index, text))
        elif kind == "thinking":
            text = content.text("thinking")
            block.pieces.append(text)
            block.signature = content.opt("signature", str, "")
            if text:
                deltas.append(ThinkingDelta(index, text))
        elif kind == "redacted_thinking":
            block.data = content.text("data")
        elif kind == "tool_use":
            block.id = content.text("id")
            block.name = content.text("name")
            block.start_input = dict(content.opt("input", dict, {}))
            deltas.append(ToolCallDelta(index, id=block.id, name=block.name))
        else:
            block.start = dict(content.value)  # kept as it came, completed by its deltas
        self._blocks[index] = block
        return deltas

    def _delta(self, index: int, block: _Block, delta: Node) -> list[Delta]:
        kind = delta.get("type", str)
        fits = _DELTA_KIND.get(kind)
        if block.kind == "native" and fits is None:
            return []  # a newer delta of a block thinkseal keeps as it came
        if fits is None:
            raise ResponseError(f"unknown delta type {kind!r}", path="$.delta.type")
        if block.kind not in fits:
            raise ResponseError(f"{kind} for a {block.kind} block", path="$.delta.type")
        if kind == "text_delta":
            piece = delta.text("text")
            if block.kind == "native":
                block.texted = True
                block.pieces.append(piece)
                return []
            block.pieces.append(piece)
            return [TextDelta(index, piece)] if piece else []
        if kind == "thinking_delta":
            piece = delta.text("thinking")
            block.pieces.append(piece)
            return [ThinkingDelta(index, piece)] if piece else []
        if kind == "signature_delta":
            block.signature = delta.text("signature")  # replaces, as the official SDK does
            return []
        if kind == "input_json_delta":
            piece = delta.text("partial_json")
            block.json.append(piece)
            return [ToolCallDelta(index, arguments=piece)] if block.kind == "tool_use" and piece else []
        # citations_delta: one more citation of the text block
        if block.citations is None:
            block.citations = []
        block.citations.append(delta.get("citation", dict))
        return []

    def part(self, block: _Block, path: str) -> Part | None:
        if block.kind == "text":
            text = block.text
            if block.citations:
                value = {**block.start, "text": text, "citations": block.citations}
                return _claude.native_part(self._wire.key, value, path, text=text)
            return text
        if block.kind == "thinking":
            return _claude.thinking_block(block.text, block.signature)
        if block.kind == "redacted_thinking":
            return _claude.redacted(block.data, f"{path}.data")
        if block.kind == "native":
            value = dict(block.start)
            if block.json:
                value["input"] = parse_arguments("".join(block.json), f"{path}.input")
            if block.texted:
                value["text"] = str(value.get("text") or "") + block.text
            if block.citations is not None:
                value["citations"] = [*(value.get("citations") or []), *block.citations]
            return _claude.native_part(self._wire.key, value, path)
        raw = "".join(block.json)
        arguments = parse_arguments(raw, f"{path}.input") if raw.strip() else block.start_input
        return self._wire.tool_call(block.id, block.name, arguments, path)

    def partial_part(self, block: _Block) -> Part | None:
        if block.kind == "text":
            return block.text
        if block.kind == "tool_use":
            return _claude.complete_call(block, "".join(block.json), block.start_input, self._wire.tool_call)
        return None


__all__ = ["Adapter"]
