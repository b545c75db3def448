"""``req.body`` is read-only for every adapter: its parts are shared with the
wire caches of later requests and ``req.content`` was encoded from it, so a
change (the usual hand-made prompt-caching marker) must fail loudly instead of
leaking into later bodies. A copy is an ordinary dict to change at will."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation, UserMessage
from thinkseal.providers import PROVIDER_IDS

from .sealed import OPTIONS


def message_key(body: dict[str, Any]) -> str:
    return next(key for key in ("messages", "contents", "input") if key in body)


def messages_of(body: dict[str, Any]) -> list[Any]:
    return list(body[message_key(body)])


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_body_cannot_be_changed_and_later_bodies_stay_clean(provider_id: str) -> None:
    adapter = thinkseal.provider(provider_id)
    options = OPTIONS[provider_id]
    conv = Conversation([UserMessage("first")]).append(AssistantMessage("answer"), UserMessage("second"))
    req = adapter.prepare(conv, model="m", **options)
    first = messages_of(req.body)[0]
    with pytest.raises(TypeError):
        first["cache_control"] = {"type": "ephemeral"}
    with pytest.raises(TypeError):
        req.body["extra"] = 1
    history = req.body[message_key(req.body)]
    with pytest.raises(TypeError):
        history.append({})
    later = adapter.prepare(conv.append(AssistantMessage("more"), UserMessage("third")), model="m", **options)
    assert b"cache_control" not in later.content
    assert "cache_control" not in messages_of(later.body)[0]


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_a_copy_of_the_body_is_a_plain_dict_to_change(provider_id: str) -> None:
    req = thinkseal.provider(provider_id).prepare(Conversation([UserMessage("hi")]), model="m", **OPTIONS[provider_id])
    mine = copy.deepcopy(req.body)
    assert type(mine) is dict
    assert mine == req.body
    mine["extra"] = 1
    messages_of(mine)  # nested lists and dicts are plain too
    assert "extra" not in req.body
