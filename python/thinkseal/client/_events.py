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
    ``ResponseError`` if what is left is not a whole event."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.count = 0
        self.done = False  # an explicit end marker was seen (SSE ``[DONE]``)

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        raise NotImplementedError

    def close(self) -> list[dict[str, Any]]:
        raise NotImplementedError


class _Lines(Decoder):
    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self._pending = b""

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            self.line(line.rstrip(b"\r"), events)
        return events

    def line(self, line: bytes, events: list[dict[str, Any]]) -> None:
        raise NotImplementedError


class SseDecoder(_Lines):
    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self._data: list[bytes] = []

    def line(self, line: bytes, events: list[dict[str, Any]]) -> None:
        if not line:
            self._dispatch(events)
        elif line.startswith(b"data:"):
            self._data.append(line[5:].removeprefix(b" "))
        # "event:", "id:", "retry:" and ":" comments carry nothing the adapters read:
        # every provider's data object names its own type.

    def _dispatch(self, events: list[dict[str, Any]]) -> None:
        if not self._data:
            return
        data = b"\n".join(self._data)
        self._data = []
        if data.strip() == b"[DONE]":
            self.done = True
            return
        self.count += 1
        events.append(_event(self.provider, data, self.count))

    def close(self) -> list[dict[str, Any]]:
        # A final event without its blank line still counts when it is whole JSON.
        events: list[dict[str, Any]] = []
        if self._pending.strip():
            self.line(self._pending.rstrip(b"\r"), events)
            self._pending = b""
        self._dispatch(events)
        return events


class NdjsonDecoder(_Lines):
    def line(self, line: bytes, events: list[dict[str, Any]]) -> None:
        if line.strip():
            self.count += 1
            events.append(_event(self.provider, line, self.count))

    def close(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        self.line(self._pending, events)
        self._pending = b""
        return events


class AwsEventStreamDecoder(Decoder):
    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]  # noqa: PLC0415

        self._buffer = EventStreamBuffer()

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        from botocore.eventstream import ParserError  # noqa: PLC0415

        self._buffer.add_data(chunk)
        events: list[dict[str, Any]] = []
        try:
            for message in self._buffer:
                events.append(self._message(message.headers, message.payload))
        except ParserError as exc:
            raise ResponseError(
                f"not an AWS event-stream frame ({exc})", path=f"stream event {self.count + 1}"
            ) from None
        return events

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
        # botocore keeps an incomplete frame in its buffer: a cut stream leaves one.
        if getattr(self._buffer, "_data", b""):
            raise ResponseError("the stream ended inside an event frame", path=f"stream event {self.count + 1}")
        return []


def decoder(stream_format: str, provider: str) -> Decoder:
    if stream_format == "sse":
        return SseDecoder(provider)
    if stream_format == "ndjson":
        return NdjsonDecoder(provider)
    return AwsEventStreamDecoder(provider)
