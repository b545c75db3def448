"""Amazon Bedrock Converse / ConverseStream (Claude rules for thinking).

What Bedrock requires, and what thinkseal does about it:

- The model id lives in the path, not the body:
  ``/model/{quote(model, safe="")}/converse`` (``/converse-stream`` with
  ``stream=True``; the body has no stream flag).
- System messages, wherever they stand, go to the top-level ``system`` list
  (``[{"text": ...}]``, in order). Roles must alternate, so every run of tool
  results and user text becomes ONE user turn, ``toolResult`` blocks first in
  call order (``status: "error"`` for ``is_error``); unanswered calls are not
  sent (which unseals that turn) and a result that answers no call goes out as
  user text naming the call id. Messages with ``toolUse``/``toolResult`` need
  ``toolConfig``, so a conversation without tools that has them raises
  ``ValidationError``.
- Thinking goes back as ``reasoningContent.reasoningText {text, signature}``
  (signed only; text ``""`` is sent as ``""``, never null) and
  ``reasoningContent.redactedContent`` (base64 text in the JSON body; decode
  it to bytes if you hand the body to boto3), only for turns the replay
  decision keeps, in the order received. Unsigned reasoning (DeepSeek-R1,
  unsealed turns) is never sent to Bedrock: Claude rejects it.
- An assistant turn with no text and no tool calls is left out (Bedrock rejects
  blank content); empty text blocks are left out.
- Options use Converse's own fields: ``inferenceConfig`` (maxTokens,
  temperature, topP, stopSequences), ``additionalModelRequestFields`` (Claude's
  native ``thinking``, ``top_k``, ``anthropic_beta``, ...), ``toolConfig``
  (``toolChoice`` only; the tools come from the conversation), and the other
  ConverseRequest members. Claude's thinking rules are checked as for
  Anthropic (``_claude``). Unknown options raise ``ValidationError``.
- With thinking enabled or adaptive, a tool loop's last assistant turn must go
  out starting with its thinking: ``prepare`` raises ``ReplayError`` when it
  would not, unless ``additionalModelRequestFields.thinking.block_binding`` has
  ``prefix_mismatch_behavior: "drop_block"``; whenever ``block_binding`` is set,
  the binding-controls beta is added to
  ``additionalModelRequestFields.anthropic_beta``.
- ``response_format`` json_schema -> ``outputConfig.textFormat`` (type
  ``json_schema``, ``structure.jsonSchema.schema`` as JSON text);
  ``json_object`` has no native equivalent and raises ``ValidationError``.
- ``receive`` takes the HTTP JSON (``redactedContent`` base64 text) and boto3's
  dicts (``redactedContent`` bytes); both give ``Redacted(base64 text)``.
- ``req.stream()`` takes ConverseStream events as boto3 yields them
  (``{"contentBlockDelta": {...}}``). Reasoning and text blocks start with
  their first delta; text and reasoning text concatenate, signature fragments
  concatenate (Bedrock sends one), redacted bytes concatenate; a stream without
  ``messageStop`` is truncated (``ResponseError``); exception events raise
  ``ResponseError``; unknown events are ignored.
- What Bedrock and Anthropic share (Claude's rules) is in ``_claude``; this
  module is Converse's spelling of it.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import quote

from .._blocks import ThinkingBlock
from .._conversation import Conversation
from .._errors import ResponseError, ValidationError
from .._messages import AssistantMessage, Part, ToolCall, ToolMessage
from .._replay import Replay
from .._tool import Tool
from . import _claude
from ._base import Built, Provider, StreamParser
from ._options import BODY_FIELDS, check_reserved
from ._response import Node, b64_text, parse_arguments, valid_text
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

    def tool_use_block(self, call: ToolCall) -> dict[str, Any]:
        return {"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments}}

    def thinking_wire(self, block: ThinkingBlock.Text) -> dict[str, Any]:
        return {"reasoningContent": {"reasoningText": {"text": block.text, "signature": block.signature}}}

    def redacted_wire(self, block: ThinkingBlock.Redacted) -> dict[str, Any]:
        return {"reasoningContent": {"redactedContent": block.data}}

    def tool_result_block(self, message: ToolMessage) -> dict[str, Any]:
        result: dict[str, Any] = {"toolUseId": message.tool_call_id, "content": [{"text": message.content}]}
        if message.is_error:
            result["status"] = "error"
        return {"toolResult": result}

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
        kind = _kind(block, _BLOCK_KINDS, "content block type")
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


def boto3_params(body: Mapping[str, Any]) -> dict[str, Any]:
    """``req.body`` as keyword arguments for boto3's ``converse`` and
    ``converse_stream`` (add ``modelId=``): a copy whose ``redactedContent``
    blobs are bytes, since boto3 base64-encodes blobs itself and would otherwise
    encode the base64 text a second time."""
    params = copy.deepcopy(dict(body))
    for message in params.get("messages", []):
        for block in message["content"]:
            reasoning = block.get("reasoningContent", {})
            if "redactedContent" in reasoning:
                reasoning["redactedContent"] = base64.b64decode(reasoning["redactedContent"])
    return params


class Adapter(Provider):
    id = _Wire.key

    # -- request ---------------------------------------------------------------

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        extra, thinking = _check_options(options, has_tools=bool(conversation.tools))
        turns, encoded = _WIRE.messages(conversation, replay, thinking)
        if not conversation.tools and any(_uses_tools(turn) for turn in turns):
            raise ValidationError(
                "The toolConfig field must be defined when using toolUse and toolResult content blocks "
                "(give the conversation its tools)",
                path="toolConfig",
            )

        body: dict[str, Any] = {"messages": turns}
        if conversation.system_prompts:
            body["system"] = [{"text": s} for s in conversation.system_prompts]
        if conversation.tools:
            body["toolConfig"] = {"tools": [_tool(t) for t in conversation.tools], **extra.pop("toolConfig", {})}
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
    check_reserved(options, _RESERVED)
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


def _tool(tool: Tool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description:  # NonEmptyString in the service model
        spec["description"] = tool.description
    spec["inputSchema"] = {"json": tool.parameters}
    return {"toolSpec": spec}


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


# -- streaming ------------------------------------------------------------------------------


class _Block(_claude.StreamBlock):
    """One content block being streamed (by its ``contentBlockIndex``); ``kind``
    is "text", "reasoning" or "toolUse"."""

    __slots__ = ("input", "redacted")

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.redacted = bytearray()
        self.input: list[str] = []


class _Stream(_claude.Stream[_Block]):
    """Accumulates ConverseStream events (``{"contentBlockDelta": {...}}``, ...)."""

    start_event = "messageStart"
    stop_event = "messageStop"
    content_path = "$.output.message.content"

    def feed(self, event: Mapping[str, Any]) -> None:
        root = Node(event).object()
        for name in _EXCEPTIONS:
            if root.has(name):
                raise _claude.provider_error(name, root.value[name], f"$.{name}")
        if root.has("messageStart"):
            root.node("messageStart")
            self._started = True
        elif root.has("contentBlockStart"):
            self._start(root.node("contentBlockStart"))
        elif root.has("contentBlockDelta"):
            self._delta(root.node("contentBlockDelta"))
        elif root.has("contentBlockStop"):
            self._stop(root.node("contentBlockStop"))
        elif root.has("messageStop"):
            self._require_started(root.node("messageStop"))
            self._stopped = True
        # metadata and events added later: nothing to keep

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

    def _start(self, node: Node) -> None:
        index = node.get("contentBlockIndex", int)
        if index in self._blocks:
            raise ResponseError(f"block {index} started twice", path=f"{node.path}.contentBlockIndex")
        start = node.node("start")
        _kind(start, ("toolUse",), "content block start")
        use = start.node("toolUse")
        block = self._block(node, "toolUse")
        block.id = use.text("toolUseId")
        block.name = use.text("name")

    def _delta(self, node: Node) -> None:
        delta = node.node("delta")
        if delta.has("citation") and not any(delta.has(k) for k in ("text", "toolUse", "reasoningContent")):
            self._block(node, "text")
            return  # citations are not part of the turn thinkseal keeps
        kind = _kind(delta, ("text", "toolUse", "reasoningContent"), "delta type")
        wanted = {"text": "text", "toolUse": "toolUse", "reasoningContent": "reasoning"}[kind]
        block = self._block(node, None if kind == "toolUse" else wanted)
        if block.kind != wanted:
            raise ResponseError(f"{kind} delta for a {block.kind} block", path=f"{delta.path}.{kind}")
        if kind == "text":
            block.text += delta.text("text")
        elif kind == "toolUse":
            block.input.append(delta.node("toolUse").text("input"))
        else:
            reasoning = delta.node("reasoningContent")
            member = _kind(reasoning, ("text", "signature", "redactedContent"), "reasoning delta")
            if member == "redactedContent":
                path = f"{reasoning.path}.redactedContent"
                block.redacted += base64.b64decode(b64_text(reasoning.value[member], path))
            elif member == "text":
                block.text += reasoning.text("text")
            else:
                block.signature += reasoning.text("signature")

    def _stop(self, node: Node) -> None:
        self._block(node, None).stopped = True

    def part(self, block: _Block, path: str) -> Part | None:
        if block.kind == "text":
            return block.text
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


__all__ = ["Adapter"]
