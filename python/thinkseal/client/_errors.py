"""A provider's error answer as a ``ProviderError``: the HTTP status, the
provider's error type and message from its error body, and its request id.

The bodies come in a handful of shapes, read here in one place:

- Anthropic (and Claude on Vertex AI): ``{"type": "error", "error": {"type", "message"}}``;
- OpenAI, OpenRouter, DeepSeek, Z.ai: ``{"error": {"message", "type", "code"}}``;
- Gemini and Vertex AI: ``{"error": {"code", "message", "status"}}`` (also inside a list);
- Mistral: ``{"object": "error", "message", "type"}`` or ``{"detail": ...}``;
- Bedrock: ``{"message": ...}`` with the type in the ``x-amzn-ErrorType`` header;
- Ollama: ``{"error": "..."}``.

Anything else (HTML from a proxy, an empty body) keeps the start of its text
as the message. Never raises: reading an error must not hide it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any, Final

from .._errors import ProviderError
from ..providers._response import error_text

# Response headers that carry a request id, by provider (first present wins).
REQUEST_ID_HEADERS: Final[tuple[str, ...]] = (
    "request-id",  # Anthropic
    "x-request-id",  # OpenAI, Mistral, DeepSeek
    "x-amzn-requestid",  # Bedrock
    "x-goog-request-id",
    "x-generation-id",  # OpenRouter
)
_LIMIT: Final[int] = 2000


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _kind_and_message(body: object) -> tuple[str | None, str | None]:
    """The error type and message of a decoded error body, where it has them."""
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, Mapping):
        return None, None
    error = body.get("error")
    if isinstance(error, Mapping):
        kind = _text(error.get("type")) or _text(error.get("status")) or _text(error.get("code"))
        if kind is None and isinstance(error.get("code"), int):
            kind = str(error["code"])
        return kind, _text(error.get("message")) or error_text(error)
    if isinstance(error, str):
        return None, error
    kind = _text(body.get("type")) if body.get("type") != "error" else None
    message = _text(body.get("message")) or _text(body.get("Message"))
    if message is None and "detail" in body:
        message = error_text(body["detail"])
    return kind, message


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait the provider asked for: ``retry-after-ms``, or ``retry-after``
    in seconds or as an HTTP date; None when absent or unreadable."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    from datetime import UTC, datetime  # noqa: PLC0415 - only for the rare date form

    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def request_id(headers: Mapping[str, str], body: object = None) -> str | None:
    for name in REQUEST_ID_HEADERS:
        if headers.get(name):
            return headers[name]
    if isinstance(body, Mapping) and isinstance(body.get("request_id"), str):
        return str(body["request_id"])
    return None


def provider_error(provider: str, status: int | None, headers: Mapping[str, str], raw: bytes) -> ProviderError:
    """The ``ProviderError`` for an answer with ``status`` and body ``raw``
    (``headers`` lower-cased)."""
    body: Any = None
    with contextlib.suppress(ValueError, UnicodeDecodeError, RecursionError):
        body = json.loads(raw)
    kind, message = _kind_and_message(body)
    amzn = headers.get("x-amzn-errortype")
    if amzn:
        kind = kind or amzn.split(":", 1)[0]
    if message is None:
        message = raw[:_LIMIT].decode("utf-8", "replace").strip() or "(empty body)"
    return ProviderError(
        message[:_LIMIT],
        provider=provider,
        status=status,
        type=kind,
        request_id=request_id(headers, body),
        retry_after=retry_after(headers),
    )


def stream_error(provider: str, event: Mapping[str, Any]) -> ProviderError | None:
    """The ``ProviderError`` an error event in a stream reports (Anthropic's
    ``{"type": "error", ...}``, an OpenAI-style ``{"error": {...}}``, Ollama's
    ``{"error": "..."}``), or None for any other event."""
    if event.get("type") != "error" and event.get("error") is None:
        return None
    kind, message = _kind_and_message(event)
    return ProviderError(message or "error event in the stream", provider=provider, type=kind)
