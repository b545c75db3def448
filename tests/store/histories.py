"""Histories for the store tests: bound turns of every sealed kind, content
parts, tools and a response format, built without a provider."""

from __future__ import annotations

from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Message,
    Native,
    Origin,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from thinkseal.testing import respond

CLAUDE = Origin("anthropic", "claude-sonnet-4-5")
TOOLS = [Tool("lookup", "Look a key up.", {"type": "object", "properties": {"key": {"type": "string"}}})]
SIGNATURES = [f"SIG-{i}-{'x' * 40}" for i in range(6)]
SECRET = "REDACTED-SECRET-DATA-0123456789"


def turn(i: int) -> AssistantMessage:
    """A Claude tool-loop turn: thinking (signed, redacted or omitted), text and a call, in that order."""
    blocks = [ThinkingBlock.Text(f"think {i}", signature=SIGNATURES[i % len(SIGNATURES)])]
    if i % 3 == 1:
        blocks.append(ThinkingBlock.Redacted(f"{SECRET}-{i}"))
    if i % 3 == 2:
        blocks.append(ThinkingBlock.Text("", signature=f"omitted-{SIGNATURES[i % len(SIGNATURES)]}"))
    return AssistantMessage.from_parts([*blocks, f"answer {i}", ToolCall(f"call_{i}", "lookup", {"key": f"k{i}"})])


def sealed_conversation(turns: int = 4) -> Conversation:
    """A bound Claude tool loop with content parts and cache breakpoints."""
    conv = Conversation(
        [
            SystemMessage(["You are terse.", CacheBreakpoint("1h")]),
            UserMessage(
                [
                    "Look these up.",
                    Image(b"\x89PNG\r\n\x1a\n\x00\x01", "image/png"),
                    Document(text="plain document", title="Doc"),
                    Native("anthropic", '{"type":"search_result","source":"s","title":"t","content":[]}', "cited"),
                    CacheBreakpoint(),
                ]
            ),
        ],
        tools=TOOLS,
        response_format=None,
    )
    for i in range(turns):
        conv = respond(conv, CLAUDE, turn(i))
        conv = conv.append(ToolMessage([f"value {i}", CacheBreakpoint()] if i % 2 else f"value {i}", f"call_{i}"))
    return conv


def plain(n: int) -> list[Message]:
    """``n`` small unbound messages (a long history cheaply)."""
    out: list[Message] = []
    for i in range(n):
        if i % 2 == 0:
            out.append(UserMessage(f"question {i}"))
        else:
            out.append(AssistantMessage(f"answer {i}"))
    return out


def opaque_turn() -> AssistantMessage:
    return AssistantMessage("done", thinking=[ThinkingBlock.Opaque("openrouter", '{"type":"reasoning.encrypted"}')])


def agent_history(n: int) -> list[Message]:
    """``n`` unbound messages in the shapes of an agent loop (a user request, an
    assistant turn with signed thinking, text and a tool call, its tool
    result), about 800 bytes each as stored: a long session cheaply."""
    pad = "lorem ipsum dolor sit amet " * 20
    out: list[Message] = []
    for i in range(n):
        if i % 3 == 0:
            out.append(UserMessage(f"request {i}: {pad}"))
        elif i % 3 == 1:
            thinking = [ThinkingBlock.Text(f"think {i}: {pad}", signature=SIGNATURES[i % len(SIGNATURES)])]
            call = ToolCall(f"call_{i}", "lookup", {"key": f"k{i}"})
            out.append(AssistantMessage(f"answer {i}: {pad}", [call], thinking))
        else:
            out.append(ToolMessage(f"result {i}: {pad}", f"call_{i - 1}"))
    return out
