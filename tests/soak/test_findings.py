"""A finding of the soak, kept as a regression test.

The Gemini adapters sent two assistant turns in a row (what pruning one user
message can leave) as two consecutive ``model`` turns, and Gemini refuses a
function call turn that does not follow a user or function response turn
(HTTP 400 INVALID_ARGUMENT, the emulator quoting Gemini). A function-call turn
right after another model turn now joins that turn's content. The Claude,
OpenAI and Mistral adapters' requests for the same history were accepted all
along.
"""

from __future__ import annotations

import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation, Tool, ToolCall, ToolMessage, UserMessage
from thinkseal.testing import emulate

LOOKUP = Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "integer"}}})


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("gemini", "gemini-2.5-pro"),
        ("vertex-gemini", "gemini-2.5-pro"),
        ("anthropic", "claude-sonnet-4-5"),
        ("openai", "gpt-5"),
        ("mistral", "magistral-medium-latest"),
    ],
)
def test_adapters_take_two_assistant_turns_in_a_row(provider: str, model: str) -> None:
    conversation = Conversation(
        [
            UserMessage("What is q?"),
            AssistantMessage("Let me see."),
            AssistantMessage(None, [ToolCall("call_1", "lookup", {"q": 1})]),
            ToolMessage("q is 1", "call_1"),
        ],
        tools=[LOOKUP],
    )
    with emulate(provider) as emu, thinkseal.Client(provider, base_url=emu.base_url, api_key="test-key") as client:
        reply = client.send(conversation, model=model, **emu.options)
    assert reply.message.content
