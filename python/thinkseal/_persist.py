"""Versioned, lossless JSON for messages and conversations (docs/persistence.md).

A stored assistant turn keeps its parts in order and its binding as text. A
binding is never re-derived on load: a turn or history edited on disk keeps its
old binding, which then no longer matches, so the replay report says
``turn-changed`` or ``prefix-changed`` from the edit on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._binding import Binding
from ._blocks import ThinkingBlock
from ._errors import ThinksealError, ValidationError
from ._messages import AssistantMessage, Message, Part, SystemMessage, ToolCall, ToolMessage, UserMessage
from ._tool import Tool

if TYPE_CHECKING:
    from ._conversation import Conversation

FORMAT = "thinkseal.conversation"
FORMAT_VERSION = 1


def _part_to_dict(part: Part) -> dict[str, Any]:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, ToolCall):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    if isinstance(part, ThinkingBlock.Text):
        return {"type": "thinking", "text": part.text, "signature": part.signature}
    if isinstance(part, ThinkingBlock.Redacted):
        return {"type": "redacted_thinking", "data": part.data}
    assert isinstance(part, ThinkingBlock.Opaque)
    return {"type": "opaque_thinking", "provider": part.provider, "data": part.data}


def message_to_dict(message: Message) -> dict[str, Any]:
    if isinstance(message, AssistantMessage):
        binding = message.thinking_binding
        return {
            "role": "assistant",
            "parts": [_part_to_dict(p) for p in message.parts],
            "binding": None if binding is None else str(binding),
        }
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "content": message.content,
            "tool_call_id": message.tool_call_id,
            "is_error": message.is_error,
        }
    assert isinstance(message, (SystemMessage, UserMessage))
    return {"role": message.role, "content": message.content}


class _Reader:
    """Field access on a decoded dict that fails with the path of the field."""

    def __init__(self, data: object, path: str) -> None:
        if not isinstance(data, Mapping):
            raise ValidationError(f"{path}: expected an object, got {type(data).__name__}", path=path)
        self.data = data
        self.path = path

    def get(self, key: str, *, default: object = ..., kind: type | tuple[type, ...] = object) -> Any:
        if key not in self.data:
            if default is ...:
                raise ValidationError(f"{self.path}.{key}: missing", path=f"{self.path}.{key}")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kinds and int in kinds):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise ValidationError(
                f"{self.path}.{key}: expected {names}, got {type(value).__name__}", path=f"{self.path}.{key}"
            )
        return value


def _part_from_dict(data: object, path: str) -> Part:
    r = _Reader(data, path)
    kind = r.get("type", kind=str)
    if kind == "text":
        return str(r.get("text", kind=str))
    if kind == "tool_call":
        return ToolCall(r.get("id", kind=str), r.get("name", kind=str), r.get("arguments", kind=dict))
    if kind == "thinking":
        return ThinkingBlock.Text(r.get("text", kind=str), r.get("signature", default=None, kind=(str, type(None))))
    if kind == "redacted_thinking":
        return ThinkingBlock.Redacted(r.get("data", kind=str))
    if kind == "opaque_thinking":
        return ThinkingBlock.Opaque(r.get("provider", kind=str), r.get("data", kind=str))
    raise ValidationError(f"{path}.type: unknown part type {kind!r}", path=f"{path}.type")


def message_from_dict(data: Mapping[str, Any], *, path: str = "$") -> Message:
    """The message written by ``Message.to_dict()``. ``ValidationError`` names the
    field of anything malformed."""
    r = _Reader(data, path)
    role = r.get("role", kind=str)
    try:
        if role in ("system", "user"):
            cls = SystemMessage if role == "system" else UserMessage
            return cls(r.get("content", kind=str))
        if role == "tool":
            return ToolMessage(
                r.get("content", kind=str),
                r.get("tool_call_id", kind=str),
                r.get("is_error", default=False, kind=bool),
            )
        if role == "assistant":
            raw_parts = r.get("parts", kind=list)
            parts = [_part_from_dict(p, f"{path}.parts[{i}]") for i, p in enumerate(raw_parts)]
            message = AssistantMessage.from_parts(parts)
            binding = r.get("binding", default=None, kind=(str, type(None)))
            return message if binding is None else message._bound(Binding.parse(binding))
    except ValidationError as err:
        raise _under(path, err) from err
    raise ValidationError(f"{path}.role: unknown role {role!r}", path=f"{path}.role")


def _under(path: str, err: ValidationError) -> ValidationError:
    """``err`` (raised by a constructor, with a path like ``Tool.name``) re-rooted
    at the document path of the value being loaded."""
    if err.path is not None and err.path.startswith(path):
        return err
    inner = err.path or ""
    return ValidationError(f"{path}: {err}", path=f"{path}.{inner}" if inner else path)


def _tool_from_dict(data: object, path: str) -> Tool:
    r = _Reader(data, path)
    try:
        return Tool(
            r.get("name", kind=str),
            r.get("description", default="", kind=str),
            r.get("parameters", default={"type": "object", "properties": {}}, kind=dict),
        )
    except ValidationError as err:
        raise _under(path, err) from err


def conversation_to_json(conversation: Conversation) -> str:
    document = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "messages": [message_to_dict(m) for m in conversation],
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in conversation.tools
        ],
        "response_format": conversation.response_format,
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def _refuse_constant(name: str) -> None:
    raise ValidationError(f"$: {name} is not valid JSON", path="$")


def conversation_from_json(text: str | bytes) -> Conversation:
    from ._conversation import Conversation

    if not isinstance(text, (str, bytes, bytearray)):
        raise ValidationError(f"$: expected JSON text, got {type(text).__name__}", path="$")
    try:
        document = json.loads(text, parse_constant=_refuse_constant)
    except ThinksealError:
        raise
    except (ValueError, RecursionError) as err:  # JSONDecodeError, bad UTF-8, digit limit
        raise ValidationError(f"$: not valid JSON: {err}", path="$") from None
    r = _Reader(document, "$")
    if r.get("format", kind=str) != FORMAT:
        raise ValidationError(f"$.format: expected {FORMAT!r}", path="$.format")
    version = r.get("version", kind=int)
    if not 1 <= version <= FORMAT_VERSION:
        raise ValidationError(
            f"$.version: format version {version} is not supported (this release reads 1..{FORMAT_VERSION})",
            path="$.version",
        )
    messages = [message_from_dict(m, path=f"$.messages[{i}]") for i, m in enumerate(r.get("messages", kind=list))]
    tools = [_tool_from_dict(t, f"$.tools[{i}]") for i, t in enumerate(r.get("tools", default=[], kind=list))]
    response_format = r.get("response_format", default=None, kind=(dict, type(None)))
    try:
        return Conversation(messages, tools, response_format)
    except ValidationError as err:
        raise _under("$", err) from err
