"""Mistral chat completions (``/v1/chat/completions``): body, reply and stream.

What Mistral requires, and what thinkseal does about it, is in
docs/providers.md#mistral (with the chat-completions rules of
#the-chat-completions-providers-openrouter-deepseek-zai-mistral). In short:

- Reasoning models return ``message.content`` as a list of chunks; a thinking
  chunk (``{"type": "thinking", "thinking": [chunks], "signature"?}``) becomes
  a ``ThinkingBlock.Text`` carrying its signature, text chunks text parts, in
  order. Streamed thinking chunks are joined until one carries a signature, so
  a streamed reply equals the same reply received whole.
- Every as-sent assistant turn goes back part by part, thinking chunks where
  they stood; the signature only when the replay decision kept the turn.
- Tool-call ids follow Mistral's 9-character rule: ``wire_call_id`` maps any
  other id, the same in the call and its result.
- Options (``reasoning_effort``, ``prompt_mode``, sampling) are checked; content
  parts, caching, unknown chunks (kept as ``Native("mistral", chunk)``) and the
  reply's metadata are as the docs say.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final

from .._blocks import ThinkingBlock
from .._content import Document, Image, Native
from .._conversation import Conversation
from .._errors import ResponseError, ThinksealError, ValidationError
from .._messages import AssistantMessage, Message, Part, ToolCall, ToolMessage
from .._replay import Replay
from .._reply import Delta, ReplyInfo, TextDelta, ThinkingDelta, ToolCallDelta, Usage
from ._base import Built, Provider, StreamParser
from ._chat import (
    PartWriter,
    Pieces,
    ReplyStream,
    chat_body,
    chat_usage,
    goes_out,
    image_url,
    in_wire_order,
    join_text,
    lenient_text,
    make_call,
    named_tool_messages,
    native_block,
    partial_reply,
    wire_content,
)
from ._connection import Connection
from ._options import BODY_FIELDS, check_choice, check_flag, check_number, frozen_options, response_format
from ._response import Node, wrap_errors
from ._wire import dumps, splice, wire_messages

__all__ = ["PROMPT_MODES", "REASONING_EFFORTS", "Adapter", "wire_call_id"]

PATH = "/v1/chat/completions"
REASONING_EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
PROMPT_MODES: tuple[str, ...] = ("reasoning",)
TOOL_CHOICES: tuple[str, ...] = ("auto", "none", "any", "required")
RESPONSE_FORMATS: tuple[str, ...] = ("text", "json_object", "json_schema")

# Body fields thinkseal fills from the conversation and ``prepare``'s own arguments.
_RESERVED: Final[Mapping[str, str]] = MappingProxyType(
    {**BODY_FIELDS, "response_format": "use Conversation.response_format (it is part of the fingerprint)"}
)
_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")
_BASE62 = string.ascii_letters + string.digits


def wire_call_id(call_id: str) -> str:
    """``call_id`` as Mistral accepts it: itself when it is 9 characters of
    ``[a-zA-Z0-9]``, else 9 base62 digits of its SHA-256."""
    if _MISTRAL_ID.fullmatch(call_id):
        return call_id
    number = int.from_bytes(hashlib.sha256(call_id.encode()).digest()[:8], "big")
    digits = []
    for _ in range(9):
        number, digit = divmod(number, 62)
        digits.append(_BASE62[digit])
    return "".join(digits)


# -- request -------------------------------------------------------------------


def _check_stop(value: object) -> None:
    if value is not None and not (
        isinstance(value, str) or (isinstance(value, list) and all(isinstance(s, str) for s in value))
    ):
        raise ValidationError("stop: expected a string or a list of strings", path="stop")


def _check_tool_choice(value: object) -> None:
    if value is None or (isinstance(value, str) and value in TOOL_CHOICES):
        return
    if isinstance(value, Mapping) and value.get("type", "function") == "function":
        function = value.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return
    raise ValidationError(
        'tool_choice: expected "auto", "none", "any", "required" or {"type": "function", "function": {"name": ...}}',
        path="tool_choice",
    )


def _check_options(options: dict[str, Any]) -> dict[str, Any]:
    checked = frozen_options(options, _RESERVED)
    check_choice(checked.get("reasoning_effort"), REASONING_EFFORTS, "reasoning_effort")
    check_choice(checked.get("prompt_mode"), PROMPT_MODES, "prompt_mode")
    for name in ("max_tokens", "min_tokens", "random_seed", "top_k", "top_logprobs"):
        check_number(checked, name, 0, integer=True)
    check_number(checked, "n", 1, integer=True)
    check_number(checked, "temperature", 0)
    check_number(checked, "top_p", 0, 1)
    for name in ("presence_penalty", "frequency_penalty", "repetition_penalty"):
        check_number(checked, name)
    for name in ("parallel_tool_calls", "safe_prompt", "logprobs", "prompt_logprobs"):
        check_flag(checked.get(name), name)
    _check_stop(checked.get("stop"))
    _check_tool_choice(checked.get("tool_choice"))
    return checked


def _response_format(fmt: Mapping[str, Any] | None) -> dict[str, Any]:
    """``response_format`` passes through unchanged: Mistral takes OpenAI's shapes,
    a json_schema one with its name and schema."""
    fmt = response_format(fmt, Adapter.id, RESPONSE_FORMATS, needs=("name", "schema"))
    return {} if fmt is None else {"response_format": fmt}


class Parts(PartWriter):
    """Mistral's content chunks: text, ``image_url`` (a string) and ``document_url``."""

    def image(self, image: Image, where: str) -> dict[str, Any]:
        return {"type": "image_url", "image_url": image_url(image)}

    def document(self, document: Document, where: str) -> dict[str, Any]:
        if document.url is None:
            raise ValidationError(
                f"{where}: mistral takes a PDF by URL only (document_url); upload it and pass its signed URL",
                path=where,
            )
        chunk: dict[str, Any] = {"type": "document_url", "document_url": document.url}
        if document.title is not None:
            chunk["document_name"] = document.title
        return chunk


WRITER = Parts("mistral")


def _content_chunks(parts: Iterable[Part]) -> list[dict[str, Any]]:
    """The turn's text, thinking and native chunks, in ``parts`` order."""
    chunks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, str):
            if part:
                chunks.append({"type": "text", "text": part})
        elif isinstance(part, ThinkingBlock.Text):
            chunk: dict[str, Any] = {"type": "thinking", "thinking": [{"type": "text", "text": part.text}]}
            if part.signature is not None:  # only a kept turn still has one
                chunk["signature"] = part.signature
            chunks.append(chunk)
        elif isinstance(part, Native):
            if part.provider == Adapter.id:
                chunks.append(part.value)
            elif part.text:
                chunks.append({"type": "text", "text": part.text})
    return chunks


def _assistant_wire(message: AssistantMessage) -> dict[str, Any]:
    chunked = any(isinstance(b, ThinkingBlock.Text) for b in message.thinking) or any(
        isinstance(p, Native) and p.provider == Adapter.id for p in message.parts
    )
    wire: dict[str, Any] = {
        "role": "assistant",
        "content": _content_chunks(message.parts) if chunked else message.content,
    }
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": wire_call_id(c.id),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json},
            }
            for c in message.tool_calls
        ]
    return wire


def _tool_wire(message: ToolMessage, name: str) -> dict[str, Any]:
    return {
        "role": "tool",
        "tool_call_id": wire_call_id(message.tool_call_id),
        "name": name,
        **wire_content(message, WRITER),
    }


def _segment(sent: Sequence[Message]) -> list[bytes]:
    """The cached JSON bytes of the wire messages. ``in_wire_order`` leaves
    out turns with neither text nor tool calls (Mistral rejects them) and moves
    a system message standing among tool results to just after them."""
    return named_tool_messages(in_wire_order(sent), "mistral", WRITER, _assistant_wire, _tool_wire)


# -- response ------------------------------------------------------------------


def _raise_reported_error(root: Node) -> None:
    """An error body (``{"object": "error", "message", ...}``, or a 422's
    ``{"detail": [...]}``) instead of a completion."""
    value = root.object().value
    if value.get("object") == "error":
        raise ResponseError(f"Mistral reported an error: {value.get('message')!r}", path=f"{root.path}.message")
    if "detail" in value and "choices" not in value:
        raise ResponseError(f"Mistral rejected the request: {value['detail']!r}", path=f"{root.path}.detail")


def _check_finish(choice: Node) -> str | None:
    reason: str | None = choice.opt("finish_reason", str)
    if reason == "error":
        raise ResponseError('the model stopped with finish_reason "error"', path=f"{choice.path}.finish_reason")
    return reason


class _Thinking:
    """One thinking block being gathered from one or more thinking chunks."""

    __slots__ = ("path", "signature", "tainted", "texts")

    def __init__(self, path: str) -> None:
        self.path = path
        self.texts: list[str] = []
        self.signature: str | None = None
        self.tainted = False  # held chunks other than text: a signature would not survive replay

    def block(self) -> ThinkingBlock | None:
        text = join_text(self.texts, self.path)
        signature = None if self.tainted else self.signature
        if not text and signature is None:
            return None
        try:
            return ThinkingBlock.Text(text, signature)
        except ThinksealError as exc:
            raise wrap_errors(self.path, exc) from None


class _Text:
    """One text part being gathered from adjacent text chunks or fragments."""

    __slots__ = ("path", "texts")

    def __init__(self, path: str) -> None:
        self.path = path
        self.texts: list[str] = []


class _Call:
    """One tool call being gathered (a stream may split its arguments text)."""

    __slots__ = ("arguments", "id", "name", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: Pieces | Mapping[str, Any] = Pieces(f"{path}.function.arguments")

    def tool_call(self) -> ToolCall:
        arguments = self.arguments
        if isinstance(arguments, Mapping):
            return make_call(self.id, self.name, arguments, self.path)
        return make_call(self.id, self.name, arguments.text(), self.path)

    def complete(self) -> ToolCall | None:
        """The call, if its id, name and whole arguments have arrived."""
        arguments = self.arguments if isinstance(self.arguments, Mapping) else self.arguments.partial()
        if not arguments:
            return None
        try:
            return make_call(self.id, self.name, arguments, self.path)
        except ResponseError:
            return None


class _Reply:
    """The parts of one reply, in order, from a whole message or from stream
    deltas; each method adds the deltas of what it read to ``deltas``."""

    __slots__ = ("_text", "_thinking", "calls", "deltas", "parts", "streaming")

    def __init__(self, *, streaming: bool = False) -> None:
        self.streaming = streaming
        self.parts: list[_Thinking | _Text | Native] = []
        self.calls: list[_Call] = []
        self.deltas: list[Delta] = []
        # The text handed out as deltas (whole characters at a time).
        self._text = Pieces("$.choices[0].delta.content")
        self._thinking = Pieces("$.choices[0].delta.content.thinking")

    def text(self, text: str, path: str) -> None:
        if not text:
            return
        last = self.parts[-1] if self.parts else None
        if not isinstance(last, _Text):
            last = _Text(path)
            self.parts.append(last)
        last.texts.append(text)
        if self.streaming and (piece := self._text.add(text)):
            self.deltas.append(TextDelta(0, piece))

    def thinking(self, chunk: Node) -> None:
        last = self.parts[-1] if self.parts else None
        if not isinstance(last, _Thinking) or last.signature is not None:
            last = _Thinking(chunk.path)
            self.parts.append(last)
        for item in chunk.items("thinking"):
            if item.object().opt("type", str) == "text":
                text = item.get("text", str)
                last.texts.append(text)
                if self.streaming and text and (piece := self._thinking.add(text)):
                    self.deltas.append(ThinkingDelta(0, piece))
            else:
                last.tainted = True  # a reference (or unknown) chunk: no exact replay
        signature = chunk.opt("signature", str)
        if signature:
            last.signature = signature

    def content(self, message: Node) -> None:
        if not message.has("content"):
            return
        if isinstance(message.get("content", (str, list)), str):
            self.text(message.value["content"], f"{message.path}.content")
            return
        for chunk in message.items("content"):
            kind = chunk.get("type", str)
            if kind == "text":
                self.text(chunk.get("text", str), f"{chunk.path}.text")
            elif kind == "thinking":
                self.thinking(chunk)
            else:  # a citation or a chunk thinkseal does not read: kept in place, verbatim
                self.parts.append(native_block(Adapter.id, chunk))

    def tool_calls(self, message: Node, *, fragments: bool) -> None:
        for item in message.items("tool_calls", required=False):
            item.object()
            if item.opt("type", str, "function") != "function":
                raise ResponseError(f"unknown tool call type {item.value['type']!r}", path=f"{item.path}.type")
            call_id = item.opt("id", str)
            if call_id == "null":  # the SDK's default when the reply had no id
                call_id = None
            function = item.node("function")
            call = self._continued(item, call_id) if fragments else None
            if call is None:
                call = _Call(item.path)
                self.calls.append(call)
            new_id = call_id if call_id and call.id is None else None
            name = function.opt("name", str)
            new_name = name if name and call.name is None else None
            call.id = call_id or call.id
            call.name = name or call.name
            # A later stream fragment may carry only more arguments text.
            kinds = (str, Mapping)
            arguments = function.opt("arguments", kinds) if fragments else function.get("arguments", kinds)
            piece = ""
            if isinstance(arguments, Mapping):
                call.arguments = arguments
                piece = dumps(dict(arguments)).decode()
            elif arguments and isinstance(call.arguments, Pieces):
                if self.streaming:
                    piece = call.arguments.add(arguments)
                else:
                    call.arguments.parts.append(arguments)
            elif arguments:
                raise ResponseError("arguments text after an arguments object", path=f"{function.path}.arguments")
            if self.streaming and (new_id or new_name or piece):
                self.deltas.append(ToolCallDelta(self.calls.index(call), new_id, new_name, piece))

    def _continued(self, item: Node, call_id: str | None) -> _Call | None:
        """The streamed call a fragment continues: the one at its ``index`` (the
        last one without an index), unless the fragment names a different id."""
        index = item.opt("index", int)
        if index is None:
            found = self.calls[-1] if self.calls and not call_id else None
        else:
            found = self.calls[index] if 0 <= index < len(self.calls) else None
        if found is not None and call_id and found.id and call_id != found.id:
            return None
        return found

    def message(self) -> AssistantMessage:
        parts: list[Part] = []
        for part in self.parts:
            if isinstance(part, _Text):
                parts.append(join_text(part.texts, part.path))
            elif isinstance(part, Native):
                parts.append(part)
            elif (block := part.block()) is not None:
                parts.append(block)
        parts.extend(call.tool_call() for call in self.calls)
        return AssistantMessage.from_parts(parts)

    def partial(self) -> AssistantMessage | None:
        content: list[str | Native] = []
        for part in self.parts:
            if isinstance(part, _Text):
                content.append(lenient_text(part.texts))
            elif isinstance(part, Native):
                content.append(part)
        calls = [call for c in self.calls if (call := c.complete()) is not None]
        return partial_reply(content, calls)


def _reply_info(root: Node, choice: Node | None) -> ReplyInfo:
    reason = None if choice is None else _check_finish(choice)
    return ReplyInfo(reason, chat_usage(root.opt_node("usage")), root.opt("id", str), root.opt("model", str))


class _Stream(ReplyStream[_Reply]):
    """Accumulates stream chunks until one has a ``finish_reason``."""

    cut_off = ("the stream ended without a finish_reason", "$.choices[0].finish_reason")

    def feed(self, event: Mapping[str, Any]) -> list[Delta]:
        root = Node(event)
        if "choices" not in event and isinstance(event.get("data"), Mapping):
            root = Node(event["data"], "$.data")  # the SDK's CompletionEvent.model_dump()
        _raise_reported_error(root)
        choice = next((c for c in root.items("choices") if c.object().opt("index", int, 0) == 0), None)
        self._reply.deltas = []
        if choice is not None:  # else a usage-only chunk
            delta = choice.opt_node("delta")
            if delta is not None:
                self._reply.content(delta)
                self._reply.tool_calls(delta, fragments=True)
            if _check_finish(choice) is not None:
                self._ended = True
        self._info = _merged_info(self._info, _reply_info(root, choice))
        return self._reply.deltas


def _merged_info(seen: ReplyInfo, new: ReplyInfo) -> ReplyInfo:
    """A stream's metadata so far: the first id, the latest model, finish reason and usage."""
    usage = new.usage if new.usage != Usage() else seen.usage
    return ReplyInfo(new.stop_reason or seen.stop_reason, usage, seen.id or new.id, new.model or seen.model)


class Adapter(Provider):
    """Mistral's chat completions API."""

    id: ClassVar[str] = "mistral"
    connection = Connection("https://api.mistral.ai", "bearer", key_env=("MISTRAL_API_KEY",))

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        checked = _check_options(options)
        raws = wire_messages(replay, "mistral", _segment, goes_out)
        body = chat_body(model, raws, conversation.tools, _response_format(conversation.response_format), checked)
        if stream:
            body["stream"] = True
        headers = {"content-type": "application/json", "accept": "text/event-stream" if stream else "application/json"}
        return Built(body, splice(body, "messages", raws), PATH, headers)

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        root = Node(response)
        _raise_reported_error(root)
        choices = list(root.items("choices"))
        if not choices:
            raise ResponseError("expected at least one choice", path="$.choices")
        _check_finish(choices[0].object())
        message = choices[0].node("message")
        reply = _Reply()
        reply.content(message)
        reply.tool_calls(message, fragments=False)
        return reply.message()

    def reply_info(self, response: Mapping[str, Any]) -> ReplyInfo:
        root = Node(response)
        choices = root.opt("choices", list, [])
        return _reply_info(root, Node(choices[0], "$.choices[0]") if choices else None)

    def new_stream(self) -> StreamParser:
        return _Stream(_Reply(streaming=True))
