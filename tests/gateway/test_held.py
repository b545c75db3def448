"""A session's next request decides only its new turns: the gateway holds the
conversations it decided (gateway/_held.py), the read cache gives the same
message objects for the same bytes and the ledger the same bound copy of a
turn, so the replay decision of the unchanged prefix is reused. Counted (the
turns the replay walk decides), and every decision checked equal to a fresh
gateway's for the same body, including after the ledger changed its mind."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Origin,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    _walk,
)
from thinkseal.gateway import Config, Gateway, Route, app
from thinkseal.gateway._app import Decision, account_of
from thinkseal.gateway._config import DEFAULT_ACCOUNT_KEY
from thinkseal.testing import respond

MODEL = "claude-sonnet-4-5"
KEY = "sk-ant-held-test-key-0123456789"
ORIGIN = Origin("anthropic", MODEL, account_of(DEFAULT_ACCOUNT_KEY, KEY))


def history(steps: int) -> Conversation:
    """A tool loop of ``steps`` signed turns, each bound as Claude's reply would be."""
    conv = Conversation([SystemMessage("Use the tool."), UserMessage("Go.")], [Tool("lookup")])
    for k in range(steps):
        turn = AssistantMessage(
            None, [ToolCall(f"toolu_{k}", "lookup", {"q": k})], [ThinkingBlock.Text(f"Step {k}.", f"SIG-{k}")]
        )
        conv = respond(conv, ORIGIN, turn)
        conv = conv.append(ToolMessage(str(k), f"toolu_{k}"))
    return conv


def wire(conv: Conversation) -> bytes:
    """The body a client holding ``conv`` sends (no bindings travel on the wire)."""
    req = thinkseal.provider("anthropic", account=ORIGIN.account).prepare(
        conv, model=MODEL, max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 1024}
    )
    return bytes(req.content)


def gateway() -> Gateway:
    return app(Config([Route("/anthropic", "anthropic", "http://127.0.0.1:9", api_key=KEY)], ledger="memory"))


def decide(gw: Gateway, raw: bytes) -> Decision:
    async def run() -> Decision:
        await gw._open()
        route = gw.config.routes[0]
        decision = await gw._decide(route, gw._surfaces[route.prefix], raw, "/v1/messages", KEY)
        assert decision is not None
        return decision

    return asyncio.run(run())


def record(gw: Gateway, conv: Conversation) -> None:
    async def run() -> None:
        await gw._open()
        assert gw._ledger is not None
        for m in conv:
            if isinstance(m, AssistantMessage) and m.thinking_binding is not None:
                await gw._ledger.record(m)

    asyncio.run(run())


@pytest.fixture
def decided(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many assistant turns the replay walk decides (one entry per turn),
    in its loop or in its native run."""
    seen: list[int] = []
    original, run = _walk.decide_without_chain, _walk.Walk.run

    def counting(message: Any, target: Origin) -> int | None:
        seen.append(1)
        return original(message, target)

    def counting_run(walk: _walk.Walk, *args: Any) -> int:
        before = len(walk.turns)
        stop = run(walk, *args)
        seen.extend([1] * (len(walk.turns) - before))
        return stop

    monkeypatch.setattr(_walk, "decide_without_chain", counting)
    monkeypatch.setattr(_walk.Walk, "run", counting_run)
    return seen


def same(a: Decision, b: Decision) -> None:
    assert a.body == b.body
    assert (a.kept, a.unsealed, a.reasons) == (b.kept, b.unsealed, b.reasons)
    assert [e.reason for e in a.replay.report] == [e.reason for e in b.replay.report]


def test_the_next_step_decides_its_new_turns_only(decided: list[int]) -> None:
    gw = gateway()
    full = history(45)
    record(gw, full)
    bodies = {steps: wire(history(steps)) for steps in (40, 41, 42, 45)}
    decided.clear()
    decide(gw, bodies[40])
    assert len(decided) >= 39  # the first sight of the session: every turn (the last may wait on its pairing)
    for steps in (41, 42, 45):
        decided.clear()
        decision = decide(gw, bodies[steps])
        assert decision.kept == steps
        assert decision.unsealed == 0
        assert len(decided) <= 4, f"{len(decided)} turns decided for {steps - 40} new"
        same(decision, decide(gateway_with(full), wire(history(steps))))


def gateway_with(conv: Conversation) -> Gateway:
    gw = gateway()
    record(gw, conv)
    return gw


def test_a_retry_with_its_last_message_edited_reuses_the_prefix(decided: list[int]) -> None:
    gw = gateway_with(history(30))
    conv = history(30)
    first, second = wire(conv.append(UserMessage("first try"))), wire(conv.append(UserMessage("second try")))
    decide(gw, first)
    decided.clear()
    decision = decide(gw, second)
    assert len(decided) <= 2
    same(decision, decide(gateway_with(history(30)), wire(conv.append(UserMessage("second try")))))


@pytest.mark.parametrize("change", ["another model", "a turn edited", "a conflicting record", "the system prompt"])
def test_a_held_decision_never_outlives_what_it_rested_on(change: str) -> None:
    conv = history(12).append(UserMessage("Next."))
    gw = gateway_with(conv)
    decide(gw, wire(conv))  # held
    document = json.loads(wire(conv))
    fresh = gateway_with(conv)
    if change == "another model":
        document["model"] = "claude-opus-4-1"
    elif change == "a turn edited":
        document["messages"][7]["content"][1]["input"] = {"q": "edited"}
    elif change == "the system prompt":
        document["system"] = "Use the tool twice."
    elif change == "a conflicting record":
        turn = conv[8]
        assert isinstance(turn, AssistantMessage)
        other = Origin("anthropic", "claude-opus-4-1", ORIGIN.account)
        for ledger_of in (gw, fresh):
            record(ledger_of, respond(Conversation([UserMessage("Elsewhere.")]), other, turn))
    raw = json.dumps(document).encode()
    after = decide(gw, raw)
    same(after, decide(fresh, raw))
    assert after.unsealed > 0


def test_a_session_holds_one_conversation_however_many_steps_it_took() -> None:
    gw = gateway_with(history(12))
    bodies = [wire(history(steps)) for steps in range(4, 13)]
    for raw in bodies:
        decide(gw, raw)
    held = gw._held["/anthropic"]
    assert len(held) <= 2  # the last conversation, by its end and by its last turn
