"""The official SDKs' response and stream-event objects, accepted where the
provider's decoded JSON is: ``PreparedRequest.receive`` and ``parse`` and
``StreamAccumulator.feed`` turn them into the wire-shaped dict once, here.

Duck-typed, so no SDK is imported: an object with a ``model_dump`` method (the
pydantic models of anthropic, openai, mistralai, ollama and google-genai) is
dumped with ``mode="json", by_alias=True``: the wire's field names
(google-genai's snake_case fields are camelCase on the wire, and its bytes,
such as thought signatures, base64 text, as on the wire). mistralai's stream
yields ``CompletionEvent`` objects whose only field is the chunk (``data``):
the chunk is what is fed. Anything that is neither a mapping nor such an
object raises ``ResponseError`` saying what is expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeAlias

from .._errors import ResponseError


class SupportsModelDump(Protocol):
    """An SDK response object: a pydantic model (anthropic, openai, mistralai,
    ollama, google-genai)."""

    def model_dump(self, *, mode: str, by_alias: bool) -> dict[str, Any]: ...


Response: TypeAlias = Mapping[str, Any] | SupportsModelDump

EXPECTED = (
    "expected the provider's JSON object as decoded from HTTP, or an official SDK response or event object "
    "(one with model_dump(), e.g. anthropic's Message or openai's ChatCompletion)"
)


def wire_dict(value: object, what: str = "response") -> Mapping[str, Any]:
    """``value`` as the wire-shaped mapping the adapters read."""
    if isinstance(value, Mapping):
        return value
    dump = getattr(value, "model_dump", None)
    if not callable(dump) or isinstance(value, type):
        raise ResponseError(f"{EXPECTED}; got {type(value).__name__}", path="$")
    try:
        dumped = dump(mode="json", by_alias=True)
    except Exception as err:  # an SDK's own serialiser failing is a malformed response
        raise ResponseError(f"{type(value).__name__}.model_dump() failed: {err}", path="$") from None
    if not isinstance(dumped, Mapping):
        raise ResponseError(
            f"{type(value).__name__}.model_dump() gave {type(dumped).__name__}, not an object", path="$"
        )
    if what == "event" and set(dumped) == {"data"} and isinstance(dumped["data"], Mapping):
        return dumped["data"]  # mistralai's CompletionEvent: the chunk is the event
    return dumped
