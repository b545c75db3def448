"""OpenRouter chat completions (base URL ``https://openrouter.ai/api/v1``; path
``/chat/completions``, i.e. ``https://openrouter.ai/api/v1/chat/completions``).
The common chat-completions mapping is in ``_chat``.

What OpenRouter requires, and what thinkseal does:

- A reply carries ``message.reasoning`` (text) and ``message.reasoning_details``
  (items of type ``reasoning.text`` with an optional ``signature``,
  ``reasoning.summary``, ``reasoning.encrypted`` with ``data``; unknown types are
  kept too). thinkseal stores the text as an unsigned ``ThinkingBlock.Text`` and
  each item, in order, as ``ThinkingBlock.Opaque("openrouter", item)`` where the
  item is compact JSON with sorted keys and without null fields, so the same
  item gives the same data whether it was received whole or streamed. A reply
  with items is sealed and bound to the request it answered.
- Replay: ``reasoning`` (the turn's unsigned text) goes back on every assistant
  message that has some. ``reasoning_details`` must come back unmodified and in
  order ("the entire sequence of consecutive reasoning blocks must match"), and
  upstream signatures (Claude's, Gemini's) hold only for the conversation they
  were made in; so the items go back, exactly as stored, only while the replay
  decision keeps the turn (same provider, model and account, turn and prefix
  unchanged). Otherwise the turn goes out with its text only.
- Streaming: ``delta.reasoning`` fragments are concatenated; ``delta.reasoning_details``
  fragments merge by ``index`` and ``type``: ``text`` and ``summary`` are
  concatenated, the last non-empty ``signature``, ``data``, ``id`` and ``format``
  win, so a signature arriving alone in a text-less fragment joins its item.
- Options (OpenRouter's own names): ``reasoning`` ``{effort | max_tokens, exclude,
  enabled, context, mode}`` (effort: xhigh, high, medium, low, minimal, none;
  ``effort`` and ``max_tokens`` are alternatives), ``include_reasoning`` (bool),
  ``max_tokens`` >= 1, ``temperature`` 0..2, ``top_p`` 0..1,
  ``frequency_penalty`` and ``presence_penalty`` -2..2; anything else (``provider``,
  ``transforms``, ``tool_choice``, ...) passes through unchecked.
- ``response_format``: ``text``, ``json_object`` and ``json_schema`` (structured
  outputs) pass through in OpenAI's shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._blocks import ThinkingBlock
from .._errors import ResponseError, ValidationError
from .._messages import AssistantMessage
from ._chat import ChatProvider, ThinkingDeltas, join_text, reasoning_text
from ._options import check_choice, check_flag, check_number, check_object
from ._response import Node, valid_text

PROVIDER_ID = "openrouter"
REASONING_EFFORTS = ("xhigh", "high", "medium", "low", "minimal", "none")
REASONING_CONTEXTS = ("auto", "all_turns", "current_turn")
REASONING_MODES = ("standard", "pro")

# Item fields that are strings when present; the required ones per item type.
_STRING_FIELDS = ("text", "summary", "data", "signature", "id", "format")
_REQUIRED = {"reasoning.summary": "summary", "reasoning.encrypted": "data"}
# Streamed fragments of these fields are pieces of one text.
_CONCATENATED = ("text", "summary")


def check_detail(item: Mapping[str, Any], path: str) -> None:
    """One ``reasoning_details`` item has the documented shape."""
    kind = item.get("type")
    if not isinstance(kind, str) or not kind:
        raise ResponseError("expected a non-empty string", path=f"{path}.type")
    required = _REQUIRED.get(kind)
    if required is not None and item.get(required) is None:
        raise ResponseError(f"missing required field of a {kind} item", path=f"{path}.{required}")
    for field in _STRING_FIELDS:
        value = item.get(field)
        if value is not None:
            if not isinstance(value, str):
                raise ResponseError(f"expected string, got {type(value).__name__}", path=f"{path}.{field}")
            valid_text(value, f"{path}.{field}")
    index = item.get("index")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
        raise ResponseError(f"expected integer, got {type(index).__name__}", path=f"{path}.index")


def detail_block(item: Mapping[str, Any], path: str) -> ThinkingBlock:
    """The Opaque block of one item: compact JSON, keys sorted, null fields left
    out, so received and streamed copies of an item are the same text."""
    check_detail(item, path)
    try:
        data = json.dumps(
            {k: v for k, v in item.items() if v is not None},
            ensure_ascii=False,
            separators=(",", ":"),
            sort_keys=True,
            allow_nan=False,
        )
    except (TypeError, ValueError) as exc:
        raise ResponseError(f"not JSON: {exc}", path=path) from None
    return ThinkingBlock.Opaque(PROVIDER_ID, valid_text(data, path))


def detail_items(message: AssistantMessage) -> list[Any]:
    """The ``reasoning_details`` items of a turn's OpenRouter Opaque blocks, in order."""
    items = []
    for i, block in enumerate(message.thinking):
        if isinstance(block, ThinkingBlock.Opaque) and block.provider == PROVIDER_ID:
            try:
                item = json.loads(block.data)
            except ValueError:
                item = None
            if not isinstance(item, dict):
                raise ValidationError(
                    f"AssistantMessage.thinking[{i}]: an openrouter Opaque block must hold a JSON object",
                    path=f"AssistantMessage.thinking[{i}].data",
                )
            items.append(item)
    return items


class DetailDeltas:
    """``delta.reasoning`` text and ``delta.reasoning_details`` fragments."""

    __slots__ = ("_items", "_text")

    def __init__(self) -> None:
        self._text: list[str] = []
        # (index, type) -> merged item, in order of first appearance
        self._items: dict[tuple[int, str], dict[str, Any]] = {}

    def feed(self, delta: Node) -> None:
        text = delta.opt("reasoning", str)
        if text:
            self._text.append(text)
        for node in delta.items("reasoning_details", required=False):
            node.object()
            kind = node.get("type", str)
            index = node.opt("index", int)
            if index is None:
                # No index: it continues the last item if that one is of its type.
                last = next(reversed(self._items), None)
                index = last[0] if last is not None and last[1] == kind else len(self._items)
            item = self._items.setdefault((index, kind), {})
            self._merge(item, node)

    @staticmethod
    def _merge(item: dict[str, Any], node: Node) -> None:
        for key, value in node.value.items():
            if value is None:
                continue
            if key in _CONCATENATED:
                item[key] = item.get(key, "") + node.get(key, str)
            elif isinstance(value, str):
                if value or key not in item:  # the last non-empty value wins
                    item[key] = value
            else:
                item[key] = value

    def blocks(self) -> list[ThinkingBlock]:
        blocks: list[ThinkingBlock] = []
        text = join_text(self._text, "$.choices[0].delta.reasoning")
        if text:
            blocks.append(ThinkingBlock.Text(text))
        for n, item in enumerate(self._items.values()):
            for key in _CONCATENATED:
                if key in item:
                    item[key] = join_text([item[key]], f"$.choices[0].delta.reasoning_details[{n}].{key}")
            blocks.append(detail_block(item, f"$.choices[0].delta.reasoning_details[{n}]"))
        return blocks


class Adapter(ChatProvider):
    id = PROVIDER_ID

    def validate_options(self, options: Mapping[str, Any], stream: bool) -> None:
        reasoning = check_object(options, "reasoning")
        if reasoning is not None:
            check_choice(reasoning.get("effort"), REASONING_EFFORTS, "reasoning.effort")
            check_number(reasoning, "max_tokens", 0, integer=True, path="reasoning.max_tokens")
            if reasoning.get("effort") is not None and reasoning.get("max_tokens") is not None:
                raise ValidationError(
                    "reasoning: give either effort or max_tokens, not both", path="reasoning.max_tokens"
                )
            check_flag(reasoning.get("exclude"), "reasoning.exclude")
            check_flag(reasoning.get("enabled"), "reasoning.enabled")
            check_choice(reasoning.get("context"), REASONING_CONTEXTS, "reasoning.context")
            check_choice(reasoning.get("mode"), REASONING_MODES, "reasoning.mode")
        check_flag(options.get("include_reasoning"), "include_reasoning")
        check_number(options, "max_tokens", 1, integer=True)
        check_number(options, "temperature", 0, 2)
        check_number(options, "top_p", 0, 1)
        check_number(options, "frequency_penalty", -2, 2)
        check_number(options, "presence_penalty", -2, 2)

    def reasoning_fields(self, message: AssistantMessage, shape: str) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if message.thinking_text:
            fields["reasoning"] = message.thinking_text
        # Opaque blocks are still on a sent turn only if the replay decision kept it.
        items = detail_items(message)
        if items:
            fields["reasoning_details"] = items
        return fields

    def read_thinking(self, message: Node) -> list[ThinkingBlock]:
        blocks = reasoning_text(message, "reasoning")
        for node in message.items("reasoning_details", required=False):
            node.object()
            blocks.append(detail_block(node.value, node.path))
        return blocks

    def thinking_deltas(self) -> ThinkingDeltas:
        return DetailDeltas()
