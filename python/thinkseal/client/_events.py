"""Streamed replies, unframed: bytes as they arrive → the JSON events an
adapter's ``stream().feed`` takes. One decoder per ``Connection.stream_format``:

- ``sse``: server-sent events; each ``data:`` payload is one JSON event
  (OpenAI-style ``[DONE]`` ends the stream and is not an event);
- ``ndjson``: one JSON object per line (Ollama);
- ``aws-eventstream``: AWS's binary event-stream frames (Bedrock's
  ``/converse-stream``), decoded with botocore (imported when first used); each
  event becomes ``{event_type: payload}`` as boto3 gives it, and an exception
  frame a ``ProviderError``.

The decoders are incremental and transport-neutral (the sync and async clients
share them). An event that is not a JSON object raises ``ResponseError``
naming its position; an error event raises ``ProviderError``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._errors import ProviderError, ResponseError
from .._limits import limits
from ._errors import stream_error


def _event(provider: str, text: bytes | str, position: int) -> dict[str, Any]:
    try:
        event = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ResponseError(f"not valid JSON ({exc.__class__.__name__})", path=f"stream event {position}") from None
    if not isinstance(event, dict):
        raise ResponseError(f"expected a JSON object, got {type(event).__name__}", path=f"stream event {position}")
    error = stream_error(provider, event)
    if error is not None:
        raise error
    return event


class Decoder:
    """``feed(chunk)`` returns the events completed by ``chunk``; ``close()``
    at the end of the body returns a last event left unterminated, or raises
    ``ResponseError`` if what is left is not a whole event.

    Linear in the bytes fed however they are split: each byte is searched for
    a boundary once, as it arrives, and the event being received grows in one
    buffer (never re-joined with every chunk, which costs quadratic time on a
    long event sent in small pieces). What one unfinished event holds is
    bounded by ``Limits.max_body``."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.count = 0
        self.done = False  # an explicit end marker was seen (SSE ``[DONE]``)

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        raise NotImplementedError

    def close(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _within_limit(self, held: int) -> None:
        limit = limits().max_body
        if held > limit:
            raise ResponseError(
                f"{held} bytes of one event without its end, over the limit of {limit} (Limits.max_body)",
                path=f"stream event {self.count + 1}",
            )


class _Lines(Decoder):
    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self._pending = bytearray()  # what came after the last newline

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        end = chunk.rfind(b"\n")
        if end < 0:
            self._pending += chunk
        else:
            self._pending += chunk[:end]
            complete, self._pending = bytes(self._pending), bytearray(chunk[end + 1 :])
            for line in complete.split(b"\n"):
                self.line(line.rstrip(b"\r"), events)
        self._within_limit(self.held())
        return events

    def held(self) -> int:
        """Bytes of the event being received."""
        return len(self._pending)

    def line(self, line: bytes, events: list[dict[str, Any]]) -> None:
        raise NotImplementedError


class SseDecoder(_Lines):
    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self._data: list[bytes] = []
        self._size = 0  # bytes in _data

    def line(self, line: bytes, events: list[dict[str, Any]]) -> None:
        if not line:
            self._dispatch(events)
        elif line.startswith(b"data:"):
            data = line[5:].removeprefix(b" ")
            self._data.append(data)
            self._size += len(data)
            self._within_limit(self.held())
        # "event:", "id:", "retry:" and ":" comments carry nothing the adapters read:
        # every provider's data object names its own type.

    def held(self) -> int:
        return len(self._pending) + self._size

    def _dispatch(self, events: list[dict[str, Any]]) -> None:
        if not self._data:
            return
        data = b"\n".join(self._data)
        self._data, self._size = [], 0
        if data.strip() == b"[DONE]":
            self.done = True
            return
        self.count += 1
        events.append(_event(self.provider, data, self.count))

    def close(self) -> list[dict[str, Any]]:
        # A final event without its blank line still counts when it is whole JSON.
        events: list[dict[str, Any]] = []
        if self._pending.strip():
            self.line(bytes(self._pending).rstrip(b"\r"), events)
            self._pending = bytearray()
        self._dispatch(events)
        return events


class NdjsonDecoder(_Lines):
    def line(self, line: bytes, events: list[dict[str, Any]]) -> None:
        if line.strip():
            self.count += 1
            events.append(_event(self.provider, line, self.count))

    def close(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        self.line(bytes(self._pending), events)
        self._pending = bytearray()
        return events


# An event-stream frame: a 12-byte prelude (total length, headers length, CRC),
# the headers, the payload, a 4-byte CRC of the whole.
_PRELUDE = 12
_FRAME_OVERHEAD = _PRELUDE + 4


class AwsEventStreamDecoder(Decoder):
    """Frames are cut here, by the total length in each prelude, and botocore
    parses one whole frame at a time (its own buffer appends every chunk to one
    ``bytes``, quadratic on a large frame in small pieces)."""

    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        from botocore import eventstream  # type: ignore[import-untyped]  # noqa: PLC0415

        self._eventstream = eventstream
        self._pending = bytearray()  # the frames not yet whole
        self._length: int | None = None  # of the first of them, once its prelude is checked

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        self._pending += chunk
        events: list[dict[str, Any]] = []
        start = 0
        try:
            while True:
                if self._length is None:
                    if len(self._pending) - start < _PRELUDE:
                        break
                    self._length = self._frame_length(bytes(self._pending[start : start + _PRELUDE]))
                if len(self._pending) - start < self._length:
                    break
                frame = bytes(self._pending[start : start + self._length])
                start, self._length = start + self._length, None
                events.append(self._frame(frame))
        except self._eventstream.ParserError as exc:
            raise ResponseError(
                f"not an AWS event-stream frame ({exc})", path=f"stream event {self.count + 1}"
            ) from None
        del self._pending[:start]
        self._within_limit(len(self._pending))
        return events

    def _frame_length(self, prelude: bytes) -> int:
        """The total length a prelude declares, once botocore has checked its
        CRC and its header and payload lengths against its own maxima."""
        total, headers = int.from_bytes(prelude[:4], "big"), int.from_bytes(prelude[4:8], "big")
        if total < _FRAME_OVERHEAD + headers:
            raise ResponseError(
                f"a frame of {total} bytes cannot hold its {headers} bytes of headers",
                path=f"stream event {self.count + 1}",
            )
        probe = self._eventstream.EventStreamBuffer()
        probe.add_data(prelude)
        next(probe, None)  # parses and checks the prelude, then stops: the rest is not there
        return total

    def _frame(self, frame: bytes) -> dict[str, Any]:
        buffer = self._eventstream.EventStreamBuffer()
        buffer.add_data(frame)
        message = next(buffer)
        return self._message(message.headers, message.payload)

    def _message(self, headers: Mapping[str, Any], payload: bytes) -> dict[str, Any]:
        self.count += 1
        kind = headers.get(":message-type")
        if kind in ("exception", "error"):
            name = headers.get(":exception-type") or headers.get(":error-code")
            try:
                message = json.loads(payload).get("message")
            except (ValueError, AttributeError):
                message = None
            text = message or headers.get(":error-message") or payload[:500].decode("utf-8", "replace")
            raise ProviderError(str(text), provider=self.provider, type=name)
        event_type = headers.get(":event-type")
        if not isinstance(event_type, str):
            raise ResponseError("event frame without :event-type", path=f"stream event {self.count}")
        return {event_type: _event(self.provider, payload, self.count)}

    def close(self) -> list[dict[str, Any]]:
        if self._pending:
            raise ResponseError("the stream ended inside an event frame", path=f"stream event {self.count + 1}")
        return []


def decoder(stream_format: str, provider: str) -> Decoder:
    if stream_format == "sse":
        return SseDecoder(provider)
    if stream_format == "ndjson":
        return NdjsonDecoder(provider)
    return AwsEventStreamDecoder(provider)
