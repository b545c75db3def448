"""``thinkseal.interop.pydantic_ai.ThinksealModel`` inside a real pydantic-ai
``Agent``, against thinkseal's emulators over loopback HTTP.

The failures users report are reproduced first with pydantic-ai's own model
classes pointed at the same emulator (base URL and key only), and the same
scenario then runs with ``ThinksealModel``. Rejections are the emulator's
400 answers, counted both ways."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI
from pydantic import BaseModel
from pydantic_ai import Agent, NativeOutput
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, ThinkingPart
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openrouter import OpenRouterModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openrouter import OpenRouterProvider

import thinkseal
from thinkseal.interop import pydantic_ai as ts_pydantic_ai
from thinkseal.interop.pydantic_ai import ThinksealModel
from thinkseal.testing import Step, emulate

from .support import Refusals

SONNET, OPUS = "claude-sonnet-4-5", "claude-opus-4-1"
THINKING = {"type": "enabled", "budget_tokens": 1024}
DOC = Path(__file__).parents[3] / "docs" / "frameworks" / "pydantic-ai.md"
COUNTS: dict[str, dict[str, int]] = {}  # scenario -> {"pydantic-ai": n, "thinkseal": n}


def weather_agent(model: Model, **settings: Any) -> Agent[None, str]:
    agent = Agent(model, instructions="Answer in one sentence.", system_prompt="You are a weather bot.")
    agent.model_settings = settings or None  # type: ignore[assignment]

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "18°C"

    return agent


def tool_loop(emu: Any, times: int = 1) -> None:
    for _ in range(times):
        emu.script(
            Step(thinking="I need the weather.", calls=[("get_weather", {"city": "Paris"})]),
            Step(thinking="Now answer.", text="It is 18°C."),
        )


# -- the two ways to reach Claude ---------------------------------------------------------


def claude(kind: str, emu: Any, ledger: thinkseal.Ledger) -> tuple[Callable[[str], Model], dict[str, Any]]:
    """A maker of Claude models of ``kind`` and the agent settings that turn thinking on."""
    if kind == "pydantic-ai":
        provider = AnthropicProvider(base_url=emu.base_url, api_key="k")
        return (lambda name: AnthropicModel(name, provider=provider)), {
            "max_tokens": 2048,
            "anthropic_thinking": THINKING,
        }
    return (
        lambda name: ThinksealModel(
            "anthropic", name, ledger=ledger, base_url=emu.base_url, api_key="k", options={"thinking": THINKING}
        )
    ), {"max_tokens": 2048}


def run(agent: Agent[None, str], prompt: str | None, **kwargs: Any) -> list[ModelMessage] | None:
    """The run's messages, or None when the provider refused it."""
    try:
        return agent.run_sync(prompt, **kwargs).all_messages()
    except (ModelHTTPError, thinkseal.ProviderError):
        return None


def switch(agent: Agent[None, str], make: Callable[[str], Model]) -> None:
    tool_loop_history = run(agent, "Weather in Paris?")
    assert tool_loop_history is not None
    run(agent, "And tomorrow?", message_history=tool_loop_history, model=make(OPUS))


def prune(agent: Agent[None, str], make: Callable[[str], Model]) -> None:
    first = run(agent, "Weather in Paris?")
    assert first is not None
    second = run(agent, "And in Rome?", message_history=first)
    assert second is not None
    # Keep the second exchange only, as a history trimmer does.
    run(agent, "And tomorrow?", message_history=second[len(first) :])


def preamble(agent: Agent[None, str], make: Callable[[str], Model]) -> None:
    first = run(agent, "Weather in Paris?")
    assert first is not None
    run(agent, "And tomorrow?", message_history=first, instructions="Use Fahrenheit.")


def restart(agent: Agent[None, str], make: Callable[[str], Model]) -> None:
    first = run(agent, "Weather in Paris?")
    assert first is not None
    stored = ModelMessagesTypeAdapter.dump_json(first)
    loaded = ModelMessagesTypeAdapter.validate_json(stored)
    # A new process: a new model object (the ledger is the store both share).
    restarted = weather_agent(make(SONNET), **(agent.model_settings or {}))
    run(restarted, "And tomorrow?", message_history=loaded)


def interrupted(agent: Agent[None, str], make: Callable[[str], Model]) -> None:
    first = run(agent, "Weather in Paris?")
    assert first is not None
    # The process died after the tool call came back, before its result was sent: the stored
    # history ends with the call, and the next run (no new prompt) runs the tool and goes on.
    cut = next(i for i, m in enumerate(first) if isinstance(m, ModelResponse)) + 1
    stored = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(first[:cut]))
    run(agent, None, message_history=stored)


SCENARIOS: dict[str, Callable[[Agent[None, str], Callable[[str], Model]], None]] = {
    "model switch": switch,
    "pruned history": prune,
    "system preamble changed": preamble,
    "restart from stored history": restart,
    "interrupted tool loop": interrupted,
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_claude_scenarios_with_and_without_thinkseal(name: str) -> None:
    counts: dict[str, int] = {}
    for kind in ("pydantic-ai", "thinkseal"):
        with emulate("anthropic") as emu:
            tool_loop(emu, 3)
            statuses = Refusals(emu)
            make, settings = claude(kind, emu, thinkseal.Ledger())
            SCENARIOS[name](weather_agent(make(SONNET), **settings), make)
            counts[kind] = len(statuses)
            assert len(emu.requests) >= 3
    COUNTS[name] = counts
    assert counts["thinkseal"] == 0


def test_without_thinkseal_some_scenario_is_rejected() -> None:
    """Runs after the scenarios (file order): the sum is what docs/frameworks/pydantic-ai.md reports."""
    if len(COUNTS) < len(SCENARIOS):
        for name in SCENARIOS:
            if name not in COUNTS:
                test_claude_scenarios_with_and_without_thinkseal(name)
    print("\nrejections (pydantic-ai, thinkseal):", {k: (v["pydantic-ai"], v["thinkseal"]) for k, v in COUNTS.items()})
    assert sum(c["pydantic-ai"] for c in COUNTS.values()) >= 1
    assert sum(c["thinkseal"] for c in COUNTS.values()) == 0
    assert COUNTS["model switch"]["pydantic-ai"] >= 1
    assert COUNTS["pruned history"]["pydantic-ai"] >= 1


# -- what goes over the wire ---------------------------------------------------------------


def test_a_thinking_tool_loop_replays_the_seal_and_streams() -> None:
    with emulate("anthropic") as emu:
        tool_loop(emu, 2)
        statuses = Refusals(emu)
        ledger = thinkseal.Ledger()
        make, settings = claude("thinkseal", emu, ledger)
        agent = weather_agent(make(SONNET), **settings)
        result = agent.run_sync("Weather in Paris?")
        assert result.output == "It is 18°C."
        step = emu.requests[1].body
        assert step["system"] == [
            {"type": "text", "text": "You are a weather bot."},
            {"type": "text", "text": "Answer in one sentence."},
        ]
        assert step["tools"][0]["name"] == "get_weather"
        assert step["max_tokens"] == 2048
        assert step["thinking"] == THINKING
        thinking = step["messages"][1]["content"][0]
        assert thinking["type"] == "thinking"
        assert thinking["signature"]  # replayed sealed: the loop goes on
        response = result.all_messages()[1]
        assert isinstance(response, ModelResponse)
        assert response.parts[0] == ThinkingPart(
            "I need the weather.", signature=thinking["signature"], provider_name="anthropic"
        )
        assert response.finish_reason == "tool_call"
        assert response.provider_response_id
        assert response.usage.input_tokens > 0
        assert response.usage.output_tokens > 0
        assert response.model_name == SONNET

        async def streamed() -> list[ModelMessage]:
            async with agent.run_stream("And in Rome?", message_history=result.all_messages()) as stream:
                chunks = [text async for text in stream.stream_text(delta=True)]
                assert "".join(chunks) == "It is 18°C."
            return stream.all_messages()

        history = asyncio.run(streamed())
        last_call = history[-3]
        assert isinstance(last_call, ModelResponse)
        signed = last_call.parts[0]
        assert isinstance(signed, ThinkingPart)
        assert signed.signature  # the stream's reply carries its seal
        sent = emu.requests[-1].body
        signatures = [b for m in sent["messages"] for b in m["content"] if isinstance(b, dict) and b.get("signature")]
        assert len(signatures) == 3  # every earlier turn kept
        assert statuses == []
        assert ledger.attach(ts_pydantic_ai.import_messages(history)).recognised == 4


def test_structured_output_by_tool_and_native() -> None:
    class City(BaseModel):
        name: str
        celsius: int

    with emulate("anthropic") as emu:
        emu.script(
            Step(calls=[("final_result", {"name": "Paris", "celsius": 18})]),
            Step(text='{"name": "Rome", "celsius": 20}'),
        )
        model = ThinksealModel("anthropic", SONNET, base_url=emu.base_url, api_key="k", options={"max_tokens": 512})
        assert Agent(model, output_type=City).run_sync("Paris?").output == City(name="Paris", celsius=18)
        assert emu.requests[0].body["tools"][0]["name"] == "final_result"
        assert Agent(model, output_type=NativeOutput(City)).run_sync("Rome?").output == City(name="Rome", celsius=20)
        assert emu.requests[1].body["output_config"]["format"]["type"] == "json_schema"


def test_gemini_thought_signatures_survive_the_agents_history() -> None:
    """Gemini's signatures have no pydantic-ai field: they travel in provider_details and come back."""
    with emulate("gemini") as emu:
        emu.script(
            Step(thinking="I need the weather.", calls=[("get_weather", {"city": "Paris"})]),
            Step(thinking="Now answer.", text="It is 18°C."),
        )
        statuses = Refusals(emu)
        ledger = thinkseal.Ledger()
        model = ThinksealModel(
            "gemini",
            "gemini-3-pro-preview",
            ledger=ledger,
            base_url=emu.base_url,
            api_key="k",
            options=emu.thinking_options,
        )
        result = weather_agent(model, max_tokens=1000).run_sync("Weather in Paris?")
        assert result.output == "It is 18°C."
        stored = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(result.all_messages()))
        assert ledger.attach(ts_pydantic_ai.import_messages(stored)).recognised == 2
        sent = emu.requests[1].body
        assert any("thoughtSignature" in p for c in sent["contents"] for p in c["parts"])
        assert sent["generationConfig"]["maxOutputTokens"] == 1000
        assert statuses == []


@pytest.mark.parametrize("kind", ["pydantic-ai", "thinkseal"])
def test_claude_then_gemini_on_openrouter(kind: str) -> None:
    with emulate("openrouter") as emu:
        emu.script(
            Step(thinking="I need the weather.", calls=[("get_weather", {"city": "Paris"})]),
            Step(thinking="Now answer.", text="It is 18°C."),
            Step(thinking="Tomorrow too.", text="Sunny."),
        )
        statuses = Refusals(emu)
        if kind == "pydantic-ai":
            provider = OpenRouterProvider(openai_client=AsyncOpenAI(base_url=emu.base_url, api_key="k"))

            def make(name: str) -> Model:
                return OpenRouterModel(name, provider=provider)

            settings: dict[str, Any] = {"openrouter_reasoning": {"effort": "medium"}}
        else:
            ledger = thinkseal.Ledger()

            def make(name: str) -> Model:
                return ThinksealModel(
                    "openrouter", name, ledger=ledger, base_url=emu.base_url, api_key="k", options=emu.thinking_options
                )

            settings = {}
        agent = weather_agent(make("anthropic/claude-sonnet-4.5"), **settings)
        first = run(agent, "Weather in Paris?")
        assert first is not None
        run(agent, "And tomorrow?", message_history=first, model=make("google/gemini-2.5-pro"))
        COUNTS.setdefault("Claude -> Gemini on OpenRouter", {})[kind] = len(statuses)
        print(f"\nrejections, Claude -> Gemini on OpenRouter, {kind}: {len(statuses)}")
        turns = [[m for m in r.body["messages"] if m["role"] == "assistant"] for r in emu.requests]
        if kind == "pydantic-ai":
            assert len(statuses) == 1  # Claude's reasoning_details sent to Gemini
        if kind == "thinkseal":
            assert statuses == []
            assert turns[1][0]["reasoning_details"]  # to Claude in its own loop
            assert not any("reasoning_details" in m for m in turns[-1])  # not to another model
            assert len(emu.requests) == 3


def test_bad_arguments_are_thinkseal_errors() -> None:
    with pytest.raises(thinkseal.ValidationError, match="unknown id"):
        ThinksealModel("nope", SONNET)
    with pytest.raises(thinkseal.ValidationError) as info:
        ThinksealModel("anthropic", SONNET, options=[("max_tokens", 1)], api_key="k")  # type: ignore[arg-type]
    assert info.value.path == "options"
    with pytest.raises(thinkseal.ValidationError) as info:
        ThinksealModel("anthropic", SONNET, client=object(), api_key="k")  # type: ignore[arg-type]
    assert info.value.path == "client"
    model = ThinksealModel("anthropic", SONNET, api_key="k", base_url="http://127.0.0.1:9")
    with pytest.raises(thinkseal.ValidationError) as info:
        Agent(model).run_sync("hi", model_settings={"thinking": True})
    assert info.value.path == "model_settings.thinking"
    # A malformed history is named at its field before anything is sent.
    with pytest.raises(thinkseal.ValidationError) as info:
        Agent(model).run_sync("hi", message_history=[ModelResponse(parts=["oops"])])  # type: ignore[list-item]
    assert info.value.path.startswith("messages[0].parts[0]")


def test_the_docs_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert blocks
    exec(compile(blocks[0], str(DOC), "exec"), {"__name__": "docs_example"})
