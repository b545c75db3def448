"""Anthropic Messages API (``POST /v1/messages``).

What Anthropic requires, and what thinkseal does about it:

- ``max_tokens`` is required: ``prepare`` raises ``ValidationError`` without it.
  Headers: ``anthropic-version: 2023-06-01``; ``anthropic-beta`` when needed
  (the ``betas`` option, as in the official SDK, plus the binding-controls beta
  whenever ``thinking.block_binding`` is set).
- System messages, wherever they stand, go to the top-level ``system`` field in
  order (a string for one, a list of text blocks for several).
- Each ``tool_use`` must be answered by a ``tool_result`` in the very next user
  turn: unanswered calls are not sent (which unseals that turn), a result that
  answers no call goes out as user text naming the call id, and every run of
  tool results and user text becomes ONE user turn, results first in call
  order (``is_error`` -> ``tool_result.is_error``).
- Thinking goes back as ``thinking {thinking, signature}`` (also with empty
  text) and ``redacted_thinking {data}``, only for turns the replay decision
  keeps, part by part in the order received (interleaved thinking, text and
  tool_use stay interleaved). Unsigned thinking text and other providers'
  opaque blocks are never sent; empty text blocks are left out (a 400).
- An assistant turn with no text and no tool calls (thinking alone) is left out
  (Claude rejects empty and thinking-only assistant messages); the user turns
  around it merge.
- Thinking options are checked with Anthropic's own wording: budget_tokens
  >= 1024 and < max_tokens (unless the interleaved-thinking beta is on);
  temperature only 1, no top_k, top_p in [0.95, 1] and no forced tool_choice
  (manual mode) while thinking is on.
- With thinking enabled or adaptive, a tool loop's last assistant turn must go
  out starting with its thinking: ``prepare`` raises ``ReplayError`` when it
  would not (edited, pruned or re-targeted history), unless the caller set
  ``thinking.block_binding = {"prefix_mismatch_behavior": "drop_block"}``.
- ``response_format`` json_schema -> ``output_config.format`` (Anthropic's
  native structured output); ``json_object`` has no native equivalent and
  raises ``ValidationError``.
- What Anthropic and Bedrock share (Claude's rules) is in ``_claude``; this
  module is Anthropic's spelling of it.
- ``stream=True`` -> ``"stream": true``; ``req.stream()`` reads the SSE events'
  data objects (``thinking_delta`` concatenates, ``signature_delta`` replaces,
  ``input_json_delta`` is parsed at the block's stop); a stream without
  ``message_stop`` is truncated (``ResponseError``). Unknown event types are
  ignored, as Anthropic's versioning policy asks; unknown content block types
  are an error.
- A thinking block whose text and signature are both empty carries nothing and
  is not kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from .._blocks import ThinkingBlock
from .._conversation import Conversation
from .._errors import ResponseError, ValidationError
from .._messages import AssistantMessage, Message, Part, ToolCall, ToolMessage, UserMessage
from .._replay import Replay
from .._tool import Tool
from . import _claude
from ._base import Built, Provider, StreamParser
from ._options import BODY_FIELDS, check_reserved
from ._response import Node, parse_arguments
from ._wire import fragment, splice

PATH: Final[str] = "/v1/messages"
API_VERSION: Final[str] = "2023-06-01"

# Body fields thinkseal builds from the conversation; an option may not set them.
_RESERVED: Final[Mapping[str, str]] = MappingProxyType(
    {**BODY_FIELDS, "system": "put SystemMessage(s) in the conversation"}
)


class _Wire(_claude.Wire):
    """The Messages API's spelling of Claude's wire."""

    key = "anthropic"
    name = "Anthropic"
    paths = MappingProxyType({option: option for option in _claude.OPTION_NAMES})  # Claude's own names, top level
    tool_fields = MappingProxyType({"id": "id", "name": "name", "arguments": "input"})
    format_at = ("output_config", "format")  # Anthropic's native structured output

    def text_block(self, text: str) -> dict[str, Any]:
        return {"type": "text", "text": text}

    def tool_use_block(self, call: ToolCall) -> dict[str, Any]:
        return {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}

    def thinking_wire(self, block: ThinkingBlock.Text) -> dict[str, Any]:
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}

    def redacted_wire(self, block: ThinkingBlock.Redacted) -> dict[str, Any]:
        return {"type": "redacted_thinking", "data": block.data}

    def tool_result_block(self, message: ToolMessage) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
        if message.is_error:
            block["is_error"] = True
        return block

    def format_wire(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        return {"type": "json_schema", "schema": spec["schema"]}

    def user_turn(self, group: list[Message]) -> tuple[Any, bytes]:
        # A lone user message goes out as plain string content.
        if len(group) == 1 and isinstance(group[0], UserMessage):
            message = group[0]
            return fragment(message, "anthropic:user", lambda: {"role": "user", "content": message.content})
        return super().user_turn(group)

    def forces_tool(self, choice: object) -> bool:
        # {"type": "any"} and {"type": "tool"} force a tool.
        return isinstance(choice, Mapping) and choice.get("type") in ("any", "tool")

    def read_block(self, block: Node) -> Part | None:
        kind = block.get("type", str)
        if kind == "text":
            return block.text("text")
        if kind == "thinking":
            return _claude.thinking_block(block.text("thinking"), block.text("signature"))
        if kind == "redacted_thinking":
            return _claude.redacted(block.text("data"), f"{block.path}.data")
        if kind == "tool_use":
            return self.tool_call(block.text("id"), block.text("name"), block.get("input", dict), block.path)
        raise ResponseError(f"unknown content block type {kind!r}", path=f"{block.path}.type")


_WIRE: Final = _Wire()


class Adapter(Provider):
    id = _Wire.key

    # -- request ---------------------------------------------------------------

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        betas = _claude.check_betas(options.pop("betas", None), "betas")
        thinking = _check_options(options, betas)
        turns, encoded = _WIRE.messages(conversation, replay, thinking)
        body: dict[str, Any] = {"model": model, "messages": turns}
        systems = conversation.system_prompts
        if systems:
            body["system"] = systems[0] if len(systems) == 1 else [{"type": "text", "text": s} for s in systems]
        if conversation.tools:
            body["tools"] = [_tool(t) for t in conversation.tools]
        _WIRE.put_response_format(options, conversation.response_format)
        body.update(options)
        if stream:
            body["stream"] = True

        if thinking.block_binding:
            betas = _claude.merge_betas(betas, [_claude.BINDING_BETA])
        headers = {"anthropic-version": API_VERSION, "content-type": "application/json"}
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
        return Built(body, splice(body, "messages", encoded), PATH, headers)

    # -- response --------------------------------------------------------------

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        root = Node(response).object()
        if root.value.get("type") == "error":
            raise _error_event(root)
        return _WIRE.reply(root, role_required=False)

    def new_stream(self) -> StreamParser:
        return _Stream()


# -- request pieces -------------------------------------------------------------


def _check_options(options: dict[str, Any], betas: list[str]) -> _claude.ThinkingSettings:
    check_reserved(options, _RESERVED)
    if "max_tokens" not in options:
        raise ValidationError("max_tokens: Field required (Anthropic requires max_tokens)", path="max_tokens")
    max_tokens = options["max_tokens"]
    if not _claude.is_int(max_tokens) or max_tokens < 0:
        raise ValidationError("max_tokens: Input should be a valid integer (>= 0)", path="max_tokens")
    return _WIRE.settings(options, betas)


def _tool(tool: Tool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description:
        spec["description"] = tool.description
    spec["input_schema"] = tool.parameters
    return spec


def _error_event(node: Node) -> ResponseError:
    error = node.opt("error", dict) or {}
    return _claude.provider_error(error.get("type", "error"), error, f"{node.path}.error")


# -- streaming -------------------------------------------------------------------


class _Block(_claude.StreamBlock):
    """One content block being streamed (by its ``index``)."""

    __slots__ = ("data", "json", "start_input")

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.data = ""
        self.json: list[str] = []
        self.start_input: dict[str, Any] = {}


_DELTA_KIND: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "text_delta": ("text",),
        "citations_delta": ("text",),
        "thinking_delta": ("thinking",),
        "signature_delta": ("thinking",),
        "input_json_delta": ("tool_use",),
    }
)


class _Stream(_claude.Stream[_Block]):
    """Accumulates the data objects of Anthropic's SSE events."""

    start_event = "message_start"
    stop_event = "message_stop"
    content_path = "$.content"

    def feed(self, event: Mapping[str, Any]) -> None:
        node = Node(event).object()
        kind = node.get("type", str)
        if kind == "error":
            raise _error_event(node)
        if kind == "ping":
            return
        if kind == "message_start":
            node.node("message")
            self._started = True
            return
        if kind not in ("content_block_start", "content_block_delta", "content_block_stop", "message_delta"):
            if kind == "message_stop":
                self._require_started(node)
                self._stopped = True
            return  # other event types may be added; Anthropic asks clients to ignore them
        self._require_started(node)
        if self._stopped:
            raise ResponseError(f"{kind} after message_stop", path="$.type")
        if kind == "message_delta":
            node.node("delta")
            return
        index = node.get("index", int)
        if kind == "content_block_start":
            self._start(index, node.node("content_block"))
            return
        block = self._blocks.get(index)
        if block is None:
            raise ResponseError(f"{kind} for block {index}, which was never started", path="$.index")
        if block.stopped:
            raise ResponseError(f"{kind} for block {index}, which already stopped", path="$.index")
        if kind == "content_block_stop":
            block.stopped = True
        else:
            self._delta(block, node.node("delta"))

    def _require_started(self, node: Node) -> None:
        if not self._started:
            raise ResponseError(f"{node.value['type']} before message_start", path="$.type")

    def _start(self, index: int, content: Node) -> None:
        if index in self._blocks:
            raise ResponseError(f"block {index} started twice", path="$.index")
        kind = content.get("type", str)
        block = _Block(kind)
        if kind == "text":
            block.text = content.text("text")
        elif kind == "thinking":
            block.text = content.text("thinking")
            block.signature = content.opt("signature", str, "")
        elif kind == "redacted_thinking":
            block.data = content.text("data")
        elif kind == "tool_use":
            block.id = content.text("id")
            block.name = content.text("name")
            block.start_input = dict(content.opt("input", dict, {}))
        else:
            raise ResponseError(f"unknown content block type {kind!r}", path=f"{content.path}.type")
        self._blocks[index] = block

    def _delta(self, block: _Block, delta: Node) -> None:
        kind = delta.get("type", str)
        fits = _DELTA_KIND.get(kind)
        if fits is None:
            raise ResponseError(f"unknown delta type {kind!r}", path="$.delta.type")
        if block.kind not in fits:
            raise ResponseError(f"{kind} for a {block.kind} block", path="$.delta.type")
        if kind == "text_delta":
            block.text += delta.text("text")
        elif kind == "thinking_delta":
            block.text += delta.text("thinking")
        elif kind == "signature_delta":
            block.signature = delta.text("signature")  # replaces, as the official SDK does
        elif kind == "input_json_delta":
            block.json.append(delta.text("partial_json"))
        # citations_delta: citations are not part of the turn thinkseal keeps.

    def part(self, block: _Block, path: str) -> Part | None:
        if block.kind == "text":
            return block.text
        if block.kind == "thinking":
            return _claude.thinking_block(block.text, block.signature)
        if block.kind == "redacted_thinking":
            return _claude.redacted(block.data, f"{path}.data")
        raw = "".join(block.json)
        arguments = parse_arguments(raw, f"{path}.input") if raw.strip() else block.start_input
        return _WIRE.tool_call(block.id, block.name, arguments, path)


__all__ = ["Adapter"]
