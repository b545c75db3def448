"""OpenAI Responses API (base URL ``https://api.openai.com/v1``; path
``/responses``). Provider id ``openai-responses``; OpenAI's chat completions
are the ``openai`` adapter. Content parts and the reply-reading helpers are
shared with ``_chat``.

What OpenAI requires, and what thinkseal does, is in
docs/providers.md#openai-responses-api. In short:

- Each ``reasoning`` output item is kept in place as its summary (unsigned
  Text) and ``ThinkingBlock.Opaque("openai-responses", item)``; a reply with
  reasoning items is sealed and bound.
- Stateless replay (the default): ``store: false`` and ``include:
  ["reasoning.encrypted_content"]``, the whole history, a kept turn's
  reasoning items verbatim before the item that followed each, output item
  ids never sent.
- With ``store=True`` a stored response's reasoning items record the ids of
  the items after them (``FOLLOWING``, an Opaque member never sent), and a kept
  turn sends those items with their ids. ``previous_response_id`` sends only
  what follows the last assistant turn, after ``continuation_start`` checks
  the server's history is this conversation's (else ``ReplayError``).
- Replies and streams (``ResponsesStream``) are read from the final response,
  so a streamed reply equals the whole one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final

from .._blocks import ThinkingBlock
from .._content import Document, Image, Native
from .._conversation import Conversation
from .._errors import ReplayError, ResponseError, ValidationError
from .._memo import cached
from .._messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from .._replay import Replay
from .._reply import Delta, ReplyInfo, TextDelta, ThinkingDelta, ToolCallDelta, Usage
from .._tool import Tool
from ._base import Built, Provider, StreamParser
from ._chat import (
    PartWriter,
    Pieces,
    check_stream_options,
    count,
    data_url,
    image_url,
    make_call,
    partial_reply,
    raise_provider_error,
    stored_json,
    wire_content,
)
from ._connection import RESPONSES_REJECTIONS, Connection
from ._options import (
    BODY_FIELDS,
    check_choice,
    check_flag,
    check_number,
    check_object,
    frozen_options,
    response_format,
)
from ._response import Node, error_text, valid_text
from ._wire import dumps, splice, wire_messages

PROVIDER_ID = "openai-responses"
PATH = "/responses"
ENCRYPTED_CONTENT = "reasoning.encrypted_content"
# The ``include`` values of the openai SDK's ``ResponseIncludable``.
INCLUDABLE = (
    "file_search_call.results",
    "web_search_call.results",
    "web_search_call.action.sources",
    "message.input_image.image_url",
    "computer_call_output.output.image_url",
    "code_interpreter_call.outputs",
    ENCRYPTED_CONTENT,
    "message.output_text.logprobs",
)
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
REASONING_SUMMARIES = ("auto", "concise", "detailed")
REASONING_CONTEXTS = ("auto", "current_turn", "all_turns")
VERBOSITIES = ("low", "medium", "high")
MIN_OUTPUT_TOKENS = 16
# The call fields of a function_call item (``make_call``'s error paths).
CALL_FIELDS = ("call_id", "name", "arguments")
# The fields of an output message that its plain text stands for.
_PLAIN_MESSAGE = frozenset({"id", "type", "role", "status", "content"})
SUMMARY_SEPARATOR = "\n\n"
FOLLOWING = "thinkseal:following"

_RESERVED: Final[Mapping[str, str]] = MappingProxyType(
    {
        **BODY_FIELDS,
        "input": "the input items come from the conversation",
        "instructions": "use a SystemMessage (system prompts are part of the fingerprint)",
        "response_format": "use Conversation.response_format (it is part of the fingerprint)",
    }
)
_PLAIN_KEY = PROVIDER_ID


# -- content parts ---------------------------------------------------------------------


class Parts(PartWriter):
    """The Responses API's input content: ``input_text``, ``input_image`` and
    ``input_file``, in messages and in function call outputs alike."""

    text_type = "input_text"

    def text(self, text: str) -> dict[str, Any]:
        return {"type": "input_text", "text": text}

    def image(self, image: Image, where: str) -> dict[str, Any]:
        return {"type": "input_image", "image_url": image_url(image), "detail": "auto"}

    def document(self, document: Document, where: str) -> dict[str, Any]:
        if document.data is not None:
            name = document.title or "document.pdf"
            return {"type": "input_file", "filename": name, "file_data": data_url(document.media_type, document.data)}
        part: dict[str, Any] = {"type": "input_file", "file_url": document.url}
        if document.title:
            part["filename"] = document.title
        return part

    def fields(self, parts: list[dict[str, Any]], marked: bool, where: str) -> dict[str, Any]:
        if len(parts) == 1 and parts[0].get("type") == "input_text" and len(parts[0]) == 2:
            return {"content": parts[0]["text"]}
        return {"content": parts}


WRITER = Parts(PROVIDER_ID)


def plain_items(message: Message) -> list[dict[str, Any]]:
    """A system, user or tool message as its input item."""
    content = wire_content(message, WRITER)["content"]  # type: ignore[arg-type]
    if isinstance(message, ToolMessage):
        return [{"type": "function_call_output", "call_id": message.tool_call_id, "output": content}]
    assert isinstance(message, (SystemMessage, UserMessage))
    return [{"role": message.role, "content": content}]


# -- assistant turns ---------------------------------------------------------------------


def reasoning_item(block: ThinkingBlock.Opaque, where: str) -> tuple[dict[str, Any], list[str | None]]:
    """The reasoning item an Opaque block holds, and the ids of the items that
    followed it (its ``FOLLOWING`` member, which is thinkseal's and never sent;
    blocks kept before it was recorded have none)."""
    try:
        item = json.loads(block.data)
    except ValueError:
        item = None
    if not isinstance(item, dict):
        raise ValidationError(f"{where}: an {PROVIDER_ID} Opaque block must hold a JSON object", path=f"{where}.data")
    following = item.pop(FOLLOWING, [])
    if not isinstance(following, list) or not all(
        entry is None or (isinstance(entry, str) and entry.strip()) for entry in following
    ):
        raise ValidationError(
            f"{where}: the {FOLLOWING!r} member of an {PROVIDER_ID} Opaque block must be a list of item ids"
            " (non-blank strings) or nulls",
            path=f"{where}.data",
        )
    return item, following


def assistant_text(text: str, phase: object = None) -> dict[str, Any]:
    item: dict[str, Any] = {"role": "assistant", "content": text}
    if phase is not None:
        item["phase"] = phase
    return item


def part_items(part: object) -> list[dict[str, Any]]:
    """The input items of one non-thinking part of an assistant turn."""
    if isinstance(part, str):
        return [assistant_text(part)] if part else []
    if isinstance(part, ToolCall):
        return [{"type": "function_call", "call_id": part.id, "name": part.name, "arguments": part.arguments_json}]
    assert isinstance(part, Native)
    if part.provider != PROVIDER_ID:
        return [assistant_text(part.text)] if part.text else []
    value = part.value
    if value.get("type") == "message":
        # An output message goes back in the input form (no server item id): its text and phase.
        return [assistant_text(part.text, value.get("phase"))] if part.text else []
    return [value]


def output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}


def output_item(part: object, item_id: str) -> dict[str, Any] | None:
    """A part of a kept turn as the output item it came in, with that item's
    id (stored mode), or None where the part has no such form."""
    if isinstance(part, str):
        content = [output_text(part)]
        return {"type": "message", "role": "assistant", "id": item_id, "status": "completed", "content": content}
    if isinstance(part, ToolCall):
        call = {"type": "function_call", "id": item_id, "call_id": part.id, "name": part.name}
        return {**call, "arguments": part.arguments_json}
    if isinstance(part, Native) and part.provider == PROVIDER_ID and part.value.get("type") == "message":
        # The message as received (phase, annotations), its logprobs left out: they are the output's only.
        value = part.value
        content = [{k: v for k, v in c.items() if k != "logprobs"} for c in value.get("content") or ()]
        return {**value, "id": item_id, "content": content}
    return None


def _joins(items: list[dict[str, Any]], item_id: str) -> bool:
    """Whether the last item is the output message ``item_id``, to which a
    further text part of that message belongs."""
    return bool(items) and items[-1].get("type") == "message" and items[-1].get("id") == item_id


def assistant_items(message: AssistantMessage, stored: bool) -> list[dict[str, Any]]:
    """An as-sent assistant turn as input items, in its own order. Its reasoning
    items (present only when the turn is kept) go right before the item that
    follows each; one with no item right after it is not sent, nor, without
    server-side storage, one without its encrypted content. With server-side
    storage, the parts after a reasoning item go as the output items they came
    in, with the ids its block recorded (OpenAI looks a stored reasoning item's
    following item up by id)."""
    items: list[dict[str, Any]] = []
    pending: dict[str, Any] | None = None
    ids: Iterator[str | None] | None = None  # the recorded ids of the parts after the last reasoning item
    for i, part in enumerate(message.parts):
        if isinstance(part, ThinkingBlock):
            ids = None
            if isinstance(part, ThinkingBlock.Opaque) and part.provider == PROVIDER_ID:
                item, following = reasoning_item(part, f"AssistantMessage.parts[{i}]")
                pending = item if stored or item.get("encrypted_content") else None
                ids = iter(following) if stored else None
            continue
        item_id = next(ids, None) if ids is not None else None
        if item_id is not None and isinstance(part, str) and _joins(items, item_id):
            items[-1]["content"].append(output_text(part))
            continue
        as_output = output_item(part, item_id) if item_id is not None else None
        out = [as_output] if as_output is not None else part_items(part)
        if out and pending is not None:
            items.append(pending)
            pending = None
        items.extend(out)
    return items


def encoded_items(items: list[dict[str, Any]]) -> tuple[bytes, ...]:
    """Items as cached: their JSON bytes (later requests share them)."""
    return tuple(dumps(item) for item in items)


def message_items(message: Message, mode: str) -> tuple[bytes, ...]:
    """The JSON bytes of a message's input items, built once per message and mode."""
    if isinstance(message, AssistantMessage):
        return cached(message, mode, lambda: encoded_items(assistant_items(message, mode == _STORED)))
    key = _PLAIN_KEY if isinstance(getattr(message, "content", None), str) else f"{_PLAIN_KEY}:parts"
    return cached(message, key, lambda: encoded_items(plain_items(message)))


_STATELESS = f"{PROVIDER_ID}/stateless"
_STORED = f"{PROVIDER_ID}/stored"


def segment_for(mode: str) -> Callable[[Sequence[Message]], list[bytes]]:
    def segment(sent: Sequence[Message]) -> list[bytes]:
        raws: list[bytes] = []
        for message in sent:
            raws.extend(message_items(message, mode))
        return raws

    return segment


# -- request pieces ----------------------------------------------------------------------


def strict_schema(schema: Any) -> bool:
    """Whether strict mode takes ``schema``: every object schema has
    ``additionalProperties: false`` and requires each of its properties."""
    if isinstance(schema, Mapping):
        if schema.get("type") == "object" or "properties" in schema:
            properties = schema.get("properties", {})
            required = schema.get("required", [])
            if schema.get("additionalProperties") is not False or not isinstance(properties, Mapping):
                return False
            if not isinstance(required, list) or set(required) != set(properties):
                return False
        return all(strict_schema(value) for value in schema.values())
    if isinstance(schema, list):
        return all(strict_schema(value) for value in schema)
    return True


def tool_wire(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "strict": strict_schema(tool.parameters),
    }


def text_format(fmt: Mapping[str, Any]) -> dict[str, Any]:
    """A chat-shaped ``response_format`` as the Responses ``text.format``."""
    if fmt["type"] == "json_schema":
        return {"type": "json_schema", **fmt["json_schema"]}
    return {"type": fmt["type"]}


def check_options(options: Mapping[str, Any], stream: bool) -> dict[str, Any]:
    checked = frozen_options(options, _RESERVED)
    reasoning = check_object(checked, "reasoning")
    if reasoning is not None:
        check_choice(reasoning.get("effort"), REASONING_EFFORTS, "reasoning.effort")
        check_choice(reasoning.get("summary"), REASONING_SUMMARIES, "reasoning.summary")
        check_choice(reasoning.get("generate_summary"), REASONING_SUMMARIES, "reasoning.generate_summary")
        check_choice(reasoning.get("context"), REASONING_CONTEXTS, "reasoning.context")
    text = check_object(checked, "text")
    if text is not None:
        if text.get("format") is not None:
            raise ValidationError(
                "text.format: set by thinkseal, not an option; use Conversation.response_format"
                " (it is part of the fingerprint)",
                path="text.format",
            )
        check_choice(text.get("verbosity"), VERBOSITIES, "text.verbosity")
    limit = checked.get("max_output_tokens")
    check_number(checked, "max_output_tokens", integer=True)
    if limit is not None and limit < MIN_OUTPUT_TOKENS:
        raise ValidationError(
            f"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= {MIN_OUTPUT_TOKENS},"
            f" but got {limit} instead.",
            path="max_output_tokens",
        )
    check_number(checked, "temperature", 0, 2)
    check_number(checked, "top_p", 0, 1)
    check_number(checked, "top_logprobs", 0, 20, integer=True)
    check_number(checked, "max_tool_calls", 1, integer=True)
    check_choice(checked.get("truncation"), ("auto", "disabled"), "truncation")
    for flag in ("store", "background", "parallel_tool_calls"):
        check_flag(checked.get(flag), flag)
    include = checked.get("include")
    if include is not None:
        if not isinstance(include, list):
            raise ValidationError(f"include: expected a list, got {type(include).__name__}", path="include")
        for i, value in enumerate(include):
            check_choice(value, INCLUDABLE, f"include[{i}]")
    check_stream_options(checked, stream)
    previous = checked.get("previous_response_id")
    if previous is not None and (not isinstance(previous, str) or not previous.strip()):
        raise ValidationError("previous_response_id: expected a non-blank string", path="previous_response_id")
    if checked.get("store") is False and (previous is not None or checked.get("background")):
        field = "previous_response_id" if previous is not None else "background"
        raise ValidationError(
            f"{field}: needs the responses stored server-side; it cannot be used with store=False", path=field
        )
    if checked.get("background") and checked.get("store") is not True and previous is None:
        raise ValidationError(
            "background: needs store=True (OpenAI keeps a background response server-side)", path="background"
        )
    return checked


def continuation_start(conversation: Conversation, replay: Replay) -> int:
    """With ``previous_response_id``: the index of the first message after the
    last assistant turn, once the server's copy of the history is known to be
    this conversation's (see the module docstring)."""
    decision = replay.last_turn()
    if decision is None:
        raise ValidationError(
            "previous_response_id: the conversation has no assistant turn for the previous response to be",
            path="previous_response_id",
        )
    last, reason = decision.index, decision.reason
    if last == len(conversation) - 1:
        raise ValidationError(
            "previous_response_id: nothing to send after the last assistant turn", path="previous_response_id"
        )
    if reason not in ("kept", "no-sealed-thinking") or len(decision.sent.tool_calls) != len(decision.turn.tool_calls):
        raise ReplayError(
            f"previous_response_id: the last assistant turn (messages[{last}]) is {reason}: the history OpenAI"
            " stored for the previous response is not this conversation's (edited, pruned, another model or"
            " account, or a tool call without its result). Send the whole history (leave out"
            " previous_response_id), or add the missing tool results.",
            index=last,
            reason=reason,
        )
    return last + 1


# -- replies -------------------------------------------------------------------------------


def _texts(node: Node, key: str, kind: str) -> list[str]:
    """The ``text`` of each ``kind`` part in the list field ``key`` (required when ``kind`` is summary_text)."""
    texts: list[str] = []
    for part in node.items(key, required=kind == "summary_text"):
        part.object()
        if part.opt("type", str) in (kind, None):
            texts.append(part.text("text"))
    return texts


def reasoning_parts(node: Node) -> list[ThinkingBlock]:
    """A reasoning item: its summary (or reasoning text) as unsigned text, then the item itself."""
    item_id = node.get("id", str)
    if not item_id.strip():
        raise ResponseError("expected a non-blank string", path=f"{node.path}.id")
    texts = _texts(node, "summary", "summary_text") or _texts(node, "content", "reasoning_text")
    encrypted = node.opt("encrypted_content", str)
    if encrypted is not None:
        valid_text(encrypted, f"{node.path}.encrypted_content")
    text = SUMMARY_SEPARATOR.join(t for t in texts if t)
    blocks: list[ThinkingBlock] = [ThinkingBlock.Text(text)] if text else []
    # FOLLOWING is thinkseal's own member (read_reply writes it): never taken from a response.
    item = Node({k: v for k, v in node.value.items() if k != FOLLOWING}, node.path)
    blocks.append(ThinkingBlock.Opaque(PROVIDER_ID, stored_json(item)))
    return blocks


def message_parts(node: Node) -> list[str | Native]:
    """An assistant output message: its text, or the whole message as a native
    block when it carries more than plain text."""
    plain = all(key in _PLAIN_MESSAGE for key, value in node.value.items() if value is not None)
    texts: list[str] = []
    for part in node.items("content"):
        part.object()
        kind = part.opt("type", str)
        if kind == "output_text":
            texts.append(part.text("text"))
            plain = plain and not part.opt("annotations", list) and not part.opt("logprobs", list)
        elif kind == "refusal":
            texts.append(part.text("refusal"))
            plain = False
        else:
            plain = False
    if plain:
        return [t for t in texts if t]
    text = "".join(texts)
    return [Native(PROVIDER_ID, stored_json(node), text or None)]


def item_parts(node: Node) -> list[str | ToolCall | ThinkingBlock | Native]:
    node.object()
    kind = node.opt("type", str)
    if kind == "reasoning":
        return [*reasoning_parts(node)]
    if kind == "function_call":
        call = make_call(
            node.get("call_id", str), node.get("name", str), node.get("arguments", str), node.path, CALL_FIELDS
        )
        return [call]
    if kind == "message" and node.opt("role", str, "assistant") == "assistant":
        return [*message_parts(node)]
    return [Native(PROVIDER_ID, stored_json(node))]  # an item type thinkseal does not read, kept in place


def read_reply(response: Mapping[str, Any]) -> AssistantMessage:
    """The reply's items as parts. A stored response's reasoning items also
    record the ids of the message and function call items after each (each
    part's item id, ``FOLLOWING``): OpenAI looks a stored reasoning item's
    following item up by its id, so a kept turn goes back with them in stored
    mode. A response with ``store: false`` records none: they name nothing."""
    root = Node(response)
    raise_provider_error(root)
    stored = root.value.get("store") is not False
    parts: list[Any] = []
    reasoning: int | None = None  # where the last reasoning item's Opaque block stands in parts
    following: list[str | None] = []
    for node in root.items("output"):
        item = item_parts(node)
        kind = node.value.get("type")
        if kind == "reasoning":
            _record_following(parts, reasoning, following, stored)
            reasoning, following = len(parts) + len(item) - 1, []
        else:
            item_id = node.value.get("id") if kind in _FOLLOWERS else None
            following.extend([item_id if isinstance(item_id, str) and item_id.strip() else None] * len(item))
        parts.extend(item)
    _record_following(parts, reasoning, following, stored)
    return AssistantMessage.from_parts(parts)


# The output items a stored reasoning item is followed by, by id, that thinkseal sends back itself.
_FOLLOWERS = frozenset({"message", "function_call"})


def _record_following(parts: list[Any], at: int | None, following: list[str | None], stored: bool) -> None:
    """Put ``following`` (the ids of the parts after the reasoning item whose
    Opaque block is ``parts[at]``) into that block."""
    while following and following[-1] is None:
        following.pop()
    if not stored or at is None or not following:
        return
    block = parts[at]
    item = {**json.loads(block.data), FOLLOWING: following}
    data = json.dumps(item, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    parts[at] = ThinkingBlock.Opaque(PROVIDER_ID, data)


def read_info(response: Mapping[str, Any]) -> ReplyInfo:
    root = Node(response)
    status = root.opt("status", str)
    details = root.opt_node("incomplete_details")
    reason = details.opt("reason", str) if details is not None else None
    usage = root.opt_node("usage")
    input_details = usage.opt_node("input_tokens_details") if usage is not None else None
    output_details = usage.opt_node("output_tokens_details") if usage is not None else None
    return ReplyInfo(
        reason if status == "incomplete" and reason else status,
        Usage(
            input_tokens=count(usage, "input_tokens"),
            output_tokens=count(usage, "output_tokens"),
            cache_read_tokens=count(input_details, "cached_tokens"),
            cache_write_tokens=count(input_details, "cache_write_tokens"),
            reasoning_tokens=count(output_details, "reasoning_tokens"),
        ),
        root.opt("id", str),
        root.opt("model", str),
    )


# -- streaming ---------------------------------------------------------------------------------

_FINAL_EVENTS = ("response.completed", "response.incomplete")
# The events that carry the whole response (a snapshot, or the final one).
_RESPONSE_EVENTS = frozenset(
    {"response.created", "response.in_progress", "response.queued", "response.failed", *_FINAL_EVENTS}
)


class ResponsesStream(StreamParser):
    """Server-sent events of one response: typed deltas as they come; the reply
    from the final event's response, so a stream gives what ``parse`` gives."""

    __slots__ = ("_added", "_arguments", "_done", "_final", "_id", "_model", "_summary", "_texts")

    def __init__(self) -> None:
        self._final: dict[str, Any] | None = None
        self._added: dict[int, Mapping[str, Any]] = {}  # output_index -> item as added
        self._done: dict[int, Mapping[str, Any]] = {}  # output_index -> item as done
        self._texts: dict[int, Pieces] = {}
        self._arguments: dict[int, Pieces] = {}
        self._summary: dict[int, int] = {}  # output_index -> the summary part its text is in
        self._id: str | None = None
        self._model: str | None = None

    def feed(self, event: Mapping[str, Any]) -> list[Delta]:
        root = Node(event).object()
        kind = root.opt("type", str)
        if kind == "error":
            error = root.opt_node("error")
            source = error if error is not None else root
            message = source.value.get("message")
            raise ResponseError(f"the provider reported an error: {error_text(message)}", path=f"{source.path}.message")
        if kind in _RESPONSE_EVENTS:
            return self._feed_response(kind, root.node("response"))
        index = root.opt("output_index", int)
        if index is None:
            return []
        if kind == "response.output_item.added":
            item = root.node("item").object()
            self._added[index] = item.value
            if item.opt("type", str) == "function_call":
                call_id, name = item.opt("call_id", str), item.opt("name", str)
                arguments = self._argument_pieces(index).add(item.opt("arguments", str, ""))
                return [ToolCallDelta(index, call_id or None, name or None, arguments)]
            return []
        if kind == "response.output_item.done":
            self._done[index] = root.node("item").object().value
            return []
        if kind == "response.output_text.delta":
            piece = self._text_pieces(index, root.path).add(root.get("delta", str))
            return [TextDelta(index, piece)] if piece else []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return self._thinking(index, root)
        if kind == "response.function_call_arguments.delta":
            piece = self._argument_pieces(index).add(root.get("delta", str))
            return [ToolCallDelta(index, None, None, piece)] if piece else []
        return []

    def _feed_response(self, kind: str, response: Node) -> list[Delta]:
        response.object()
        self._id = response.opt("id", str) or self._id
        self._model = response.opt("model", str) or self._model
        if kind == "response.failed" or response.has("error"):
            error = response.value.get("error")
            message = error.get("message") if isinstance(error, Mapping) else error
            raise ResponseError(f"the provider reported an error: {error_text(message)}", path=f"{response.path}.error")
        if kind in _FINAL_EVENTS:
            self._final = dict(response.value)
        return []

    def _thinking(self, index: int, root: Node) -> list[Delta]:
        delta = root.get("delta", str)
        if not delta:
            return []
        deltas: list[Delta] = []
        # The part of the summary (or of the reasoning text) the delta belongs to.
        part = root.opt("summary_index", int, root.opt("content_index", int, 0))
        previous = self._summary.get(index)
        if previous is not None and previous != part:
            deltas.append(ThinkingDelta(index, SUMMARY_SEPARATOR))  # the summary parts' join
        self._summary[index] = part
        deltas.append(ThinkingDelta(index, delta))
        return deltas

    def _text_pieces(self, index: int, path: str) -> Pieces:
        pieces = self._texts.get(index)
        if pieces is None:
            pieces = self._texts[index] = Pieces(f"{path}.delta")
        return pieces

    def _argument_pieces(self, index: int) -> Pieces:
        pieces = self._arguments.get(index)
        if pieces is None:
            pieces = self._arguments[index] = Pieces(f"$.output[{index}].arguments")
        return pieces

    def _response(self) -> dict[str, Any]:
        final = self._final
        if final is None:
            raise ResponseError("the stream ended without response.completed (cut off before its end)", path="$.type")
        if not final.get("output") and self._done:
            final = {**final, "output": [self._done[i] for i in sorted(self._done)]}
        return final

    def finish(self) -> AssistantMessage:
        return read_reply(self._response())

    def ended(self) -> bool:
        return self._final is not None

    def info(self) -> ReplyInfo:
        if self._final is not None:
            return read_info(self._response())
        return ReplyInfo(None, Usage(), self._id, self._model)

    def partial(self) -> AssistantMessage | None:
        content: list[str | Native] = []
        calls: list[ToolCall] = []
        for index in sorted({*self._added, *self._texts}):
            item = self._done.get(index) or self._added.get(index) or {}
            if item.get("type") == "function_call":
                call = self._complete_call(index, item)
                if call is not None:
                    calls.append(call)
            elif index in self._texts:
                text = self._texts[index].partial()
                if text:
                    content.append(text)
        return partial_reply(content, calls)

    def _complete_call(self, index: int, item: Mapping[str, Any]) -> ToolCall | None:
        done = index in self._done
        arguments = item.get("arguments") if done else self._argument_pieces(index).partial()
        if not isinstance(arguments, str) or not arguments.strip():
            return None
        try:
            return make_call(item.get("call_id"), item.get("name"), arguments, f"$.output[{index}]", CALL_FIELDS)
        except ResponseError:
            return None


# -- the adapter ----------------------------------------------------------------------------------


class Adapter(Provider):
    id = PROVIDER_ID
    connection = Connection(
        "https://api.openai.com/v1",
        "bearer",
        key_env=("OPENAI_API_KEY",),
        base_url_env=("OPENAI_BASE_URL",),
        rejections=RESPONSES_REJECTIONS,
    )
    response_formats: ClassVar[frozenset[str]] = frozenset({"text", "json_object", "json_schema"})

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        checked = check_options(options, stream)
        previous = checked.get("previous_response_id")
        server_side = previous is not None or checked.get("store") is True
        mode = _STORED if server_side else _STATELESS
        encoded: Sequence[bytes]
        if previous is not None:
            start = continuation_start(conversation, replay)
            encoded = segment_for(mode)(replay.sent_messages(start, replay.total))
        else:
            encoded = wire_messages(replay, mode, segment_for(mode))
        fmt = response_format(conversation.response_format, self.id, self.response_formats, needs=("name", "schema"))
        body: dict[str, Any] = {"model": model, "input": encoded}
        if conversation.tools:
            body["tools"] = [tool_wire(t) for t in conversation.tools]
        text = dict(checked.pop("text", None) or {})
        if fmt is not None:
            text["format"] = text_format(fmt)
        if text:
            body["text"] = text
        body.update(checked)
        if not server_side:
            # Stateless replay: nothing stored, reasoning returned encrypted to come back in the next request.
            body.setdefault("store", False)
            include = list(checked.get("include") or ())
            if ENCRYPTED_CONTENT not in include:
                body["include"] = [*include, ENCRYPTED_CONTENT]
        if stream:
            body["stream"] = True
        return Built(body, splice(body, "input", encoded), PATH, {})

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        return read_reply(response)

    def reply_info(self, response: Mapping[str, Any]) -> ReplyInfo:
        return read_info(response)

    def new_stream(self) -> StreamParser:
        return ResponsesStream()
