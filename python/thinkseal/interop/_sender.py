"""What every framework adapter does on each call, in one place: the
framework's history (already converted to a ``Conversation``) is attached to
the ledger, sent through thinkseal's own client for the adapter's provider,
and the reply recorded, so the framework keeps owning the history and the
sealed data in it is replayed only where it still holds.

The adapters (``thinkseal.interop.pydantic_ai``, ``.agents``, ``.langchain``,
``.litellm``) take the same arguments as ``thinkseal.Client`` for the
connection (``ledger=``, ``client=``/``async_client=``, ``aliases=``,
``account=``, and any other ``Client`` argument), and convert their
framework's types; this module is the part they share.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .._conversation import Conversation
from .._errors import ValidationError
from .._reply import Delta, Reply

if TYPE_CHECKING:
    from ..client import AsyncClient, Client
    from ..ledger import AsyncLedger, Attached, Ledger


class Sender:
    """Sends converted histories for one provider and model, attaching and
    recording through ``ledger`` when one is given.

    ``client`` / ``async_client``: the thinkseal clients to send with (made
    from ``client_options`` when not given, and closed with the sender then);
    a given client is not closed. ``ledger``: a ``thinkseal.Ledger`` shared by
    every call (and by the processes of a fleet, on a shared backend), or an
    ``AsyncLedger`` for an adapter used from asyncio only."""

    def __init__(
        self,
        provider_id: str,
        model: str,
        *,
        ledger: Ledger | AsyncLedger | None = None,
        client: Client | AsyncClient | None = None,
        async_client: AsyncClient | None = None,
        **client_options: Any,
    ) -> None:
        from ..client import AsyncClient, Client  # noqa: PLC0415 - loads httpx, as sending does
        from ..providers import provider  # noqa: PLC0415 - checks the id, as Client would

        # ``client`` may be of either kind (a framework adapter takes one client); an
        # async one serves the asyncio calls.
        if client is not None and not isinstance(client, (Client, AsyncClient)):
            raise ValidationError(
                f"client: expected a thinkseal.Client or AsyncClient, got {type(client).__name__}", path="client"
            )
        if isinstance(client, AsyncClient):
            client, async_client = None, async_client or client

        if not isinstance(model, str) or not model.strip():
            raise ValidationError("model: expected a model id", path="model")
        account = client_options.get("account")
        provider(provider_id, account, aliases=client_options.get("aliases"))
        if ledger is not None:
            from ..ledger._recording import checked_ledger  # noqa: PLC0415

            checked_ledger(ledger)
        self.provider_id = provider_id
        self.model = model
        self.ledger = ledger
        self.account: str | None = account or None
        self._client = client
        self._async_client = async_client
        # A sync client given without an async one serves the asyncio calls too, in a worker thread.
        self._threaded = client is not None and async_client is None
        self._owned: list[Any] = []  # the sync client made here
        # An httpx.AsyncClient belongs to the event loop it first ran in, and a framework may run
        # each call in another (run_sync, asyncio.run): an async client is made per loop.
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncClient] = weakref.WeakKeyDictionary()
        self._options = dict(client_options)

    # -- the clients ---------------------------------------------------------------------

    @property
    def client(self) -> Client:
        if self._client is None:
            from ..client import Client  # noqa: PLC0415

            self._client = Client(self.provider_id, ledger=self._sync_ledger(), **self._options)
            self._owned.append(self._client)
        return self._client

    @property
    def async_client(self) -> AsyncClient:
        """The given async client, or the one made for the running event loop."""
        if self._async_client is not None:
            return self._async_client
        loop = asyncio.get_running_loop()
        client = self._per_loop.get(loop)
        if client is None:
            from ..client import AsyncClient  # noqa: PLC0415

            client = AsyncClient(self.provider_id, ledger=self.ledger, **self._options)
            self._per_loop[loop] = client
        return client

    # -- one call ------------------------------------------------------------------------

    def _sync_ledger(self) -> Ledger | None:
        from ..ledger import AsyncLedger  # noqa: PLC0415

        if isinstance(self.ledger, AsyncLedger):
            raise ValidationError("an AsyncLedger serves asyncio calls only; give a Ledger", path="ledger")
        return self.ledger

    def attach(self, conversation: Conversation) -> Conversation:
        """``conversation`` with every turn the ledger recognises bound (as it
        is when there is no ledger)."""
        ledger = self._sync_ledger()
        return conversation if ledger is None else ledger.attach(conversation, account=self.account).conversation

    async def attach_async(self, conversation: Conversation) -> Conversation:
        from ..ledger import AsyncLedger  # noqa: PLC0415

        ledger = self.ledger
        if ledger is None:
            return conversation
        if isinstance(ledger, AsyncLedger):
            return (await ledger.attach(conversation, account=self.account)).conversation
        return ledger.attach(conversation, account=self.account).conversation

    def attached(self, conversation: Conversation) -> Attached:
        """``ledger.attach`` of ``conversation`` (a sync ledger must be given):
        what it recognised, for an adapter that reports it."""
        ledger = self._sync_ledger()
        if ledger is None:
            raise ValidationError("this adapter was made without a ledger", path="ledger")
        return ledger.attach(conversation, account=self.account)

    def _recorded(self, reply: Reply, client: Any) -> Reply:
        # A client made here records itself; a given one may have no ledger (or another).
        ledger = self._sync_ledger()
        if ledger is None or getattr(client, "_ledger", None) is ledger:
            return reply
        from ..ledger._recording import record_reply  # noqa: PLC0415

        return record_reply(ledger, reply)

    async def _recorded_async(self, reply: Reply, client: Any) -> Reply:
        if self.ledger is None or getattr(client, "_ledger", None) is self.ledger:
            return reply
        from ..ledger._recording import arecord_reply  # noqa: PLC0415

        return await arecord_reply(self.ledger, reply)

    def send(self, conversation: Conversation, options: Mapping[str, Any]) -> Reply:
        client = self.client
        return self._recorded(client.send(self.attach(conversation), model=self.model, **options), client)

    async def send_async(self, conversation: Conversation, options: Mapping[str, Any]) -> Reply:
        if self._threaded:
            return await asyncio.to_thread(self.send, conversation, options)
        client = self.async_client
        reply = await client.send(await self.attach_async(conversation), model=self.model, **options)
        return await self._recorded_async(reply, client)

    def stream(self, conversation: Conversation, options: Mapping[str, Any]) -> Iterator[Delta | Reply]:
        """The deltas as they arrive, then the ``Reply`` (recorded)."""
        client = self.client
        with client.stream(self.attach(conversation), model=self.model, **options) as events:
            for item in events:
                yield self._recorded(item, client) if isinstance(item, Reply) else item

    async def stream_async(
        self, conversation: Conversation, options: Mapping[str, Any]
    ) -> AsyncIterator[Delta | Reply]:
        if self._threaded:  # the given sync client streams in a worker thread, one item at a time
            iterator = self.stream(conversation, options)
            while (arrived := await asyncio.to_thread(_next, iterator)) is not None:
                yield arrived
            return
        client = self.async_client
        async with client.stream(await self.attach_async(conversation), model=self.model, **options) as events:
            async for item in events:
                yield await self._recorded_async(item, client) if isinstance(item, Reply) else item

    # -- closing -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the sync client this sender made (not a given one, nor the ledger);
        async clients are closed by ``aclose``, from their event loop."""
        for client in self._owned:
            client.close()
        self._owned.clear()

    async def aclose(self) -> None:
        """Close the clients this sender made: the sync one and the running event
        loop's async one (those of loops that have ended are dropped with them)."""
        self.close()
        client = self._per_loop.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    def __repr__(self) -> str:
        ledger = ", ledger" if self.ledger is not None else ""
        return f"Sender({self.provider_id!r}, {self.model!r}{ledger})"


def _next(iterator: Iterator[Delta | Reply]) -> Delta | Reply | None:
    return next(iterator, None)
