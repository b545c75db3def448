"""The Responses API surface (``POST <route>/responses``, provider id
``openai-responses``; a client's base URL is the route, as it would be
``https://api.openai.com/v1``).

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
from typing import Any

from .._errors import ValidationError
from .._messages import AssistantMessage
from ..providers.openai_responses import PATH, assistant_items
from ._edit import Splice
from ._surfaces import Incoming, Surface, _model, _stream

_SPEAKERS = ("system", "developer", "user")


def _assistant_side(item: object) -> bool:
    """Whether an input item belongs to an assistant turn, as ``import_responses`` groups them."""
    if not isinstance(item, Mapping):
        return False
    kind = item.get("type", "message")
    if kind == "function_call_output":
        return False
    return not (kind == "message" and item.get("role") in _SPEAKERS)


class Responses(Surface):
    """``POST <route>/responses``."""

    field = "input"

    def serves(self, path: str) -> bool:
        return path == PATH

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

    def turn_wire(self, turn: AssistantMessage) -> object | None:
        # An unsealed turn has no reasoning blocks, hence no recorded item ids: the
        # stateless and the stored forms are the same.
        return Splice(assistant_items(turn, stored=False))
