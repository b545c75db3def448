"""pydantic-ai: ``ModelMessage`` lists (``ModelRequest`` / ``ModelResponse``) to a
``Conversation`` and back. pydantic-ai (``pydantic-ai-slim``) is imported only
inside these functions.

Requests: ``SystemPromptPart`` -> ``SystemMessage``; ``UserPromptPart`` ->
``UserMessage`` (text, ``ImageUrl`` and image ``BinaryContent`` -> ``Image``,
``DocumentUrl`` and PDF ``BinaryContent`` -> ``Document``, text/plain
``BinaryContent`` -> a text ``Document``, ``CachePoint`` ->
``CacheBreakpoint``); ``ToolReturnPart`` -> ``ToolMessage`` (``is_error`` for
the ``failed`` and ``retried`` outcomes; a non-string or empty return value
kept as ``Native("pydantic-ai", {"type": "tool-return", "content": value})``
with its JSON text); the deprecated ``RetryPromptPart`` -> an error
``ToolMessage`` (with a tool name) or a ``UserMessage`` of its
``model_response()`` text; ``RetryFeedbackPart`` -> a ``UserMessage`` of its
text. The agent's bookkeeping parts (instruction, tool-availability,
capability and settings deltas) describe the agent, not the conversation, and
are not imported; nor is ``ModelRequest.instructions``.

Responses: ``TextPart`` -> text; ``ToolCallPart`` -> ``ToolCall``;
``ThinkingPart`` by its ``provider_name`` (table in docs/interop.md):

- ``"anthropic"``, ``"bedrock"``: ``signature`` -> signed ``ThinkingBlock.Text``;
  id ``"redacted_thinking"`` / ``"redacted_content"`` -> ``Redacted(signature)``;
- ``"openai"`` (Responses): the parts of one reasoning item (same ``id``; the
  first carries ``encrypted_content`` as its signature) -> the summary as
  unsigned ``Text`` and ``Opaque("openai-responses", item)``, as the
  openai-responses adapter keeps a received item;
- no signature, id or details: unsigned ``Text``;
- anything else (another provider's signature, ``provider_details``): kept
  losslessly as ``Opaque("pydantic-ai", part as JSON)``, which no adapter sends.

Every other part (native tool calls and returns, files, compaction, text with
citations or details, multimodal content thinkseal has no type for) is kept
as ``Native("pydantic-ai", part as JSON)``, restored exactly on export. Ids of
text and tool-call parts, timestamps, usage and run metadata are not kept.
Imported thinking is never bound: ``Conversation.rebind(origin)`` vouches for it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from .._blocks import ThinkingBlock
from .._content import IMAGE_MEDIA_TYPES, CacheBreakpoint, ContentPart, Document, Image, Native
from .._conversation import Conversation
from .._errors import ValidationError
from .._messages import AssistantMessage, Message, Part, SystemMessage, ToolCall, ToolMessage, UserMessage
from ..providers.openai_responses import FOLLOWING
from ._common import arguments, assistant, compact, fail, made, refuse

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["export_messages", "import_messages"]

PYDANTIC_AI: Final = "pydantic-ai"
RESPONSES: Final = "openai-responses"
SUMMARY_SEPARATOR: Final = "\n\n"
_CLAUDE: Final = ("anthropic", "bedrock")
_REDACTED_IDS: Final = {"anthropic": "redacted_thinking", "bedrock": "redacted_content"}
_ERROR_OUTCOMES: Final = ("failed", "retried")
_BOOKKEEPING: Final = (
    "instruction",
    "instruction-delta",
    "instruction-baseline",
    "tool-availability-delta",
    "capability-load-delta",
    "model-settings-delta",
)
_TARGET: Final = "pydantic-ai's message format"


def _adapters() -> tuple[Any, Any, Any]:
    import pydantic  # noqa: PLC0415
    from pydantic_ai import messages as pm  # noqa: PLC0415

    return (
        pydantic.TypeAdapter(pm.ModelResponsePart),
        pydantic.TypeAdapter(pm.UserContent),
        pydantic.TypeAdapter(pm.ModelRequestPart),
    )


def _dump(adapter: Any, part: object, path: str) -> dict[str, Any]:
    value = adapter.dump_python(part, mode="json")
    if not isinstance(value, dict):
        raise fail(path, f"cannot keep a {type(part).__name__}")
    value.pop("timestamp", None)
    return value


# -- import ------------------------------------------------------------------------------


def import_messages(messages: Sequence[ModelMessage]) -> Conversation:
    """A conversation from pydantic-ai's ``ModelMessage`` list (what
    ``result.all_messages()`` returns, or ``ModelMessagesTypeAdapter`` loads).
    ``ValidationError`` names the offending part (``messages[3].parts[1]``)."""
    from pydantic_ai import messages as pm  # noqa: PLC0415

    response_ta, content_ta, _ = _adapters()
    out: list[Message] = []
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise fail("messages", f"expected a list of ModelMessage, got {type(messages).__name__}")
    for i, message in enumerate(messages):
        path = f"messages[{i}]"
        if isinstance(message, pm.ModelRequest):
            for j, part in enumerate(message.parts):
                out.extend(_request_part(pm, content_ta, part, f"{path}.parts[{j}]"))
        elif isinstance(message, pm.ModelResponse):
            parts: list[Part] = []
            items = list(message.parts)
            j = 0
            while j < len(items):
                taken, consumed = _response_parts(pm, response_ta, items, j, f"{path}.parts[{j}]")
                parts.extend(taken)
                j += consumed
            out.append(assistant(parts, f"{path}.parts"))
        else:
            raise fail(path, f"expected a ModelRequest or ModelResponse, got {type(message).__name__}")
    return made("messages", Conversation, out)


def _request_part(pm: Any, content_ta: Any, part: object, path: str) -> list[Message]:
    if isinstance(part, pm.SystemPromptPart):
        return [made(path, SystemMessage, part.content)]
    if isinstance(part, pm.UserPromptPart):
        content = part.content
        if isinstance(content, str):
            return [made(path, UserMessage, content)]
        parts = [_user_content(pm, content_ta, item, f"{path}.content[{k}]") for k, item in enumerate(content)]
        return [made(path, UserMessage, parts)]
    if isinstance(part, pm.ToolReturnPart):
        value = part.content
        body: list[ContentPart] | str
        if isinstance(value, str) and value.strip():
            body = value
        else:
            dumped = pm.tool_return_ta.dump_python(value, mode="json")
            text = part.model_response_str(wrap_if_error=False) or None
            kept = compact({"type": "tool-return", "content": dumped}, f"{path}.content")
            body = [made(f"{path}.content", Native, PYDANTIC_AI, kept, text)]
        return [made(path, ToolMessage, body, part.tool_call_id, part.outcome in _ERROR_OUTCOMES)]
    if isinstance(part, pm.RetryPromptPart):
        text = part.model_response()
        if part.tool_name is not None:
            return [made(path, ToolMessage, text, part.tool_call_id, True)]
        return [made(path, UserMessage, text)]
    if isinstance(part, pm.RetryFeedbackPart):
        return [made(path, UserMessage, part.model_response())]
    if getattr(part, "part_kind", None) in _BOOKKEEPING:
        return []
    raise fail(path, f"{type(part).__name__} has no counterpart in a thinkseal conversation")


def _user_content(pm: Any, content_ta: Any, item: Any, path: str) -> ContentPart:
    if isinstance(item, str):
        return item
    if isinstance(item, pm.CachePoint):
        return CacheBreakpoint(None if item.ttl == "5m" else item.ttl)
    plain_url = not getattr(item, "vendor_metadata", None) and not getattr(item, "force_download", False)
    plain_url = plain_url and getattr(item, "_media_type", None) is None and getattr(item, "_identifier", None) is None
    if type(item) is pm.ImageUrl and plain_url:
        return made(path, Image, url=item.url)
    if type(item) is pm.DocumentUrl and plain_url:
        return made(path, Document, url=item.url)
    if isinstance(item, pm.BinaryContent) and not item.vendor_metadata and item._identifier is None:
        media = item.media_type
        if media in IMAGE_MEDIA_TYPES and item.data:
            return made(path, Image, item.data, media)
        if media == "application/pdf" and item.data:
            return made(path, Document, item.data)
        if media == "text/plain":
            try:
                text = item.data.decode("utf-8")
            except UnicodeDecodeError:
                text = ""
            if text.strip():
                return made(path, Document, text=text)
    value = _dump(content_ta, item, path)
    return made(path, Native, PYDANTIC_AI, compact(value, path), _text_of(item))


def _text_of(item: object) -> str | None:
    text = getattr(item, "content", None)
    return text if isinstance(text, str) and text else None


def _response_parts(pm: Any, response_ta: Any, items: list[Any], j: int, path: str) -> tuple[list[Part], int]:
    """The thinkseal parts of ``items[j]`` (and of the parts of its reasoning
    item that follow it), and how many pydantic-ai parts they took."""
    part = items[j]
    if type(part) is pm.TextPart and not part.provider_details and not part.citations:
        return [part.content], 1
    if type(part) is pm.ToolCallPart:
        args = arguments(part.args if part.args is not None else {}, f"{path}.args")
        return [made(path, ToolCall, part.tool_call_id, part.tool_name, args)], 1
    if type(part) is pm.ThinkingPart:
        found = _thinking(pm, items, j, path)
        if found is not None:
            return found
    value = _dump(response_ta, part, path)
    text = part.content if type(part) is pm.TextPart else None
    if type(part) is pm.ThinkingPart:
        return [made(path, ThinkingBlock.Opaque, PYDANTIC_AI, compact(value, path))], 1
    return [made(path, Native, PYDANTIC_AI, compact(value, path), text or None)], 1


def _thinking(pm: Any, items: list[Any], j: int, path: str) -> tuple[list[Part], int] | None:
    part = items[j]
    provider = part.provider_name
    if part.provider_details:
        return None
    if provider in _CLAUDE:
        if part.id is None and part.signature:
            return [made(path, ThinkingBlock.Text, part.content, part.signature)], 1
        if part.id == _REDACTED_IDS[provider] and part.signature and not part.content:
            return [made(path, ThinkingBlock.Redacted, part.signature)], 1
    if provider == "openai" and part.id:
        # One reasoning item: the parts with its id that follow, the signature on the first only.
        group = [part]
        while (
            j + len(group) < len(items)
            and type(items[j + len(group)]) is pm.ThinkingPart
            and items[j + len(group)].id == part.id
            and items[j + len(group)].provider_name == provider
            and not items[j + len(group)].signature
            and not items[j + len(group)].provider_details
            and items[j + len(group)].content
        ):
            group.append(items[j + len(group)])
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": part.id,
            "summary": [{"type": "summary_text", "text": p.content} for p in group if p.content],
        }
        if part.signature:
            item["encrypted_content"] = part.signature
        if len(group) > 1 and not part.content:
            return None  # an empty summary part among others: not an item pydantic-ai writes
        summary = SUMMARY_SEPARATOR.join(p.content for p in group)
        blocks: list[Part] = [ThinkingBlock.Text(summary)] if summary else []
        blocks.append(made(path, ThinkingBlock.Opaque, RESPONSES, compact(item, path, sort=True)))
        return blocks, len(group)
    if part.id is None and not part.signature and provider is None and part.content:
        return [ThinkingBlock.Text(part.content)], 1
    return None


# -- export ------------------------------------------------------------------------------


def export_messages(conversation: Conversation) -> list[ModelMessage]:
    """``conversation``'s messages as pydantic-ai ``ModelMessage``\\ s: each run
    of system, user and tool messages one ``ModelRequest``, each assistant turn
    one ``ModelResponse``. Tools and the response format belong to the agent in
    pydantic-ai and are not part of its history. Raises ``ValidationError`` for
    a part the format cannot hold (another provider's opaque thinking or native
    block, a tool result for a call the history does not hold, a tool result
    of several parts)."""
    if not isinstance(conversation, Conversation):
        raise ValidationError("conversation: expected a Conversation", path="conversation")
    from pydantic_ai import messages as pm  # noqa: PLC0415

    response_ta, content_ta, _ = _adapters()
    names = {call.id: call.name for m in conversation if isinstance(m, AssistantMessage) for call in m.tool_calls}
    out: list[Any] = []
    request: list[Any] = []
    for i, message in enumerate(conversation.messages):
        if isinstance(message, AssistantMessage):
            if request:
                out.append(pm.ModelRequest(parts=request))
                request = []
            out.append(pm.ModelResponse(parts=_response_wire(pm, response_ta, message, i)))
        else:
            request.append(_request_wire(pm, content_ta, message, i, names))
    if request:
        out.append(pm.ModelRequest(parts=request))
    return out


def _request_wire(pm: Any, content_ta: Any, message: Message, index: int, names: dict[str, str]) -> Any:
    if isinstance(message, SystemMessage):
        if not isinstance(message.content, str) and len(message.content) != 1:
            raise refuse(index, ".content", "a system prompt of several parts or with a cache breakpoint", _TARGET)
        return pm.SystemPromptPart(content=message.text)
    if isinstance(message, UserMessage):
        if isinstance(message.content, str):
            return pm.UserPromptPart(content=message.content)
        return pm.UserPromptPart(
            content=[_content_wire(pm, content_ta, p, index, j) for j, p in enumerate(message.content)]
        )
    assert isinstance(message, ToolMessage)
    name = names.get(message.tool_call_id)
    if name is None:
        raise refuse(
            index,
            ".tool_call_id",
            "a tool result for a call the history does not hold",
            _TARGET,
            "it needs the tool name",
        )
    content: Any
    if isinstance(message.content, str):
        content = message.content
    elif len(message.content) == 1 and _tool_return(message.content[0]) is not None:
        content = _tool_return(message.content[0])
    else:
        raise refuse(index, ".content", "a tool result of several parts", _TARGET)
    return pm.ToolReturnPart(
        tool_name=name,
        content=content,
        tool_call_id=message.tool_call_id,
        outcome="failed" if message.is_error else "success",
    )


def _tool_return(part: object) -> Any:
    if isinstance(part, str):
        return part
    if isinstance(part, Native) and part.provider == PYDANTIC_AI and part.type == "tool-return":
        return part.value.get("content")
    return None


def _content_wire(pm: Any, content_ta: Any, part: ContentPart, index: int, j: int) -> Any:
    if isinstance(part, str):
        return part
    if isinstance(part, CacheBreakpoint):
        return pm.CachePoint(ttl=part.ttl or "5m")
    if isinstance(part, Image):
        if part.url is not None:
            return pm.ImageUrl(url=part.url)
        return pm.BinaryContent(data=part.data or b"", media_type=part.media_type or "")
    if isinstance(part, Document) and part.title is None and not part.citations:
        if part.url is not None:
            return pm.DocumentUrl(url=part.url)
        if part.data is not None:
            return pm.BinaryContent(data=part.data, media_type="application/pdf")
        return pm.BinaryContent(data=(part.text or "").encode(), media_type="text/plain")
    if isinstance(part, Native) and part.provider == PYDANTIC_AI:
        return content_ta.validate_python(part.value)
    hint = "pydantic-ai documents have no title or citations" if isinstance(part, Document) else ""
    raise refuse(index, f".content[{j}]", part, _TARGET, hint)


def _response_wire(pm: Any, response_ta: Any, message: AssistantMessage, index: int) -> list[Any]:
    origin = message.thinking_binding.origin.provider if message.thinking_binding is not None else None
    claude = "bedrock" if origin == "bedrock" else "anthropic"
    parts = message.parts
    out: list[Any] = []
    for j, part in enumerate(parts):
        if isinstance(part, str):
            out.append(pm.TextPart(content=part))
        elif isinstance(part, ToolCall):
            out.append(pm.ToolCallPart(tool_name=part.name, args=_plain(part.arguments), tool_call_id=part.id))
        elif isinstance(part, ThinkingBlock.Text) and part.is_sealed:
            out.append(pm.ThinkingPart(content=part.text, signature=part.signature, provider_name=claude))
        elif isinstance(part, ThinkingBlock.Text):
            after = parts[j + 1] if j + 1 < len(parts) else None
            if isinstance(after, ThinkingBlock.Opaque) and after.provider == RESPONSES:
                item = json.loads(after.data)
                if SUMMARY_SEPARATOR.join(_summaries(item)) == part.text:
                    continue  # the summary of the reasoning item after it
            out.append(pm.ThinkingPart(content=part.text))
        elif isinstance(part, ThinkingBlock.Redacted):
            out.append(pm.ThinkingPart(content="", id=_REDACTED_IDS[claude], signature=part.data, provider_name=claude))
        elif isinstance(part, ThinkingBlock.Opaque) and part.provider == RESPONSES:
            item = json.loads(part.data)
            if isinstance(item, dict):
                item.pop(FOLLOWING, None)  # the adapter's own record beside a stored item, not OpenAI's
            out.extend(_reasoning_wire(pm, item, index, j))
        elif isinstance(part, (ThinkingBlock.Opaque, Native)) and part.provider == PYDANTIC_AI:
            value = json.loads(part.data)
            out.append(response_ta.validate_python(value))
        else:
            raise refuse(index, f".parts[{j}]", part, _TARGET)
    return out


def _summaries(item: Any) -> list[str]:
    summary = item.get("summary") if isinstance(item, dict) else None
    return [p.get("text", "") for p in summary or () if isinstance(p, dict)]


def _reasoning_wire(pm: Any, item: Any, index: int, j: int) -> list[Any]:
    if (
        not isinstance(item, dict)
        or set(item) - {"type", "id", "summary", "encrypted_content"}
        or item.get("type") != "reasoning"
        or not isinstance(item.get("id"), str)
    ):
        raise refuse(
            index, f".parts[{j}]", "a reasoning item with fields besides id, summary and encrypted_content", _TARGET
        )
    texts = [t for t in _summaries(item) if t] or [""]
    signature = item.get("encrypted_content")
    out = []
    for k, text in enumerate(texts):
        out.append(
            pm.ThinkingPart(
                content=text, id=item["id"], signature=signature if k == 0 else None, provider_name="openai"
            )
        )
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
