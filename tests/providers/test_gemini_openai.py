"""The ``gemini-openai`` adapter: Gemini through Google's OpenAI-compatible
chat completions (python/thinkseal/providers/gemini_openai.py), against its
emulator (``thinkseal.testing.gemini_openai``), driven through the ``openai``
SDK. Every request body is validated against the SDK's request TypedDict with
Google's extensions removed (unknown keys refused); replies and stream chunks
parse with the SDK's ``ChatCompletion`` and ``ChatCompletionChunk`` models.

Fixtures (tests/providers/fixtures/gemini-openai/): ``tool_call.json`` is the
tool call of the OpenAI example on https://ai.google.dev/gemini-api/docs/thought-signatures
(its ``<Signature A>`` as base64, as the field is on the wire) in a chat
completion; ``text_stream.json`` the streamed text reply with the message's
``extra_content`` in its first delta, as reported on Google's developer forum
(https://discuss.ai.google.dev/t/openai-api-compatibility-broken-due-to-thought-signature-on-gemini-3-pro-preview/109823).
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
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
    Reply,
    ResponseError,
    SystemMessage,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    Tool,
    ToolCall,
    ToolCallDelta,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.providers.gemini_openai import ThoughtSplitter, split_thought
from thinkseal.testing import respond
from thinkseal.testing.gemini import CORRUPTED, MISSING, PAIRING
from thinkseal.testing.gemini import Reply as Scripted
from thinkseal.testing.gemini_openai import GeminiOpenAIEmulator, sdk_request_errors

from .support import sdk_create

FIXTURES = Path(__file__).parent / "fixtures" / "gemini-openai"
ID = "gemini-openai"
MODEL = "gemini-3-pro-preview"
OTHER_MODEL = "gemini-3-flash-preview"
OLD_MODEL = "gemini-2.5-flash"
DUMMY = {"google": {"thought_signature": "skip_thought_signature_validator"}}
THINKING = {"extra_body": {"google": {"thinking_config": {"thinking_level": "high", "include_thoughts": True}}}}
Opaque = ThinkingBlock.Opaque
Text = ThinkingBlock.Text

CHECK_FLIGHT = Tool(
    "check_flight",
    "Gets the current status of a flight",
    {"type": "object", "properties": {"flight": {"type": "string"}}, "required": ["flight"]},
)
BOOK_TAXI = Tool(
    "book_taxi",
    "Book a taxi",
    {"type": "object", "properties": {"time": {"type": "string"}}, "required": ["time"]},
)
QUESTION = "Check flight status for AA100 and book a taxi 2 hours before if delayed."
ANSWER = "Your flight is delayed; a taxi is booked for 10 AM."
RESULTS = ['{"status": "delayed", "departure_time": "12 PM"}', '{"booking_status": "success"}']


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def start(system: str = "You book travel.") -> Conversation:
    return Conversation([SystemMessage(system), UserMessage(QUESTION)], tools=[CHECK_FLIGHT, BOOK_TAXI])


def prepare(conv: Conversation, model: str = MODEL, account: str | None = "key-A", **options: Any) -> PreparedRequest:
    req = thinkseal.provider(ID, account=account).prepare(conv, model=model, **options)
    assert json.loads(req.content) == req.body
    assert req.path == "/chat/completions"
    assert req.headers == {}
    errors = sdk_request_errors(req.body)
    assert errors is None, errors
    return req


def send(client: openai.OpenAI, req: PreparedRequest) -> Reply:
    """``req`` through the SDK: its chunks (as SDK objects) into a stream, or its completion."""
    body = dict(req.body)
    if body.get("stream"):
        acc = req.stream()
        for chunk in sdk_create(client, body):
            acc.feed(chunk)
        return acc.reply
    completion = sdk_create(client, body)
    assert isinstance(completion, ChatCompletion)
    return req.parse(completion)


@pytest.fixture
def emu() -> Iterator[GeminiOpenAIEmulator]:
    with GeminiOpenAIEmulator() as server:
        yield server


def script(emu: GeminiOpenAIEmulator) -> None:
    emu.queue(
        Scripted(thought="Check the flight first.", calls=[("check_flight", {"flight": "AA100"})]),
        Scripted(thought="It is delayed: book the taxi.", calls=[("book_taxi", {"time": "10 AM"})]),
        Scripted(thought="Both done.", text=ANSWER),
    )


def tool_loop(emu: GeminiOpenAIEmulator, *, stream: bool, key: str = "key-A") -> tuple[Conversation, list[Reply]]:
    """Three steps through the emulator: two calls, then the answer; then a new question."""
    script(emu)
    client = emu.client(key)
    conv, replies = start(), []
    for k in range(3):
        req = prepare(conv, account=key, stream=stream, **THINKING)
        assert all(entry.kept for entry in req.report)
        reply = send(client, req)
        replies.append(reply)
        conv = conv.append(reply.message)
        if k < 2:
            conv = conv.append(ToolMessage(RESULTS[k], reply.message.tool_calls[0].id))
    return conv.append(UserMessage("And the hotel?")), replies


def extra(reply: Reply) -> Any:
    """The ``extra_content`` of a reply's (only) signature block."""
    (block,) = [b for b in reply.message.thinking if isinstance(b, Opaque)]
    return json.loads(block.data)["extra_content"]


def assistant_wires(body: dict[str, Any]) -> list[Any]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


# -- the full loop --------------------------------------------------------------------------------


def test_three_step_tool_loop_with_exact_bodies(emu: GeminiOpenAIEmulator) -> None:
    conv, replies = tool_loop(emu, stream=False)
    first, second, third = (r.body for r in emu.requests)
    tools = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in (CHECK_FLIGHT, BOOK_TAXI)
    ]
    assert first == {
        "model": MODEL,
        "messages": [{"role": "system", "content": "You book travel."}, {"role": "user", "content": QUESTION}],
        "tools": tools,
        **THINKING,
    }
    call = replies[0].message.tool_calls[0]
    signature = extra(replies[0])["google"]["thought_signature"]
    # The thought summary came as a leading <thought>...</thought> in the content: it is the Text.
    assert replies[0].message.parts == (
        Text("Check the flight first."),
        Opaque(ID, json.dumps({"extra_content": extra(replies[0]), "tool_call_id": call.id}, separators=(",", ":"))),
        ToolCall(call.id, "check_flight", {"flight": "AA100"}),
    )
    assert second["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": "check_flight", "arguments": '{"flight":"AA100"}'},
                    "extra_content": {"google": {"thought_signature": signature}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call.id, "content": RESULTS[0]},
    ]
    assert [m["tool_calls"][0]["extra_content"] for m in assistant_wires(third)] == [
        extra(replies[0]),
        extra(replies[1]),
    ]
    final = replies[2].message
    assert final.parts == (
        Text("Both done."),
        Opaque(ID, json.dumps({"extra_content": extra(replies[2])}, separators=(",", ":"))),
        ANSWER,
    )
    req = prepare(conv, **THINKING)
    assert [e.reason for e in req.report] == ["kept", "kept", "kept"]
    assert assistant_wires(dict(req.body))[-1] == {
        "role": "assistant",
        "content": ANSWER,
        "extra_content": extra(replies[2]),
    }
    for reply in replies:  # reasoning text never goes back
        assert reply.message.thinking_text.encode() not in req.content
    assert send(emu.client("key-A"), req).message.content == "Done."
    assert (replies[2].stop_reason, replies[0].stop_reason) == ("stop", "tool_calls")
    assert replies[2].usage.input_tokens == 12


def test_streamed_loop_equals_the_whole_one() -> None:
    with GeminiOpenAIEmulator() as whole_emu, GeminiOpenAIEmulator() as stream_emu:
        whole, whole_replies = tool_loop(whole_emu, stream=False)
        streamed, stream_replies = tool_loop(stream_emu, stream=True)
    assert streamed == whole
    assert [m.parts for m in streamed] == [m.parts for m in whole]
    assert [r.message.digest for r in stream_replies] == [r.message.digest for r in whole_replies]
    assert [r.body for r in stream_emu.requests] == [{**r.body, "stream": True} for r in whole_emu.requests]


def test_stream_deltas_and_partial(emu: GeminiOpenAIEmulator) -> None:
    emu.queue(Scripted(thought="Check the flight first.", text="Checking.", calls=[("check_flight", {"f": 1})]))
    req = prepare(start(), stream=True, **THINKING)
    acc = req.stream()
    deltas = []
    for chunk in sdk_create(emu.client(), dict(req.body)):
        deltas.extend(acc.feed(chunk.model_dump()))
    message = acc.finish()
    assert "".join(d.text for d in deltas if isinstance(d, ThinkingDelta)) == "Check the flight first."
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == message.content == "Checking."
    (call,) = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert (call.name, json.loads(call.arguments)) == ("check_flight", {"f": 1})
    assert message.has_sealed_thinking
    emu.queue(Scripted(text="Cut short.", cut=True))
    cut = req.stream()
    for chunk in sdk_create(emu.client(), dict(req.body)):
        cut.feed(chunk)
    with pytest.raises(ResponseError, match="finish_reason"):
        cut.finish()
    assert cut.partial() == AssistantMessage("Cut short.")


# -- the documented shapes -------------------------------------------------------------------------


def test_the_documented_tool_call_round_trips() -> None:
    """The thought-signatures page's OpenAI example: the signature on the tool
    call's extra_content, sent back on that call exactly as received."""
    response = load("tool_call.json")
    parsed = ChatCompletion.model_validate(response)
    req = prepare(start())
    reply = req.parse(response)
    for form in (parsed, parsed.model_dump(), parsed.model_dump(mode="json")):
        assert req.parse(form) == reply
    received = response["choices"][0]["message"]["tool_calls"][0]
    conv = start().append(reply.message, ToolMessage(RESULTS[0], "function-call-1"))
    sent = assistant_wires(dict(prepare(conv).body))[0]["tool_calls"][0]
    assert sent == {**received, "function": {"name": "check_flight", "arguments": '{"flight":"AA100"}'}}
    assert (reply.stop_reason, reply.id, reply.model, reply.usage.output_tokens) == (
        "tool_calls",
        "dKZsaa2nJ8SS7M8PqNGVkAI",
        "gemini-3-pro-preview",
        18,
    )


def test_the_reported_text_stream_keeps_the_message_signature() -> None:
    chunks = load("text_stream.json")
    req = prepare(start(), stream=True)
    acc = req.stream()
    for chunk in chunks:
        acc.feed(ChatCompletionChunk.model_validate(chunk))
    message = acc.finish()
    text = "I can call the function get_current_weather. It retrieves the current weather for a location."
    assert message.parts == (
        Opaque(ID, '{"extra_content":{"google":{"thought_signature":"U2lnbmF0dXJlX0M="}}}'),
        text,
    )
    whole = {**chunks[1], "object": "chat.completion"}
    whole["choices"] = [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text, **_extra(chunks)}}
    ]
    assert req.parse(whole).message == message
    conv = start().append(message, UserMessage("Thanks"))
    assert assistant_wires(dict(prepare(conv).body)) == [
        {"role": "assistant", "content": text, "extra_content": {"google": {"thought_signature": "U2lnbmF0dXJlX0M="}}}
    ]


def _extra(chunks: list[Any]) -> dict[str, Any]:
    return {"extra_content": chunks[0]["choices"][0]["delta"]["extra_content"]}


# -- thought summaries ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("<thought>Plan.</thought>Answer.", ("Plan.", "Answer.")),
        ("<thought>Plan.</thought>", ("Plan.", "")),
        ("<thought>never closed", ("never closed", "")),
        ("Answer <thought>later</thought>", ("", "Answer <thought>later</thought>")),
        ("<thou", ("", "<thou")),
        ("", ("", "")),
    ],
)
def test_a_leading_thought_is_split_whole_and_in_any_fragments(content: str, expected: tuple[str, str]) -> None:
    assert split_thought(content) == expected
    for cut in range(len(content) + 1):
        for cut2 in range(cut, len(content) + 1):
            splitter = ThoughtSplitter()
            pieces = [splitter.feed(p) for p in (content[:cut], content[cut:cut2], content[cut2:])]
            pieces.append(splitter.flush())
            assert ("".join(t for t, _ in pieces), "".join(a for _, a in pieces)) == expected, (cut, cut2)


def test_reasoning_content_is_read_too_and_never_sent() -> None:
    response = load("tool_call.json")
    message = response["choices"][0]["message"]
    message["reasoning_content"] = "Look it up."
    message["content"] = "<thought> Then call.</thought>"
    reply = prepare(start()).receive(response)
    assert reply.thinking[0] == Text("Look it up. Then call.")
    assert reply.content == ""
    body = prepare(start().append(reply, ToolMessage("ok", "function-call-1"))).content
    assert b"Look it up" not in body
    assert b"reasoning_content" not in body


# -- histories that no longer hold: unsealed, with the dummy on Gemini 3 -----------------------------


def looped(emu: GeminiOpenAIEmulator) -> Conversation:
    conv, _ = tool_loop(emu, stream=False)
    return conv


def go_through(emu: GeminiOpenAIEmulator, req: PreparedRequest) -> Any:
    return sdk_create(emu.client("key-A"), dict(req.body))


def test_a_changed_system_prompt_unseals_every_turn(emu: GeminiOpenAIEmulator) -> None:
    conv = looped(emu)
    edited = conv.with_messages([SystemMessage("You book hotels."), *conv.messages[1:]])
    req = prepare(edited)
    assert [e.reason for e in req.report] == ["prefix-changed"] * 3
    turns = assistant_wires(dict(req.body))
    assert [t["tool_calls"][0]["extra_content"] for t in turns[:2]] == [DUMMY, DUMMY]
    assert "extra_content" not in turns[2]
    go_through(emu, req)  # accepted: nothing stale is replayed


def test_an_edit_unseals_the_turns_after_it_only(emu: GeminiOpenAIEmulator) -> None:
    conv = looped(emu)
    messages = list(conv.messages)
    messages[5] = ToolMessage('{"booking_status": "failed"}', messages[5].tool_call_id)  # type: ignore[union-attr]
    req = prepare(conv.with_messages(messages))
    assert [e.reason for e in req.report] == ["kept", "kept", "prefix-changed"]
    turns = assistant_wires(dict(req.body))
    assert turns[0]["tool_calls"][0]["extra_content"] != DUMMY
    assert "extra_content" not in turns[2]
    go_through(emu, req)


def test_pruning_unseals_the_turns_after_the_cut(emu: GeminiOpenAIEmulator) -> None:
    conv = looped(emu)
    pruned = conv.with_messages([conv[0], conv[1], *conv.messages[4:]])
    req = prepare(pruned)
    assert [e.reason for e in req.report] == ["prefix-changed", "prefix-changed"]
    assert [t.get("tool_calls", [{}])[0].get("extra_content") for t in assistant_wires(dict(req.body))] == [
        DUMMY,
        None,
    ]
    go_through(emu, req)


def test_a_model_switch_unseals_and_older_models_get_no_dummy(emu: GeminiOpenAIEmulator) -> None:
    conv = looped(emu)
    newer = prepare(conv, model=OTHER_MODEL)
    assert [e.reason for e in newer.report] == ["origin-mismatch"] * 3
    assert assistant_wires(dict(newer.body))[0]["tool_calls"][0]["extra_content"] == DUMMY
    go_through(emu, newer)
    older = prepare(conv, model=OLD_MODEL)
    assert b"extra_content" not in older.content
    go_through(emu, older)


def test_an_account_switch_and_an_unbound_history_go_out_unsealed(emu: GeminiOpenAIEmulator) -> None:
    conv = looped(emu)
    other = prepare(conv, account="key-B")
    assert {e.reason for e in other.report} == {"origin-mismatch"}
    # The same turns, their Opaque blocks still in them, without their bindings.
    unbound = conv.with_messages(
        [AssistantMessage.from_parts(list(m.parts)) if isinstance(m, AssistantMessage) else m for m in conv]
    )
    req = prepare(unbound)
    assert {e.reason for e in req.report} == {"unbound"}
    blocks = [b for m in conv if isinstance(m, AssistantMessage) for b in m.thinking if isinstance(b, Opaque)]
    assert blocks
    for signature in [json.loads(b.data) for b in blocks]:
        value = signature["extra_content"]["google"]["thought_signature"]
        assert value.encode() not in other.content
        assert value.encode() not in req.content


def test_gemini_and_gemini_openai_are_separate_origins(emu: GeminiOpenAIEmulator) -> None:
    conv = looped(emu)
    native = thinkseal.provider("gemini", account="key-A").prepare(conv, model=MODEL)
    assert {e.reason for e in native.report} == {"origin-mismatch"}
    assert b"thoughtSignature" in native.content  # only Gemini's dummy
    for message in conv:
        if isinstance(message, AssistantMessage):
            for block in message.thinking:
                if isinstance(block, Opaque):
                    value = json.loads(block.data)["extra_content"]["google"]["thought_signature"]
                    assert value.encode() not in native.content
    # And a native Gemini turn goes to gemini-openai without its signature.
    turn = AssistantMessage.from_parts([Opaque("gemini", '{"thoughtSignature":"R0VNSU5J"}'), ToolCall("c1", "f", {})])
    history = respond(start(), Origin("gemini", MODEL, "key-A"), turn).append(ToolMessage("ok", "c1"))
    body = prepare(history).content
    assert b"R0VNSU5J" not in body
    assert assistant_wires(json.loads(body))[0]["tool_calls"][0]["extra_content"] == DUMMY


def test_the_emulator_refuses_what_gemini_refuses(emu: GeminiOpenAIEmulator) -> None:
    """What a naive client sends: a tool loop's signature dropped (Gemini 3's
    rule), signatures swapped between calls, a stale one after a key rotation.
    The errors are Gemini's, in the compatibility layer's list."""
    looped(emu)
    second, third = (json.loads(r.raw) for r in emu.requests[1:3])
    stripped = json.loads(json.dumps(second))
    stripped["messages"][2]["tool_calls"][0].pop("extra_content")
    missing = MISSING.format(name="check_flight", position=2)
    assert _raw_error(emu, stripped) == [{"error": {"code": 400, "message": missing, "status": "INVALID_ARGUMENT"}}]
    moved = json.loads(json.dumps(third))
    turns = assistant_wires(moved)
    turns[0]["tool_calls"][0]["extra_content"], turns[1]["tool_calls"][0]["extra_content"] = (
        turns[1]["tool_calls"][0]["extra_content"],
        turns[0]["tool_calls"][0]["extra_content"],
    )
    assert _raw_error(emu, moved)[0]["error"]["message"] == CORRUPTED
    go_through_raw = sdk_create(emu.client("key-A"), third)  # as sent, it still verifies
    assert go_through_raw.choices
    emu.rotate_keys()
    assert _raw_error(emu, third)[0]["error"]["message"] == CORRUPTED
    with pytest.raises(openai.BadRequestError):  # the SDK reads the list body as an error too
        sdk_create(emu.client("key-A"), third)


def _raw_error(emu: GeminiOpenAIEmulator, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        emu.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer key-A"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400
    return json.loads(caught.value.read())


# -- tool pairing --------------------------------------------------------------------------------------


def test_tool_pairing(emu: GeminiOpenAIEmulator) -> None:
    emu.queue(Scripted(calls=[("check_flight", {"flight": "AA100"}), ("book_taxi", {"time": "10 AM"})]))
    reply = send(emu.client("key-A"), prepare(start()))
    first, second = reply.message.tool_calls
    # The second call left unanswered: it is not sent, and the turn goes unsealed.
    half = start().append(reply.message, ToolMessage(RESULTS[0], first.id), UserMessage("Skip the taxi."))
    req = prepare(half)
    assert [e.reason for e in req.report] == ["unpaired-tool-call"]
    (turn,) = assistant_wires(dict(req.body))
    assert [c["id"] for c in turn["tool_calls"]] == [first.id]
    assert turn["tool_calls"][0]["extra_content"] == DUMMY
    go_through(emu, req)
    # A stray result goes as user text.
    stray = start().append(UserMessage("x"), ToolMessage("late", "nobody"))
    assert prepare(stray).body["messages"][-1] == {"role": "user", "content": "[tool result for call nobody]\nlate"}
    # A naive request with the call unanswered is Gemini's pairing 400.
    naive = json.loads(prepare(start().append(reply.message, ToolMessage(RESULTS[0], first.id))).content)
    naive["messages"][2]["tool_calls"].append(
        {"id": second.id, "type": "function", "function": {"name": "book_taxi", "arguments": '{"time":"10 AM"}'}}
    )
    assert _raw_error(emu, naive)[0]["error"]["message"] == PAIRING


# -- options -------------------------------------------------------------------------------------------


def test_options_pass_through() -> None:
    options = {
        "reasoning_effort": "low",
        "max_completion_tokens": 500,
        "temperature": 1.0,
        "extra_body": {"google": {"cached_content": "cachedContents/abc"}},
        "service_tier": "flex",
    }
    body = prepare(start(), **options).body
    assert {k: body[k] for k in options} == options
    config = {"thinking_budget": 1024, "include_thoughts": True}
    body = prepare(start(), model=OLD_MODEL, extra_body={"google": {"thinking_config": config}}).body
    assert body["extra_body"]["google"]["thinking_config"] == config


@pytest.mark.parametrize(
    ("options", "model", "path", "message"),
    [
        ({"reasoning_effort": "xhigh"}, MODEL, "reasoning_effort", "expected one of"),
        ({"reasoning_effort": "none"}, MODEL, "reasoning_effort", "always think"),
        ({"reasoning_effort": "none"}, "gemini-2.5-pro", "reasoning_effort", "always think"),
        (
            {"reasoning_effort": "low", "extra_body": {"google": {"thinking_config": {"include_thoughts": True}}}},
            MODEL,
            "reasoning_effort",
            "cannot be used",
        ),
        (
            {"extra_body": {"google": {"thinking_config": {"thinking_level": "low", "thinking_budget": 1024}}}},
            MODEL,
            "extra_body.google.thinking_config.thinking_level",
            "You can only set only one of thinking budget and thinking level.",
        ),
        (
            {"extra_body": {"google": {"thinking_config": {"thinking_budget": 100}}}},
            "gemini-2.5-pro",
            "extra_body.google.thinking_config.thinking_budget",
            "The thinking budget (100) is invalid.",
        ),
        (
            {"extra_body": {"google": {"thinking_config": {"thinking_level": "ultra"}}}},
            MODEL,
            "extra_body.google.thinking_config.thinking_level",
            "expected one of",
        ),
        (
            {"extra_body": {"google": {"thinking_config": {"thinkingLevel": "low"}}}},
            MODEL,
            "extra_body.google.thinking_config.thinkingLevel",
            "thinking_level",
        ),
        (
            {"extra_body": {"google": {"thinking_config": {"include_thoughts": "yes"}}}},
            MODEL,
            "extra_body.google.thinking_config.include_thoughts",
            "boolean",
        ),
        ({"extra_body": {"google": "x"}}, MODEL, "extra_body.google", "object"),
        ({"extra_body": []}, MODEL, "extra_body", "object"),
        ({"max_tokens": 0}, MODEL, "max_tokens", ">= 1"),
        ({"temperature": 3}, MODEL, "temperature", "between"),
        ({"messages": []}, MODEL, "messages", "set by thinkseal"),
        ({"stream_options": {"include_usage": True}}, MODEL, "stream_options", "streaming"),
    ],
)
def test_option_rules(options: dict[str, Any], model: str, path: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        thinkseal.provider(ID).prepare(start(), model=model, **options)
    assert caught.value.path == path
    assert message in str(caught.value)


def test_reasoning_effort_none_where_thinking_can_be_turned_off() -> None:
    assert prepare(start(), model=OLD_MODEL, reasoning_effort="none").body["reasoning_effort"] == "none"


def test_response_formats_pass_through() -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "event", "schema": {"type": "object"}}}
    conv = Conversation([UserMessage("Extract.")], response_format=fmt)
    assert prepare(conv).body["response_format"] == fmt


# -- content parts -------------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


def test_content_parts() -> None:
    conv = Conversation(
        [UserMessage(["Look:", Image(data=PNG, media_type="image/png"), CacheBreakpoint(), "and this."])]
    )
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert prepare(conv).body["messages"][0]["content"] == [
        {"type": "text", "text": "Look:"},
        {"type": "image_url", "image_url": {"url": url}},
        {"type": "text", "text": "and this."},
    ]
    without = Conversation([UserMessage(["Look:", Image(data=PNG, media_type="image/png"), "and this."])])
    assert prepare(without).content == prepare(conv).content  # breakpoints are ignored


@pytest.mark.parametrize(
    ("message", "path", "text"),
    [
        (UserMessage(["x", Image(url="https://example.com/a.png", media_type="image/png")]), "content[1]", "bytes"),
        (UserMessage(["x", Image(data=b"GIF89a", media_type="image/gif")]), "content[1]", "image/gif"),
        (UserMessage(["x", Document(data=b"%PDF-1.4")]), "content[1]", "PDF"),
    ],
)
def test_parts_the_endpoint_cannot_take(message: UserMessage, path: str, text: str) -> None:
    with pytest.raises(ValidationError) as caught:
        thinkseal.provider(ID).prepare(Conversation([message]), model=MODEL)
    assert path in str(caught.value.path)
    assert text in str(caught.value)


def test_tool_results_take_text_only() -> None:
    call = ToolCall("c1", "check_flight", {"flight": "AA100"})
    conv = start().append(
        AssistantMessage(None, [call]), ToolMessage(["x", Image(data=PNG, media_type="image/png")], "c1")
    )
    with pytest.raises(ValidationError, match="text only"):
        thinkseal.provider(ID).prepare(conv, model=MODEL)


# -- malformed responses -------------------------------------------------------------------------------


def reply_of(message: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}]}


@pytest.mark.parametrize(
    ("response", "path"),
    [
        ({"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}, "$.error"),
        ({"choices": []}, "$.choices"),
        (reply_of({"content": 5}), "$.choices[0].message.content"),
        (reply_of({"content": "x", "extra_content": "sig"}), "$.choices[0].message.extra_content"),
        (
            reply_of({"content": "x", "extra_content": {"google": {"thought_signature": 7}}}),
            "$.choices[0].message.extra_content.google.thought_signature",
        ),
        (
            reply_of({"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}]}),
            "$.choices[0].message.tool_calls[0].function.arguments",
        ),
        (reply_of({"content": "x", "reasoning_content": 1}), "$.choices[0].message.reasoning_content"),
    ],
)
def test_malformed_responses(response: Any, path: str) -> None:
    with pytest.raises(ResponseError) as caught:
        prepare(start()).receive(response)
    assert caught.value.path == path


def test_a_malformed_stream_chunk_names_its_path() -> None:
    acc = prepare(start(), stream=True).stream()
    with pytest.raises(ResponseError) as caught:
        acc.feed({"choices": [{"index": 0, "delta": {"content": "x", "extra_content": []}}]})
    assert caught.value.path == "$.choices[0].delta.extra_content"
    with pytest.raises(ResponseError) as caught:
        prepare(start(), stream=True).stream().feed({"error": {"message": "quota"}})
    assert caught.value.path == "$.error"


def test_a_hand_made_opaque_block_that_is_not_the_adapters_shape_is_refused() -> None:
    turn = AssistantMessage.from_parts([Opaque(ID, '"just a string"'), "Hi."])
    conv = respond(start(), Origin(ID, MODEL, "key-A"), turn).append(UserMessage("Next"))
    with pytest.raises(ValidationError) as caught:
        thinkseal.provider(ID, account="key-A").prepare(conv, model=MODEL)
    assert caught.value.path == "AssistantMessage.parts[0].data"


# -- reaching it ---------------------------------------------------------------------------------------


def test_the_client_reaches_it_with_a_gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValidationError, match="GEMINI_API_KEY"):
        thinkseal.Client(ID)
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key")
    client = thinkseal.Client(ID)
    req = thinkseal.provider(ID).prepare(start(), model=MODEL)
    exchange = client._exchange
    url = exchange.url(req)
    assert url == "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"
    assert exchange.request_headers(req, url)["authorization"] == "Bearer g-key"
    assert thinkseal.provider(ID).connection.rejects_thinking("Corrupted thought signature.")
