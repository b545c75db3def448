"""What the sync and async clients share, with no I/O: preparing a request
(with the ``ReplayError`` policy), where and how it is sent, which failures are
retried and after how long, and the recovery from a provider's rejection of
replayed thinking.

Recovery: when the provider answers 400 with one of its documented messages
for thinking that does not verify (``Connection.rejections``), and the request
replayed sealed thinking, the offending turn is unsealed (``unsealed()``, so it
is never sent sealed again) and the request is prepared and sent once more.
Every later turn that was bound over the offending turn's sealed form goes out
unsealed by the replay rules themselves. Which turn that is, and which
messages are such rejections, the adapter says (``Provider.rejected_turn``):
the client holds no provider's knowledge.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from .._conversation import Conversation
from .._errors import ProviderError, ReplayError, ResponseError, ValidationError
from .._limits import limits
from .._messages import AssistantMessage
from .._reply import Recovery
from ..providers import PreparedRequest, provider
from ..providers._base import REPLAY_ERROR_WAYS
from ._auth import Auth, aws_region, checked_headers, lowered, make_auth
from ._origin import checked_base_url

ReplayErrorPolicy = Literal["raise", "drop_block", "disable_thinking"]
POLICIES: Final[tuple[str, ...]] = ("raise", *REPLAY_ERROR_WAYS)
# The statuses the official SDKs retry: timeout, conflict, rate limit, server errors.
RETRY_STATUSES: Final[frozenset[int]] = frozenset({408, 409, 429})
MAX_RETRY_AFTER: Final[float] = 60.0
_LOCATION = re.compile(r"/locations/([^/]+)/")


class Exchange:
    """One client's configuration and the decisions that need no I/O."""

    def __init__(
        self,
        provider_id: str,
        *,
        api_key: str | None,
        base_url: str | None,
        account: str | None,
        aliases: Mapping[str, str] | None,
        credentials: Any,
        region: str | None,
        max_retries: int,
        on_replay_error: str,
        headers: Mapping[str, str] | None,
    ) -> None:
        self.adapter = provider(provider_id, account, aliases=aliases)
        connection = self.adapter.connection
        self.connection = connection
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValidationError("max_retries: expected a non-negative int", path="max_retries")
        if on_replay_error not in POLICIES:
            raise ValidationError(f"on_replay_error: expected one of {', '.join(POLICIES)}", path="on_replay_error")
        self.max_retries = max_retries
        self.on_replay_error = on_replay_error
        self.region = aws_region(region) if connection.auth == "aws" else region
        self.base_url = checked_base_url(base_url or _env_base_url(connection.base_url_env) or connection.base_url)
        self.auth: Auth = make_auth(provider_id, connection, api_key, credentials, self.region)
        self.headers = checked_headers(headers)

    # -- preparing ---------------------------------------------------------------------

    def prepare(
        self, conversation: Conversation, model: str, stream: bool, options: Mapping[str, Any]
    ) -> tuple[PreparedRequest, tuple[Recovery, ...]]:
        """The request, and the recovery from a ``ReplayError`` when the policy took one."""
        try:
            return self.adapter.prepare(conversation, model=model, stream=stream, **options), ()
        except ReplayError as error:
            if self.on_replay_error not in self.adapter.replay_error_ways:
                raise  # "raise", or a way out this adapter does not offer
            way = self.on_replay_error
            resolved = self.adapter.resolve_replay_error(options, way)
            request = self.adapter.prepare(conversation, model=model, stream=stream, **resolved)
            return request, (Recovery("replay-error", error, way=way),)

    def after_rejection(
        self,
        conversation: Conversation,
        request: PreparedRequest,
        error: ProviderError,
        model: str,
        stream: bool,
        options: Mapping[str, Any],
    ) -> tuple[Conversation, PreparedRequest, tuple[Recovery, ...]]:
        """The conversation and request to send once more after ``error``, or
        ``error`` raised again when it is not a rejection of replayed thinking."""
        index = self.offending_turn(conversation, request, error)
        if index is None:
            raise error
        messages = list(conversation.messages)
        turn = messages[index]
        assert isinstance(turn, AssistantMessage)
        messages[index] = turn.unsealed()
        retried = conversation.with_messages(messages)
        request, resolved = self.prepare(retried, model, stream, options)
        return retried, request, (Recovery("provider-rejected", error, unsealed=(index,)), *resolved)

    def offending_turn(self, conversation: Conversation, request: PreparedRequest, error: ProviderError) -> int | None:
        """The index of the turn to unseal for ``error``, or None if ``error``
        is not the provider rejecting thinking this request replayed (the
        adapter knows its rejections and which turn one names)."""
        if error.status != 400:
            return None
        return self.adapter.rejected_turn(request.replay, error.message)

    # -- sending -------------------------------------------------------------------------

    def url(self, request: PreparedRequest) -> str:
        base = self.base_url
        if "{region}" in base:
            base = base.replace("{region}", self.region or "")
        if "{location}" in base:
            found = _LOCATION.search(request.path)
            location = found[1] if found else "global"
            base = base.replace("{location}-", "") if location == "global" else base.replace("{location}", location)
        return base + request.path

    def request_headers(self, request: PreparedRequest, url: str) -> dict[str, str]:
        """The headers of one attempt (signed anew each time: SigV4 signs the time)."""
        headers = {"content-type": "application/json", "user-agent": "thinkseal", **self.headers}
        headers.update(lowered(request.headers))
        headers["content-length"] = str(request.content_length)
        self.auth.sign(url, request.content if self.auth.needs_body else b"", headers)
        return headers

    def content(self, request: PreparedRequest) -> bytes | None:
        """The body as one ``bytes`` where the credentials were computed over it
        (SigV4), so exactly those bytes go out; None to send ``request.chunks()``:
        the shared fragments, never joined into one copy."""
        return request.content if self.auth.needs_body else None

    def error(self, status: int, headers: Mapping[str, str], raw: bytes) -> ProviderError:
        from ._errors import provider_error  # noqa: PLC0415 - error path only

        return provider_error(self.adapter.id, status, lowered(headers), raw)

    def transport_error(self, exc: Exception) -> ProviderError:
        kind = "timeout" if "Timeout" in type(exc).__name__ else "connection_error"
        return ProviderError(f"{type(exc).__name__}: {exc}", provider=self.adapter.id, type=kind)

    def undecodable(self, exc: Exception) -> ResponseError:
        """A body that does not decode as its ``Content-Encoding`` says (httpx's ``DecodingError``)."""
        return ResponseError(f"not decodable as its Content-Encoding says ({exc})", path="response body")

    def retry_delay(self, attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait before attempt ``attempt + 1`` after ``error``, or None
        not to retry: only rate limits, server errors, timeouts and lost
        connections are retried, ``max_retries`` times, with exponential backoff
        and jitter, or after the provider's ``retry-after`` when it is short."""
        if attempt >= self.max_retries:
            return None
        if error.status is not None and error.status not in RETRY_STATUSES and error.status < 500:
            return None
        if error.retry_after is not None and error.retry_after <= MAX_RETRY_AFTER:
            return float(error.retry_after)
        return min(0.5 * 2.0**attempt, 8.0) * (0.75 + random.random() / 4)

    def within_limit(self, size: int) -> None:
        """Refuse a response body or stream that has grown past ``Limits.max_body``
        (checked as it arrives, so an endless answer never fills memory)."""
        limit = limits().max_body
        if size > limit:
            raise ResponseError(
                f"{size} bytes received, over the limit of {limit} (Limits.max_body)", path="response body"
            )

    def decoded(self, raw: bytes) -> Mapping[str, Any]:
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ResponseError(f"not valid JSON ({type(exc).__name__})", path="response body") from None
        if not isinstance(value, dict):
            raise ResponseError(f"expected a JSON object, got {type(value).__name__}", path="response body")
        return value


def _env_base_url(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value if "://" in value else f"http://{value}"  # OLLAMA_HOST may be host:port
    return None
