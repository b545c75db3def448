"""The OpenAI chat-completions wire format, shared by the openrouter, deepseek,
zai, openai and gemini-openai adapters: request messages and their content
parts, tools, response format, option checks, response parsing, reply metadata
and the merging of streamed chunks into typed deltas.

Each adapter subclasses ``ChatProvider`` and states only what differs: where
its reasoning lives in a reply, how it goes back on assistant messages (and on
their tool calls, ``write_calls``), which options and response formats it
accepts, whether the target model changes how turns are written
(``model_shape``), and how it writes content parts (a ``PartWriter``).
Mistral and Ollama, whose tool results name the tool they answer, build
their messages with ``named_tool_messages`` and share the content-part
mapping, the reply metadata, the streamed-text pieces and the stream base
below.

What every chat-completions provider requires, and what thinkseal does, is in
docs/providers.md#the-chat-completions-providers-openrouter-deepseek-zai-mistral.
In short: OpenAI's tool pairing (a system message inside a run of tool
results goes out after the run); content parts in OpenAI's array shape as far
as the provider documents them, text-only content as a string; tool-call
arguments as RFC 8785 JSON text, so an unchanged turn is sent with unchanged
bytes; streamed fragments kept in lists and joined once at ``finish``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Any, ClassVar, Final, Generic, Protocol, TypeVar, assert_never

from .._blocks import ThinkingBlock
from .._content import CacheBreakpoint, Document, Image, Native, unknown_part
from .._conversation import Conversation
from .._errors import ResponseError, ThinksealError, ValidationError
from .._messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from .._replay import Replay
from .._reply import Delta, ReplyInfo, TextDelta, ThinkingDelta, ToolCallDelta, Usage
from .._tool import Tool
from ._base import WIRE_INDEX, Built, Provider, StreamParser
from ._options import BODY_FIELDS, check_choice, check_object, frozen_options, response_format
from ._response import Node, check_depth, error_text, parse_arguments, valid_text, wrap_errors
from ._wire import counted, fragment, splice, tallied_wire_messages

PATH = "/chat/completions"
TOOL_ERROR_PREFIX = "[tool error] "

# Body fields thinkseal builds from the conversation and the prepare() call.
_RESERVED: Final[Mapping[str, str]] = MappingProxyType(
    {
        **BODY_FIELDS,
        "functions": BODY_FIELDS["tools"],
        "response_format": "use Conversation.response_format (it is part of the fingerprint)",
    }
)

# System, user and tool messages whose content is a string look alike on every
# chat provider; content parts are written per provider.
_PLAIN_KEY = "chat"


# -- option checks -------------------------------------------------------------


def check_thinking_type(options: Mapping[str, Any], *, required: bool) -> Mapping[str, Any] | None:
    """The ``thinking`` option of DeepSeek and Z.ai: ``{"type": "enabled" | "disabled", ...}``."""
    thinking = check_object(options, "thinking")
    if thinking is not None:
        if required and "type" not in thinking:
            raise ValidationError('thinking.type: required ("enabled" or "disabled")', path="thinking.type")
        check_choice(thinking.get("type"), ("enabled", "disabled"), "thinking.type")
    return thinking


def check_stream_options(options: Mapping[str, Any], stream: bool) -> None:
    """``stream_options``: an object, and only in a streaming request."""
    if options.get("stream_options") is not None:
        if not stream:
            raise ValidationError(
                "stream_options: only valid for a streaming request (prepare(..., stream=True))",
                path="stream_options",
            )
        check_object(options, "stream_options")


# -- content parts ---------------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def data_url(media_type: str, data: bytes) -> str:
    """``data:<media type>;base64,<data>``."""
    return f"data:{media_type};base64,{b64(data)}"


def image_url(image: Image) -> str:
    """An image's URL, or its bytes as a data URL."""
    if image.data is not None:
        assert image.media_type is not None  # Image requires it with data
        return data_url(image.media_type, image.data)
    assert image.url is not None
    return image.url


def is_plain_text(part: Mapping[str, Any]) -> bool:
    """A ``{"type": "text", "text": ...}`` part with nothing else on it."""
    return part.get("type") == "text" and len(part) == 2 and isinstance(part.get("text"), str)


def collapse(parts: list[dict[str, Any]], marked: bool, text_arrays: bool) -> str | list[dict[str, Any]]:
    """``parts`` as a message's content: a string when they are only text (one
    part, or several where the provider takes no text arrays) and no cache mark
    is on them; else the array."""
    if not marked and all(is_plain_text(p) for p in parts) and (len(parts) <= 1 or not text_arrays):
        return "".join(p["text"] for p in parts)
    return parts


class PartWriter:
    """How one provider writes the content parts of system, user and tool
    messages. The defaults are OpenAI's chat-completions shapes; each adapter
    overrides what its provider documents differently. Whatever a provider
    cannot take raises ``ValidationError`` at the part (``where``)."""

    # Several text parts (and nothing else) go out as an array of text parts;
    # otherwise they are joined into one string, with no separator.
    text_arrays: ClassVar[bool] = True
    # What a tool result may hold besides text: "image", "document".
    tool_kinds: ClassVar[frozenset[str]] = frozenset({"image", "document"})
    # The ``type`` of the parts ``text`` writes (an error prefix goes on the first one).
    text_type: ClassVar[str] = "text"

    def __init__(self, provider: str) -> None:
        self.provider = provider

    def text(self, text: str) -> dict[str, Any]:
        return {"type": "text", "text": text}

    def image(self, image: Image, where: str) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": image_url(image)}}

    def document(self, document: Document, where: str) -> dict[str, Any]:
        """A PDF document (bytes or URL); plain-text documents go out as text."""
        raise ValidationError(
            f"{where}: {self.provider} takes no PDF documents (a text Document goes out as text)", path=where
        )

    def native(self, native: Native, where: str) -> dict[str, Any]:
        """One of this provider's own blocks, as it was kept."""
        return native.value

    def cache(self, part: dict[str, Any], ttl: str | None) -> bool:
        """Mark ``part`` as the end of a cached prefix; False where the provider
        takes no breakpoint there (the breakpoint is then ignored)."""
        return False

    def fields(self, parts: list[dict[str, Any]], marked: bool, where: str) -> dict[str, Any]:
        """The message fields that carry ``parts`` (``{"content": ...}``)."""
        return {"content": collapse(parts, marked, self.text_arrays)}

    def tool_refusal(self, kind: str, where: str) -> ValidationError:
        takes = "text only" if not self.tool_kinds else f"no {kind}s"
        return ValidationError(f"{where}: {self.provider} tool results take {takes}", path=where)


def wire_content(message: SystemMessage | UserMessage | ToolMessage, writer: PartWriter) -> dict[str, Any]:
    """The fields that carry a system, user or tool message's content (an
    ``is_error`` tool result with ``TOOL_ERROR_PREFIX`` before it)."""
    error = isinstance(message, ToolMessage) and message.is_error
    content = message.content
    if isinstance(content, str):
        return writer.fields([writer.text(TOOL_ERROR_PREFIX + content if error else content)], False, "")
    label = type(message).__name__
    tool = isinstance(message, ToolMessage)
    out: list[dict[str, Any]] = []
    marked = False
    for i, part in enumerate(content):
        where = f"{label}.content[{i}]"
        unknown = unknown_part(part, writer.provider)
        if unknown is not None:
            raise ValidationError(f"{where}: {unknown}", path=where)
        match part:
            case str():
                out.append(writer.text(part))
            case CacheBreakpoint():
                if out and writer.cache(out[-1], part.ttl):
                    marked = True
            case Native():
                if part.provider == writer.provider:
                    out.append(writer.native(part, where))
                elif part.text:
                    out.append(writer.text(part.text))
            case Document() if part.text is not None:
                out.append(writer.text(part.text))
            case Image() | Document():
                kind = "image" if isinstance(part, Image) else "document"
                if tool and kind not in writer.tool_kinds:
                    raise writer.tool_refusal(kind, where)
                out.append(writer.image(part, where) if isinstance(part, Image) else writer.document(part, where))
            case _:
                assert_never(part)
    if error:
        if out and out[0].get("type") == writer.text_type and isinstance(out[0].get("text"), str):
            out[0] = {**out[0], "text": TOOL_ERROR_PREFIX + out[0]["text"]}
        else:
            out.insert(0, writer.text(TOOL_ERROR_PREFIX))
    return writer.fields(out, marked, f"{label}.content")


# -- request pieces ----------------------------------------------------------------


def tool_wire(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def chat_body(
    model: str,
    messages: Sequence[Any],
    tools: Sequence[Tool],
    *fields: Mapping[str, Any],
    write_tool: Callable[[Tool], dict[str, Any]] = tool_wire,
) -> dict[str, Any]:
    """A request body in the chat formats' field order: ``model``, ``messages``,
    ``tools`` (when the conversation has some), then each of ``fields`` in turn."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body["tools"] = [write_tool(t) for t in tools]
    for more in fields:
        body.update(more)
    return body


def call_wire(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments_json}}


def plain_wire(message: Message, writer: PartWriter) -> dict[str, Any]:
    """A system, user or tool message."""
    if isinstance(message, ToolMessage):
        return {"role": "tool", "tool_call_id": message.tool_call_id, **wire_content(message, writer)}
    assert isinstance(message, (SystemMessage, UserMessage))
    return {"role": message.role, **wire_content(message, writer)}


def plain_key(message: Message, key: str, provider: str) -> str:
    """The fragment-cache key of a system, user or tool message: ``key`` for
    string content (written alike by the providers sharing ``key``), else the
    provider's own."""
    return key if isinstance(getattr(message, "content", None), str) else f"{key}:{provider}"


# ``assistant_wire``'s default content: the turn's text.
TURN_TEXT: Final[Any] = object()


def assistant_wire(
    message: AssistantMessage,
    reasoning: Mapping[str, Any],
    content: Any = TURN_TEXT,
    extra: Mapping[str, Any] | None = None,
    calls: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """An assistant message with the provider's ``reasoning`` fields (and any
    ``extra`` ones) after its content, which is the turn's text by default;
    its ``tool_calls`` are ``calls`` when given, else each call's ``call_wire``."""
    wire: dict[str, Any] = {"role": "assistant", "content": message.content_opt if content is TURN_TEXT else content}
    wire.update(reasoning)
    if extra:
        wire.update(extra)
    if message.tool_calls:
        wire["tool_calls"] = list(calls) if calls is not None else [call_wire(c) for c in message.tool_calls]
    return wire


def goes_out(message: AssistantMessage) -> bool:
    """Whether a turn has anything the format can carry (text or tool calls)."""
    return bool(message.content) or bool(message.tool_calls)


def in_wire_order(sent: Sequence[Message]) -> list[Message]:
    """``sent`` without empty assistant turns, and with each system message that
    stands inside a run of tool results moved to just after that run."""
    out: list[Message] = []
    deferred: list[Message] = []
    in_run = False
    for message in sent:
        if isinstance(message, ToolMessage):
            out.append(message)
            continue
        if isinstance(message, SystemMessage) and in_run:
            deferred.append(message)
            continue
        out.extend(deferred)
        deferred.clear()
        if isinstance(message, AssistantMessage):
            in_run = bool(message.tool_calls)
            if not goes_out(message):
                continue
        else:
            in_run = False
        out.append(message)
    out.extend(deferred)
    return out


def named_tool_messages(
    sent: Iterable[Message],
    key: str,
    writer: PartWriter,
    assistant_wire: Callable[[AssistantMessage], dict[str, Any]],
    tool_wire: Callable[[ToolMessage, str], dict[str, Any]],
) -> list[bytes]:
    """The cached JSON bytes of the wire messages of ``sent``, for a format
    whose tool results name the tool they answer (Mistral, Ollama):
    ``tool_wire(message, name)`` gets the name of the call a result answers.
    System and user messages go out as ``plain_wire`` with ``writer``. ``key``
    names the format in the fragment cache."""
    raws: list[bytes] = []
    names: dict[str, str] = {}  # call id -> tool name, for the turn the tool results answer
    for message in sent:
        if isinstance(message, AssistantMessage):
            names = {c.id: c.name for c in message.tool_calls}
            raw = fragment(message, key, partial(assistant_wire, message))
        elif isinstance(message, ToolMessage):
            # Pairing guarantees a tool message still here answers a call of the turn before it.
            name = names[message.tool_call_id]
            raw = fragment(message, f"{key}:tool:{name}", partial(tool_wire, message, name))
        else:
            raw = fragment(message, key, partial(plain_wire, message, writer))  # system or user
        raws.append(raw)
    return raws


# -- the adapter base ----------------------------------------------------------------


class ChatProvider(Provider):
    """A chat-completions adapter. Subclasses set ``response_formats`` and
    ``writer`` and override the hooks below; the rest of the format is shared."""

    # The ``response_format`` types the provider documents.
    response_formats: ClassVar[frozenset[str]] = frozenset({"text", "json_object", "json_schema"})
    # The types of this provider's own blocks that an assistant message carries
    # in ``annotations`` rather than in its content.
    annotation_types: ClassVar[frozenset[str]] = frozenset()
    writer: PartWriter

    # -- hooks -------------------------------------------------------------------

    def validate_options(self, options: Mapping[str, Any], stream: bool) -> None:
        """Check the provider's documented option rules (values already JSON)."""

    def shape(self, conversation: Conversation) -> str:
        """The fragment-cache key of assistant turns in this request: the provider
        id plus anything in the request that changes how a turn is written.
        Decided from the request context only, so wire forms can be shared
        between requests (``providers._wire.wire_messages``)."""
        return self.id

    def model_shape(self, conversation: Conversation, model: str) -> str:
        """``shape`` for a request to ``model``: where the target model changes
        how a turn is written too, its key says so; ``shape`` by default."""
        return self.shape(conversation)

    def reasoning_fields(self, message: AssistantMessage, shape: str) -> dict[str, Any]:
        """The reasoning fields a sent assistant turn carries."""
        raise NotImplementedError

    def write_calls(self, message: AssistantMessage, shape: str) -> list[dict[str, Any]]:
        """The ``tool_calls`` of a sent turn (each call's ``call_wire`` by
        default; a provider that carries data on its calls adds it here)."""
        return [call_wire(c) for c in message.tool_calls]

    def tally(self) -> Callable[[Mapping[str, Any]], int] | None:
        """What the provider decides from its assistant wire messages once they
        are only bytes: a count of one, kept beside its bytes (under the
        provider's own ``shape`` key) and summed over the request for
        ``complete_body`` (None: nothing to count or keep)."""
        return None

    def complete_body(self, body: dict[str, Any], options: Mapping[str, Any], tally: int) -> None:
        """Last changes to the body once its messages are known (in place);
        ``tally`` is the sum of ``tally`` over them (0 without one)."""

    def write_tool(self, tool: Tool) -> dict[str, Any]:
        """One tool definition (``Tool.cache`` is ignored unless overridden)."""
        return tool_wire(tool)

    def read_thinking(self, message: Node) -> list[ThinkingBlock]:
        """The thinking blocks of a reply's ``message`` object."""
        raise NotImplementedError

    def read_annotations(self, message: Node) -> list[Native]:
        """Blocks a reply's ``message`` carries beside its content (kept after it)."""
        return []

    def read_usage(self, usage: Node | None) -> Usage:
        """The token counts of a reply's (or a stream's) ``usage`` object."""
        return chat_usage(usage)

    def thinking_deltas(self) -> ThinkingDeltas:
        """An accumulator of the thinking fragments of streamed deltas."""
        raise NotImplementedError

    # -- Provider -----------------------------------------------------------------

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        checked = self._check_options(options, stream)
        shape = self.model_shape(conversation, model)
        count = self.tally()

        def segment(sent: Sequence[Message]) -> tuple[list[bytes], list[int] | None]:
            pairs = [self._fragment(message, shape, count) for message in in_wire_order(sent)]
            return [data for data, _ in pairs], None if count is None else [number for _, number in pairs]

        encoded, total = tallied_wire_messages(replay, shape, segment, goes_out)
        # The response format passes through in OpenAI's shape, where the provider takes its type.
        fmt = response_format(conversation.response_format, self.id, self.response_formats)
        body = chat_body(
            model,
            encoded,
            conversation.tools,
            {} if fmt is None else {"response_format": fmt},
            checked,
            write_tool=self.write_tool,
        )
        if stream:
            body["stream"] = True
        self.complete_body(body, checked, total)
        return Built(body, splice(body, "messages", encoded), PATH, {})

    def _fragment(
        self, message: Message, shape: str, count: Callable[[Mapping[str, Any]], int] | None
    ) -> tuple[bytes, int]:
        """A message's cached JSON bytes, and ``count`` of an assistant turn's
        wire object (0 for other messages, or without ``count``)."""
        if isinstance(message, AssistantMessage):
            build = partial(self._assistant, message, shape)
            return (fragment(message, shape, build), 0) if count is None else counted(message, shape, build, count)
        return fragment(message, plain_key(message, _PLAIN_KEY, self.id), partial(plain_wire, message, self.writer)), 0

    def _assistant(self, message: AssistantMessage, shape: str) -> dict[str, Any]:
        reasoning = self.reasoning_fields(message, shape)
        calls = self.write_calls(message, shape)
        if not any(isinstance(p, Native) for p in message.parts):
            return assistant_wire(message, reasoning, calls=calls)
        # Own blocks go back verbatim (in place in the content, or in annotations);
        # other providers' blocks as their text.
        items: list[dict[str, Any]] = []
        annotations: list[Any] = []
        for part in message.parts:
            if isinstance(part, str):
                if part:
                    items.append({"type": "text", "text": part})
            elif isinstance(part, Native):
                if part.provider == self.id:
                    value = part.value
                    (annotations if value.get("type") in self.annotation_types else items).append(value)
                elif part.text:
                    items.append({"type": "text", "text": part.text})
        content = collapse(items, False, False) if items else None
        extra = {"annotations": annotations} if annotations else None
        return assistant_wire(message, reasoning, content, extra, calls)

    def named_turn(self, replay: Replay, message: str) -> int | None:
        """The conversation index of the assistant turn a relayed Claude error
        names as ``messages.N`` (an index into this request's ``messages``,
        system messages included), or None when it names none, or another role."""
        match = WIRE_INDEX.search(message)
        if match is None:
            return None
        sent = replay.sent_messages()
        wire = in_wire_order(sent)
        position = int(match[1])
        if position >= len(wire) or not isinstance(wire[position], AssistantMessage):
            return None
        named = wire[position]
        return next(i for i, m in enumerate(sent) if m is named)

    def _check_options(self, options: Mapping[str, Any], stream: bool) -> dict[str, Any]:
        checked = frozen_options(options, _RESERVED)
        check_stream_options(checked, stream)
        self.validate_options(checked, stream)
        return checked

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        root = Node(response)
        raise_provider_error(root)
        if not root.get("choices", list):
            raise ResponseError("expected at least one choice", path="$.choices")
        message = root.child("choices").child(0).object().node("message")
        content = read_content(message, self.id)
        calls = [read_call(node) for node in message.items("tool_calls", required=False)]
        return assemble(self.read_thinking(message), [*content, *self.read_annotations(message)], calls)

    def reply_info(self, response: Mapping[str, Any]) -> ReplyInfo:
        root = Node(response)
        choices = root.opt("choices", list, [])
        reason = Node(choices[0], "$.choices[0]").opt("finish_reason", str) if choices else None
        return ReplyInfo(reason, self.read_usage(root.opt_node("usage")), root.opt("id", str), root.opt("model", str))

    def new_stream(self) -> StreamParser:
        return ChatStream(self.id, self.thinking_deltas(), self.read_annotations, self.read_usage)


# -- replies ---------------------------------------------------------------------------


def raise_provider_error(root: Node) -> None:
    """A body that reports an error instead of a completion (OpenRouter streams
    one mid-stream) is a ``ResponseError`` at ``$.error``."""
    root.object()
    error = root.value.get("error")
    if error is None:
        return
    message = error.get("message") if isinstance(error, Mapping) else error
    raise ResponseError(f"the provider reported an error: {error_text(message)}", path="$.error")


def _without_nulls(value: Any, path: str, depth: int = 1) -> Any:
    """``value`` with keys sorted and null members left out, at every level
    (nesting past ``Limits.max_depth`` is a ``ResponseError`` at ``path``)."""
    if isinstance(value, Mapping):
        check_depth(depth, path)
        return {k: _without_nulls(v, path, depth + 1) for k, v in sorted(value.items()) if v is not None}
    if isinstance(value, list):
        check_depth(depth, path)
        return [_without_nulls(v, path, depth + 1) for v in value]
    return value


def stored_json(node: Node) -> str:
    """A response object as thinkseal stores it: compact JSON with sorted keys
    and no null members, so the same object gives the same text whether it came
    whole, streamed, or through an SDK's ``model_dump()`` (which adds nulls and
    reorders keys)."""
    node.object()
    try:
        plain = _without_nulls(node.value, node.path)
        text = json.dumps(plain, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ResponseError(f"not JSON: {exc}", path=node.path) from None
    return valid_text(text, node.path)


def native_block(provider: str, node: Node) -> Native:
    """A response block kept as ``provider``'s own ``Native`` block: compact JSON
    with sorted keys and no null members, so a block gives the same data whether
    it came whole, streamed, or through an SDK's ``model_dump()`` (which adds
    nulls and reorders keys)."""
    node.object()
    try:
        return Native.of(provider, _without_nulls(node.value, node.path))
    except ThinksealError as exc:
        raise wrap_errors(node.path, exc) from None


def read_content(message: Node, provider: str) -> list[str | Native]:
    """A reply's ``content``: a string, or an array whose text items are text
    (adjacent ones joined) and whose other items are ``provider``'s own blocks."""
    if not message.has("content"):
        return []
    if isinstance(message.get("content", (str, list)), str):
        text = message.value["content"]
        return [valid_text(text, f"{message.path}.content")] if text else []
    segments = Segments()
    for item in message.items("content"):
        if item.object().opt("type", str) == "text":
            segments.text(item.get("text", str))
        else:
            segments.native(native_block(provider, item))
    return segments.parts(f"{message.path}.content")


def reasoning_text(message: Node, field: str) -> list[ThinkingBlock]:
    """One unsigned Text block from the string field ``field``, if not empty."""
    text = message.opt(field, str)
    return [ThinkingBlock.Text(valid_text(text, f"{message.path}.{field}"))] if text else []


def _check_call_type(node: Node) -> None:
    kind = node.opt("type", str)
    if kind is not None and kind != "function":
        raise ResponseError(f"unknown tool call type {kind!r}", path=f"{node.path}.type")


# Where a chat-completions tool call keeps its id, name and arguments (``make_call``'s error paths).
CHAT_CALL_FIELDS: Final[tuple[str, str, str]] = ("id", "function.name", "function.arguments")


def make_call(
    call_id: object, name: object, arguments: object, path: str, fields: tuple[str, str, str] = CHAT_CALL_FIELDS
) -> ToolCall:
    """A ToolCall from response values, every failure a ``ResponseError`` at its
    path (``fields``: where the id, name and arguments stand under ``path``)."""
    id_field, name_field, arguments_field = fields
    for value, field in ((call_id, id_field), (name, name_field)):
        if not isinstance(value, str) or not value.strip():
            raise ResponseError("expected a non-blank string", path=f"{path}.{field}")
        valid_text(value, f"{path}.{field}")
    args = parse_arguments(arguments, f"{path}.{arguments_field}")
    try:
        return ToolCall(call_id, name, args)  # type: ignore[arg-type]
    except ThinksealError as exc:
        raise wrap_errors(f"{path}.{arguments_field}", exc) from None


def read_call(node: Node) -> ToolCall:
    node.object()
    _check_call_type(node)
    function = node.node("function")
    return make_call(
        node.get("id", str), function.get("name", str), function.get("arguments", (str, Mapping)), node.path
    )


def assemble(
    thinking: Sequence[ThinkingBlock], content: Sequence[str | Native], calls: Sequence[ToolCall]
) -> AssistantMessage:
    """The reply in the canonical layout: thinking, content (text and blocks in
    place), tool calls."""
    return AssistantMessage.from_parts([*thinking, *content, *calls])


def join_text(parts: Sequence[str], path: str) -> str:
    """Streamed text fragments joined. A character split across chunks as two
    escaped surrogate halves is rejoined; a truly lone surrogate is an error."""
    text = "".join(parts)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            text = text.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise ResponseError("string is not valid Unicode (lone surrogate)", path=path) from None
    return text


def lenient_text(parts: Sequence[str]) -> str:
    """Fragments joined for a partial reply: a character cut in half at the end
    of a broken stream is dropped instead of failing."""
    text = "".join(parts)
    if text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", errors="ignore")


def count(node: Node | None, key: str) -> int | None:
    """A token count: a non-negative integer (an integral JSON number), or None."""
    if node is None:
        return None
    raw = node.opt(key, (int, float))
    if raw is None:
        return None
    where = f"{node.path}.{key}"
    if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
        raise ResponseError(f"expected an integer, got {raw!r}", path=where)
    value = int(raw)
    if value < 0:
        raise ResponseError(f"expected a non-negative integer, got {value!r}", path=where)
    return value


def chat_usage(usage: Node | None) -> Usage:
    """OpenAI's ``usage`` object: prompt (input, cached tokens included) and
    completion tokens, cache reads and writes, reasoning tokens."""
    if usage is None:
        return Usage()
    prompt = usage.opt_node("prompt_tokens_details")
    completion = usage.opt_node("completion_tokens_details")
    return Usage(
        input_tokens=count(usage, "prompt_tokens"),
        output_tokens=count(usage, "completion_tokens"),
        cache_read_tokens=count(prompt, "cached_tokens"),
        cache_write_tokens=count(prompt, "cache_write_tokens"),
        reasoning_tokens=count(completion, "reasoning_tokens"),
    )


# -- streaming ----------------------------------------------------------------------------


class Pieces:
    """The streamed fragments of one string, kept in a list and joined once.
    ``add`` returns the new text as whole characters: a character split into
    surrogate halves across events is held back until its second half arrives,
    so every delta is valid text; a truly lone surrogate is a ``ResponseError``."""

    __slots__ = ("_held", "parts", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.parts: list[str] = []
        self._held = ""

    def add(self, text: str) -> str:
        self.parts.append(text)
        if text.isascii() and not self._held:
            return text
        text = self._held + text
        self._held = ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            self._held, text = text[-1], text[:-1]
        return join_text([text], self.path)

    def text(self) -> str:
        return join_text(self.parts, self.path)

    def partial(self) -> str:
        return lenient_text(self.parts)


class Segments:
    """A reply's content in order: runs of text fragments and whole blocks."""

    __slots__ = ("_runs",)

    def __init__(self) -> None:
        self._runs: list[list[str] | Native] = []

    def text(self, text: str) -> None:
        if not text:
            return
        last = self._runs[-1] if self._runs else None
        if isinstance(last, list):
            last.append(text)
        else:
            self._runs.append([text])

    def native(self, block: Native) -> None:
        self._runs.append(block)

    def parts(self, path: str, *, lenient: bool = False) -> list[str | Native]:
        out: list[str | Native] = []
        for run in self._runs:
            if isinstance(run, Native):
                out.append(run)
            else:
                text = lenient_text(run) if lenient else join_text(run, path)
                if text:
                    out.append(text)
        return out


class ThinkingDeltas(Protocol):
    """Collects the thinking fragments of streamed deltas; ``feed`` returns the
    new reasoning text of one delta (for ``ThinkingDelta``s)."""

    def feed(self, delta: Node) -> list[str]: ...

    def blocks(self) -> list[ThinkingBlock]: ...


class TextDeltas:
    """Reasoning streamed as string fragments of one delta field (``reasoning_content``)."""

    __slots__ = ("_field", "_pieces")

    def __init__(self, field: str) -> None:
        self._field = field
        self._pieces = Pieces(f"$.choices[0].delta.{field}")

    def feed(self, delta: Node) -> list[str]:
        text = delta.opt(self._field, str)
        return [self._pieces.add(text)] if text else []

    def blocks(self) -> list[ThinkingBlock]:
        text = self._pieces.text()
        return [ThinkingBlock.Text(text)] if text else []


class Gathering(Protocol):
    """A reply being gathered from a whole response or from streamed events."""

    def message(self) -> AssistantMessage: ...

    def partial(self) -> AssistantMessage | None: ...


G = TypeVar("G", bound=Gathering)


class ReplyStream(StreamParser, Generic[G]):
    """A streamed reply gathered into one ``Gathering`` until the event that
    ends the stream (Mistral, Ollama): ``feed`` sets ``_ended`` and keeps the
    stream's metadata in ``_info``; ``cut_off`` is the error (message, path) of
    a stream that stopped before it."""

    cut_off: ClassVar[tuple[str, str]]

    def __init__(self, reply: G) -> None:
        self._reply = reply
        self._ended = False
        self._info = ReplyInfo()

    def finish(self) -> AssistantMessage:
        if not self._ended:
            message, path = self.cut_off
            raise ResponseError(message, path=path)
        return self._reply.message()

    def ended(self) -> bool:
        return self._ended

    def info(self) -> ReplyInfo:
        return self._info

    def partial(self) -> AssistantMessage | None:
        return self._reply.partial()


def partial_reply(content: Sequence[str | Native], calls: Sequence[ToolCall]) -> AssistantMessage | None:
    """What a cut stream delivered: its content and complete tool calls, or None."""
    if not any(isinstance(p, str) and p for p in content) and not calls:
        return None
    return AssistantMessage.from_parts([*content, *calls])


class _CallDraft:
    __slots__ = ("arguments", "id", "name", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.id: str | None = None
        self.name: str | None = None
        self.arguments = Pieces(f"{path}.function.arguments")

    def build(self) -> ToolCall:
        return make_call(self.id, self.name, self.arguments.text(), self.path)

    def complete(self) -> ToolCall | None:
        """The call, if its id, name and whole arguments (a JSON object) have arrived."""
        arguments = self.arguments.partial()
        if not arguments.strip():
            return None
        try:
            return make_call(self.id, self.name, arguments, self.path)
        except ResponseError:
            return None


class ChatStream(StreamParser):
    """Merges ``chat.completion.chunk`` events of choice 0 into one reply, and
    each event into its typed deltas."""

    __slots__ = (
        "_annotations",
        "_calls",
        "_content",
        "_finish_reason",
        "_id",
        "_model",
        "_provider",
        "_read_annotations",
        "_read_usage",
        "_text",
        "_thinking",
        "_usage",
    )

    def __init__(
        self,
        provider: str,
        thinking: ThinkingDeltas,
        read_annotations: Callable[[Node], list[Native]],
        read_usage: Callable[[Node | None], Usage],
    ) -> None:
        self._provider = provider
        self._thinking = thinking
        self._read_annotations = read_annotations
        self._read_usage = read_usage
        self._content = Segments()
        self._text = Pieces("$.choices[0].delta.content")
        self._annotations: list[Native] = []
        self._calls: dict[int, _CallDraft] = {}
        self._finish_reason: str | None = None
        self._id: str | None = None
        self._model: str | None = None
        self._usage: Usage = Usage()

    def feed(self, event: Mapping[str, Any]) -> list[Delta]:
        root = Node(event)
        raise_provider_error(root)
        deltas: list[Delta] = []
        for choice in root.items("choices", required=False):
            choice.object()
            if choice.opt("index", int, 0) != 0:
                continue  # thinkseal reads the first choice only, as receive does
            delta = choice.opt_node("delta")
            if delta is not None:
                self._feed_delta(delta, deltas)
            reason = choice.opt("finish_reason", str)
            if reason:
                self._finish_reason = reason
        self._id = self._id or root.opt("id", str)
        self._model = root.opt("model", str) or self._model
        usage = root.opt_node("usage")
        if usage is not None:
            self._usage = self._read_usage(usage)
        return deltas

    def _feed_delta(self, delta: Node, deltas: list[Delta]) -> None:
        deltas.extend(ThinkingDelta(0, t) for t in self._thinking.feed(delta) if t)
        if delta.has("content") and isinstance(delta.get("content", (str, list)), list):
            for item in delta.items("content"):
                if item.object().opt("type", str) == "text":
                    self._add_text(item.get("text", str), deltas)
                else:
                    self._content.native(native_block(self._provider, item))
        else:
            text = delta.opt("content", str)
            if text:
                self._add_text(text, deltas)
        self._annotations.extend(self._read_annotations(delta))
        for fragment_node in delta.items("tool_calls", required=False):
            self._feed_call(fragment_node, deltas)

    def _add_text(self, text: str, deltas: list[Delta]) -> None:
        self._content.text(text)
        piece = self._text.add(text)
        if piece:
            deltas.append(TextDelta(0, piece))

    def _feed_call(self, node: Node, deltas: list[Delta]) -> None:
        node.object()
        _check_call_type(node)
        index = node.opt("index", int)
        call_id = node.opt("id", str)
        function = node.opt_node("function")
        if index is None:
            # Without an index, a fragment with an id starts a call; others continue the last one.
            starts = bool(call_id) or not self._calls
            index = max(self._calls, default=-1) + 1 if starts else next(reversed(self._calls))
        draft = self._calls.get(index)
        if draft is None:
            draft = self._calls[index] = _CallDraft(f"$.choices[0].delta.tool_calls[{index}]")
        new_id = new_name = None
        if call_id and draft.id is None:
            draft.id = new_id = valid_text(call_id, f"{node.path}.id")
        arguments = ""
        if function is not None:
            name = function.opt("name", str)
            if name and draft.name is None:
                draft.name = new_name = valid_text(name, f"{function.path}.name")
            fragment_text = function.opt("arguments", str)
            if fragment_text:
                arguments = draft.arguments.add(fragment_text)
        if new_id or new_name or arguments:
            deltas.append(ToolCallDelta(index, new_id, new_name, arguments))

    def finish(self) -> AssistantMessage:
        if self._finish_reason is None:
            raise ResponseError(
                "the stream ended without a finish_reason (cut off before its end)",
                path="$.choices[0].finish_reason",
            )
        content = self._content.parts("$.choices[0].delta.content")
        calls = [draft.build() for draft in self._calls.values()]
        return assemble(self._thinking.blocks(), [*content, *self._annotations], calls)

    def ended(self) -> bool:
        return self._finish_reason is not None

    def info(self) -> ReplyInfo:
        return ReplyInfo(self._finish_reason, self._usage, self._id, self._model)

    def partial(self) -> AssistantMessage | None:
        calls = [call for draft in self._calls.values() if (call := draft.complete()) is not None]
        return partial_reply(self._content.parts("", lenient=True), calls)
