"""How a provider is reached over HTTP: what ``thinkseal.Client`` needs beyond
the request an adapter prepares. Each adapter module declares one
``Connection`` as ``Adapter.connection``; nothing here is used by ``prepare``.

- ``base_url``: the provider's documented base URL, which ``req.path`` is
  relative to. ``{region}`` is filled from the client's region (Bedrock) and
  ``{location}`` from the request's path (Vertex AI: ``/locations/{location}/``,
  where ``global`` has the host without a prefix).
- ``base_url_env``: environment variables that override it, as the official
  SDKs read them (first set wins).
- ``key_env``: environment variables holding the API key (first set wins).
- ``auth``: how the key goes on the request.
- ``stream_format``: how a streamed reply is framed on the wire.
- ``rejections``: the text of the provider's HTTP 400 messages that reject
  replayed thinking which no longer verifies (a signature, encrypted content or
  a reasoning item that is stale, from another model or account). On such an
  error the client retries once with the offending turns unsealed. Each entry
  is quoted in docs/providers.md with its source.
"""

from __future__ import annotations

from typing import Final, Literal

Auth = Literal["x-api-key", "bearer", "optional-bearer", "x-goog-api-key", "aws", "google"]
StreamFormat = Literal["sse", "ndjson", "aws-eventstream"]

# Claude's own wording, also passed through by Bedrock, Vertex AI and OpenRouter.
CLAUDE_REJECTIONS: Final[tuple[str, ...]] = (
    "Invalid `signature` in `thinking` block",
    "Invalid `data` in `redacted_thinking` block",
    "blocks in the latest assistant message cannot be modified",
)


class Connection:
    # A plain class, not a dataclass: ``dataclasses`` costs milliseconds of ``import thinkseal``.
    __slots__ = ("auth", "base_url", "base_url_env", "key_env", "rejections", "stream_format")

    def __init__(
        self,
        base_url: str,
        auth: Auth,
        stream_format: StreamFormat = "sse",
        *,
        key_env: tuple[str, ...] = (),
        base_url_env: tuple[str, ...] = (),
        rejections: tuple[str, ...] = (),
    ) -> None:
        self.base_url = base_url
        self.auth: Auth = auth
        self.stream_format: StreamFormat = stream_format
        self.key_env = key_env
        self.base_url_env = base_url_env
        self.rejections = rejections

    def __repr__(self) -> str:
        return f"Connection({self.base_url!r}, {self.auth!r}, {self.stream_format!r})"

    def rejects_thinking(self, message: str) -> bool:
        """Whether a 400 ``message`` says the replayed thinking did not verify."""
        return any(text in message for text in self.rejections)


# Gemini API and Vertex AI, on a thought signature that does not verify.
GEMINI_CORRUPTED: Final[str] = "Corrupted thought signature."
VERTEX_INVALID_SIGNATURE: Final[str] = "Thought signature is not valid"
# OpenAI Responses: encrypted reasoning from another organisation or model, or a
# stored item this organisation does not have.
RESPONSES_REJECTIONS: Final[tuple[str, ...]] = (
    "could not be verified",
    "Items are not persisted when `store` is set to false",
)
