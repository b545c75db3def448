"""``thinkseal.AsyncClient``: ``thinkseal.Client`` for asyncio, over
``httpx.AsyncClient``; the same decisions (``_exchange``), framing
(``_events``), credentials (``_auth``) and redirects (``_origin``), awaited.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
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


class AsyncClient(ClientBase["httpx.AsyncClient"]):
    """``Client`` for asyncio: ``await client.send(...)``, ``async for`` over
    ``client.stream(...)``, ``async with`` or ``await client.aclose()``."""

    _http_class = "AsyncClient"

    async def send(self, conversation: Conversation, *, model: str, **options: Any) -> Reply:
        """The provider's reply to ``conversation`` from ``model``; ``options``
        are the provider's own request fields (as for ``prepare``)."""
        exchange = self._exchange
        request, recoveries = exchange.prepare(conversation, model, False, options)
        try:
            raw = await self._post(request, stream=False)
        except ProviderError as error:
            conversation, request, more = exchange.after_rejection(conversation, request, error, model, False, options)
            recoveries += more
            raw = await self._post(request, stream=False)
        return await self._arecord(request.parse(exchange.decoded(raw)).with_recoveries(recoveries))

    def stream(self, conversation: Conversation, *, model: str, **options: Any) -> AsyncReplyStream:
        """The reply streamed: ``async for`` the typed deltas as they arrive; the
        last item is the ``Reply``. Use it as an async context manager (or
        exhaust it) so the connection is released."""
        return AsyncReplyStream(self, conversation, model, options)

    async def _post(self, request: PreparedRequest, *, stream: bool) -> Any:
        """The response body (``stream=False``) or the open streaming response,
        after retries; a ``ProviderError`` for an error answer or no answer."""
        exchange = self._exchange
        attempt = 0
        while True:
            outcome = await self._attempt(request, stream)
            if not isinstance(outcome, ProviderError):
                return outcome
            delay = exchange.retry_delay(attempt, outcome)
            if delay is None:
                raise outcome
            await asyncio.sleep(delay)
            attempt += 1

    async def _attempt(self, request: PreparedRequest, stream: bool) -> Any:
        """One attempt, through the redirects ``_origin`` allows (as ``Client._attempt``)."""
        import httpx  # noqa: PLC0415

        exchange = self._exchange
        url, hops = exchange.url(request), 0
        try:
            while True:
                whole = exchange.content(request)
                outgoing = self._request(request, url, whole if whole is not None else _chunks(request))
                response = await self._http.send(outgoing, stream=True, follow_redirects=False)
                status = response.status_code
                if 200 <= status < 300 and stream:
                    return response
                try:
                    if 200 <= status < 300:
                        return await self._read(response)
                    if 300 <= status < 400:
                        hop = self._next_hop(response, hops)
                        if isinstance(hop, ProviderError):
                            return hop
                        url, hops = hop, hops + 1
                        continue
                    return exchange.error(status, response.headers, await self._error_body(response))
                finally:
                    await response.aclose()
        except httpx.TransportError as exc:
            return exchange.transport_error(exc)

    async def _read(self, response: Any) -> bytes:
        """The whole body, refused past ``Limits.max_body`` as it arrives (as ``Client._read``)."""
        import httpx  # noqa: PLC0415

        exchange = self._exchange
        declared = response.headers.get("content-length", "")
        exchange.within_limit(int(declared) if declared.isdigit() else 0)
        body = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                exchange.within_limit(len(body))
        except httpx.DecodingError as exc:
            raise exchange.undecodable(exc) from None
        return bytes(body)

    async def _error_body(self, response: Any) -> bytes:
        """The start of an error answer's body, ``ERROR_BODY_LIMIT`` bytes at most."""
        import httpx  # noqa: PLC0415

        body = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) >= ERROR_BODY_LIMIT:
                    break
        except httpx.DecodingError:
            pass  # the status still says what happened; the message is what could be read
        return bytes(body[:ERROR_BODY_LIMIT])

    async def aclose(self) -> None:
        if self._owned:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _chunks(request: PreparedRequest) -> AsyncIterator[bytes]:
    """``request.chunks()`` for httpx's async transport, which takes async iterators only."""
    for chunk in request.chunks():
        yield chunk


class AsyncReplyStream:
    """``ReplyStream`` for asyncio: ``async for`` the ``Delta``s, then the ``Reply``
    (also at ``.reply`` afterwards). A stream that ends before the provider's
    final event raises ``ResponseError`` and gives no ``Reply``: a cut-off
    message is never returned as if complete."""

    def __init__(self, client: AsyncClient, conversation: Conversation, model: str, options: Mapping[str, Any]) -> None:
        self._client = client
        self._conversation = conversation
        self._model = model
        self._options = options
        self._response: Any = None
        self.reply: Reply | None = None
        self._events = self._run()

    async def _run(self) -> AsyncGenerator[Delta | Reply, None]:
        client, exchange = self._client, self._client._exchange
        conversation, model, options = self._conversation, self._model, self._options
        request, recoveries = exchange.prepare(conversation, model, True, options)
        try:
            self._response = await client._post(request, stream=True)
        except ProviderError as error:
            conversation, request, more = exchange.after_rejection(conversation, request, error, model, True, options)
            recoveries += more
            self._response = await client._post(request, stream=True)
        async for item in self._relay(request, recoveries):
            yield item

    async def _relay(self, request: PreparedRequest, recoveries: tuple[Recovery, ...]) -> AsyncIterator[Delta | Reply]:
        import httpx  # noqa: PLC0415

        exchange = self._client._exchange
        accumulator = request.stream()
        frames = decoder(exchange.connection.stream_format, exchange.adapter.id)
        try:
            size = 0
            async for chunk in self._response.aiter_bytes():
                size += len(chunk)
                exchange.within_limit(size)
                for event in frames.feed(chunk):
                    for delta in accumulator.feed(event):
                        yield delta
            for event in frames.close():
                for delta in accumulator.feed(event):
                    yield delta
        except httpx.TransportError as exc:
            raise exchange.transport_error(exc) from None
        except httpx.DecodingError as exc:
            raise exchange.undecodable(exc) from None
        finally:
            await self.aclose()
        self.reply = await self._client._arecord(accumulator.reply.with_recoveries(recoveries))
        yield self.reply

    def __aiter__(self) -> AsyncIterator[Delta | Reply]:
        return self._events

    async def __anext__(self) -> Delta | Reply:
        return await anext(self._events)

    async def until_done(self) -> Reply:
        """Consume the rest of the stream and return the ``Reply``."""
        async for _ in self._events:
            pass
        assert self.reply is not None
        return self.reply

    async def aclose(self) -> None:
        if self._response is not None:
            await self._response.aclose()

    async def __aenter__(self) -> AsyncReplyStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
        await self._events.aclose()
