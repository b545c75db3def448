"""Forks: siblings of one conversation (a retry, a regeneration, parallel
samples) share the wire form of the history they share. Counted work, not
time: preparing a sibling maps only the messages after the fork point, the
same number at every history length, and its body equals a fresh one."""

from __future__ import annotations

from typing import Any

import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation, SystemMessage, Tool, ToolCall, ToolMessage, UserMessage
from thinkseal._replay import Replay
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import emulator

TOOL = Tool("lookup", "Look up", {"type": "object", "properties": {"q": {"type": "integer"}}})


def _history(steps: int) -> Conversation:
    messages: list[thinkseal.Message] = [SystemMessage("Be brief."), UserMessage("Start")]
    for i in range(steps):
        messages.append(AssistantMessage(f"Step {i}", [ToolCall(f"call_{i}", "lookup", {"q": i})]))
        messages.append(ToolMessage(f"result {i}", f"call_{i}"))
        messages.append(UserMessage(f"Next {i}"))
    return Conversation(messages, tools=[TOOL])


def _mapped(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many messages each ``Replay.sent_messages`` call maps (the adapters'
    only way to the as-sent history), appended to the returned list."""
    counts: list[int] = []
    original = Replay.sent_messages

    def counted(self: Replay, start: int = 0, end: int | None = None) -> list[Any]:
        out = original(self, start, end)
        counts.append(len(out))
        return out

    monkeypatch.setattr(Replay, "sent_messages", counted)
    return counts


@pytest.mark.parametrize("open_run", [False, True], ids=["after-a-user-turn", "inside-a-tool-run"])
@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_a_sibling_maps_only_its_new_messages(provider: str, open_run: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = thinkseal.provider(provider)
    options = dict(emulator(provider).options)
    mapped_per_sibling = []
    for steps in (20, 400):
        if open_run:  # the parent ends in a tool result: the fork point is past the settled turns
            call = ToolCall("call_p", "lookup", {"q": -1})
            parent = _history(steps).append(AssistantMessage("Parent", [call]), ToolMessage("p", "call_p"))
        else:
            parent = _history(steps).append(AssistantMessage("Parent"), UserMessage("Go"))
        adapter.prepare(parent, model="m", **options)  # the history mapped once
        first = parent.append(AssistantMessage("Sibling 0"), UserMessage("Again 0"))
        adapter.prepare(first, model="m", **options)  # extends the parent's caches
        counts = _mapped(monkeypatch)
        for k in (1, 2, 3):  # each of these is a fork: the log already goes on with sibling 0
            sibling = parent.append(AssistantMessage(f"Sibling {k}"), UserMessage(f"Again {k}"))
            counts.clear()
            req = adapter.prepare(sibling, model="m", **options)
            mapped_per_sibling.append(sum(counts))
            fresh = adapter.prepare(Conversation.from_json(sibling.to_json()), model="m", **options)
            assert req.content == fresh.content
        monkeypatch.undo()
    assert max(mapped_per_sibling) <= 8  # the new messages and the open turn before them
    assert mapped_per_sibling[:3] == mapped_per_sibling[3:]  # the same at 20 and 400 steps
