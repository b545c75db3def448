"""The client against hostile answers over real loopback HTTP, sync and async:
``Retry-After`` headers that are not a finite wait, error bodies that never
end, bodies in one-byte chunks, a streamed line that never ends and bodies
that do not decode as their ``Content-Encoding`` says. Each ends in a clear
thinkseal error or value (never an httpx exception), in memory bounded by
``thinkseal.Limits``; a stream compressed on the way is decoded."""

from __future__ import annotations

import asyncio
import gzip
import json
import math
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, ProviderError, ResponseError, UserMessage
from thinkseal.testing import Step
from thinkseal.testing.bedrock import eventstream_frame

from .conftest import HostileFactory
from .drive import DRIVERS, Driver
from .hostile import Answer, Hostile, Seen, forward
from .test_loop import MODELS

HELLO = Conversation([UserMessage("Hello")])
ASYNC = pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
WEEK = 7 * 24 * 3600.0


def _call(driver: Driver, provider: str, server: Hostile, **kw: Any) -> thinkseal.Reply:
    options = {"max_tokens": 10} if provider == "anthropic" else {}
    return driver.call(provider, server.url, HELLO, "m", options=options, **kw)


@ASYNC
@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "nan"}, None),
        ({"retry-after": "NaN"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "-inf"}, None),
        ({"retry-after": "infinity"}, None),
        ({"retry-after": "-1"}, None),
        ({"retry-after": "+3"}, None),
        ({"retry-after": "1e3"}, None),
        ({"retry-after": "1_000"}, None),
        ({"retry-after": "1e400"}, None),
        ({"retry-after": "9" * 400}, None),  # float() makes it inf
        ({"retry-after": "99999999999"}, None),  # finite, but no rate limit lasts 3,000 years
        ({"retry-after": str(int(WEEK) + 1)}, None),
        ({"retry-after-ms": "nan"}, None),
        ({"retry-after-ms": "inf"}, None),
        ({"retry-after-ms": "-5"}, None),
        ({"retry-after-ms": "nan", "retry-after": "2"}, 2.0),  # an unreadable ms falls back to seconds
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.4"}, 0.4),
        ({"retry-after": str(int(WEEK))}, WEEK),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date past: no wait
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 -0000"}, 0.0),  # RFC 5322's UTC, was a TypeError
        ({"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"}, None),
        ({"retry-after": "Fri, 32 Dec 2015 23:59:59 GMT"}, None),
    ],
    ids=repr,
)
def test_retry_after_is_a_finite_non_negative_wait_or_none(
    headers: dict[str, str], expected: float | None, asynchronous: bool, hostile: HostileFactory
) -> None:
    body = json.dumps({"error": {"message": "Slow down", "type": "rate_limit"}}).encode()
    server = hostile(lambda seen, s: Answer(429, {"content-type": "application/json", **headers}, body))
    with pytest.raises(ProviderError) as caught:
        _call(Driver(asynchronous, False), "openai", server, max_retries=0)
    error = caught.value
    assert error.status == 429
    assert error.message == "Slow down"
    if expected is None:
        assert error.retry_after is None
    else:
        assert error.retry_after == expected
        assert math.isfinite(error.retry_after)


@ASYNC
def test_a_broken_retry_after_still_retries_with_backoff(asynchronous: bool, hostile: HostileFactory) -> None:
    reply = json.dumps(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}]}
    ).encode()

    def answer(seen: Seen, server: Hostile) -> Answer:
        if len(server.seen) == 1:
            return Answer(503, {"retry-after": "nan", "content-type": "application/json"}, b"{}")
        return Answer(200, {"content-type": "application/json"}, reply)

    server = hostile(answer)
    assert _call(Driver(asynchronous, False), "openai", server, max_retries=1).message.content == "Done."
    assert len(server.seen) == 2


# -- bodies that never end, or come a byte at a time ----------------------------------------


def _endless(piece: bytes, total: int) -> Iterator[bytes]:
    """``piece`` again and again, ``total`` bytes at most (a server that would send forever)."""
    for _ in range(total // len(piece)):
        yield piece


@ASYNC
@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
def test_an_endless_error_body_is_read_only_to_its_start(
    asynchronous: bool, streamed: bool, hostile: HostileFactory
) -> None:
    start = b'{"error": {"message": "Server on fire", "padding": "'
    total = 256 * 2**20
    server = hostile(
        lambda seen, s: Answer(500, {"content-type": "application/json"}, [start, *_endless(b"x" * 65536, total)])
    )
    with pytest.raises(ProviderError) as caught:
        _call(Driver(asynchronous, streamed), "openai", server, max_retries=0)
    assert caught.value.status == 500
    assert caught.value.message.startswith(start.decode())  # not JSON once cut: its text is the message
    assert len(caught.value.message) <= 2000
    # the client hung up after ERROR_BODY_LIMIT; what the server wrote is that
    # plus what the sockets' buffers took, never the quarter GiB on offer
    assert server.sent < total // 8


@ASYNC
def test_a_body_in_one_byte_chunks_is_held_in_one_buffer(asynchronous: bool, hostile: HostileFactory) -> None:
    """Each chunk as a ``bytes`` of its own in a list costs some 40 bytes per
    byte of body: past ``Limits.max_body`` many times over before the check.
    The most memory in use while the answer is read is counted (the client is
    made before: an httpx client's TLS context is not part of it)."""
    reply = json.dumps(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}]}
    ).encode()
    body = b" " * (2**15 - len(reply)) + reply  # JSON may start with whitespace
    chunks = [body[i : i + 1] for i in range(len(body))]
    server = hostile(lambda seen, s: Answer(200, {"content-type": "application/json"}, chunks))

    def traced(send: Any) -> tuple[thinkseal.Reply, int]:
        tracemalloc.start()
        try:
            return send(), tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    if asynchronous:

        async def run() -> tuple[thinkseal.Reply, int]:
            async with thinkseal.AsyncClient("openai", api_key="k", base_url=server.url, max_retries=0) as client:
                tracemalloc.start()
                try:
                    return await client.send(HELLO, model="m"), tracemalloc.get_traced_memory()[1]
                finally:
                    tracemalloc.stop()

        got, peak = asyncio.run(run())
    else:
        with thinkseal.Client("openai", api_key="k", base_url=server.url, max_retries=0) as client:
            got, peak = traced(lambda: client.send(HELLO, model="m"))
    assert got.message.content == "Done."
    assert peak < 32 * len(body), f"peak {peak} bytes for a body of {len(body)}"


@pytest.fixture
def max_body() -> Iterator[int]:
    previous = thinkseal.set_limits(thinkseal.Limits(max_body=2**20))
    try:
        yield 2**20
    finally:
        thinkseal.set_limits(previous)


@ASYNC
@pytest.mark.parametrize(
    ("provider", "content_type", "start", "piece"),
    [
        ("anthropic", "text/event-stream", b'data: {"type": "message_start", "message": "', b"a" * 4096),
        ("ollama", "application/x-ndjson", b'{"message": "', b"a" * 4096),
        (
            "bedrock",
            "application/vnd.amazon.eventstream",
            eventstream_frame("contentBlockDelta", {"delta": {"text": "b" * (8 * 2**20)}})[:4096],
            b"b" * 4096,
        ),
    ],
    ids=["sse", "ndjson", "aws-eventstream"],
)
def test_a_streamed_event_that_never_ends_stops_at_max_body(
    provider: str,
    content_type: str,
    start: bytes,
    piece: bytes,
    asynchronous: bool,
    max_body: int,
    hostile: HostileFactory,
) -> None:
    total = 64 * max_body
    server = hostile(lambda seen, s: Answer(200, {"content-type": content_type}, [start, *_endless(piece, total)]))
    kw: dict[str, Any] = {"region": "us-east-1"} if provider == "bedrock" else {}
    with pytest.raises(ResponseError, match=r"Limits\.max_body"):
        _call(Driver(asynchronous, True), provider, server, max_retries=0, **kw)
    assert server.sent < total // 4  # the client stopped reading


# -- Content-Encoding -----------------------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS, ids=str)
def test_a_body_that_does_not_decode_is_a_response_error(driver: Driver, hostile: HostileFactory) -> None:
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    server = hostile(lambda seen, s: Answer(200, headers, b"not gzip at all"))
    with pytest.raises(ResponseError, match="Content-Encoding") as caught:
        _call(driver, "openai", server, max_retries=0)
    assert caught.value.path == "response body"


@pytest.mark.parametrize("driver", DRIVERS, ids=str)
def test_an_error_body_that_does_not_decode_keeps_its_status(driver: Driver, hostile: HostileFactory) -> None:
    headers = {"content-type": "application/json", "content-encoding": "deflate"}
    server = hostile(lambda seen, s: Answer(503, headers, b"\xff\xfe not deflate"))
    with pytest.raises(ProviderError) as caught:
        _call(driver, "openai", server, max_retries=0)
    assert caught.value.status == 503


@ASYNC
@pytest.mark.parametrize("provider", ["anthropic", "ollama", "bedrock"])  # SSE, NDJSON, AWS event stream
def test_a_compressed_stream_is_decoded(
    provider: str, asynchronous: bool, emulator_of: Any, hostile: HostileFactory
) -> None:
    """A proxy that gzips what it relays: the stream is framed after decoding, as the body is."""
    emu = emulator_of(provider)

    def answer(seen: Seen, server: Hostile) -> Answer:
        relayed = forward(seen, emu.server_url, seen.path)
        headers = {**relayed.headers, "content-encoding": "gzip"}
        assert isinstance(relayed.body, bytes)
        whole = gzip.compress(relayed.body)
        return Answer(relayed.status, headers, [whole[i : i + 64] for i in range(0, len(whole), 64)])

    front = hostile(answer)
    emu.script(Step(thinking="Think first.", text="Compressed and whole."))
    path = emu.base_url.removeprefix(emu.server_url)
    kw: dict[str, Any] = {"region": "us-east-1"} if provider == "bedrock" else {}
    options = dict(emu.options, **emu.thinking_options)
    reply = Driver(asynchronous, True).call(provider, front.url + path, HELLO, MODELS[provider], options=options, **kw)
    assert reply.message.content == "Compressed and whole."
