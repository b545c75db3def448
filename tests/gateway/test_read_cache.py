"""The Anthropic surface reads each wire message once: a request that re-sends
a history read before reads only its new messages (counted), and what it
builds equals a fresh read of the same body, whatever bytes changed."""

from __future__ import annotations

import json
from typing import Any

import pytest

import thinkseal
from thinkseal.gateway import Config
from thinkseal.gateway._surfaces import BodyError, surface_of

SYSTEM = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
TOOLS = [{"name": "lookup", "description": "Look it up", "input_schema": {"type": "object", "properties": {}}}]


def step(k: int) -> list[dict[str, Any]]:
    """One tool step: the signed turn, its tool result and the next prompt."""
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"Step {k}.", "signature": f"SIG-{k}"},
                {"type": "tool_use", "id": f"toolu_{k}", "name": "lookup", "input": {"q": k}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": str(k)}]},
    ]


def body(steps: int, **extra: Any) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    for k in range(steps):
        messages += step(k)
    head = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": SYSTEM, "tools": TOOLS}
    return {**head, "messages": messages, **extra}


def read(surface: Any, document: dict[str, Any]) -> Any:
    raw = json.dumps(document).encode()
    return surface.read_body(raw, "/v1/messages")


def test_a_history_read_before_costs_its_new_messages_only() -> None:
    surface = surface_of(thinkseal.provider("anthropic"))
    read(surface, body(40))
    assert surface._read.reads == 81  # every wire message once
    for steps in (41, 42, 43):
        read(surface, body(steps))
        assert surface._read.reads == 81 + 2 * (steps - 40)  # the new step's two wire messages


@pytest.mark.parametrize(
    "change",
    ["none", "system", "tools", "a thinking text", "a signature", "a mark moved", "spacing"],
)
def test_what_is_read_equals_a_fresh_read(change: str) -> None:
    surface = surface_of(thinkseal.provider("anthropic"))
    read(surface, body(6))  # fills the cache
    document = body(6)
    if change == "system":
        document["system"] = "Be verbose."
    elif change == "tools":
        document["tools"] = []
    elif change == "a thinking text":
        document["messages"][3]["content"][0]["thinking"] = "Edited."
    elif change == "a signature":
        document["messages"][3]["content"][0]["signature"] = "FORGED"
    elif change == "a mark moved":
        document["messages"][3]["content"][1]["cache_control"] = {"type": "ephemeral"}
    raw = json.dumps(document, indent=1 if change == "spacing" else None).encode()
    cached = surface.read_body(raw, "/v1/messages")
    fresh = surface_of(thinkseal.provider("anthropic")).read(json.loads(raw), "/v1/messages")
    assert cached.conversation == fresh.conversation
    assert cached.conversation.to_json() == fresh.conversation.to_json()
    assert cached.turns == fresh.turns


def test_a_body_naming_messages_twice_is_read_as_json_reads_it() -> None:
    surface = surface_of(thinkseal.provider("anthropic"))
    read(surface, body(3))
    first, last = json.dumps(body(3)["messages"]), json.dumps(body(1)["messages"])
    raw = ('{"model":"claude-sonnet-4-5","max_tokens":1,"messages":' + first + ',"messages":' + last + "}").encode()
    incoming = surface.read_body(raw, "/v1/messages")
    assert (
        incoming.conversation
        == surface_of(thinkseal.provider("anthropic")).read(json.loads(raw), "/v1/messages").conversation
    )
    assert len(incoming.conversation) == 3  # the last list, as json (and the fresh read) takes it


@pytest.mark.parametrize(
    "raw",
    [
        b'{"model":"m","messages":[{"role":"user","content":"a"},tru]}',  # a new element that is no JSON
        b'{"model":"m","messages":[{"role":"user","content":"a\x01"}]}',  # a control character in a string
        b'{"model":"m","messages":[{"role":"user","content":"a"}],"max_tokens":1e}',  # outside the list
        b'{"model":"m","messages":[{"role":"user","content":"a"}]',  # cut short
        b'[{"model":"m"}]',
    ],
)
def test_a_body_that_is_no_json_object_is_refused_even_where_it_was_read_before(raw: bytes) -> None:
    surface = surface_of(thinkseal.provider("anthropic"))
    surface.read_body(b'{"model":"m","messages":[{"role":"user","content":"a"}]}', "/v1/messages")  # cached
    with pytest.raises(BodyError):
        surface.read_body(raw, "/v1/messages")


def test_the_cache_keeps_what_it_read_for_its_budget_of_wire_bytes_only() -> None:
    raw = json.dumps(body(40)).encode()
    surface = surface_of(thinkseal.provider("anthropic"), cache_bytes=len(raw) // 4)
    read(surface, body(40))
    assert surface._read.bytes <= len(raw) // 4
    assert 0 < len(surface._read) < 81  # the oldest let go
    read(surface, body(40))
    assert surface._read.reads > 81  # read again: what was let go is read anew, and equal to a fresh read
    fresh = surface_of(thinkseal.provider("anthropic")).read(json.loads(raw), "/v1/messages")
    assert surface.read_body(raw, "/v1/messages").conversation == fresh.conversation


def test_a_cache_of_no_bytes_keeps_nothing() -> None:
    surface = surface_of(thinkseal.provider("anthropic"), cache_bytes=0)
    read(surface, body(3))
    read(surface, body(3))
    assert len(surface._read) == 0
    assert surface._read.reads == 2 * 7


@pytest.mark.parametrize("value", [-1, 1.5, True, "64", 1 << 21])
def test_a_bad_read_cache_size_is_a_configuration_error_naming_it(value: object) -> None:
    route = {"prefix": "/a", "provider": "anthropic", "upstream": "http://127.0.0.1:9"}
    with pytest.raises(thinkseal.ValidationError) as caught:
        Config.of({"gateway": {"read_cache_mib": value}, "routes": [route]})
    assert caught.value.path == "gateway.read_cache_mib"
    assert Config.of({"gateway": {"read_cache_mib": 8}, "routes": [route]}).read_cache_bytes == 8 * 2**20


def test_a_body_that_is_no_json_is_refused_as_such_even_when_an_earlier_message_is_unreadable() -> None:
    # Found by fuzz/targets.py (gateway:anthropic): the element-wise read named the unreadable message,
    # where a whole read refuses the body for not being JSON (and the gateway then answers 400).
    surface = surface_of(thinkseal.provider("anthropic"))
    raw = b'{"model":"m","messages":[{"role":"user","content":[{"type":"nonsense"}]},{"role":"user","content":"\xff"}]}'
    with pytest.raises(BodyError):
        surface.read_body(raw, "/v1/messages")
