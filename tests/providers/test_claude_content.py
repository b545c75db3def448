"""Content parts and prompt-caching breakpoints on Claude's two wires.

Every body is checked against the official SDK's request types (the
``anthropic`` TypedDicts, botocore's Converse input shape: ``check_request`` of
test_anthropic.py and test_bedrock.py) and sent through the SDK to the
enforcing emulators. Shapes from Anthropic's vision, PDF support, citations and
prompt caching pages and from the Bedrock API reference (ImageBlock,
DocumentBlock, CachePointBlock); see docs/providers.md.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from typing import Any
from urllib.parse import unquote

import anthropic
import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Native,
    SystemMessage,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.testing.anthropic import AnthropicEmulator, Call, Say, Think
from thinkseal.testing.bedrock import BedrockEmulator

from .test_anthropic import check_request as check_anthropic
from .test_bedrock import check_request as check_bedrock
from .test_bedrock import for_boto3, model_of

# A 1x1 PNG and the smallest PDF skeleton: what matters here is where bytes go.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
PNG64 = base64.b64encode(PNG).decode()
PDF64 = base64.b64encode(PDF).decode()

A_MODEL = "claude-emulated-sonnet"
B_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
THINKING = {"type": "enabled", "budget_tokens": 2048}
A_OPTS: dict[str, Any] = {"max_tokens": 4096, "thinking": THINKING}
B_OPTS: dict[str, Any] = {
    "inferenceConfig": {"maxTokens": 4096},
    "additionalModelRequestFields": {"thinking": THINKING},
}
WEATHER = Tool("get_weather", "Current weather", {"type": "object", "properties": {"city": {"type": "string"}}})
CHART = Tool("get_chart", "A chart of the week", {"type": "object", "properties": {}}, cache=CacheBreakpoint())
A = thinkseal.provider("anthropic")
B = thinkseal.provider("bedrock")


def a_send(client: anthropic.Anthropic, emulator: AnthropicEmulator, req: Any) -> AssistantMessage:
    check_anthropic(req)
    message = client.messages.create(**req.body, extra_headers=req.headers)
    assert emulator.requests[-1].body == json.loads(req.content)
    return req.receive(message.model_dump())


def b_send(client: Any, emulator: BedrockEmulator, req: Any) -> AssistantMessage:
    check_bedrock(req)
    response = client.converse(modelId=model_of(req), **for_boto3(req.body))
    assert (unquote(emulator.requests[-1].path.split("/")[2]), emulator.requests[-1].body) == (
        model_of(req),
        json.loads(req.content),
    )
    return req.receive(response)


def opening() -> Conversation:
    """A system prompt with a 1-hour breakpoint, a cached tool list, and a user
    message with text, an image, a cited PDF and a plain-text document."""
    return Conversation(
        [
            SystemMessage(("You are a weather assistant.", CacheBreakpoint("1h"))),
            UserMessage(
                (
                    "What do these say about Paris?",
                    Image(PNG, "image/png"),
                    Document(PDF, title="Forecast report", citations=True),
                    Document(text="Notes: bring an umbrella."),
                )
            ),
        ],
        tools=[WEATHER, CHART],
    )


def with_tool_result(conv: Conversation, call_id: str) -> Conversation:
    """The call answered with text and an image, then a user question carrying the last breakpoint."""
    return conv.append(
        ToolMessage(("Chart of the week:", Image(PNG, "image/png")), call_id),
        UserMessage(("And tomorrow?", CacheBreakpoint())),
    )


# -- the bodies, validated and accepted ------------------------------------------------------


def test_anthropic_parts_and_breakpoints(
    anthropic_client: anthropic.Anthropic, anthropic_emulator: AnthropicEmulator
) -> None:
    conv = opening()
    first = A.prepare(conv, model=A_MODEL, **A_OPTS)
    assert first.body["system"] == [
        {"type": "text", "text": "You are a weather assistant.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ]
    assert first.body["tools"][1] == {
        "name": "get_chart",
        "description": "A chart of the week",
        "input_schema": CHART.parameters,
        "cache_control": {"type": "ephemeral"},
    }
    assert first.body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What do these say about Paris?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG64}},
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": PDF64},
                    "title": "Forecast report",
                    "citations": {"enabled": True},
                },
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "Notes: bring an umbrella."},
                },
            ],
        }
    ]
    anthropic_emulator.script(Think("Look at the chart."), Call("toolu_1", "get_chart"))
    conv = with_tool_result(conv.append(a_send(anthropic_client, anthropic_emulator, first)), "toolu_1")
    req = A.prepare(conv, model=A_MODEL, **A_OPTS)
    assert [e.reason for e in req.report] == ["kept"]
    assert req.body["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [
                    {"type": "text", "text": "Chart of the week:"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG64}},
                ],
            },
            {"type": "text", "text": "And tomorrow?", "cache_control": {"type": "ephemeral"}},
        ],
    }
    anthropic_emulator.script(Think("Rain."), Say("Rain tomorrow."))
    assert a_send(anthropic_client, anthropic_emulator, req).content == "Rain tomorrow."
    assert anthropic_emulator.errors == []


def test_bedrock_parts_and_breakpoints(bedrock_client: Any, bedrock_emulator: BedrockEmulator) -> None:
    conv = opening()
    first = B.prepare(conv, model=B_MODEL, **B_OPTS)
    assert first.body["system"] == [
        {"text": "You are a weather assistant."},
        {"cachePoint": {"type": "default", "ttl": "1h"}},
    ]
    assert first.body["toolConfig"]["tools"][1:] == [
        {
            "toolSpec": {
                "name": "get_chart",
                "description": "A chart of the week",
                "inputSchema": {"json": CHART.parameters},
            }
        },
        {"cachePoint": {"type": "default"}},
    ]
    notes_name = "document-" + hashlib.sha256(b"Notes: bring an umbrella.").hexdigest()[:16]
    assert first.body["messages"] == [
        {
            "role": "user",
            "content": [
                {"text": "What do these say about Paris?"},
                {"image": {"format": "png", "source": {"bytes": PNG64}}},
                {
                    "document": {
                        "format": "pdf",
                        "name": "Forecast report",
                        "source": {"bytes": PDF64},
                        "citations": {"enabled": True},
                    }
                },
                {
                    "document": {
                        "format": "txt",
                        "name": notes_name,
                        "source": {"bytes": base64.b64encode(b"Notes: bring an umbrella.").decode()},
                    }
                },
            ],
        }
    ]
    bedrock_emulator.script(Think("Look at the chart."), Call("tooluse_1", "get_chart"))
    conv = with_tool_result(conv.append(b_send(bedrock_client, bedrock_emulator, first)), "tooluse_1")
    req = B.prepare(conv, model=B_MODEL, **B_OPTS)
    assert [e.reason for e in req.report] == ["kept"]
    assert req.body["messages"][2] == {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "tooluse_1",
                    "content": [
                        {"text": "Chart of the week:"},
                        {"image": {"format": "png", "source": {"bytes": PNG64}}},
                    ],
                }
            },
            {"text": "And tomorrow?"},
            {"cachePoint": {"type": "default"}},
        ],
    }
    # boto3 takes the blobs as bytes.
    params = for_boto3(req.body)
    assert params["messages"][0]["content"][1]["image"]["source"]["bytes"] == PNG
    assert params["messages"][2]["content"][0]["toolResult"]["content"][1]["image"]["source"]["bytes"] == PNG
    bedrock_emulator.script(Think("Rain."), Say("Rain tomorrow."))
    assert b_send(bedrock_client, bedrock_emulator, req).content == "Rain tomorrow."
    assert bedrock_emulator.errors == []


def test_one_text_part_goes_out_as_plain_text() -> None:
    """Parts that are one text (breakpoints aside) fingerprint as that string,
    and go out exactly as it does."""
    call = ToolCall("toolu_1", "get_weather", {"city": "Paris"})

    def conv(user: Any, result: Any, last: Any) -> Conversation:
        return Conversation(
            [
                SystemMessage("Be brief."),
                UserMessage(user),
                AssistantMessage(None, [call]),
                ToolMessage(result, "toolu_1"),
                UserMessage(last),
            ],
            tools=[WEATHER],
        )

    plain = conv("Weather?", "20°C", "Thanks")
    parts = conv(("Weather?",), ("20°C",), ("Thanks",))
    for adapter, options in ((A, {"max_tokens": 64}), (B, {})):
        assert (
            adapter.prepare(parts, model="m", **options).content == adapter.prepare(plain, model="m", **options).content
        )
    lone = Conversation([UserMessage(("Hello", CacheBreakpoint()))])
    assert A.prepare(lone, model="m", max_tokens=64).body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hello", "cache_control": {"type": "ephemeral"}}]}
    ]
    assert A.prepare(Conversation([UserMessage(("Hello",))]), model="m", max_tokens=64).body["messages"] == [
        {"role": "user", "content": "Hello"}
    ]


def test_system_messages_with_parts_are_blocks() -> None:
    conv = Conversation(
        [
            SystemMessage("Rule one."),
            SystemMessage(("Rule two.", CacheBreakpoint(), "Rule three.")),
            UserMessage("Hi"),
        ]
    )
    req = A.prepare(conv, model="m", max_tokens=64)
    check_anthropic(req)
    assert req.body["system"] == [
        {"type": "text", "text": "Rule one."},
        {"type": "text", "text": "Rule two.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Rule three."},
    ]
    req = B.prepare(conv, model=B_MODEL)
    check_bedrock(req)
    assert req.body["system"] == [
        {"text": "Rule one."},
        {"text": "Rule two."},
        {"cachePoint": {"type": "default"}},
        {"text": "Rule three."},
    ]


# -- at most four breakpoints -------------------------------------------------------------------


def five_breakpoints() -> Conversation:
    return Conversation(
        [
            SystemMessage(("System.", CacheBreakpoint())),
            UserMessage(("One.", CacheBreakpoint(), "Two.", CacheBreakpoint())),
            AssistantMessage("Noted."),
            UserMessage(("Three.", CacheBreakpoint())),
        ],
        tools=[CHART],
    )


def test_more_than_four_breakpoints_are_refused(anthropic_emulator: AnthropicEmulator) -> None:
    conv = five_breakpoints()
    with pytest.raises(ValidationError) as err:
        A.prepare(conv, model=A_MODEL, max_tokens=64)
    assert str(err.value) == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    assert err.value.path == "cache_control"
    with pytest.raises(ValidationError) as err:
        B.prepare(conv, model=B_MODEL)
    assert err.value.path == "cachePoint"
    assert "at most 4" in str(err.value)
    assert "has 5" in str(err.value)
    # Four go out, and the emulator answers a fifth with Anthropic's 400.
    four = conv.with_tools([WEATHER])
    req = A.prepare(four, model=A_MODEL, max_tokens=64)
    check_anthropic(req)
    check_bedrock(B.prepare(four, model=B_MODEL))
    naive = copy.deepcopy(req.body)
    naive["tools"][0]["cache_control"] = {"type": "ephemeral"}
    status, payload = anthropic_emulator.respond(naive, req.headers)
    assert status == 400
    assert payload["error"]["message"] == "A maximum of 4 blocks with cache_control may be provided. Found 5."


def test_moving_the_last_breakpoint_keeps_every_sealed_turn(
    anthropic_client: anthropic.Anthropic,
    anthropic_emulator: AnthropicEmulator,
    bedrock_client: Any,
    bedrock_emulator: BedrockEmulator,
) -> None:
    """The usual caching pattern: a breakpoint on the system prompt, one on the
    tools, and one on the latest user message, moved forward every turn by
    replacing the previous user message with a copy without it. Breakpoints
    are not fingerprinted, so over ten turns every sealed turn stays kept and
    the emulators (which bind thinking to the content as Claude reads it,
    breakpoints aside) accept every request."""
    for adapter, send, client, emulator, options in (
        (A, a_send, anthropic_client, anthropic_emulator, A_OPTS),
        (B, b_send, bedrock_client, bedrock_emulator, B_OPTS),
    ):
        model = A_MODEL if adapter is A else B_MODEL
        conv = Conversation(
            [SystemMessage(("You are a weather assistant.", CacheBreakpoint()))],
            tools=[WEATHER, CHART],
        )
        for turn in range(10):
            question = UserMessage((f"Question {turn}?", CacheBreakpoint()))
            if turn:
                previous = len(conv) - 2  # the previous question, before its reply
                moved = UserMessage(conv[previous].text)
                conv = conv.with_messages([*conv[:previous], moved, conv[-1]])
            conv = conv.append(question)
            req = adapter.prepare(conv, model=model, **options)
            assert [e.reason for e in req.report] == ["kept"] * turn
            emulator.script(Think(f"Thinking {turn}."), Say(f"Answer {turn}."))
            conv = conv.append(send(client, emulator, req))
        assert emulator.errors == []
        marks = req.content.count(b"cache_control" if adapter is A else b"cachePoint")
        assert marks == 3


# -- parts a provider does not take ---------------------------------------------------------------


def test_anthropic_refuses_a_message_with_nothing_for_it() -> None:
    foreign = Native.of("bedrock", {"citationsContent": {"content": [], "citations": []}})
    conv = Conversation([UserMessage("Hi"), AssistantMessage("Hello."), UserMessage((foreign,))])
    with pytest.raises(ValidationError) as err:
        A.prepare(conv, model=A_MODEL, max_tokens=64)
    assert err.value.path == "Conversation.messages[2].content"
    assert "nothing in this message goes to anthropic" in str(err.value)
    # Beside other parts, it is just left out; with text, its text goes.
    cited = Native.of("bedrock", {"citationsContent": {}}, text="Cited text.")
    conv = Conversation([UserMessage(("Look:", foreign, cited, CacheBreakpoint()))])
    req = A.prepare(conv, model=A_MODEL, max_tokens=64)
    check_anthropic(req)
    assert req.body["messages"][0]["content"] == [
        {"type": "text", "text": "Look:"},
        {"type": "text", "text": "Cited text.", "cache_control": {"type": "ephemeral"}},
    ]


def test_bedrock_refuses_urls_and_names_the_field() -> None:
    call = ToolCall("tooluse_1", "get_weather", {})
    for part, field in (
        (Image(url="https://example.com/chart.png"), "url"),
        (Document(url="https://example.com/report.pdf"), "url"),
        (Document(PDF, title="report.pdf"), "title"),
    ):
        conv = Conversation([UserMessage(("See:", part))], tools=[WEATHER])
        with pytest.raises(ValidationError) as err:
            B.prepare(conv, model=B_MODEL)
        assert err.value.path == f"Conversation.messages[0].content[1].{field}", err.value.path
        assert str(err.value).startswith(f"Conversation.messages[0].content[1].{field}: ")
        # The same in a tool result, answered or stray.
        conv = Conversation(
            [UserMessage("q"), AssistantMessage(None, [call]), ToolMessage(("See:", part), "tooluse_1")],
            tools=[WEATHER],
        )
        with pytest.raises(ValidationError) as err:
            B.prepare(conv, model=B_MODEL)
        assert err.value.path == f"Conversation.messages[2].content[1].{field}"
        stray = Conversation([UserMessage("q"), ToolMessage(("See:", part), "tooluse_9")], tools=[WEATHER])
        with pytest.raises(ValidationError) as err:
            B.prepare(stray, model=B_MODEL)
        assert err.value.path == f"Conversation.messages[1].content[1].{field}"
        # Anthropic takes all three.
        check_anthropic(A.prepare(conv, model=A_MODEL, max_tokens=64))


def test_anthropic_url_sources() -> None:
    conv = Conversation(
        [UserMessage((Image(url="https://example.com/chart.png"), Document(url="https://example.com/report.pdf")))]
    )
    req = A.prepare(conv, model=A_MODEL, max_tokens=64)
    check_anthropic(req)
    assert req.body["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "url", "url": "https://example.com/chart.png"}},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/report.pdf"}},
    ]


def test_native_parts_in_user_messages_go_only_to_their_provider() -> None:
    """An Anthropic search result block (SearchResultBlockParam) is sent as it
    is to Anthropic and as its text to Bedrock."""
    block = {
        "type": "search_result",
        "source": "https://example.com/forecast",
        "title": "Forecast",
        "content": [{"type": "text", "text": "Rain on Tuesday."}],
    }
    conv = Conversation([UserMessage((Native.of("anthropic", block, text="Rain on Tuesday."), "Summarise."))])
    req = A.prepare(conv, model=A_MODEL, max_tokens=64)
    check_anthropic(req)
    assert req.body["messages"][0]["content"][0] == block
    req = B.prepare(conv, model=B_MODEL)
    check_bedrock(req)
    assert req.body["messages"][0]["content"] == [{"text": "Rain on Tuesday."}, {"text": "Summarise."}]
