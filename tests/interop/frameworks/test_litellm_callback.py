"""``thinkseal.interop.litellm.ThinksealCallback`` in real LiteLLM calls
(``litellm.completion`` and ``litellm.acompletion``, Claude with thinking on)
against thinkseal's Anthropic emulator: each failure users report is first
reproduced without the callback (the emulator's 400s counted), then sent
again with it registered as LiteLLM users do (``litellm.callbacks``), where
nothing is rejected and what still holds is still replayed."""

from __future__ import annotations

import os

# LiteLLM fetches its model cost map over the network at import unless told to use its bundled copy.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import litellm
import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.interop.litellm import ThinksealCallback, import_messages
from thinkseal.testing import Step, emulate

SONNET = "anthropic/claude-sonnet-4-5"
OPUS = "anthropic/claude-opus-4-1"
THINKING = {"type": "enabled", "budget_tokens": 1024}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
CALLBACK_LISTS = (
    "callbacks",
    "input_callback",
    "success_callback",
    "failure_callback",
    "_async_success_callback",
    "_async_failure_callback",
    "_async_input_callback",
)
PAGE = Path(__file__).parents[3] / "docs" / "frameworks" / "litellm.md"


@pytest.fixture(autouse=True)
def litellm_globals() -> Iterator[None]:
    """LiteLLM's callback lists are process-wide: each test leaves them as it found them."""
    saved = {name: list(getattr(litellm, name)) for name in CALLBACK_LISTS}
    quiet = litellm.suppress_debug_info
    litellm.suppress_debug_info = True  # litellm 1.110 has no telemetry switch left; this quiets its hints
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(litellm, name, value)
        litellm.suppress_debug_info = quiet


@pytest.fixture(scope="module")
def anthropic() -> Iterator[Any]:
    """One emulator for the module (each takes half a second to stop)."""
    with emulate("anthropic") as emu:
        yield emu


@pytest.fixture
def emu(anthropic: Any) -> Any:
    fresh(anthropic)
    return anthropic


def fresh(emu: Any) -> Any:
    emu.clear_script()
    emu.clear_requests()
    return emu


class Session:
    """One scenario's calls against one emulator, with or without the callback;
    ``rejected`` counts the emulator's 400s."""

    def __init__(self, emu: Any, callback: ThinksealCallback | None, *, use_async: bool = False) -> None:
        self.emu = emu
        self.use_async = use_async
        self.rejected = 0
        litellm.callbacks = [callback] if callback is not None else []

    def call(self, model: str, messages: list[Any], **options: Any) -> Any:
        kwargs = {"api_base": self.emu.base_url, "api_key": "k", "thinking": THINKING, **options}
        try:
            if self.use_async:
                response = asyncio.run(litellm.acompletion(model=model, messages=messages, **kwargs))
            else:
                response = litellm.completion(model=model, messages=messages, **kwargs)
        except litellm.BadRequestError:
            self.rejected += 1
            return None
        return response.choices[0].message

    def sent(self, index: int = -1) -> dict[str, Any]:
        body = self.emu.requests[index].body
        assert isinstance(body, dict)
        return body


def signatures(body: dict[str, Any]) -> list[str]:
    return [
        block["signature"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "thinking"
    ]


# -- the scenarios: each returns the emulator's 400s and what the last request sent ----------


def model_switch(emu: Any, callback: ThinksealCallback | None, use_async: bool) -> tuple[int, dict[str, Any]]:
    """claude-sonnet-4-5 answers with signed thinking; the session goes on with claude-opus-4-1."""
    emu.script(Step(thinking="France's capital.", text="Paris."), Step(thinking="Italy.", text="Rome."))
    s = Session(emu, callback, use_async=use_async)
    history: list[Any] = [{"role": "user", "content": "Capital of France?"}]
    history.append(s.call(SONNET, history))
    s.call(OPUS, [*history, {"role": "user", "content": "And of Italy?"}])
    return s.rejected, s.sent()


def pruning(emu: Any, callback: ThinksealCallback | None, use_async: bool) -> tuple[int, dict[str, Any]]:
    """Two signed turns; the first exchange is pruned before the third request."""
    emu.script(Step(thinking="One.", text="A."), Step(thinking="Two.", text="B."), Step(text="C."))
    s = Session(emu, callback, use_async=use_async)
    history: list[Any] = [{"role": "user", "content": "First?"}]
    history.append(s.call(SONNET, history))
    history.append({"role": "user", "content": "Second?"})
    history.append(s.call(SONNET, history))
    s.call(SONNET, [*history[2:], {"role": "user", "content": "Third?"}])
    return s.rejected, s.sent()


def system_prompt_edit(emu: Any, callback: ThinksealCallback | None, use_async: bool) -> tuple[int, dict[str, Any]]:
    """A signed turn, then the next request under an edited system prompt."""
    emu.script(Step(thinking="Brief.", text="Paris."), Step(text="Rome."))
    s = Session(emu, callback, use_async=use_async)
    history: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "France?"}]
    history.append(s.call(SONNET, history))
    edited = [{"role": "system", "content": "Be brief. Answer in English."}, *history[1:]]
    s.call(SONNET, [*edited, {"role": "user", "content": "Italy?"}])
    return s.rejected, s.sent()


def tool_loop(emu: Any, callback: ThinksealCallback | None, use_async: bool) -> tuple[int, dict[str, Any]]:
    """Claude calls a tool; the loop goes on with the result, nothing changed."""
    emu.script(Step(thinking="Need the weather.", calls=[("get_weather", {"city": "Paris"})]), Step(text="Rainy."))
    s = Session(emu, callback, use_async=use_async)
    history: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Paris weather?"}]
    reply = s.call(SONNET, history, tools=[WEATHER])
    history += [reply, {"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": "Rain."}]
    s.call(SONNET, history, tools=[WEATHER])
    return s.rejected, s.sent()


SCENARIOS = {
    "model switch": (model_switch, 1),
    "pruning": (pruning, 1),
    "system prompt edit": (system_prompt_edit, 1),
    "tool loop": (tool_loop, 0),
}


@pytest.mark.parametrize("use_async", [False, True], ids=["completion", "acompletion"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_rejected_without_the_callback_and_accepted_with_it(emu: Any, name: str, use_async: bool) -> None:
    scenario, control = SCENARIOS[name]
    rejected, _ = scenario(emu, None, use_async)
    assert rejected == control
    callback = ThinksealCallback("anthropic", ledger=thinkseal.Ledger())
    rejected, last = scenario(fresh(emu), callback, use_async)
    assert rejected == 0
    # Each request LiteLLM built reached the emulator and was read there.
    assert all(r.body is not None and r.problem is None for r in emu.requests)
    if name == "tool loop":
        assert len(signatures(last)) == 1  # kept: the signature still goes out
    else:
        assert signatures(last) == []  # what no longer holds goes out without its thinking
        assert any(m["role"] == "assistant" for m in last["messages"])  # and the turn itself still does


def test_only_the_turns_that_no_longer_hold_lose_their_thinking(emu: Any) -> None:
    """A model switch back: the sonnet turns are kept for sonnet, the opus turn is not."""
    emu.script(Step(thinking="One.", text="A."), Step(thinking="Two.", text="B."), Step(text="C."))
    callback = ThinksealCallback("anthropic", ledger=thinkseal.Ledger())
    s = Session(emu, callback)
    history: list[Any] = [{"role": "user", "content": "First?"}]
    history.append(s.call(SONNET, history))
    history.append({"role": "user", "content": "Second?"})
    history.append(s.call(OPUS, history))
    s.call(SONNET, [*history, {"role": "user", "content": "Third?"}])
    assert s.rejected == 0
    # The opus turn is not sonnet's, and unsealing it changes the prefix of everything after it;
    # the first turn comes before it and still holds.
    assert signatures(s.sent()) == [history[1].thinking_blocks[0]["signature"]]


@pytest.mark.parametrize("use_async", [False, True], ids=["completion", "acompletion"])
def test_a_reply_to_a_rewritten_request_is_kept_on_its_own_model(emu: Any, use_async: bool) -> None:
    """After the switch to opus, opus's own turn is bound to the request as it went out
    (sonnet's turn unsealed in it), so it is replayed on the next opus request."""
    emu.script(Step(thinking="One.", text="A."), Step(thinking="Two.", text="B."), Step(text="C."))
    s = Session(emu, ThinksealCallback("anthropic", ledger=thinkseal.Ledger()), use_async=use_async)
    history: list[Any] = [{"role": "user", "content": "First?"}]
    history.append(s.call(SONNET, history))
    history.append({"role": "user", "content": "Second?"})
    history.append(s.call(OPUS, history))
    s.call(OPUS, [*history, {"role": "user", "content": "Third?"}])
    assert s.rejected == 0
    assert signatures(s.sent()) == [history[3].thinking_blocks[0]["signature"]]


def test_a_restart_from_the_stored_message_list_replays_what_the_ledger_recorded(emu: Any, tmp_path: Path) -> None:
    stored = tmp_path / "session.json"
    ledger_path = str(tmp_path / "ledger.db")
    emu.script(Step(thinking="Need the weather.", calls=[("get_weather", {"city": "Paris"})]), Step(text="Rain."))
    first = ThinksealCallback("anthropic", ledger=thinkseal.Ledger.sqlite(ledger_path))
    s = Session(emu, first)
    history: list[Any] = [{"role": "user", "content": "Paris weather?"}]
    reply = s.call(SONNET, history, tools=[WEATHER])
    history += [reply.model_dump(), {"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": "Rain."}]
    stored.write_text(json.dumps(history))

    # Another process: a new ledger object on the same file, a new callback, the list read back.
    again = ThinksealCallback("anthropic", ledger=thinkseal.Ledger.sqlite(ledger_path))
    s = Session(emu, again)
    s.call(SONNET, json.loads(stored.read_text()), tools=[WEATHER])
    assert s.rejected == 0
    assert signatures(s.sent()) == [reply.thinking_blocks[0]["signature"]]

    # The control: LiteLLM alone sends the stored list as it is, and the emulator takes it too.
    emu.script(Step(text="Rain."))
    s = Session(emu, None)
    s.call(SONNET, json.loads(stored.read_text()), tools=[WEATHER])
    assert s.rejected == 0


# -- a tool loop that cannot go on with its thinking -----------------------------------------


def switched_tool_loop(s: Session) -> list[Any]:
    """A sonnet tool call, continued on opus: Claude needs the turn's thinking, which is sonnet's."""
    history: list[Any] = [{"role": "user", "content": "Paris weather?"}]
    reply = s.call(SONNET, history, tools=[WEATHER])
    return [*history, reply, {"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": "Rain."}]


@pytest.mark.parametrize("use_async", [False, True], ids=["completion", "acompletion"])
def test_a_tool_loop_that_cannot_keep_its_thinking_goes_on_without_thinking(emu: Any, use_async: bool) -> None:
    emu.script(Step(thinking="Need the weather.", calls=[("get_weather", {"city": "Paris"})]))
    s = Session(emu, None, use_async=use_async)
    s.call(OPUS, switched_tool_loop(s), tools=[WEATHER])
    assert s.rejected == 1  # the control

    fresh(emu)
    emu.script(Step(thinking="Need the weather.", calls=[("get_weather", {"city": "Paris"})]), Step(text="Rain."))
    s = Session(emu, ThinksealCallback("anthropic", ledger=thinkseal.Ledger()), use_async=use_async)
    answer = s.call(OPUS, switched_tool_loop(s), tools=[WEATHER])
    assert s.rejected == 0
    assert answer.content == "Rain."
    assert "thinking" not in s.sent()  # what LiteLLM's modify_params does too
    assert signatures(s.sent()) == []


def test_on_replay_error_raise_stops_the_request_before_it_is_sent(emu: Any) -> None:
    emu.script(Step(thinking="Need the weather.", calls=[("get_weather", {"city": "Paris"})]))
    callback = ThinksealCallback("anthropic", ledger=thinkseal.Ledger(), on_replay_error="raise")
    s = Session(emu, callback, use_async=True)
    history = switched_tool_loop(s)
    with pytest.raises(thinkseal.ReplayError, match="continues the tool loop"):
        s.call(OPUS, history, tools=[WEATHER])
    assert len(emu.requests) == 1  # only the first step went out


def test_without_a_ledger_no_sealed_thinking_is_replayed(emu: Any) -> None:
    emu.script(Step(thinking="One.", text="A."), Step(text="B."))
    s = Session(emu, ThinksealCallback("anthropic"))
    history: list[Any] = [{"role": "user", "content": "First?"}]
    history.append(s.call(SONNET, history))
    s.call(SONNET, [*history, {"role": "user", "content": "Second?"}])
    assert s.rejected == 0
    assert signatures(s.sent()) == []


def test_the_callers_messages_are_not_changed(emu: Any) -> None:
    emu.script(Step(thinking="One.", text="A."), Step(text="B."))
    s = Session(emu, ThinksealCallback("anthropic", ledger=thinkseal.Ledger()), use_async=True)
    history: list[Any] = [{"role": "user", "content": "First?"}]
    history.append(s.call(SONNET, history).model_dump())
    before = json.dumps(history)
    s.call(OPUS, [*history, {"role": "user", "content": "Second?"}])
    assert json.dumps(history) == before
    assert signatures(s.sent()) == []


# -- the converter -----------------------------------------------------------------------------


def test_import_messages_reads_litellm_thinking_blocks() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "Look it up.",
            "thinking_blocks": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "c2ln"},
                {"type": "redacted_thinking", "data": "cmVk"},
            ],
            "tool_calls": [
                {"index": 1, "id": "toolu_1", "type": "function", "function": {"name": "w", "arguments": "{}"}}
            ],
            "function_call": None,
            "provider_specific_fields": {"citations": None},
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "Rain."},
    ]
    assert list(import_messages(messages)) == [
        SystemMessage("Be brief."),
        UserMessage("Weather?"),
        AssistantMessage(
            tool_calls=[ToolCall("toolu_1", "w", {})],
            thinking=[ThinkingBlock.Text("Look it up.", "c2ln"), ThinkingBlock.Redacted("cmVk")],
        ),
        ToolMessage("Rain.", "toolu_1"),
    ]
    assert isinstance(import_messages([]), Conversation)


@pytest.mark.parametrize(
    ("messages", "path"),
    [
        ("not a list", "messages"),
        ([42], "messages[0]"),
        ([{"role": "assistant", "content": "x", "thinking_blocks": [{"type": "other"}]}], "thinking_blocks[0].type"),
        ([{"role": "assistant", "content": "x", "thinking_blocks": "no"}], "messages[0].thinking_blocks"),
        ([{"role": "assistant", "content": "x", "thinking_blocks": [{"type": "redacted_thinking"}]}], ".data"),
    ],
)
def test_malformed_messages_give_a_thinkseal_error_naming_the_field(messages: Any, path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        import_messages(messages)
    assert path in str(caught.value)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValidationError, match="provider"):
        ThinksealCallback("no-such-provider")
    with pytest.raises(ValidationError, match="ledger"):
        ThinksealCallback("anthropic", ledger=object())  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="on_replay_error"):
        ThinksealCallback("anthropic", on_replay_error="ignore")  # type: ignore[arg-type]


def test_the_pages_example_runs() -> None:
    code = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)
    assert code, "docs/frameworks/litellm.md has a python example"
    exec(compile(code[0], str(PAGE), "exec"), {})
