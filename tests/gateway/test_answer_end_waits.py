"""The end of an answer reaches the client only once its reply is recorded.

A client that has a whole answer, or the event that ends a streamed reply
(the openai SDK stops reading at ``data: [DONE]``), may send its next request
at once, to this gateway or another of the fleet; that request must find the
reply in the ledger. Here the ledger takes a while to record (as one across a
network does), and the client notes, when the answer is complete or the
first bytes of a stream's last event arrive, whether the reply was recorded
yet. A gateway that sent the end before recording fails this every time, for
every provider, whole and streamed."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation, SystemMessage, Tool, UserMessage
from thinkseal.gateway import app
from thinkseal.gateway._app import _Recorder, open_ledger
from thinkseal.ledger import AsyncLedger
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import Step, emulate

from ..client.test_loop import MODELS
from .conftest import serve

DELAY = 0.3  # seconds the ledger takes to record a reply
LOOKUP = Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "integer"}}})
CREDENTIALS = {"authorization": "Bearer k", "x-api-key": "k", "x-goog-api-key": "k"}
# What the event ending a reply holds, by provider (the chat-completions chunk
# with a finish reason is followed by usage and ``[DONE]``).
END_OF_REPLY = {
    "anthropic": rb"message_stop",
    "vertex-anthropic": rb"message_stop",
    "bedrock": rb"messageStop",
    "gemini": rb"finishReason",
    "vertex-gemini": rb"finishReason",
    "openai-responses": rb"response\.completed",
    "ollama": rb'"done":\s*true',
}
CHAT_END = rb'"finish_reason":\s*"'
CHAT_END_PATTERN = re.compile(CHAT_END)


class SlowLedger:
    """The gateway's own ledger, taking ``delay`` longer to record each reply
    (``messages``: the replies recorded, in order)."""

    def __init__(self, inner: AsyncLedger, delay: float = DELAY) -> None:
        self.inner = inner
        self.delay = delay
        self.recorded = threading.Event()
        self.messages: list[AssistantMessage] = []

    async def record(self, message: AssistantMessage) -> int:
        await asyncio.sleep(self.delay)
        count = await self.inner.record(message)
        self.messages.append(message)
        self.recorded.set()
        return count

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def end_marker(provider: str) -> re.Pattern[bytes]:
    return re.compile(END_OF_REPLY.get(provider, CHAT_END))


def complete(provider: str, stream: bool, got: bytes) -> bool:
    """Whether what the client ``got`` holds the end of the reply (a whole answer: all of its JSON)."""
    if stream:
        return end_marker(provider).search(got) is not None
    try:
        json.loads(got)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_the_end_of_an_answer_waits_for_the_ledger(provider: str, stream: bool) -> None:
    conversation = Conversation([SystemMessage("Be brief."), UserMessage("What is q?")], tools=[LOOKUP])
    with emulate(provider, require_auth=False) as emu:
        emu.script(Step(thinking="First I look up 1.", calls=[("lookup", {"q": 1})]))
        options = {**emu.options, **emu.thinking_options}
        req = thinkseal.provider(provider).prepare(conversation, model=MODELS[provider], stream=stream, **options)
        gateway = app({"routes": [{"prefix": "/p", "provider": provider, "upstream": emu.base_url}]})
        ledger = SlowLedger(open_ledger(gateway.config))
        gateway._ledger = ledger
        got = b""
        recorded_at_end: bool | None = None
        with serve(gateway) as served:
            headers = {**dict(req.headers), **CREDENTIALS}
            url = served.url + "/p" + req.path
            with httpx.stream("POST", url, content=req.content, headers=headers, timeout=10) as answer:
                assert answer.status_code == 200
                for chunk in answer.iter_raw():
                    got += chunk
                    if recorded_at_end is None and complete(provider, stream, got):
                        recorded_at_end = ledger.recorded.is_set()
    assert recorded_at_end is not None, "the answer never ended"
    assert recorded_at_end, "the end of the reply reached the client before the reply was recorded"
    assert len(ledger.messages) == 1  # once: what follows the end (usage, [DONE]) changes nothing


# A chat-completions stream whose reply goes on after the chunk with its
# finish reason (no provider is known to do it; a client's SDK would keep it).
# The upstream sends the rest once the client has the end (``went_on``).
LATE = [
    {"choices": [{"index": 0, "delta": {"content": "Hello"}}]},
    {"choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}]},
    {"choices": [{"index": 0, "delta": {"content": " again"}}]},
]
went_on = threading.Event()


class _Late(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        events = [b"data: %s\n\n" % json.dumps(event).encode() for event in LATE]
        self.wfile.write(events[0] + events[1])
        self.wfile.flush()
        went_on.wait(5)
        self.wfile.write(events[2] + b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        pass


def test_a_reply_that_goes_on_after_its_end_is_recorded_again_as_it_finally_is() -> None:
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Late)
    threading.Thread(target=upstream.serve_forever, args=(0.02,), daemon=True).start()
    got = b""
    try:
        route = {"prefix": "/p", "provider": "deepseek", "upstream": f"http://127.0.0.1:{upstream.server_port}"}
        gateway = app({"routes": [route]})
        ledger = SlowLedger(open_ledger(gateway.config), delay=0)
        gateway._ledger = ledger
        body = {"model": "deepseek-chat", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
        with serve(gateway) as served:
            url = served.url + "/p/chat/completions"
            with httpx.stream("POST", url, json=body, headers=CREDENTIALS, timeout=10) as answer:
                assert answer.status_code == 200
                for chunk in answer.iter_raw():
                    got += chunk
                    if CHAT_END_PATTERN.search(got):
                        went_on.set()
    finally:
        went_on.set()
        upstream.shutdown()
        upstream.server_close()
    assert got.endswith(b' again"}}]}\n\ndata: [DONE]\n\n')
    # Recorded when the finish reason came, then again as the client has it at the end.
    assert [m.content for m in ledger.messages] == ["Hello", "Hello again"]


def test_a_stream_with_nothing_after_its_end_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Recorded at its end event; as no bytes follow it, the reply is not assembled again at the body's end.
    finished: list[AssistantMessage | None] = []
    real = _Recorder.finish

    def counted(recorder: _Recorder) -> AssistantMessage | None:
        finished.append(real(recorder))
        return finished[-1]

    monkeypatch.setattr(_Recorder, "finish", counted)
    conversation = Conversation([UserMessage("What is q?")], tools=[LOOKUP])
    with emulate("anthropic", require_auth=False) as emu:
        emu.script(Step(thinking="First I look up 1.", calls=[("lookup", {"q": 1})]))
        options = {**emu.options, **emu.thinking_options}
        req = thinkseal.provider("anthropic").prepare(conversation, model=MODELS["anthropic"], stream=True, **options)
        gateway = app({"routes": [{"prefix": "/p", "provider": "anthropic", "upstream": emu.base_url}]})
        ledger = SlowLedger(open_ledger(gateway.config), delay=0)
        gateway._ledger = ledger
        with serve(gateway) as served:
            headers = {**dict(req.headers), **CREDENTIALS}
            answer = httpx.post(served.url + "/p" + req.path, content=req.content, headers=headers, timeout=10)
    assert answer.status_code == 200
    assert answer.content.rstrip().endswith(b'{"type":"message_stop"}')
    assert len(finished) == 1
    assert finished[0] is not None
    assert ledger.messages == [finished[0]]
