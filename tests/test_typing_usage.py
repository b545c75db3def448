"""Ordinary use of the public API type-checks under `mypy --strict` (CI runs
mypy on this file) and runs: no casts needed for everyday values."""

from __future__ import annotations

from thinkseal import (
    AssistantMessage,
    Conversation,
    Message,
    Origin,
    ReplayReport,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    provider,
)


def describe(block: ThinkingBlock) -> str:
    match block:
        case ThinkingBlock.Text(text=text, signature=signature):
            return f"text {text!r} signed={signature is not None}"
        case ThinkingBlock.Redacted(data=data):
            return f"redacted {len(data)}"
        case ThinkingBlock.Opaque(provider=name, data=_):
            return f"opaque from {name}"
    return "unknown"


def test_everyday_values_type_check_and_work() -> None:
    tool = Tool("get_weather", "Weather", {"type": "object", "properties": {"city": {"type": "string"}}})
    call = ToolCall("c1", "get_weather", {"city": "Paris", "days": 2, "hourly": False})
    turn = AssistantMessage(None, [call], [ThinkingBlock.Text("why", "sig")])
    messages: list[Message] = [SystemMessage("s"), UserMessage("u"), turn, ToolMessage("20C", "c1")]
    conv = Conversation(messages, [tool], {"type": "json_object"})
    report: ReplayReport = conv.replay_report(Origin("anthropic", "claude"))
    assert [e.reason for e in report] == ["unbound"]
    assert describe(turn.thinking[0]) == "text 'why' signed=True"
    request = provider("anthropic").prepare(conv.with_response_format(None), model="claude", max_tokens=1024)
    assert request.body["model"] == "claude"
    content: str = turn.content
    assert content == ""
