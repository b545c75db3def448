"""Content parts, cache breakpoints and native blocks on the chat providers
(openrouter, deepseek, zai, mistral, ollama): what each sends, what it refuses
with a ``ValidationError`` naming the part, that every body validates against
the provider's official SDK request types and goes through its emulator, and
that unknown response blocks come back as the provider's own ``Native`` parts
and are replayed to it only (python/thinkseal/providers/_chat.py and the five
adapters)."""

from __future__ import annotations

import base64
import importlib
import json
from typing import Any

import httpx
import ollama
import pytest
from mistralai.client import Mistral
from mistralai.client.models import ChatCompletionRequest, ChatCompletionStreamRequest
from ollama._types import ChatRequest

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Message,
    Native,
    Origin,
    PreparedRequest,
    SystemMessage,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.testing import respond
from thinkseal.testing.chat import BASE_PATHS, ChatEmulator, Turn, sdk_request_errors
from thinkseal.testing.mistral import MistralEmulator
from thinkseal.testing.mistral import Reply as MistralReply
from thinkseal.testing.ollama import OllamaEmulator
from thinkseal.testing.ollama import Reply as OllamaReply

from .support import assert_recognised, check_request, sdk_create

CHAT = ("openrouter", "deepseek", "zai")
PROVIDERS = (*CHAT, "mistral", "ollama")
IGNORING_BREAKPOINTS = ("deepseek", "zai", "mistral", "ollama")

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR-not-a-real-image"
PNG_B64 = base64.b64encode(PNG).decode()
PNG_URL = "data:image/png;base64," + PNG_B64
PDF = b"%PDF-1.7\n%fake\n"
PDF_B64 = base64.b64encode(PDF).decode()
CHART = Tool("get_chart", "Draw a chart", {"type": "object", "properties": {"of": {"type": "string"}}})
CALL = ToolCall("aB3dE6gH9", "get_chart", {"of": "sales"})  # a 9-character id Mistral takes as it is


def send(provider_id: str, req: PreparedRequest) -> AssistantMessage:
    """``req`` validated against the provider's SDK request types and sent
    through its emulator by the SDK: the emulator's reply."""
    assert json.loads(req.content) == req.body
    if provider_id in CHAT:
        check_request(req, provider_id)
        with ChatEmulator(provider_id) as emu:
            return req.receive(sdk_create(emu.client(), req.body).model_dump())
    if provider_id == "mistral":
        model = ChatCompletionStreamRequest if req.body.get("stream") else ChatCompletionRequest
        assert_recognised(req.body, model.model_validate(req.body).model_dump(by_alias=True, mode="json"))
        server = MistralEmulator()
        server.queue(MistralReply(content="Done."))
        server.start()
        try:
            return req.receive(Mistral(api_key="k", server_url=server.base_url).chat.complete(**req.body).model_dump())
        finally:
            server.stop()
    parsed = ChatRequest.model_validate({k: v for k, v in req.body.items() if k != "messages"})
    assert_recognised({k: v for k, v in req.body.items() if k != "messages"}, parsed.model_dump(exclude_none=True))
    # The SDK's own conversion of messages (images become its Image model).
    copied = importlib.import_module("ollama._client")._copy_messages(req.body["messages"])
    for sent, message in zip(req.body["messages"], copied, strict=True):
        assert_recognised(sent, message.model_dump(exclude_none=True))
    server = OllamaEmulator()
    server.queue(OllamaReply(content="Done."))
    server.start()
    try:
        return req.receive(ollama.Client(host=server.base_url).chat(**req.body).model_dump())
    finally:
        server.stop()


def own(provider_id: str, block: dict[str, Any]) -> Native:
    """A response block as the adapter keeps it: compact JSON, keys sorted."""
    return Native(provider_id, json.dumps(block, sort_keys=True, separators=(",", ":")))


def prepare(provider_id: str, conv: Conversation, **options: Any) -> PreparedRequest:
    return thinkseal.provider(provider_id).prepare(conv, model="m", **options)


def wire(provider_id: str, conv: Conversation, index: int = -1) -> dict[str, Any]:
    message: dict[str, Any] = prepare(provider_id, conv).body["messages"][index]
    return message


def real_conversation() -> Conversation:
    """The issue's conversation: an image and a PDF in a user message, a tool
    result with an image, and cache breakpoints in the system prompt, on the
    tool and in the last user message."""
    return Conversation(
        [
            SystemMessage(["You read charts.", CacheBreakpoint("1h")]),
            UserMessage(["Compare this chart", Image(PNG, "image/png"), "with the report", Document(data=PDF)]),
            AssistantMessage("Let me draw ours.", [CALL]),
            ToolMessage(["Our chart:", Image(PNG, "image/png")], CALL.id),
            AssistantMessage("Ours is higher."),
            UserMessage(["Summarise both.", CacheBreakpoint()]),
        ],
        tools=[Tool(CHART.name, CHART.description, CHART.parameters, cache=CacheBreakpoint())],
    )


def without_breakpoints(conv: Conversation) -> Conversation:
    """``conv`` with every cache breakpoint removed (messages and tools)."""

    def strip(message: Message) -> Message:
        if isinstance(message, (SystemMessage, UserMessage, ToolMessage)) and not isinstance(message.content, str):
            parts = [p for p in message.content if not isinstance(p, CacheBreakpoint)]
            if isinstance(message, ToolMessage):
                return ToolMessage(parts, message.tool_call_id, message.is_error)
            return type(message)(parts)
        return message

    tools = [Tool(t.name, t.description, t.parameters) for t in conv.tools]
    return Conversation([strip(m) for m in conv.messages], tools, conv.response_format)


@pytest.fixture(params=PROVIDERS)
def provider_id(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- the issue's conversation, provider by provider ------------------------------------------------


def test_openrouter_sends_the_whole_real_conversation() -> None:
    req = prepare("openrouter", real_conversation())
    body = req.body
    assert body["messages"][0] == {
        "role": "system",
        "content": [{"type": "text", "text": "You read charts.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
    }
    assert body["messages"][1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Compare this chart"},
            {"type": "image_url", "image_url": {"url": PNG_URL}},
            {"type": "text", "text": "with the report"},
            {
                "type": "file",
                "file": {"filename": "document.pdf", "file_data": "data:application/pdf;base64," + PDF_B64},
            },
        ],
    }
    assert body["messages"][3] == {
        "role": "tool",
        "tool_call_id": CALL.id,
        "content": [{"type": "text", "text": "Our chart:"}, {"type": "image_url", "image_url": {"url": PNG_URL}}],
    }
    assert body["messages"][5] == {
        "role": "user",
        "content": [{"type": "text", "text": "Summarise both.", "cache_control": {"type": "ephemeral"}}],
    }
    assert body["tools"][0]["cache_control"] == {"type": "ephemeral"}
    assert send("openrouter", req).content == "Done."


@pytest.mark.parametrize(
    ("provider_id", "path", "message"),
    [
        (
            "deepseek",
            "UserMessage.content[3]",
            "deepseek takes no PDF documents (a text Document goes out as text)",
        ),
        ("zai", "UserMessage.content[3]", "zai takes a document by URL only (file_url), not its bytes"),
        (
            "mistral",
            "UserMessage.content[3]",
            "mistral takes a PDF by URL only (document_url); upload it and pass its signed URL",
        ),
        ("ollama", "UserMessage.content[3]", "ollama takes no PDF documents (a text Document goes out as text)"),
    ],
)
def test_providers_without_pdf_bytes_name_the_part(provider_id: str, path: str, message: str) -> None:
    with pytest.raises(ValidationError) as err:
        prepare(provider_id, real_conversation())
    assert (err.value.path, str(err.value)) == (path, f"{path}: {message}")


def accepted_conversation(provider_id: str) -> Conversation:
    """The real conversation, with what ``provider_id`` takes in place of what it does not."""
    messages = list(real_conversation().messages)
    if provider_id in ("deepseek", "zai"):  # a document by text; tool results text only
        document: Any = Document(text="Revenue rose 12%.") if provider_id == "deepseek" else None
        user = ["Compare this chart", Image(PNG, "image/png"), "with the report", document or "(no report)"]
        messages[1] = UserMessage(user)
        messages[3] = ToolMessage(["Our chart: ", Document(text="bars, sales up")], CALL.id)
    elif provider_id == "mistral":
        messages[1] = UserMessage(
            ["Compare this chart", Image(PNG, "image/png"), "with the report", Document(url="https://x.test/r.pdf")]
        )
    elif provider_id == "ollama":
        messages[1] = UserMessage(["Compare this chart", Image(PNG, "image/png"), " with the report"])
    return real_conversation().with_messages(messages)


@pytest.mark.parametrize("provider_id", IGNORING_BREAKPOINTS)
def test_what_each_provider_takes_goes_through_its_sdk_types_and_emulator(provider_id: str) -> None:
    req = prepare(provider_id, accepted_conversation(provider_id))
    assert send(provider_id, req).content == "Done."
    user, tool = req.body["messages"][1], req.body["messages"][3]
    if provider_id in ("deepseek", "zai"):
        assert user["content"][1] == {"type": "image_url", "image_url": {"url": PNG_URL}}
        assert tool["content"] == "Our chart: bars, sales up"  # text only, joined
    elif provider_id == "mistral":
        assert user["content"][1:] == [
            {"type": "image_url", "image_url": PNG_URL},
            {"type": "text", "text": "with the report"},
            {"type": "document_url", "document_url": "https://x.test/r.pdf"},
        ]
        assert tool["content"] == [{"type": "text", "text": "Our chart:"}, {"type": "image_url", "image_url": PNG_URL}]
    else:
        assert user == {"role": "user", "content": "Compare this chart with the report", "images": [PNG_B64]}
        assert tool == {"role": "tool", "content": "Our chart:", "images": [PNG_B64], "tool_name": "get_chart"}


@pytest.mark.parametrize("provider_id", ["deepseek", "zai"])
def test_tool_results_with_images_are_refused_where_the_provider_takes_text_only(provider_id: str) -> None:
    conv = accepted_conversation(provider_id)
    messages = list(conv.messages)
    messages[3] = ToolMessage(["Our chart:", Image(PNG, "image/png")], CALL.id)
    with pytest.raises(ValidationError) as err:
        prepare(provider_id, conv.with_messages(messages))
    assert err.value.path == "ToolMessage.content[1]"
    assert str(err.value) == f"ToolMessage.content[1]: {provider_id} tool results take text only"


@pytest.mark.parametrize("provider_id", IGNORING_BREAKPOINTS)
def test_breakpoints_are_ignored_byte_for_byte(provider_id: str) -> None:
    conv = accepted_conversation(provider_id)
    plain = without_breakpoints(conv)
    assert any(t.cache for t in conv.tools)
    assert not any(t.cache for t in plain.tools)
    for stream in (False, True):
        assert prepare(provider_id, conv, stream=stream).content == prepare(provider_id, plain, stream=stream).content
    # A one-part text message is its string, breakpoint or not.
    single = Conversation([SystemMessage(["Be brief.", CacheBreakpoint()]), UserMessage(["Hi", CacheBreakpoint()])])
    strings = Conversation([SystemMessage("Be brief."), UserMessage("Hi")])
    assert prepare(provider_id, single).content == prepare(provider_id, strings).content


# -- text-only content, documents as text, natives --------------------------------------------------


def test_content_that_is_one_text_part_goes_out_as_that_string(provider_id: str) -> None:
    parts = Conversation([SystemMessage(["Be brief."]), UserMessage(["Hi there"])])
    strings = Conversation([SystemMessage("Be brief."), UserMessage("Hi there")])
    assert prepare(provider_id, parts).content == prepare(provider_id, strings).content


@pytest.mark.parametrize(
    ("provider_id", "content"),
    [
        ("openrouter", [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]),
        ("mistral", [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]),
        ("deepseek", "Hi there"),
        ("zai", "Hi there"),
        ("ollama", "Hi there"),
    ],
)
def test_several_text_parts(provider_id: str, content: Any) -> None:
    conv = Conversation([UserMessage(["Hi ", "there"])])
    assert wire(provider_id, conv)["content"] == content
    send(provider_id, prepare(provider_id, conv))


def test_a_text_document_goes_out_as_text(provider_id: str) -> None:
    conv = Conversation([UserMessage(["Summarise: ", Document(text="The report.", title="R")])])
    content = wire(provider_id, conv)["content"]
    if provider_id in ("openrouter", "mistral"):
        assert content == [{"type": "text", "text": "Summarise: "}, {"type": "text", "text": "The report."}]
    else:
        assert content == "Summarise: The report."


def test_another_providers_native_goes_out_as_its_text_or_not_at_all(provider_id: str) -> None:
    cited = Native.of("anthropic", {"type": "search_result", "source": "s"}, text="Cited text.")
    silent = Native.of("anthropic", {"type": "server_tool_use", "id": "srvtoolu_1"})
    conv = Conversation([UserMessage(["Look: ", cited, silent])])
    req = prepare(provider_id, conv)
    assert b"search_result" not in req.content
    assert b"srvtoolu_1" not in req.content
    content = req.body["messages"][0]["content"]
    texts = content if isinstance(content, str) else "".join(p["text"] for p in content)
    assert texts == "Look: Cited text."
    send(provider_id, req)


@pytest.mark.parametrize(
    ("provider_id", "block"),
    [
        ("openrouter", {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}),
        ("deepseek", {"type": "image_url", "image_url": {"url": "https://x.test/a.png", "detail": "low"}}),
        ("zai", {"type": "video_url", "video_url": {"url": "https://x.test/a.mp4"}}),
        ("mistral", {"type": "file", "file_id": "f-123"}),
    ],
)
def test_an_own_native_goes_out_verbatim_as_a_content_part(provider_id: str, block: dict[str, Any]) -> None:
    native = Native.of(provider_id, block, text="(media)")
    conv = Conversation([UserMessage(["See:", native])])
    assert wire(provider_id, conv)["content"] == [{"type": "text", "text": "See:"}, block]
    send(provider_id, prepare(provider_id, conv))
    # Every other provider gets its text.
    for other in PROVIDERS:
        if other != provider_id:
            content = wire(other, conv)["content"]
            assert (content if isinstance(content, str) else content[-1]["text"]).endswith("(media)")


def test_ollama_has_no_content_blocks_for_its_own_native() -> None:
    conv = Conversation([UserMessage(["See:", Native.of("ollama", {"x": 1})])])
    with pytest.raises(ValidationError) as err:
        prepare("ollama", conv)
    assert err.value.path == "UserMessage.content[1]"


def test_a_tool_error_with_parts_starts_with_the_error_prefix(provider_id: str) -> None:
    turn = AssistantMessage(None, [CALL])
    result = ToolMessage(["timed out", Document(text=" after 30 s")], CALL.id, is_error=True)
    conv = Conversation([UserMessage("Chart?"), turn, result], tools=[CHART])
    content = wire(provider_id, conv, 2)["content"]
    text = content if isinstance(content, str) else "".join(p["text"] for p in content)
    assert text == "[tool error] timed out after 30 s"


def test_a_stray_tool_result_with_parts_goes_out_as_user_content(provider_id: str) -> None:
    stray = ToolMessage(["late chart", Image(PNG, "image/png")], "gone")
    conv = Conversation([UserMessage("Chart?"), AssistantMessage("No tool."), stray], tools=[CHART])
    message = wire(provider_id, conv)
    assert message["role"] == "user"
    if provider_id == "ollama":
        assert message == {"role": "user", "content": "[tool result for call gone]\nlate chart", "images": [PNG_B64]}
    else:
        assert message["content"][0] == {"type": "text", "text": "[tool result for call gone]\n"}
    send(provider_id, prepare(provider_id, conv))


# -- images -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider_id", "part"),
    [
        ("openrouter", {"type": "image_url", "image_url": {"url": "https://x.test/a.gif"}}),
        ("deepseek", {"type": "image_url", "image_url": {"url": "https://x.test/a.gif"}}),
        ("zai", {"type": "image_url", "image_url": {"url": "https://x.test/a.gif"}}),
        ("mistral", {"type": "image_url", "image_url": "https://x.test/a.gif"}),
    ],
)
def test_image_urls(provider_id: str, part: dict[str, Any]) -> None:
    conv = Conversation([UserMessage(["What is this?", Image(url="https://x.test/a.gif")])])
    assert wire(provider_id, conv)["content"][1] == part
    send(provider_id, prepare(provider_id, conv))


def test_ollama_takes_no_image_url() -> None:
    with pytest.raises(ValidationError) as err:
        prepare("ollama", Conversation([UserMessage(["What is this?", Image(url="https://x.test/a.gif")])]))
    assert err.value.path == "UserMessage.content[1]"


def test_zai_takes_jpeg_and_png_bytes_only() -> None:
    with pytest.raises(ValidationError) as err:
        prepare("zai", Conversation([UserMessage(["What is this?", Image(b"GIF89a", "image/gif")])]))
    assert err.value.path == "UserMessage.content[1]"
    assert "image/jpeg and image/png" in str(err.value)


def test_zai_takes_a_file_url_but_not_with_an_image() -> None:
    doc = Document(url="https://x.test/r.pdf")
    conv = Conversation([UserMessage(["Summarise", doc])])
    assert wire("zai", conv)["content"][1] == {"type": "file_url", "file_url": {"url": "https://x.test/r.pdf"}}
    send("zai", prepare("zai", conv))
    with pytest.raises(ValidationError) as err:
        prepare("zai", Conversation([UserMessage(["Both", doc, Image(PNG, "image/png")])]))
    assert err.value.path == "UserMessage.content"


def test_openrouter_and_mistral_take_documents_by_url() -> None:
    conv = Conversation([UserMessage(["Summarise", Document(url="https://x.test/r.pdf", title="Report")])])
    assert wire("openrouter", conv)["content"][1] == {
        "type": "file",
        "file": {"filename": "Report", "file_data": "https://x.test/r.pdf"},
    }
    assert wire("mistral", conv)["content"][1] == {
        "type": "document_url",
        "document_url": "https://x.test/r.pdf",
        "document_name": "Report",
    }
    for provider_id in ("openrouter", "mistral"):
        send(provider_id, prepare(provider_id, conv))


# -- OpenRouter's cache marks ---------------------------------------------------------------------


def test_openrouter_marks_text_parts_and_ignores_a_breakpoint_after_other_parts() -> None:
    conv = Conversation(
        [
            UserMessage(["Look", CacheBreakpoint("5m"), Image(PNG, "image/png"), CacheBreakpoint()]),
            AssistantMessage("A chart."),
            UserMessage(["More", Native.of("anthropic", {"t": 1}), CacheBreakpoint("1h")]),
        ]
    )
    body = prepare("openrouter", conv).body
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "Look", "cache_control": {"type": "ephemeral", "ttl": "5m"}},
        {"type": "image_url", "image_url": {"url": PNG_URL}},
    ]
    # The native block sent nothing: the mark lands on the text part before it.
    assert body["messages"][2]["content"] == [
        {"type": "text", "text": "More", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ]
    send("openrouter", prepare("openrouter", conv))


def test_openrouter_marks_cached_tools_only() -> None:
    tools = [Tool("a", cache=CacheBreakpoint("1h")), Tool("b")]
    body = prepare("openrouter", Conversation([UserMessage("hi")], tools=tools)).body
    assert body["tools"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "cache_control" not in body["tools"][1]


def test_moving_a_breakpoint_changes_the_body_but_unseals_nothing() -> None:
    origin = Origin("openrouter", "m")
    item = {"type": "reasoning.encrypted", "data": "OPQ", "index": 0}
    turn = AssistantMessage("Hi.", thinking=[thinkseal.ThinkingBlock.Opaque("openrouter", json.dumps(item))])
    first = Conversation([SystemMessage(["Be brief.", CacheBreakpoint()]), UserMessage("Hello")])
    conv = respond(first, origin, turn).append(UserMessage("Again"))
    moved = conv.with_messages([SystemMessage("Be brief."), *conv.messages[1:]])
    for c in (conv, moved):
        assert [e.reason for e in prepare("openrouter", c).report] == ["kept"]
    assert prepare("openrouter", conv).content != prepare("openrouter", moved).content


# -- unknown response blocks: kept as natives, replayed to their provider only ----------------------

URL_CITATION = {
    "type": "url_citation",
    "url_citation": {"url": "https://x.test/a", "title": "A", "content": "...", "start_index": 0, "end_index": 5},
}


def openrouter_reply(**message: Any) -> dict[str, Any]:
    return {
        "id": "gen-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", **message}}],
    }


def test_openrouter_annotations_become_natives_after_the_text_and_go_back_as_annotations() -> None:
    start = Conversation([UserMessage("News?")])
    req = prepare("openrouter", start)
    reply = req.receive(openrouter_reply(content="Found it.", annotations=[URL_CITATION]))
    assert reply.parts == ("Found it.", own("openrouter", URL_CITATION))
    assert reply.content == "Found it."
    conv = start.append(reply, UserMessage("More?"))
    sent = prepare("openrouter", conv).body["messages"][1]
    assert sent == {"role": "assistant", "content": "Found it.", "annotations": [URL_CITATION]}
    assert sdk_request_errors(prepare("openrouter", conv).body, "openrouter") is None
    for other in PROVIDERS:
        if other != "openrouter":
            req = prepare(other, conv)
            assert b"url_citation" not in req.content
            assert req.body["messages"][1]["content"] == "Found it."


def test_openrouter_annotations_stream_like_the_whole_reply() -> None:
    with ChatEmulator("openrouter") as emu:
        emu.reply(Turn(content="Found it.", annotations=[URL_CITATION]))
        emu.reply(Turn(content="Found it.", annotations=[URL_CITATION]))
        client = emu.client()
        start = Conversation([UserMessage("News?")])
        req = prepare("openrouter", start)
        whole = req.receive(sdk_create(client, req.body).model_dump())
        sreq = prepare("openrouter", start, stream=True)
        acc = sreq.stream()
        for event in sdk_create(client, sreq.body):
            acc.feed(event.model_dump())
        assert acc.finish() == whole
        assert whole.parts[-1] == own("openrouter", URL_CITATION)
        # The annotated turn goes back to the emulator, which takes it.
        conv = start.append(whole, UserMessage("More?"))
        assert send("openrouter", prepare("openrouter", conv)).content == "Done."


@pytest.mark.parametrize("provider_id", CHAT)
def test_a_content_array_reply_keeps_unknown_items_in_place(provider_id: str) -> None:
    chart = {"type": "image_url", "image_url": {"url": "https://x.test/c.png"}}
    content = [
        {"type": "text", "text": "Here "},
        {"type": "text", "text": "it is:"},
        chart,
        {"type": "text", "text": "."},
    ]
    response = openrouter_reply(content=content)
    start = Conversation([UserMessage("Chart?")])
    req = prepare(provider_id, start)
    reply = req.receive(response)
    assert reply.parts == ("Here it is:", own(provider_id, chart), ".")
    events = [
        {"choices": [{"index": 0, "delta": {"content": "Here "}}]},
        {"choices": [{"index": 0, "delta": {"content": [{"type": "text", "text": "it is:"}, chart]}}]},
        {"choices": [{"index": 0, "delta": {"content": "."}, "finish_reason": "stop"}]},
    ]
    acc = prepare(provider_id, start, stream=True).stream()
    for event in events:
        acc.feed(event)
    assert acc.finish() == reply
    # Back to the same provider in place; elsewhere only the text.
    conv = start.append(reply, UserMessage("Thanks"))
    assert wire(provider_id, conv, 1)["content"] == [
        {"type": "text", "text": "Here it is:"},
        chart,
        {"type": "text", "text": "."},
    ]
    other = "mistral" if provider_id != "mistral" else "openrouter"
    assert wire(other, conv, 1)["content"] == "Here it is:."


def test_mistral_unknown_chunks_are_kept_in_place_and_streamed_alike() -> None:
    audio = {"type": "input_audio", "input_audio": "UklGRg=="}
    response = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "created": 1,
        "usage": {},
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Listen:"}, audio, {"type": "text", "text": " done"}],
                },
            }
        ],
    }
    start = Conversation([UserMessage("Sing?")])
    reply = prepare("mistral", start).receive(response)
    assert reply.parts == ("Listen:", own("mistral", audio), " done")
    events = [
        {"choices": [{"index": 0, "delta": {"content": [{"type": "text", "text": "Listen:"}, audio]}}]},
        {"choices": [{"index": 0, "delta": {"content": " done"}, "finish_reason": "stop"}]},
    ]
    acc = prepare("mistral", start, stream=True).stream()
    for event in events:
        acc.feed(event)
    assert acc.finish() == reply
    sent = wire("mistral", start.append(reply, UserMessage("Again")), 1)
    assert sent["content"] == [{"type": "text", "text": "Listen:"}, audio, {"type": "text", "text": " done"}]


# -- the emulators hold the providers' rules on content ---------------------------------------------


@pytest.mark.parametrize(
    ("provider_id", "message", "expected"),
    [
        (
            "deepseek",
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "image_url", "image_url": {"url": PNG_URL}}]},
            "messages.2.content.0: deepseek takes no 'image_url' part in a tool message (emulator rule)",
        ),
        (
            "zai",
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "x"}]},
            "messages.2.content: a tool message takes a string (emulator rule)",
        ),
        (
            "openrouter",
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "image_file", "image_file": {}}]},
            "messages.2.content.0: openrouter takes no 'image_file' part in a tool message (emulator rule)",
        ),
    ],
)
def test_chat_emulators_refuse_parts_the_provider_does_not_document(
    provider_id: str, message: dict[str, Any], expected: str
) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "get_chart", "arguments": "{}"}}
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "Chart?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            message,
        ],
    }
    with ChatEmulator(provider_id) as emu:
        status, payload, _ = emu.handle(BASE_PATHS[provider_id] + "/chat/completions", json.dumps(body).encode())
    assert status == 400
    assert json.loads(payload)["error"]["message"] == expected


def test_openrouter_emulator_takes_cache_marks_on_text_parts_only() -> None:
    part = {"type": "image_url", "image_url": {"url": PNG_URL}, "cache_control": {"type": "ephemeral"}}
    body = {"model": "m", "messages": [{"role": "user", "content": [part]}]}
    assert sdk_request_errors(body, "openrouter") is not None
    text = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "2h"}}
    body = {"model": "m", "messages": [{"role": "user", "content": [text]}]}
    with ChatEmulator("openrouter") as emu:
        status, payload, _ = emu.handle(BASE_PATHS["openrouter"] + "/chat/completions", json.dumps(body).encode())
    assert status == 400
    assert "cache_control" in json.loads(payload)["error"]["message"]


def test_ollama_emulator_refuses_images_that_are_not_base64() -> None:
    server = OllamaEmulator()
    server.start()
    try:
        body = {"model": "m", "stream": False, "messages": [{"role": "user", "content": "?", "images": ["a:b"]}]}
        response = httpx.post(server.base_url + "/api/chat", json=body)
    finally:
        server.stop()
    assert response.status_code == 400
    assert response.json() == {"error": "illegal base64 data at input byte 1"}


def test_bodies_without_the_new_features_are_unchanged(provider_id: str) -> None:
    """The same conversation with string content and with one-text-part content
    gives the same bytes (content parts cost nothing when unused)."""
    turn = AssistantMessage(None, [CALL])
    strings = Conversation([SystemMessage("S"), UserMessage("U"), turn, ToolMessage("T", CALL.id)], tools=[CHART])
    parts = Conversation([SystemMessage(["S"]), UserMessage(["U"]), turn, ToolMessage(["T"], CALL.id)], tools=[CHART])
    assert prepare(provider_id, strings).content == prepare(provider_id, parts).content
