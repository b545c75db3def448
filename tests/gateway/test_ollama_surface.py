"""The gateway's Ollama surface (``POST /api/chat``), driven by the official
``ollama`` client with only its host changed, against thinkseal's Ollama
emulator (which refuses what thinkseal promises Ollama never gets: a call
without its result, a result answering no call, tool arguments as text).

Ollama's thinking is unsigned, so the gateway has nothing to unseal: a body
goes upstream as the client wrote it, and each reply (whole or streamed) is
read by the adapter and handed to the ledger. The ledger here is a memory
ledger that also keeps what it was handed, so a test can compare it with what
the gateway reads back from the next request."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import ollama
import pytest

from thinkseal import AssistantMessage, Conversation, Image, Tool, ToolMessage, UserMessage, ValidationError
from thinkseal.gateway import app
from thinkseal.gateway._ollama_surface import OllamaChat
from thinkseal.ledger import AsyncLedger
from thinkseal.providers import provider
from thinkseal.testing import Step, emulate
from thinkseal.testing.ollama import OllamaEmulator

from .conftest import Served, serve

MODEL = "qwen3"
QUESTION = {"role": "user", "content": "What is q?"}
SCHEMA = {"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]}
TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Look q up.", "parameters": SCHEMA}}]
LOOKUP = [("lookup", {"q": 1})]
# The smallest PNG: its signature is what the surface reads the media type from.
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 8).decode()


class KeptLedger(AsyncLedger):
    """A memory ledger that keeps each reply it is handed, and how many entries it wrote."""

    def __init__(self) -> None:
        super().__init__()
        self.replies: list[AssistantMessage] = []
        self.entries = 0

    async def record(self, reply: Any) -> int:
        self.replies.append(reply)
        written = await super().record(reply)
        self.entries += written
        return written


class Client:
    """The ``ollama`` SDK's client through the gateway, keeping the bytes of
    each request it sent and the headers of each answer."""

    def __init__(self, host: str) -> None:
        self.sent: list[bytes] = []
        self.headers: list[httpx.Headers] = []
        hooks = {"request": [self._request], "response": [self._response]}
        self.sdk = ollama.Client(host=host, event_hooks=hooks)

    def _request(self, request: httpx.Request) -> None:
        self.sent.append(request.read())

    def _response(self, response: httpx.Response) -> None:
        self.headers.append(response.headers)


class Gateway:
    """An emulator, a gateway with one ``/ollama`` route to it, and the client."""

    def __init__(self, emu: OllamaEmulator, served: Served, ledger: KeptLedger) -> None:
        self.emu = emu
        self.served = served
        self.ledger = ledger
        self.client = Client(f"{served.url}/ollama")


@pytest.fixture
def through() -> Iterator[Gateway]:
    with emulate("ollama") as emu:
        assert isinstance(emu, OllamaEmulator)
        gateway = app({"routes": [route(emu)]})
        ledger = KeptLedger()
        gateway._ledger = ledger  # opened already: the gateway uses it as it is
        with serve(gateway) as served:
            yield Gateway(emu, served, ledger)


def route(emu: Any) -> dict[str, Any]:
    return {"prefix": "/ollama", "provider": "ollama", "upstream": emu.base_url}


def chat(client: Client, messages: list[Any], stream: bool) -> dict[str, Any]:
    """One chat request with the tools; the reply's message as the client has
    it (put together from the chunks when streamed, as a client does)."""
    if not stream:
        reply = client.sdk.chat(model=MODEL, messages=messages, tools=TOOLS, think=True)
        return reply.message.model_dump(exclude_none=True)
    thinking, content, calls = [], [], []
    for chunk in client.sdk.chat(model=MODEL, messages=messages, tools=TOOLS, think=True, stream=True):
        thinking.append(chunk.message.thinking or "")
        content.append(chunk.message.content or "")
        calls += [c.model_dump() for c in chunk.message.tool_calls or ()]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content)}
    if "".join(thinking):
        message["thinking"] = "".join(thinking)
    if calls:
        message["tool_calls"] = calls
    return message


def loop(client: Client, stream: bool) -> tuple[list[Any], list[dict[str, Any]]]:
    """A question's tool loop: each reply goes back as the client got it, each
    call answered by ``tool_name``, until the model answers."""
    messages: list[Any] = [QUESTION]
    replies = []
    while True:
        message = chat(client, messages, stream)
        replies.append(message)
        messages.append(message)
        if not message.get("tool_calls"):
            return messages, replies
        messages += [
            {"role": "tool", "tool_name": c["function"]["name"], "content": "1"} for c in message["tool_calls"]
        ]


def read(body: bytes) -> Conversation:
    return OllamaChat(provider("ollama")).read(json.loads(body), "/api/chat").conversation


@pytest.mark.parametrize("stream", [False, True], ids=["json", "ndjson"])
def test_a_tool_loop_goes_through_as_it_came_and_each_reply_is_recorded(through: Gateway, stream: bool) -> None:
    through.emu.script(Step(thinking="Look it up.", calls=LOOKUP), Step(thinking="It is one.", text="One."))
    messages, replies = loop(through.client, stream)
    assert [r.get("content") for r in replies] == ["", "One."]
    assert through.emu.rejections == []
    # Nothing to change: the upstream got the client's very bytes.
    assert [r.raw for r in through.emu.requests] == through.client.sent
    assert all((h["thinkseal-kept"], h["thinkseal-unsealed"]) == ("0", "0") for h in through.client.headers)
    assert all("thinkseal-reasons" not in h for h in through.client.headers)
    # Each reply was read by the adapter (from JSON or from the NDJSON lines) and handed to the ledger;
    # unsigned thinking binds nothing, so the ledger keeps no entry for it.
    first, second = through.ledger.replies
    assert (first.thinking_text, second.thinking_text, second.content) == ("Look it up.", "It is one.", "One.")
    assert first.tool_calls[0].id.startswith("ollama_")
    assert through.ledger.entries == 0
    # The reply the client sent back reads to the message recorded, and its result to that call's id:
    # the conversation the gateway read is the one thinkseal's own client would have built.
    tool = Tool("lookup", "Look q up.", SCHEMA)
    library = Conversation([UserMessage("What is q?"), first, ToolMessage("1", first.tool_calls[0].id)], [tool])
    assert read(through.client.sent[1]) == library
    assert read(through.client.sent[1])[1].digest == first.digest
    assert len(messages) == 4


def test_a_body_without_stream_streams_and_its_bytes_reach_the_client_unchanged(through: Gateway) -> None:
    # Ollama streams when "stream" is absent; the gateway reads the answer as the stream it is.
    body = json.dumps({"model": MODEL, "messages": [QUESTION], "think": True}).encode()
    step = Step(thinking="Thinking it over.", text="q is one.")
    through.emu.script(step)
    direct = httpx.post(f"{through.emu.base_url}/api/chat", content=body)
    through.emu.script(step)
    relayed = httpx.post(f"{through.served.url}/ollama/api/chat", content=body)
    assert relayed.status_code == direct.status_code == 200
    assert relayed.headers["content-type"] == "application/x-ndjson"
    assert relayed.content == direct.content
    assert len(relayed.content.splitlines()) > 2  # a stream of lines, not one JSON answer
    (recorded,) = through.ledger.replies
    assert (recorded.thinking_text, recorded.content) == ("Thinking it over.", "q is one.")
    assert through.emu.requests[-1].raw == body


def test_a_body_in_any_spelling_goes_upstream_byte_for_byte(through: Gateway) -> None:
    # Spacing, key order, escapes, an empty field, an image, a system prompt and a tool error: read, then forwarded
    # untouched.
    call = {"function": {"name": "lookup", "arguments": {"q": 1}}}
    raw = (
        '{ "stream" : false,\n "messages":[ {"content":"Be brief.","role":"system"},'
        '{"role":"user","content":"What is \\u0071?","thinking":"","images":["' + PNG + '"]},'
        '{"role":"assistant","content":"","thinking":"Look it up.","tool_calls":[' + json.dumps(call) + "]},"
        '{"role":"tool","tool_name":"lookup","content":"[tool error] no such q"} ],'
        '"model":"' + MODEL + '","think":true }'
    ).encode()
    answer = httpx.post(f"{through.served.url}/ollama/api/chat", content=raw)
    assert answer.status_code == 200
    assert through.emu.requests[-1].raw == raw
    assert len(through.ledger.replies) == 1  # read and decided, not passed through
    conversation = read(raw)
    assert conversation[1] == UserMessage(["What is q?", Image(base64.b64decode(PNG), "image/png")])
    result = conversation[3]
    assert isinstance(result, ToolMessage)
    assert (result.content, result.is_error) == ("no such q", True)


def test_a_turn_whose_call_has_no_result_goes_out_without_it() -> None:
    # The client moved on without answering the call. The emulator, keeping thinkseal's pairing rule,
    # refuses that history; through the gateway the turn goes out as the adapter writes it, call dropped.
    call = {"function": {"name": "lookup", "arguments": {"q": 1}}}
    history = [
        QUESTION,
        {"role": "assistant", "content": "", "thinking": "Look it up.", "tool_calls": [call]},
        {"role": "user", "content": "Never mind. What is 2?"},
    ]
    body = json.dumps({"model": MODEL, "messages": history, "stream": False, "think": True}).encode()
    with emulate("ollama") as emu:
        assert httpx.post(f"{emu.base_url}/api/chat", content=body).status_code == 400
        without = len(emu.rejections)
        with serve({"routes": [route(emu)]}) as served:
            answer = httpx.post(f"{served.url}/ollama/api/chat", content=body)
        with_gateway = len(emu.rejections) - without
    print(f"ollama/unanswered-call: refused without the gateway {without}, with it {with_gateway}")
    assert (without, with_gateway) == (1, 0)
    assert answer.status_code == 200
    assert (answer.headers["thinkseal-unsealed"], answer.headers["thinkseal-reasons"]) == ("1", "no-sealed-thinking=1")
    sent = emu.requests[-1].body["messages"]
    assert sent[1] == {"role": "assistant", "content": "", "thinking": "Look it up."}
    assert [sent[0], sent[2]] == [history[0], history[2]]


def test_tool_results_pair_by_name_then_by_order() -> None:
    calls = [{"function": {"name": n, "arguments": {"q": q}}} for n, q in (("a", 1), ("b", 2), ("a", 3))]
    body = {
        "model": MODEL,
        "messages": [
            QUESTION,
            {"role": "assistant", "content": "", "tool_calls": calls},
            {"role": "tool", "tool_name": "a", "content": "1"},
            {"role": "tool", "tool_name": "a", "content": "3"},
            {"role": "tool", "content": "2"},  # no name: the first call not answered yet
        ],
    }
    incoming = OllamaChat(provider("ollama")).read(body, "/api/chat")
    assert incoming.stream  # no "stream": Ollama streams
    turn = incoming.conversation[1]
    assert isinstance(turn, AssistantMessage)
    answered = [m.tool_call_id for m in incoming.conversation[2:] if isinstance(m, ToolMessage)]
    assert answered == [turn.tool_calls[0].id, turn.tool_calls[2].id, turn.tool_calls[1].id]
    assert incoming.turns == {1: 1}


BAD_CALL = {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{"}}]}
UNREAD = [
    ("not-a-list", {"messages": {"role": "user"}}, "messages"),
    ("not-an-object", {"messages": [QUESTION, "hello"]}, "messages[1]"),
    ("no-role", {"messages": [{"content": "hi"}]}, "messages[0].role"),
    ("stream-not-bool", {"messages": [QUESTION], "stream": "yes"}, "stream"),
    ("unknown-field", {"messages": [{**QUESTION, "thinking": "hm"}]}, "messages[0].thinking"),
    ("stray-result", {"messages": [QUESTION, {"role": "tool", "tool_name": "x", "content": "1"}]}, "messages[1]"),
    ("bad-arguments", {"messages": [QUESTION, BAD_CALL]}, "messages[1].tool_calls[0].function.arguments"),
    ("not-an-image", {"messages": [{**QUESTION, "images": ["aGVsbG8="]}]}, "messages[0].images[0]"),
]


@pytest.mark.parametrize(("name", "body", "path"), UNREAD, ids=[u[0] for u in UNREAD])
def test_a_body_thinkseal_cannot_read_is_named_and_forwarded_as_it_came(
    through: Gateway, name: str, body: dict[str, Any], path: str
) -> None:
    body = {"model": MODEL, **body}
    with pytest.raises(ValidationError) as caught:
        OllamaChat(provider("ollama")).read(body, "/api/chat")
    assert caught.value.path == path
    raw = json.dumps(body).encode()
    answer = httpx.post(f"{through.served.url}/ollama/api/chat", content=raw)
    assert through.emu.requests[-1].raw == raw  # passed through: Ollama judges it
    assert answer.headers["thinkseal-kept"] == "0"
    assert through.ledger.replies == []
    assert 'thinkseal_gateway_passed_through_total{route="/ollama"} 1' in through.served.app.metrics.render()


def test_a_body_that_is_not_json_is_refused_by_the_gateway(through: Gateway) -> None:
    answer = httpx.post(f"{through.served.url}/ollama/api/chat", content=b'{"model": "qwen3", "messages": [')
    assert answer.status_code == 400
    assert "not valid JSON" in answer.json()["error"]["message"]
    assert through.emu.requests == []
