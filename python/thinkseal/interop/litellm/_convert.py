"""LiteLLM's chat messages to a ``Conversation``, and the rewrites the
callback makes to a request LiteLLM is about to send.

LiteLLM speaks the OpenAI chat format and carries Claude's thinking beside it:
an assistant message has ``thinking_blocks`` (``{"type": "thinking",
"thinking", "signature"}`` / ``{"type": "redacted_thinking", "data"}``, also
mirrored under ``provider_specific_fields``), may hold the same blocks inside a
``content`` list, and has ``reasoning_content``, the thinking text joined.
Everything else is ``thinkseal.interop.openai.import_chat``'s format, and is
read by it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from ..._blocks import ThinkingBlock
from ..._conversation import Conversation
from ..._errors import ValidationError
from ..._messages import AssistantMessage, Message
from .._common import Obj, fail, items_of, kind_name, made
from ..openai import import_chat

# The provider ids whose API takes thinking only signed: unsealed, a turn's
# thinking is not sent at all (docs/api.md). The others take its text.
CLAUDE_IDS: Final = frozenset({"anthropic", "bedrock", "vertex-anthropic"})
THINKING_TYPES: Final = ("thinking", "redacted_thinking")
# Fields of LiteLLM's assistant message that import_chat has no use for: the
# thinking (read here), its mirror, and the legacy function call (always null).
_SET_ASIDE: Final = ("thinking_blocks", "provider_specific_fields")

Datum = tuple[str, str]  # ("thinking", signature) or ("redacted_thinking", data)


# -- reading ---------------------------------------------------------------------------------


def plain_message(value: object, path: str) -> dict[str, Any]:
    """A message as a dict: LiteLLM's ``Message`` objects (what
    ``response.choices[0].message`` is) are dumped, as are its tool calls."""
    if not isinstance(value, Mapping):
        dump = getattr(value, "model_dump", None)
        if not callable(dump):
            raise fail(path, f"expected a message (a dict or a LiteLLM Message), got {kind_name(value)}")
        value = dump()
        if not isinstance(value, Mapping):
            raise fail(path, f"expected a message, got a {type(value).__name__} whose model_dump() is not a dict")
    message = dict(value)
    calls = message.get("tool_calls")
    if isinstance(calls, (list, tuple)):
        message["tool_calls"] = [_plain_call(call) for call in calls]
    return message


def _plain_call(call: object) -> object:
    dump = getattr(call, "model_dump", None)
    if not isinstance(call, Mapping) and callable(dump):
        return dump()
    if isinstance(call, Mapping):
        function = call.get("function")
        dump = getattr(function, "model_dump", None)
        if function is not None and not isinstance(function, Mapping) and callable(dump):
            return {**call, "function": dump()}
    return call


def _thinking_items(message: Mapping[str, Any], path: str) -> list[tuple[Any, str]]:
    """The thinking blocks of an assistant message, each with its path:
    ``thinking_blocks`` (or its mirror under ``provider_specific_fields``),
    then those inside a ``content`` list that are not already among them."""
    found: list[tuple[Any, str]] = []
    if message.get("thinking_blocks") is not None:
        found = items_of(message["thinking_blocks"], f"{path}.thinking_blocks")
    else:
        mirror = message.get("provider_specific_fields")
        if isinstance(mirror, Mapping) and mirror.get("thinking_blocks") is not None:
            found = items_of(mirror["thinking_blocks"], f"{path}.provider_specific_fields.thinking_blocks")
    content = message.get("content")
    if isinstance(content, (list, tuple)):
        seen = [value for value, _ in found]
        for k, item in enumerate(content):
            if isinstance(item, Mapping) and item.get("type") in THINKING_TYPES and item not in seen:
                found.append((item, f"{path}.content[{k}]"))
    return found


def _block(value: object, path: str) -> ThinkingBlock:
    node = Obj(value, path)
    kind = node.text("type")
    if kind == "thinking":
        return made(path, ThinkingBlock.Text, node.get("thinking", str, ""), node.get("signature", str, None))
    if kind == "redacted_thinking":
        return made(path, ThinkingBlock.Redacted, node.text("data"))
    raise fail(node.at("type"), f"expected 'thinking' or 'redacted_thinking', got {kind!r:.40}")


def _without_thinking(message: dict[str, Any]) -> dict[str, Any]:
    """The message as ``import_chat`` reads it: thinking set aside."""
    out = {k: v for k, v in message.items() if k not in _SET_ASIDE}
    if out.get("function_call") is None:
        out.pop("function_call", None)
    content = out.get("content")
    if isinstance(content, (list, tuple)):
        out["content"] = [i for i in content if not (isinstance(i, Mapping) and i.get("type") in THINKING_TYPES)]
    return out


def import_messages(
    messages: Sequence[object],
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    response_format: object = None,
) -> Conversation:
    """A conversation from the ``messages`` of a LiteLLM chat request (dicts
    or LiteLLM ``Message`` objects), its ``tools`` and ``response_format`` (a
    pydantic class, which LiteLLM also takes, is left out). An assistant
    message's ``thinking_blocks`` become its thinking, in their order;
    ``reasoning_content`` is read only when there are none (unsigned text).
    Unbound, as every import: the ledger recognises what it recorded."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ValidationError(f"messages: expected a list of messages, got {kind_name(messages)}", path="messages")
    plain: list[dict[str, Any]] = []
    thinking: dict[int, list[ThinkingBlock]] = {}
    for i, value in enumerate(messages):
        path = f"messages[{i}]"
        message = plain_message(value, path)
        if message.get("role") == "assistant":
            blocks = [_block(item, where) for item, where in _thinking_items(message, path)]
            message = _without_thinking(message)
            if blocks:
                thinking[i] = blocks
                # The joined text of the same blocks: read once, from them.
                message.pop("reasoning_content", None)
                message.pop("reasoning", None)
        plain.append(message)
    fmt = response_format if isinstance(response_format, Mapping) else None
    conversation = import_chat(plain, tools=tools, response_format=fmt)
    if not thinking:
        return conversation
    out: list[Message] = list(conversation)
    for i, blocks in thinking.items():
        turn = out[i]
        assert isinstance(turn, AssistantMessage)  # import_chat keeps one message per message, in order
        out[i] = turn.with_thinking(blocks)
    return conversation.with_messages(out)


def import_reply(response: object) -> AssistantMessage | None:
    """The assistant message of a LiteLLM ``ModelResponse`` (its first
    choice), or None when it has none (an embedding, an error, no choices)."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, (list, tuple)) or not choices:
        return None
    message = getattr(choices[0], "message", None)
    if message is None:
        return None
    conversation = import_messages([plain_message(message, "response.choices[0].message")])
    turn = conversation[0]
    return turn if isinstance(turn, AssistantMessage) else None


def digest(model: str, conversation: Conversation) -> str:
    """A key for the stash of decisions: the model and the whole request."""
    return hashlib.sha256(f"{model}\n{conversation.to_json()}".encode()).hexdigest()


def sealed_data(turn: AssistantMessage) -> set[Datum]:
    out: set[Datum] = set()
    for block in turn.thinking:
        if isinstance(block, ThinkingBlock.Redacted):
            out.add(("redacted_thinking", block.data))
        elif isinstance(block, ThinkingBlock.Text) and block.signature:
            out.add(("thinking", block.signature))
    return out


# -- rewriting -------------------------------------------------------------------------------


def _unsealed_blocks(blocks: Iterable[object], claude: bool) -> list[object]:
    """Thinking blocks as the provider takes them unsealed: none for Claude,
    else the text of each signed or unsigned block, without its signature.
    Anything that is not a thinking block is kept as it is."""
    out: list[object] = []
    for block in blocks:
        if not (isinstance(block, Mapping) and block.get("type") in THINKING_TYPES):
            out.append(block)
        elif not claude and block.get("type") == "thinking" and block.get("thinking"):
            out.append({k: v for k, v in block.items() if k != "signature"})
    return out


def unsealed_message(value: object, claude: bool) -> dict[str, Any]:
    """A LiteLLM assistant message with its sealed data taken out, as a new
    dict (the caller's message is not touched); every other field as it was."""
    message = plain_message(value, "message")
    for holder in (message, message.get("provider_specific_fields")):
        if isinstance(holder, Mapping) and holder.get("thinking_blocks") is not None:
            blocks = _unsealed_blocks(holder["thinking_blocks"], claude)
            changed = {**holder, "thinking_blocks": blocks} if blocks else {**holder}
            if not blocks:
                changed.pop("thinking_blocks")
            if holder is message:
                message = changed
            else:
                message["provider_specific_fields"] = changed
    content = message.get("content")
    if isinstance(content, (list, tuple)):
        message["content"] = _unsealed_blocks(content, claude)
    return message


def unsealed_messages(messages: Sequence[object], indices: Iterable[int], claude: bool) -> list[object]:
    """``messages`` with the turns at ``indices`` unsealed (a new list)."""
    out = list(messages)
    for i in indices:
        out[i] = unsealed_message(out[i], claude)
    return out


def scrub_claude_body(body: dict[str, Any], stale: set[Datum]) -> int:
    """Take the ``stale`` sealed blocks out of an Anthropic Messages request
    body as LiteLLM built it, in place; returns how many were taken out. A
    block is known by its signature (or redacted data), so this does not
    depend on how LiteLLM merged or reordered the turns."""
    removed = 0
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        kept = [block for block in content if _datum_of(block) not in stale]
        removed += len(content) - len(kept)
        if len(kept) != len(content):
            message["content"] = kept
    return removed


def _datum_of(block: object) -> Datum | None:
    if isinstance(block, Mapping):
        if block.get("type") == "thinking" and isinstance(block.get("signature"), str):
            return ("thinking", block["signature"])
        if block.get("type") == "redacted_thinking" and isinstance(block.get("data"), str):
            return ("redacted_thinking", block["data"])
    return None
