"""HTTP clients for every adapter: ``Client`` (sync) and ``AsyncClient``
(asyncio), over httpx (imported when a client is made)."""

from __future__ import annotations

from ._async import AsyncClient, AsyncReplyStream
from ._sync import Client, ReplyStream

__all__ = ["AsyncClient", "AsyncReplyStream", "Client", "ReplyStream"]
