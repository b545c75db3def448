"""Properties across every registered adapter (``PROVIDER_IDS``), each with
its emulator (``thinkseal.testing.emulate``).

0. Registry: every provider id has its adapter and its emulator, and a plain
   request goes through that emulator and its reply back.

1. Isolation: for random conversations mixing turns from every provider (two
   models each), with edits of earlier messages, no body for provider X carries
   a signature, redacted data or opaque payload produced by another provider, by
   X under another model, or by a turn the replay decision did not keep (an
   edit earlier in the history unseals every later turn). Kept sealed turns do
   carry theirs.
2. Shared wire caches: a body prepared from a conversation grown by appends
   (and branched) is exactly the body prepared from a fresh, cache-less copy.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    UserMessage,
)
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import EMULATOR_IDS, emulate

from .random_histories import MODELS, TOOL, play, steps
from .sealed import NATIVE, OPTIONS, SEALED


def test_every_provider_has_its_adapter_and_its_emulator() -> None:
    assert len(set(PROVIDER_IDS)) == len(PROVIDER_IDS)
    assert set(EMULATOR_IDS) == set(PROVIDER_IDS) == set(SEALED) == set(NATIVE) == set(OPTIONS)
    for provider_id in PROVIDER_IDS:
        assert thinkseal.provider(provider_id).id == provider_id


def post(url: str, content: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=content, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_a_request_goes_through_its_emulator(provider_id: str) -> None:
    conv = Conversation([UserMessage("start")], [TOOL])
    req = thinkseal.provider(provider_id).prepare(conv, model=MODELS[0], **OPTIONS[provider_id])
    # What a client adds to the prepared headers: its credentials.
    headers = {"content-type": "application/json", **req.headers, "authorization": "Bearer test-key"}
    with emulate(provider_id, require_auth=False) as emu:
        status, response = post(emu.base_url + req.path, req.content, headers)
    assert status == 200, response
    assert req.receive(response).content


@given(steps, st.sampled_from(PROVIDER_IDS), st.sampled_from(MODELS))
def test_no_body_carries_secrets_it_must_not(script: list[tuple[Any, ...]], target: str, model: str) -> None:
    h = play(script)
    req = thinkseal.provider(target).prepare(h.conv, model=model, **OPTIONS[target])
    kept = {entry.index for entry in req.report if entry.kept}
    wire = req.content.decode()
    for token in h.tokens:
        if token.origin != req.origin or token.turn not in kept:
            assert token.text not in wire, (token, target, model)
        else:
            assert token.text in wire, (token, target, model)
    # Kept turns are an unbroken run of the sealed turns bound to this origin.
    for entry in req.report:
        if entry.kept:
            turn = h.conv[entry.index]
            assert isinstance(turn, AssistantMessage)
            assert turn.thinking_binding is not None
            assert turn.thinking_binding.origin == req.origin


@given(steps, st.sampled_from(PROVIDER_IDS))
def test_cached_wire_form_equals_a_fresh_build(script: list[tuple[Any, ...]], target: str) -> None:
    h = play(script)
    adapter = thinkseal.provider(target)
    options = OPTIONS[target]
    line = [Conversation([h.conv[0]], h.conv.tools)]
    for message in h.conv.messages[1:]:
        line.append(line[-1].append(message))  # each shares its storage and caches with the next
    # The longest first, so the shorter ones find shared caches that reach past their end.
    adapter.prepare(line[-1], model=MODELS[0], **options)
    for conv in line:
        # A branch that is prepared and then abandoned must not disturb the main line.
        adapter.prepare(conv.append(UserMessage("branch")), model=MODELS[0], **options)
        cached = adapter.prepare(conv, model=MODELS[0], **options)
        fresh = adapter.prepare(Conversation(list(conv), conv.tools), model=MODELS[0], **options)
        assert cached.body == fresh.body
        assert cached.content == fresh.content
        assert json.loads(cached.content) == cached.body
