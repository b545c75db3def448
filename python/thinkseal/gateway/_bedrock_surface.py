"""Amazon Bedrock's Converse API as the gateway serves it, for ``bedrock``:
``POST /model/{modelId}/converse`` (a JSON answer) and
``POST /model/{modelId}/converse-stream`` (an AWS event stream, relayed as it
comes and read by the adapter's own stream parser).

The model and whether the answer streams are named in the path, not the body:
the route's model map rewrites the path, the model id percent-encoded as the
adapter encodes it. The server hands the path over decoded, so a model id
boto3 sent as ``anthropic.claude-...-v1%3A0`` is read as ``...-v1:0``. An
escaped ``/`` is refused before any route is chosen (it could make the path
another one upstream): a full ARN (an application inference profile, a
provisioned model) cannot be named in the path through the gateway. Name it
through the route's model map instead (an alias the client asks for, mapped
to the ARN), which the gateway encodes itself (docs/gateway.md, Bedrock).

An assistant message is read by the adapter's own reader of a reply message
(``_Wire.reply``: ``reasoningContent`` with its signature, redacted blobs as
base64 text, ``toolUse``), so a message a client sends back as it got it is
the very message the ledger recorded; its ``cachePoint`` blocks are no part
of the turn and are not read. User messages become a ``ToolMessage`` per
``toolResult`` block (they lead the turn) and a ``UserMessage`` with the other
blocks: text as text, every other block (image, document, guard content, ...)
as the adapter's ``Native`` block, which it sends as it is. ``system``,
``toolConfig.tools`` (``toolSpec`` entries) and ``outputConfig.textFormat``
are read as the adapter's ``build`` writes them, ``cachePoint`` entries as
breakpoints. A turn that goes out unsealed is the adapter's own assistant
message for it (``_Wire.assistant_blocks``). Every member thinkseal does not
read (``inferenceConfig``, ``additionalModelRequestFields``,
``toolConfig.toolChoice``, ...) passes through untouched; a body whose shape
it does not model (another kind of tool, a tool result with members it does
not keep) is forwarded as it came.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from .._content import CacheBreakpoint, ContentPart
from .._conversation import Conversation
from .._errors import ThinksealError, ValidationError
from .._messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from .._tool import Tool
from ..interop._common import Obj, fail, items_of, json_value, made, native
from ..providers._response import Node
from ..providers.bedrock import _WIRE
from ._surfaces import Incoming, ModelInPath

__all__ = ["BedrockConverse", "import_converse"]

_PATH: Final = re.compile(r"/model/(?P<model>[^/]+)/(?P<action>converse|converse-stream)")
_PROVIDER: Final = "bedrock"


class BedrockConverse(ModelInPath):
    """``converse`` / ``converse-stream`` of ``bedrock``."""

    field = "messages"
    path = _PATH

    def read(self, body: Mapping[str, Any], path: str) -> Incoming:
        match = self.matched(path, "Converse")
        conversation, turns = import_converse(body)
        return Incoming(conversation, self.field, turns, match["model"], match["action"] == "converse-stream")

    def turn_wire(self, turn: AssistantMessage) -> object | None:
        if not _WIRE.goes_out(turn):
            return None  # the adapter leaves out a turn with nothing but thinking
        return {"role": "assistant", "content": _WIRE.assistant_blocks(turn)}


# -- reading a request body --------------------------------------------------------------


def import_converse(body: Mapping[str, Any]) -> tuple[Conversation, dict[int, int]]:
    """The conversation of a Converse body and, for each assistant turn, its
    message's index in ``messages``. Bad input raises ``ValidationError``
    naming the field."""
    try:
        return _import(body)
    except ValidationError:
        raise
    except ThinksealError as err:  # the reply reader's errors, about a re-sent assistant message
        where = getattr(err, "path", None) or "messages"
        raise ValidationError(f"{where}: {err}", path=where) from None


def _import(body: Mapping[str, Any]) -> tuple[Conversation, dict[int, int]]:
    out: list[Message] = []
    system = body.get("system")
    if system is not None:
        out.extend(_system(system))
    turns: dict[int, int] = {}
    for index, (value, where) in enumerate(items_of(body.get("messages"), "messages")):
        message = Obj(value, where)
        role = message.text("role")
        if role == "assistant":
            turns[len(out)] = index
            out.append(_assistant(message))
        elif role == "user":
            out.extend(_user(message))
        else:
            raise fail(message.at("role"), f"expected 'user' or 'assistant', got {role!r:.40}")
    tools = _tools(body.get("toolConfig"))
    fmt = _response_format(body.get("outputConfig"))
    return made("messages", Conversation, out, tools, fmt), turns


def _assistant(message: Obj) -> AssistantMessage:
    """An assistant message as the adapter reads it in a reply (``parse``),
    its cache points left out (a mark moved onto the turn does not change it)."""
    blocks = [b for b, _ in message.list("content") if not (isinstance(b, Mapping) and "cachePoint" in b)]
    return _WIRE.reply(Node({"role": "assistant", "content": blocks}, message.path), role_required=True)


def _point(block: Obj) -> CacheBreakpoint:
    point = block.obj("cachePoint")
    if point.text("type") != "default" or not point.only("type", "ttl"):
        raise fail(point.path, 'expected {"type": "default"} with an optional "ttl"')
    return made(point.at("ttl"), CacheBreakpoint, point.get("ttl", str, None))


def _part(block: Obj) -> ContentPart:
    """A user, system or tool-result block: its text when that is all it is,
    else the block itself as the adapter's native block."""
    if block.only("text") and isinstance(block.value.get("text"), str):
        return block.text("text")
    return native(_PROVIDER, block.value, block.path)


def _user(message: Obj) -> list[Message]:
    """A ``ToolMessage`` per tool result (they come first), then one
    ``UserMessage`` with the other blocks; a cache point marks the block (or
    tool result) before it."""
    blocks = message.list("content")
    if not blocks:
        raise fail(message.at("content"), "a user message needs at least one block")
    results: list[tuple[Obj, list[ContentPart]]] = []
    parts: list[ContentPart] = []
    for value, where in blocks:
        block = Obj(value, where)
        if block.has("cachePoint") and block.only("cachePoint"):
            point = _point(block)
            if parts:
                parts.append(point)
            elif results:
                results[-1][1].append(point)
            continue  # a cache point before any block marks nothing
        if block.has("toolResult"):
            if parts or not block.only("toolResult"):
                raise fail(where, "a toolResult block stands alone, before any other block of the message")
            result = block.obj("toolResult")
            results.append((result, _result_parts(result)))
        else:
            parts.append(_part(block))
    out: list[Message] = [_tool_message(result, content) for result, content in results]
    if parts:
        out.append(made(message.at("content"), UserMessage, parts))
    return out


def _result_parts(result: Obj) -> list[ContentPart]:
    if not result.only("toolUseId", "content", "status"):
        extra = sorted(k for k, v in result.value.items() if v is not None and k not in ("toolUseId", "content"))
        raise fail(result.path, f"a toolResult with members thinkseal does not keep: {', '.join(extra)}")
    return [_part(Obj(value, where)) for value, where in result.list("content")]


def _tool_message(result: Obj, parts: list[ContentPart]) -> ToolMessage:
    status = result.get("status", str, "success")
    if status not in ("success", "error"):
        raise fail(result.at("status"), f"expected 'success' or 'error', got {status!r:.40}")
    return made(result.at("content"), ToolMessage, parts, result.text("toolUseId"), status == "error")


def _system(value: object) -> list[SystemMessage]:
    """The system blocks as one system message (none for an empty list)."""
    parts: list[ContentPart] = []
    for item, where in items_of(value, "system"):
        block = Obj(item, where)
        if block.has("cachePoint") and block.only("cachePoint"):
            if parts:
                parts.append(_point(block))
            continue
        parts.append(_part(block))
    if not parts:
        return []
    content: str | list[ContentPart] = parts[0] if len(parts) == 1 and isinstance(parts[0], str) else parts
    return [made("system", SystemMessage, content)]


def _tools(value: object) -> list[Tool]:
    if value is None:
        return []
    config = Obj(value, "toolConfig")
    specs: list[tuple[Obj, CacheBreakpoint | None]] = []
    for item, where in config.list("tools", []):
        entry = Obj(item, where)
        if entry.has("cachePoint") and entry.only("cachePoint"):
            if not specs or specs[-1][1] is not None:
                raise fail(where, "a cachePoint follows the toolSpec it marks")
            specs[-1] = (specs[-1][0], _point(entry))
            continue
        if not entry.only("toolSpec"):
            raise fail(where, "only toolSpec entries (and their cachePoint) are read")
        specs.append((entry.obj("toolSpec"), None))
    return [_tool(spec, cache) for spec, cache in specs]


def _tool(spec: Obj, cache: CacheBreakpoint | None) -> Tool:
    if not spec.only("name", "description", "inputSchema"):
        raise fail(spec.path, "a toolSpec with members thinkseal does not keep (name, description, inputSchema)")
    schema = spec.obj("inputSchema")
    if not schema.only("json"):
        raise fail(schema.path, 'expected {"json": {...}}')
    parameters = json_value(schema.get("json", Mapping), schema.at("json"))
    return made(spec.path, Tool, spec.text("name"), spec.text("description", ""), parameters, cache)


def _response_format(value: object) -> dict[str, Any] | None:
    """The response format the adapter writes ``outputConfig.textFormat`` for."""
    if value is None:
        return None
    fmt = Obj(value, "outputConfig").opt_obj("textFormat")
    if fmt is None:
        return None
    if fmt.text("type") != "json_schema":
        raise fail(fmt.at("type"), "expected 'json_schema'")
    definition = fmt.obj("structure").obj("jsonSchema")
    text = definition.text("schema")
    try:
        schema = json.loads(text)
    except (ValueError, RecursionError):
        raise fail(definition.at("schema"), "not valid JSON") from None
    spec: dict[str, Any] = {"schema": json_value(schema, definition.at("schema"))}
    for key in ("name", "description"):
        if definition.has(key):
            spec[key] = definition.text(key)
    return {"type": "json_schema", "json_schema": spec}
