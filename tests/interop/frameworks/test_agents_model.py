"""``thinkseal.interop.agents``: a real openai-agents ``Agent`` run by the real
``Runner`` over ``ThinksealModel``, against thinkseal's emulators (loopback
HTTP servers that enforce each provider's rules and answer its error bodies).

The failures users report are first reproduced WITHOUT thinkseal — agents' own
models (``LitellmModel`` for Claude, ``OpenAIResponsesModel``) pointed at the
same emulator, base URL only — and then run WITH it; each test counts the
emulator's 400s both ways."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm reads its model table offline

from agents import Agent, ModelSettings, OpenAIResponsesModel, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.extensions.models.litellm_model import LitellmModel
from openai import AsyncOpenAI
from openai.types.responses import ResponseCompletedEvent, ResponseReasoningTextDeltaEvent, ResponseTextDeltaEvent
from openai.types.shared import Reasoning

import thinkseal
from thinkseal.interop.agents import ThinksealModel, ThinksealModelProvider
from thinkseal.testing import Step, emulate

from .support import Refusals

set_tracing_disabled(True)

SONNET, OPUS = "claude-sonnet-4-5", "claude-opus-4-1"
DOCS = Path(__file__).parents[3] / "docs" / "frameworks" / "agents.md"


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18C in {city}"


def weather_agent(model: Any, **kwargs: Any) -> Agent[None]:
    return Agent("weather", instructions="Be brief.", model=model, tools=[get_weather], **kwargs)


@pytest.fixture
def claude() -> Iterator[Any]:
    with emulate("anthropic") as emu:
        emu.statuses = Refusals(emu)
        yield emu


def rejected(emu: Any) -> int:
    return sum(1 for status in emu.statuses if status == 400)


def restart(result: Any) -> list[Any]:
    """The run's history as a process that stored it would read it back."""
    return list(json.loads(json.dumps(result.to_input_list())))


def claude_model(emu: Any, model: str, ledger: thinkseal.Ledger, **client_options: Any) -> ThinksealModel:
    options = {**emu.options, **emu.thinking_options}
    return ThinksealModel(
        "anthropic", model, options=options, ledger=ledger, base_url=emu.base_url, api_key="k", **client_options
    )


def litellm_model(emu: Any, model: str) -> tuple[LitellmModel, ModelSettings]:
    """agents' own route to Claude, thinking on (agents then keeps Claude's thinking blocks)."""
    settings = ModelSettings(max_tokens=2048, reasoning=Reasoning(effort="low"))
    return LitellmModel(f"anthropic/{model}", base_url=emu.base_url, api_key="k"), settings


def tool_loop(emu: Any, *more: Step) -> None:
    emu.script(
        Step(thinking="I need the weather.", calls=[("get_weather", {"city": "Paris"})]),
        Step(thinking="Now answer.", text="It is 18C in Paris."),
        *more,
    )


def last_messages(emu: Any) -> list[dict[str, Any]]:
    return list(emu.requests[-1].body["messages"])


def signatures(messages: list[dict[str, Any]]) -> list[str]:
    return [
        b["signature"]
        for m in messages
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "thinking"
    ]


# -- Claude: the tool loop, a restart, a model switch, pruning ------------------------------


def test_a_claude_tool_loop_keeps_its_thinking_through_the_runner_and_a_restart(claude: Any) -> None:
    tool_loop(claude, Step(thinking="Rome too.", text="Also 18C."))
    ledger = thinkseal.Ledger()
    agent = weather_agent(claude_model(claude, SONNET, ledger))
    first = Runner.run_sync(agent, "Weather in Paris?")
    assert first.final_output == "It is 18C in Paris."
    # The tool step went back with its signed thinking, first in the turn, as Claude requires.
    assert last_messages(claude)[1]["content"][0]["type"] == "thinking"
    items = restart(first)
    assert [i.get("type", "message") for i in items] == [
        "message", "reasoning", "function_call", "function_call_output", "reasoning", "message"
    ]  # fmt: skip
    assert items[1]["provider_data"]["thinkseal"]["parts"][0]["text"] == "I need the weather."

    second = Runner.run_sync(agent, [*items, {"role": "user", "content": "And Rome?"}])
    assert second.final_output == "Also 18C."
    assert len(signatures(last_messages(claude))) == 2  # both earlier turns replayed sealed
    assert rejected(claude) == 0
    assert first.context_wrapper.usage.requests == 2
    assert first.context_wrapper.usage.output_tokens > 0


def test_without_thinkseal_the_same_loop_and_restart_go_through_litellm(claude: Any) -> None:
    """The control for the test above: agents keeps Claude's blocks for one model."""
    tool_loop(claude, Step(thinking="Rome too.", text="Also 18C."))
    model, settings = litellm_model(claude, SONNET)
    agent = weather_agent(model, model_settings=settings)
    first = Runner.run_sync(agent, "Weather in Paris?")
    Runner.run_sync(agent, [*restart(first), {"role": "user", "content": "And Rome?"}])
    assert rejected(claude) == 0


def interrupted(emu: Any, model: Any, settings: ModelSettings | None = None) -> list[Any]:
    """A tool loop cut after the tool ran (the run stops on the tool's result)."""
    emu.script(Step(thinking="I need the weather.", calls=[("get_weather", {"city": "Paris"})]))
    kwargs: dict[str, Any] = {"model_settings": settings} if settings else {}
    result = Runner.run_sync(weather_agent(model, tool_use_behavior="stop_on_first_tool", **kwargs), "Weather?")
    assert result.final_output == "18C in Paris"
    return restart(result)


def test_switching_claude_models_inside_an_interrupted_tool_loop(claude: Any) -> None:
    # Without thinkseal: agents drops Sonnet's blocks for Opus, and Claude refuses the open loop.
    model, settings = litellm_model(claude, SONNET)
    items = interrupted(claude, model, settings)
    opus, _ = litellm_model(claude, OPUS)
    with pytest.raises(Exception, match="Expected `thinking` or `redacted_thinking`"):
        Runner.run_sync(weather_agent(opus, model_settings=settings), items)
    assert rejected(claude) == 1

    # With thinkseal: the same switch is caught before sending, and the way out is taken when chosen.
    claude.statuses.clear()
    ledger = thinkseal.Ledger()
    items = interrupted(claude, claude_model(claude, SONNET, ledger))
    with pytest.raises(thinkseal.ReplayError):
        Runner.run_sync(weather_agent(claude_model(claude, OPUS, ledger)), items)
    claude.script(Step(text="It is 18C."))
    switched = claude_model(claude, OPUS, ledger, on_replay_error="disable_thinking")
    assert Runner.run_sync(weather_agent(switched), items).final_output == "It is 18C."
    # The same model picks the loop up from the stored items, sealed.
    claude.script(Step(thinking="So.", text="It is 18C."))
    assert Runner.run_sync(weather_agent(claude_model(claude, SONNET, ledger)), items).final_output == "It is 18C."
    assert len(signatures(last_messages(claude))) == 1
    assert rejected(claude) == 0


def test_switching_claude_models_between_turns(claude: Any) -> None:
    tool_loop(claude, Step(thinking="Opus now.", text="Also 18C."))
    ledger = thinkseal.Ledger()
    first = Runner.run_sync(weather_agent(claude_model(claude, SONNET, ledger)), "Weather in Paris?")
    items = [*restart(first), {"role": "user", "content": "And Rome?"}]
    second = Runner.run_sync(weather_agent(claude_model(claude, OPUS, ledger)), items)
    assert second.final_output == "Also 18C."
    assert signatures(last_messages(claude)) == []  # Sonnet's thinking is not Opus's to read
    assert rejected(claude) == 0


def test_pruning_the_history(claude: Any) -> None:
    """Keep the last exchange only (a context-window trim): Claude's
    signatures cover the prefix they were made after."""

    def run_twice(agent: Agent[None]) -> list[Any]:
        first = Runner.run_sync(agent, "Weather in Paris?")
        second = Runner.run_sync(agent, [*restart(first), {"role": "user", "content": "And Rome?"}])
        items = restart(second)
        start = max(i for i, item in enumerate(items) if item.get("content") == "And Rome?")
        return [*items[start:], {"role": "user", "content": "Thanks."}]

    story = (Step(thinking="Rome?", calls=[("get_weather", {"city": "Rome"})]), Step(thinking="So.", text="18C."))
    tool_loop(claude, *story, Step(thinking="Welcome.", text="Welcome."))
    model, settings = litellm_model(claude, SONNET)
    agent = weather_agent(model, model_settings=settings)
    with pytest.raises(Exception, match="Invalid `signature` in `thinking` block"):
        Runner.run_sync(agent, run_twice(agent))
    assert rejected(claude) == 1

    claude.statuses.clear()
    claude.clear_script()
    tool_loop(claude, *story, Step(thinking="Welcome.", text="Welcome."))
    agent = weather_agent(claude_model(claude, SONNET, thinkseal.Ledger()))
    assert Runner.run_sync(agent, run_twice(agent)).final_output == "Welcome."
    assert rejected(claude) == 0


def test_a_streamed_run(claude: Any) -> None:
    tool_loop(claude, Step(thinking="Rome too.", text="Also 18C."))
    ledger = thinkseal.Ledger()
    agent = weather_agent(claude_model(claude, SONNET, ledger))

    async def main() -> tuple[Any, list[Any]]:
        result = Runner.run_streamed(agent, "Weather in Paris?")
        events = [event.data async for event in result.stream_events() if event.type == "raw_response_event"]
        return result, events

    result, events = asyncio.run(main())
    assert result.final_output == "It is 18C in Paris."
    assert "".join(e.delta for e in events if isinstance(e, ResponseTextDeltaEvent)) == "It is 18C in Paris."
    assert "".join(e.delta for e in events if isinstance(e, ResponseReasoningTextDeltaEvent)) == (
        "I need the weather.Now answer."
    )
    assert sum(isinstance(e, ResponseCompletedEvent) for e in events) == 2
    # The streamed items carry the seals as the plain run's do.
    second = Runner.run_sync(agent, [*restart(result), {"role": "user", "content": "And Rome?"}])
    assert second.final_output == "Also 18C."
    assert len(signatures(last_messages(claude))) == 2
    assert rejected(claude) == 0


# -- across providers --------------------------------------------------------------------


def test_claude_then_openai_responses_then_back(claude: Any) -> None:
    with emulate("openai-responses") as openai_emu:
        openai_emu.statuses = Refusals(openai_emu)
        ask = {"role": "user", "content": "And Rome?"}
        # Without thinkseal: Claude through LitellmModel, then agents' own Responses model.
        tool_loop(claude)
        model, settings = litellm_model(claude, SONNET)
        first = Runner.run_sync(weather_agent(model, model_settings=settings), "Weather in Paris?")
        openai_emu.script(Step(text="Rome is 18C."))
        plain = OpenAIResponsesModel("gpt-5", AsyncOpenAI(base_url=openai_emu.base_url, api_key="k"))
        with pytest.raises(Exception, match="does not match ResponseCreateParams"):
            Runner.run_sync(weather_agent(plain), [*restart(first), ask])
        assert rejected(openai_emu) == 1  # agents' output message without its id is not an input item

        openai_emu.statuses.clear()
        openai_emu.clear_script()
        tool_loop(claude, Step(thinking="Back.", text="Still 18C."))
        ledger = thinkseal.Ledger()
        first = Runner.run_sync(weather_agent(claude_model(claude, SONNET, ledger)), "Weather in Paris?")
        openai_emu.script(Step(thinking="Rome.", text="18C in Rome."))
        gpt = ThinksealModel(
            "openai-responses", "gpt-5", options=openai_emu.thinking_options, ledger=ledger,
            base_url=openai_emu.base_url, api_key="k",
        )  # fmt: skip
        second = Runner.run_sync(weather_agent(gpt), [*restart(first), ask])
        assert second.final_output == "18C in Rome."
        sent = openai_emu.requests[-1].body["input"]
        assert [i for i in sent if i.get("type") == "reasoning"] == []  # Claude's thinking stays with Claude
        assert rejected(openai_emu) == 0
    # Back on Claude, Sonnet's own turns are still sealed for Sonnet.
    third = Runner.run_sync(
        weather_agent(claude_model(claude, SONNET, ledger)), [*restart(second), {"role": "user", "content": "Ok?"}]
    )
    assert third.final_output == "Still 18C."
    assert len(signatures(last_messages(claude))) == 2
    assert rejected(claude) == 0


def test_openai_responses_model_switch_and_pruning() -> None:
    with emulate("openai-responses") as emu:
        emu.statuses = Refusals(emu)
        settings = ModelSettings(
            reasoning=Reasoning(effort="medium", summary="auto"),
            store=False,
            response_include=["reasoning.encrypted_content"],
        )
        client = AsyncOpenAI(base_url=emu.base_url, api_key="k")

        def history(model: Any, **kwargs: Any) -> list[Any]:
            emu.script(
                Step(thinking="Look it up.", calls=[("get_weather", {"city": "Paris"})]),
                Step(thinking="Answer.", text="18C."),
            )
            return restart(Runner.run_sync(weather_agent(model, **kwargs), "Weather in Paris?"))

        def switched_and_pruned(first: Any, second: Any, **kwargs: Any) -> tuple[str, str]:
            items = history(first, **kwargs)
            emu.clear_script()
            emu.script(Step(text="Switched."), Step(text="Pruned."))
            ask = {"role": "user", "content": "And Rome?"}
            answers = []
            for model, held in ((second, items), (first, items[3:])):  # [3:] keeps a result, not its call
                try:
                    answers.append(Runner.run_sync(weather_agent(model, **kwargs), [*held, ask]).final_output)
                except Exception as error:  # agents' own model: openai.BadRequestError
                    answers.append(type(error).__name__)
            return answers[0], answers[1]

        plain = (OpenAIResponsesModel("gpt-5", client), OpenAIResponsesModel("gpt-5-mini", client))
        assert switched_and_pruned(*plain, model_settings=settings) == ("BadRequestError", "BadRequestError")
        assert rejected(emu) == 2

        emu.statuses.clear()
        ledger = thinkseal.Ledger()
        ours = [
            ThinksealModel("openai-responses", name, options=emu.thinking_options, ledger=ledger,
                           base_url=emu.base_url, api_key="k")
            for name in ("gpt-5", "gpt-5-mini")
        ]  # fmt: skip
        assert switched_and_pruned(*ours) == ("Switched.", "Pruned.")
        assert rejected(emu) == 0


def test_gemini_thought_signatures_survive_the_runner() -> None:
    with emulate("gemini") as emu:
        emu.statuses = Refusals(emu)
        tool_loop(emu, Step(thinking="Rome.", text="Also 18C."))
        provider = ThinksealModelProvider(
            "gemini", options=emu.thinking_options, ledger=thinkseal.Ledger(), base_url=emu.base_url, api_key="k"
        )
        agent = weather_agent("gemini-3-pro-preview")
        config = RunConfig(model_provider=provider)
        first = Runner.run_sync(agent, "Weather in Paris?", run_config=config)
        assert first.final_output == "It is 18C in Paris."
        items = restart(first)
        second = Runner.run_sync(agent, [*items, {"role": "user", "content": "And Rome?"}], run_config=config)
        assert second.final_output == "Also 18C."
        sent = json.dumps(emu.requests[-1].body["contents"])
        assert sent.count("thoughtSignature") >= 1
        assert rejected(emu) == 0
        assert provider.get_model("gemini-3-pro-preview") is provider.get_model("gemini-3-pro-preview")


# -- the adapter's own contract ----------------------------------------------------------


def test_bad_input_is_a_thinkseal_error(claude: Any) -> None:
    model = claude_model(claude, SONNET, thinkseal.Ledger())
    item = {"type": "reasoning", "id": "x", "summary": [], "provider_data": {"thinkseal": {"v": 1, "parts": [7]}}}
    with pytest.raises(thinkseal.ValidationError) as info:
        Runner.run_sync(weather_agent(model), [{"role": "user", "content": "Hi"}, item])
    assert info.value.path is not None
    assert info.value.path.startswith("input[1].provider_data.thinkseal")
    with pytest.raises(thinkseal.ValidationError, match=r"model_settings\.truncation"):
        Runner.run_sync(weather_agent(model, model_settings=ModelSettings(truncation="auto")), "Hi")
    with pytest.raises(thinkseal.ValidationError, match="unknown id"):
        ThinksealModel("nope", SONNET)
    with pytest.raises(thinkseal.ValidationError, match="model_name"):
        ThinksealModelProvider("anthropic", api_key="k").get_model(None)
    assert len(claude.requests) == 0


def test_the_docs_page_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S)
    assert blocks, "docs/frameworks/agents.md has a python example"
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], str(DOCS), "exec"), namespace)
    assert namespace["answer"] == "It is 18C in Paris."
