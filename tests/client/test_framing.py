"""Stream framing costs work in proportion to the bytes fed, however they are
split, and holds at most ``Limits.max_body`` of one unfinished event.

The work is counted, not timed: tracemalloc gives, for each ``feed`` call,
the most memory in use beyond what was there before it. A decoder that joins
what it holds with every new chunk allocates the whole unfinished event on
each call (quadratic in total: about 256 times the 2 MiB fed here); one that
appends to a buffer allocates only the growth, plus a few copies of the
event when it is complete and parsed (the line, its data, the JSON string)."""

from __future__ import annotations

import json
import tracemalloc
import zlib
from collections.abc import Callable, Iterator

import pytest

import thinkseal
from thinkseal import ResponseError
from thinkseal.client._events import Decoder, decoder
from thinkseal.testing.bedrock import eventstream_frame

PIECE = 4096
PIECES = 512  # 2 MiB in 4 KiB chunks: a joining decoder would allocate ~512 MiB
# Copies of a completed event while it is cut, joined and parsed; a constant.
COPIES = 8


def _allocated_per_call(feed: Callable[[bytes], object], chunks: list[bytes]) -> int:
    """The most memory each ``feed(chunk)`` had in use beyond what was in use
    before it, summed over the chunks."""
    total = 0
    tracemalloc.start()
    try:
        for chunk in chunks:
            tracemalloc.reset_peak()
            before, _ = tracemalloc.get_traced_memory()
            feed(chunk)
            total += tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return total


def _pieces(raw: bytes) -> list[bytes]:
    return [raw[i : i + PIECE] for i in range(0, len(raw), PIECE)]


def _long_text() -> str:
    return "x" * (PIECE * PIECES)


@pytest.mark.parametrize(
    ("stream_format", "raw", "last"),
    [
        ("sse", b'data: {"text": "%s"}\n\n', b""),
        ("ndjson", b'{"text": "%s"}\n', b""),
        ("sse", b'data: {"text": "%s"}', b"(no final newline)"),
    ],
    ids=["sse", "ndjson", "sse-unterminated"],
)
def test_one_long_line_in_small_chunks_costs_linear_work(stream_format: str, raw: bytes, last: bytes) -> None:
    text = _long_text()
    body = raw % text.encode()
    chunks = _pieces(body)
    frames = decoder(stream_format, "p")
    events: list[dict[str, object]] = []
    allocated = _allocated_per_call(lambda chunk: events.extend(frames.feed(chunk)), chunks)
    events.extend(frames.close())
    assert events == [{"text": text}]
    assert allocated < COPIES * len(body), f"{allocated} bytes allocated for {len(body)} fed"


def test_many_short_lines_cost_linear_work() -> None:
    body = b"".join(b'data: {"n": %d}\n\n' % n for n in range(40_000))
    frames = decoder("sse", "p")
    total = [0]
    allocated = _allocated_per_call(lambda chunk: total.append(sum(e["n"] for e in frames.feed(chunk))), _pieces(body))
    assert sum(total) == sum(range(40_000))
    # each event is a dict of some 250 bytes for its 20 bytes of line: that, not
    # the framing, sets the constant; cutting each line off the front of the
    # buffer would cost about 200 times the chunk (the lines in it) instead
    assert allocated < 25 * len(body)


def test_one_large_aws_frame_in_small_chunks_costs_linear_work() -> None:
    text = _long_text()
    body = eventstream_frame("contentBlockDelta", {"delta": {"text": text}})
    frames = decoder("aws-eventstream", "bedrock")
    events: list[dict[str, object]] = []
    allocated = _allocated_per_call(lambda chunk: events.extend(frames.feed(chunk)), _pieces(body))
    assert frames.close() == []
    assert events == [{"contentBlockDelta": {"delta": {"text": text}}}]
    assert allocated < COPIES * len(body), f"{allocated} bytes allocated for {len(body)} fed"


def test_many_aws_frames_in_one_chunk_cost_linear_work() -> None:
    frames_raw = [eventstream_frame("contentBlockDelta", {"delta": {"text": str(n)}}) for n in range(5_000)]
    body = b"".join(frames_raw)
    frames = decoder("aws-eventstream", "bedrock")
    events: list[dict[str, object]] = []
    allocated = _allocated_per_call(lambda chunk: events.extend(frames.feed(chunk)), [body])
    assert [event["contentBlockDelta"]["delta"]["text"] for event in events] == [str(n) for n in range(5_000)]  # type: ignore[index]
    assert allocated < 40 * len(body)


# -- one unfinished event is bounded ----------------------------------------------------------


@pytest.fixture
def small_body() -> Iterator[int]:
    previous = thinkseal.set_limits(thinkseal.Limits(max_body=10_000))
    try:
        yield 10_000
    finally:
        thinkseal.set_limits(previous)


@pytest.mark.parametrize(
    ("stream_format", "start", "filler"),
    [
        ("sse", b'data: {"a": 1}\n\ndata: {"text": "', b"y" * 100),
        ("sse", b'data: {"a": 1}\n\n', b"data: y\n" * 10),  # many data lines, no blank line to end the event
        ("ndjson", b'{"a": 1}\n{"text": "', b"y" * 100),
    ],
    ids=["sse-line", "sse-event", "ndjson"],
)
def test_one_event_past_max_body_is_refused_naming_the_limit(
    stream_format: str, start: bytes, filler: bytes, small_body: int
) -> None:
    frames = decoder(stream_format, "p")
    assert frames.feed(start) == [{"a": 1}]
    with pytest.raises(ResponseError, match=r"Limits\.max_body") as caught:
        _feed_all(frames, [filler] * small_body)  # each adds at least a byte to the event
    assert caught.value.path == "stream event 2"


def test_an_aws_frame_past_max_body_is_refused_naming_the_limit(small_body: int) -> None:
    frame = eventstream_frame("contentBlockDelta", {"delta": {"text": "z" * (2 * small_body)}})
    frames = decoder("aws-eventstream", "bedrock")
    with pytest.raises(ResponseError, match=r"Limits\.max_body"):
        _feed_all(frames, [frame[i : i + 100] for i in range(0, len(frame), 100)])


def _feed_all(frames: Decoder, chunks: list[bytes]) -> None:
    for chunk in chunks:
        frames.feed(chunk)


@pytest.mark.parametrize("total", [0, 15, 40])
def test_an_aws_prelude_that_cannot_hold_its_headers_is_refused(total: int) -> None:
    lengths = total.to_bytes(4, "big") + (24).to_bytes(4, "big")
    prelude = lengths + zlib.crc32(lengths).to_bytes(4, "big")  # a prelude with a valid CRC
    with pytest.raises(ResponseError, match="stream event 1"):
        decoder("aws-eventstream", "bedrock").feed(prelude + b"\0" * 64)


def test_decoded_lines_keep_their_meaning() -> None:
    """Carriage returns, blank data and a [DONE] across chunk boundaries, as before."""
    body = b'data: {"a":\r\ndata: 1}\r\n\r\ndata: [DO' + b"NE]\n\n"
    frames = decoder("sse", "p")
    assert frames.feed(body[:9]) + frames.feed(body[9:]) + frames.close() == [json.loads('{"a":\n1}')]
    assert frames.done
