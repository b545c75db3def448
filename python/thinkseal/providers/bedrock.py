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
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote

from .._blocks import ThinkingBlock
from .._conversation import Conversation
from .._errors import ResponseError, ValidationError
from .._messages import AssistantMessage, Message, Part, ToolCall, ToolMessage, UserMessage
from .._replay import Replay
from .._tool import Tool
from . import _claude
from ._base import Built, Provider, StreamParser
from ._response import Node, b64_text, parse_arguments, valid_text
from ._wire import dumps, fragment, message_of_blocks, splice, wire_messages

_OWNED: Final[dict[str, str]] = {
    "modelId": "pass model=... (it goes in the path)",
    "messages": "they come from the conversation",
    "system": "put SystemMessage(s) in the conversation",
    "stream": "pass stream=True (it selects /converse-stream)",
}
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
_PATHS: Final[dict[str, str]] = {
    "max_tokens": "inferenceConfig.maxTokens",
    "temperature": "inferenceConfig.temperature",
    "top_p": "inferenceConfig.topP",
    "top_k": "additionalModelRequestFields.top_k",
    "tool_choice": "toolConfig.toolChoice",
}
_TOOL_FIELDS: Final[dict[str, str]] = {"id": "toolUseId", "name": "name", "arguments": "input"}
_EXCEPTIONS: Final[tuple[str, ...]] = (
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
)


def _turns(sent: Sequence[Message]) -> tuple[list[Any], list[bytes]]:
    """The wire turns of a run of as-sent messages (see ``wire_messages``)."""
    turns: list[Any] = []
    encoded: list[bytes] = []
    for role, group in _claude.plan_turns(sent).turns:
        if role == "assistant":
            message = group[0]
            assert isinstance(message, AssistantMessage)
            value, raw = _assistant_fragment(message)
        else:
            value, raw = _user_turn(group)
        turns.append(value)
        encoded.append(raw)
    return turns, encoded


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
    id = "bedrock"

    # -- request ---------------------------------------------------------------

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        extra, thinking = _check_options(options, has_tools=bool(conversation.tools))
        _claude.check_tool_loop(
            conversation,
            replay,
            thinking,
            provider="Bedrock (Claude)",
            opt_in_path="additionalModelRequestFields.thinking.block_binding",
        )
        turns, encoded = wire_messages(replay, "bedrock", _turns, _claude.goes_out)
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
        text_format = _text_format(conversation.response_format)
        if text_format is not None:
            config = extra.get("outputConfig") or {}
            if config.get("textFormat") is not None:
                raise ValidationError(
                    "outputConfig.textFormat: set both here and by the conversation's response_format; give one",
                    path="outputConfig.textFormat",
                )
            extra["outputConfig"] = {**config, "textFormat": text_format}
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
        root = Node(response).object()
        message = root.node("output").node("message")
        role = message.get("role", str)
        if role != "assistant":
            raise ResponseError(f"expected role 'assistant', got {role!r}", path=f"{message.path}.role")
        parts: list[Part] = []
        for block in message.items("content"):
            part = _block(block)
            if part is not None:
                parts.append(part)
        return _message(parts, f"{message.path}.content")

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
    for key in options:
        if key in _OWNED:
            raise ValidationError(f"{key}: set by thinkseal, not an option ({_OWNED[key]})", path=key)
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
    thinking = _claude.read_thinking(fields.get("thinking"), "additionalModelRequestFields.thinking")
    choice = tool_config.get("toolChoice")
    _claude.check_sampling(
        thinking,
        max_tokens=max_tokens,
        temperature=inference.get("temperature"),
        top_p=inference.get("topP"),
        top_k=fields.get("top_k"),
        forced_tool_choice=isinstance(choice, Mapping) and ("any" in choice or "tool" in choice),
        interleaved=_claude.INTERLEAVED_BETA in betas,
        paths=_PATHS,
    )
    extra = dict(options)
    if tool_config:
        extra["toolConfig"] = dict(tool_config)
    return extra, thinking


# -- request pieces -------------------------------------------------------------------


def _assistant_fragment(message: AssistantMessage) -> tuple[Any, bytes]:
    return fragment(message, "bedrock", lambda: _assistant_turn(message))


def _assistant_turn(message: AssistantMessage) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for part in _claude.wire_parts(message):
        if isinstance(part, str):
            content.append({"text": part})
        elif isinstance(part, ToolCall):
            content.append({"toolUse": {"toolUseId": part.id, "name": part.name, "input": part.arguments}})
        elif isinstance(part, ThinkingBlock.Text):
            content.append({"reasoningContent": {"reasoningText": {"text": part.text, "signature": part.signature}}})
        elif isinstance(part, ThinkingBlock.Redacted):
            content.append({"reasoningContent": {"redactedContent": part.data}})
    return {"role": "assistant", "content": content}


def _user_turn(group: list[Message]) -> tuple[Any, bytes]:
    return message_of_blocks("user", [_user_block_fragment(m) for m in group])


def _user_block_fragment(message: Message) -> tuple[Any, bytes]:
    return fragment(message, "bedrock:block", lambda: _user_block(message))


def _user_block(message: Message) -> dict[str, Any]:
    if isinstance(message, ToolMessage):
        result: dict[str, Any] = {"toolUseId": message.tool_call_id, "content": [{"text": message.content}]}
        if message.is_error:
            result["status"] = "error"
        return {"toolResult": result}
    assert isinstance(message, UserMessage)
    return {"text": message.content}


def _tool(tool: Tool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description:  # NonEmptyString in the service model
        spec["description"] = tool.description
    spec["inputSchema"] = {"json": tool.parameters}
    return {"toolSpec": spec}


def _text_format(fmt: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``response_format`` (OpenAI chat shape) as Converse ``outputConfig.textFormat``."""
    if fmt is None or fmt["type"] == "text":
        return None
    if fmt["type"] == "json_schema":
        spec = fmt.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        if not isinstance(spec, Mapping) or not isinstance(schema, Mapping):
            raise ValidationError(
                "response_format.json_schema.schema: a JSON Schema object is required",
                path="response_format.json_schema.schema",
            )
        definition: dict[str, Any] = {"schema": dumps(schema).decode()}
        for key in ("name", "description"):
            if isinstance(spec.get(key), str) and spec[key]:
                definition[key] = spec[key]
        return {"type": "json_schema", "structure": {"jsonSchema": definition}}
    if fmt["type"] == "json_object":
        raise ValidationError(
            'response_format: Converse has no JSON-object mode; give {"type": "json_schema", "json_schema": '
            '{"schema": ...}} (sent as outputConfig.textFormat)',
            path="response_format.type",
        )
    raise ValidationError(f"response_format.type: unsupported value {fmt['type']!r}", path="response_format.type")


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


def _block(block: Node) -> Part | None:
    kind = _kind(block, _BLOCK_KINDS, "content block type")
    if kind == "text":
        return block.text("text")
    if kind == "toolUse":
        use = block.node("toolUse")
        return _claude.tool_call(
            use.text("toolUseId"), use.text("name"), use.get("input", dict), use.path, _TOOL_FIELDS
        )
    reasoning = block.node("reasoningContent")
    member = _kind(reasoning, ("reasoningText", "redactedContent"), "reasoning content")
    if member == "redactedContent":
        return _redacted(reasoning.value["redactedContent"], f"{reasoning.path}.redactedContent")
    text = reasoning.node("reasoningText")
    signature = valid_text(text.opt("signature", str, ""), f"{text.path}.signature")
    return _reasoning(text.text("text"), signature)


def _reasoning(text: str, signature: str) -> ThinkingBlock | None:
    if not text and not signature:
        return None  # an empty, unsigned block carries nothing
    return ThinkingBlock.Text(text, signature or None)


def _redacted(value: object, path: str) -> ThinkingBlock:
    data = b64_text(value, path)
    if not data:
        raise ResponseError("redacted content is empty", path=path)
    return ThinkingBlock.Redacted(data)


def _message(parts: list[Part], path: str) -> AssistantMessage:
    try:
        return AssistantMessage.from_parts(parts)
    except ValidationError as err:
        raise ResponseError(str(err), path=path) from None


# -- streaming ------------------------------------------------------------------------------


class _Block:
    """One content block being streamed (by its ``contentBlockIndex``)."""

    __slots__ = ("id", "input", "kind", "name", "redacted", "signature", "stopped", "text")

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "text", "reasoning", "toolUse"
        self.text = ""
        self.signature = ""
        self.redacted = bytearray()
        self.id = ""
        self.name = ""
        self.input: list[str] = []
        self.stopped = False


class _Stream(StreamParser):
    """Accumulates ConverseStream events (``{"contentBlockDelta": {...}}``, ...)."""

    def __init__(self) -> None:
        self._started = False
        self._stopped = False
        self._blocks: dict[int, _Block] = {}

    def feed(self, event: Mapping[str, Any]) -> None:
        root = Node(event).object()
        for name in _EXCEPTIONS:
            if root.has(name):
                detail = root.value[name]
                message = detail.get("message", "") if isinstance(detail, Mapping) else str(detail)
                raise ResponseError(f"provider error {name}: {message}", path=f"$.{name}")
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

    def finish(self) -> AssistantMessage:
        if not self._started:
            raise ResponseError("stream ended before messageStart", path="$")
        if not self._stopped:
            raise ResponseError("stream ended before messageStop (truncated)", path="$")
        return _message(
            _claude.finished_parts(self._blocks, "$.output.message.content", _finished_part), "$.output.message.content"
        )


def _finished_part(block: _Block, path: str) -> Part | None:
    if block.kind == "text":
        return block.text
    if block.kind == "toolUse":
        raw = "".join(block.input)
        arguments = parse_arguments(raw, f"{path}.toolUse.input")
        return _claude.tool_call(block.id, block.name, arguments, f"{path}.toolUse", _TOOL_FIELDS)
    if block.redacted:
        if block.text or block.signature:
            raise ResponseError("reasoning block has both redacted content and text", path=f"{path}.reasoningContent")
        return ThinkingBlock.Redacted(base64.b64encode(bytes(block.redacted)).decode())
    return _reasoning(block.text, block.signature)


__all__ = ["Adapter"]
