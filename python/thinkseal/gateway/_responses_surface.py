"""The Responses API surface (``POST <route>/responses``, provider id
``openai-responses``; a client's base URL is the route, as it would be
``https://api.openai.com/v1``; or ``<route>/v1/responses`` for a route whose
upstream is ``https://api.openai.com``, ``provider_paths``).

One assistant turn is several consecutive ``input`` items (reasoning items,
messages, function calls, other output items pasted back), read together by
``interop.openai.import_responses`` as the adapter keeps a reply's items. A
turn that goes out unsealed replaces its whole run of items with the
adapter's own items for it (``_edit.Splice``): without its reasoning items,
and without the server item ids an unsealed turn must not carry.

A request that continues a stored response (``previous_response_id``) holds
only the new items; the history is on OpenAI's side and nothing in it can be
decided here, so it is forwarded as it came (and its reply is not recorded:
it could not be bound to the history it follows). ``store`` and every field
thinkseal does not model pass through.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from .._conversation import Conversation
from .._errors import ValidationError
from .._messages import AssistantMessage, Message
from ..providers import Provider
from ..providers.openai_responses import PATH, assistant_items
from ._edit import Splice
from ._read_cache import DEFAULT_BYTES, ReadCache
from ._surfaces import Elements, Incoming, Surface, _model, _stream, json_of, provider_paths

_SPEAKERS = ("system", "developer", "user")


def _assistant_side(item: object) -> bool:
    """Whether an input item belongs to an assistant turn, as ``import_responses`` groups them."""
    if not isinstance(item, Mapping):
        return False
    kind = item.get("type", "message")
    if kind == "function_call_output":
        return False
    return not (kind == "message" and item.get("role") in _SPEAKERS)


def _item(elements: Elements, index: int) -> Message | None:
    """Item ``index`` as a message of its own, or None for an item of an assistant turn."""
    from ..interop.openai import import_responses  # noqa: PLC0415

    value = json_of(elements.raw(index))
    if _assistant_side(value):
        return None
    messages = import_responses([value]).messages
    if len(messages) != 1:
        raise ValidationError(f"input[{index}]: could not be mapped onto the conversation", path=f"input[{index}]")
    return messages[0]


def _turn(elements: Elements, start: int, end: int) -> AssistantMessage:
    """The assistant turn items ``start..end`` make."""
    from ..interop.openai import import_responses  # noqa: PLC0415

    messages = import_responses([json_of(elements.raw(j)) for j in range(start, end)]).messages
    if len(messages) != 1 or not isinstance(messages[0], AssistantMessage):
        raise ValidationError(f"input[{start}]: could not be mapped onto the conversation", path=f"input[{start}]")
    return messages[0]


class Responses(Surface):
    """``POST <route>/responses`` (``<route>/v1/responses`` under a host upstream)."""

    field = "input"

    def __init__(self, adapter: Provider, cache_bytes: int = DEFAULT_BYTES) -> None:
        super().__init__(adapter, cache_bytes)
        self.paths = provider_paths(adapter, PATH)
        # An item's message (None: part of a turn), and a turn by its items' digests: half the budget each.
        self._items: ReadCache[Message | None] = ReadCache(cache_bytes // 2)
        self._turns: ReadCache[AssistantMessage] = ReadCache(cache_bytes // 2)

    def serves(self, path: str) -> bool:
        return path in self.paths

    def read(self, body: Mapping[str, Any], path: str) -> Incoming:
        from ..interop.openai import import_responses  # noqa: PLC0415

        if body.get("previous_response_id") is not None:
            raise ValidationError(
                "previous_response_id: the history is stored by the provider; forwarded as it is",
                path="previous_response_id",
            )
        items = body.get("input")
        instructions = body.get("instructions")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]  # a prompt: no turn to edit, the reply to record
        elif not isinstance(items, list):
            raise ValidationError("input: expected a list of items or a string", path="input")
        conversation = import_responses(
            items, instructions=instructions, tools=body.get("tools"), text=body.get("text")
        )
        turns: dict[int, int] = {}
        lengths: dict[int, int] = {}
        index = 0 if instructions is None else 1
        k = 0
        while k < len(items):
            start = k
            if _assistant_side(items[k]):
                while k < len(items) and _assistant_side(items[k]):
                    k += 1
                turns[index] = start
                if k - start > 1:
                    lengths[index] = k - start
            else:
                k += 1
            index += 1
        if index != len(conversation) or any(not isinstance(conversation[i], AssistantMessage) for i in turns):
            raise ValidationError("input: could not be mapped onto the conversation", path="input")
        return Incoming(conversation, self.field, turns, _model(body), _stream(body), lengths)

    reads_elements = True

    def read_elements(self, body: dict[str, Any], elements: Elements, path: str) -> Incoming:
        """An item that is no part of an assistant turn is kept under the
        digest of its bytes, an assistant turn under the digests of its run of
        items. (An input that is a string is no list: read whole.)"""
        from ..interop.openai import import_responses  # noqa: PLC0415

        if body.get("previous_response_id") is not None:
            return self.read(body, path)  # refused there, with its reason
        context = import_responses(
            [], instructions=body.get("instructions"), tools=body.get("tools"), text=body.get("text")
        )
        out: list[Message] = [self._items.same(m) for m in context.messages]
        turns: dict[int, int] = {}
        lengths: dict[int, int] = {}
        k = 0
        while k < len(elements):
            start = k
            item = self._item(elements, k)
            if item is not None:  # a message of its own
                out.append(item)
                k += 1
                continue
            while k < len(elements) and self._item(elements, k) is None:
                k += 1
            run = b"".join(elements.digest(j) for j in range(start, k))
            turns[len(out)] = start
            if k - start > 1:
                lengths[len(out)] = k - start
            size = sum(elements.size(j) for j in range(start, k))
            out.append(self._turns.get(run, partial(_turn, elements, start, k), size))
        conversation = Conversation(out, context.tools, context.response_format)
        return Incoming(conversation, self.field, turns, _model(body), _stream(body), lengths)

    def _item(self, elements: Elements, index: int) -> Message | None:
        return self._items.get(elements.digest(index), partial(_item, elements, index), elements.size(index))

    def turn_wire(self, turn: AssistantMessage) -> object | None:
        # An unsealed turn has no reasoning blocks, hence no recorded item ids: the
        # stateless and the stored forms are the same.
        return Splice(assistant_items(turn, stored=False))
