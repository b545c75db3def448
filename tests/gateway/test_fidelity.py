"""Byte fidelity: what the gateway does not change reaches the other side as
the client (or the upstream) wrote it, byte for byte."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import httpx
import pytest

from thinkseal import _core
from thinkseal.testing import Step
from thinkseal.testing.anthropic import AnthropicEmulator

from .conftest import anthropic_route, rejections, serve

SONNET = "claude-sonnet-4-5"
HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json"}
TOOLS = [{"name": "lookup", "description": "Look.", "input_schema": {"type": "object"}}]


def body_of(messages: list[Any], **extra: Any) -> bytes:
    """A request written the way no serializer of thinkseal's would: odd
    spacing, members in another order, fields thinkseal does not model."""
    document = {
        "metadata": {"user_id": "u-1"},
        "messages": messages,
        "service_tier": "auto",
        "model": SONNET,
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": TOOLS,
        **extra,
    }
    return json.dumps(document, indent=3, ensure_ascii=False).replace('": ', '" :  ').encode()


def first_turn(emu: AnthropicEmulator, url: str) -> list[Any]:
    """A question and Claude's signed tool call to it, asked at ``url``."""
    emu.script(Step(thinking="Look it up ✓.", calls=[("lookup", {"q": 1})]))
    messages: list[Any] = [{"role": "user", "content": "What is 1?"}]
    answer = httpx.post(url + "/v1/messages", content=body_of(messages), headers=HEADERS).json()
    call = answer["content"][-1]
    return [
        *messages,
        {"role": "assistant", "content": answer["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "1"}]},
    ]


def test_nothing_to_change_goes_out_byte_for_byte(anthropic_emu: AnthropicEmulator) -> None:
    with serve({"routes": [anthropic_route(anthropic_emu)]}) as gw:
        url = gw.url + "/anthropic"
        messages = first_turn(anthropic_emu, url)
        raw = body_of(messages)
        answer = httpx.post(url + "/v1/messages", content=raw, headers=HEADERS)
    assert answer.status_code == 200
    assert answer.headers["thinkseal-kept"] == "1"
    assert anthropic_emu.requests[-1].raw == raw


def test_kept_turns_and_unknown_fields_untouched_in_an_edited_body(anthropic_emu: AnthropicEmulator) -> None:
    """Turn 1 was recorded by the gateway (kept); turn 3 was made straight at
    the provider and the policy unseals it: only turn 3's element changes."""
    config = {"gateway": {"unknown_seals": "unseal"}, "routes": [anthropic_route(anthropic_emu)]}
    with serve(config) as gw:
        url = gw.url + "/anthropic"
        messages = first_turn(anthropic_emu, url)
        anthropic_emu.script(Step(thinking="Got it.", text="One."))
        direct = httpx.post(anthropic_emu.base_url + "/v1/messages", content=body_of(messages), headers=HEADERS)
        messages += [{"role": "assistant", "content": direct.json()["content"]}, {"role": "user", "content": "And 2?"}]
        raw = body_of(messages)
        answer = httpx.post(url + "/v1/messages", content=raw, headers=HEADERS)
    assert answer.status_code == 200
    assert (answer.headers["thinkseal-kept"], answer.headers["thinkseal-unsealed"]) == ("1", "1")
    assert answer.headers["thinkseal-reasons"] == "unbound=1"
    sent = anthropic_emu.requests[-1].raw
    before, after = _core.member_spans(raw, "messages"), _core.member_spans(sent, "messages")
    assert before is not None
    assert after is not None
    assert len(before) == len(after) == 5
    # Everything up to turn 3 (turn 1 with its signature, the client's spacing), and everything after it.
    assert sent[: after[3][0]] == raw[: before[3][0]]
    assert sent[after[3][1] :] == raw[before[3][1] :]
    assert json.loads(sent[after[3][0] : after[3][1]]) == {
        "role": "assistant",
        "content": [{"type": "text", "text": "One."}],
    }
    assert json.loads(sent)["metadata"] == {"user_id": "u-1"}
    assert json.loads(sent)["service_tier"] == "auto"
    assert rejections(anthropic_emu) == 0


# -- the answer, as the upstream wrote it ------------------------------------------------------------------

STREAM = [
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
    b'"model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    b'"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"Hi \xe2\x9c\x93"}}\n\n',
    b'event: ping\ndata: {"type": "ping"}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
    b'"usage":{"output_tokens":2}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
]
JSON_ANSWER = (
    b'{ "id" : "msg_2", "type":"message", "role":"assistant", "model":"claude-sonnet-4-5",\n'
    b'  "content":[{"type":"text","text":"Hi \\u2713"}], "stop_reason":"end_turn", "stop_sequence":null,\n'
    b'  "usage":{"input_tokens":3,"output_tokens":2}, "x_unknown":[1, 2.50]}'
)


class Upstream(ThreadingHTTPServer):
    """A stand-in upstream that answers with bytes the test knows: a JSON body,
    or a stream whose first event it holds back the rest after until the
    client says it has it (a gateway that buffered would never pass it on),
    and whose body it closes only once the client says it has the last event
    (a gateway that waited for the close to send it would never pass it on)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.released = threading.Event()
        self.held_for_client = False
        self.ended = threading.Event()
        self.end_before_close = False
        self.received: list[bytes] = []


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Upstream

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["content-length"]))
        self.server.received.append(raw)
        if not json.loads(raw).get("stream"):
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(JSON_ANSWER)))
            self.end_headers()
            self.wfile.write(JSON_ANSWER)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(STREAM[0])
        self.wfile.flush()
        self.server.held_for_client = self.server.released.wait(5)
        for chunk in STREAM[1:]:
            self.wfile.write(chunk)
            self.wfile.flush()
        self.server.end_before_close = self.server.ended.wait(5)
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _route(server: Upstream) -> dict[str, Any]:
    return {"prefix": "/anthropic", "provider": "anthropic", "upstream": f"http://127.0.0.1:{server.server_port}"}


def test_stream_bytes_reach_the_client_unchanged_as_they_come(upstream: Upstream) -> None:
    body = json.dumps(
        {"model": SONNET, "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    )
    got = b""
    with serve({"routes": [_route(upstream)]}) as gw:
        with httpx.stream(
            "POST", gw.url + "/anthropic/v1/messages", content=body, headers=HEADERS, timeout=10
        ) as answer:
            assert answer.headers["content-type"] == "text/event-stream"
            assert answer.headers["thinkseal-kept"] == "0"
            for chunk in answer.iter_raw():
                got += chunk
                if got.startswith(STREAM[0]):
                    upstream.released.set()  # the first event is here while the upstream still holds the rest
                if b"event: message_stop" in got:
                    upstream.ended.set()  # the last event is here while the upstream still holds the body open
        metrics = httpx.get(gw.url + "/metrics").text
    assert upstream.held_for_client, "the first event did not reach the client before the stream ended"
    assert upstream.end_before_close, "the last event did not reach the client before the upstream closed the body"
    assert got == b"".join(STREAM)
    assert upstream.received == [body.encode()]
    assert 'requests_total{route="/anthropic",status="200"} 1' in metrics


def test_json_answer_bytes_unchanged_and_read_by_the_sdk(upstream: Upstream) -> None:
    with serve({"routes": [_route(upstream)]}) as gw:
        answer = httpx.post(
            gw.url + "/anthropic/v1/messages",
            content=json.dumps({"model": SONNET, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}),
            headers=HEADERS,
        )
        with anthropic.Anthropic(base_url=gw.url + "/anthropic", api_key="k") as client:
            reply = client.messages.create(model=SONNET, max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert answer.content == JSON_ANSWER
    assert answer.headers["content-length"] == str(len(JSON_ANSWER))
    assert reply.content[0].text == "Hi ✓"  # type: ignore[union-attr]
