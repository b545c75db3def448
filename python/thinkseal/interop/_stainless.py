"""Sending a ``PreparedRequest`` through a Stainless-generated SDK client
(``anthropic``, ``openai``): the documented escape hatch for custom requests,
``client.post(path, cast_to=..., content=..., options={"headers": ...})``,
sends ``req.content`` byte for byte with ``req.headers``, while the client
adds its own auth, base URL, retries and timeouts. SDK versions whose
``post`` has no ``content`` parameter get ``body=req.body`` instead (the SDK
then serialises the body again; the bytes are the same JSON, possibly spaced
differently). Responses come back as decoded JSON (``cast_to=object``) and
stream events as their decoded ``data`` objects; the SDK raises its own
exceptions for HTTP errors and error events."""

from __future__ import annotations

import copy
import inspect
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from .._errors import ValidationError
from .._reply import Delta, Reply
from ..providers import PreparedRequest

if TYPE_CHECKING:
    from ..ledger import AsyncLedger, Ledger


def check(req: object, streaming: bool | None = None) -> PreparedRequest:
    if not isinstance(req, PreparedRequest):
        raise ValidationError(f"req: expected a PreparedRequest, got {type(req).__name__}", path="req")
    if streaming and not is_streaming(req):
        raise ValidationError("req: prepare the request with stream=True to stream it", path="req")
    return req


def is_streaming(req: PreparedRequest) -> bool:
    return req._member("stream") is True  # not req.body, which would decode the whole history


def _payload(client: Any, req: PreparedRequest) -> dict[str, Any]:
    """``content=`` where the client's ``post`` takes it, else the body."""
    try:
        takes_content = "content" in inspect.signature(client.post).parameters
    except (TypeError, ValueError):
        takes_content = False
    if takes_content:
        return {"content": req.content}
    return {"body": copy.deepcopy(req.body)}


def _options(req: PreparedRequest) -> dict[str, Any]:
    return {"headers": dict(req.headers)}


def send(client: Any, req: PreparedRequest, stream_cls: Any, ledger: Ledger | None) -> Reply:
    if is_streaming(req):
        return _finish(stream(client, req, stream_cls, ledger))
    data = client.post(req.path, cast_to=object, options=_options(req), **_payload(client, req))
    return recorded(ledger, req.parse(data))


async def send_async(client: Any, req: PreparedRequest, stream_cls: Any, ledger: Ledger | AsyncLedger | None) -> Reply:
    if is_streaming(req):
        reply: Reply | None = None
        async for item in stream_async(client, req, stream_cls, ledger):
            if isinstance(item, Reply):
                reply = item
        assert reply is not None
        return reply
    data = await client.post(req.path, cast_to=object, options=_options(req), **_payload(client, req))
    return await arecorded(ledger, req.parse(data))


def recorded(ledger: Ledger | None, reply: Reply) -> Reply:
    """``reply``, recorded in ``ledger`` first when one was given (every bridge takes ``ledger=``)."""
    if ledger is None:
        return reply
    from ..ledger._recording import record_reply  # noqa: PLC0415

    return record_reply(ledger, reply)


async def arecorded(ledger: Ledger | AsyncLedger | None, reply: Reply) -> Reply:
    if ledger is None:
        return reply
    from ..ledger._recording import arecord_reply  # noqa: PLC0415

    return await arecord_reply(ledger, reply)


def _finish(items: Iterator[Delta | Reply]) -> Reply:
    reply: Reply | None = None
    for item in items:
        if isinstance(item, Reply):
            reply = item
    assert reply is not None
    return reply


def stream(client: Any, req: PreparedRequest, stream_cls: Any, ledger: Ledger | None) -> Iterator[Delta | Reply]:
    acc = req.stream()
    events = client.post(
        req.path,
        cast_to=object,
        options=_options(req),
        stream=True,
        stream_cls=stream_cls[object],
        **_payload(client, req),
    )
    try:
        for event in events:
            yield from acc.feed(event)
    finally:
        events.close()
    yield recorded(ledger, acc.reply)


async def stream_async(
    client: Any, req: PreparedRequest, stream_cls: Any, ledger: Ledger | AsyncLedger | None
) -> AsyncIterator[Delta | Reply]:
    acc = req.stream()
    events = await client.post(
        req.path,
        cast_to=object,
        options=_options(req),
        stream=True,
        stream_cls=stream_cls[object],
        **_payload(client, req),
    )
    try:
        async for event in events:
            for delta in acc.feed(event):
                yield delta
    finally:
        await events.close()
    yield await arecorded(ledger, acc.reply)
