"""LangChain messages (``langchain_core.messages``) to a ``Conversation`` and back.

An ``AIMessage`` carries a turn's parts as a list of content blocks, in the
order the provider returned them, in the shapes langchain-anthropic uses for
Claude, so a history moves between ``ChatAnthropic`` and ``ChatThinkseal``:

- text: ``{"type": "text", "text": ...}`` (a lone text: ``content`` is the string);
- signed ``ThinkingBlock.Text``: ``{"type": "thinking", "thinking": ..., "signature": ...}``;
- unsigned ``ThinkingBlock.Text``: ``{"type": "reasoning", "reasoning": ...}`` (langchain-core's block);
- ``ThinkingBlock.Redacted``: ``{"type": "redacted_thinking", "data": ...}``;
- ``ThinkingBlock.Opaque``: ``{"type": "reasoning", "extras": {"thinkseal_opaque": {"provider", "data"}}}``;
- ``Native``: ``{"type": "non_standard", "value": {"thinkseal_native": {"provider", "data"[, "text"]}}}``;
- ``ToolCall``: ``AIMessage.tool_calls``, and also a ``{"type": "tool_use", ...}``
  block in place when a part follows it (Claude interleaves), as
  langchain-anthropic writes it.

Opaque and native data stay the JSON text thinkseal holds, so they come back
byte for byte through ``messages_to_dict`` / ``messages_from_dict`` and any
JSON store. Read also: ``reasoning`` blocks with ``extras.signature``
(langchain-core's v1 form of Claude thinking), a ``non_standard`` block
holding a ``redacted_thinking`` one, ``tool_call`` blocks, and
``additional_kwargs["reasoning_content"]`` (DeepSeek-style integrations).
Blocks that all carry an integer ``index`` (an aggregated stream) are read in
index order. ``ToolMessage(status="error")`` is ``is_error``; ``SystemMessage``
is ``SystemMessage``; ``HumanMessage`` is ``UserMessage`` (text, images).

Imported thinking is never bound: the adapter's ledger recognises what it
recorded (``thinkseal.Ledger.attach``). Anything else, or a malformed
message, raises ``thinkseal.ValidationError`` naming its path
(``messages[2].content[1].signature``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages import SystemMessage as LCSystemMessage
from langchain_core.messages import ToolMessage as LCToolMessage

from ..._blocks import ThinkingBlock
from ..._content import CacheBreakpoint, ContentPart, Image, Native
from ..._conversation import Conversation
from ..._errors import ValidationError
from ..._messages import AssistantMessage, Message, Part, SystemMessage, ToolCall, ToolMessage, UserMessage
from .._common import Obj, arguments, assistant, b64, b64decode, breakpoint_of, data_url, fail, made, refuse, shown

if TYPE_CHECKING:
    from ..._reply import Reply

__all__ = ["export_message", "export_messages", "import_messages"]

OPAQUE_KEY: Final = "thinkseal_opaque"
NATIVE_KEY: Final = "thinkseal_native"
# Adapters whose replies LangChain reads with its Anthropic translator (content_blocks).
_CLAUDE: Final = ("anthropic", "vertex-anthropic")
# Adapters whose input token count leaves out cache reads and writes (LangChain counts them in).
_UNCACHED_INPUT: Final = ("anthropic", "vertex-anthropic", "bedrock")
_TARGET: Final = "LangChain's message format"


# -- import ------------------------------------------------------------------------------


def import_messages(messages: Sequence[BaseMessage]) -> Conversation:
    """A conversation from LangChain messages (``SystemMessage``,
    ``HumanMessage``, ``AIMessage``, ``ToolMessage`` and their chunks). A
    message of another kind, or a malformed one, raises ``ValidationError``
    at ``messages[i]...``."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise fail("messages", f"expected a list of LangChain messages, got {type(messages).__name__}")
    out: list[Message] = []
    for i, message in enumerate(messages):
        out.append(_message(message, f"messages[{i}]"))
    return made("messages", Conversation, out)


def _message(message: object, path: str) -> Message:
    if isinstance(message, AIMessage):
        return _assistant(message, path)
    if isinstance(message, HumanMessage):
        return made(path, UserMessage, _user_content(message.content, f"{path}.content"))
    if isinstance(message, LCSystemMessage):
        return made(path, SystemMessage, _user_content(message.content, f"{path}.content"))
    if isinstance(message, LCToolMessage):
        status = message.status
        if status not in ("success", "error"):
            raise fail(f"{path}.status", f"expected 'success' or 'error', got {status!r:.40}")
        call_id = message.tool_call_id
        if not isinstance(call_id, str):
            raise fail(f"{path}.tool_call_id", f"expected a string, got {type(call_id).__name__}")
        content = _user_content(message.content, f"{path}.content", images=False)
        return made(path, ToolMessage, content, call_id, status == "error")
    kind = getattr(message, "type", None) if isinstance(message, BaseMessage) else None
    what = f"a {type(message).__name__}" + (f" (type {kind!r})" if kind else "")
    raise fail(path, f"expected a SystemMessage, HumanMessage, AIMessage or ToolMessage, got {what}")


def _user_content(content: object, path: str, *, images: bool = True) -> str | list[ContentPart]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise fail(path, f"expected a string or a list of content blocks, got {type(content).__name__}")
    parts: list[ContentPart] = []
    for j, block in enumerate(content):
        where = f"{path}[{j}]"
        if isinstance(block, str):
            parts.append(block)
            continue
        node = Obj(block, where)
        kind = node.text("type")
        if kind == "text":
            parts.append(node.text("text"))
        elif images and kind == "image_url":
            url = node.value.get("image_url")
            url = Obj(url, node.at("image_url")).text("url") if isinstance(url, Mapping) else node.text("image_url")
            parts.append(_image_url(url, node.at("image_url")))
        elif images and kind == "image" and node.has("url") and not node.has("base64"):
            parts.append(made(node.at("url"), Image, url=node.text("url")))
        elif images and kind == "image" and node.has("base64"):
            raw = b64decode(node.text("base64"), node.at("base64"))
            parts.append(made(where, Image, raw, node.text("mime_type")))
        else:
            raise fail(where, f"a {shown(kind)} block has no thinkseal counterpart here (text and images are read)")
        parts.extend(breakpoint_of(node))
    return parts


def _image_url(url: str, path: str) -> Image:
    inline = data_url(url)
    if inline is None:
        return made(path, Image, url=url)
    media, data = inline
    return made(path, Image, b64decode(data, path), media)


def _assistant(message: AIMessage, path: str) -> AssistantMessage:
    if message.invalid_tool_calls:
        bad = message.invalid_tool_calls[0]
        why = f"a tool call whose arguments are not JSON: {bad.get('error')!s:.80}"
        raise fail(f"{path}.invalid_tool_calls[0]", why)
    calls: dict[str, ToolCall] = {}
    for k, call in enumerate(message.tool_calls):
        where = f"{path}.tool_calls[{k}]"
        node = Obj(call, where)
        args = arguments(node.value.get("args", {}), node.at("args"))
        made_call = made(where, ToolCall, node.text("id"), node.text("name"), args)
        if made_call.id in calls:
            raise fail(node.at("id"), f"a second tool call with id {shown(made_call.id)}")
        calls[made_call.id] = made_call
    placed: set[str] = set()
    parts: list[Part] = []
    content = message.content
    where = f"{path}.content"
    if isinstance(content, str):
        if content:
            parts.append(content)
    elif isinstance(content, list):
        for block, at in _in_order(content, where):
            part = _assistant_part(block, at, calls)
            if isinstance(part, ToolCall):
                if part.id in placed:
                    raise fail(at, f"a second block for tool call {shown(part.id)}")
                placed.add(part.id)
            if part is not None:
                parts.append(part)
    else:
        raise fail(where, f"expected a string or a list of content blocks, got {type(content).__name__}")
    parts.extend(call for call_id, call in calls.items() if call_id not in placed)
    reasoning = message.additional_kwargs.get("reasoning_content")
    if reasoning is not None and not any(isinstance(p, ThinkingBlock) for p in parts):
        if not isinstance(reasoning, str):
            raise fail(f"{path}.additional_kwargs.reasoning_content", "expected a string")
        if reasoning:
            parts.insert(0, ThinkingBlock.Text(reasoning))
    return assistant(parts, path)


def _in_order(content: list[Any], path: str) -> list[tuple[Any, str]]:
    """The blocks with their paths, in ``index`` order when every block has an
    integer one (an aggregated stream appends blocks in the order they
    first appeared, not where they stand)."""
    items = [(block, f"{path}[{j}]") for j, block in enumerate(content)]
    indexed: list[int] = []
    for block, _ in items:
        index = block.get("index") if isinstance(block, Mapping) else None
        if type(index) is not int:
            return items
        indexed.append(index)
    order = sorted(range(len(items)), key=lambda j: indexed[j])
    return [items[j] for j in order]


def _assistant_part(block: object, path: str, calls: Mapping[str, ToolCall]) -> Part | None:
    if isinstance(block, str):
        return block or None
    node = Obj(block, path)
    kind = node.text("type")
    if kind == "text":
        known = ("type", "text", "id", "index")
        if not node.only(*known):
            extra = sorted(k for k, v in node.value.items() if v is not None and k not in known)
            raise fail(path, f"a text block with fields thinkseal does not keep ({', '.join(extra)})")
        return node.text("text") or None
    if kind == "thinking":
        return made(path, ThinkingBlock.Text, node.text("thinking", ""), node.get("signature", str, None))
    if kind == "redacted_thinking":
        return made(node.at("data"), ThinkingBlock.Redacted, node.text("data"))
    if kind == "reasoning":
        return _reasoning(node)
    if kind in ("tool_use", "tool_call"):
        call_id = node.text("id")
        call = calls.get(call_id)
        if call is not None:
            return call
        key = "input" if kind == "tool_use" else "args"
        args = arguments(node.value.get(key, {}), node.at(key))
        return made(path, ToolCall, call_id, node.text("name"), args)
    if kind == "non_standard":
        value = node.obj("value")
        kept = value.opt_obj(NATIVE_KEY)
        if kept is not None:
            return made(kept.path, Native, kept.text("provider"), kept.text("data"), kept.get("text", str, None))
        if value.value.get("type") == "redacted_thinking":
            return made(value.at("data"), ThinkingBlock.Redacted, value.text("data"))
    raise fail(path, f"a {shown(kind)} block has no thinkseal counterpart in an assistant turn")


def _reasoning(node: Obj) -> Part | None:
    extras = node.opt_obj("extras")
    kept = extras.opt_obj(OPAQUE_KEY) if extras is not None else None
    if kept is not None:
        return made(kept.path, ThinkingBlock.Opaque, kept.text("provider"), kept.text("data"))
    text = node.text("reasoning", "")
    signature = extras.get("signature", str, None) if extras is not None else None
    if not text and not signature:
        return None  # an empty reasoning block says nothing (a stream may open one)
    return made(node.path, ThinkingBlock.Text, text, signature)


# -- export ------------------------------------------------------------------------------


def export_message(message: AssistantMessage | Reply) -> AIMessage:
    """An ``AIMessage`` holding every part of ``message`` (an
    ``AssistantMessage``, or a ``Reply``: then with its usage, stop reason,
    response id and served model), sealed data included, in the blocks the
    module docstring lists. ``import_messages`` reads it back to the same
    parts."""
    from ..._reply import Reply  # noqa: PLC0415

    reply = message if isinstance(message, Reply) else None
    turn = reply.message if reply is not None else message
    if not isinstance(turn, AssistantMessage):
        raise ValidationError("message: expected an AssistantMessage or a Reply", path="message")
    blocks = content_blocks(turn)
    binding = turn.thinking_binding
    provider = binding.origin.provider if binding is not None else None
    metadata: dict[str, Any] = {}
    if provider in _CLAUDE:
        metadata["model_provider"] = "anthropic"
    kwargs: dict[str, Any] = {}
    if reply is not None:
        metadata.update(reply_metadata(reply))
        usage = usage_metadata(reply, provider)
        if usage is not None:
            kwargs["usage_metadata"] = usage
        if reply.id is not None:
            kwargs["id"] = reply.id
    content: Any = blocks[0]["text"] if len(blocks) == 1 and blocks[0]["type"] == "text" else blocks
    calls = [{"type": "tool_call", "id": c.id, "name": c.name, "args": dict(c.arguments)} for c in turn.tool_calls]
    return AIMessage(content=content, tool_calls=calls, response_metadata=metadata, **kwargs)


def content_blocks(turn: AssistantMessage) -> list[dict[str, Any]]:
    """``turn``'s parts as ``AIMessage`` content blocks, in order; a tool call
    is a block only when another part follows it."""
    parts = turn.parts
    last_other = max((j for j, p in enumerate(parts) if not isinstance(p, ToolCall)), default=-1)
    blocks: list[dict[str, Any]] = []
    for j, part in enumerate(parts):
        if isinstance(part, ToolCall):
            if j < last_other:
                blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": dict(part.arguments)})
        else:
            blocks.append(_block(part))
    return blocks


def _block(part: Part) -> dict[str, Any]:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, ThinkingBlock.Text):
        if part.is_sealed:
            return {"type": "thinking", "thinking": part.text, "signature": part.signature}
        return {"type": "reasoning", "reasoning": part.text}
    if isinstance(part, ThinkingBlock.Redacted):
        return {"type": "redacted_thinking", "data": part.data}
    if isinstance(part, ThinkingBlock.Opaque):
        return {"type": "reasoning", "extras": {OPAQUE_KEY: {"provider": part.provider, "data": part.data}}}
    if isinstance(part, Native):
        kept: dict[str, Any] = {"provider": part.provider, "data": part.data}
        if part.text is not None:
            kept["text"] = part.text
        return {"type": "non_standard", "value": {NATIVE_KEY: kept}}
    raise ValidationError(f"message: a {type(part).__name__} part has no LangChain block", path="message")


def reply_metadata(reply: Reply) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if reply.model is not None:
        out["model_name"] = reply.model
    if reply.stop_reason is not None:
        out["stop_reason"] = reply.stop_reason
    if reply.id is not None:
        out["id"] = reply.id
    return out


def usage_metadata(reply: Reply, provider: str | None) -> dict[str, Any] | None:
    """``reply.usage`` as LangChain's ``UsageMetadata`` (None when the provider said nothing).
    LangChain's ``input_tokens`` counts the whole prompt, cache reads and writes included."""
    usage = reply.usage
    if usage.input_tokens is None and usage.output_tokens is None:
        return None
    read, write = usage.cache_read_tokens, usage.cache_write_tokens
    prompt = usage.input_tokens or 0
    if provider in _UNCACHED_INPUT:
        prompt += (read or 0) + (write or 0)
    output = usage.output_tokens or 0
    out: dict[str, Any] = {"input_tokens": prompt, "output_tokens": output, "total_tokens": prompt + output}
    details = {k: v for k, v in (("cache_read", read), ("cache_creation", write)) if v is not None}
    if details:
        out["input_token_details"] = details
    if usage.reasoning_tokens is not None:
        out["output_token_details"] = {"reasoning": usage.reasoning_tokens}
    return out


def export_messages(conversation: Conversation) -> list[BaseMessage]:
    """``conversation`` as LangChain messages (``import_messages`` reads them
    back). A part LangChain's messages cannot hold here (a document, another
    provider's native user block) raises ``ValidationError`` naming it."""
    if not isinstance(conversation, Conversation):
        raise ValidationError("conversation: expected a Conversation", path="conversation")
    out: list[BaseMessage] = []
    for i, message in enumerate(conversation.messages):
        if isinstance(message, AssistantMessage):
            out.append(export_message(message))
        elif isinstance(message, ToolMessage):
            status = "error" if message.is_error else "success"
            content = _export_content(message.content, i, images=False)
            out.append(LCToolMessage(content=content, tool_call_id=message.tool_call_id, status=status))
        elif isinstance(message, UserMessage):
            out.append(HumanMessage(content=_export_content(message.content, i)))
        elif isinstance(message, SystemMessage):
            out.append(LCSystemMessage(content=_export_content(message.content, i)))
        else:  # pragma: no cover - every Message kind is listed above
            raise refuse(i, "", f"a {type(message).__name__}", _TARGET)
    return out


def _export_content(content: str | Sequence[ContentPart], index: int, *, images: bool = True) -> Any:
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif isinstance(part, CacheBreakpoint) and blocks:
            control = {"type": "ephemeral", **({"ttl": part.ttl} if part.ttl else {})}
            blocks[-1] = {**blocks[-1], "cache_control": control}
        elif images and isinstance(part, Image) and part.url is not None:
            blocks.append({"type": "image_url", "image_url": {"url": part.url}})
        elif images and isinstance(part, Image) and part.data is not None:
            url = f"data:{part.media_type};base64,{b64(part.data)}"
            blocks.append({"type": "image_url", "image_url": {"url": url}})
        else:
            raise refuse(index, f".content[{j}]", part, _TARGET)
    return blocks
