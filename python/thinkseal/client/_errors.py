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
import re
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
# Bytes of an error answer the client reads: error bodies are small, and what
# is past this is never needed for the message (itself cut at _LIMIT).
ERROR_BODY_LIMIT: Final[int] = 64 * 2**10
# delay-seconds is digits (RFC 9110, section 10.2.3); a fraction is accepted, as
# some servers send one. No sign, exponent, "nan" or "inf" (float() takes those).
_DECIMAL: Final = re.compile(r"[0-9]+(?:\.[0-9]+)?")
# The longest wait read from a header (a week): anything longer is a broken
# header, not a rate limit, and would overflow time.sleep or a deadline.
RETRY_AFTER_CEILING: Final[float] = 7 * 24 * 3600.0


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


def _seconds(text: str, per_second: float) -> float | None:
    """``text`` in seconds (``per_second`` of its units make one), or None
    unless it is a plain non-negative decimal within ``RETRY_AFTER_CEILING``."""
    text = text.strip()
    if _DECIMAL.fullmatch(text) is None:
        return None
    value = float(text) / per_second  # a very long digit string is inf here, and refused below
    return value if value <= RETRY_AFTER_CEILING else None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait the provider asked for, in seconds: ``retry-after-ms``, or
    ``retry-after`` in seconds or as an HTTP date (0 for a date past). Always a
    finite number from 0 to ``RETRY_AFTER_CEILING``; None when absent or
    anything else (``nan``, ``inf``, negative, absurdly large, unreadable)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        value = _seconds(millis, 1000.0)
        if value is not None:
            return value
    text = headers.get("retry-after")
    if text is None:
        return None
    value = _seconds(text, 1.0)
    if value is not None:
        return value
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    from datetime import UTC, datetime  # noqa: PLC0415 - only for the rare date form

    if when.tzinfo is None:  # "-0000": UTC, in RFC 5322's words "no information about the local time zone"
        when = when.replace(tzinfo=UTC)
    wait = max((when - datetime.now(UTC)).total_seconds(), 0.0)
    return wait if wait <= RETRY_AFTER_CEILING else None


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
