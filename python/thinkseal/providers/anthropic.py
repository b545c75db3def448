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

from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._blocks import ThinkingBlock
from .._conversation import Conversation
from .._errors import ResponseError, ValidationError
from .._messages import AssistantMessage, Message, Part, ToolCall, ToolMessage, UserMessage
from .._replay import Replay
from .._tool import Tool
from . import _claude
from ._base import Built, Provider, StreamParser
from ._response import Node, parse_arguments, wrap_errors
from ._wire import fragment, message_of_blocks, splice, wire_messages

PATH: Final[str] = "/v1/messages"
API_VERSION: Final[str] = "2023-06-01"

# Body fields thinkseal builds from the conversation; an option may not set them.
_OWNED: Final[dict[str, str]] = {
    "model": "pass model=...",
    "messages": "they come from the conversation",
    "system": "put SystemMessage(s) in the conversation",
    "tools": "give Conversation(tools=...)",
    "stream": "pass stream=True",
}

_PATHS: Final[dict[str, str]] = {
    "max_tokens": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "tool_choice": "tool_choice",
}


def _turns(sent: Sequence[Message]) -> tuple[list[Any], list[bytes]]:
    """The wire turns of a run of as-sent messages (see ``wire_messages``)."""
    turns: list[Any] = []
    encoded: list[bytes] = []
    for role, group in _claude.plan_turns(sent).turns:
        value, raw = _assistant_turn(group[0]) if role == "assistant" else _user_turn(group)  # type: ignore[arg-type]
        turns.append(value)
        encoded.append(raw)
    return turns, encoded


class Adapter(Provider):
    id = "anthropic"

    # -- request ---------------------------------------------------------------

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        betas = _claude.check_betas(options.pop("betas", None), "betas")
        thinking = self._check_options(options, betas)
        _claude.check_tool_loop(
            conversation, replay, thinking, provider="Anthropic", opt_in_path="thinking.block_binding"
        )
        turns, encoded = wire_messages(replay, "anthropic", _turns, _claude.goes_out)
        body: dict[str, Any] = {"model": model, "messages": turns}
        systems = conversation.system_prompts
        if systems:
            body["system"] = systems[0] if len(systems) == 1 else [{"type": "text", "text": s} for s in systems]
        if conversation.tools:
            body["tools"] = [_tool(t) for t in conversation.tools]
        output_format = _output_format(conversation.response_format)
        if output_format is not None:
            config = options.get("output_config") or {}
            if not isinstance(config, Mapping):
                raise ValidationError("output_config: Input should be a valid dictionary", path="output_config")
            if config.get("format") is not None:
                raise ValidationError(
                    "output_config.format: set both here and by the conversation's response_format; give one",
                    path="output_config.format",
                )
            options["output_config"] = {**config, "format": output_format}
        body.update(options)
        if stream:
            body["stream"] = True

        if thinking.block_binding:
            betas = _claude.merge_betas(betas, [_claude.BINDING_BETA])
        headers = {"anthropic-version": API_VERSION, "content-type": "application/json"}
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
        return Built(body, splice(body, "messages", encoded), PATH, headers)

    def _check_options(self, options: dict[str, Any], betas: list[str]) -> _claude.ThinkingSettings:
        for key, hint in _OWNED.items():
            if key in options:
                raise ValidationError(f"{key}: set by thinkseal, not an option ({hint})", path=key)
        if "max_tokens" not in options:
            raise ValidationError("max_tokens: Field required (Anthropic requires max_tokens)", path="max_tokens")
        max_tokens = options["max_tokens"]
        if not _claude.is_int(max_tokens) or max_tokens < 0:
            raise ValidationError("max_tokens: Input should be a valid integer (>= 0)", path="max_tokens")
        thinking = _claude.read_thinking(options.get("thinking"), "thinking")
        _claude.check_sampling(
            thinking,
            max_tokens=max_tokens,
            temperature=options.get("temperature"),
            top_p=options.get("top_p"),
            top_k=options.get("top_k"),
            forced_tool_choice=_claude.tool_choice_forces(options.get("tool_choice")),
            interleaved=_claude.INTERLEAVED_BETA in betas,
            paths=_PATHS,
        )
        return thinking

    # -- response --------------------------------------------------------------

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        root = Node(response).object()
        if root.value.get("type") == "error":
            raise _error_event(root)
        role = root.opt("role", str)
        if role is not None and role != "assistant":
            raise ResponseError(f"expected role 'assistant', got {role!r}", path="$.role")
        parts: list[Part] = []
        for block in root.items("content"):
            part = _block(block)
            if part is not None:
                parts.append(part)
        return _message(parts, "$.content")

    def new_stream(self) -> StreamParser:
        return _Stream()


# -- request pieces -------------------------------------------------------------


def _assistant_turn(message: AssistantMessage) -> tuple[Any, bytes]:
    return fragment(message, "anthropic", lambda: {"role": "assistant", "content": _assistant_blocks(message)})


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in _claude.wire_parts(message):
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif isinstance(part, ToolCall):
            blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments})
        elif isinstance(part, ThinkingBlock.Text):
            blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature})
        elif isinstance(part, ThinkingBlock.Redacted):
            blocks.append({"type": "redacted_thinking", "data": part.data})
    return blocks


def _user_turn(group: list[Message]) -> tuple[Any, bytes]:
    if len(group) == 1 and isinstance(group[0], UserMessage):
        message = group[0]
        return fragment(message, "anthropic:user", lambda: {"role": "user", "content": message.content})
    return message_of_blocks("user", [_user_block_fragment(m) for m in group])


def _user_block_fragment(message: Message) -> tuple[Any, bytes]:
    return fragment(message, "anthropic:block", lambda: _user_block(message))


def _user_block(message: Message) -> dict[str, Any]:
    if isinstance(message, ToolMessage):
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
        if message.is_error:
            block["is_error"] = True
        return block
    assert isinstance(message, UserMessage)
    return {"type": "text", "text": message.content}


def _tool(tool: Tool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description:
        spec["description"] = tool.description
    spec["input_schema"] = tool.parameters
    return spec


def _output_format(fmt: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``response_format`` (OpenAI chat shape) as Anthropic's ``output_config.format``."""
    if fmt is None or fmt["type"] == "text":
        return None
    if fmt["type"] == "json_schema":
        spec = fmt.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        if not isinstance(schema, Mapping):
            raise ValidationError(
                "response_format.json_schema.schema: a JSON Schema object is required",
                path="response_format.json_schema.schema",
            )
        return {"type": "json_schema", "schema": schema}
    if fmt["type"] == "json_object":
        raise ValidationError(
            'response_format: Anthropic has no JSON-object mode; give {"type": "json_schema", "json_schema": '
            '{"schema": ...}} (sent as output_config.format)',
            path="response_format.type",
        )
    raise ValidationError(f"response_format.type: unsupported value {fmt['type']!r}", path="response_format.type")


# -- response pieces -------------------------------------------------------------


def _block(block: Node) -> Part | None:
    """One response content block as a message part (None: nothing to keep)."""
    kind = block.get("type", str)
    if kind == "text":
        return block.text("text")
    if kind == "thinking":
        return _thinking(block.text("thinking"), block.text("signature"))
    if kind == "redacted_thinking":
        return _redacted(block.text("data"), f"{block.path}.data")
    if kind == "tool_use":
        return _tool_call(block.text("id"), block.text("name"), block.get("input", dict), block.path)
    raise ResponseError(f"unknown content block type {kind!r}", path=f"{block.path}.type")


def _thinking(text: str, signature: str) -> ThinkingBlock | None:
    if not text and not signature:
        return None  # an empty, unsigned block carries nothing
    return ThinkingBlock.Text(text, signature or None)


def _redacted(data: str, path: str) -> ThinkingBlock:
    try:
        return ThinkingBlock.Redacted(data)
    except ValidationError as err:
        raise wrap_errors(path, err) from None


def _tool_call(call_id: str, name: str, arguments: Mapping[str, Any], path: str) -> ToolCall:
    return _claude.tool_call(call_id, name, arguments, path, {"id": "id", "name": "name", "arguments": "input"})


def _message(parts: list[Part], path: str) -> AssistantMessage:
    try:
        return AssistantMessage.from_parts(parts)
    except ValidationError as err:
        raise wrap_errors(path, err) from None


def _error_event(node: Node) -> ResponseError:
    error = node.opt("error", dict) or {}
    kind = error.get("type", "error")
    message = error.get("message", "")
    return ResponseError(f"provider error {kind}: {message}", path=f"{node.path}.error")


# -- streaming -------------------------------------------------------------------


class _Block:
    """One content block being streamed (by its ``index``)."""

    __slots__ = ("data", "id", "json", "kind", "name", "signature", "start_input", "stopped", "text")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.text = ""
        self.signature = ""
        self.data = ""
        self.id = ""
        self.name = ""
        self.json: list[str] = []
        self.start_input: dict[str, Any] = {}
        self.stopped = False


_DELTA_KIND: Final[dict[str, tuple[str, ...]]] = {
    "text_delta": ("text",),
    "citations_delta": ("text",),
    "thinking_delta": ("thinking",),
    "signature_delta": ("thinking",),
    "input_json_delta": ("tool_use",),
}


class _Stream(StreamParser):
    """Accumulates the data objects of Anthropic's SSE events."""

    def __init__(self) -> None:
        self._started = False
        self._stopped = False
        self._blocks: dict[int, _Block] = {}

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

    def finish(self) -> AssistantMessage:
        if not self._started:
            raise ResponseError("stream ended before message_start", path="$")
        if not self._stopped:
            raise ResponseError("stream ended before message_stop (truncated)", path="$")
        return _message(_claude.finished_parts(self._blocks, "$.content", _finished_part), "$.content")


def _finished_part(block: _Block, path: str) -> Part | None:
    if block.kind == "text":
        return block.text
    if block.kind == "thinking":
        return _thinking(block.text, block.signature)
    if block.kind == "redacted_thinking":
        return _redacted(block.data, f"{path}.data")
    raw = "".join(block.json)
    arguments = parse_arguments(raw, f"{path}.input") if raw.strip() else block.start_input
    return _tool_call(block.id, block.name, arguments, path)


__all__ = ["Adapter"]
