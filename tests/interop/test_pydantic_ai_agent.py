"""Histories that a real pydantic-ai ``Agent`` run wrote (over pydantic-ai's own
FunctionModel and TestModel, and over its OpenAI and Anthropic models against
thinkseal's emulators): the import carries the system prompt and the
instructions where pydantic-ai sends them, says what it dropped, and exports
back to the same history."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import anthropic
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    BinaryContent,
    FilePart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    ModelSettingsDeltaPart,
    NativeToolCallPart,
    NativeToolReturnPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Native,
    Origin,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.interop import pydantic_ai as ts_pydantic_ai
from thinkseal.interop.pydantic_ai import Dropped
from thinkseal.testing import Step, emulate

from .strategies import history

SYSTEM = "You are a weather bot."
INSTRUCTIONS = "Answer in one sentence."


def reasoning_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A model that thinks (Claude-signed, OpenAI reasoning item, unsigned),
    calls ``get_weather`` once, then answers."""
    if any(isinstance(part, ToolReturnPart) for part in messages[-1].parts):
        return ModelResponse(parts=[ThinkingPart("Now answer."), TextPart("It is 18°C in Paris.")])
    return ModelResponse(
        parts=[
            ThinkingPart("I need the weather.", signature="c2lnLTE=", provider_name="anthropic"),
            ThinkingPart("Look it up.", id="rs_1", signature="gAAAAB", provider_name="openai"),
            ThinkingPart("Then answer.", id="rs_1", provider_name="openai"),
            ToolCallPart("get_weather", {"city": "Paris"}, "call_1"),
        ]
    )


def weather_agent(model: Any, **settings: Any) -> Agent[None, str]:
    agent = Agent(model, instructions=INSTRUCTIONS, system_prompt=SYSTEM, model_settings=settings or None)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "18°C"

    return agent


def test_an_agent_history_keeps_its_instructions_where_pydantic_ai_sends_them() -> None:
    run = weather_agent(FunctionModel(reasoning_model)).run_sync("Weather in Paris?")
    messages = run.all_messages()
    assert [m.instructions for m in messages if isinstance(m, ModelRequest)] == [INSTRUCTIONS, INSTRUCTIONS]

    imported = ts_pydantic_ai.import_history(messages)
    conv = imported.conversation
    item = {
        "encrypted_content": "gAAAAB",
        "id": "rs_1",
        "summary": [{"text": "Look it up.", "type": "summary_text"}, {"text": "Then answer.", "type": "summary_text"}],
        "type": "reasoning",
    }
    assert list(conv) == [
        SystemMessage(SYSTEM),
        SystemMessage(INSTRUCTIONS),  # after the system prompt, before the first user message
        UserMessage("Weather in Paris?"),
        AssistantMessage.from_parts(
            [
                ThinkingBlock.Text("I need the weather.", "c2lnLTE="),
                ThinkingBlock.Text("Look it up.\n\nThen answer."),
                ThinkingBlock.Opaque("openai-responses", json.dumps(item, separators=(",", ":"), sort_keys=True)),
                ToolCall("call_1", "get_weather", {"city": "Paris"}),
            ]
        ),
        ToolMessage("18°C", "call_1"),
        AssistantMessage.from_parts([ThinkingBlock.Text("Now answer."), "It is 18°C in Paris."]),
    ]
    assert imported.instructions == 1
    # The tools are the Agent's: the result says so, naming the one the history calls.
    assert imported.dropped == (
        Dropped(
            "tools",
            "pydantic-ai's history holds no tool definitions: they belong to the Agent; it names 'get_weather' "
            "(add them with Conversation.with_tools)",
        ),
    )
    assert ts_pydantic_ai.import_messages(messages) == conv


def test_an_agent_history_exports_back_to_the_same_history() -> None:
    messages = weather_agent(FunctionModel(reasoning_model)).run_sync("Weather in Paris?").all_messages()
    imported = ts_pydantic_ai.import_history(messages)
    exported = ts_pydantic_ai.export_messages(imported.conversation, instructions=imported.instructions)
    assert history(exported) == history(messages)
    # Without the index the instructions are one more system prompt: the same text, in the same place.
    plain = ts_pydantic_ai.export_messages(imported.conversation)
    assert [m.instructions for m in plain if isinstance(m, ModelRequest)] == [None, None]
    assert [p.content for p in plain[0].parts if isinstance(p, SystemPromptPart)] == [SYSTEM, INSTRUCTIONS]


def test_the_next_request_carries_what_pydantic_ai_sent_over_openai_chat() -> None:
    with emulate("openai", require_auth=False) as emu:
        emu.script(Step(calls=[("get_weather", {"city": "Paris"})]), Step(text="It is 18°C."))
        model = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(base_url=emu.base_url, api_key="test-key"))
        messages = weather_agent(model).run_sync("Weather in Paris?").all_messages()
        sent = emu.requests[-1].body
    conv = ts_pydantic_ai.import_messages(messages)
    before_reply = conv.with_messages(conv[:-1])
    body = thinkseal.provider("openai").prepare(before_reply, model="gpt-4.1").body
    assert body["messages"] == sent["messages"]
    assert [m["role"] for m in sent["messages"][:3]] == ["system", "system", "user"]


def test_the_next_request_replays_what_pydantic_ai_sent_over_anthropic() -> None:
    """The emulator signs the thinking and verifies it on replay (against the
    system prompt, tools and messages before it): the imported history, with
    the Agent's tools and vouched for, prepares the request pydantic-ai sent
    for the final reply, and the emulator accepts it."""
    thinking = {"type": "enabled", "budget_tokens": 1024}
    with emulate("anthropic", require_auth=False) as emu:
        emu.script(
            Step(thinking="I need the weather.", calls=[("get_weather", {"city": "Paris"})]),
            Step(thinking="Now answer.", text="It is 18°C."),
            Step(text="Done."),
        )
        client = anthropic.AsyncAnthropic(
            base_url=emu.base_url, api_key="test-key", default_headers={"anthropic-version": "2023-06-01"}
        )
        model = AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(anthropic_client=client))
        agent = weather_agent(model, max_tokens=2048, anthropic_thinking=thinking)
        messages = agent.run_sync("Weather in Paris?").all_messages()
        sent = emu.requests[-1].body

        # The tools are the Agent's, not the history's: the ones it sent go back with the conversation.
        tools = [Tool(t["name"], t["description"], t["input_schema"]) for t in sent["tools"]]
        imported = ts_pydantic_ai.import_messages(messages).with_tools(tools)
        conv = imported.rebind(Origin("anthropic", "claude-sonnet-4-5"))
        before_reply = conv.with_messages(conv[:-1])
        req = thinkseal.provider("anthropic").prepare(
            before_reply, model="claude-sonnet-4-5", max_tokens=2048, thinking=thinking
        )
        assert (
            req.body["system"]
            == sent["system"]
            == [
                {"type": "text", "text": SYSTEM},
                {"type": "text", "text": INSTRUCTIONS},
            ]
        )
        assert req.body["messages"][1]["content"] == sent["messages"][1]["content"]  # signed thinking, tool use
        assert req.report[0].kept
        post = urllib.request.Request(emu.base_url + req.path, data=req.content, headers=dict(req.headers))
        with urllib.request.urlopen(post, timeout=10) as answer:
            assert json.loads(answer.read())["content"][-1]["text"] == "Done."


def test_instructions_a_later_run_replaced_are_listed_as_dropped() -> None:
    agent = Agent(TestModel(), instructions=INSTRUCTIONS, system_prompt=SYSTEM)
    first = agent.run_sync("Weather in Paris?").all_messages()
    messages = agent.run_sync("And Rome?", message_history=first, instructions="Use Celsius.").all_messages()
    in_force = f"{INSTRUCTIONS}\n\nUse Celsius."
    assert [m.instructions for m in messages if isinstance(m, ModelRequest)] == [INSTRUCTIONS, in_force]

    imported = ts_pydantic_ai.import_history(messages)
    assert imported.conversation[1] == SystemMessage(in_force)
    assert imported.instructions == 1
    assert imported.dropped[0] == Dropped(
        "messages[0].instructions",
        "instructions a later request replaced: pydantic-ai sends each request its own, "
        "and the conversation holds the ones in force",
    )
    assert [d.path for d in imported.dropped] == ["messages[0].instructions", "tools"]
    exported = ts_pydantic_ai.export_messages(imported.conversation, instructions=imported.instructions)
    assert [m.instructions for m in exported if isinstance(m, ModelRequest)] == [in_force, in_force]


def test_instructions_of_the_request_before_a_tool_result_only_request_are_in_force() -> None:
    """pydantic-ai's own rule: a last request of tool results alone takes the one before it's instructions."""
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Weather?")], instructions=INSTRUCTIONS),
        ModelResponse(parts=[ToolCallPart("get_weather", {}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("get_weather", "18°C", "c1")]),
    ]
    imported = ts_pydantic_ai.import_history(messages)
    assert imported.conversation[0] == SystemMessage(INSTRUCTIONS)
    assert imported.instructions == 0
    messages[2].parts = [*messages[2].parts, UserPromptPart("And Rome?")]
    imported = ts_pydantic_ai.import_history(messages)
    assert imported.instructions is None
    assert imported.dropped[0].path == "messages[0].instructions"
    assert SystemMessage(INSTRUCTIONS) not in list(imported.conversation)


def test_tool_returns_of_every_kind_round_trip_from_a_test_model_run() -> None:
    """TestModel calls every tool: strings, structured values, lists and None
    (what pydantic-ai stores for a tool that returns nothing) all come back."""
    agent = Agent(TestModel(), instructions=INSTRUCTIONS)

    @agent.tool_plain
    def text() -> str:
        return "18°C"

    @agent.tool_plain
    def blank() -> str:
        return ""

    @agent.tool_plain
    def structured() -> dict[str, int]:
        return {"temp": 18}

    @agent.tool_plain
    def several() -> list[str]:
        return ["a", "b"]

    @agent.tool_plain
    def nothing() -> None:
        return None

    messages = agent.run_sync("Go").all_messages()
    returns = {p.tool_name: p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
    assert returns == {"text": "18°C", "blank": "", "structured": {"temp": 18}, "several": ["a", "b"], "nothing": None}

    imported = ts_pydantic_ai.import_history(messages)
    tools = {m.tool_call_id: m for m in imported.conversation if isinstance(m, ToolMessage)}
    assert tools["pyd_ai_tool_call_id__text"] == ToolMessage("18°C", "pyd_ai_tool_call_id__text")
    none = tools["pyd_ai_tool_call_id__nothing"].parts[0]
    assert isinstance(none, Native)
    assert none.value == {"type": "tool-return", "content": None}
    exported = ts_pydantic_ai.export_messages(imported.conversation, instructions=imported.instructions)
    assert history(exported) == history(messages)


def test_a_request_scoped_system_prompt_is_kept_only_while_its_request_is_unanswered() -> None:
    budget = SystemPromptPart("3 tool calls left.", scope="request")
    messages: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart(SYSTEM), UserPromptPart("Weather?"), budget]),
        ModelResponse(parts=[TextPart("Which city?")]),
        ModelRequest(parts=[UserPromptPart("Paris"), SystemPromptPart("2 tool calls left.", scope="request")]),
    ]
    imported = ts_pydantic_ai.import_history(messages)
    assert list(imported.conversation) == [
        SystemMessage(SYSTEM),
        UserMessage("Weather?"),
        AssistantMessage("Which city?"),
        UserMessage("Paris"),
        SystemMessage("2 tool calls left."),
    ]
    assert [d.path for d in imported.dropped] == ["messages[0].parts[2]", "messages[2].parts[1].scope", "tools"]
    assert "already answered" in imported.dropped[0].why


def test_the_agents_bookkeeping_parts_are_listed_as_dropped() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[
                UserPromptPart("Weather?"),
                ToolAvailabilityDeltaPart(tools_added=["get_weather"]),
                ModelSettingsDeltaPart(settings={"thinking": "high"}),
            ]
        ),
        ModelRequest(parts=[SystemPromptPart("")]),
    ]
    imported = ts_pydantic_ai.import_history(messages)
    assert list(imported.conversation) == [UserMessage("Weather?")]
    assert [d.path for d in imported.dropped] == [
        "messages[0].parts[1]",
        "messages[0].parts[2]",
        "messages[1].parts[0]",
        "tools",
    ]
    assert "'get_weather'" in imported.dropped[-1].why


def test_messages_in_json_form_import_as_the_objects_do() -> None:
    messages = weather_agent(FunctionModel(reasoning_model)).run_sync("Weather in Paris?").all_messages()
    stored = ModelMessagesTypeAdapter.dump_python(messages, mode="json")
    assert ts_pydantic_ai.import_history(stored) == ts_pydantic_ai.import_history(messages)
    stored[2]["parts"][0]["tool_call_id"] = 7
    with pytest.raises(ValidationError) as info:
        ts_pydantic_ai.import_messages(stored)
    assert info.value.path == "messages[2].parts[0].tool_call_id"


@pytest.mark.parametrize(
    ("instructions", "path"),
    [(5, "instructions"), (True, "instructions"), (1, "instructions"), (2, "messages[2].content")],
)
def test_export_refuses_instructions_that_are_not_one_plain_system_message(instructions: Any, path: str) -> None:
    conv = Conversation([SystemMessage(SYSTEM), UserMessage("q"), SystemMessage(["a", "b"])])
    with pytest.raises(ValidationError) as info:
        ts_pydantic_ai.export_messages(conv, instructions=instructions)
    assert info.value.path == path


def test_tool_outcomes_an_export_cannot_restore_are_listed() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Delete it?")]),
        ModelResponse(parts=[ToolCallPart("delete", {}, "c1"), ToolCallPart("lookup", {}, "c2")]),
        ModelRequest(
            parts=[
                ToolReturnPart("delete", "The user denied this call.", "c1", outcome="denied"),
                ToolReturnPart("lookup", "city is required", "c2", outcome="retried"),
            ]
        ),
    ]
    imported = ts_pydantic_ai.import_history(messages)
    assert imported.conversation[2] == ToolMessage("The user denied this call.", "c1")  # an ordinary result
    assert imported.conversation[3] == ToolMessage("city is required", "c2", is_error=True)
    assert [d.path for d in imported.dropped] == [
        "messages[2].parts[0].outcome",
        "messages[2].parts[1].outcome",
        "tools",
    ]
    assert "'denied'" in imported.dropped[0].why
    assert "'delete', 'lookup'" in imported.dropped[2].why


def test_an_appending_system_prompt_keeps_its_text_and_lists_its_context_id() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[SystemPromptPart("Budget: 3 calls.", context_id="system_prompt:budget"), UserPromptPart("Go")]
        ),
    ]
    imported = ts_pydantic_ai.import_history(messages)
    assert imported.conversation[0] == SystemMessage("Budget: 3 calls.")
    assert imported.dropped[0].path == "messages[0].parts[0].context_id"
    assert "<pyai:context>" in imported.dropped[0].why


def test_native_tool_parts_and_files_of_an_agent_run_are_kept_and_exported_exactly() -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[
                ThinkingPart("Search first.", signature="c2ln", provider_name="google-gla"),
                NativeToolCallPart("web_search", {"query": "paris weather"}, "srv_1", provider_name="anthropic"),
                NativeToolReturnPart(
                    "web_search", [{"url": "https://example.com"}], "srv_1", provider_name="anthropic"
                ),
                FilePart(BinaryContent(b"\x89PNG\r\n\x1a\n", media_type="image/png")),
                TextPart("Here is a chart."),
            ]
        )

    messages = Agent(FunctionModel(model), instructions=INSTRUCTIONS).run_sync("Chart it").all_messages()
    imported = ts_pydantic_ai.import_history(messages)
    turn = imported.conversation[-1]
    assert isinstance(turn, AssistantMessage)
    assert [type(p).__name__ for p in turn.parts] == ["Opaque", "Native", "Native", "Native", "str"]
    assert {p.provider for p in turn.parts if isinstance(p, (Native, ThinkingBlock.Opaque))} == {"pydantic-ai"}
    exported = ts_pydantic_ai.export_messages(imported.conversation, instructions=imported.instructions)
    assert history(exported) == history(messages)
