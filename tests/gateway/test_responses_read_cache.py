"""The Responses surface reads each item once: an item of its own under the
digest of its bytes, an assistant turn under the digests of its run of items;
a history re-sent with one more step reads only its new items (counted), and
what it builds equals a fresh read of the same body, whatever bytes changed."""

from __future__ import annotations

import json
from typing import Any

import pytest

import thinkseal
from thinkseal import ValidationError
from thinkseal.gateway._surfaces import surface_of

from ._loops import sealed_loop, sent

ID = "openai-responses"
MODEL = "gpt-5"


def wire(steps: int) -> dict[str, Any]:
    return sent(sealed_loop(ID, MODEL, steps, text="calling"), ID, MODEL)


def surface() -> Any:
    return surface_of(thinkseal.provider(ID))


def same_as_fresh(cached_surface: Any, raw: bytes) -> None:
    cached = cached_surface.read_body(raw, "/responses")
    fresh = surface().read(json.loads(raw), "/responses")
    assert cached.conversation == fresh.conversation
    assert cached.conversation.to_json() == fresh.conversation.to_json()
    assert (cached.turns, dict(cached.lengths)) == (fresh.turns, dict(fresh.lengths))
    assert (cached.model, cached.stream) == (fresh.model, fresh.stream)


def test_a_history_read_before_costs_its_new_items_only() -> None:
    reader = surface()
    bodies = {steps: json.dumps(wire(steps)).encode() for steps in (10, 11, 13)}
    items = {steps: len(wire(steps)["input"]) for steps in bodies}
    per_step = items[11] - items[10]
    assert per_step >= 3  # a turn of several items (reasoning, message, call), then the result
    reader.read_body(bodies[10], "/responses")
    assert reader._items.reads == items[10]
    assert reader._turns.reads == 10
    reader.read_body(bodies[11], "/responses")
    assert (reader._items.reads, reader._turns.reads) == (items[11], 11)
    reader.read_body(bodies[13], "/responses")
    assert (reader._items.reads, reader._turns.reads) == (items[13], 13)
    same_as_fresh(reader, bodies[13])


@pytest.mark.parametrize(
    "change", ["none", "instructions", "tools", "a reasoning item", "a call's arguments", "an item moved", "spacing"]
)
def test_what_is_read_equals_a_fresh_read(change: str) -> None:
    reader = surface()
    reader.read_body(json.dumps(wire(4)).encode(), "/responses")  # fills the caches
    document = wire(4)
    items = document["input"]
    kinds = [item.get("type", "message") for item in items]
    if change == "instructions":
        document["instructions"] = "Use the tool twice."
    elif change == "tools":
        document["tools"] = []
    elif change == "a reasoning item":
        items[kinds.index("reasoning")]["encrypted_content"] = "FORGED"
    elif change == "a call's arguments":
        items[kinds.index("function_call")]["arguments"] = '{"q": "edited"}'
    elif change == "an item moved":  # the turn's call before its message: another run of the same items
        call = kinds.index("function_call")
        items.insert(call - 1, items.pop(call))
    raw = json.dumps(document, indent=1 if change == "spacing" else None).encode()
    same_as_fresh(reader, raw)


@pytest.mark.parametrize(
    "body",
    [
        {"model": "gpt-5", "input": "just a prompt"},
        {"model": "gpt-5", "input": [{"role": "user", "content": "a"}], "previous_response_id": "resp_1"},
        {"model": "gpt-5", "input": [{"role": "user", "content": "a"}, {"type": "function_call_output"}]},
        {"model": "gpt-5", "input": [{"role": "robot", "content": "a"}]},
    ],
)
def test_what_a_whole_read_reads_or_refuses_the_cached_read_does_too(body: dict[str, Any]) -> None:
    raw = json.dumps(body).encode()
    refused: str | None = None
    try:
        fresh = surface().read(json.loads(raw), "/responses")
    except ValidationError as err:
        refused = err.path
    if refused is not None:
        with pytest.raises(ValidationError) as caught:
            surface().read_body(raw, "/responses")
        assert caught.value.path == refused
    else:
        assert surface().read_body(raw, "/responses").conversation == fresh.conversation
