"""Anthropic: ``MessageParam`` lists to a ``Conversation`` and back, and bridges
that send a ``PreparedRequest`` through the official ``anthropic`` SDK client.

Converters (docs/interop.md has the full table):

- ``import_messages(messages, *, system=None, tools=None, output_config=None)``
  reads the dicts ``client.messages.create`` takes: string or block-list
  content; ``text``, ``image`` (base64 or URL source), ``document`` (base64 PDF,
  URL or plain-text source, ``title``, ``citations``), ``tool_use``,
  ``tool_result`` (string or block content, ``is_error``), ``thinking`` (with
  its signature), ``redacted_thinking``; every other block (and a known block
  with fields thinkseal does not model, such as a cited text block) is kept
  verbatim as ``Native("anthropic", block)``. ``cache_control`` becomes a
  ``CacheBreakpoint`` after the block. A user turn's ``tool_result`` blocks
  become ``ToolMessage``\\ s (they must lead the turn, as Anthropic requires),
  its other blocks one ``UserMessage``.
- ``export_messages(conversation)`` writes ``{"messages": [...]}`` plus
  ``"system"``, ``"tools"`` and ``"output_config"`` when the conversation has
  them, ready for ``client.messages.create(model=..., max_tokens=...,
  **exported)``. What Anthropic's format cannot hold raises
  ``ValidationError`` naming the message and part: a system message after
  the first turn, more than one system message, unsigned thinking text,
  another provider's opaque thinking or native block, a ``json_object``
  response format.

Imported thinking is never bound: ``Conversation.rebind(origin)`` vouches for it.

Bridges, for a ``PreparedRequest`` of the ``anthropic`` adapter and the
official SDK client: ``send(client, req) -> Reply`` (``anthropic.Anthropic``),
``await send_async(client, req)`` (``AsyncAnthropic``), and ``stream(client,
req)`` / ``stream_async`` yielding the typed deltas and then the ``Reply``.
The body goes out as ``req.content``, byte for byte, through the client's
``post`` (its auth, retries and timeouts apply); the SDK's own exceptions
pass through.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from .._blocks import ThinkingBlock
from .._content import IMAGE_MEDIA_TYPES, CacheBreakpoint, ContentPart, Document, Image, Native
from .._conversation import Conversation
from .._errors import ValidationError
from .._messages import AssistantMessage, Message, Part, SystemMessage, ToolCall, ToolMessage, UserMessage
from .._reply import Delta, Reply
from .._tool import Tool
from ..providers import PreparedRequest
from . import _stainless
from ._common import (
    Obj,
    arguments,
    assistant,
    b64,
    b64decode,
    breakpoint_of,
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
    "export_messages",
    "import_messages",
    "send",
    "send_async",
    "stream",
    "stream_async",
]

PROVIDER: Final = "anthropic"
# Native blocks of these adapters are Anthropic's wire blocks.
_OWN: Final = ("anthropic", "vertex-anthropic")
_TARGET: Final = "Anthropic's message format"


# -- import ------------------------------------------------------------------------------


def import_messages(
    messages: Sequence[Mapping[str, Any]],
    *,
    system: str | Sequence[Mapping[str, Any]] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    output_config: Mapping[str, Any] | None = None,
) -> Conversation:
    """A conversation from Anthropic ``MessageParam`` dicts (and the request's
    ``system``, ``tools`` and ``output_config``). Bad input raises
    ``ValidationError`` with the path of the field (``messages[2].content[0].source.data``).
    Sealed thinking comes in unbound."""
    out: list[Message] = []
    if system is not None:
        out.append(_system(system, "system"))
    for value, path in items_of(messages, "messages"):
        out.extend(_message(Obj(value, path)))
    tool_list = [_tool(Obj(value, path)) for value, path in items_of(tools or (), "tools")]
    fmt = _output_config(Obj(output_config, "output_config")) if output_config is not None else None
    return made("messages", Conversation, out, tool_list, fmt)


def message_of(value: object, index: int) -> list[Message]:
    """The messages one ``MessageParam`` at ``messages[index]`` imports as (what
    ``import_messages`` reads for it), for a reader that takes a request's
    messages one by one (the gateway reads each wire message once)."""
    return _message(Obj(value, f"messages[{index}]"))


def _system(value: object, path: str) -> SystemMessage:
    if isinstance(value, str):
        return made(path, SystemMessage, value)
    parts: list[ContentPart] = []
    for block, where in items_of(value, path):
        node = Obj(block, where)
        if node.text("type") != "text" or not node.only("type", "text", "cache_control"):
            raise fail(where, "a system prompt holds text blocks (type, text, cache_control) only")
        parts.append(node.text("text"))
        parts.extend(breakpoint_of(node))
    return made(path, SystemMessage, parts)


def _message(node: Obj) -> list[Message]:
    role = node.text("role")
    if role not in ("user", "assistant"):
        raise fail(node.at("role"), f"expected 'user' or 'assistant', got {shown(role)}")
    content = node.value.get("content")
    where = node.at("content")
    if isinstance(content, str):
        return [made(where, UserMessage if role == "user" else AssistantMessage, content)]
    blocks = [Obj(value, path) for value, path in items_of(content, where)]
    if role == "assistant":
        return [assistant([_assistant_part(b) for b in blocks], where)]
    if not blocks:
        raise fail(where, "a user turn needs at least one block")
    out: list[Message] = []
    parts: list[ContentPart] = []
    for block in blocks:
        if block.text("type") == "tool_result":
            if parts:
                raise fail(block.path, "tool_result blocks must come before any other block of the turn")
            out.append(_tool_result(block))
        else:
            parts.extend(_content_part(block))
    if parts:
        out.append(made(where, UserMessage, parts))
    return out


def _content_part(block: Obj) -> list[ContentPart]:
    """A block of user or tool-result content, with the breakpoint its cache_control makes."""
    value = {k: v for k, v in block.value.items() if k != "cache_control"}
    return [_part_of(block, value), *breakpoint_of(block)]


def _part_of(block: Obj, value: Mapping[str, Any]) -> ContentPart:
    kind = block.text("type")
    if kind == "text" and block.only("type", "text", "cache_control"):
        return block.text("text")
    if kind == "text":
        return native(PROVIDER, value, block.path, block.text("text"))
    if kind == "image":
        image = _image(block)
        if image is not None:
            return image
    if kind == "document":
        document = _document(block)
        if document is not None:
            return document
    return native(PROVIDER, value, block.path)


def _image(block: Obj) -> Image | None:
    """The image, or None when it has a source or fields ``Image`` cannot hold (kept as Native)."""
    source = block.obj("source")
    if not block.only("type", "source", "cache_control"):
        return None
    kind = source.text("type")
    if kind == "url" and source.only("type", "url"):
        return made(source.at("url"), Image, url=source.text("url"))
    if kind == "base64" and source.only("type", "media_type", "data"):
        media = source.text("media_type")
        data = source.text("data")
        raw = b64decode(data, source.at("data"))
        if media in IMAGE_MEDIA_TYPES and raw and b64(raw) == data:
            return made(source.path, Image, raw, media)
    return None


def _document(block: Obj) -> Document | None:
    source = block.obj("source")
    if not block.only("type", "source", "title", "citations", "cache_control"):
        return None
    citations = block.value.get("citations")
    if citations is not None and citations != {"enabled": True}:
        return None
    title = block.get("title", str, None)
    if title is not None and not title.strip():
        return None
    extra = {"title": title, "citations": citations is not None}
    kind = source.text("type")
    if kind == "url" and source.only("type", "url"):
        return made(source.path, Document, url=source.text("url"), **extra)
    if kind == "text" and source.only("type", "media_type", "data") and source.text("media_type") == "text/plain":
        text = source.text("data")
        return made(source.path, Document, text=text, **extra) if text.strip() else None
    if (
        kind == "base64"
        and source.only("type", "media_type", "data")
        and source.text("media_type") == "application/pdf"
    ):
        data = source.text("data")
        raw = b64decode(data, source.at("data"))
        if raw and b64(raw) == data:
            return made(source.path, Document, raw, **extra)
    return None


def _tool_result(block: Obj) -> ToolMessage:
    if not block.only("type", "tool_use_id", "content", "is_error", "cache_control"):
        extra = sorted(k for k, v in block.value.items() if v is not None and k not in ("type", "tool_use_id"))
        raise fail(block.path, f"a tool_result with fields thinkseal does not keep: {', '.join(extra)}")
    content = block.value.get("content")
    where = block.at("content")
    if content is None:
        raise fail(where, "missing (a ToolMessage needs content)")
    parts: list[ContentPart] | str
    if isinstance(content, str):
        parts = content
    else:
        parts = []
        for value, path in items_of(content, where):
            parts.extend(_content_part(Obj(value, path)))
    mark = breakpoint_of(block)
    if mark:
        parts = [parts, *mark] if isinstance(parts, str) else [*parts, *mark]
    is_error = block.get("is_error", bool, False)
    return made(where, ToolMessage, parts, block.text("tool_use_id"), is_error)


def _assistant_part(block: Obj) -> Part:
    kind = block.text("type")
    if kind == "text":
        if block.only("type", "text"):
            return block.text("text")
        return native(PROVIDER, block.value, block.path, block.text("text"))
    if kind == "thinking" and block.only("type", "thinking", "signature"):
        signature = block.get("signature", str, None)
        return made(block.path, ThinkingBlock.Text, block.text("thinking"), signature)
    if kind == "redacted_thinking" and block.only("type", "data"):
        return made(block.at("data"), ThinkingBlock.Redacted, block.text("data"))
    if kind == "tool_use" and block.only("type", "id", "name", "input"):
        args = arguments(block.value.get("input", {}), block.at("input"))
        return made(block.path, ToolCall, block.text("id"), block.text("name"), args)
    if kind in ("thinking", "redacted_thinking", "tool_use"):
        extra = sorted(k for k, v in block.value.items() if v is not None)
        raise fail(block.path, f"a {kind} block with fields thinkseal does not keep ({', '.join(extra)})")
    return native(PROVIDER, block.value, block.path)


def _tool(node: Obj) -> Tool:
    if node.get("type", str, "custom") != "custom" or not node.only(
        "type", "name", "description", "input_schema", "cache_control"
    ):
        raise fail(node.path, "only custom (function) tools with name, description, input_schema, cache_control")
    schema = json_value(node.get("input_schema", Mapping), node.at("input_schema"))
    marks = breakpoint_of(node)
    return made(
        node.path, Tool, node.text("name"), node.get("description", str, ""), schema, marks[0] if marks else None
    )


def _output_config(node: Obj) -> dict[str, Any] | None:
    if not node.only("format"):
        raise fail(node.path, "only output_config.format is kept (other fields are request options)")
    fmt = node.opt_obj("format")
    if fmt is None:
        return None
    if fmt.text("type") != "json_schema" or not fmt.only("type", "schema"):
        raise fail(fmt.path, 'expected {"type": "json_schema", "schema": {...}}')
    return {"type": "json_schema", "json_schema": {"schema": json_value(fmt.get("schema", Mapping), fmt.at("schema"))}}


# -- export ------------------------------------------------------------------------------


def export_messages(conversation: Conversation) -> dict[str, Any]:
    """``conversation`` in Anthropic's request shape: ``messages``, and
    ``system``, ``tools`` and ``output_config`` when it has them (so the dict
    can be splatted into ``client.messages.create``). Raises
    ``ValidationError`` for a part Anthropic's format cannot hold."""
    if not isinstance(conversation, Conversation):
        raise ValidationError("conversation: expected a Conversation", path="conversation")
    from ..providers.anthropic import _WIRE  # noqa: PLC0415  (the adapter's own block writers)

    messages = conversation.messages
    out: dict[str, Any] = {}
    start = 0
    while start < len(messages) and isinstance(messages[start], SystemMessage):
        start += 1
    if start > 1:
        raise refuse(1, "", "a second system message", _TARGET, "it has one system prompt; join them first")
    if start == 1:
        system = messages[0]
        assert isinstance(system, SystemMessage)
        out["system"] = system.content if isinstance(system.content, str) else _blocks(_WIRE, system.content, 0)
    turns: list[dict[str, Any]] = []
    i = start
    while i < len(messages):
        message = messages[i]
        if isinstance(message, SystemMessage):
            raise refuse(i, "", "a system message after the first turn", _TARGET, "it has one system prompt")
        if isinstance(message, AssistantMessage):
            turns.append(
                {
                    "role": "assistant",
                    "content": [_assistant_block(_WIRE, p, i, j) for j, p in enumerate(message.parts)],
                }
            )
            i += 1
            continue
        content: list[dict[str, Any]] = []
        while i < len(messages) and isinstance(messages[i], ToolMessage):
            tool = messages[i]
            assert isinstance(tool, ToolMessage)
            content.append(_tool_result_block(_WIRE, tool, i))
            i += 1
        if i < len(messages) and isinstance(messages[i], UserMessage):
            user = messages[i]
            assert isinstance(user, UserMessage)
            if not content:
                turns.append(
                    {
                        "role": "user",
                        "content": user.content if isinstance(user.content, str) else _blocks(_WIRE, user.content, i),
                    }
                )
                i += 1
                continue
            content.extend(_blocks(_WIRE, user.parts, i))
            i += 1
        turns.append({"role": "user", "content": content})
    out["messages"] = turns
    if conversation.tools:
        out["tools"] = [_tool_spec(t) for t in conversation.tools]
    fmt = conversation.response_format
    if fmt is not None:
        out["output_config"] = {"format": _format(fmt)}
    return out


def _blocks(wire: Any, parts: Sequence[ContentPart], index: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for j, part in enumerate(parts):
        if isinstance(part, CacheBreakpoint):
            control: dict[str, Any] = {"type": "ephemeral"}
            if part.ttl is not None:
                control["ttl"] = part.ttl
            blocks[-1] = {**blocks[-1], "cache_control": control}
        elif isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif isinstance(part, Image):
            blocks.append(wire.image_block(part))
        elif isinstance(part, Document):
            blocks.append(wire.document_block(part))
        elif isinstance(part, Native) and part.provider in _OWN:
            blocks.append(part.value)
        else:
            raise refuse(index, f".content[{j}]", part, _TARGET)
    return blocks


def _tool_result_block(wire: Any, message: ToolMessage, index: int) -> dict[str, Any]:
    content: Any = message.content if isinstance(message.content, str) else _blocks(wire, message.content, index)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": content}
    if message.is_error:
        block["is_error"] = True
    return block


def _assistant_block(wire: Any, part: Part, index: int, j: int) -> dict[str, Any]:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, ToolCall):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": dict(part.arguments)}
    if isinstance(part, ThinkingBlock.Text) and part.is_sealed:
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if isinstance(part, ThinkingBlock.Redacted):
        return {"type": "redacted_thinking", "data": part.data}
    if isinstance(part, Native) and part.provider in _OWN:
        return part.value
    hint = "Anthropic takes signed thinking only" if isinstance(part, ThinkingBlock) else ""
    raise refuse(index, f".parts[{j}]", part, _TARGET, hint)


def _tool_spec(tool: Tool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description:
        spec["description"] = tool.description
    spec["input_schema"] = _plain(tool.parameters)
    if tool.cache is not None:
        spec["cache_control"] = {"type": "ephemeral", **({"ttl": tool.cache.ttl} if tool.cache.ttl else {})}
    return spec


def _format(fmt: Mapping[str, Any]) -> dict[str, Any]:
    spec = fmt.get("json_schema")
    if fmt.get("type") != "json_schema" or not isinstance(spec, Mapping) or set(spec) != {"schema"}:
        raise fail(
            "response_format",
            f"{_TARGET} holds a JSON schema only (output_config.format); "
            'expected {"type": "json_schema", "json_schema": {"schema": {...}}} without a name or other fields',
        )
    return {"type": "json_schema", "schema": _plain(spec["schema"])}


def _plain(value: Any) -> Any:
    """A read-only JSON value as plain dicts and lists."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# -- SDK bridges ---------------------------------------------------------------------------
#
# For teams that keep their ``anthropic`` client (its auth, retries, timeouts,
# proxies): the request goes out through the client's documented custom-request
# method with ``req.content`` as is and ``req.headers``, and the reply comes back
# through ``req.parse``. HTTP errors are the SDK's own exceptions
# (``anthropic.APIStatusError`` and its subclasses).


def send(client: Any, req: PreparedRequest, *, ledger: Ledger | None = None) -> Reply:
    """Send ``req`` (prepared by the ``anthropic`` adapter) through an
    ``anthropic.Anthropic`` client and return its ``Reply``. A request prepared
    with ``stream=True`` is streamed and accumulated."""
    import anthropic as sdk  # noqa: PLC0415

    return _stainless.send(client, _stainless.check(req), sdk.Stream, ledger)


async def send_async(client: Any, req: PreparedRequest, *, ledger: Ledger | AsyncLedger | None = None) -> Reply:
    """``send`` through an ``anthropic.AsyncAnthropic`` client."""
    import anthropic as sdk  # noqa: PLC0415

    return await _stainless.send_async(client, _stainless.check(req), sdk.AsyncStream, ledger)


def stream(client: Any, req: PreparedRequest, *, ledger: Ledger | None = None) -> Iterator[Delta | Reply]:
    """Stream ``req`` (prepared with ``stream=True``) through an
    ``anthropic.Anthropic`` client: yields the typed deltas as the events
    arrive, then the finished ``Reply`` as the last item. Closing the
    iterator early closes the HTTP response."""
    import anthropic as sdk  # noqa: PLC0415

    return _stainless.stream(client, _stainless.check(req, streaming=True), sdk.Stream, ledger)


def stream_async(
    client: Any, req: PreparedRequest, *, ledger: Ledger | AsyncLedger | None = None
) -> AsyncIterator[Delta | Reply]:
    """``stream`` through an ``anthropic.AsyncAnthropic`` client (``async for``)."""
    import anthropic as sdk  # noqa: PLC0415

    return _stainless.stream_async(client, _stainless.check(req, streaming=True), sdk.AsyncStream, ledger)
