"""The OpenAI chat-completions wire format, shared by the openrouter, deepseek
and zai adapters: request messages, tools, response format, option checks,
response parsing and the merging of streamed chunks.

Each adapter subclasses ``ChatProvider`` and states only what differs: where
its reasoning lives in a reply, how it goes back on assistant messages, which
options and response formats it accepts. Mistral and Ollama, whose tool results
name the tool they answer, build their messages with ``named_tool_messages``
and share the message pieces below.

What every chat-completions provider requires, and what thinkseal does:

- Path ``/chat/completions`` relative to the provider's documented base URL.
- ``messages``: system messages stay in place as ``{"role": "system"}``, with one
  exception: OpenAI's rule that an assistant message with ``tool_calls`` is
  followed directly by the tool messages answering each call. A system message
  standing inside that run of tool results therefore goes out right after the run.
- Assistant turns: ``content`` is the text, or ``null`` when the turn has only
  tool calls; ``tool_calls`` carry their arguments as JSON text (RFC 8785 form,
  so a turn whose fingerprint is unchanged is sent with unchanged bytes). A turn
  left with no text and no tool calls (only thinking, or every call unanswered)
  is not sent: chat-completions has no way to carry it.
- Tool results are ``{"role": "tool", "tool_call_id", "content"}``. The format
  has no error flag, so ``is_error`` results are sent with ``TOOL_ERROR_PREFIX``
  before their content. Pairing itself (unanswered calls dropped, stray results
  sent as user text) is done by the replay decision before the adapter runs.
- ``tools`` become ``[{"type": "function", "function": {name, description, parameters}}]``;
  the response format passes through in OpenAI's shape where the provider takes it.
- ``stream=True`` adds ``"stream": true``; ``stream_options`` is accepted only then.
- Replies: ``choices[0].message`` (``content``, ``tool_calls``, the provider's
  reasoning fields); empty content counts as no text. Streams: ``choices[0].delta``
  fragments, tool calls merged by ``index`` (id and name from the first fragment
  that has them, arguments concatenated); a stream without a ``finish_reason``
  was cut off and raises ``ResponseError`` at ``finish``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Any, ClassVar, Final, Generic, Protocol, TypeVar

from .._blocks import ThinkingBlock
from .._conversation import Conversation
from .._errors import ResponseError, ThinksealError, ValidationError
from .._messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage
from .._replay import Replay
from .._tool import Tool
from ._base import Built, Provider, StreamParser
from ._options import BODY_FIELDS, check_choice, check_object, frozen_options, response_format
from ._response import Node, parse_arguments, valid_text, wrap_errors
from ._wire import fragment, splice, wire_messages

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

_PLAIN_KEY = "chat"  # system, user and tool messages look alike on every chat provider


# -- option checks -------------------------------------------------------------


def check_thinking_type(options: Mapping[str, Any], *, required: bool) -> Mapping[str, Any] | None:
    """The ``thinking`` option of DeepSeek and Z.ai: ``{"type": "enabled" | "disabled", ...}``."""
    thinking = check_object(options, "thinking")
    if thinking is not None:
        if required and "type" not in thinking:
            raise ValidationError('thinking.type: required ("enabled" or "disabled")', path="thinking.type")
        check_choice(thinking.get("type"), ("enabled", "disabled"), "thinking.type")
    return thinking


# -- request pieces ----------------------------------------------------------------


def tool_wire(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def chat_body(model: str, messages: list[Any], tools: Sequence[Tool], *fields: Mapping[str, Any]) -> dict[str, Any]:
    """A request body in the chat formats' field order: ``model``, ``messages``,
    ``tools`` (when the conversation has some), then each of ``fields`` in turn."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body["tools"] = [tool_wire(t) for t in tools]
    for more in fields:
        body.update(more)
    return body


def call_wire(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments_json}}


def tool_text(message: ToolMessage) -> str:
    """A tool result's content as sent: the format has no error flag, so an
    ``is_error`` result carries ``TOOL_ERROR_PREFIX``."""
    return TOOL_ERROR_PREFIX + message.content if message.is_error else message.content


def plain_wire(message: Message) -> dict[str, Any]:
    """A system, user or tool message."""
    if isinstance(message, ToolMessage):
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": tool_text(message)}
    return {"role": message.role, "content": message.content}  # type: ignore[attr-defined]


def assistant_wire(message: AssistantMessage, reasoning: Mapping[str, Any]) -> dict[str, Any]:
    """An assistant message with the provider's ``reasoning`` fields after its content."""
    wire: dict[str, Any] = {"role": "assistant", "content": message.content_opt}
    wire.update(reasoning)
    if message.tool_calls:
        wire["tool_calls"] = [call_wire(c) for c in message.tool_calls]
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
    assistant_wire: Callable[[AssistantMessage], dict[str, Any]],
    tool_wire: Callable[[ToolMessage, str], dict[str, Any]],
) -> tuple[list[Any], list[bytes]]:
    """The wire messages of ``sent`` and their cached JSON bytes, for a format
    whose tool results name the tool they answer (Mistral, Ollama):
    ``tool_wire(message, name)`` gets the name of the call a result answers.
    System and user messages go out as ``plain_wire``. ``key`` names the
    format in the fragment cache."""
    objects: list[Any] = []
    raws: list[bytes] = []
    names: dict[str, str] = {}  # call id -> tool name, for the turn the tool results answer
    for message in sent:
        if isinstance(message, AssistantMessage):
            names = {c.id: c.name for c in message.tool_calls}
            obj, raw = fragment(message, key, partial(assistant_wire, message))
        elif isinstance(message, ToolMessage):
            # Pairing guarantees a tool message still here answers a call of the turn before it.
            name = names[message.tool_call_id]
            obj, raw = fragment(message, f"{key}:tool:{name}", partial(tool_wire, message, name))
        else:
            obj, raw = fragment(message, key, partial(plain_wire, message))  # system or user
        objects.append(obj)
        raws.append(raw)
    return objects, raws


# -- the adapter base ----------------------------------------------------------------


class ChatProvider(Provider):
    """A chat-completions adapter. Subclasses set ``response_formats`` and
    override the hooks below; the rest of the format is shared."""

    # The ``response_format`` types the provider documents.
    response_formats: ClassVar[frozenset[str]] = frozenset({"text", "json_object", "json_schema"})

    # -- hooks -------------------------------------------------------------------

    def validate_options(self, options: Mapping[str, Any], stream: bool) -> None:
        """Check the provider's documented option rules (values already JSON)."""

    def shape(self, conversation: Conversation) -> str:
        """The fragment-cache key of assistant turns in this request: the provider
        id plus anything in the request that changes how a turn is written.
        Decided from the request context only, so wire forms can be shared
        between requests (``providers._wire.wire_messages``)."""
        return self.id

    def reasoning_fields(self, message: AssistantMessage, shape: str) -> dict[str, Any]:
        """The reasoning fields a sent assistant turn carries."""
        raise NotImplementedError

    def complete_body(self, body: dict[str, Any], options: Mapping[str, Any]) -> None:
        """Last changes to the body once its messages are known (in place)."""

    def read_thinking(self, message: Node) -> list[ThinkingBlock]:
        """The thinking blocks of a reply's ``message`` object."""
        raise NotImplementedError

    def thinking_deltas(self) -> ThinkingDeltas:
        """An accumulator of the thinking fragments of streamed deltas."""
        raise NotImplementedError

    # -- Provider -----------------------------------------------------------------

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        checked = self._check_options(options, stream)
        shape = self.shape(conversation)

        def segment(sent: Sequence[Message]) -> tuple[list[Any], list[bytes]]:
            pairs = [self._fragment(message, shape) for message in in_wire_order(sent)]
            return [value for value, _ in pairs], [data for _, data in pairs]

        wire, encoded = wire_messages(replay, shape, segment, goes_out)
        # The response format passes through in OpenAI's shape, where the provider takes its type.
        fmt = response_format(conversation.response_format, self.id, self.response_formats)
        body = chat_body(model, wire, conversation.tools, {} if fmt is None else {"response_format": fmt}, checked)
        if stream:
            body["stream"] = True
        self.complete_body(body, checked)
        return Built(body, splice(body, "messages", encoded), PATH, {})

    def _fragment(self, message: Message, shape: str) -> tuple[Any, bytes]:
        if isinstance(message, AssistantMessage):
            return fragment(message, shape, lambda: assistant_wire(message, self.reasoning_fields(message, shape)))
        return fragment(message, _PLAIN_KEY, lambda: plain_wire(message))

    def _check_options(self, options: Mapping[str, Any], stream: bool) -> dict[str, Any]:
        checked = frozen_options(options, _RESERVED)
        if checked.get("stream_options") is not None:
            if not stream:
                raise ValidationError(
                    "stream_options: only valid for a streaming request (prepare(..., stream=True))",
                    path="stream_options",
                )
            check_object(checked, "stream_options")
        self.validate_options(checked, stream)
        return checked

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        root = Node(response)
        raise_provider_error(root)
        if not root.get("choices", list):
            raise ResponseError("expected at least one choice", path="$.choices")
        message = root.child("choices").child(0).object().node("message")
        calls = [read_call(node) for node in message.items("tool_calls", required=False)]
        return assemble(self.read_thinking(message), read_content(message), calls)

    def new_stream(self) -> StreamParser:
        return ChatStream(self.thinking_deltas())


# -- replies ---------------------------------------------------------------------------


def raise_provider_error(root: Node) -> None:
    """A body that reports an error instead of a completion (OpenRouter streams
    one mid-stream) is a ``ResponseError`` at ``$.error``."""
    root.object()
    error = root.value.get("error")
    if error is None:
        return
    message = error.get("message") if isinstance(error, Mapping) else error
    raise ResponseError(f"the provider reported an error: {message}", path="$.error")


def read_content(message: Node) -> str | None:
    text = message.opt("content", str)
    return valid_text(text, f"{message.path}.content") if text else None


def reasoning_text(message: Node, field: str) -> list[ThinkingBlock]:
    """One unsigned Text block from the string field ``field``, if not empty."""
    text = message.opt(field, str)
    return [ThinkingBlock.Text(valid_text(text, f"{message.path}.{field}"))] if text else []


def _check_call_type(node: Node) -> None:
    kind = node.opt("type", str)
    if kind is not None and kind != "function":
        raise ResponseError(f"unknown tool call type {kind!r}", path=f"{node.path}.type")


def make_call(call_id: object, name: object, arguments: object, path: str) -> ToolCall:
    """A ToolCall from response values, every failure a ``ResponseError`` at its path."""
    for value, field in ((call_id, "id"), (name, "function.name")):
        if not isinstance(value, str) or not value.strip():
            raise ResponseError("expected a non-blank string", path=f"{path}.{field}")
        valid_text(value, f"{path}.{field}")
    args = parse_arguments(arguments, f"{path}.function.arguments")
    try:
        return ToolCall(call_id, name, args)  # type: ignore[arg-type]
    except ThinksealError as exc:
        raise wrap_errors(f"{path}.function.arguments", exc) from None


def read_call(node: Node) -> ToolCall:
    node.object()
    _check_call_type(node)
    function = node.node("function")
    return make_call(
        node.get("id", str), function.get("name", str), function.get("arguments", (str, Mapping)), node.path
    )


def assemble(thinking: Sequence[ThinkingBlock], content: str | None, calls: Sequence[ToolCall]) -> AssistantMessage:
    """The reply in the canonical layout: thinking, text, tool calls."""
    return AssistantMessage(content, calls, thinking)


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


# -- streaming ----------------------------------------------------------------------------


class ThinkingDeltas(Protocol):
    """Collects the thinking fragments of streamed deltas."""

    def feed(self, delta: Node) -> None: ...

    def blocks(self) -> list[ThinkingBlock]: ...


class TextDeltas:
    """Reasoning streamed as string fragments of one delta field (``reasoning_content``)."""

    __slots__ = ("_field", "_parts")

    def __init__(self, field: str) -> None:
        self._field = field
        self._parts: list[str] = []

    def feed(self, delta: Node) -> None:
        text = delta.opt(self._field, str)
        if text:
            self._parts.append(text)

    def blocks(self) -> list[ThinkingBlock]:
        text = join_text(self._parts, f"$.choices[0].delta.{self._field}")
        return [ThinkingBlock.Text(text)] if text else []


class Gathering(Protocol):
    """A reply being gathered from a whole response or from streamed events."""

    def message(self) -> AssistantMessage: ...


G = TypeVar("G", bound=Gathering)


class ReplyStream(StreamParser, Generic[G]):
    """A streamed reply gathered into one ``Gathering`` until the event that
    ends the stream (Mistral, Ollama): ``feed`` sets ``_ended``; ``cut_off`` is
    the error (message, path) of a stream that stopped before it."""

    cut_off: ClassVar[tuple[str, str]]

    def __init__(self, reply: G) -> None:
        self._reply = reply
        self._ended = False

    def finish(self) -> AssistantMessage:
        if not self._ended:
            message, path = self.cut_off
            raise ResponseError(message, path=path)
        return self._reply.message()


class _CallDraft:
    __slots__ = ("arguments", "id", "name", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []

    def build(self) -> ToolCall:
        return make_call(self.id, self.name, join_text(self.arguments, f"{self.path}.function.arguments"), self.path)


class ChatStream(StreamParser):
    """Merges ``chat.completion.chunk`` events of choice 0 into one reply."""

    __slots__ = ("_calls", "_content", "_finish_reason", "_thinking")

    def __init__(self, thinking: ThinkingDeltas) -> None:
        self._thinking = thinking
        self._content: list[str] = []
        self._calls: dict[int, _CallDraft] = {}
        self._finish_reason: str | None = None

    def feed(self, event: Mapping[str, Any]) -> None:
        root = Node(event)
        raise_provider_error(root)
        for choice in root.items("choices", required=False):
            choice.object()
            if choice.opt("index", int, 0) != 0:
                continue  # thinkseal reads the first choice only, as receive does
            delta = choice.opt_node("delta")
            if delta is not None:
                self._feed_delta(delta)
            reason = choice.opt("finish_reason", str)
            if reason:
                self._finish_reason = reason

    def _feed_delta(self, delta: Node) -> None:
        self._thinking.feed(delta)
        text = delta.opt("content", str)
        if text:
            self._content.append(text)
        for fragment_node in delta.items("tool_calls", required=False):
            self._feed_call(fragment_node)

    def _feed_call(self, node: Node) -> None:
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
        if call_id and draft.id is None:
            draft.id = call_id
        if function is not None:
            name = function.opt("name", str)
            if name and draft.name is None:
                draft.name = name
            arguments = function.opt("arguments", str)
            if arguments:
                draft.arguments.append(arguments)

    def finish(self) -> AssistantMessage:
        if self._finish_reason is None:
            raise ResponseError(
                "the stream ended without a finish_reason (cut off before its end)",
                path="$.choices[0].finish_reason",
            )
        content = join_text(self._content, "$.choices[0].delta.content") or None
        calls = [draft.build() for draft in self._calls.values()]
        return assemble(self._thinking.blocks(), content, calls)
