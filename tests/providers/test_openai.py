"""OpenAI chat completions: nothing sealed, reasoning only counted
(``usage.completion_tokens_details.reasoning_tokens``); an OpenAI-compatible
server's ``reasoning_content`` kept as unsigned text and never sent back
(python/thinkseal/providers/openai.py). What every chat adapter shares is
checked in test_chat_common.py, which runs this adapter too.

Every body is validated against the openai SDK's ``CompletionCreateParams``
with unknown keys refused (``check_request``), and goes through the chat
emulator, which refuses what OpenAI refuses."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Origin,
    PreparedRequest,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
    ValidationError,
)
from thinkseal.testing import respond
from thinkseal.testing.chat import OPENAI_ORPHAN_TOOL, OPENAI_UNANSWERED_CALLS, ChatEmulator, Turn

from .support import check_request, sdk_create

FIXTURES = Path(__file__).parent / "fixtures" / "openai"
MODEL = "o4-mini"
WEATHER = Tool(
    "get_weather", "Current weather of a city", {"type": "object", "properties": {"city": {"type": "string"}}}
)
WEATHER_WIRE = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
SCRIPT = [
    Turn(reasoning="Paris first.", tool_calls=[("call_1", "get_weather", {"city": "Paris"})]),
    Turn(reasoning="Now Lyon.", tool_calls=[("call_2", "get_weather", {"city": "Lyon"})]),
    Turn(reasoning="Both known.", content="Paris 20°C, Lyon 18°C."),
]
RESULTS = ["20°C, sunny", "18°C, rain"]


def start() -> Conversation:
    return Conversation([SystemMessage("Be brief."), UserMessage("Weather in Paris and Lyon?")], tools=[WEATHER])


@pytest.fixture
def emu() -> Iterator[ChatEmulator]:
    with ChatEmulator("openai") as server:
        yield server


def send(client: openai.OpenAI, req: PreparedRequest) -> thinkseal.Reply:
    body = check_request(req, "openai")
    if body.get("stream"):
        acc = req.stream()
        for event in sdk_create(client, body):
            acc.feed(ChatCompletionChunk.model_validate(event.model_dump()).model_dump())
        return acc.reply
    return req.parse(ChatCompletion.model_validate(sdk_create(client, body).model_dump()).model_dump())


def tool_loop(emu: ChatEmulator, *, stream: bool, account: str | None = None) -> tuple[Conversation, list[Any]]:
    for turn in SCRIPT:
        emu.reply(turn)
    client = emu.client()
    conv, replies = start(), []
    # Usage comes in a stream's last chunk when asked for (stream_options.include_usage).
    options: dict[str, Any] = {"stream_options": {"include_usage": True}} if stream else {}
    for k in range(3):
        req = thinkseal.provider("openai", account).prepare(conv, model=MODEL, stream=stream, **options)
        reply = send(client, req)
        replies.append(reply)
        conv = conv.append(reply.message)
        if k < 2:
            conv = conv.append(ToolMessage(RESULTS[k], f"call_{k + 1}"))
    return conv.append(UserMessage("Thanks!")), replies


def test_api_reference_chat_completion_object_parses() -> None:
    """The chat completion object of OpenAI's API reference
    (https://platform.openai.com/docs/api-reference/chat/object). The page is not
    among the stored pages; the fixture is its example as quoted, identically,
    by several projects that cite the page."""
    response = json.loads((FIXTURES / "chat_completion_object.json").read_text(encoding="utf-8"))
    ChatCompletion.model_validate(response)
    req = thinkseal.provider("openai").prepare(Conversation([UserMessage("What is in this image?")]), model="gpt-4o")
    reply = req.parse(response)
    assert reply.message == AssistantMessage(response["choices"][0]["message"]["content"])
    assert (reply.stop_reason, reply.usage, reply.id, reply.model) == (
        "stop",
        Usage(1117, 46, 0, None, 0),
        "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "gpt-4o-2024-08-06",
    )
    assert req.parse(ChatCompletion.model_validate(response).model_dump()) == reply
    follow_up = thinkseal.provider("openai").prepare(
        Conversation([UserMessage("What is in this image?")]).append(reply.message, UserMessage("And the sky?")),
        model="gpt-4o",
    )
    assert check_request(follow_up, "openai")["messages"][1] == {
        "role": "assistant",
        "content": response["choices"][0]["message"]["content"],
    }


def test_three_step_tool_loop_exact_bodies(emu: ChatEmulator) -> None:
    conv, replies = tool_loop(emu, stream=False)
    assert emu.requests[0].body == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris and Lyon?"},
        ],
        "tools": [WEATHER_WIRE],
    }
    assert replies[0].message.parts == (
        ThinkingBlock.Text("Paris first."),
        ToolCall("call_1", "get_weather", {"city": "Paris"}),
    )
    assert replies[0].message.thinking_binding is None  # nothing sealed
    assert replies[0].usage == Usage(10, 5, 4, None, 3)
    req = thinkseal.provider("openai").prepare(conv, model=MODEL, reasoning_effort="high", max_completion_tokens=4096)
    assert [e.reason for e in req.report] == ["no-sealed-thinking"] * 3
    body = check_request(req, "openai")
    assert body["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "20°C, sunny"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Lyon"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "18°C, rain"},
        {"role": "assistant", "content": "Paris 20°C, Lyon 18°C."},
        {"role": "user", "content": "Thanks!"},
    ]
    assert (body["reasoning_effort"], body["max_completion_tokens"]) == ("high", 4096)
    assert b"reasoning_content" not in req.content
    assert sdk_create(emu.client(), body).choices[0].message.content == "Done."


def test_streamed_loop_equals_the_whole_one() -> None:
    with ChatEmulator("openai") as whole_emu, ChatEmulator("openai") as stream_emu:
        whole, whole_replies = tool_loop(whole_emu, stream=False)
        streamed, streamed_replies = tool_loop(stream_emu, stream=True, account=None)
    assert streamed == whole
    assert streamed_replies == whole_replies
    streaming = {"stream": True, "stream_options": {"include_usage": True}}
    assert [r.body for r in stream_emu.requests] == [{**r.body, **streaming} for r in whole_emu.requests]


@pytest.mark.parametrize("case", ["pruned", "system prompt changed", "other model", "other account"])
def test_changed_histories_have_nothing_to_unseal(case: str, emu: ChatEmulator) -> None:
    """Nothing OpenAI returns in chat completions is sealed: a changed history
    goes out as it is, its reasoning text never."""
    conv, _ = tool_loop(emu, stream=False)
    model, account, messages = MODEL, None, list(conv.messages)
    if case == "pruned":
        messages = messages[1:]
    elif case == "system prompt changed":
        messages[0] = SystemMessage("Be verbose.")
    elif case == "other model":
        model = "o3"
    else:
        account = "org-b"
    changed = conv.with_messages(messages)
    req = thinkseal.provider("openai", account).prepare(changed, model=model)
    assert [e.reason for e in req.report] == ["no-sealed-thinking"] * 3
    before = thinkseal.provider("openai").prepare(conv, model=MODEL).body["messages"]
    after = check_request(req, "openai")["messages"]
    if case == "pruned":
        assert after == before[1:]
    elif case == "system prompt changed":
        assert after == [{"role": "system", "content": "Be verbose."}, *before[1:]]
    else:
        assert after == before
    sdk_create(emu.client(), req.body)


def test_reasoning_from_elsewhere_is_not_sent_to_openai() -> None:
    turn = AssistantMessage(
        None,
        [ToolCall("c1", "get_weather", {"city": "Paris"})],
        [
            ThinkingBlock.Text("Claude thinks.", signature="SIG"),
            ThinkingBlock.Opaque("openai-responses", '{"id":"rs_1"}'),
        ],
    )
    for origin in (Origin("anthropic", "claude"), Origin("openai", MODEL)):
        conv = respond(start(), origin, turn).append(ToolMessage("sunny", "c1"))
        req = thinkseal.provider("openai").prepare(conv, model=MODEL)
        assert check_request(req, "openai")["messages"][2] == {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
            ],
        }
        for secret in (b"SIG", b"rs_1", b"Claude thinks."):
            assert secret not in req.content


def test_emulator_refuses_what_openai_refuses(emu: ChatEmulator) -> None:
    conv, _ = tool_loop(emu, stream=False)
    body = thinkseal.provider("openai").prepare(conv, model=MODEL).body
    messages = [dict(m) for m in body["messages"]]
    client = emu.client()
    cases = [
        # A tool message without its call.
        ([*messages[:2], messages[3], *messages[4:]], OPENAI_ORPHAN_TOOL),
        # A call without its tool message.
        ([*messages[:3], *messages[4:]], OPENAI_UNANSWERED_CALLS.format(ids="call_1")),
    ]
    for bad, message in cases:
        with pytest.raises(openai.BadRequestError) as err:
            sdk_create(client, {**body, "messages": bad})
        assert err.value.body["message"] == message  # type: ignore[index]
    # A naive client sending DeepSeek-style reasoning back: not in OpenAI's schema.
    naive = [*messages[:2], {**messages[2], "reasoning_content": "Paris first."}, *messages[3:]]
    with pytest.raises(openai.BadRequestError) as err:
        sdk_create(client, {**body, "messages": naive})
    assert "reasoning_content" in err.value.body["message"]  # type: ignore[index]


# -- content parts -------------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\nfake"
PDF = b"%PDF-1.7 fake"


def test_content_parts(emu: ChatEmulator) -> None:
    conv = Conversation(
        [
            SystemMessage(["Read carefully.", CacheBreakpoint("1h")]),
            UserMessage(
                [
                    "Compare",
                    Image(PNG, "image/png"),
                    Image(url="https://example.com/a.png"),
                    Document(data=PDF, title="report.pdf"),
                    Document(data=PDF),
                    Document(text="plain notes"),
                    CacheBreakpoint(),
                ]
            ),
        ],
        tools=[WEATHER],
    )
    req = thinkseal.provider("openai").prepare(conv, model=MODEL)
    pdf_url = "data:application/pdf;base64," + base64.b64encode(PDF).decode()
    assert check_request(req, "openai")["messages"] == [
        {"role": "system", "content": "Read carefully."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Compare"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                {"type": "file", "file": {"filename": "report.pdf", "file_data": pdf_url}},
                {"type": "file", "file": {"filename": "document.pdf", "file_data": pdf_url}},
                {"type": "text", "text": "plain notes"},
            ],
        },
    ]
    sdk_create(emu.client(), req.body)
    # Cache breakpoints are ignored: the same bytes without them.
    plain = Conversation(
        [SystemMessage("Read carefully."), UserMessage(["Compare", Image(PNG, "image/png")])], [WEATHER]
    )
    marked = Conversation(
        [
            SystemMessage(["Read carefully.", CacheBreakpoint()]),
            UserMessage(["Compare", Image(PNG, "image/png"), CacheBreakpoint()]),
        ],
        [Tool(WEATHER.name, WEATHER.description, WEATHER.parameters, cache=CacheBreakpoint("1h"))],
    )
    openai_adapter = thinkseal.provider("openai")
    assert openai_adapter.prepare(plain, model=MODEL).content == openai_adapter.prepare(marked, model=MODEL).content


def test_parts_openai_chat_does_not_take_are_refused() -> None:
    by_url = Conversation([UserMessage(["Read", Document(url="https://example.com/a.pdf")])])
    with pytest.raises(ValidationError) as err:
        thinkseal.provider("openai").prepare(by_url, model=MODEL)
    assert err.value.path == "UserMessage.content[1]"
    call = ToolCall("c1", "get_weather", {"city": "Paris"})
    image_result = Conversation(
        [UserMessage("hi"), AssistantMessage(None, [call]), ToolMessage(["Chart:", Image(PNG, "image/png")], "c1")],
        [WEATHER],
    )
    with pytest.raises(ValidationError) as err:
        thinkseal.provider("openai").prepare(image_result, model=MODEL)
    assert (err.value.path, str(err.value)) == (
        "ToolMessage.content[1]",
        "ToolMessage.content[1]: openai tool results take text only",
    )


# -- options ------------------------------------------------------------------------------------------------


def test_documented_options_pass_through(emu: ChatEmulator) -> None:
    options: dict[str, Any] = {
        "reasoning_effort": "minimal",
        "max_completion_tokens": 2048,
        "verbosity": "low",
        "store": False,
        "parallel_tool_calls": False,
        "prompt_cache_key": "session-1",
        "seed": 7,
    }
    req = thinkseal.provider("openai").prepare(start(), model=MODEL, **options)
    body = check_request(req, "openai")
    assert {k: body[k] for k in options} == options
    sdk_create(emu.client(), body)


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"max_tokens": 1024}, "max_tokens"),
        ({"max_completion_tokens": 0}, "max_completion_tokens"),
        ({"reasoning_effort": "ultra"}, "reasoning_effort"),
        ({"verbosity": "loud"}, "verbosity"),
        ({"temperature": 2.5}, "temperature"),
        ({"n": 0}, "n"),
        ({"top_logprobs": 21}, "top_logprobs"),
        ({"store": "yes"}, "store"),
        ({"response_format": {"type": "text"}}, "response_format"),
        ({"messages": []}, "messages"),
    ],
)
def test_invalid_options(options: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as err:
        thinkseal.provider("openai").prepare(start(), model=MODEL, **options)
    assert err.value.path == path


def test_json_schema_response_format_passes_through() -> None:
    fmt: dict[str, Any] = {
        "type": "json_schema",
        "json_schema": {"name": "weather", "strict": True, "schema": {"type": "object"}},
    }
    body = check_request(thinkseal.provider("openai").prepare(start().with_response_format(fmt), model=MODEL), "openai")
    assert body["response_format"] == fmt
