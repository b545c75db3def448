"""Bridges for a boto3 ``bedrock-runtime`` client: send a ``PreparedRequest``
of the ``bedrock`` adapter through ``converse`` / ``converse_stream`` and get
its ``Reply``.

boto3 always serialises the request itself (it takes keyword arguments, not
a body, and signs what it encodes), so ``req.content`` cannot be sent as is:
the bridge passes ``boto3_params(req.body)`` (the body with its blobs as
bytes, ``thinkseal.providers.bedrock.boto3_params``) and the model id from
``req.path``. The JSON boto3 writes carries the same values. Errors are
botocore's own (``botocore.exceptions.ClientError``, and
``EventStreamError`` for an error event in a stream). boto3 has no async
client: ``send_async`` and ``stream_async`` run the calls in a worker thread
(``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from .._errors import ValidationError
from .._reply import Delta, Reply
from ..providers import PreparedRequest
from . import _stainless

if TYPE_CHECKING:
    from ..ledger import AsyncLedger, Ledger

__all__ = ["send", "send_async", "stream", "stream_async"]


def _call(req: object) -> tuple[PreparedRequest, str, bool, dict[str, Any]]:
    """``req`` checked, with its model id, whether it streams, and boto3's keyword arguments."""
    from ..providers.bedrock import boto3_params  # noqa: PLC0415

    if not isinstance(req, PreparedRequest) or req.origin.provider != "bedrock":
        raise ValidationError("req: expected a PreparedRequest of the bedrock adapter", path="req")
    head, _, operation = req.path.rpartition("/")
    if not head.startswith("/model/") or operation not in ("converse", "converse-stream"):
        raise ValidationError(f"req.path: not a Converse path: {req.path!r}", path="req.path")
    params = boto3_params(req.body)
    params["modelId"] = unquote(head.removeprefix("/model/"))
    return req, params["modelId"], operation == "converse-stream", params


def send(client: Any, req: PreparedRequest, *, ledger: Ledger | None = None) -> Reply:
    """``req`` through ``client.converse`` (or, for a request prepared with
    ``stream=True``, ``converse_stream``, accumulated), as a ``Reply``
    (recorded in ``ledger`` when one is given)."""
    req, _, streaming, params = _call(req)
    if streaming:
        reply: Reply | None = None
        for item in _events(client, req, params, ledger):
            if isinstance(item, Reply):
                reply = item
        assert reply is not None
        return reply
    return _stainless.recorded(ledger, req.parse(client.converse(**params)))


def stream(client: Any, req: PreparedRequest, *, ledger: Ledger | None = None) -> Iterator[Delta | Reply]:
    """``req`` (prepared with ``stream=True``) through ``client.converse_stream``:
    yields the typed deltas as the events arrive, then the ``Reply``."""
    req, _, streaming, params = _call(req)
    if not streaming:
        raise ValidationError("req: prepare the request with stream=True to stream it", path="req")
    return _events(client, req, params, ledger)


def _events(
    client: Any, req: PreparedRequest, params: dict[str, Any], ledger: Ledger | None
) -> Iterator[Delta | Reply]:
    acc = req.stream()
    events = client.converse_stream(**params)["stream"]
    try:
        for event in events:
            yield from acc.feed(event)
    finally:
        close = getattr(events, "close", None)
        if callable(close):
            close()
    yield _stainless.recorded(ledger, acc.reply)


async def send_async(client: Any, req: PreparedRequest, *, ledger: Ledger | AsyncLedger | None = None) -> Reply:
    """``send`` in a worker thread (boto3 is synchronous)."""
    return await _stainless.arecorded(ledger, await asyncio.to_thread(send, client, req))


async def stream_async(
    client: Any, req: PreparedRequest, *, ledger: Ledger | AsyncLedger | None = None
) -> AsyncIterator[Delta | Reply]:
    """``stream`` with each event read in a worker thread (boto3 is synchronous)."""
    items = stream(client, req)
    done = object()
    while True:
        item = await asyncio.to_thread(next, items, done)
        if item is done:
            return
        yield await _stainless.arecorded(ledger, item) if isinstance(item, Reply) else item  # type: ignore[misc]
