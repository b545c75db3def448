"""What every provider adapter shares: ``Provider.prepare`` → ``PreparedRequest``
with ``receive`` and ``stream``, the response-path helpers, and the registry.

An adapter (one module per wire format) subclasses ``Provider`` and supplies:

- ``build(conversation, replay, model, options, stream) -> Built``: the body
  (from ``replay.sent_messages()`` and ``replay.code(i)``), path and headers;
- ``parse(response) -> AssistantMessage``: an unbound reply from a response body;
- ``new_stream() -> StreamParser``: an accumulator of streamed events.

The base binds replies to the request as it was sent, so no adapter can forget.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .._binding import Origin
from .._conversation import Conversation
from .._errors import ResponseError, ValidationError
from .._messages import AssistantMessage
from .._replay import Replay, ReplayReport


class Built:
    """An adapter's output for one request."""

    __slots__ = ("body", "content", "headers", "path")

    def __init__(self, body: dict[str, Any], content: bytes, path: str, headers: Mapping[str, str]) -> None:
        self.body = body
        self.content = content
        self.path = path
        self.headers = dict(headers)


class StreamParser:
    """Accumulates one streamed reply; ``finish`` returns it unbound."""

    def feed(self, event: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def finish(self) -> AssistantMessage:
        raise NotImplementedError


class StreamAccumulator:
    """``PreparedRequest.stream()``: feed each event as the provider sends it
    (decoded from JSON), then ``finish()`` for the bound reply."""

    __slots__ = ("_finished", "_parser", "_replay")

    def __init__(self, parser: StreamParser, replay: Replay) -> None:
        self._parser = parser
        self._replay = replay
        self._finished = False

    def feed(self, event: Mapping[str, Any]) -> None:
        if self._finished:
            raise ValidationError("stream: feed() after finish()", path="stream")
        if not isinstance(event, Mapping):
            raise ResponseError(f"expected a JSON object, got {type(event).__name__}", path="$")
        self._parser.feed(event)

    def finish(self) -> AssistantMessage:
        self._finished = True
        return self._replay.bind(self._parser.finish())


class PreparedRequest:
    """One request, ready to send: ``body``/``content``, ``path``, ``headers``,
    and the ``origin`` and ``report`` of its replay decision."""

    __slots__ = ("_provider", "_replay", "body", "content", "headers", "origin", "path", "report")

    def __init__(self, provider: Provider, replay: Replay, built: Built) -> None:
        self._provider = provider
        self._replay = replay
        self.body = built.body
        self.content = built.content
        self.path = built.path
        self.headers = built.headers
        self.origin: Origin = replay.origin
        self.report: ReplayReport = replay.report

    def receive(self, response: Mapping[str, Any]) -> AssistantMessage:
        """The reply in ``response`` (the provider's JSON as decoded from HTTP, or
        the official SDK's ``model_dump()``), bound to this request as sent."""
        if not isinstance(response, Mapping):
            raise ResponseError(f"expected a JSON object, got {type(response).__name__}", path="$")
        return self._replay.bind(self._provider.parse(response))

    def stream(self) -> StreamAccumulator:
        return StreamAccumulator(self._provider.new_stream(), self._replay)

    def __repr__(self) -> str:
        return f"PreparedRequest(origin={self.origin!r}, path={self.path!r}, {len(self.content)} bytes)"


class Provider:
    """Base of the adapters. ``thinkseal.provider(id, account=None)`` makes one."""

    id: ClassVar[str]

    def __init__(self, account: str | None = None) -> None:
        self.account = account

    def prepare(
        self, conversation: Conversation, *, model: str, stream: bool = False, **options: Any
    ) -> PreparedRequest:
        """The request that sends ``conversation`` to ``model``, thinking replayed
        where the replay decision keeps it. ``options`` use the provider's own
        field names and are merged into the body after validation."""
        if not isinstance(conversation, Conversation):
            raise ValidationError("conversation: expected a Conversation", path="conversation")
        if not isinstance(stream, bool):
            raise ValidationError("stream: expected bool", path="stream")
        origin = Origin(self.id, model, self.account)
        replay = conversation.replay(origin)
        return PreparedRequest(self, replay, self.build(conversation, replay, model, dict(options), stream))

    # -- adapter hooks ---------------------------------------------------------

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        raise NotImplementedError

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        raise NotImplementedError

    def new_stream(self) -> StreamParser:
        raise NotImplementedError

    def __repr__(self) -> str:
        extra = f", account={self.account!r}" if self.account else ""
        return f"thinkseal.provider({self.id!r}{extra})"
