"""Anthropic MessageParam lists: real-shaped histories convert exactly both ways,
an imported history replays its signed thinking only once rebound, and what
the format cannot hold is refused by name."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
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
from thinkseal.interop import anthropic as ts_anthropic

from .conftest import fixture

MODEL = "claude-sonnet-4-5"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
PDF = base64.b64encode(b"%PDF-1.7 fake").decode()
WEATHER = {
    "name": "get_weather",
    "description": "Weather",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
TIME = {
    "name": "get_time",
    "input_schema": {"type": "object", "properties": {}},
    "cache_control": {"type": "ephemeral"},
}


def history() -> dict[str, Any]:
    """A stored tool loop as teams keep it: the reply content as Claude returned
    it (interleaved, redacted, omitted thinking), results (one an error, one
    with an image), a document and a server tool block."""
    reply = fixture("anthropic", "message_interleaved.json")["content"]
    return {
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Weather and time in Paris? See the report."},
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
                        "title": "Report",
                        "citations": {"enabled": True},
                    },
                    {"type": "image", "source": {"type": "url", "url": "https://example.com/paris.jpg"}},
                ],
            },
            {"role": "assistant", "content": reply},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": reply[2]["id"],
                        "content": [
                            {"type": "text", "text": "18°C"},
                            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                        ],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": reply[5]["id"],
                        "content": "clock unavailable",
                        "is_error": True,
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "paris"}},
                    {"type": "text", "text": "Rainy, time unknown."},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "search_result",
                        "source": "https://example.com",
                        "title": "T",
                        "content": [{"type": "text", "text": "x"}],
                    },
                    {"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}},
                ],
            },
        ],
        "tools": [WEATHER, TIME],
    }


def test_a_real_shaped_history_exports_back_exactly() -> None:
    stored = history()
    conv = ts_anthropic.import_messages(stored["messages"], system=stored["system"], tools=stored["tools"])
    assert ts_anthropic.export_messages(conv) == stored
    reply = conv[2]
    assert isinstance(reply, AssistantMessage)
    assert [type(p).__name__ for p in reply.parts] == ["Text", "str", "ToolCall", "Redacted", "Text", "ToolCall"]
    assert reply.thinking_binding is None
    assert conv[1] == UserMessage(
        [
            "Weather and time in Paris? See the report.",
            Document(b"%PDF-1.7 fake", title="Report", citations=True),
            Image(url="https://example.com/paris.jpg"),
        ]
    )
    assert conv[3] == ToolMessage(["18°C", Image(b"\x89PNG\r\n\x1a\nfake", "image/png")], reply.tool_calls[0].id)
    assert conv[4] == ToolMessage("clock unavailable", reply.tool_calls[1].id, is_error=True)
    assert conv[5].parts[0] == Native.of("anthropic", stored["messages"][3]["content"][0])
    assert conv[6].parts[1:] == ("Thanks", CacheBreakpoint())
    assert conv[0] == SystemMessage(["Be brief.", CacheBreakpoint("1h")])
    assert conv.tools[1].cache == CacheBreakpoint()


def produced() -> tuple[Conversation, thinkseal.PreparedRequest]:
    """A history whose assistant turn Anthropic really returned (through the
    adapter), continued with the tool results, and the next request for it."""
    adapter = thinkseal.provider("anthropic")
    conv = Conversation(
        [SystemMessage("Be brief."), UserMessage("Weather and time in Paris?")],
        tools=[Tool("get_weather"), Tool("get_time")],
    )
    first = adapter.prepare(conv, model=MODEL, max_tokens=4096)
    reply = first.receive(fixture("anthropic", "message_interleaved.json"))
    assert reply.thinking_binding is not None
    conv = conv.append(reply, ToolMessage("18°C", reply.tool_calls[0].id), ToolMessage("14:05", reply.tool_calls[1].id))
    thinking = {"type": "enabled", "budget_tokens": 2048}
    return conv, adapter.prepare(conv, model=MODEL, max_tokens=4096, thinking=thinking)


def test_an_imported_provider_history_replays_its_thinking_once_rebound() -> None:
    conv, original = produced()
    assert original.report[0].kept
    stored = copy.deepcopy(ts_anthropic.export_messages(conv))  # what a team stores, e.g. as JSON
    imported = ts_anthropic.import_messages(stored["messages"], system=stored["system"], tools=stored["tools"])
    thinking = {"type": "enabled", "budget_tokens": 2048}

    # Without rebind: unbound, so unsealed; with thinking on, Claude's tool loop refuses it before sending.
    adapter = thinkseal.provider("anthropic")
    with pytest.raises(thinkseal.ReplayError) as info:
        adapter.prepare(imported, model=MODEL, max_tokens=4096, thinking=thinking)
    assert info.value.reason == "unbound"
    plain = adapter.prepare(imported, model=MODEL, max_tokens=4096)
    assert [(e.index, e.reason) for e in plain.report] == [(2, "unbound")]
    sent = plain.body["messages"][1]["content"]
    assert [b["type"] for b in sent] == ["text", "tool_use", "tool_use"]  # no thinking goes out

    # Rebound: the body replays the signed blocks, byte for byte as the original request did.
    rebound = imported.rebind(Origin("anthropic", MODEL))
    again = adapter.prepare(rebound, model=MODEL, max_tokens=4096, thinking=thinking)
    assert [(e.index, e.reason) for e in again.report] == [(2, "kept")]
    assert again.content == original.content
    blocks = again.body["messages"][1]["content"]
    assert blocks == fixture("anthropic", "message_interleaved.json")["content"]
    # Rebound for another model, it is unsealed there like any other turn.
    assert adapter.prepare(rebound, model="claude-opus-4-1", max_tokens=4096).report[0].reason == "origin-mismatch"


def test_string_content_and_plain_blocks() -> None:
    conv = ts_anthropic.import_messages(
        [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": [{"type": "text", "text": "More"}]},
        ],
        system="Be brief.",
    )
    assert list(conv) == [
        SystemMessage("Be brief."),
        UserMessage("Hi"),
        AssistantMessage("Hello."),
        UserMessage("More"),
    ]
    exported = ts_anthropic.export_messages(conv)
    assert exported["system"] == "Be brief."
    assert exported["messages"][2] == {"role": "user", "content": [{"type": "text", "text": "More"}]}
    assert exported["messages"][1] == {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}
    assert "tools" not in exported


@pytest.mark.parametrize(
    ("messages", "path"),
    [
        ([{"role": "user"}], "messages[0].content"),
        ([{"role": "robot", "content": "x"}], "messages[0].role"),
        (
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "%%"}}
                    ],
                }
            ],
            "messages[0].content[0].source.data",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "x"},
                        {"type": "tool_result", "tool_use_id": "t", "content": "r"},
                    ],
                }
            ],
            "messages[0].content[1]",
        ),
        (
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}],
            "messages[0].content[0].content",
        ),
        (
            [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": [1]}]}],
            "messages[0].content[0].input",
        ),
        (
            [{"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": ""}]}],
            "messages[0].content[0]",
        ),
        (
            [{"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {"type": "forever"}}]}],
            "messages[0].content[0].cache_control",
        ),
        ([{"role": "user", "content": [{"type": 7}]}], "messages[0].content[0].type"),
    ],
)
def test_bad_input_names_the_field(messages: Any, path: str) -> None:
    with pytest.raises(ValidationError) as info:
        ts_anthropic.import_messages(messages)
    assert info.value.path is not None
    assert info.value.path.startswith(path), info.value.path


def test_server_tools_are_refused_by_name() -> None:
    with pytest.raises(ValidationError) as info:
        ts_anthropic.import_messages([], tools=[{"type": "web_search_20250305", "name": "web_search"}])
    assert info.value.path == "tools[0]"


@pytest.mark.parametrize(
    ("conv", "path", "words"),
    [
        (
            Conversation([UserMessage("q"), AssistantMessage("a", thinking=[ThinkingBlock.Text("plain")])]),
            "messages[1].parts[0]",
            "unsigned thinking",
        ),
        (
            Conversation(
                [UserMessage("q"), AssistantMessage("a", thinking=[ThinkingBlock.Opaque("openrouter", "{}")])]
            ),
            "messages[1].parts[0]",
            "opaque",
        ),
        (
            Conversation([UserMessage(["q", Native.of("openai", {"type": "input_audio"})])]),
            "messages[0].content[1]",
            "native block of 'openai'",
        ),
        (Conversation([UserMessage("q"), SystemMessage("late")]), "messages[1]", "system message"),
        (Conversation([SystemMessage("a"), SystemMessage("b")]), "messages[1]", "second system"),
        (Conversation([UserMessage("q")], response_format={"type": "json_object"}), "response_format", "JSON schema"),
        (
            Conversation(
                [
                    UserMessage("q"),
                    AssistantMessage(None, [ToolCall("c", "f", {})], [ThinkingBlock.Redacted("r")]).with_thinking(
                        [ThinkingBlock.Opaque("gemini", "x")]
                    ),
                ]
            ),
            "messages[1].parts[0]",
            "gemini",
        ),
    ],
)
def test_export_refuses_what_anthropic_cannot_hold(conv: Conversation, path: str, words: str) -> None:
    with pytest.raises(ValidationError) as info:
        ts_anthropic.export_messages(conv)
    assert info.value.path == path
    assert words in str(info.value)


def test_export_refuses_a_non_conversation() -> None:
    with pytest.raises(ValidationError):
        ts_anthropic.export_messages([UserMessage("x")])  # type: ignore[arg-type]
