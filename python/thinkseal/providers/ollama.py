"""Ollama ``/api/chat``: the request body, the reply and the NDJSON stream.

What Ollama requires, and what thinkseal does about it, is in
docs/providers.md#ollama. In short:

- ``message.thinking`` is one unsigned ``ThinkingBlock.Text``, never sealed;
  every as-sent assistant turn's thinking text goes back as ``thinking``.
- Tool calls have no id on the wire: ``generated_call_id`` gives each one the
  same id for ``receive`` and the stream; ids are not sent back, and tool
  results go out named (``tool_name``).
- ``"stream"`` is always in the body; ``think`` is checked with Ollama's own
  error text (``invalid_think_message``); model parameters go in ``options``.
- Content is one string with images in ``images``; cache breakpoints are
  ignored; errors and a stream without its ``"done": true`` line raise
  ``ResponseError``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final

from .._blocks import ThinkingBlock
from .._content import Document, Image, Native
from .._conversation import Conversation
from .._errors import ResponseError, ThinksealError, ValidationError
from .._messages import AssistantMessage, Message, ToolCall, ToolMessage
from .._replay import Replay
from .._reply import Delta, ReplyInfo, TextDelta, ThinkingDelta, ToolCallDelta, Usage
from ._base import Built, Provider, StreamParser
from ._chat import (
    PartWriter,
    Pieces,
    ReplyStream,
    b64,
    chat_body,
    count,
    lenient_text,
    named_tool_messages,
    partial_reply,
    wire_content,
)
from ._connection import Connection
from ._options import BODY_FIELDS, check_flag, check_number, check_object, frozen_options, response_format
from ._response import Node, error_text, parse_arguments, wrap_errors
from ._wire import splice, wire_messages

__all__ = ["THINK_LEVELS", "Adapter", "generated_call_id", "invalid_think_message"]

PATH = "/api/chat"
THINK_LEVELS: tuple[str, ...] = ("high", "medium", "low", "max")

# Model parameters that belong inside ``options``; Ollama ignores them at the top level.
_MODEL_PARAMETERS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "seed",
        "num_ctx",
        "num_predict",
        "num_keep",
        "stop",
        "repeat_penalty",
        "repeat_last_n",
        "presence_penalty",
        "frequency_penalty",
        "mirostat",
        "mirostat_tau",
        "mirostat_eta",
        "typical_p",
        "tfs_z",
        "max_tokens",
    }
)
# Fields thinkseal fills from the conversation and ``prepare``'s own arguments.
_RESERVED: Final[Mapping[str, str]] = MappingProxyType(
    {**BODY_FIELDS, "format": "the format comes from Conversation.response_format (it is part of the fingerprint)"}
)


def invalid_think_message(value: object) -> str:
    """Ollama's error text for a ``think`` value it does not accept."""
    shown = json.dumps(value, ensure_ascii=False)
    return f'invalid think value: {shown} (must be "high", "medium", "low", "max", true, or false)'


def generated_call_id(thinking: str, content: str, index: int, name: str, arguments_json: str) -> str:
    """The id thinkseal gives call ``index`` of an Ollama reply (see the module docstring)."""
    material = json.dumps([thinking, content, index, name, arguments_json], ensure_ascii=False, separators=(",", ":"))
    return "ollama_" + hashlib.sha256(material.encode()).hexdigest()[:24]


# -- request -------------------------------------------------------------------


def _check_options(options: dict[str, Any]) -> dict[str, Any]:
    for name in options:
        if name in _MODEL_PARAMETERS:
            raise ValidationError(
                f"{name}: a model parameter, which Ollama ignores at the top level; pass options={{{name!r}: ...}}",
                path=name,
            )
    checked = frozen_options(options, _RESERVED)
    think = checked.get("think")
    if think is not None and not (isinstance(think, bool) or think in THINK_LEVELS):
        raise ValidationError(invalid_think_message(think), path="think")
    check_object(checked, "options")
    keep_alive = checked.get("keep_alive")
    if keep_alive is not None and (isinstance(keep_alive, bool) or not isinstance(keep_alive, (str, int, float))):
        raise ValidationError(
            "keep_alive: expected a duration string (e.g. '5m') or a number of seconds", path="keep_alive"
        )
    check_flag(checked.get("logprobs"), "logprobs")
    check_number(checked, "top_logprobs", 0, 20, integer=True)
    return checked


def _format(fmt: Mapping[str, Any] | None) -> dict[str, Any]:
    """``response_format`` as Ollama's ``format``: "json", or the JSON schema itself."""
    fmt = response_format(fmt, Adapter.id, ("json_object", "json_schema", "text"), needs=("schema",))
    if fmt is None or fmt["type"] == "text":
        return {}
    if fmt["type"] == "json_object":
        return {"format": "json"}
    return {"format": fmt["json_schema"]["schema"]}


class Parts(PartWriter):
    """Ollama's message fields: ``content`` (text) and ``images`` (base64)."""

    text_arrays = False

    def image(self, image: Image, where: str) -> dict[str, Any]:
        if image.data is None:
            raise ValidationError(f"{where}: ollama takes images as base64 data only, not URLs", path=where)
        return {"type": "image", "data": b64(image.data)}

    def document(self, document: Document, where: str) -> dict[str, Any]:
        raise ValidationError(f"{where}: ollama takes no PDF documents (a text Document goes out as text)", path=where)

    def native(self, native: Native, where: str) -> dict[str, Any]:
        raise ValidationError(f"{where}: ollama has no content blocks to carry a native block", path=where)

    def fields(self, parts: list[dict[str, Any]], marked: bool, where: str) -> dict[str, Any]:
        fields: dict[str, Any] = {"content": "".join(p["text"] for p in parts if p.get("type") == "text")}
        images = [p["data"] for p in parts if p.get("type") == "image"]
        if images:
            fields["images"] = images
        return fields


WRITER = Parts("ollama")


def _assistant_wire(message: AssistantMessage) -> dict[str, Any]:
    for k, part in enumerate(message.parts):
        if isinstance(part, Native) and part.provider == Adapter.id:  # never silently dropped
            WRITER.native(part, f"AssistantMessage.parts[{k}]")
    wire: dict[str, Any] = {"role": "assistant", "content": message.content}
    thinking = message.thinking_text
    if thinking:
        wire["thinking"] = thinking
    if message.tool_calls:
        wire["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments}} for c in message.tool_calls]
    return wire


def _tool_wire(message: ToolMessage, name: str) -> dict[str, Any]:
    return {"role": "tool", **wire_content(message, WRITER), "tool_name": name}


def _segment(sent: Sequence[Message]) -> list[bytes]:
    """The cached JSON bytes of the wire messages (every turn goes out, in place)."""
    return named_tool_messages(sent, "ollama", WRITER, _assistant_wire, _tool_wire)


# -- response ------------------------------------------------------------------


def _raise_reported_error(root: Node) -> None:
    if isinstance(root.value, Mapping) and root.value.get("error") is not None:
        raise ResponseError(f"Ollama reported an error: {error_text(root.value['error'])}", path="$.error")


class _Reply:
    """The parts of one reply, gathered from a whole response or from stream
    lines; ``add`` returns the deltas of what it read."""

    __slots__ = ("calls", "content", "thinking")

    def __init__(self) -> None:
        # Fragments are checked once joined: a stream may split a surrogate pair.
        self.thinking = Pieces("$.message.thinking")
        self.content = Pieces("$.message.content")
        self.calls: list[tuple[str, dict[str, Any], str]] = []  # name, arguments, path

    def add(self, message: Node) -> list[Delta]:
        message.object()
        role = message.opt("role", str)
        if role is not None and role != "assistant":
            raise ResponseError(f'expected "assistant", got {role!r}', path=f"{message.path}.role")
        deltas: list[Delta] = []
        thinking = message.opt("thinking", str)
        if thinking and (piece := self.thinking.add(thinking)):
            deltas.append(ThinkingDelta(0, piece))
        content = message.opt("content", str)
        if content and (piece := self.content.add(content)):
            deltas.append(TextDelta(0, piece))
        for call in message.items("tool_calls", required=False):
            function = call.node("function")
            name = function.text("name")
            arguments = parse_arguments(function.get("arguments", (Mapping, str)), f"{function.path}.arguments")
            try:
                draft = ToolCall("pending", name, arguments)
            except ThinksealError as exc:
                raise wrap_errors(function.path, exc) from None
            deltas.append(ToolCallDelta(len(self.calls), None, name, draft.arguments_json))
            self.calls.append((name, arguments, function.path))
        return deltas

    def _calls(self, thinking: str, content: str, *, lenient: bool) -> list[ToolCall]:
        calls = []
        for index, (name, arguments, path) in enumerate(self.calls):
            try:
                draft = ToolCall("pending", name, arguments)
                call_id = generated_call_id(thinking, content, index, name, draft.arguments_json)
                calls.append(ToolCall(call_id, name, draft.arguments))
            except ThinksealError as exc:
                if not lenient:
                    raise wrap_errors(path, exc) from None
        return calls

    def message(self) -> AssistantMessage:
        thinking = self.thinking.text()
        content = self.content.text()
        calls = self._calls(thinking, content, lenient=False)
        return AssistantMessage(content or None, calls, [ThinkingBlock.Text(thinking)] if thinking else [])

    def partial(self) -> AssistantMessage | None:
        thinking = lenient_text(self.thinking.parts)
        content = lenient_text(self.content.parts)
        return partial_reply([content] if content else [], self._calls(thinking, content, lenient=True))


def _reply_info(root: Node) -> ReplyInfo:
    usage = Usage(input_tokens=count(root, "prompt_eval_count"), output_tokens=count(root, "eval_count"))
    return ReplyInfo(root.opt("done_reason", str), usage, None, root.opt("model", str))


class _Stream(ReplyStream[_Reply]):
    """Accumulates NDJSON lines: thinking and content fragments, whole tool calls,
    and the final ``"done": true`` line (which carries the reply's metadata)."""

    cut_off = ('the stream ended before its "done": true line', "$.done")

    def feed(self, event: Mapping[str, Any]) -> list[Delta]:
        root = Node(event)
        _raise_reported_error(root)
        if self._ended:
            raise ResponseError("a stream line after the done line", path="$")
        message = root.opt_node("message")
        deltas = self._reply.add(message) if message is not None else []
        self._ended = root.opt("done", bool, False)
        info = _reply_info(root)
        self._info = info if self._ended else ReplyInfo(None, Usage(), None, info.model or self._info.model)
        return deltas


class Adapter(Provider):
    """Ollama's native chat API (``/api/chat``)."""

    id: ClassVar[str] = "ollama"
    connection = Connection(
        "http://localhost:11434",
        "optional-bearer",
        "ndjson",
        key_env=("OLLAMA_API_KEY",),
        base_url_env=("OLLAMA_HOST",),
    )

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        checked = _check_options(options)
        raws = wire_messages(replay, "ollama", _segment)
        # "stream" always goes out: Ollama streams when it is absent.
        fmt = _format(conversation.response_format)
        body = chat_body(model, raws, conversation.tools, fmt, {"stream": stream}, checked)
        return Built(body, splice(body, "messages", raws), PATH, {"content-type": "application/json"})

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        root = Node(response)
        _raise_reported_error(root)
        if root.get("done", bool) is not True:
            raise ResponseError("the reply is not complete (done is false)", path="$.done")
        reply = _Reply()
        reply.add(root.node("message"))
        return reply.message()

    def reply_info(self, response: Mapping[str, Any]) -> ReplyInfo:
        return _reply_info(Node(response))

    def new_stream(self) -> StreamParser:
        return _Stream(_Reply())
