"""The ``gemini`` and ``vertex-gemini`` adapters: request bodies, replies and
SSE streams, checked against the ``google-genai`` SDK's types, fixtures copied
from Google's documentation, and an emulated ``generateContent`` (both path
shapes) that signs thought signatures over model, account and prefix.

Fixtures (tests/providers/fixtures/gemini/) are the examples of
https://ai.google.dev/gemini-api/docs/thought-signatures (sequential and
parallel function calling, text signatures), wrapped as
``GenerateContentResponse`` bodies. The page writes its signatures as
placeholders (``<Signature A>``); the fixtures carry them as base64 text
(``base64("Signature A")``), since the field is base64 bytes on the wire. Its
parallel example spells the call's argument ``location`` in the reply and
``city`` in the follow-up request, and the signature field ``thought_signature``
there; the fixture follows the reply (a follow-up repeats the call as
received) and the REST spelling ``thoughtSignature``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Native,
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
    provider,
)
from thinkseal.providers.gemini import generated_call_id
from thinkseal.testing import respond
from thinkseal.testing.gemini import (
    CORRUPTED,
    MISSING,
    PAIRING,
    VERTEX_INVALID,
    VERTEX_MISSING,
    GeminiEmulator,
    sse_events,
)
from thinkseal.testing.gemini import Reply as Scripted

from .support import assert_recognised

FIXTURES = Path(__file__).parent / "fixtures" / "gemini"
MODEL = "gemini-3-pro-preview"
OTHER_MODEL = "gemini-3-flash-preview"
DUMMY = "skip_thought_signature_validator"
THINKING = {"thinkingConfig": {"thinkingLevel": "HIGH", "includeThoughts": True}}
Opaque = ThinkingBlock.Opaque
Text = ThinkingBlock.Text

CHECK_FLIGHT = Tool(
    "check_flight",
    "Gets the current status of a flight",
    {
        "type": "object",
        "properties": {"flight": {"type": "string", "description": "The flight number to check"}},
        "required": ["flight"],
    },
)
BOOK_TAXI = Tool(
    "book_taxi",
    "Book a taxi",
    {
        "type": "object",
        "properties": {"time": {"type": "string", "description": "time to book the taxi"}},
        "required": ["time"],
    },
)
TEMPERATURE = Tool(
    "get_current_temperature",
    "Gets the current temperature for a given location.",
    {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "The city name, e.g. San Francisco"}},
        "required": ["location"],
    },
)
QUESTION = "Check flight status for AA100 and book a taxi 2 hours before if delayed."
FLIGHT = '{"status": "delayed", "departure_time": "12 PM"}'
BOOKED = '{"booking_status": "success"}'


@dataclass(frozen=True)
class Service:
    id: str
    options: dict[str, Any] = field(default_factory=dict)

    def credentials(self, key: str) -> dict[str, str]:
        return {"x-goog-api-key": key} if self.id == "gemini" else {"authorization": f"Bearer {key}"}


GEMINI = Service("gemini")
VERTEX = Service("vertex-gemini", {"project": "test-project", "location": "us-central1"})
SERVICES = pytest.mark.parametrize("service", [GEMINI, VERTEX], ids=["gemini", "vertex-gemini"])


def thaw(value: Any) -> Any:
    """A mutable deep copy of a body (bodies share thinkseal's read-only values)."""
    return json.loads(json.dumps(value))


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def opaque_signature(signature: str, service: Service = GEMINI) -> ThinkingBlock.Opaque:
    return Opaque(service.id, json.dumps({"thoughtSignature": signature}, separators=(",", ":")))


def urlsafe(value: Any) -> Any:
    """``value`` with its base64 members in the SDK's JSON spelling (URL-safe),
    which is how the SDK writes bytes back."""
    if isinstance(value, dict):
        return {
            k: v.replace("+", "-").replace("/", "_") if k in ("thoughtSignature", "data") else urlsafe(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [urlsafe(v) for v in value]
    return value


def sdk_dump(model: Any, sent: Any) -> None:
    assert_recognised(urlsafe(thaw(sent)), model.model_dump(by_alias=True, exclude_none=True, mode="json"))


def check_wire(req: PreparedRequest) -> None:
    """The bytes decode to the body, and the SDK's types know every field of it."""
    body = req.body
    assert json.loads(req.content) == body
    for content in body["contents"]:
        sdk_dump(types.Content.model_validate(content), content)
    if "systemInstruction" in body:
        sdk_dump(types.Content.model_validate(body["systemInstruction"]), body["systemInstruction"])
    for tool in body.get("tools", []):
        sdk_dump(types.Tool.model_validate(tool), tool)
    if "generationConfig" in body:
        sent = thaw(body["generationConfig"])
        level = (sent.get("thinkingConfig") or {}).get("thinkingLevel")
        if level is not None:
            sent["thinkingConfig"]["thinkingLevel"] = level.upper()  # the SDK's enum spelling
        sdk_dump(types.GenerationConfig.model_validate(sent), sent)
    for name in ("project", "location", "model", "stream"):
        assert name not in body


def prepare(
    service: Service, conv: Conversation, model: str = MODEL, account: str | None = "key-A", **options: Any
) -> PreparedRequest:
    req = provider(service.id, account=account).prepare(conv, model=model, **service.options, **options)
    check_wire(req)
    return req


def post(url: str, req: PreparedRequest, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url + req.path, data=req.content, headers={**req.headers, **headers}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            raw = answer.read()
            if answer.headers.get("content-type", "").startswith("text/event-stream"):
                return answer.status, sse_events(raw)
            return answer.status, json.loads(raw)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


@pytest.fixture
def emulator() -> Iterator[GeminiEmulator]:
    server = GeminiEmulator()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Client:
    """Sends prepared requests to the emulator as one account, and reads the replies."""

    emulator: GeminiEmulator
    service: Service
    key: str = "key-A"

    def send(
        self, conv: Conversation, model: str = MODEL, stream: bool = False, **options: Any
    ) -> tuple[PreparedRequest, Reply]:
        req = prepare(self.service, conv, model, account=self.key, stream=stream, **options)
        status, payload = post(self.emulator.base_url, req, self.service.credentials(self.key))
        assert status == 200, payload
        if not stream:
            return req, req.parse(payload)
        acc = req.stream()
        for event in payload:
            acc.feed(event)
        return req, acc.reply

    def refused(self, req: PreparedRequest, body: Any = None, model: str | None = None) -> str:
        """The 400 message the emulator answers ``body`` (default: the request's) with."""
        content = json.dumps(req.body if body is None else body).encode()
        path = req.path if model is None else req.path.replace(MODEL, model)
        request = urllib.request.Request(
            self.emulator.base_url + path,
            data=content,
            headers={**req.headers, **self.service.credentials(self.key)},
            method="POST",
        )
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=10)
        error = json.loads(caught.value.read())["error"]
        assert (caught.value.code, error["code"], error["status"]) == (400, 400, "INVALID_ARGUMENT")
        message: str = error["message"]
        return message


def start(system: str = "You book travel.") -> Conversation:
    return Conversation([SystemMessage(system), UserMessage(QUESTION)], tools=[CHECK_FLIGHT, BOOK_TAXI])


def script(emulator: GeminiEmulator) -> None:
    emulator.queue(
        Scripted(thought="Check the flight first.", calls=[("check_flight", {"flight": "AA100"})]),
        Scripted(thought="It is delayed: book the taxi.", calls=[("book_taxi", {"time": "10 AM"})]),
        Scripted(thought="Both done.", text="Your flight is delayed; a taxi is booked for 10 AM."),
    )


def tool_loop(client: Client, stream: bool) -> tuple[Conversation, list[PreparedRequest], list[Reply]]:
    """The three-step loop: check_flight, book_taxi, the answer."""
    script(client.emulator)
    conv = start()
    requests: list[PreparedRequest] = []
    replies: list[Reply] = []
    for result in (FLIGHT, BOOKED, None):
        req, reply = client.send(conv, stream=stream, generationConfig=THINKING)
        requests.append(req)
        replies.append(reply)
        conv = conv.append(reply.message)
        if result is not None:
            conv = conv.append(ToolMessage(result, reply.message.tool_calls[0].id))
    return conv, requests, replies


def signature_of(turn: Any) -> str:
    assert isinstance(turn, AssistantMessage)
    blocks = [b for b in turn.thinking if isinstance(b, ThinkingBlock.Opaque)]
    assert len(blocks) == 1
    signature: str = json.loads(blocks[0].data)["thoughtSignature"]
    return signature


# -- the full loop -----------------------------------------------------------------------


@SERVICES
def test_three_step_tool_loop_with_exact_bodies(emulator: GeminiEmulator, service: Service) -> None:
    conv, requests, replies = tool_loop(Client(emulator, service), stream=False)
    first = requests[0]
    if service is GEMINI:
        assert first.path == f"/v1beta/models/{MODEL}:generateContent"
    else:
        assert first.path == (
            f"/v1/projects/test-project/locations/us-central1/publishers/google/models/{MODEL}:generateContent"
        )
    assert first.headers == {"content-type": "application/json"}
    assert first.origin == Origin(service.id, MODEL, "key-A")
    assert first.body == {
        "contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
        "systemInstruction": {"parts": [{"text": "You book travel."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
                    for t in (CHECK_FLIGHT, BOOK_TAXI)
                ]
            }
        ],
        "generationConfig": THINKING,
    }
    step1, step2, answer = (r.message for r in replies)
    call1 = step1.tool_calls[0]
    sig1, sig2, sig3 = signature_of(step1), signature_of(step2), signature_of(answer)
    # Each turn as received: the thought summary, then the signature on its own part.
    assert step1.parts == (Text("Check the flight first."), opaque_signature(sig1, service), call1)
    assert answer.parts == (
        Text("Both done."),
        opaque_signature(sig3, service),
        "Your flight is delayed; a taxi is booked for 10 AM.",
    )
    assert call1 == ToolCall(
        generated_call_id("Check the flight first.", "", 0, "check_flight", '{"flight":"AA100"}'),
        "check_flight",
        {"flight": "AA100"},
    )
    assert all(r.message.thinking_binding is not None for r in replies)
    assert requests[2].body["contents"] == [
        {"role": "user", "parts": [{"text": QUESTION}]},
        {
            "role": "model",
            "parts": [
                {"text": "Check the flight first.", "thought": True},
                {"functionCall": {"name": "check_flight", "args": {"flight": "AA100"}}, "thoughtSignature": sig1},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "check_flight",
                        "response": {"status": "delayed", "departure_time": "12 PM"},
                    }
                }
            ],
        },
        {
            "role": "model",
            "parts": [
                {"text": "It is delayed: book the taxi.", "thought": True},
                {"functionCall": {"name": "book_taxi", "args": {"time": "10 AM"}}, "thoughtSignature": sig2},
            ],
        },
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "book_taxi", "response": {"booking_status": "success"}}}],
        },
    ]
    assert [(e.index, e.reason) for e in requests[2].report] == [(2, "kept"), (4, "kept")]
    # Reply metadata, from usageMetadata and the candidate.
    assert replies[2].stop_reason == "STOP"
    assert replies[2].usage.input_tokens == 12
    assert replies[2].usage.output_tokens == 37  # candidates + thoughts
    assert replies[2].usage.reasoning_tokens == 30
    assert replies[2].model == MODEL
    assert replies[2].id == "resp-3"
    # The next question goes through with every turn kept.
    emulator.queue(Scripted(text="You're welcome."))
    req, reply = Client(emulator, service).send(conv.append(UserMessage("Thanks!")), generationConfig=THINKING)
    assert req.report.kept_count == 3
    assert reply.message.content == "You're welcome."


@SERVICES
def test_streamed_loop_equals_whole_loop(emulator: GeminiEmulator, service: Service) -> None:
    whole, whole_requests, whole_replies = tool_loop(Client(emulator, service), stream=False)
    streamed, stream_requests, stream_replies = tool_loop(Client(emulator, service), stream=True)
    assert streamed == whole  # messages, signatures and bindings
    assert [r.content for r in stream_requests] == [r.content for r in whole_requests]
    # The same replies (the emulator numbers its responses, so the ids differ).
    assert [(r.message, r.stop_reason, r.usage, r.model) for r in stream_replies] == [
        (r.message, r.stop_reason, r.usage, r.model) for r in whole_replies
    ]
    assert stream_requests[0].path.endswith(":streamGenerateContent?alt=sse")
    # The answer's signature came in a last chunk with empty text; it sits on the text part.
    answer = streamed[-1]
    assert isinstance(answer, AssistantMessage)
    assert isinstance(answer.parts[1], ThinkingBlock.Opaque)
    assert answer.parts[2] == answer.content


@SERVICES
def test_stream_deltas_and_partial(emulator: GeminiEmulator, service: Service) -> None:
    emulator.queue(
        Scripted(
            thought="Think it over.", text="A fairly long answer text.", calls=[("check_flight", {"flight": "AA100"})]
        )
    )
    client = Client(emulator, service)
    req = prepare(service, start(), stream=True, generationConfig=THINKING)
    status, events = post(emulator.base_url, req, service.credentials("key-A"))
    assert status == 200
    acc = req.stream()
    deltas = [d for e in events for d in acc.feed(e)]
    assert "".join(d.text for d in deltas if isinstance(d, ThinkingDelta)) == "Think it over."
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "A fairly long answer text."
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert calls == [ToolCallDelta(0, None, "check_flight", '{"flight":"AA100"}')]
    assert acc.finish().tool_calls[0].name == "check_flight"
    # Cut before its finishReason: finish raises, partial holds the text and calls, unsealed.
    emulator.queue(Scripted(thought="Hmm.", text="Half an answer", cut=True))
    req = prepare(service, start(), stream=True, generationConfig=THINKING)
    _, events = post(emulator.base_url, req, service.credentials("key-A"))
    acc = req.stream()
    for event in events:
        acc.feed(event)
    with pytest.raises(ResponseError, match="finishReason") as caught:
        acc.finish()
    assert caught.value.path == "$.candidates[0].finishReason"
    assert acc.partial() == AssistantMessage("Half an answer")
    del client


# -- Google's documented examples ------------------------------------------------------------


def test_documented_sequential_example_round_trip() -> None:
    conv = Conversation([UserMessage(QUESTION)], tools=[CHECK_FLIGHT, BOOK_TAXI])
    req = prepare(GEMINI, conv)
    documented = load("sequential_step1_request.json")
    for declaration in documented["tools"][0]["functionDeclarations"]:
        declaration["parametersJsonSchema"] = declaration.pop("parameters")  # JSON Schema, its own field
    assert req.body == documented
    step1 = load("sequential_step1_response.json")
    types.GenerateContentResponse.model_validate(step1)
    reply = req.receive(step1)
    assert reply.parts[0] == opaque_signature("U2lnbmF0dXJlIEE=")
    conv = conv.append(reply, ToolMessage(FLIGHT, reply.tool_calls[0].id))
    req = prepare(GEMINI, conv)
    assert req.body["contents"] == load("sequential_step3_contents.json")[:3]
    reply = req.receive(load("sequential_step2_response.json"))
    conv = conv.append(reply, ToolMessage(BOOKED, reply.tool_calls[0].id))
    req = prepare(GEMINI, conv)
    assert req.body["contents"] == load("sequential_step3_contents.json")
    assert [e.reason for e in req.report] == ["kept", "kept"]


def test_documented_parallel_example_round_trip() -> None:
    conv = Conversation([UserMessage("Check the weather in Paris and London.")], tools=[TEMPERATURE])
    req = prepare(GEMINI, conv)
    reply = req.receive(load("parallel_step1_response.json"))
    paris, london = reply.tool_calls
    assert paris.id != london.id
    # Results appended in another order still go back in call order, after both calls.
    conv = conv.append(reply, ToolMessage('{"temp": "12C"}', london.id), ToolMessage('{"temp": "15C"}', paris.id))
    assert prepare(GEMINI, conv).body["contents"] == load("parallel_step2_contents.json")


def test_documented_text_signature_stays_on_its_text_part() -> None:
    conv = Conversation([UserMessage("What is the risk?")])
    req = prepare(GEMINI, conv)
    reply = req.receive(load("text_signature_response.json"))
    text = "I need to calculate the risk. Let me think step-by-step..."
    assert reply.parts == (opaque_signature("U2lnbmF0dXJlX0M="), text)
    conv = conv.append(reply, UserMessage("Summarize it."))
    kept = prepare(GEMINI, conv).body["contents"][1]
    assert kept == {"role": "model", "parts": [{"text": text, "thoughtSignature": "U2lnbmF0dXJlX0M="}]}
    # Unsealed (another model), the text stays and the signature goes.
    other = prepare(GEMINI, conv, model=OTHER_MODEL).body["contents"][1]
    assert other == {"role": "model", "parts": [{"text": text}]}


@pytest.mark.parametrize(
    "name",
    [
        "sequential_step1_response.json",
        "sequential_step2_response.json",
        "parallel_step1_response.json",
        "text_signature_response.json",
    ],
)
def test_fixtures_parse_with_the_sdk_and_from_its_dump(name: str) -> None:
    raw = load(name)
    parsed = types.GenerateContentResponse.model_validate(raw)
    req = prepare(GEMINI, Conversation([UserMessage("q")], tools=[CHECK_FLIGHT, BOOK_TAXI, TEMPERATURE]))
    assert req.parse(parsed.model_dump()) == req.parse(raw)
    assert req.parse(parsed.model_dump(mode="json")) == req.parse(raw)


# -- unsealing ------------------------------------------------------------------------------


def looped(emulator: GeminiEmulator, service: Service) -> tuple[Conversation, Client]:
    client = Client(emulator, service)
    conv, _, _ = tool_loop(client, stream=False)
    return conv.append(UserMessage("And the hotel?")), client


@SERVICES
def test_a_changed_system_prompt_unseals_every_turn(emulator: GeminiEmulator, service: Service) -> None:
    conv, client = looped(emulator, service)
    kept = prepare(service, conv, generationConfig=THINKING)
    changed = conv.with_messages([SystemMessage("You book hotels."), *conv.messages[1:]])
    req = prepare(service, changed, generationConfig=THINKING)
    assert [e.reason for e in req.report] == ["prefix-changed"] * 3
    for turn in (conv[2], conv[4], conv[6]):
        assert signature_of(turn) not in req.content.decode()
    emulator.queue(Scripted(text="Done."))
    assert client.send(changed, generationConfig=THINKING)[1].message.content == "Done."
    # A naive client that keeps the signatures is refused.
    naive = thaw(kept.body)
    naive["systemInstruction"] = {"parts": [{"text": "You book hotels."}]}
    assert client.refused(kept, naive) == (CORRUPTED if service is GEMINI else VERTEX_INVALID)


@SERVICES
def test_an_edit_unseals_the_turns_after_it_only(emulator: GeminiEmulator, service: Service) -> None:
    conv, client = looped(emulator, service)
    emulator.queue(Scripted(thought="Look it up.", text="The Ritz."))
    _, reply = client.send(conv, generationConfig=THINKING)
    conv = conv.append(reply.message, UserMessage("Thanks"))
    assert [e.reason for e in prepare(service, conv).report] == ["kept"] * 4
    edited = conv.with_messages([*conv.messages[:7], UserMessage("And a hotel near the airport?"), *conv.messages[8:]])
    req = prepare(service, edited)
    assert [(e.index, e.reason) for e in req.report] == [(2, "kept"), (4, "kept"), (6, "kept"), (8, "prefix-changed")]
    wire = req.content.decode()
    assert all(signature_of(edited[i]) in wire for i in (2, 4, 6))
    assert signature_of(edited[8]) not in wire
    emulator.queue(Scripted(text="Done."))
    assert client.send(edited)[1].message.content == "Done."


@SERVICES
def test_pruning_unseals_the_turns_after_the_cut(emulator: GeminiEmulator, service: Service) -> None:
    conv, client = looped(emulator, service)
    pruned = conv.with_messages(
        [conv[0], UserMessage("Summary: flight AA100 delayed, taxi booked."), *conv.messages[7:]]
    )
    emulator.queue(Scripted(text="Noted."))
    req, reply = client.send(pruned)
    assert [e.reason for e in req.report] == []
    assert reply.message.content == "Noted."
    # Pruning the middle of the loop's history instead: the first step stays, the rest go unsealed.
    middle = conv.with_messages([*conv.messages[:4], *conv.messages[6:]])  # the second step and its result dropped
    req = prepare(service, middle)
    assert [(e.index, e.reason) for e in req.report] == [(2, "kept"), (4, "prefix-changed")]
    emulator.queue(Scripted(text="Noted."))
    assert client.send(middle)[1].message.content == "Noted."


@SERVICES
def test_a_model_switch_unseals_and_the_current_loop_gets_the_dummy(emulator: GeminiEmulator, service: Service) -> None:
    client = Client(emulator, service)
    script(emulator)
    conv = start()
    req, reply = client.send(conv, generationConfig=THINKING)
    conv = conv.append(reply.message, ToolMessage(FLIGHT, reply.message.tool_calls[0].id))
    # Continue the loop with another model: the turn goes unsealed, its call with the documented dummy.
    req = prepare(service, conv, model=OTHER_MODEL)
    assert [e.reason for e in req.report] == ["origin-mismatch"]
    assert req.body["contents"][1] == {
        "role": "model",
        "parts": [{"functionCall": {"name": "check_flight", "args": {"flight": "AA100"}}, "thoughtSignature": DUMMY}],
    }
    emulator.clear_script()
    emulator.queue(Scripted(text="Booked."))
    assert client.send(conv, model=OTHER_MODEL)[1].message.content == "Booked."
    # The naive client: the real signature to another model is refused, and none at all too.
    kept = prepare(service, conv)
    wrong = CORRUPTED if service is GEMINI else VERTEX_INVALID
    assert client.refused(kept, model=OTHER_MODEL) == wrong
    stripped = thaw(kept.body)
    for part in stripped["contents"][1]["parts"]:
        part.pop("thoughtSignature", None)
    missing = (MISSING if service is GEMINI else VERTEX_MISSING).format(name="check_flight", position=2)
    assert client.refused(kept, stripped) == missing
    # A Gemini 2.5 model does not enforce the rule, and gets no dummy.
    lax = prepare(service, conv, model="gemini-2.5-flash")
    assert all("thoughtSignature" not in part for part in lax.body["contents"][1]["parts"])
    emulator.queue(Scripted(text="Booked."))
    assert client.send(conv, model="gemini-2.5-flash")[1].message.content == "Booked."


@SERVICES
def test_an_account_switch_unseals(emulator: GeminiEmulator, service: Service) -> None:
    conv, _ = looped(emulator, service)
    kept = prepare(service, conv)
    other = Client(emulator, service, key="key-B")
    req = prepare(service, conv, account="key-B")
    assert [e.reason for e in req.report] == ["origin-mismatch"] * 3
    # Every step's first call goes with the dummy; the answer with no signature at all.
    signed = [[p.get("thoughtSignature") for p in c["parts"]] for c in req.body["contents"] if c["role"] == "model"]
    assert signed == [[DUMMY], [DUMMY], [None]]
    emulator.queue(Scripted(text="Done."))
    assert other.send(conv)[1].message.content == "Done."
    assert other.refused(kept) == (CORRUPTED if service is GEMINI else VERTEX_INVALID)


@SERVICES
def test_a_moved_signature_is_refused(emulator: GeminiEmulator, service: Service) -> None:
    conv, client = looped(emulator, service)
    kept = prepare(service, conv)
    moved = thaw(kept.body)
    parts = moved["contents"][1]["parts"]  # [thought, signed call]
    parts[0]["thoughtSignature"] = parts[1].pop("thoughtSignature")
    parts[1]["thoughtSignature"] = DUMMY  # the call itself still carries something
    assert client.refused(kept, moved) == (CORRUPTED if service is GEMINI else VERTEX_INVALID)


def test_gemini_and_vertex_are_separate_origins(emulator: GeminiEmulator) -> None:
    conv, _ = looped(emulator, GEMINI)
    req = prepare(VERTEX, conv)
    assert [e.reason for e in req.report] == ["origin-mismatch"] * 3
    assert not any(signature_of(conv[i]) in req.content.decode() for i in (2, 4, 6))
    emulator.queue(Scripted(text="Done."))
    assert Client(emulator, VERTEX).send(conv)[1].message.content == "Done."


def test_foreign_history_gets_the_dummy_on_the_first_call_of_each_step_only() -> None:
    claude = Origin("anthropic", "claude-sonnet-4-5")
    signed = Text("Two cities.", signature="EqQB")
    turn = AssistantMessage(
        "Checking both.",
        [
            ToolCall("toolu_1", "get_current_temperature", {"location": "Paris"}),
            ToolCall("toolu_2", "get_current_temperature", {"location": "London"}),
        ],
        [signed],
    )
    conv = respond(Conversation([UserMessage("Weather?")], [TEMPERATURE]), claude, turn)
    conv = conv.append(ToolMessage("15C", "toolu_1"), ToolMessage("12C", "toolu_2"))
    body = prepare(GEMINI, conv).body
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "Checking both."},
                {
                    "functionCall": {"id": "toolu_1", "name": "get_current_temperature", "args": {"location": "Paris"}},
                    "thoughtSignature": DUMMY,
                },
                {"functionCall": {"id": "toolu_2", "name": "get_current_temperature", "args": {"location": "London"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "toolu_1",
                        "name": "get_current_temperature",
                        "response": {"output": "15C"},
                    }
                },
                {
                    "functionResponse": {
                        "id": "toolu_2",
                        "name": "get_current_temperature",
                        "response": {"output": "12C"},
                    }
                },
            ],
        },
    ]
    assert "EqQB" not in prepare(GEMINI, conv).content.decode()


def test_ids_given_by_gemini_are_kept_and_sent_back(emulator: GeminiEmulator) -> None:
    emulator.queue(Scripted(calls=[("check_flight", {"flight": "AA100"}), ("book_taxi", {"time": "10 AM"})], ids=True))
    client = Client(emulator, GEMINI)
    _, reply = client.send(start())
    assert [c.id for c in reply.message.tool_calls] == ["call-1-0", "call-1-1"]
    conv = start().append(reply.message, ToolMessage(BOOKED, "call-1-1"), ToolMessage(FLIGHT, "call-1-0"))
    req = prepare(GEMINI, conv)
    assert [p["functionResponse"]["id"] for p in req.body["contents"][2]["parts"]] == ["call-1-0", "call-1-1"]
    assert [p["functionCall"]["id"] for p in req.body["contents"][1]["parts"]] == ["call-1-0", "call-1-1"]
    emulator.queue(Scripted(text="Done."))
    assert client.send(conv)[1].message.content == "Done."


def test_the_emulator_checks_pairing(emulator: GeminiEmulator) -> None:
    conv, client = looped(emulator, GEMINI)
    kept = prepare(GEMINI, conv)
    broken = thaw(kept.body)
    del broken["contents"][2]["parts"][0]
    broken["contents"][2]["parts"].append({"text": "no result"})
    assert client.refused(kept, broken) == PAIRING


# -- content parts --------------------------------------------------------------------------


PNG = b"\x89PNG\r\n\x1a\nfake"
PDF = b"%PDF-1.7 fake"


def test_content_parts() -> None:
    look = UserMessage(
        [
            "What is in these?",
            Image(PNG, "image/png"),
            Image(url="https://example.com/a.jpg", media_type="image/jpeg"),
            Document(PDF),
            Document(url="https://example.com/r.pdf", title="Report"),
            Document(text="plain notes", title="Notes"),
            Native.of("gemini", {"executableCode": {"language": "PYTHON", "code": "print(1)"}}),
            Native.of("anthropic", {"type": "search_result"}, text="cited text"),
            Native.of("anthropic", {"type": "other"}),
        ]
    )
    body = prepare(GEMINI, Conversation([SystemMessage(["Rule one.", CacheBreakpoint(), "Rule two."]), look])).body
    assert body["systemInstruction"] == {"parts": [{"text": "Rule one."}, {"text": "Rule two."}]}
    assert body["contents"][0]["parts"] == [
        {"text": "What is in these?"},
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgpmYWtl"}},
        {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://example.com/a.jpg"}},
        {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0xLjcgZmFrZQ=="}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/r.pdf"}},
        {"text": "plain notes"},
        {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
        {"text": "cited text"},
    ]
    # The other Gemini service gets the gemini native block as nothing (it is not its own).
    assert len(prepare(VERTEX, Conversation([look])).body["contents"][0]["parts"]) == 7


@SERVICES
def test_cache_breakpoints_are_ignored(service: Service) -> None:
    plain = Conversation(
        [SystemMessage("Be brief."), UserMessage(["Hi", Image(PNG, "image/png")])], tools=[CHECK_FLIGHT]
    )
    marked = Conversation(
        [
            SystemMessage(["Be brief.", CacheBreakpoint()]),
            UserMessage(["Hi", CacheBreakpoint("1h"), Image(PNG, "image/png"), CacheBreakpoint()]),
        ],
        tools=[Tool(CHECK_FLIGHT.name, CHECK_FLIGHT.description, CHECK_FLIGHT.parameters, cache=CacheBreakpoint())],
    )
    assert prepare(service, plain).content == prepare(service, marked).content


@pytest.mark.parametrize(
    ("part", "path", "message"),
    [
        (Image(b"GIF89a", "image/gif"), "Conversation.messages[0].content", "not image/gif"),
        (Image(url="https://example.com/a.png"), "Conversation.messages[0].content[1].media_type", "MIME type"),
    ],
)
def test_parts_gemini_cannot_take(part: Any, path: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message) as caught:
        prepare(GEMINI, Conversation([UserMessage(["Look", part])]))
    assert caught.value.path == path


def test_tool_results() -> None:
    turn = AssistantMessage(None, [ToolCall("c1", "shot", {}), ToolCall("c2", "read", {}), ToolCall("c3", "fail", {})])
    conv = Conversation([UserMessage("go")], [Tool("shot"), Tool("read"), Tool("fail")]).append(
        turn,
        ToolMessage(["Screenshot:", Image(PNG, "image/png")], "c1"),
        ToolMessage([Document(PDF)], "c2"),
        ToolMessage("disk full", "c3", is_error=True),
    )
    assert prepare(GEMINI, conv).body["contents"][2]["parts"] == [
        {
            "functionResponse": {
                "id": "c1",
                "name": "shot",
                "response": {"output": "Screenshot:"},
                "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgpmYWtl"}}],
            }
        },
        {
            "functionResponse": {
                "id": "c2",
                "name": "read",
                "response": {},
                "parts": [{"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0xLjcgZmFrZQ=="}}],
            }
        },
        {"functionResponse": {"id": "c3", "name": "fail", "response": {"error": "disk full"}}},
    ]
    by_url = conv.with_messages(
        [*conv.messages[:2], ToolMessage([Image(url="https://example.com/s.png")], "c1"), *conv.messages[3:]]
    )
    with pytest.raises(ValidationError, match="inline data only") as caught:
        prepare(GEMINI, by_url)
    assert caught.value.path == "Conversation.messages[2].content"


def test_a_stray_result_and_an_empty_turn() -> None:
    conv = Conversation([UserMessage("go")], [Tool("f")]).append(
        AssistantMessage(None, [], [Text("only thinking, from elsewhere")]),
        ToolMessage("late", "nobody"),
        UserMessage("next"),
    )
    assert prepare(GEMINI, conv).body["contents"] == [
        {"role": "user", "parts": [{"text": "go"}, {"text": "[tool result for call nobody]\nlate"}, {"text": "next"}]}
    ]


# -- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "path", "message"),
    [
        (
            {"generationConfig": {"thinkingConfig": {"thinkingBudget": 1024, "thinkingLevel": "low"}}},
            "generationConfig.thinkingConfig.thinkingLevel",
            "You can only set only one of thinking budget and thinking level.",
        ),
        (
            {"generationConfig": {"thinkingConfig": {"thinkingLevel": "extreme"}}},
            "generationConfig.thinkingConfig.thinkingLevel",
            "expected one of",
        ),
        (
            {"generationConfig": {"thinkingConfig": {"thinking_budget": 10}}},
            "generationConfig.thinkingConfig.thinking_budget",
            "thinkingBudget",
        ),
        ({"generation_config": {}}, "generation_config", "generationConfig"),
        ({"generationConfig": {"responseJsonSchema": {}}}, "generationConfig.responseJsonSchema", "response_format"),
        ({"generationConfig": {"temperature": 3}}, "generationConfig.temperature", "between 0 and 2"),
        ({"contents": []}, "contents", "set by thinkseal"),
        ({"systemInstruction": {}}, "systemInstruction", "SystemMessage"),
        ({"tools": []}, "tools", "set by thinkseal"),
    ],
)
@SERVICES
def test_option_rules(service: Service, options: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        provider(service.id).prepare(start(), model=MODEL, **service.options, **options)
    assert caught.value.path == path
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("model", "budget", "ok"),
    [
        ("gemini-2.5-pro", 0, False),
        ("gemini-2.5-pro", 128, True),
        ("gemini-2.5-flash", 0, True),
        ("gemini-2.5-flash", 24577, False),
        ("gemini-2.5-flash-lite", 100, False),
        ("gemini-2.5-flash-lite", -1, True),
        ("gemini-3-pro-preview", 50000, True),
    ],
)
def test_thinking_budgets(model: str, budget: int, ok: bool) -> None:
    options = {"generationConfig": {"thinkingConfig": {"thinkingBudget": budget}}}
    if ok:
        prepare(GEMINI, start(), model=model, **options)
    else:
        with pytest.raises(ValidationError, match=rf"^The thinking budget \({budget}\) is invalid\.$"):
            prepare(GEMINI, start(), model=model, **options)


def test_vertex_rules() -> None:
    vertex = provider("vertex-gemini")
    with pytest.raises(ValidationError, match="required by vertex-gemini") as caught:
        vertex.prepare(start(), model=MODEL, location="global")
    assert caught.value.path == "project"
    with pytest.raises(ValidationError) as caught:
        vertex.prepare(start(), model=MODEL, project="p", location="us central")
    assert caught.value.path == "location"
    with pytest.raises(ValidationError, match="include_thoughts is only enabled when thinking is enabled"):
        vertex.prepare(
            start(),
            model="gemini-2.5-flash",
            project="p",
            location="global",
            generationConfig={"thinkingConfig": {"thinkingBudget": 0, "includeThoughts": True}},
        )
    req = vertex.prepare(start(), model=MODEL, project="p", location="global", stream=True)
    assert req.path == f"/v1/projects/p/locations/global/publishers/google/models/{MODEL}:streamGenerateContent?alt=sse"
    # The Gemini API allows it (no such documented rule).
    provider("gemini").prepare(
        start(),
        model="gemini-2.5-flash",
        generationConfig={"thinkingConfig": {"thinkingBudget": 0, "includeThoughts": True}},
    )


@SERVICES
def test_response_format(service: Service) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    conv = start().with_response_format({"type": "json_schema", "json_schema": {"name": "a", "schema": schema}})
    body = prepare(service, conv, generationConfig={"temperature": 0.2}).body
    assert body["generationConfig"] == {
        "temperature": 0.2,
        "responseMimeType": "application/json",
        "responseJsonSchema": schema,
    }
    assert prepare(service, start().with_response_format({"type": "json_object"})).body["generationConfig"] == {
        "responseMimeType": "application/json"
    }
    assert "generationConfig" not in prepare(service, start().with_response_format({"type": "text"})).body
    with pytest.raises(ValidationError, match="give one"):
        prepare(service, conv, generationConfig={"responseMimeType": "text/plain"})


# -- replies ------------------------------------------------------------------------------------


def reply_of(*parts: dict[str, Any], **candidate: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": list(parts)}, "finishReason": "STOP", **candidate}]}


def test_replies_keep_other_parts_and_empty_signed_parts() -> None:
    req = prepare(GEMINI, start())
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}, "thoughtSignature": "c2ln"}
    reply = req.receive(reply_of(code, {"text": "1"}, {"text": "", "thoughtSignature": "ZW5k"}))
    assert reply.parts == (
        opaque_signature("c2ln"),
        Native("gemini", '{"executableCode":{"code":"print(1)","language":"PYTHON"}}'),
        "1",
        Opaque("gemini", '{"text":"","thoughtSignature":"ZW5k"}'),
    )
    conv = start().append(reply, UserMessage("again"))
    assert prepare(GEMINI, conv).body["contents"][1]["parts"] == [
        {"executableCode": {"code": "print(1)", "language": "PYTHON"}, "thoughtSignature": "c2ln"},
        {"text": "1"},
        {"text": "", "thoughtSignature": "ZW5k"},
    ]
    # Another model: the native part, the model's own data like its signatures, is withheld too.
    assert prepare(GEMINI, conv, model=OTHER_MODEL).body["contents"][1]["parts"] == [{"text": "1"}]


@pytest.mark.parametrize(
    ("response", "path"),
    [
        ({"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}, "$.error"),
        ({"promptFeedback": {"blockReason": "SAFETY"}}, "$.candidates"),
        (reply_of({"functionCall": {"args": {}}}), "$.candidates[0].content.parts[0].functionCall.name"),
        (reply_of({"text": 5}), "$.candidates[0].content.parts[0].text"),
        (
            reply_of({"text": "x", "thoughtSignature": "not base64!"}),
            "$.candidates[0].content.parts[0].thoughtSignature",
        ),
        ({"candidates": [{"content": {"role": "user", "parts": []}}]}, "$.candidates[0].content.role"),
        ("not an object", "$"),
    ],
)
def test_malformed_responses(response: Any, path: str) -> None:
    req = prepare(GEMINI, start())
    with pytest.raises(ResponseError) as caught:
        req.receive(response)
    assert caught.value.path == path


def test_blocked_prompt_names_its_reason() -> None:
    with pytest.raises(ResponseError, match="SAFETY"):
        prepare(GEMINI, start()).receive({"promptFeedback": {"blockReason": "SAFETY"}})


def test_reply_info_and_the_sdk_dump() -> None:
    response = reply_of({"text": "hi"}) | {
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 2,
            "cachedContentTokenCount": 4,
            "thoughtsTokenCount": 5,
        },
        "responseId": "r-1",
        "modelVersion": "gemini-3-pro-preview-001",
    }
    req = prepare(GEMINI, start())
    reply = req.parse(response)
    assert (reply.stop_reason, reply.id, reply.model) == ("STOP", "r-1", "gemini-3-pro-preview-001")
    assert (
        reply.usage.input_tokens,
        reply.usage.output_tokens,
        reply.usage.cache_read_tokens,
        reply.usage.reasoning_tokens,
    ) == (10, 7, 4, 5)
    assert reply.usage.cache_write_tokens is None
    assert req.parse(types.GenerateContentResponse.model_validate(response).model_dump()) == reply


def test_stream_errors() -> None:
    req = prepare(GEMINI, start(), stream=True)
    acc = req.stream()
    with pytest.raises(ResponseError) as caught:
        acc.feed({"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}})
    assert caught.value.path == "$.error"
    acc = req.stream()
    acc.feed(reply_of({"text": "done"}))
    with pytest.raises(ResponseError, match="after the chunk that finished"):
        acc.feed(reply_of({"text": "more"}))
    acc = req.stream()
    acc.feed({"candidates": [{"content": {"role": "model", "parts": [{"text": "a"}]}}]})
    acc.feed({"candidates": [{"finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 1}})
    assert acc.finish() == AssistantMessage("a")
    assert acc.reply.usage.input_tokens == 1
    with pytest.raises(ValidationError):
        acc.feed({})


# -- the official SDK -----------------------------------------------------------------------


def test_the_sdk_sends_thinkseals_contents_through_the_emulator(emulator: GeminiEmulator) -> None:
    """The contents thinkseal builds, handed to ``google-genai``'s client (which
    writes its own JSON, signatures re-encoded), are accepted as they are."""
    conv, _ = looped(emulator, GEMINI)
    req = prepare(GEMINI, conv)
    client = genai.Client(
        api_key="key-A",
        http_options=types.HttpOptions(base_url=emulator.base_url, api_version="v1beta", retry_options=None),
    )
    emulator.queue(Scripted(text="Via the SDK."))
    response = client.models.generate_content(
        model=MODEL,
        contents=[types.Content.model_validate(c) for c in req.body["contents"]],
        config=types.GenerateContentConfig(
            system_instruction=types.Content.model_validate(req.body["systemInstruction"]),
            tools=[types.Tool.model_validate(t) for t in req.body["tools"]],
        ),
    )
    assert req.receive(response.model_dump()).content == "Via the SDK."
    # The signatures arrived intact (as bytes), on the same parts.
    sent = emulator.requests[-1].body["contents"]
    assert [[("thoughtSignature" in p) for p in c["parts"]] for c in sent] == [
        [("thoughtSignature" in p) for p in c["parts"]] for c in req.body["contents"]
    ]


@pytest.mark.parametrize("provider", ["gemini", "vertex-gemini"])
def test_a_function_call_turn_right_after_another_model_turn_joins_it(provider: str) -> None:
    # Gemini takes a function call turn only right after a user or function
    # response turn (the soak's finding, tests/soak/test_findings.py).
    lookup = Tool("lookup", "", {"type": "object", "properties": {}})
    messages = [
        UserMessage("What is q?"),
        AssistantMessage("Let me see."),
        AssistantMessage(None, [ToolCall("call_1", "lookup", {"q": 1})]),
        ToolMessage("q is 1", "call_1"),
        AssistantMessage("q is 1."),
        AssistantMessage("Anything else?"),  # no call: stays its own model turn
        UserMessage("No."),
    ]
    options = {"project": "p", "location": "us-central1"} if provider == "vertex-gemini" else {}
    adapter = thinkseal.provider(provider)
    grown = Conversation(messages[:2], tools=[lookup])
    for message in messages[2:]:
        grown = grown.append(message)
        adapter.prepare(grown, model="gemini-2.5-pro", **options)  # caches filled step by step
    body = adapter.prepare(grown, model="gemini-2.5-pro", **options).body
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "model", "model", "user"]
    joined = body["contents"][1]["parts"]
    assert joined[0]["text"] == "Let me see."
    assert joined[1]["functionCall"]["name"] == "lookup"
    fresh = adapter.prepare(Conversation(messages, tools=[lookup]), model="gemini-2.5-pro", **options)
    assert fresh.content == adapter.prepare(grown, model="gemini-2.5-pro", **options).content
