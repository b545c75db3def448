"""``thinkseal.Client``: sends a conversation to a provider over httpx and
returns the ``Reply``, thinking replayed where it still holds.

``send`` and ``stream`` prepare the request with the client's adapter, POST
``req.content`` as it is (the history is encoded once, by the adapter), follow
only the redirects that keep the credentials at their origin, retry rate
limits, server errors, timeouts and lost connections, recover once from the
provider's rejection of replayed thinking, and parse the answer into a
``Reply`` whose ``conversation`` is what to send next. See ``_exchange`` for
the decisions, ``_events`` for stream framing, ``_auth`` for credentials and
``_origin`` for where they may go.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .._conversation import Conversation
from .._errors import ProviderError
from .._reply import Delta, Recovery, Reply
from ..providers import PreparedRequest
from ._base import ClientBase
from ._errors import ERROR_BODY_LIMIT
from ._events import decoder

if TYPE_CHECKING:
    import httpx  # noqa: F401 - the quoted type argument of ClientBase

    pass


class Client(ClientBase["httpx.Client"]):
    """A provider's HTTP API, for one adapter id (arguments: ``ClientBase``)."""

    _http_class = "Client"

    def send(self, conversation: Conversation, *, model: str, **options: Any) -> Reply:
        """The provider's reply to ``conversation`` from ``model``; ``options``
        are the provider's own request fields (as for ``prepare``)."""
        exchange = self._exchange
        request, recoveries = exchange.prepare(conversation, model, False, options)
        try:
            raw = self._post(request, stream=False)
        except ProviderError as error:
            conversation, request, more = exchange.after_rejection(conversation, request, error, model, False, options)
            recoveries += more
            raw = self._post(request, stream=False)
        return self._record(request.parse(exchange.decoded(raw)).with_recoveries(recoveries))

    def stream(self, conversation: Conversation, *, model: str, **options: Any) -> ReplyStream:
        """The reply streamed: iterate for the typed deltas as they arrive; the
        last item is the ``Reply``. Use it as a context manager (or exhaust it)
        so the connection is released."""
        return ReplyStream(self, conversation, model, options)

    def _post(self, request: PreparedRequest, *, stream: bool) -> Any:
        """The response body (``stream=False``) or the open streaming response,
        after retries; a ``ProviderError`` for an error answer or no answer."""
        exchange = self._exchange
        attempt = 0
        while True:
            outcome = self._attempt(request, stream)
            if not isinstance(outcome, ProviderError):
                return outcome
            delay = exchange.retry_delay(attempt, outcome)
            if delay is None:
                raise outcome
            time.sleep(delay)
            attempt += 1

    def _attempt(self, request: PreparedRequest, stream: bool) -> Any:
        """One attempt, through the redirects ``_origin`` allows: the body or
        the open streaming response, or the ``ProviderError`` it ended in. httpx
        never follows a redirect itself: each hop is built here, with the body
        sent again from its start and the credentials signed for that URL."""
        import httpx  # noqa: PLC0415

        exchange = self._exchange
        url, hops = exchange.url(request), 0
        try:
            while True:
                whole = exchange.content(request)
                outgoing = self._request(request, url, whole if whole is not None else request.chunks())
                response = self._http.send(outgoing, stream=True, follow_redirects=False)
                status = response.status_code
                if 200 <= status < 300 and stream:
                    return response
                try:
                    if 200 <= status < 300:
                        return self._read(response)
                    if 300 <= status < 400:
                        hop = self._next_hop(response, hops)
                        if isinstance(hop, ProviderError):
                            return hop
                        url, hops = hop, hops + 1
                        continue
                    return exchange.error(status, response.headers, self._error_body(response))
                finally:
                    response.close()
        except httpx.TransportError as exc:
            return exchange.transport_error(exc)

    def _read(self, response: Any) -> bytes:
        """The whole body, refused past ``Limits.max_body`` as it arrives (held
        in one growing buffer: a body of many tiny chunks costs no more)."""
        import httpx  # noqa: PLC0415

        exchange = self._exchange
        declared = response.headers.get("content-length", "")
        exchange.within_limit(int(declared) if declared.isdigit() else 0)
        body = bytearray()
        try:
            for chunk in response.iter_bytes():
                body += chunk
                exchange.within_limit(len(body))
        except httpx.DecodingError as exc:
            raise exchange.undecodable(exc) from None
        return bytes(body)

    def _error_body(self, response: Any) -> bytes:
        """The start of an error answer's body, ``ERROR_BODY_LIMIT`` bytes at most."""
        import httpx  # noqa: PLC0415

        body = bytearray()
        try:
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) >= ERROR_BODY_LIMIT:
                    break
        except httpx.DecodingError:
            pass  # the status still says what happened; the message is what could be read
        return bytes(body[:ERROR_BODY_LIMIT])

    def close(self) -> None:
        if self._owned:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ReplyStream:
    """A streamed reply: yields ``Delta``s as they arrive, then the ``Reply``
    (also at ``.reply`` afterwards). A stream that ends before the provider's
    final event raises ``ResponseError`` and gives no ``Reply``: a cut-off
    message is never returned as if complete."""

    def __init__(self, client: Client, conversation: Conversation, model: str, options: Mapping[str, Any]) -> None:
        self._client = client
        self._conversation = conversation
        self._model = model
        self._options = options
        self._response: Any = None
        self.reply: Reply | None = None
        self._events = self._run()

    def _run(self) -> Generator[Delta | Reply, None, None]:
        client, exchange = self._client, self._client._exchange
        conversation, model, options = self._conversation, self._model, self._options
        request, recoveries = exchange.prepare(conversation, model, True, options)
        try:
            self._response = client._post(request, stream=True)
        except ProviderError as error:
            conversation, request, more = exchange.after_rejection(conversation, request, error, model, True, options)
            recoveries += more
            self._response = client._post(request, stream=True)
        yield from self._relay(request, recoveries)

    def _relay(self, request: PreparedRequest, recoveries: tuple[Recovery, ...]) -> Iterator[Delta | Reply]:
        import httpx  # noqa: PLC0415

        exchange = self._client._exchange
        accumulator = request.stream()
        frames = decoder(exchange.connection.stream_format, exchange.adapter.id)
        try:
            size = 0
            for chunk in self._response.iter_bytes():
                size += len(chunk)
                exchange.within_limit(size)
                for event in frames.feed(chunk):
                    yield from accumulator.feed(event)
            for event in frames.close():
                yield from accumulator.feed(event)
        except httpx.TransportError as exc:
            raise exchange.transport_error(exc) from None
        except httpx.DecodingError as exc:
            raise exchange.undecodable(exc) from None
        finally:
            self.close()
        self.reply = self._client._record(accumulator.reply.with_recoveries(recoveries))
        yield self.reply

    def __iter__(self) -> Iterator[Delta | Reply]:
        return self._events

    def __next__(self) -> Delta | Reply:
        return next(self._events)

    def until_done(self) -> Reply:
        """Consume the rest of the stream and return the ``Reply``."""
        for _ in self._events:
            pass
        assert self.reply is not None
        return self.reply

    def close(self) -> None:
        if self._response is not None:
            self._response.close()

    def __enter__(self) -> ReplyStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
        self._events.close()
