"""Hostile clients and hostile upstreams against the gateway, served by uvicorn
on loopback (issue 21's red team).

The upstream is a raw HTTP server written here that misbehaves on request (the
client names the misbehaviour in an ``x-hostile`` header, which the gateway
forwards like any other header); a second server, the "thief", stands for
another host and records whoever reaches it. The gateway holds the route's
upstream key (``api_key_env``): in every case the key must appear neither in
the answer to the client nor in the logs.

The fixtures are this module's own (tests/gateway/conftest.py belongs to the
Anthropic surface's tests)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import suppress
from typing import Any

import httpx
import pytest
import uvicorn

from thinkseal.gateway import Gateway, app

KEY = "sk-ant-hostile-upstream-SECRET-5f1e2d3c4b5a"
MAX_BODY = 1 << 20  # the gateway's body limit in these tests
TIMEOUT = 1.0  # the gateway's upstream timeout in these tests
BIG_ANSWER = 16 << 20
MODEL = "claude-sonnet-4-5"
MESSAGES = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
CANNED = json.dumps(
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": "Hello."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }
).encode()
FIRST_EVENT = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    b'"role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
)


# -- the hostile upstream and the thief ----------------------------------------------------------


class Upstream:
    """A raw HTTP/1.1 server on its own event loop; ``seen`` holds each
    request's (method, target, headers) as it arrived."""

    def __init__(self, loop: asyncio.AbstractEventLoop, thief_url: str = "") -> None:
        self.loop = loop
        self.thief_url = thief_url
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.server: asyncio.AbstractServer | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.connection, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                await reader.readexactly(int(headers.get("content-length", "0")))
                self.seen.append((method, target, headers))
                if not await self.answer(headers.get("x-hostile", "ok"), headers, reader, writer):
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def answer(
        self, mode: str, headers: dict[str, str], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request as ``mode`` says; False: the connection is over."""
        if mode == "ok":
            writer.write(_whole(200, CANNED))
        elif mode == "redirect":
            writer.write(
                b"HTTP/1.1 307 Temporary Redirect\r\nlocation: %s/v1/messages\r\ncontent-length: 0\r\n\r\n"
                % self.thief_url.encode()
            )
        elif mode == "malformed":
            writer.write(_whole(200, b'{"type":"message","content":[{"type":"text","te'))
        elif mode == "echo-key":  # an upstream that reflects the credential it was sent
            message = {"type": "error", "error": {"type": "authentication_error", "message": headers.get("x-api-key")}}
            writer.write(_whole(401, json.dumps(message).encode()))
        elif mode == "huge":
            text = b"a" * (64 << 10)
            head = (
                b'{"id":"msg_1","type":"message","role":"assistant","model":"%s","content":[{"type":"text","text":"'
                % (MODEL.encode())
            )
            tail = b'"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":2}}'
            count = BIG_ANSWER // len(text)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                % (len(head) + count * len(text) + len(tail), head)
            )
            for _ in range(count):
                writer.write(text)
                await writer.drain()
            writer.write(tail)
        elif mode in ("cut", "stall"):
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            writer.write(b"%x\r\n%s\r\n" % (len(FIRST_EVENT), FIRST_EVENT))
            await writer.drain()
            if mode == "stall":
                await _until_closed(reader)
            return False  # "cut": the connection drops in the middle of the stream
        elif mode == "hang":
            await _until_closed(reader)
            return False
        await writer.drain()
        return True


def _whole(status: int, payload: bytes) -> bytes:
    return b"HTTP/1.1 %d X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        status,
        len(payload),
        payload,
    )


async def _until_closed(reader: asyncio.StreamReader) -> None:
    """Say nothing until the peer hangs up (bounded: the test's own limit)."""
    with suppress(asyncio.TimeoutError, ConnectionError):
        await asyncio.wait_for(reader.read(), 15)


# -- the gateway under uvicorn --------------------------------------------------------------------


class World:
    def __init__(self, gateway: Gateway, url: str, upstream: Upstream, thief: Upstream) -> None:
        self.gateway = gateway
        self.url = url
        self.upstream = upstream
        self.thief = thief

    def post(
        self, mode: str = "ok", content: bytes | None = None, path: str = "/anthropic/v1/messages", **kw: Any
    ) -> httpx.Response:
        headers = {"x-hostile": mode, "content-type": "application/json", "anthropic-version": "2023-06-01"}
        headers.update(kw.pop("headers", {}))
        payload = json.dumps(MESSAGES).encode() if content is None else content
        return httpx.post(self.url + path, content=payload, headers=headers, timeout=20, **kw)

    def alive(self) -> None:
        answer = httpx.get(self.url + "/healthz", timeout=5)
        assert answer.status_code == 200, "the gateway stopped answering"


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    thief = Upstream(loop)
    asyncio.run_coroutine_threadsafe(thief.start(), loop).result(5)
    upstream = Upstream(loop, thief.url)
    asyncio.run_coroutine_threadsafe(upstream.start(), loop).result(5)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections to it are refused
    os.environ["HOSTILE_TEST_UPSTREAM_KEY"] = KEY
    try:
        gateway = app(
            {
                "gateway": {"max_body": MAX_BODY, "timeout": TIMEOUT},
                "routes": [
                    {"prefix": "/anthropic", "provider": "anthropic", "upstream": upstream.url,
                     "api_key_env": "HOSTILE_TEST_UPSTREAM_KEY"},
                    {"prefix": "/based", "provider": "anthropic", "upstream": upstream.url + "/base",
                     "api_key_env": "HOSTILE_TEST_UPSTREAM_KEY"},
                    {"prefix": "/closed", "provider": "anthropic",
                     "upstream": f"http://127.0.0.1:{closed.getsockname()[1]}",
                     "api_key_env": "HOSTILE_TEST_UPSTREAM_KEY"},
                ],
            }
        )  # fmt: skip
    finally:
        del os.environ["HOSTILE_TEST_UPSTREAM_KEY"]
    # log_config=None: uvicorn leaves logging alone, so its records reach caplog too.
    server = uvicorn.Server(
        uvicorn.Config(gateway, host="127.0.0.1", port=0, lifespan="on", access_log=False, log_config=None)
    )
    serving = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    serving.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert serving.is_alive(), "the gateway did not start"
        assert time.monotonic() < deadline, "the gateway did not start in time"
        time.sleep(0.005)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield World(gateway, f"http://127.0.0.1:{port}", upstream, thief)
    finally:
        server.should_exit = True
        serving.join(10)
        # The upstreams' connections still open (a stalled stream, a kept-alive
        # one) are ended on their loop: left pending, each task would be
        # finalized later, during whatever another test runs then.
        asyncio.run_coroutine_threadsafe(_shut(upstream, thief), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
        closed.close()


async def _shut(*upstreams: Upstream) -> None:
    for upstream in upstreams:
        if upstream.server is not None:
            upstream.server.close()
    pending = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


def assert_no_key(logs: pytest.LogCaptureFixture, *answers: httpx.Response | bytes) -> None:
    """The upstream key is in none of ``answers`` (their headers and bodies) and in no log record."""
    for answer in answers:
        if isinstance(answer, httpx.Response):
            assert KEY not in str(answer.headers.raw), "the key reached the client in a header"
            assert KEY.encode() not in answer.content, "the key reached the client"
        else:
            assert KEY.encode() not in answer, "the key reached the client"
    for record in logs.records:
        assert KEY not in record.getMessage(), f"logged: {record.name}"
        assert KEY not in str(record.exc_text or ""), f"logged in a traceback: {record.name}"
    assert KEY not in logs.text


def error_of(answer: httpx.Response) -> str:
    body = answer.json()
    assert body["type"] == "error", body
    assert isinstance(body["error"]["message"], str), body
    return str(body["error"]["message"])


def raw_exchange(world: World, request: bytes, wait: float = 5.0) -> bytes:
    """Send ``request`` on a fresh socket and read what comes back until the
    gateway closes or ``wait`` seconds pass."""
    host, port = world.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        sock.sendall(request)
        return _read_all(sock, wait)


def _read_all(sock: socket.socket, wait: float) -> bytes:
    received = b""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionError:
            break
        if not chunk:
            break
        received += chunk
        if b"\r\n\r\n" in received and received.endswith((b"}", b"\r\n0\r\n\r\n")):
            break  # one whole JSON answer (the gateway's own answers are chunked)
    return received


# -- hostile clients ------------------------------------------------------------------------------


def test_declared_huge_body_is_refused_before_it_is_read(world: World, logs: pytest.LogCaptureFixture) -> None:
    request = (
        b"POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n" % (64 * MAX_BODY)
    )
    answer = raw_exchange(world, request)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"limit" in answer
    assert_no_key(logs, answer)
    world.alive()


def test_chunked_huge_body_is_refused_with_memory_bounded(world: World, logs: pytest.LogCaptureFixture) -> None:
    host, port = world.url.removeprefix("http://").split(":")
    piece = b"x" * (64 << 10)
    tracemalloc.start()
    try:
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(b"POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n")
            sent = 0
            try:
                while sent < 8 * MAX_BODY:
                    sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                    sent += len(piece)
            except ConnectionError:
                pass  # the gateway answered and hung up mid-upload: what we want
            answer = _read_all(sock, 5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert peak < 4 * MAX_BODY, f"the gateway held {peak} bytes of a body over its {MAX_BODY}-byte limit"
    assert_no_key(logs, answer)
    world.alive()


def test_body_trickling_in_is_timed_out(world: World, logs: pytest.LogCaptureFixture) -> None:
    """A client that sends its headers and a byte of its body, then nothing
    (slowloris): the gateway's read must give up (here within 3x its 1 s
    timeout), answering 408 or closing, not hold the connection forever."""
    host, port = world.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(
            b"POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            b"content-length: 1000\r\n\r\n{"
        )
        started = time.monotonic()
        sock.settimeout(3 * TIMEOUT)
        try:
            answer = sock.recv(65536)
        except TimeoutError:
            answer = None
        waited = time.monotonic() - started
    assert answer is not None, (
        f"the gateway still waited for the body after {waited:.1f} s: neither its read "
        f"(gateway.timeout = {TIMEOUT} s) nor uvicorn bounds a trickling body"
    )
    assert answer == b"" or answer.startswith((b"HTTP/1.1 408", b"HTTP/1.1 400")), answer[:200]
    assert_no_key(logs, answer)


def test_malformed_json_is_a_400_naming_the_problem(world: World, logs: pytest.LogCaptureFixture) -> None:
    answer = world.post(content=b'{"model": "claude-sonnet-4-5", "messages": [')
    assert answer.status_code == 400
    assert "JSON" in error_of(answer)
    assert answer.headers["content-type"] == "application/json"
    assert_no_key(logs, answer)
    world.alive()


def test_deeply_nested_json_is_a_400_not_a_crash(world: World, logs: pytest.LogCaptureFixture) -> None:
    depth = 100_000
    answer = world.post(content=b'{"model":"m","messages":' + b"[" * depth + b"]" * depth + b"}")
    assert answer.status_code == 400
    assert "JSON" in error_of(answer)
    assert_no_key(logs, answer)
    world.alive()


def test_nesting_under_the_parser_limit_passes_through(world: World, logs: pytest.LogCaptureFixture) -> None:
    """Valid JSON nested deeper than thinkseal reads (Limits.max_depth): not a
    500; the body is forwarded as it came."""
    deep: Any = "leaf"
    for _ in range(400):
        deep = {"k": deep}
    body = {
        **MESSAGES,
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": deep}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        ],
    }
    answer = world.post(content=json.dumps(body).encode())
    assert answer.status_code == 200, answer.text[:300]
    assert_no_key(logs, answer)


@pytest.mark.parametrize("document", [b"[]", b'"a string"', b"null", b"42", b'[{"model":"m"}]'])
def test_non_object_json_is_a_400(world: World, logs: pytest.LogCaptureFixture, document: bytes) -> None:
    answer = world.post(content=document)
    assert answer.status_code == 400
    assert "object" in error_of(answer)
    assert_no_key(logs, answer)


def test_cr_in_a_header_value_never_reaches_the_upstream(world: World, logs: pytest.LogCaptureFixture) -> None:
    before = len(world.upstream.seen)
    payload = json.dumps(MESSAGES).encode()
    request = (
        b"POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"x-note: a\rinjected: yes\r\ncontent-length: %d\r\n\r\n%s" % (len(payload), payload)
    )
    answer = raw_exchange(world, request)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert len(world.upstream.seen) == before
    assert_no_key(logs, answer)


def test_client_host_and_credential_are_not_forwarded(world: World, logs: pytest.LogCaptureFixture) -> None:
    client_side = {"cookie": "session=1", "forwarded": "for=10.0.0.1", "x-forwarded-for": "10.0.0.1", "x-real-ip": "x"}
    answer = world.post(
        headers={
            "host": "evil.example",
            "x-api-key": "client-key",
            "authorization": "Bearer client-token",
            **client_side,
        }
    )
    assert answer.status_code == 200, answer.text[:300]
    _, _, seen = world.upstream.seen[-1]
    assert seen["host"] == world.upstream.url.removeprefix("http://")
    assert seen["x-api-key"] == KEY  # the route's key replaces the client's
    assert "authorization" not in seen
    assert not set(client_side) & set(seen)  # the client's side of the gateway stays there
    assert_no_key(logs, answer)


@pytest.mark.parametrize("target", [b"/based/../secret", b"/based/%2e%2e/secret", b"/based/v1/%2E%2E/%2e%2e/secret"])
def test_dot_segments_do_not_leave_the_routes_upstream_path(
    world: World, logs: pytest.LogCaptureFixture, target: bytes
) -> None:
    """A route's upstream is ``http://host/base``: a client's ``..`` must not
    carry the route's key to another path of that host."""
    before = len(world.upstream.seen)
    answer = raw_exchange(world, b"GET %s HTTP/1.1\r\nhost: x\r\n\r\n" % target)
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    for _, path, headers in world.upstream.seen[before:]:
        assert path.startswith("/base/"), (
            f"{target!r} reached {path!r} with the route's key ({headers.get('x-api-key') == KEY})"
        )
    assert_no_key(logs, answer)


# -- hostile upstreams ----------------------------------------------------------------------------


def test_redirect_is_not_followed_and_the_key_does_not_follow(world: World, logs: pytest.LogCaptureFixture) -> None:
    answer = world.post("redirect")
    assert answer.status_code == 307
    assert world.thief.seen == [], "the gateway followed the redirect to another host"
    assert_no_key(logs, answer)
    world.alive()


def test_malformed_json_answer_is_relayed_as_it_came(world: World, logs: pytest.LogCaptureFixture) -> None:
    answer = world.post("malformed")
    assert answer.status_code == 200
    assert answer.content == b'{"type":"message","content":[{"type":"text","te'
    assert answer.headers["thinkseal-kept"] == "0"
    assert_no_key(logs, answer)
    assert world.post().status_code == 200


def test_cut_stream_ends_the_clients_stream_and_the_gateway_goes_on(
    world: World, logs: pytest.LogCaptureFixture
) -> None:
    payload = json.dumps({**MESSAGES, "stream": True}).encode()
    received = b""
    status = None
    cut = False
    try:
        with httpx.stream(
            "POST", world.url + "/anthropic/v1/messages", content=payload, headers={"x-hostile": "cut"}, timeout=10
        ) as answer:
            status = answer.status_code
            for chunk in answer.iter_raw():
                received += chunk
    except httpx.HTTPError:
        cut = True
    assert status == 200
    assert cut, "the client was not told the stream was cut (it ended as if complete)"
    assert received.startswith(b"event: message_start")
    assert_no_key(logs, received)
    assert 'thinkseal_gateway_answers_cut_total{route="/anthropic"} 1' in world.gateway.metrics.render()
    assert any("answer_cut" in r.getMessage() for r in logs.records)  # said once, without content
    world.alive()
    assert world.post().status_code == 200


def test_huge_answer_is_relayed_whole_with_memory_bounded(world: World, logs: pytest.LogCaptureFixture) -> None:
    size = 0
    tracemalloc.start()
    try:
        with httpx.stream(
            "POST",
            world.url + "/anthropic/v1/messages",
            content=json.dumps(MESSAGES).encode(),
            headers={"x-hostile": "huge"},
            timeout=20,
        ) as answer:
            for chunk in answer.iter_raw():
                size += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answer.status_code == 200
    assert size > BIG_ANSWER
    assert_no_key(logs)
    assert peak < BIG_ANSWER // 4, (
        f"the gateway held {peak / 2**20:.0f} MiB while relaying a {BIG_ANSWER / 2**20:.0f} MiB answer "
        "(the ledger's recorder buffers the whole answer, then parses it)"
    )


def test_hanging_upstream_is_a_504(world: World, logs: pytest.LogCaptureFixture) -> None:
    started = time.monotonic()
    answer = world.post("hang")
    assert answer.status_code == 504
    assert time.monotonic() - started < 3 * TIMEOUT + 1
    assert "time" in error_of(answer)
    assert_no_key(logs, answer)


def test_upstream_stalling_mid_stream_does_not_hold_the_client(world: World, logs: pytest.LogCaptureFixture) -> None:
    payload = json.dumps({**MESSAGES, "stream": True}).encode()
    started = time.monotonic()
    received = b""
    # the gateway ending the stream by cutting it is an acceptable end
    with (
        suppress(httpx.HTTPError),
        httpx.stream(
            "POST", world.url + "/anthropic/v1/messages", content=payload, headers={"x-hostile": "stall"}, timeout=10
        ) as answer,
    ):
        for chunk in answer.iter_raw():
            received += chunk
    assert received.startswith(b"event: message_start")
    assert time.monotonic() - started < 3 * TIMEOUT + 2, "the stream stayed open past the gateway's timeout"
    assert_no_key(logs, received)
    world.alive()


def test_unreachable_upstream_is_a_502(world: World, logs: pytest.LogCaptureFixture) -> None:
    answer = world.post(path="/closed/v1/messages")
    assert answer.status_code == 502
    assert "reached" in error_of(answer)
    assert_no_key(logs, answer)


@pytest.mark.parametrize(
    ("how", "status"),
    [({"content": b"{not json"}, 400), ({"mode": "hang"}, 504), ({"path": "/closed/v1/messages"}, 502)],
    ids=["malformed-json", "upstream-hangs", "upstream-unreachable"],
)
def test_the_gateways_own_answers_carry_its_headers(
    world: World, logs: pytest.LogCaptureFixture, how: dict[str, Any], status: int
) -> None:
    """Every answer carries thinkseal-kept and thinkseal-unsealed (issue 21),
    the gateway's own refusals included."""
    answer = world.post(**how)
    assert answer.status_code == status
    assert "thinkseal-kept" in answer.headers, dict(answer.headers)
    assert "thinkseal-unsealed" in answer.headers, dict(answer.headers)
    assert_no_key(logs, answer)


def test_upstream_echoing_the_key_does_not_hand_it_to_the_client(world: World, logs: pytest.LogCaptureFixture) -> None:
    answer = world.post("echo-key")
    assert answer.status_code == 401
    assert KEY.encode() not in answer.content, "the gateway relayed the upstream key the upstream echoed"
    assert_no_key(logs, answer)


def test_a_key_split_across_chunks_is_hidden_and_nothing_else_is_held() -> None:
    from thinkseal.gateway._app import _Masker  # noqa: PLC0415 - the relay's masking, cut every way

    key = b"sk-ant-secret-0123"
    body = b'{"error": "bad key ' + key + b'", "again": "' + key + b'"}\n\n'
    for cut in range(len(body) + 1):
        masker = _Masker(key)
        first = masker.feed(body[:cut])
        out = first + masker.feed(body[cut:]) + masker.flush()
        assert out == body.replace(key, b"*" * len(key)), cut
    event = b"event: ping\ndata: {}\n\n"
    assert _Masker(key).feed(event) == event  # an event is not held back
