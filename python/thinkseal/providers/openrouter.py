"""OpenRouter chat completions (base URL ``https://openrouter.ai/api/v1``; path
``/chat/completions``, i.e. ``https://openrouter.ai/api/v1/chat/completions``).
The common chat-completions mapping is in ``_chat``.

What OpenRouter requires, and what thinkseal does (the rules, their sources and
the provider's error strings are in docs/providers.md#openrouter; this is how
the module implements them):

- A reply's ``message.reasoning`` becomes an unsigned ``ThinkingBlock.Text``
  and each ``reasoning_details`` item, in order, a
  ``ThinkingBlock.Opaque("openrouter", item)`` (compact JSON, sorted keys, no
  null fields, so a streamed item equals the same item received whole); a
  reply with items is sealed and bound.
- Replay: the text goes back on every assistant message that has some; the
  items, exactly as stored, only while the replay decision keeps the turn.
- Streamed ``reasoning_details`` fragments merge by ``index`` and ``type``.
- Options are checked with OpenRouter's own names (``reasoning``, sampling);
  the ``models`` fallback list is refused. Content parts, prompt caching
  (``cache_control`` on text parts and tools) and annotations (kept as
  ``Native("openrouter", item)``) follow docs/providers.md#openrouter.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._blocks import ThinkingBlock
from .._content import Document, Native
from .._errors import ResponseError, ValidationError
from .._messages import AssistantMessage
from .._tool import Tool
from ._chat import (
    ChatProvider,
    PartWriter,
    Pieces,
    ThinkingDeltas,
    data_url,
    join_text,
    native_block,
    reasoning_text,
    tool_wire,
)
from ._connection import CLAUDE_REJECTIONS, GEMINI_CORRUPTED, Connection
from ._options import check_choice, check_flag, check_number, check_object, check_openai_sampling
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
# Types of the blocks a reply carries in ``message.annotations``.
ANNOTATION_TYPES = frozenset({"url_citation", "file"})


def cache_control(ttl: str | None) -> dict[str, Any]:
    """OpenRouter's (Anthropic-style) cache marker."""
    return {"type": "ephemeral"} if ttl is None else {"type": "ephemeral", "ttl": ttl}


class Parts(PartWriter):
    """OpenRouter's content parts: OpenAI's, plus PDF files and cache marks on text."""

    def document(self, document: Document, where: str) -> dict[str, Any]:
        source = document.url if document.data is None else data_url(document.media_type, document.data)
        return {"type": "file", "file": {"filename": document.title or "document.pdf", "file_data": source}}

    def cache(self, part: dict[str, Any], ttl: str | None) -> bool:
        if part.get("type") != "text":
            return False  # OpenRouter documents cache_control on text parts only
        part["cache_control"] = cache_control(ttl)
        return True


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
    except RecursionError:
        raise ResponseError("nested too deeply", path=path) from None
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
    """``delta.reasoning`` text and ``delta.reasoning_details`` fragments. The
    pieces of each item's text and summary are kept in lists and joined once."""

    __slots__ = ("_items", "_pieces", "_text")

    def __init__(self) -> None:
        self._text = Pieces("$.choices[0].delta.reasoning")
        # (index, type) -> merged item, in order of first appearance; text and
        # summary pieces in _pieces under the same key.
        self._items: dict[tuple[int, str], dict[str, Any]] = {}
        self._pieces: dict[tuple[int, str], dict[str, list[str]]] = {}

    def feed(self, delta: Node) -> list[str]:
        # The deltas are the reasoning text; the items' pieces repeat it or summarise it.
        texts: list[str] = []
        text = delta.opt("reasoning", str)
        if text:
            texts.append(self._text.add(text))
        for node in delta.items("reasoning_details", required=False):
            node.object()
            kind = node.get("type", str)
            index = node.opt("index", int)
            if index is None:
                # No index: it continues the last item if that one is of its type.
                last = next(reversed(self._items), None)
                index = last[0] if last is not None and last[1] == kind else len(self._items)
            key = (index, kind)
            item = self._items.setdefault(key, {})
            pieces = self._pieces.setdefault(key, {})
            for field in _CONCATENATED:
                value = node.get(field, str) if node.has(field) else None
                if value is not None:
                    pieces.setdefault(field, []).append(value)
            self._merge(item, node)
        return texts

    @staticmethod
    def _merge(item: dict[str, Any], node: Node) -> None:
        for key, value in node.value.items():
            if value is None or key in _CONCATENATED:
                continue
            if isinstance(value, str):
                if value or key not in item:  # the last non-empty value wins
                    item[key] = value
            else:
                item[key] = value

    def blocks(self) -> list[ThinkingBlock]:
        blocks: list[ThinkingBlock] = []
        text = self._text.text()
        if text:
            blocks.append(ThinkingBlock.Text(text))
        for n, (key, item) in enumerate(self._items.items()):
            for field, pieces in self._pieces[key].items():
                item[field] = join_text(pieces, f"$.choices[0].delta.reasoning_details[{n}].{field}")
            blocks.append(detail_block(item, f"$.choices[0].delta.reasoning_details[{n}]"))
        return blocks


class Adapter(ChatProvider):
    id = PROVIDER_ID
    connection = Connection(
        "https://openrouter.ai/api/v1",
        "bearer",
        key_env=("OPENROUTER_API_KEY",),
        rejections=(*CLAUDE_REJECTIONS, GEMINI_CORRUPTED),
    )
    writer = Parts(PROVIDER_ID)
    annotation_types = ANNOTATION_TYPES

    def validate_options(self, options: Mapping[str, Any], stream: bool) -> None:
        if options.get("models") is not None:
            # A fallback model would answer with reasoning_details bound to the
            # configured model's origin, and be replayed to that model later.
            raise ValidationError(
                "models: fallback routing lets another model answer, whose sealed reasoning would be bound to "
                "the model asked for; prepare one request per model instead (and fall back by preparing again "
                "with model=<the next one>)",
                path="models",
            )
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
        check_openai_sampling(options)

    def reasoning_fields(self, message: AssistantMessage, shape: str) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if message.thinking_text:
            fields["reasoning"] = message.thinking_text
        # Opaque blocks are still on a sent turn only if the replay decision kept it.
        items = detail_items(message)
        if items:
            fields["reasoning_details"] = items
        return fields

    def write_tool(self, tool: Tool) -> dict[str, Any]:
        wire = tool_wire(tool)
        if tool.cache is not None:
            wire["cache_control"] = cache_control(tool.cache.ttl)
        return wire

    def read_annotations(self, message: Node) -> list[Native]:
        return [native_block(PROVIDER_ID, node) for node in message.items("annotations", required=False)]

    def read_thinking(self, message: Node) -> list[ThinkingBlock]:
        blocks = reasoning_text(message, "reasoning")
        for node in message.items("reasoning_details", required=False):
            node.object()
            blocks.append(detail_block(node.value, node.path))
        return blocks

    def thinking_deltas(self) -> ThinkingDeltas:
        return DetailDeltas()
