"""The Gemini surface reads each content once (under the digest of its bytes
and of the model content before it): a history re-sent with one more step
reads only its new contents (counted), and what it builds equals a fresh
read of the same body, whatever bytes changed."""

from __future__ import annotations

import json
from typing import Any

import pytest

import thinkseal
from thinkseal import ValidationError
from thinkseal.gateway._surfaces import BodyError, surface_of

from ._loops import sealed_loop, sent

MODEL = "gemini-3-pro-preview"
PATH = f"/v1beta/models/{MODEL}:generateContent"


def wire(provider_id: str, steps: int) -> dict[str, Any]:
    where = {"project": "p", "location": "us-central1"} if provider_id == "vertex-gemini" else {}
    return sent(sealed_loop(provider_id, MODEL, steps), provider_id, MODEL, **where)


def same_as_fresh(provider_id: str, reader: Any, raw: bytes) -> None:
    cached = reader.read_body(raw, PATH)
    fresh = surface_of(thinkseal.provider(provider_id)).read(json.loads(raw), PATH)
    assert cached.conversation == fresh.conversation
    assert cached.conversation.to_json() == fresh.conversation.to_json()
    assert cached.turns == fresh.turns
    assert (cached.model, cached.stream) == (fresh.model, fresh.stream)


@pytest.mark.parametrize("provider_id", ["gemini", "vertex-gemini"])
def test_a_history_read_before_costs_its_new_contents_only(provider_id: str) -> None:
    reader = surface_of(thinkseal.provider(provider_id))
    bodies = {steps: json.dumps(wire(provider_id, steps)).encode() for steps in (10, 11, 13)}
    contents = {steps: len(wire(provider_id, steps)["contents"]) for steps in bodies}
    reader.read_body(bodies[10], PATH)
    assert reader._read.reads == contents[10]
    reader.read_body(bodies[11], PATH)
    assert reader._read.reads == contents[11]
    reader.read_body(bodies[13], PATH)
    assert reader._read.reads == contents[13]
    same_as_fresh(provider_id, reader, bodies[13])


@pytest.mark.parametrize("provider_id", ["gemini", "vertex-gemini"])
@pytest.mark.parametrize(
    "change", ["none", "system", "tools", "a signature", "a call's arguments", "a response's name", "spacing"]
)
def test_what_is_read_equals_a_fresh_read(provider_id: str, change: str) -> None:
    reader = surface_of(thinkseal.provider(provider_id))
    reader.read_body(json.dumps(wire(provider_id, 4)).encode(), PATH)  # fills the cache
    document = wire(provider_id, 4)
    contents = document["contents"]
    model = next(i for i, c in enumerate(contents) if c["role"] == "model")
    call = next(p for p in contents[model]["parts"] if "functionCall" in p)
    if change == "system":
        document["systemInstruction"] = {"parts": [{"text": "Use the tool twice."}]}
    elif change == "tools":
        document.pop("tools", None)
    elif change == "a signature":
        call["thoughtSignature"] = "FORGED"
    elif change == "a call's arguments":
        call["functionCall"]["args"] = {"q": "edited"}
    elif change == "a response's name":  # the model turn before it is the same; its answer names another call
        response = next(p for p in contents[model + 1]["parts"] if "functionResponse" in p)
        response["functionResponse"]["name"] = "other"
    raw = json.dumps(document, indent=1 if change == "spacing" else None).encode()
    refused: str | None = None
    try:
        surface_of(thinkseal.provider(provider_id)).read(json.loads(raw), PATH)
    except ValidationError as err:
        refused = err.path
    if refused is None:
        same_as_fresh(provider_id, reader, raw)
    else:
        with pytest.raises(ValidationError) as caught:
            reader.read_body(raw, PATH)
        assert caught.value.path == refused


def test_a_new_content_that_is_no_json_is_refused() -> None:
    reader = surface_of(thinkseal.provider("gemini"))
    reader.read_body(b'{"contents":[{"role":"user","parts":[{"text":"a"}]}]}', PATH)
    with pytest.raises(BodyError):
        reader.read_body(b'{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":}]}', PATH)
