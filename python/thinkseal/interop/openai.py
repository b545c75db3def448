"""OpenAI: chat-completions messages and Responses input items to a
``Conversation`` and back, and bridges that send a ``PreparedRequest`` through
the official ``openai`` SDK client.

Chat completions (``import_chat`` / ``export_chat``):

- Messages: ``system`` (also ``developer``, imported as a system message),
  ``user``, ``assistant``, ``tool``; string or content-part content (``text``,
  ``image_url`` as a URL or a ``data:`` URL, ``file`` with a PDF ``file_data``
  data URL; any other part kept verbatim as ``Native("openai", part)``).
  ``cache_control`` on a part (OpenRouter's and Anthropic-compatible
  servers' extension) is a ``CacheBreakpoint`` after it.
- Reasoning: ``reasoning_content`` (DeepSeek, Z.ai, vLLM, SGLang) or
  ``reasoning`` (OpenRouter, Groq) is an unsigned ``ThinkingBlock.Text``;
  OpenRouter's ``reasoning_details`` items are ``Opaque("openrouter", item)``,
  exactly as the openrouter adapter keeps them. ``export_chat`` writes the
  text under ``reasoning_field`` (``"reasoning_content"`` by default).
- The chat format has no tool-error flag: an ``is_error`` result goes out
  after ``"[tool error] "`` (as every chat adapter sends it), and a tool
  message starting with that prefix imports as an error. A tool message's
  ``name`` (LangChain writes the tool's) is taken when it is the name of the
  call it answers, and not written back.

Responses (``import_responses`` / ``export_responses``):

- Input items: role messages (``input_text``, ``input_image``, ``input_file``),
  ``function_call``, ``function_call_output`` and ``reasoning`` items; a
  reasoning item is its summary as unsigned text followed by
  ``Opaque("openai-responses", item)`` (compact JSON, sorted keys, no nulls),
  exactly as the openai-responses adapter keeps a received one, so an imported
  history replays through that adapter once rebound. Output items pasted back
  as input (``input += response.output``) are read too; their server item ids
  (``fc_…``, ``msg_…``) and ``status`` are not kept, as the adapter does not
  send them back. Any other item is kept as ``Native("openai-responses", item)``.

What a format cannot hold raises ``ValidationError`` naming the message index
and part.

Bridges for the official ``openai`` client: ``send(client, req) -> Reply``,
``await send_async(client, req)``, and ``stream`` / ``stream_async`` yielding
the typed deltas and then the ``Reply``; ``req.content`` goes out byte for
byte through the client's ``post``, and the SDK's own exceptions pass through.

Imported thinking is never bound: ``Conversation.rebind(origin)`` vouches for it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

from .._blocks import ThinkingBlock
from .._content import IMAGE_MEDIA_TYPES, CacheBreakpoint, ContentPart, Document, Image, Native
from .._conversation import Conversation
from .._errors import ValidationError
from .._messages import AssistantMessage, Message, Part, SystemMessage, ToolCall, ToolMessage, UserMessage
from .._reply import Delta, Reply
from .._tool import Tool
from ..providers import PreparedRequest
from ..providers.openai_responses import FOLLOWING
from . import _stainless
from ._common import (
    Obj,
    arguments,
    assistant,
    b64,
    b64decode,
    breakpoint_of,
    compact,
    data_url,
    expect,
    fail,
    items_of,
    json_value,
    made,
    native,
    refuse,
    shown,
)

if TYPE_CHECKING:
    from ..ledger import AsyncLedger, Ledger

__all__ = [
    "export_chat",
    "export_responses",
    "import_chat",
    "import_responses",
    "send",
    "send_async",
    "stream",
    "stream_async",
]

CHAT: Final = "openai"
RESPONSES: Final = "openai-responses"
OPENROUTER: Final = "openrouter"
TOOL_ERROR_PREFIX: Final = "[tool error] "
SUMMARY_SEPARATOR: Final = "\n\n"
_CHAT_NATIVES: Final = (CHAT, OPENROUTER)
_CHAT_TARGET: Final = "the chat-completions format"
_RESPONSES_TARGET: Final = "the Responses input format"
ReasoningField = Literal["reasoning_content", "reasoning"]


# -- shared --------------------------------------------------------------------------------


def _system_text(content: object, path: str, text_type: str) -> list[ContentPart] | str:
    """System content: a string, or text parts (with breakpoints, in chat)."""
    if isinstance(content, str):
        return content
    parts: list[ContentPart] = []
    for value, where in items_of(content, path):
        part = Obj(value, where)
        if part.text("type") != text_type or not part.only("type", "text", "cache_control"):
            raise fail(where, f"a system message holds {text_type} parts only")
        parts.append(part.text("text"))
        parts.extend(breakpoint_of(part))
    return parts


def _pdf(url: str, path: str) -> bytes | None:
    """The bytes of a canonical ``data:application/pdf;base64,`` URL, else None."""
    parsed = data_url(url)
    if parsed is None or parsed[0] != "application/pdf":
        return None
    raw = b64decode(parsed[1], path)
    return raw if raw and b64(raw) == parsed[1] else None


def _image(url: str, path: str) -> Image | None:
    """An image from a URL or a canonical data URL (None: kept as Native)."""
    parsed = data_url(url)
    if parsed is None:
        return None if url.startswith("data:") else made(path, Image, url=url)
    media, data = parsed
    raw = b64decode(data, path)
    return made(path, Image, raw, media) if media in IMAGE_MEDIA_TYPES and raw and b64(raw) == data else None


def _data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{b64(data)}"


def _error_content(content: list[ContentPart] | str, path: str) -> tuple[list[ContentPart] | str, bool]:
    """Tool content with the error prefix taken off, and whether it had one."""
    if isinstance(content, str):
        if content.startswith(TOOL_ERROR_PREFIX):
            return content[len(TOOL_ERROR_PREFIX) :], True
        return content, False
    if content and isinstance(content[0], str) and content[0].startswith(TOOL_ERROR_PREFIX):
        rest = content[0][len(TOOL_ERROR_PREFIX) :]
        return ([rest] if rest else []) + content[1:], True
    return content, False


def _error_text(message: ToolMessage, index: int, target: str) -> None:
    first = message.parts[0]
    if not message.is_error and isinstance(first, str) and first.startswith(TOOL_ERROR_PREFIX):
        raise refuse(
            index,
            ".content",
            f"a tool result that starts with {TOOL_ERROR_PREFIX!r} but is not an error",
            target,
            "the prefix marks errors there",
        )


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _conversation(messages: list[Message], tools: list[Tool], fmt: Mapping[str, Any] | None) -> Conversation:
    return made("messages", Conversation, messages, tools, fmt)


def _check(conversation: object) -> Conversation:
    if not isinstance(conversation, Conversation):
        raise ValidationError("conversation: expected a Conversation", path="conversation")
    return conversation


# -- chat: import ---------------------------------------------------------------------------


def import_chat(
    messages: Sequence[Mapping[str, Any]],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    response_format: Mapping[str, Any] | None = None,
) -> Conversation:
    """A conversation from OpenAI chat-completions messages (the dicts
    ``client.chat.completions.create`` takes, or a reply's
    ``message.model_dump()``), its ``tools`` and ``response_format``."""
    out: list[Message] = []
    calls: dict[str, str] = {}  # the name of each tool call so far, by id
    for value, path in items_of(messages, "messages"):
        node = Obj(value, path)
        message = _chat_message(node)
        if isinstance(message, AssistantMessage):
            calls.update((call.id, call.name) for call in message.tool_calls)
        elif isinstance(message, ToolMessage) and node.has("name"):
            # LangChain writes the tool's name on its result; thinkseal has it from the call.
            name, called = node.text("name"), calls.get(message.tool_call_id)
            if called is not None and name != called:
                raise fail(node.at("name"), f"{shown(name)} is not the name of the call it answers ({shown(called)})")
        out.append(message)
    tool_list = [_chat_tool(Obj(value, path)) for value, path in items_of(tools or (), "tools")]
    fmt = None
    if response_format is not None:
        fmt = json_value(expect(response_format, Mapping, "response_format", "an object"), "response_format")
    return _conversation(out, tool_list, fmt)


def _chat_message(node: Obj) -> Message:
    role = node.text("role")
    where = node.at("content")
    if role in ("system", "developer"):
        _only(node, ("role", "content"))
        return made(where, SystemMessage, _system_text(node.value.get("content"), where, "text"))
    if role == "user":
        _only(node, ("role", "content"))
        return made(where, UserMessage, _chat_content(node.value.get("content"), where))
    if role == "tool":
        _only(node, ("role", "content", "tool_call_id", "name"))
        content, is_error = _error_content(_chat_content(node.value.get("content"), where), where)
        return made(where, ToolMessage, content, node.text("tool_call_id"), is_error)
    if role == "assistant":
        return _chat_assistant(node)
    raise fail(node.at("role"), f"expected 'system', 'developer', 'user', 'assistant' or 'tool', got {shown(role)}")


def _only(node: Obj, keys: Sequence[str]) -> None:
    extra = sorted(k for k, v in node.value.items() if v is not None and k not in keys)
    if extra:
        raise fail(
            node.at(extra[0]), f"not kept by thinkseal (a {node.value.get('role')} message has {', '.join(keys)})"
        )


def _chat_content(content: object, path: str) -> list[ContentPart] | str:
    if isinstance(content, str):
        return content
    parts: list[ContentPart] = []
    for value, where in items_of(content, path):
        part = Obj(value, where)
        plain = {k: v for k, v in part.value.items() if k != "cache_control"}
        parts.append(_chat_part(part, plain))
        parts.extend(breakpoint_of(part))
    return parts


def _chat_part(part: Obj, plain: Mapping[str, Any]) -> ContentPart:
    kind = part.text("type")
    if kind == "text":
        if part.only("type", "text", "cache_control"):
            return part.text("text")
        return native(CHAT, plain, part.path, part.text("text"))
    if kind == "image_url" and part.only("type", "image_url", "cache_control"):
        inner = part.obj("image_url")
        if inner.only("url"):
            image = _image(inner.text("url"), inner.at("url"))
            if image is not None:
                return image
    if kind == "file" and part.only("type", "file", "cache_control"):
        inner = part.obj("file")
        if inner.only("file_data", "filename") and inner.has("file_data"):
            raw = _pdf(inner.text("file_data"), inner.at("file_data"))
            title = inner.get("filename", str, None)
            if raw is not None and (title is None or title.strip()):
                return made(inner.path, Document, raw, title=title)
    return native(CHAT, plain, part.path)


def _chat_assistant(node: Obj) -> AssistantMessage:
    _only(
        node,
        (
            "role",
            "content",
            "reasoning_content",
            "reasoning",
            "reasoning_details",
            "tool_calls",
            "refusal",
            "annotations",
        ),
    )
    if node.value.get("annotations"):
        raise fail(node.at("annotations"), "not kept by thinkseal (use the openrouter adapter's replies)")
    parts: list[Part] = []
    texts = {k: node.text(k) for k in ("reasoning_content", "reasoning") if node.has(k)}
    if len(set(texts.values())) > 1:
        raise fail(node.at("reasoning"), "differs from reasoning_content (one reasoning text per message)")
    reasoning = next(iter(texts.values()), "")
    if reasoning:
        parts.append(ThinkingBlock.Text(reasoning))
    for value, where in node.list("reasoning_details", ()):
        item = Obj(value, where)
        parts.append(made(where, ThinkingBlock.Opaque, OPENROUTER, compact(item.value, where, sort=True)))
    content = node.value.get("content")
    where = node.at("content")
    if isinstance(content, str):
        parts.append(content)
    elif content is not None:
        for value, path in items_of(content, where):
            part = Obj(value, path)
            kind = part.text("type")
            if kind == "text" and part.only("type", "text"):
                parts.append(part.text("text"))
            elif kind == "refusal" and part.only("type", "refusal"):
                parts.append(native(CHAT, part.value, path, part.text("refusal")))
            else:
                parts.append(native(CHAT, part.value, path, part.get("text", str, None)))
    if node.has("refusal"):
        refusal = node.text("refusal")
        parts.append(native(CHAT, {"type": "refusal", "refusal": refusal}, node.at("refusal"), refusal))
    for value, path in node.list("tool_calls", ()):
        call = Obj(value, path)
        if call.get("type", str, "function") != "function":
            raise fail(call.at("type"), "only function tool calls are kept")
        function = call.obj("function")
        args = arguments(function.value.get("arguments", ""), function.at("arguments"))
        parts.append(made(path, ToolCall, call.text("id"), function.text("name"), args))
    return assistant(parts, node.path)


def _chat_tool(node: Obj) -> Tool:
    if node.get("type", str, "function") != "function":
        raise fail(node.at("type"), "only function tools are kept")
    function = node.obj("function")
    marks = breakpoint_of(node)
    parameters = json_value(
        function.get("parameters", Mapping, {"type": "object", "properties": {}}), function.at("parameters")
    )
    return made(
        node.path,
        Tool,
        function.text("name"),
        function.get("description", str, ""),
        parameters,
        marks[0] if marks else None,
    )


# -- chat: export ---------------------------------------------------------------------------


def export_chat(conversation: Conversation, *, reasoning_field: ReasoningField = "reasoning_content") -> dict[str, Any]:
    """``conversation`` as chat-completions request fields: ``messages``, and
    ``tools`` and ``response_format`` when it has them. Unsigned reasoning
    text goes under ``reasoning_field``; OpenRouter's items under
    ``reasoning_details``. Raises ``ValidationError`` for a part the chat
    format cannot hold (signed or redacted thinking, another provider's
    opaque or native block, a turn whose parts are not laid out as
    reasoning, text, then tool calls, a URL or plain-text document)."""
    conversation = _check(conversation)
    if reasoning_field not in ("reasoning_content", "reasoning"):
        raise fail("reasoning_field", "expected 'reasoning_content' or 'reasoning'")
    out: dict[str, Any] = {"messages": [_chat_wire(m, i, reasoning_field) for i, m in enumerate(conversation.messages)]}
    if conversation.tools:
        out["tools"] = [_chat_tool_wire(t) for t in conversation.tools]
    if conversation.response_format is not None:
        out["response_format"] = _plain(conversation.response_format)
    return out


def _chat_wire(message: Message, index: int, reasoning_field: str) -> dict[str, Any]:
    if isinstance(message, AssistantMessage):
        return _chat_assistant_wire(message, index, reasoning_field)
    assert isinstance(message, (SystemMessage, UserMessage, ToolMessage))
    if isinstance(message, ToolMessage):
        _error_text(message, index, _CHAT_TARGET)
        content = _chat_parts(message.content, index)
        if message.is_error:
            content = _prefixed(content, {"type": "text", "text": TOOL_ERROR_PREFIX})
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}
    return {"role": message.role, "content": _chat_parts(message.content, index)}


def _prefixed(content: Any, first: dict[str, Any]) -> Any:
    if isinstance(content, str):
        return TOOL_ERROR_PREFIX + content
    if content and content[0].get("type") == first["type"] and set(content[0]) <= {"type", "text", "cache_control"}:
        return [{**content[0], "text": TOOL_ERROR_PREFIX + content[0]["text"]}, *content[1:]]
    return [first, *content]


def _chat_parts(content: str | tuple[ContentPart, ...], index: int) -> Any:
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        if isinstance(part, CacheBreakpoint):
            out[-1] = {**out[-1], "cache_control": _control(part)}
        elif isinstance(part, str):
            out.append({"type": "text", "text": part})
        elif isinstance(part, Image):
            url = part.url if part.url is not None else _data_url(part.media_type or "", part.data or b"")
            out.append({"type": "image_url", "image_url": {"url": url}})
        elif isinstance(part, Document) and part.data is not None and not part.citations:
            file: dict[str, Any] = {"file_data": _data_url("application/pdf", part.data)}
            if part.title is not None:
                file["filename"] = part.title
            out.append({"type": "file", "file": file})
        elif isinstance(part, Native) and part.provider in _CHAT_NATIVES:
            out.append(part.value)
        else:
            hint = "it takes PDF documents as data only, without citations" if isinstance(part, Document) else ""
            raise refuse(index, f".content[{j}]", part, _CHAT_TARGET, hint)
    return out


def _control(mark: CacheBreakpoint) -> dict[str, Any]:
    return {"type": "ephemeral"} if mark.ttl is None else {"type": "ephemeral", "ttl": mark.ttl}


def _chat_assistant_wire(message: AssistantMessage, index: int, reasoning_field: str) -> dict[str, Any]:
    # The chat layout: reasoning text, OpenRouter's items, the content, the tool calls.
    stage = 0
    reasoning: str | None = None
    details: list[Any] = []
    content: list[dict[str, Any]] = []
    plain = True
    calls: list[dict[str, Any]] = []
    for j, part in enumerate(message.parts):
        where = f".parts[{j}]"
        if isinstance(part, ThinkingBlock.Text) and not part.is_sealed and stage == 0:
            reasoning, stage = part.text, 1
        elif isinstance(part, ThinkingBlock.Opaque) and part.provider == OPENROUTER and stage <= 1:
            details.append(json.loads(part.data))
            stage = 1
        elif isinstance(part, (str, Native)) and stage <= 2:
            if isinstance(part, str):
                content.append({"type": "text", "text": part})
            elif part.provider == CHAT:
                content.append(part.value)
                plain = False
            else:
                raise refuse(index, where, part, _CHAT_TARGET)
            stage = 2
        elif isinstance(part, ToolCall):
            calls.append(
                {"id": part.id, "type": "function", "function": {"name": part.name, "arguments": part.arguments_json}}
            )
            stage = 3
        else:
            if isinstance(part, ThinkingBlock) and (
                (isinstance(part, ThinkingBlock.Text) and not part.is_sealed)
                or (isinstance(part, ThinkingBlock.Opaque) and part.provider == OPENROUTER)
            ):
                raise refuse(
                    index, where, "thinking out of place", _CHAT_TARGET, "a message has one reasoning text, first"
                )
            if isinstance(part, (str, Native)):
                raise refuse(index, where, "text after a tool call", _CHAT_TARGET, "content comes before tool calls")
            raise refuse(index, where, part, _CHAT_TARGET)
    wire: dict[str, Any] = {"role": "assistant"}
    if not content:
        wire["content"] = None
    elif len(content) == 1 and plain:
        wire["content"] = content[0]["text"]
    else:
        wire["content"] = content
    if reasoning is not None:
        wire[reasoning_field] = reasoning
    if details:
        wire["reasoning_details"] = details
    if calls:
        wire["tool_calls"] = calls
    return wire


def _chat_tool_wire(tool: Tool) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = _plain(tool.parameters)
    wire: dict[str, Any] = {"type": "function", "function": function}
    if tool.cache is not None:
        wire["cache_control"] = _control(tool.cache)
    return wire


# -- Responses: import ----------------------------------------------------------------------


def import_responses(
    items: Sequence[Mapping[str, Any]],
    *,
    instructions: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    text: Mapping[str, Any] | None = None,
) -> Conversation:
    """A conversation from Responses input items (and the request's
    ``instructions``, as a leading system message; ``tools``; ``text``, whose
    ``format`` becomes the response format). Consecutive assistant-side items
    (reasoning, function calls, assistant messages, other item types) make one
    assistant turn."""
    out: list[Message] = []
    if instructions is not None:
        out.append(made("instructions", SystemMessage, instructions))
    turn: list[Part] = []
    turn_path = "input"

    def flush() -> None:
        if turn:
            out.append(assistant(list(turn), turn_path))
            turn.clear()

    for value, path in items_of(items, "input"):
        item = Obj(value, path)
        kind = item.get("type", str, "message")
        role = item.get("role", str, None) if kind == "message" else None
        if kind == "message" and role in ("system", "developer", "user"):
            flush()
            where = item.at("content")
            if role == "user":
                _keys(item, ("type", "role", "content"))
                out.append(made(where, UserMessage, _responses_content(item.value.get("content"), where)))
            else:
                _keys(item, ("type", "role", "content"))
                out.append(made(where, SystemMessage, _system_text(item.value.get("content"), where, "input_text")))
        elif kind == "function_call_output":
            flush()
            _keys(item, ("type", "call_id", "output", "id", "status"))
            where = item.at("output")
            content, is_error = _error_content(_responses_content(item.value.get("output"), where), where)
            out.append(made(where, ToolMessage, content, item.text("call_id"), is_error))
        else:
            if not turn:
                turn_path = path
            turn.extend(_responses_assistant(item, kind))
    flush()
    tool_list = [_responses_tool(Obj(value, path)) for value, path in items_of(tools or (), "tools")]
    fmt = _text_format(Obj(text, "text")) if text is not None else None
    return _conversation(out, tool_list, fmt)


def _keys(node: Obj, keys: Sequence[str]) -> None:
    extra = sorted(k for k, v in node.value.items() if v is not None and k not in keys)
    if extra:
        raise fail(node.at(extra[0]), "not kept by thinkseal")


def _responses_content(content: object, path: str) -> list[ContentPart] | str:
    if isinstance(content, str):
        return content
    parts: list[ContentPart] = []
    for value, where in items_of(content, path):
        part = Obj(value, where)
        parts.append(_responses_part(part))
    return parts


def _responses_part(part: Obj) -> ContentPart:
    kind = part.text("type")
    if kind == "input_text" and part.only("type", "text"):
        return part.text("text")
    auto = part.get("detail", str, "auto") == "auto"
    if kind == "input_image" and part.only("type", "image_url", "detail") and part.has("image_url") and auto:
        image = _image(part.text("image_url"), part.at("image_url"))
        if image is not None:
            return image
    if kind == "input_file" and part.only("type", "file_data", "file_url", "filename"):
        title = part.get("filename", str, None)
        if title is None or title.strip():
            if part.has("file_data") and not part.has("file_url"):
                raw = _pdf(part.text("file_data"), part.at("file_data"))
                if raw is not None:
                    return made(part.path, Document, raw, title=title)
            elif part.has("file_url") and not part.has("file_data"):
                return made(part.path, Document, url=part.text("file_url"), title=title)
    return native(RESPONSES, part.value, part.path, part.get("text", str, None) if kind == "input_text" else None)


def _responses_assistant(item: Obj, kind: str) -> list[Part]:
    if kind == "reasoning":
        texts = [Obj(v, p).text("text") for v, p in item.list("summary", ())]
        if not texts:
            texts = [Obj(v, p).text("text") for v, p in item.list("content", ())]
        summary = SUMMARY_SEPARATOR.join(t for t in texts if t)
        blocks: list[Part] = [ThinkingBlock.Text(summary)] if summary else []
        blocks.append(made(item.path, ThinkingBlock.Opaque, RESPONSES, compact(item.value, item.path, sort=True)))
        return blocks
    if kind == "function_call":
        args = arguments(item.text("arguments"), item.at("arguments"))
        return [made(item.path, ToolCall, item.text("call_id"), item.text("name"), args)]
    if kind == "message" and item.get("role", str, None) == "assistant":
        content = item.value.get("content")
        if isinstance(content, str) and item.only("type", "role", "content"):
            return [content]
        texts = []
        plain = item.only("type", "role", "content", "id", "status")
        for value, path in items_of(content, item.at("content")):
            part = Obj(value, path)
            if part.text("type") == "output_text":
                texts.append(part.text("text"))
                plain = plain and part.only("type", "text", "annotations", "logprobs")
                plain = plain and not part.value.get("annotations") and not part.value.get("logprobs")
            elif part.text("type") == "refusal":
                texts.append(part.text("refusal"))
                plain = False
            else:
                plain = False
        if plain:
            return list(texts)
        return [native(RESPONSES, item.value, item.path, "".join(texts) or None, sort=True)]
    return [native(RESPONSES, item.value, item.path, sort=True)]


def _responses_tool(node: Obj) -> Tool:
    if node.text("type") != "function":
        raise fail(node.at("type"), "only function tools are kept")
    parameters = json_value(
        node.get("parameters", Mapping, {"type": "object", "properties": {}}), node.at("parameters")
    )
    return made(node.path, Tool, node.text("name"), node.get("description", str, ""), parameters)


def _text_format(node: Obj) -> dict[str, Any] | None:
    fmt = node.opt_obj("format")
    if fmt is None:
        return None
    kind = fmt.text("type")
    if kind == "json_schema":
        spec = json_value(fmt.value, fmt.path)
        return {"type": "json_schema", "json_schema": {k: v for k, v in spec.items() if k != "type"}}
    if not fmt.only("type"):
        raise fail(fmt.path, f"a {kind} format has no other fields")
    return {"type": kind}


# -- Responses: export ----------------------------------------------------------------------


def export_responses(conversation: Conversation) -> dict[str, Any]:
    """``conversation`` as Responses request fields: ``input``, and ``tools``
    and ``text`` (its ``format``) when it has them. System messages stay in
    place as system input messages. Raises ``ValidationError`` for a part the
    format cannot hold (signed, redacted or foreign thinking, unsigned
    thinking text that is not a reasoning item's summary, another provider's
    native block, a cache breakpoint, a plain-text document)."""
    conversation = _check(conversation)
    items: list[Any] = []
    for i, message in enumerate(conversation.messages):
        if isinstance(message, AssistantMessage):
            items.extend(_responses_assistant_wire(message, i))
        elif isinstance(message, ToolMessage):
            _error_text(message, i, _RESPONSES_TARGET)
            output = _responses_parts(message.content, i)
            if message.is_error:
                output = _prefixed(output, {"type": "input_text", "text": TOOL_ERROR_PREFIX})
            items.append({"type": "function_call_output", "call_id": message.tool_call_id, "output": output})
        else:
            assert isinstance(message, (SystemMessage, UserMessage))
            items.append({"role": message.role, "content": _responses_parts(message.content, i)})
    out: dict[str, Any] = {"input": items}
    if conversation.tools:
        out["tools"] = [_responses_tool_wire(t, i) for i, t in enumerate(conversation.tools)]
    fmt = conversation.response_format
    if fmt is not None:
        if fmt["type"] == "json_schema":
            spec = fmt.get("json_schema")
            if not isinstance(spec, Mapping):
                raise fail("response_format.json_schema", "expected an object")
            out["text"] = {"format": {"type": "json_schema", **_plain(spec)}}
        elif set(fmt) == {"type"}:
            out["text"] = {"format": {"type": fmt["type"]}}
        else:
            raise fail("response_format", f"a {fmt['type']} format has no other fields in {_RESPONSES_TARGET}")
    return out


def _responses_parts(content: str | tuple[ContentPart, ...], index: int) -> Any:
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            out.append({"type": "input_text", "text": part})
        elif isinstance(part, Image):
            url = part.url if part.url is not None else _data_url(part.media_type or "", part.data or b"")
            out.append({"type": "input_image", "image_url": url, "detail": "auto"})
        elif isinstance(part, Document) and part.text is None and not part.citations:
            file: dict[str, Any] = {"type": "input_file"}
            if part.data is not None:
                file["file_data"] = _data_url("application/pdf", part.data)
            else:
                file["file_url"] = part.url
            if part.title is not None:
                file["filename"] = part.title
            out.append(file)
        elif isinstance(part, Native) and part.provider == RESPONSES:
            out.append(part.value)
        else:
            hint = "OpenAI caches prompts automatically" if isinstance(part, CacheBreakpoint) else ""
            raise refuse(index, f".content[{j}]", part, _RESPONSES_TARGET, hint)
    return out


def _summary(item: Mapping[str, Any]) -> str:
    texts = [p.get("text") for p in item.get("summary") or () if isinstance(p, Mapping)]
    if not texts:
        texts = [p.get("text") for p in item.get("content") or () if isinstance(p, Mapping)]
    return SUMMARY_SEPARATOR.join(t for t in texts if isinstance(t, str) and t)


def _responses_assistant_wire(message: AssistantMessage, index: int) -> list[Any]:
    items: list[Any] = []
    parts = message.parts
    for j, part in enumerate(parts):
        if isinstance(part, ThinkingBlock.Opaque) and part.provider == RESPONSES:
            # Without the ids the adapter records beside a stored item (its own member, not OpenAI's).
            items.append({k: v for k, v in json.loads(part.data).items() if k != FOLLOWING})
        elif isinstance(part, ThinkingBlock.Text) and not part.is_sealed:
            # A reasoning item's summary, kept before it as the adapter keeps it.
            after = parts[j + 1] if j + 1 < len(parts) else None
            if not (
                isinstance(after, ThinkingBlock.Opaque)
                and after.provider == RESPONSES
                and _summary(json.loads(after.data)) == part.text
            ):
                raise refuse(
                    index, f".parts[{j}]", part, _RESPONSES_TARGET, "reasoning text goes only with its reasoning item"
                )
        elif isinstance(part, str):
            items.append({"role": "assistant", "content": part})
        elif isinstance(part, ToolCall):
            items.append(
                {"type": "function_call", "call_id": part.id, "name": part.name, "arguments": part.arguments_json}
            )
        elif isinstance(part, Native) and part.provider == RESPONSES:
            items.append(part.value)
        else:
            raise refuse(index, f".parts[{j}]", part, _RESPONSES_TARGET)
    return items


def _responses_tool_wire(tool: Tool, index: int) -> dict[str, Any]:
    if tool.cache is not None:
        raise fail(f"tools[{index}].cache", f"{_RESPONSES_TARGET} cannot hold a cache breakpoint")
    wire: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description:
        wire["description"] = tool.description
    wire["parameters"] = _plain(tool.parameters)
    return wire


# -- SDK bridges ---------------------------------------------------------------------------
#
# For teams that keep their ``openai`` client: a request of the ``openai``
# (chat completions) or ``openai-responses`` adapter (or of any OpenAI-style
# adapter, with the client's ``base_url`` set to that provider) goes out
# through the client's documented custom-request method with ``req.content``
# as is and ``req.headers``; the reply comes back through ``req.parse``. HTTP
# errors are the SDK's own exceptions (``openai.APIStatusError`` and its
# subclasses, ``openai.APIError`` for an error event in a stream).


def send(client: Any, req: PreparedRequest, *, ledger: Ledger | None = None) -> Reply:
    """Send ``req`` through an ``openai.OpenAI`` client and return its
    ``Reply``. A request prepared with ``stream=True`` is streamed and
    accumulated."""
    import openai as sdk  # noqa: PLC0415

    return _stainless.send(client, _stainless.check(req), sdk.Stream, ledger)


async def send_async(client: Any, req: PreparedRequest, *, ledger: Ledger | AsyncLedger | None = None) -> Reply:
    """``send`` through an ``openai.AsyncOpenAI`` client."""
    import openai as sdk  # noqa: PLC0415

    return await _stainless.send_async(client, _stainless.check(req), sdk.AsyncStream, ledger)


def stream(client: Any, req: PreparedRequest, *, ledger: Ledger | None = None) -> Iterator[Delta | Reply]:
    """Stream ``req`` (prepared with ``stream=True``) through an ``openai.OpenAI``
    client: yields the typed deltas as the events arrive, then the finished
    ``Reply`` as the last item."""
    import openai as sdk  # noqa: PLC0415

    return _stainless.stream(client, _stainless.check(req, streaming=True), sdk.Stream, ledger)


def stream_async(
    client: Any, req: PreparedRequest, *, ledger: Ledger | AsyncLedger | None = None
) -> AsyncIterator[Delta | Reply]:
    """``stream`` through an ``openai.AsyncOpenAI`` client (``async for``)."""
    import openai as sdk  # noqa: PLC0415

    return _stainless.stream_async(client, _stainless.check(req, streaming=True), sdk.AsyncStream, ledger)
