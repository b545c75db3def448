"""Ollama's native chat API (``POST /api/chat``) as the gateway serves it, for
``ollama``: a JSON answer for ``"stream": false``, an NDJSON stream otherwise
(Ollama streams when the body has no ``"stream"``, and so does the reading here).

An assistant message is read by the ollama adapter, as it reads the message of
a reply (``parse`` of ``{"message": ..., "done": true}``), so a message a
client sends back as it got it is the very message the gateway bound and
recorded: its ``thinking`` an unsigned text block, its calls with the ids
``generated_call_id`` gives them. Tool results carry no call id, only
``tool_name``; each answers the first call of that name in the assistant turn
before it that no earlier result answered (a result without ``tool_name``,
the first unanswered call), which is how the adapter names the results it
writes. A result that answers no call, blank content, or a field the adapter
never writes on that role is not read: the body is then forwarded as it came.

Ollama's thinking carries no signature, so nothing in a request is sealed and
a body goes upstream byte for byte; only a turn whose calls no result answers
is rewritten (without those calls), by the adapter's own assistant writer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._content import ContentPart, Image
from .._conversation import Conversation
from .._errors import ThinksealError, ValidationError
from .._messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from ..interop._common import Obj, b64decode, fail, items_of, made, shown
from ..providers._chat import TOOL_ERROR_PREFIX
from ._surfaces import Incoming, Surface, _model

__all__ = ["OllamaChat"]

PATH: Final = "/api/chat"
# The fields the adapter writes on each role (``images`` on every message but the assistant's).
_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "system": ("role", "content"),
    "user": ("role", "content", "images"),
    "tool": ("role", "content", "images", "tool_name"),
}
# What an image's bytes start with, for the media types thinkseal keeps.
_SIGNATURES: Final = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


class OllamaChat(Surface):
    """``POST <route>/api/chat``."""

    field = "messages"

    def serves(self, path: str) -> bool:
        return path == PATH

    def read(self, body: Mapping[str, Any], path: str) -> Incoming:
        from ..interop.openai import import_chat  # noqa: PLC0415

        messages = body.get("messages")
        if not isinstance(messages, list):
            raise ValidationError("messages: expected a list", path="messages")
        # Ollama's tools are chat completions' function tools; its ``format`` is "json" or a schema.
        context = import_chat([], tools=body.get("tools"), response_format=_response_format(body.get("format")))
        out: list[Message] = []
        turns: dict[int, int] = {}
        calls: list[ToolCall] = []  # the calls of the last assistant turn no result answered yet
        for k, element in enumerate(messages):
            where = f"messages[{k}]"
            node = Obj(element, where)
            role = node.text("role")
            if role == "assistant":
                turn = self.assistant(node.value, k)
                calls = list(turn.tool_calls)
                turns[k] = k  # one wire message is one conversation message
                out.append(turn)
                continue
            fields = _FIELDS.get(role)
            if fields is None:
                expected = "'system', 'user', 'assistant' or 'tool'"
                raise fail(node.at("role"), f"expected {expected}, got {shown(role)}")
            # An empty field says nothing (the ollama SDK leaves every empty one out).
            extra = next((key for key, value in node.value.items() if key not in fields and value), None)
            if extra is not None:
                raise fail(node.at(extra), f"not a field of a {role} message")
            if role == "system":
                out.append(made(node.at("content"), SystemMessage, node.text("content")))
            elif role == "user":
                out.append(made(node.at("content"), UserMessage, _content(node)))
            else:
                out.append(_tool_result(node, calls))
        conversation = made("messages", Conversation, out, context.tools, context.response_format)
        return Incoming(conversation, self.field, turns, _model(body), _stream(body))

    def assistant(self, element: Mapping[str, Any], index: int) -> AssistantMessage:
        """Wire message ``index``, an assistant message, as the adapter reads
        the same message in a reply."""
        try:
            return self.adapter.parse({"message": dict(element), "done": True})
        except ThinksealError as err:
            inner = getattr(err, "path", None) or "$.message"
            where = inner.replace("$.message", f"messages[{index}]", 1)
            raise ValidationError(f"{where}: {err}", path=where) from None

    def turn_wire(self, turn: AssistantMessage) -> object | None:
        from ..providers import ollama  # noqa: PLC0415

        return ollama._assistant_wire(turn)  # the adapter's own writer; it sends every turn, even an empty one


def _stream(body: Mapping[str, Any]) -> bool:
    """Whether the answer streams: unless the body says ``"stream": false``, as Ollama does."""
    stream = body.get("stream", True)
    if not isinstance(stream, bool):
        raise ValidationError("stream: expected true or false", path="stream")
    return stream


def _response_format(value: object) -> dict[str, Any] | None:
    """The response format the adapter writes ``format`` for."""
    if value is None or value == "":
        return None
    if value == "json":
        return {"type": "json_object"}
    if isinstance(value, Mapping):
        return {"type": "json_schema", "json_schema": {"schema": value}}
    raise ValidationError('format: expected "json" or a JSON schema', path="format")


def _content(node: Obj) -> str | list[ContentPart]:
    """A message's ``content`` and ``images``, as the adapter writes a message's
    parts: the text, then the images (a text alone is a string)."""
    text = node.get("content", str, "")
    images = [_image(value, where) for value, where in items_of(node.value.get("images") or [], node.at("images"))]
    if not images:
        return text
    return [text, *images] if text else list(images)


def _image(value: object, where: str) -> Image:
    if not isinstance(value, str):
        raise fail(where, "expected a base64 string")
    data = b64decode(value, where)
    media = next((kind for start, kind in _SIGNATURES if data.startswith(start)), None)
    if media is None and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        media = "image/webp"
    if media is None:
        raise fail(where, "not a PNG, JPEG, GIF or WebP image")
    return made(where, Image, data, media)


def _tool_result(node: Obj, calls: list[ToolCall]) -> ToolMessage:
    """A tool result, paired with the call it answers (taken off ``calls``)."""
    name = node.get("tool_name", str, None)
    found = next((k for k, c in enumerate(calls) if name is None or c.name == name), None)
    if found is None:
        named = f"for {name!r} " if name is not None else ""
        raise fail(node.path, f"a tool result {named}that answers no call of the assistant turn before it")
    call = calls.pop(found)
    content, is_error = _error_content(_content(node))
    return made(node.at("content"), ToolMessage, content, call.id, is_error)


def _error_content(content: str | list[ContentPart]) -> tuple[str | list[ContentPart], bool]:
    """Tool content without the prefix the adapter writes before an error, and whether it had it."""
    if isinstance(content, str):
        error = content.startswith(TOOL_ERROR_PREFIX)
        return (content[len(TOOL_ERROR_PREFIX) :] if error else content), error
    first = content[0]
    if not isinstance(first, str) or not first.startswith(TOOL_ERROR_PREFIX):
        return content, False
    rest = first[len(TOOL_ERROR_PREFIX) :]
    return ([rest] if rest else []) + content[1:], True
