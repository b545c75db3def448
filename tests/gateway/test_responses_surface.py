"""The gateway's Responses surface (``openai-responses``), driven by the
official ``openai`` client with only its base URL changed, against
thinkseal's Responses emulator: stateless replay of encrypted reasoning
items (``store=False``, ``include=["reasoning.encrypted_content"]``), each
scenario also run without the gateway (the control) to count what the
provider refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from thinkseal.gateway._edit import Splice, edited
from thinkseal.testing import Step, emulate

from ._openai_support import RESPONSES_TOOLS, Answer, Client, ask, host_route, route, thinking
from .conftest import serve, sqlite_url

PROVIDER = "openai-responses"
QUESTION = {"role": "user", "content": "What is q?"}
AGAIN = {"role": "user", "content": "And once more?"}
LOOKUP = [("lookup", {"q": 1})]
STATELESS = {"store": False, "include": ["reasoning.encrypted_content"]}


def create(client: Client, emu: Any, model: str, items: list[Any] | str, **extra: Any) -> Answer:
    options = {**STATELESS, **extra}
    return ask(
        client.sdk.responses.with_raw_response.create,
        model=model,
        input=items,
        tools=RESPONSES_TOOLS,
        extra_body=thinking(emu),
        **options,
    )


def loop(client: Client, emu: Any, model: str, items: list[Any]) -> list[Answer]:
    """One question's tool loop: the output items go back as the client got
    them (``input += response.output``), each call answered."""
    answers = []
    while True:
        answer = create(client, emu, model, items)
        answers.append(answer)
        if answer.reply is None:
            return answers
        items += answer.reply.output
        calls = [item for item in answer.reply.output if item.type == "function_call"]
        if not calls:
            return answers
        items += [{"type": "function_call_output", "call_id": c.call_id, "output": "1"} for c in calls]


def tool_loop(client: Client, emu: Any) -> list[Answer]:
    emu.script(Step(thinking="Look it up.", calls=LOOKUP), Step(thinking="It is one.", text="One."))
    return loop(client, emu, "gpt-5", [QUESTION])


def model_switch(client: Client, emu: Any) -> list[Answer]:
    emu.script(Step(thinking="Look it up.", calls=LOOKUP), Step(thinking="It is one.", text="One."))
    items: list[Any] = [QUESTION]
    answers = loop(client, emu, "gpt-5", items)
    items.append(AGAIN)
    return answers + loop(client, emu, "gpt-5-mini", items)


def pruned(client: Client, emu: Any) -> list[Answer]:
    emu.script(
        Step(thinking="Look it up.", calls=LOOKUP),
        Step(thinking="It is one.", text="One."),
        Step(thinking="Again.", calls=LOOKUP),
        Step(thinking="Still one.", text="One again."),
    )
    items: list[Any] = [QUESTION]
    answers = loop(client, emu, "gpt-5", items)
    start = len(items)
    items.append(AGAIN)
    answers += loop(client, emu, "gpt-5", items)
    rest = [*items[start:], {"role": "user", "content": "Thanks. Anything else?"}]
    return answers + loop(client, emu, "gpt-5", rest)


def run(
    scenario: Callable[[Client, Any], list[Answer]], gateway: bool, host_upstream: bool = False
) -> tuple[int, list[Answer], Any]:
    """The scenario on a fresh emulator, with or without the gateway in
    front: the emulator's refusals, the answers, and the requests it got.
    ``host_upstream``: the route's upstream is the provider's host and the
    client's base URL the prefix plus the provider's path (``/openai/v1``)."""
    with emulate(PROVIDER) as emu:
        if not gateway:
            answers = scenario(Client(emu.base_url), emu)
            return len(emu.rejections), answers, emu.requests
        plain = (route(emu, PROVIDER, "/openai"), "")
        config, base_path = host_route(emu, PROVIDER, "/openai") if host_upstream else plain
        with serve({"routes": [config]}) as served:
            answers = scenario(Client(f"{served.url}/openai{base_path}"), emu)
            return len(emu.rejections), answers, emu.requests


SCENARIOS = [("tool-loop", tool_loop, False), ("model-switch", model_switch, True), ("pruned", pruned, False)]


@pytest.mark.parametrize(("name", "scenario", "refused"), SCENARIOS, ids=[n for n, _, _ in SCENARIOS])
def test_scenario_with_and_without_the_gateway(
    name: str, scenario: Callable[[Client, Any], list[Answer]], refused: bool
) -> None:
    without, _, _ = run(scenario, gateway=False)
    with_gateway, answers, requests = run(scenario, gateway=True)
    print(f"{PROVIDER}/{name}: refused without the gateway {without}, with it {with_gateway}")
    assert (without >= 1) is refused
    assert with_gateway == 0
    assert all(a.status == 200 for a in answers)
    assert all(a.kept is not None and a.unsealed is not None for a in answers)
    if name == "model-switch":
        # The turns that went to another model went without their reasoning items, the rest as they came.
        assert answers[-1].unsealed == 2
        sent = requests[-1].body["input"]
        assert [i.get("type") for i in sent if i.get("type") == "reasoning"] == []
        assert {"role": "assistant", "content": "One."} in sent
    if name == "pruned":
        # The library's decision for turns whose prefix changed (the call turn and its answer): unsealed.
        assert answers[-1].unsealed == 2
    if name == "tool-loop":
        assert [(a.kept, a.unsealed) for a in answers] == [(0, 0), (1, 0)]


def test_an_upstream_named_by_its_host_is_decided_alike() -> None:
    """docs/gateway.md's other form of a route: upstream ``https://api.openai.com``,
    client base URL ``<gateway>/openai/v1``."""
    with_gateway, answers, _ = run(model_switch, gateway=True, host_upstream=True)
    assert with_gateway == 0
    assert all(a.status == 200 for a in answers)
    assert answers[-1].unsealed == 2


def test_a_streamed_response_is_relayed_and_recorded() -> None:
    config: dict[str, Any] = {"gateway": {"unknown_seals": "unseal"}}
    with emulate(PROVIDER) as emu:
        config["routes"] = [route(emu, PROVIDER, "/openai")]
        with serve(config) as served:
            client = Client(f"{served.url}/openai")
            emu.script(Step(thinking="Look it up.", calls=LOOKUP), Step(thinking="It is one.", text="One."))
            items: list[Any] = [QUESTION]
            raw = client.sdk.responses.with_raw_response.create(
                model="gpt-5", input=items, tools=RESPONSES_TOOLS, stream=True, extra_body=thinking(emu), **STATELESS
            )
            assert raw.headers["thinkseal-kept"] == "0"
            events = list(raw.parse())
            completed = [e for e in events if e.type == "response.completed"]
            assert len(completed) == 1
            output = completed[0].response.output
            assert [o.type for o in output] == ["reasoning", "function_call"]
            items += [*output, {"type": "function_call_output", "call_id": output[1].call_id, "output": "1"}]
            answer = create(client, emu, "gpt-5", items)
            # Recorded from the stream, so recognised (this policy unseals what the ledger never saw).
            assert (answer.status, answer.kept, answer.unsealed) == (200, 1, 0)
            assert answer.reply.output_text == "One."
            assert len(emu.rejections) == 0


def test_a_fresh_gateway_on_the_same_ledger_honours_recorded_replies(tmp_path: Path) -> None:
    ledger = {"ledger": sqlite_url(tmp_path), "unknown_seals": "unseal"}
    with emulate(PROVIDER) as emu:
        emu.script(Step(thinking="Look it up.", calls=LOOKUP))
        with serve({"gateway": ledger, "routes": [route(emu, PROVIDER, "/openai")]}) as first:
            # The first request's input is a plain prompt, as clients often send it.
            answer = create(Client(f"{first.url}/openai"), emu, "gpt-5", QUESTION["content"])
        call = answer.reply.output[-1]
        items: list[Any] = [QUESTION, *answer.reply.output]
        items.append({"type": "function_call_output", "call_id": call.call_id, "output": "1"})

        def second_turn(config: dict[str, Any]) -> Answer:
            emu.script(Step(thinking="It is one.", text="One."))
            with serve({"gateway": config, "routes": [route(emu, PROVIDER, "/openai")]}) as again:
                return create(Client(f"{again.url}/openai"), emu, "gpt-5", list(items))

        restarted = second_turn(ledger)
        assert (restarted.status, restarted.kept, restarted.unsealed) == (200, 1, 0)
        stranger = second_turn({"ledger": "memory", "unknown_seals": "unseal"})
        assert (stranger.status, stranger.kept, stranger.unsealed) == (200, 0, 1)
        # Unsealed, the turn went as its function call alone: no reasoning item, no server item id.
        sent = emu.requests[-1].body["input"]
        assert sent[1] == {"type": "function_call", "call_id": call.call_id, "name": "lookup", "arguments": '{"q":1}'}
        assert len(emu.rejections) == 0


def test_a_stored_conversation_passes_through() -> None:
    with emulate(PROVIDER) as emu, serve({"routes": [route(emu, PROVIDER, "/openai")]}) as served:
        client = Client(f"{served.url}/openai")
        emu.script(Step(thinking="Look it up.", calls=LOOKUP), Step(thinking="It is one.", text="One."))
        first = create(client, emu, "gpt-5", [QUESTION], store=True, include=[])
        assert first.status == 200
        call = first.reply.output[-1]
        follow = [{"type": "function_call_output", "call_id": call.call_id, "output": "1"}]
        second = create(client, emu, "gpt-5", follow, store=True, include=[], previous_response_id=first.reply.id)
        assert second.status == 200
        assert second.reply.output_text == "One."
        # Forwarded exactly as the client sent it, store and previous_response_id included.
        assert emu.requests[-1].raw == client.sent[-1]
        assert json.loads(client.sent[-1])["store"] is True
        assert len(emu.rejections) == 0


RAW = b'{"model": "m",\n "input": [ {"a": 1},\n  {"b": 2}, {"c": 3} ], "x": true}'


def test_edited_keeps_every_other_byte_for_values_and_removals() -> None:
    assert edited(RAW, "input", {}) is RAW
    assert (
        edited(RAW, "input", {1: {"z": 0}})
        == b'{"model": "m",\n "input": [ {"a": 1},\n  {"z":0}, {"c": 3} ], "x": true}'
    )
    assert edited(RAW, "input", {0: None}) == b'{"model": "m",\n "input": [ {"b": 2}, {"c": 3} ], "x": true}'
    assert edited(RAW, "input", {2: None}) == b'{"model": "m",\n "input": [ {"a": 1},\n  {"b": 2} ], "x": true}'


def test_a_splice_puts_its_elements_in_place_of_one() -> None:
    spliced = edited(RAW, "input", {1: Splice([{"p": 1}, {"q": 2}]), 2: Splice([])})
    assert spliced == b'{"model": "m",\n "input": [ {"a": 1},\n  {"p":1}, {"q":2} ], "x": true}'
    assert json.loads(edited(RAW, "input", {2: Splice([{"p": 1}, {"q": 2}])}))["input"][2:] == [{"p": 1}, {"q": 2}]
    assert (
        edited(RAW, "input", {0: Splice([]), 1: Splice([]), 2: Splice([])})
        == b'{"model": "m",\n "input": [  ], "x": true}'
    )
